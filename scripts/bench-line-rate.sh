#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-line-rate.sh: the figures of the "line-rate datagram channel" work on the emulated cloud
# (4 hosts, scripts/cloud/), the library with its default settings (bounded mode over UDP)
# against native Open MPI, all measured in one session so that the machine's load is the same
# for every number. Two conditions, each with two measurements:
#   clean   no loss
#   loss1   1% of packets dropped on arrival at every host (set.sh --loss 0.01)
#   a. optireduce-bench, which times the library (MPI_Allreduce) and native MPI
#      (PMPI_Allreduce) alternately in one job, so its ratios never compare two jobs;
#      OPTIREDUCE_STATS=1 makes rank 0 print the entries lost at MPI_Finalize;
#   b. OSU's osu_allreduce through scripts/osu-compare.sh --cloud --defaults --no-validate
#      (native and library are two jobs there; OSU reports the average, not percentiles).
# Writes OUTDIR/<cond>-bench.{txt,csv}, OUTDIR/<cond>-stats.<sizes>.json (each job's
# OPTIREDUCE_STATS_FILE summary), OUTDIR/<cond>-osu.txt, OUTDIR/<cond>-net.txt (link
# counters before and after) and OUTDIR/run-info.txt; scripts/summarize-line-rate.py OUTDIR
# prints the tables and which targets were hit. Needs root; brings the cloud up and tears it
# down on exit, so it must not run while another job uses the cloud.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/bench-line-rate.sh OUTDIR [BUILD_DIR] [--mtu 1500|9000] [--rate 1gbit|10gbit] [--quick]
  OUTDIR     where the results go (created)
  BUILD_DIR  the build tree with wrappers/liboptireduce.so and src/tools/bench/optireduce-bench
             (default: build next to scripts/)
  --mtu      MTU of the emulated links (default 1500)
  --rate     per-host link rate each way (default 1gbit)
  --quick    a smoke test: 256 KiB to 4 MiB, 5 iterations (1 to 2 minutes)
OSU_HOME (default /opt/osu) is the OSU micro-benchmarks install (an Open MPI build).
Then: scripts/summarize-line-rate.py OUTDIR
USAGE
}

die() {
  echo "bench-line-rate.sh: $*" >&2
  exit 1
}

here=$(cd "$(dirname -- "$0")" && pwd)
out='' build='' mtu=1500 rate=1gbit quick=0
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
    --rate) rate=${2:?--rate needs a value}; shift 2 ;;
    --quick) quick=1; shift ;;
    -*) usage >&2; die "unknown option '$1'" ;;
    *)
      if [[ -z $out ]]; then out=$1
      elif [[ -z $build ]]; then build=$1
      else usage >&2; die "too many arguments"
      fi
      shift ;;
  esac
done
[[ -n $out ]] || { usage >&2; exit 2; }
build=${build:-$here/../build}
[[ $(id -u) -eq 0 ]] || die "needs root (the emulated cloud)"
[[ -d $build ]] || die "BUILD_DIR $build is not a directory"
# Absolute paths: the ranks run on the emulated hosts, whose working directory is not ours.
build=$(readlink -f -- "$build")
lib=$build/wrappers/liboptireduce.so
bench=$build/src/tools/bench/optireduce-bench
[[ -x $bench && -f $lib ]] || die "build first: $bench and $lib are missing"
export OSU_HOME=${OSU_HOME:-/opt/osu}
[[ -d $OSU_HOME ]] || die "OSU_HOME=$OSU_HOME is not a directory (set OSU_HOME to an OSU install)"
mkdir -p "$out"
out=$(readlink -f -- "$out")

# The library runs with its defaults: nothing from the caller's environment may change them.
# mpirun.sh forwards every OPTIREDUCE_* variable to the ranks, so they are removed here.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^OPTIREDUCE_' || true)
unset LD_PRELOAD

# Iterations. bench's -i applies to every size, so small and large sizes are two jobs: enough
# calls below 8 MiB for a P99 that is not the maximum, and few enough above it (native 64 MiB
# takes 1.5 to 2 s at 1 Gbit/s here, each size timed twice: library and native) that the whole
# run at 1 Gbit/s stays near 15 minutes while the library is about as fast as native. OSU gives only the average, which needs fewer calls; -x 2 because its
# default warm-up above 8 KiB is 10 calls, as long as the timed ones.
if ((quick)); then
  bench_jobs=("256K:4M 5")
  osu_sizes=262144:4194304 osu_iters=5 osu_warmup=1
else
  bench_jobs=("256K:4M 100" "8M:64M 20")
  osu_sizes=262144:67108864 osu_iters=10 osu_warmup=2
fi

cloud=$here/cloud
trap '"$cloud/down.sh" >/dev/null 2>&1 || true' EXIT
"$cloud/up.sh" 4 --rate "$rate" --mtu "$mtu"

{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit=$(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)"
  echo "hosts=4"
  echo "rate=$rate"
  echo "mtu=$mtu"
  echo "quick=$quick"
  echo "bench_jobs=${bench_jobs[*]}"
  echo "osu=-m $osu_sizes -i $osu_iters -x $osu_warmup"
  echo "cpus=$(nproc)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/run-info.txt"

failed=0
# condition: both measurements under one loss setting.
condition() {
  local cond=$1 loss=$2 job sizes iters part csvs=()
  "$cloud/set.sh" --loss "$loss" >/dev/null
  { echo "== before"; "$cloud/stats.sh"; } >"$out/$cond-net.txt"
  : >"$out/$cond-bench.txt"
  rm -f -- "$out/$cond"-stats.*.json
  for job in "${bench_jobs[@]}"; do
    read -r sizes iters <<<"$job"
    part=$out/$cond-bench.${sizes/:/-}.csv
    echo "== $cond: optireduce-bench -m $sizes -i $iters (library defaults, OPTIREDUCE_STATS=1)"
    echo "== optireduce-bench -m $sizes -i $iters" >>"$out/$cond-bench.txt"
    # The text summary for a reader of the log, the JSON one for summarize-line-rate.py.
    if LD_PRELOAD=$lib OPTIREDUCE_STATS=1 OPTIREDUCE_STATS_FILE=$out/$cond-stats.${sizes/:/-}.json \
      "$cloud/mpirun.sh" 4 --timeout 1800 -- \
      "$bench" -m "$sizes" -i "$iters" --csv "$part" >>"$out/$cond-bench.txt" 2>&1; then :
    else
      echo "bench-line-rate.sh: $cond: optireduce-bench -m $sizes failed (exit status $?)" >&2
      failed=1
    fi
    [[ -s $part ]] && csvs+=("$part")
  done
  # One CSV per condition, as one job would have written it (one header).
  if ((${#csvs[@]})); then
    { head -n 1 "${csvs[0]}"; tail -q -n +2 "${csvs[@]}"; } >"$out/$cond-bench.csv"
    rm -f -- "${csvs[@]}"
  fi
  grep -E 'stats: bounded' "$out/$cond-bench.txt" || true
  echo "== $cond: osu-compare.sh --cloud --defaults --no-validate -m $osu_sizes -i $osu_iters -x $osu_warmup"
  if OPTIREDUCE_LIB=$lib "$here/osu-compare.sh" --cloud --defaults --no-validate \
    -m "$osu_sizes" -i "$osu_iters" -x "$osu_warmup" >"$out/$cond-osu.txt" 2>&1; then :
  else
    echo "bench-line-rate.sh: $cond: osu-compare.sh failed (exit status $?), see $out/$cond-osu.txt" >&2
    failed=1
  fi
  sed -n '/^=== Average latency/,$p' "$out/$cond-osu.txt"
  { echo "== after"; "$cloud/stats.sh"; } >>"$out/$cond-net.txt"
}

condition clean 0
condition loss1 0.01
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/run-info.txt"
echo "results in $out; tables: $here/summarize-line-rate.py $out"
exit "$failed"
