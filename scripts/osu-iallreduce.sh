#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# osu-iallreduce.sh: OSU's osu_iallreduce with and without optireduce, interleaved runs, and the
# per-size medians side by side: Overall, Pure Comm., Overlap(%) and their ratios.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/osu-iallreduce.sh [options] [BUILD_DIR] [-- osu_iallreduce options]

Runs osu_iallreduce -T mpi_float -f natively and with liboptireduce preloaded, alternately (native,
library, then library, native, ...), RUNS times each, and prints per size the median over runs of
Overall(us), Pure Comm.(us), Overlap(%) and MPI_Wait(us) of both, with the ratios library/native.
One table per -t value. BUILD_DIR is the build tree holding wrappers/liboptireduce.so (default:
build next to this script's directory; $OPTIREDUCE_LIB, if set, names the library instead).

  -np N            ranks (default 4); with --cloud, emulated hosts, one rank each
  -m MIN:MAX       sizes in bytes (default 4:16777216)
  -i N, -x N       OSU's timed and warm-up iterations per size (OSU's defaults otherwise)
  -t LIST          MPI_Test calls during OSU's dummy compute, comma-separated, e.g. 0,8,64
                   (default 0); each value gets its own runs and table
  --runs R         runs per mode and -t value (default 3)
  --validate       add OSU's -c (a Validation column from the library's runs)
  --defaults       run the library with its default settings instead of forcing
                   OPTIREDUCE_MODE=exact and OPTIREDUCE_MIN_BYTES=0 (values the caller exported
                   always win)
  --cloud          run on the emulated cloud through scripts/cloud/mpirun.sh (root, a cloud that
                   is up: scripts/cloud/up.sh N; this script never starts one)
  --launcher CMD   start every job with CMD (one string, split on spaces) instead, e.g.
                   --launcher "scripts/cloud/mpirun.sh 4 --timeout 1200 --". The library goes in
                   LD_PRELOAD and OPTIREDUCE_* in the launcher's environment: CMD must forward
                   them to the ranks, as scripts/cloud/mpirun.sh does; -np is then ignored
  --osu DIR        OSU install prefix or build tree (default $OSU_HOME, else /opt/osu)
  --keep DIR       keep every run's raw output in DIR (default: a temporary directory, removed)
  --from DIR       run nothing: print the tables from the raw outputs a --keep DIR holds (e.g.
                   of an interrupted run); give the same -t list
  -h, --help       this text

Everything after -- goes to every osu_iallreduce run unchanged. The library's runs get
OPTIREDUCE_STATS=1 unless the caller set it, and the table footer shows its counters (which say
whether the Iallreduce calls went through the engine).
USAGE
}

die() {
  echo "osu-iallreduce.sh: $*" >&2
  exit 1
}

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
ranks=4 sizes=4:16777216 iterations="" warmup="" tests=0 runs=3 validate=0 defaults=0
cloud=0 launcher_cmd="" osu_home=${OSU_HOME:-/opt/osu} keep="" from="" build="" failed=0
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -np) ranks=${2:?-np needs a value}; shift 2 ;;
    -m) sizes=${2:?-m needs a value}; shift 2 ;;
    -i) iterations=${2:?-i needs a value}; shift 2 ;;
    -x) warmup=${2:?-x needs a value}; shift 2 ;;
    -t) tests=${2:?-t needs a value}; shift 2 ;;
    --runs) runs=${2:?--runs needs a value}; shift 2 ;;
    --validate) validate=1; shift ;;
    --defaults) defaults=1; shift ;;
    --cloud) cloud=1; shift ;;
    --launcher) launcher_cmd=${2:?--launcher needs a value}; shift 2 ;;
    --osu) osu_home=${2:?--osu needs a value}; shift 2 ;;
    --keep) keep=${2:?--keep needs a value}; shift 2 ;;
    --from) from=${2:?--from needs a value}; shift 2 ;;
    --) shift; break ;;
    -*) die "unknown option '$1' (osu_iallreduce options go after --; see --help)" ;;
    *) [[ -z $build ]] || die "unexpected argument '$1'"; build=$1; shift ;;
  esac
done
extra=("$@")
for arg in "${extra[@]}"; do
  case "$arg" in
    -T* | --type* | -t* | -m* | -f | --full) die "$arg is set by this script (see --help)" ;;
  esac
done
[[ $ranks =~ ^[1-9][0-9]*$ ]] || die "-np must be a positive number"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number"
[[ $tests =~ ^[0-9]+(,[0-9]+)*$ ]] || die "-t must be a comma-separated list of numbers, not '$tests'"
IFS=, read -ra test_list <<<"$tests"
((!cloud)) || [[ -z $launcher_cmd ]] || die "--cloud and --launcher exclude each other"
build=${build:-$here/../build}
if [[ -n $from ]]; then
  [[ -d $from ]] || die "--from: $from is not a directory"
  out=$(readlink -f -- "$from") keep=$out
  # The highest run number present, for the counters line.
  runs=$(find "$out" -maxdepth 1 -name 't*-*-*.txt' | sed -E 's/.*-([0-9]+)\.txt$/\1/' | sort -n | tail -1)
  runs=${runs:-1}
fi

# Skipped with --from: nothing to find or run.
if [[ -z $from ]]; then
  # osu_iallreduce, as osu-compare.sh looks for osu_allreduce.
  [[ -d $osu_home ]] || die "no OSU at $osu_home (build it, then set OSU_HOME or --osu)"
  osu=""
  for candidate in libexec/osu-micro-benchmarks/mpi/collective c/mpi/collective/non_blocking \
    c/mpi/collective mpi/collective; do
    if [[ -x $osu_home/$candidate/osu_iallreduce ]]; then
      osu=$osu_home/$candidate/osu_iallreduce
      break
    fi
  done
  [[ -n $osu ]] || osu=$(find "$osu_home" -name osu_iallreduce -type f -perm -u+x -print -quit)
  [[ -n $osu ]] || die "no executable osu_iallreduce under $osu_home (is OSU built?)"
  # Launchers on other (or emulated) hosts share this filesystem, not this working directory.
  osu=$(readlink -f -- "$osu")

  # The MPI osu_iallreduce was built with picks the local launcher and the library's ABI.
  linked=$(ldd "$osu" 2>/dev/null || true)
  if grep -q 'libmpi\.so' <<<"$linked"; then
    abi=openmpi lib_name=liboptireduce.so
    mpi_launcher=$(command -v mpirun.openmpi || command -v mpirun) || die "mpirun (Open MPI) not found"
    local_ranks=(--oversubscribe -np "$ranks") # 4 ranks may exceed the cores
  elif grep -q 'libmpich' <<<"$linked"; then
    abi=mpich lib_name=liboptireduce-mpich.so
    mpi_launcher=$(command -v mpiexec.mpich || command -v mpiexec.hydra) || die "mpiexec (MPICH) not found"
    local_ranks=(-n "$ranks")
    ((!cloud)) || die "--cloud runs Open MPI only (scripts/cloud/mpirun.sh); $osu is an MPICH build"
  else
    die "$osu is linked against neither Open MPI (libmpi.so) nor MPICH (libmpich)"
  fi
  lib=${OPTIREDUCE_LIB:-$build/wrappers/$lib_name}
  [[ -f $lib ]] || die "library $lib not found; build it (cmake --build $build) or set OPTIREDUCE_LIB"
  lib=$(readlink -f -- "$lib")
  if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi

  # How each run starts. Locally the launcher, through optireduce-run for the library (it spells
  # LD_PRELOAD and OPTIREDUCE_* the launcher's way and keeps them out of mpirun itself). Elsewhere a
  # launcher that forwards its environment to the ranks (scripts/cloud/mpirun.sh does, with -x), so
  # the library goes in LD_PRELOAD directly; OPTIREDUCE_LIB is this script's and stays out.
  if ((cloud)); then
    [[ $(id -u) -eq 0 ]] || die "--cloud needs root (the emulated cloud's namespaces)"
    [[ -r /run/ordemo/hosts ]] || die "--cloud: no emulated cloud is up (scripts/cloud/up.sh $ranks)"
    read -r hosts </run/ordemo/hosts
    ((hosts >= ranks)) || die "--cloud: the emulated cloud has $hosts hosts, -np $ranks needs as many"
    # 1200 s: 16 MiB at 1 Gbit/s, twice per iteration (pure and overlapped), for every iteration.
    launcher_cmd="$here/cloud/mpirun.sh $ranks --timeout 1200 --"
  fi
  if [[ -n $launcher_cmd ]]; then
    read -ra start_native <<<"$launcher_cmd"
    start_lib=(env -u OPTIREDUCE_LIB "LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}" "${start_native[@]}")
    where="$launcher_cmd"
  else
    start_native=("$mpi_launcher" "${local_ranks[@]}")
    start_lib=(env "OPTIREDUCE_LIB=$lib" "$here/optireduce-run" "--abi=$abi" "$mpi_launcher" "${local_ranks[@]}")
    where="$ranks local ranks ($(basename -- "$mpi_launcher"))"
  fi

  # Exported so that both ways of starting see them (optireduce-run and mpirun.sh forward every
  # OPTIREDUCE_*); the native runs do not load the library, which alone reads them.
  if ((!defaults)); then
    export OPTIREDUCE_MODE=${OPTIREDUCE_MODE:-exact} OPTIREDUCE_MIN_BYTES=${OPTIREDUCE_MIN_BYTES:-0}
  fi
  export OPTIREDUCE_STATS=${OPTIREDUCE_STATS:-1}
  settings=$(compgen -e | grep '^OPTIREDUCE_' | grep -v '^OPTIREDUCE_LIB$' | while read -r name; do
    printf ' %s=%s' "$name" "${!name}"
  done || true)

  osu_args=(-f -T mpi_float -m "$sizes")
  [[ -z $iterations ]] || osu_args+=(-i "$iterations")
  [[ -z $warmup ]] || osu_args+=(-x "$warmup")
  ((!validate)) || osu_args+=(-c)
  osu_args+=("${extra[@]}")

  if [[ -n $keep ]]; then
    mkdir -p -- "$keep"
    out=$(readlink -f -- "$keep")
  else
    out=$(mktemp -d)
    trap 'rm -rf -- "$out"' EXIT
  fi

  echo "osu-iallreduce.sh: $osu, $where, ${osu_args[*]}, -t ${tests}, $runs runs per mode"
  echo "osu-iallreduce.sh: library $lib;$settings"

  # run_one FILE COMMAND...: one osu_iallreduce job, its output (with the library's stderr summary)
  # kept in FILE; a failure is reported and the summary goes on without that run.
  run_one() {
    local file=$1
    shift
    if ! "$@" >"$file" 2>&1; then
      echo "osu-iallreduce.sh: failed (see below): $*" >&2
      tail -5 -- "$file" >&2
      mv -- "$file" "$file.failed"
      failed=1
    fi
  }

  for ((r = 1; r <= runs; r++)); do
    for t in "${test_list[@]}"; do
      # Alternate which mode goes first, so drift over the runs does not favour one.
      order=(native library)
      ((r % 2 == 1)) || order=(library native)
      for mode in "${order[@]}"; do
        printf 'osu-iallreduce.sh: run %d/%d, -t %s, %s\n' "$r" "$runs" "$t" "$mode"
        if [[ $mode == native ]]; then
          run_one "$out/t$t-native-$r.txt" "${start_native[@]}" "$osu" "${osu_args[@]}" -t "$t"
        else
          run_one "$out/t$t-library-$r.txt" "${start_lib[@]}" "$osu" "${osu_args[@]}" -t "$t"
        fi
      done
    done
  done

fi

# osu_iallreduce -f rows: Size Overall Compute Coll.Init MPI_Test MPI_Wait PureComm MinComm
# MaxComm Overlap [Validation]; comment and error lines do not start with a number.
summarize() {
  awk -v validate="$validate" '
    function median(list,    v, n, i, j, x) {
      n = split(list, v, " ")
      for (i = 2; i <= n; i++) {
        x = v[i] + 0
        for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]
        v[j + 1] = x
      }
      if (n == 0) return ""
      return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.3f", a / b) : "-" }
    function show(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
    FNR == 1 { mode = (FILENAME ~ /-native-[0-9]+\.txt$/) ? "n" : "l" }
    $1 !~ /^[0-9]+$/ || NF < 10 { next }
    {
      s = $1
      if (!(s in seen)) { seen[s] = 1; order[++count] = s }
      overall[mode, s] = overall[mode, s] " " $2
      wait[mode, s] = wait[mode, s] " " $6
      comm[mode, s] = comm[mode, s] " " $7
      overlap[mode, s] = overlap[mode, s] " " $10
      if (mode == "l" && NF >= 11 && $11 == "Fail") failures[s] = 1
      if (mode == "l" && NF >= 11) checked[s] = 1
    }
    END {
      printf "%-10s%14s%14s%10s%14s%14s%10s%10s%10s%14s%14s%6s", "# Size", "Nat-Overall", "Lib-Overall",
             "Ratio", "Nat-Comm", "Lib-Comm", "Ratio", "Nat-Ovl%", "Lib-Ovl%", "Nat-Wait", "Lib-Wait", "Runs"
      if (validate) printf "%12s", "Validation"
      printf "\n"
      for (i = 1; i <= count; i++) {
        s = order[i]
        no = median(overall["n", s]); lo = median(overall["l", s])
        nc = median(comm["n", s]); lc = median(comm["l", s])
        nv = median(overlap["n", s]); lv = median(overlap["l", s])
        nw = median(wait["n", s]); lw = median(wait["l", s])
        n = split(overall["l", s], dummy, " ")
        printf "%-10s%14s%14s%10s%14s%14s%10s%10s%10s%14s%14s%6d", s, show(no, "%.2f"), show(lo, "%.2f"),
               ratio(lo, no), show(nc, "%.2f"), show(lc, "%.2f"), ratio(lc, nc), show(nv, "%.1f"),
               show(lv, "%.1f"), show(nw, "%.2f"), show(lw, "%.2f"), n
        if (validate) printf "%12s", (s in failures) ? "Fail" : (s in checked) ? "Pass" : "-"
        printf "\n"
      }
    }' "$@"
}

for t in "${test_list[@]}"; do
  shopt -s nullglob
  files=("$out"/t"$t"-native-*.txt "$out"/t"$t"-library-*.txt)
  shopt -u nullglob
  printf '\n=== osu_iallreduce -t %s: medians over runs (us); Ratio = library / native; Ovl%% = OSU Overlap(%%)\n' "$t"
  if ((${#files[@]} == 0)); then
    echo "(no run succeeded)"
    continue
  fi
  summarize "${files[@]}"
  # The library's own account of the last library run: did the calls reach the engine?
  last=""
  for ((r = runs; r >= 1 && ${#last} == 0; r--)); do
    [[ ! -f $out/t$t-library-$r.txt ]] || last=$out/t$t-library-$r.txt
  done
  if [[ -n $last ]]; then
    counters=$(grep -m1 'stats: ranks=' -- "$last" |
      grep -oE '(engine_calls|nonblocking_calls|passthrough_calls|fallback_calls)=[0-9]+' | tr '\n' ' ' || true)
    echo "# library counters, $(basename -- "$last"): ${counters:-none printed (OPTIREDUCE_STATS=0?)}"
  fi
done
[[ -z $keep ]] || echo "raw outputs in $out"
exit "$failed"
