#!/usr/bin/env bash
# osu-compare.sh: OSU's osu_allreduce with and without optireduce, side by side.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: OSU_HOME=/path/to/osu-micro-benchmarks scripts/osu-compare.sh [osu_allreduce options]

Runs osu_allreduce on 4 local ranks three times and prints each table, then the average
latencies side by side:
  1. native       the plain MPI
  2. optireduce   liboptireduce preloaded, OPTIREDUCE_MODE=exact OPTIREDUCE_MIN_BYTES=0, so
                  every float allreduce goes through the engine
  3. validated    as 2, plus OSU's -c check of every result
Every run uses -f (min, max, iterations) and -T mpi_float where OSU has -T (7.1 and later
default to MPI_CHAR, which the engine never takes; earlier versions always use MPI_FLOAT).

OSU_HOME is an OSU micro-benchmarks install prefix or build tree; osu_allreduce is looked up in
libexec/osu-micro-benchmarks/mpi/collective, c/mpi/collective/blocking, c/mpi/collective,
mpi/collective, then anywhere below. The MPI it was built with (ldd) picks the launcher and the
library: Open MPI gets mpirun and liboptireduce.so, MPICH mpiexec and liboptireduce-mpich.so,
found by scripts/optireduce-run (build/wrappers, or $OPTIREDUCE_LIB). Options are passed to
every run; OSU takes sizes in plain bytes, e.g. -m 4:1048576 -i 200.
Other OPTIREDUCE_* variables set here (e.g. OPTIREDUCE_STATS=1) reach runs 2 and 3.
USAGE
}

die() {
  echo "osu-compare.sh: $*" >&2
  exit 1
}

case "${1:-}" in -h | --help) usage; exit 0 ;; esac
for arg in "$@"; do
  case "$arg" in
    -T* | --type*) die "-T is set by this script (mpi_float, the only type the engine takes)" ;;
  esac
done

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
[[ -n ${OSU_HOME:-} ]] || { usage >&2; die "OSU_HOME is not set"; }
[[ -d $OSU_HOME ]] || die "OSU_HOME=$OSU_HOME is not a directory"

osu=""
for candidate in libexec/osu-micro-benchmarks/mpi/collective c/mpi/collective/blocking \
  c/mpi/collective mpi/collective; do
  if [[ -x $OSU_HOME/$candidate/osu_allreduce ]]; then
    osu=$OSU_HOME/$candidate/osu_allreduce
    break
  fi
done
[[ -n $osu ]] || osu=$(find "$OSU_HOME" -name osu_allreduce -type f -perm -u+x -print -quit)
[[ -n $osu ]] || die "no executable osu_allreduce under OSU_HOME=$OSU_HOME (is OSU built?)"

# Open MPI and MPICH programs need their own launcher and their own build of the library.
linked=$(ldd "$osu" 2>/dev/null || true)
if grep -q 'libmpi\.so' <<<"$linked"; then
  launcher=$(command -v mpirun.openmpi || command -v mpirun) || die "mpirun (Open MPI) not found"
  ranks=(--oversubscribe -np 4) # 4 ranks may exceed the cores
  single=(-np 1)
elif grep -q 'libmpich' <<<"$linked"; then
  launcher=$(command -v mpiexec.mpich || command -v mpiexec.hydra) || die "mpiexec (MPICH) not found"
  ranks=(-n 4)
  single=(-n 1)
else
  die "$osu is linked against neither Open MPI (libmpi.so) nor MPICH (libmpich)"
fi
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

help=$("$launcher" "${single[@]}" "$osu" -h 2>&1) || die "'$osu -h' failed: $help"
osu_args=(-f)
grep -qi 'mpi_float' <<<"$help" && osu_args+=(-T mpi_float)
version=$("$launcher" "${single[@]}" "$osu" -v 2>&1 | grep -m1 -o 'v[0-9][0-9.]*' || echo "version unknown")

out=$(mktemp -d)
trap 'rm -rf -- "$out"' EXIT
failed=0

# run NAME TITLE COMMAND...: prints the table as it comes and keeps it for the comparison.
run() {
  local name=$1 title=$2
  shift 2
  printf '\n=== %s\n' "$title"
  "$@" 2>&1 | tee "$out/$name" || {
    echo "osu-compare.sh: the $name run failed (exit status ${PIPESTATUS[0]})" >&2
    failed=1
  }
}

echo "osu-compare.sh: $osu ($version), 4 ranks, ${osu_args[*]} $*"
run native "1/3 native: $(basename -- "$launcher") without optireduce" \
  "$launcher" "${ranks[@]}" "$osu" "${osu_args[@]}" "$@"
export OPTIREDUCE_MODE=exact OPTIREDUCE_MIN_BYTES=0
run optireduce "2/3 optireduce: OPTIREDUCE_MODE=exact OPTIREDUCE_MIN_BYTES=0" \
  "$here/optireduce-run" "$launcher" "${ranks[@]}" "$osu" "${osu_args[@]}" "$@"
run validated "3/3 optireduce with OSU validation (-c)" \
  "$here/optireduce-run" "$launcher" "${ranks[@]}" "$osu" "${osu_args[@]}" -c "$@"

# OSU rows: size in column 1, average latency in column 2, "Pass"/"Fail" last with -c; comment
# and error lines do not start with a number.
printf '\n=== Average latency (us), column 2 of each table; Ratio = optireduce / native\n'
awk '
  FNR == 1 { file++ }
  $1 !~ /^[0-9]+$/ { next }
  file == 1 { native[$1] = $2; order[++n] = $1 }
  file == 2 { opt[$1] = $2 }
  file == 3 { valid[$1] = $NF }
  END {
    printf "%-10s%16s%16s%10s%14s\n", "# Size", "native", "optireduce", "Ratio", "Validation"
    for (i = 1; i <= n; i++) {
      s = order[i]
      o = (s in opt) ? opt[s] : "-"
      r = (s in opt && native[s] > 0) ? sprintf("%.3f", opt[s] / native[s]) : "-"
      v = (s in valid) ? valid[s] : "-"
      printf "%-10s%16s%16s%10s%14s\n", s, native[s], o, r, v
    }
  }' "$out/native" "$out/optireduce" "$out/validated"
exit "$failed"
