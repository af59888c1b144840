#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# osu-compare.sh: OSU's osu_allreduce with and without optireduce, side by side.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: OSU_HOME=/path/to/osu-micro-benchmarks scripts/osu-compare.sh [--cloud] [--defaults]
         [--codec C[,C...]] [--no-validate] [osu_allreduce options]

Runs osu_allreduce on 4 local ranks three times and prints each table, then the average
latencies side by side:
  1. native       the plain MPI
  2. optireduce   liboptireduce preloaded, OPTIREDUCE_MODE=exact OPTIREDUCE_MIN_BYTES=0, so
                  every float allreduce goes through the engine
  3. validated    as 2, plus OSU's -c check of every result
Every run uses -f (min, max, iterations) and -T mpi_float where OSU has -T (7.1 and later
default to MPI_CHAR, which the engine never takes; earlier versions always use MPI_FLOAT).

  --cloud        run every job on the emulated cloud instead of local ranks: one rank on each
                 of 4 emulated hosts through scripts/cloud/mpirun.sh (needs root, an Open MPI
                 build of OSU and a cloud that is up: scripts/cloud/up.sh 4)
  --defaults     run the library with its default settings (bounded mode, OPTIREDUCE_MIN_BYTES
                 64K) instead of forcing exact mode and MIN_BYTES=0; OPTIREDUCE_* variables
                 set by the caller still apply
  --codec C      the library's wire codec, OPTIREDUCE_CODEC=C (fp32, bf16 or int8) for runs 2
                 and 3, in bounded mode instead of exact (MIN_BYTES=0 still; with --defaults
                 the mode is left to the library and the caller): a codec only acts on bounded
                 mode's datagrams. bf16 and int8 round the data, so OSU's exact check in run 3
                 is expected to fail: add --no-validate. A list (--codec fp32,bf16,int8) runs
                 native once, then the library once per codec, and the last table has a column
                 and a ratio per codec, all measured in one run (needs --no-validate)
  --no-validate  skip run 3

OSU_HOME is an OSU micro-benchmarks install prefix or build tree; osu_allreduce is looked up in
libexec/osu-micro-benchmarks/mpi/collective, c/mpi/collective/blocking, c/mpi/collective,
mpi/collective, then anywhere below. The MPI it was built with (ldd) picks the launcher and the
library: Open MPI gets mpirun and liboptireduce.so, MPICH mpiexec and liboptireduce-mpich.so,
found by scripts/optireduce-run (build/wrappers, or $OPTIREDUCE_LIB). With --cloud the library
is $OPTIREDUCE_LIB or build/wrappers/liboptireduce.so next to this script, preloaded through
mpirun.sh (which forwards LD_PRELOAD and OPTIREDUCE_* to the hosts). Options are passed to
every run; OSU takes sizes in plain bytes, e.g. -m 4:1048576 -i 200.
Other OPTIREDUCE_* variables set here (e.g. OPTIREDUCE_STATS=1) reach runs 2 and 3.
USAGE
}

die() {
  echo "osu-compare.sh: $*" >&2
  exit 1
}

cloud=0 defaults=0 validate=1 codec=""
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --cloud) cloud=1; shift ;;
    --defaults) defaults=1; shift ;;
    --no-validate) validate=0; shift ;;
    --codec)
      [[ ${2:-} =~ ^(fp32|bf16|int8)(,(fp32|bf16|int8))*$ ]] ||
        die "--codec takes fp32, bf16 or int8, or a comma-separated list of them (got '${2:-}')"
      codec=$2
      shift 2
      ;;
    *) break ;;
  esac
done
for arg in "$@"; do
  case "$arg" in
    -T* | --type*) die "-T is set by this script (mpi_float, the only type the engine takes)" ;;
    --cloud | --defaults | --no-validate | --codec) die "$arg must come before the osu_allreduce options" ;;
  esac
done

IFS=, read -ra codecs <<<"$codec"
((${#codecs[@]} < 2 || !validate)) ||
  die "--codec $codec runs OSU's exact check on rounded data: add --no-validate (a list never validates)"

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
[[ -n ${OSU_HOME:-} ]] || { usage >&2; die "OSU_HOME is not set"; }
[[ -d $OSU_HOME ]] || die "OSU_HOME=$OSU_HOME is not a directory"

# The cloud's state lives in /run/ordemo (scripts/cloud/common.sh); checked here so that a
# missing cloud fails before three jobs each fail the same way.
if ((cloud)); then
  [[ $(id -u) -eq 0 ]] || die "--cloud needs root (the emulated cloud's namespaces)"
  [[ -r /run/ordemo/hosts ]] || die "--cloud: no emulated cloud is up (run scripts/cloud/up.sh 4)"
  read -r hosts </run/ordemo/hosts
  ((hosts >= 4)) || die "--cloud: the emulated cloud has $hosts hosts, 4 are needed (scripts/cloud/up.sh 4)"
fi

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
# The emulated hosts see this machine's filesystem, but under other working directories.
osu=$(readlink -f -- "$osu")

# Open MPI and MPICH programs need their own launcher and their own build of the library.
linked=$(ldd "$osu" 2>/dev/null || true)
if grep -q 'libmpi\.so' <<<"$linked"; then
  launcher=$(command -v mpirun.openmpi || command -v mpirun) || die "mpirun (Open MPI) not found"
  ranks=(--oversubscribe -np 4) # 4 ranks may exceed the cores
  single=(-np 1)
elif grep -q 'libmpich' <<<"$linked"; then
  ((!cloud)) || die "--cloud runs Open MPI only (scripts/cloud/mpirun.sh); $osu is an MPICH build"
  launcher=$(command -v mpiexec.mpich || command -v mpiexec.hydra) || die "mpiexec (MPICH) not found"
  ranks=(-n 4)
  single=(-n 1)
else
  die "$osu is linked against neither Open MPI (libmpi.so) nor MPICH (libmpich)"
fi
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# How each run starts: locally, the launcher (through optireduce-run for the library); on the
# cloud, mpirun.sh, which forwards LD_PRELOAD and OPTIREDUCE_* to the hosts by itself, so the
# library goes in LD_PRELOAD directly. Its path must be absolute: the hosts share this
# filesystem, not this working directory. OPTIREDUCE_LIB is this script's (and optireduce-run's)
# and stays out of the ranks' environment.
if ((cloud)); then
  if [[ -n ${OPTIREDUCE_LIB:-} ]]; then
    lib=$OPTIREDUCE_LIB
  else
    lib=$here/../build/wrappers/liboptireduce.so
  fi
  [[ -f $lib ]] || die "--cloud: library $lib not found; build it or set OPTIREDUCE_LIB=/path/to/liboptireduce.so"
  lib=$(readlink -f -- "$lib")
  # 1200 s: 64 MiB at 1 Gbit/s with loss takes seconds per call; mpirun.sh's own default is 600.
  start_native=("$here/cloud/mpirun.sh" 4 --timeout 1200 --)
  start_lib=(env -u OPTIREDUCE_LIB "LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}" "${start_native[@]}")
  where="4 emulated hosts (scripts/cloud/mpirun.sh)"
else
  start_native=("$launcher" "${ranks[@]}")
  start_lib=("$here/optireduce-run" "$launcher" "${ranks[@]}")
  where="4 local ranks"
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

# With --defaults the library decides for itself, but what the caller set still matters to
# anyone reading the result, so the header names every OPTIREDUCE_* variable the ranks get.
if ((defaults)); then
  settings="library defaults (OPTIREDUCE_MODE and OPTIREDUCE_MIN_BYTES not forced)"
  [[ -z $codec ]] || settings+=", OPTIREDUCE_CODEC=$codec"
else
  mode=exact
  [[ -z $codec ]] || mode=bounded
  export OPTIREDUCE_MODE=$mode OPTIREDUCE_MIN_BYTES=0
  settings="OPTIREDUCE_MODE=$mode OPTIREDUCE_MIN_BYTES=0"
  [[ -z $codec ]] || settings+=" OPTIREDUCE_CODEC=$codec"
fi
others=""
while IFS= read -r name; do
  case "$name" in
    OPTIREDUCE_LIB) continue ;;
    OPTIREDUCE_CODEC) [[ -z $codec ]] || continue ;;
    OPTIREDUCE_MODE | OPTIREDUCE_MIN_BYTES) ((defaults)) || continue ;;
  esac
  others+=" $name=${!name}"
done < <(compgen -e | grep '^OPTIREDUCE_' || true)
[[ -z $others ]] || settings+=", from the environment:$others"
# One library run per codec (one run, "optireduce", without --codec).
lib_runs=("${codecs[@]}")
((${#lib_runs[@]})) || lib_runs=("")
total=$((1 + ${#lib_runs[@]} + validate))

echo "osu-compare.sh: $osu ($version), $where, ${osu_args[*]} $*; optireduce: $settings"
run native "1/$total native: $(basename -- "$launcher") without optireduce" \
  "${start_native[@]}" "$osu" "${osu_args[@]}" "$@"
files=("$out/native")
k=1
for c in "${lib_runs[@]}"; do
  k=$((k + 1))
  [[ -z $c ]] || export OPTIREDUCE_CODEC="$c"
  run "optireduce$c" "$k/$total optireduce: ${settings/OPTIREDUCE_CODEC=$codec/OPTIREDUCE_CODEC=$c}" \
    "${start_lib[@]}" "$osu" "${osu_args[@]}" "$@"
  files+=("$out/optireduce$c")
done
if ((validate)); then
  run validated "$total/$total optireduce with OSU validation (-c)" \
    "${start_lib[@]}" "$osu" "${osu_args[@]}" -c "$@"
else
  : >"$out/validated"
fi
files+=("$out/validated")

# OSU rows: size in column 1, average latency in column 2, "Pass"/"Fail" last with -c; comment
# and error lines do not start with a number. Files: native, one per library run, validated.
if ((${#codecs[@]} > 1)); then
  heading="; one column and Ratio per codec: optireduce with it / native"
else
  heading="; Ratio = optireduce / native${codec:+ (optireduce with codec $codec)}"
fi
printf '\n=== Average latency (us), column 2 of each table%s\n' "$heading"
names=${codec:-optireduce}
awk -v validate="$validate" -v runs="${#lib_runs[@]}" -v names="$names" '
  FNR == 1 { for (f = 1; f < ARGC; f++) if (FILENAME == ARGV[f]) file = f }  # an empty file has no FNR 1
  $1 !~ /^[0-9]+$/ { next }
  file == 1 { native[$1] = $2; order[++n] = $1; next }
  file <= 1 + runs { lat[file - 1, $1] = $2; next }
  { valid[$1] = $NF }
  END {
    split(names, name, ",")
    printf "%-10s%16s", "# Size", "native"
    for (j = 1; j <= runs; j++) printf "%16s%10s", (runs > 1 ? name[j] : "optireduce"), "Ratio"
    if (validate) printf "%14s", "Validation"
    printf "\n"
    for (i = 1; i <= n; i++) {
      s = order[i]
      printf "%-10s%16s", s, native[s]
      for (j = 1; j <= runs; j++) {
        o = ((j, s) in lat) ? lat[j, s] : "-"
        r = ((j, s) in lat && native[s] > 0) ? sprintf("%.3f", lat[j, s] / native[s]) : "-"
        printf "%16s%10s", o, r
      }
      if (validate) printf "%14s", ((s in valid) ? valid[s] : "-")
      printf "\n"
    }
  }' "${files[@]}"
exit "$failed"
