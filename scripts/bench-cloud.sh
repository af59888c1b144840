#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-cloud.sh: the bounded-mode benchmarks (dated notes under docs/notes/) on the emulated cloud (4
# hosts at 1 Gbit/s, scripts/cloud/): native Open MPI (TCP), the library in exact mode (its
# reliable channel, tcp;ofi_rxm across hosts) and in bounded mode (udp datagrams), under
#   clean      no loss
#   loss1      1% of packets dropped on arrival at every host
#   loss01     0.1% loss, small messages (4 B to 64 KiB)
#   straggler  a random rank stopped for 50 ms with probability 0.2 every 50 ms
# Every run of optireduce-bench times the library (MPI_Allreduce) and native MPI
# (PMPI_Allreduce) alternately in the same job, so each CSV holds both; exact and bounded are two
# runs. Writes OUTDIR/<condition>-<mode>.{txt,csv}; scripts/plot-cloud.py turns them into the
# tables and latency CDFs. Needs root; brings the cloud up and tears it down.
#   usage: scripts/bench-cloud.sh OUTDIR [BUILD_DIR] [--quick]
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
out=${1:?usage: bench-cloud.sh OUTDIR [BUILD_DIR] [--quick]}
build=${2:-$here/../build}
quick=0
[[ ${3:-} == --quick ]] && quick=1
lib=$build/wrappers/liboptireduce.so
bench=$build/src/tools/bench/optireduce-bench
[[ -x $bench && -f $lib ]] || { echo "build first: $bench and $lib are missing" >&2; exit 1; }
mkdir -p "$out"
cloud=$here/cloud
trap '"$cloud/down.sh" >/dev/null 2>&1 || true' EXIT

"$cloud/up.sh" 4 --rate 1gbit
iters_large=40 iters_small=300
((quick)) && iters_large=10 iters_small=50

run() {  # condition mode sizes iterations
  local cond=$1 mode=$2 sizes=$3 iters=$4
  echo "== $cond $mode ($sizes, $iters iterations)"
  LD_PRELOAD=$lib OPTIREDUCE_MODE=$mode OPTIREDUCE_MIN_BYTES=0 OPTIREDUCE_STATS=1 \
    "$cloud/mpirun.sh" 4 --timeout 900 -- "$bench" -m "$sizes" -i "$iters" \
    --csv "$out/$cond-$mode.csv" >"$out/$cond-$mode.txt" 2>&1
  grep -E "^[0-9]+ |stats: (bounded|engine)" "$out/$cond-$mode.txt" || true
}

for mode in exact bounded; do run clean $mode 4:4M $iters_large; done

"$cloud/set.sh" --loss 0.01
for mode in exact bounded; do run loss1 $mode 256K:4M $iters_large; done

"$cloud/set.sh" --loss 0.001
for mode in exact bounded; do run loss01 $mode 4:64K $iters_small; done

"$cloud/set.sh" --loss 0
for mode in exact bounded; do
  "$cloud/straggler.sh" --delay-ms 50 --prob 0.2 --period-ms 50 --duration 900 -- optireduce-benc \
    2>"$out/straggler-$mode.pauses" &
  pauser=$!
  run straggler $mode 256K:4M $iters_large
  kill "$pauser" 2>/dev/null || true
  wait "$pauser" 2>/dev/null || true
done
echo "results in $out"
