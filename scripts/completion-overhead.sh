#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# completion-overhead.sh: what liboptireduce costs the completion calls of ordinary requests
# (MPI_Test, MPI_Wait, MPI_Testall, MPI_Waitall, which it intercepts to complete its own
# MPI_Iallreduce requests). Budget: 50 ns a call.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/completion-overhead.sh [-np N] [--runs R] [-i CALLS] [BUILD_DIR]

Runs `optireduce-bench --completion-overhead` from BUILD_DIR (default: build next to this script's
directory) without and with BUILD_DIR/wrappers/liboptireduce.so preloaded, alternately, R times each
(default 3), on N local ranks (default 2: no more than the cores, or preemption swamps the
nanoseconds). Each run times every call both as MPI_* and PMPI_* in alternating blocks; then:

  in-job (MPI - PMPI)   the median per-pair difference inside one job: with the library, the
                        interception cost; without it, the measurement's own bias (about 0)
  across jobs           MPI_* per call with the library minus without it (medians over runs):
                        the same cost seen as a user would, noisier (two different processes)

Per call kind, the median over runs of each. -i sets the calls per kind and side (default 200000).
USAGE
}

die() {
  echo "completion-overhead.sh: $*" >&2
  exit 1
}

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
ranks=2 runs=3 calls="" build=""
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -np) ranks=${2:?-np needs a value}; shift 2 ;;
    --runs) runs=${2:?--runs needs a value}; shift 2 ;;
    -i) calls=${2:?-i needs a value}; shift 2 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [[ -z $build ]] || die "unexpected argument '$1'"; build=$1; shift ;;
  esac
done
[[ $ranks =~ ^[1-9][0-9]*$ ]] || die "-np must be a positive number"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number"
build=${build:-$here/../build}
bench=$build/src/tools/bench/optireduce-bench
lib=$build/wrappers/liboptireduce.so
[[ -x $bench && -f $lib ]] || die "build first: $bench and $lib are missing"
lib=$(readlink -f -- "$lib")
launcher=$(command -v mpirun.openmpi || command -v mpirun) || die "mpirun (Open MPI) not found"
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
args=(--completion-overhead)
[[ -z $calls ]] || args+=(-i "$calls")

out=$(mktemp -d)
trap 'rm -rf -- "$out"' EXIT
for ((r = 1; r <= runs; r++)); do
  # Alternate which goes first, so drift over the runs does not favour one.
  order=(without with)
  ((r % 2 == 1)) || order=(with without)
  for side in "${order[@]}"; do
    preload=()
    [[ $side == without ]] || preload=(-x "LD_PRELOAD=$lib")
    echo "completion-overhead.sh: run $r/$runs, $side the library"
    "$launcher" --oversubscribe -np "$ranks" "${preload[@]}" "$bench" "${args[@]}" >"$out/$side-$r.txt" 2>&1 ||
      { cat -- "$out/$side-$r.txt" >&2; die "the run $side the library failed"; }
  done
done

printf '\n=== the last run with the library\n'
cat -- "$out/with-$runs.txt"

# Rows: a label of several words, then MPI-Mean MPI-Median PMPI-Mean PMPI-Median Diff-Mean
# Diff-Median: the last six fields.
printf '\n=== ns per call, medians over %d runs of %d ranks each\n' "$runs" "$ranks"
awk '
  function median(list,    v, n, i, j, x) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) {
      x = v[i] + 0
      for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]
      v[j + 1] = x
    }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  FNR == 1 { side = (FILENAME ~ /\/with-[0-9]+\.txt$/) ? "with" : "without" }
  /^#/ || NF < 7 || $NF !~ /^-?[0-9.]+$/ { next }
  {
    label = $1
    for (i = 2; i <= NF - 6; i++) label = label " " $i
    if (!(label in seen)) { seen[label] = 1; order[++count] = label }
    mpi[side, label] = mpi[side, label] " " $(NF - 4)   # MPI-Median
    diff[side, label] = diff[side, label] " " $NF       # Diff-Median
  }
  END {
    printf "%-34s%14s%14s%16s%16s%14s\n", "# Call", "MPI without", "MPI with", "in-job without",
           "in-job with", "across jobs"
    for (i = 1; i <= count; i++) {
      l = order[i]
      a = median(mpi["without", l]); b = median(mpi["with", l])
      printf "%-34s%14.1f%14.1f%16.1f%16.1f%14.1f\n", l, a, b, median(diff["without", l]),
             median(diff["with", l]), b - a
    }
  }' "$out"/with-*.txt "$out"/without-*.txt
