#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-accuracy.sh: what the randomized Hadamard transform costs and buys, end to end, on the
# emulated cloud (4 hosts at 1 Gbit/s, scripts/cloud/), bounded mode over udp:
#   cost      clean network, allreduce P50 with OPTIREDUCE_HADAMARD=on and =off at 1, 4, 16 and
#             64 MiB, in four alternating pairs of runs (on, off, ...) so drift of this shared host
#             shows up as the spread between the two runs of one setting
#   accuracy  0.1%, 1%, 5% and 10% of packets dropped on arrival at every host: NMSE of the
#             result against the exact sum, the largest error, the library's own error
#             estimate and the loss it reported, transform on and off, at 4 MiB
# Inputs are gradient-like (a fixed mean plus fresh noise per rank and operation); each line
# comes from test/bounded's `measure` case. Writes OUTDIR/accuracy.txt ("<experiment> <setting>
# measure ..."); scripts/plot-accuracy.py makes the tables and the PNG. Needs root; brings the
# cloud up and tears it down. About 20 minutes.
#   usage: scripts/bench-accuracy.sh OUTDIR [BUILD_DIR] [--pairs N] [--codec fp32|bf16|int8]
# --pairs N runs only N alternating pairs (on, off) of 16 operations at 4 MiB on the clean
# network and writes OUTDIR/cost-4MiB-pairs.txt, one line per run: "<pair> <on|off> measure ...
# | phases ... | p50 ..., p99 ..." (the measure line, then the job summary's phase endings and
# engine latency over all ranks). About 20 seconds a pair.
# --codec C runs every job with OPTIREDUCE_CODEC=C (the datagrams' wire format: bf16 and int8
# round the entries, so NMSE then counts the codec's error with the loss's). The codec is named
# in the output and in a "# codec C" first line of the results file, which plot-accuracy.py
# skips; without --codec the library's default (fp32) runs and the output is as before.
# --codecs LIST (e.g. fp32,bf16,int8) runs only the codecs' comparison: on the clean network,
# for each codec in turn, 40 operations of 4 MiB with the library's default deadlines, then 40
# with the deadline pinned at 10 s (nothing lost: the codec's own error), and writes
# OUTDIR/codecs.txt, one line per job: "<codec> <default|pinned> measure <floats> <ops>
# <P50 ms> <NMSE> <worst error / RMS> <error estimate> <entries lost>". About a minute.
# --carry runs only carry's comparison: at 5% of packets dropped on arrival at every host, 10
# consecutive operations of 4 MiB on one buffer with OPTIREDUCE_CARRY=0 and =1, alternating,
# --carry-runs times each (default 3), and writes OUTDIR/carry.txt, one line per job:
# "carry-measure <off|on> <floats> <ops> <NMSE of the sum over the 10 results> <NMSE per
# operation> <error of the sum / rms error per op> <operations with error>" (test/bounded's
# carry case). About 2 minutes.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
usage="usage: bench-accuracy.sh OUTDIR [BUILD_DIR] [--pairs N] [--codec fp32|bf16|int8] [--codecs C,C...] [--carry] [--carry-runs N]"
out='' build=$here/../build build_given=0 pairs=0 codec='' codecs='' carry=0 carry_runs=3
while (($#)); do
  case $1 in
    --pairs)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }
      pairs=$2; shift 2 ;;
    --carry) carry=1; shift ;;
    --carry-runs)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }
      carry_runs=$2; shift 2 ;;
    --codec)
      [[ ${2:-} =~ ^(fp32|bf16|int8)$ ]] || { echo "--codec takes fp32, bf16 or int8" >&2; exit 2; }
      codec=$2; shift 2 ;;
    --codecs)
      [[ ${2:-} =~ ^(fp32|bf16|int8)(,(fp32|bf16|int8))*$ ]] ||
        { echo "--codecs takes a comma-separated list of fp32, bf16 and int8 (got '${2:-}')" >&2; exit 2; }
      codecs=$2; shift 2 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *)
      if [[ -z $out ]]; then out=$1
      elif ((!build_given)); then build=$1 build_given=1
      else echo "$usage" >&2; exit 2
      fi
      shift ;;
  esac
done
[[ -n $out ]] || { echo "$usage" >&2; exit 2; }
# An OPTIREDUCE_CODEC in the caller's environment reaches the ranks too (mpirun.sh passes
# OPTIREDUCE_* on); --codec overrides it, and either way the output says which ran.
codec_env=()
if [[ -n $codec ]]; then codec_env=(OPTIREDUCE_CODEC="$codec"); fi
codec_note=${codec:-${OPTIREDUCE_CODEC:-}}
lib=$build/wrappers/liboptireduce.so
check=$build/test/bounded/optireduce_accuracy_check
[[ -x $check && -f $lib ]] || { echo "build first: $check and $lib are missing" >&2; exit 1; }
mkdir -p "$out"
cloud=$here/cloud
trap '"$cloud/down.sh" >/dev/null 2>&1 || true' EXIT
"$cloud/up.sh" 4 --rate 1gbit >/dev/null
result=$out/accuracy.txt
# new_result FILE: empties it, and names the codec in its first line when one was asked for.
new_result() {
  if [[ -n $codec_note ]]; then echo "# codec $codec_note (OPTIREDUCE_CODEC)" >"$1"; else : >"$1"; fi
}
if [[ -n $codec_note ]]; then echo "codec: $codec_note (OPTIREDUCE_CODEC)"; fi

launch() {  # log hadamard sizes ops [VAR=VALUE...]: one job of the measure case on the cloud
  local log=$1 ht=$2 sizes=$3 ops=$4
  shift 4
  env "${codec_env[@]}" "$@" LD_PRELOAD="$lib" OPTIREDUCE_MODE=bounded OPTIREDUCE_MIN_BYTES=0 OPTIREDUCE_HADAMARD="$ht" \
    OPTIREDUCE_STATS=1 CHECK_SIZES="$sizes" CHECK_OPS="$ops" \
    "$cloud/mpirun.sh" 4 --timeout 900 -x CHECK_SIZES -x CHECK_OPS -- "$check" measure >"$log" 2>&1 ||
    { echo "run failed, see $log" >&2; return 1; }
}

run() {  # experiment setting hadamard sizes ops [VAR=VALUE...]
  local exp=$1 setting=$2 ht=$3 sizes=$4 ops=$5
  local log=$out/$exp-$setting-$ht-${sizes%%,*}.txt
  shift 5
  echo "== $exp $setting hadamard=$ht${codec_note:+ codec=$codec_note} ($sizes floats, $ops operations) $*"
  launch "$log" "$ht" "$sizes" "$ops" "$@"
  grep '^measure' "$log" | sed "s/^/$exp $setting-$ht /" | tee -a "$result"
}

if ((carry)); then
  result=$out/carry.txt
  new_result "$result"
  "$cloud/set.sh" --loss 0.05 >/dev/null
  for ((i = 1; i <= carry_runs; i++)); do
    for c in 0 1; do
      log=$out/carry-$c-$i.txt
      env "${codec_env[@]}" LD_PRELOAD="$lib" OPTIREDUCE_MODE=bounded OPTIREDUCE_MIN_BYTES=0 OPTIREDUCE_STATS=1 \
        OPTIREDUCE_CARRY=$c CHECK_CARRY_OFF=$((1 - c)) CHECK_CARRY_MEASURE=1 CHECK_FLOATS=1048576 CHECK_OPS=10 \
        "$cloud/mpirun.sh" 4 --timeout 900 -x CHECK_CARRY_OFF -x CHECK_CARRY_MEASURE -x CHECK_FLOATS -x CHECK_OPS \
        -- "$check" carry >"$log" 2>&1 || { echo "run failed, see $log" >&2; exit 1; }
      grep '^carry-measure' "$log" | tee -a "$result"
    done
  done
  "$cloud/set.sh" --loss 0 >/dev/null
  echo "results: $result"
  exit 0
fi

if [[ -n $codecs ]]; then
  result=$out/codecs.txt
  : >"$result"
  IFS=, read -ra list <<<"$codecs"
  for c in "${list[@]}"; do
    for deadline in default pinned; do
      pin=()
      [[ $deadline == default ]] || pin=(OPTIREDUCE_TIMEOUT_MS=10000)
      log=$out/codec-$c-$deadline.txt
      # codec_env is empty or names --codec; this codec comes after it and wins.
      launch "$log" on 1048576 40 "${pin[@]}" OPTIREDUCE_CODEC="$c"
      echo "$c $deadline $(grep '^measure' "$log")" | tee -a "$result"
    done
  done
  echo "results: $result"
  exit 0
fi

if ((pairs > 0)); then
  result=$out/cost-4MiB-pairs.txt
  new_result "$result"
  for ((i = 1; i <= pairs; i++)); do
    for ht in on off; do
      log=$out/pairs-$i-$ht.txt
      launch "$log" "$ht" 1048576 16 OPTIREDUCE_TIMEOUT_MAX_MS=30000
      phases=$(grep -o 'phases [0-9]* complete, [0-9]* closed early, [0-9]* at the deadline' "$log" | head -1)
      p50=$(grep -o 'p50 [0-9.]* us, p99 [0-9.]* us' "$log" | head -1)
      echo "$i $ht $(grep '^measure' "$log") | $phases | $p50" | tee -a "$result"
    done
  done
  echo "results: $result"
  exit 0
fi

# The datagram channel moves about a quarter of the link (docs/notes/2026-12-02-bounded-mode-udp-provider.md), so a
# 64 MiB phase takes longer than the default 1 s deadline cap: the cost runs raise the cap so
# every operation completes and the two settings are timed doing the same work.
new_result "$result"
for pass in 1 2 3 4; do
  for ht in on off; do
    run cost "clean$pass" $ht 262144,1048576 12 OPTIREDUCE_TIMEOUT_MAX_MS=30000
    run cost "clean$pass" $ht 4194304,16777216 5 OPTIREDUCE_TIMEOUT_MAX_MS=30000
  done
done
for loss in 0.001 0.01 0.05 0.1; do
  "$cloud/set.sh" --loss "$loss" >/dev/null
  for ht in on off; do run accuracy "loss$loss" $ht 1048576 20; done
done
"$cloud/set.sh" --loss 0 >/dev/null
echo "results: $result"
