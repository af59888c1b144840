#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# train_smoke.sh: a tiny run of scripts/train/train.py (85 K-parameter MLP on digits, 60
# iterations, 4 local ranks) for each back-end: native Open MPI, optireduce bounded (kernel UDP
# datagrams over loopback, as across nodes) and exact, and Gloo. Each must train (test accuracy
# above MIN_ACC), print a RESULT line and write its CSV; native, exact and Gloo must keep the
# replicas bit-identical, and bounded mode too unless an all-gather entry was lost for good.
# Exits 77 (CTest's skip) when the Python packages are missing.
#   usage: train_smoke.sh MPIRUN LIBOPTIREDUCE PYTHON WORKDIR
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
mpirun=${1:?usage: train_smoke.sh MPIRUN LIB PYTHON WORKDIR} lib=${2:?} py=${3:?} work=${4:?}
train=$here/../../scripts/train/train.py
iters=60 min_acc=0.85

if ! missing=$("$py" -c "import torch, mpi4py, sklearn" 2>&1); then
  echo "SKIP: $py cannot import torch, mpi4py and sklearn (apt-get install python3-torch" \
    "python3-mpi4py python3-sklearn): ${missing##*$'\n'}"
  exit 77
fi
mkdir -p "$work"
# A free port for Gloo's rendezvous, so that two builds' tests cannot collide.
port=$("$py" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0))
print(s.getsockname()[1])")
common=(--hidden "256,256" --bucket-mb 0.25 --batch 128 --lr 0.05 --max-iters "$iters"
        --target-acc 1.01 --eval-every 10 --drift-every 20)

status=0
run() { # label check-flags -- mpirun-options... -- train-options...
  local label=$1 flags=$2 opts=() targs=() t0
  shift 3
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  targs=("$@")
  t0=$SECONDS
  echo "== $label"
  if ! "$mpirun" --oversubscribe -np 4 "${opts[@]}" "$py" "$train" "${common[@]}" --label "$label" \
      --csv "$work/$label.csv" "${targs[@]}" >"$work/$label.log" 2>&1; then
    echo "FAIL $label: the job failed"; tail -20 "$work/$label.log"; status=1; return
  fi
  # shellcheck disable=SC2086  # flags are words
  "$py" "$here/check_run.py" "$work/$label.log" "$work/$label.csv" "$min_acc" "$iters" $flags ||
    status=1
  echo "   ($((SECONDS - t0)) s)"
}

run native --exact -- --
run bounded "--engine --identical-unless-ag-loss" -- -x "LD_PRELOAD=$lib" -x OPTIREDUCE_MODE=bounded \
  -x OPTIREDUCE_DGRAM_PROVIDER=kernel -x OPTIREDUCE_STATS=1 --
run exact "--exact --engine" -- -x "LD_PRELOAD=$lib" -x OPTIREDUCE_MODE=exact \
  -x OPTIREDUCE_STATS=1 --
run gloo --exact -- -- --backend gloo --master-addr 127.0.0.1 --master-port "$port"
exit $status
