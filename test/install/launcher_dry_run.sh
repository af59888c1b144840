#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# optireduce-run --dry-run for one launcher kind: the right library for the launcher's MPI, the
# caller's LD_PRELOAD kept behind it, OPTIREDUCE_* forwarded in that launcher's syntax.
#   launcher_dry_run.sh openmpi|hydra|srun|errors RUN_SCRIPT LIBDIR LAUNCHER NOOP_SO
set -euo pipefail
kind=$1 run=$2 libdir=$3 launcher=$4 noop=$5
libdir=$(realpath -s "$libdir")

# A clean environment: OPTIREDUCE_* variables of whoever runs ctest must not leak in.
clean() { env -i PATH="$PATH" HOME="${HOME:-/}" "$@"; }

expect() {
  local want=$1 got=$2
  if [[ $got != "$want" ]]; then
    printf 'FAIL\n  want: %s\n  got:  %s\n' "$want" "$got"
    exit 1
  fi
  printf 'ok: %s\n' "$got"
}

expect_error() {
  local pattern=$1
  shift
  local out rc=0
  out=$(clean "$@" 2>&1) || rc=$?
  if ((rc == 0)) || ! grep -q -- "$pattern" <<<"$out"; then
    printf 'FAIL: wanted an error matching "%s", got (rc %d): %s\n' "$pattern" "$rc" "$out"
    exit 1
  fi
  printf 'ok: rc %d: %s\n' "$rc" "$out"
}

case "$kind" in
  openmpi)
    lib=$libdir/liboptireduce.so
    got=$(clean LD_PRELOAD="$noop" OPTIREDUCE_MODE=exact "$run" --dry-run "$launcher" -np 2 ./app)
    expect "$launcher -x LD_PRELOAD=$lib:$noop -x OPTIREDUCE_MODE -np 2 ./app" "$got"
    ;;
  hydra)
    lib=$libdir/liboptireduce-mpich.so
    got=$(clean LD_PRELOAD="$noop" OPTIREDUCE_MODE=exact "$run" --dry-run "$launcher" -n 2 ./app)
    expect "$launcher -genv LD_PRELOAD $lib:$noop -genv OPTIREDUCE_MODE exact -n 2 ./app" "$got"
    ;;
  srun)
    # No Slurm here: a stand-in srun, since --dry-run only needs to find it.
    fake=$(mktemp -d)
    trap 'rm -rf "$fake"' EXIT
    printf '#!/bin/sh\nexit 0\n' >"$fake/srun"
    chmod +x "$fake/srun"
    got=$(PATH="$fake:$PATH" clean LD_PRELOAD="$noop" "$run" --dry-run --abi=openmpi srun -n 2 ./app)
    expect "srun --export=ALL,LD_PRELOAD=$libdir/liboptireduce.so:$noop -n 2 ./app" "$got"
    PATH="$fake:$PATH" expect_error "pass --abi" "$run" --dry-run srun -n 2 ./app
    ;;
  errors)
    expect_error "launcher 'no-such-mpirun' not found" "$run" --dry-run no-such-mpirun -np 2 ./app
    expect_error "does not exist" OPTIREDUCE_LIB=/nonexistent/liboptireduce.so \
      "$run" --dry-run "$launcher" -np 2 ./app
    expect_error "cannot tell which MPI" "$run" --dry-run true ./app
    ;;
  *)
    echo "unknown case $kind" >&2
    exit 2
    ;;
esac
