#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-training.sh: time-to-accuracy of data-parallel training (scripts/train/train.py) on the
# emulated cloud (scripts/cloud/, 4 hosts, 1 Gbit/s each way) for these gradient allreduces:
#   native        mpi4py on Open MPI, no library
#   bounded       the same job with liboptireduce.so preloaded, OPTIREDUCE_MODE=bounded
#   bounded-bf16  ... and OPTIREDUCE_CODEC=bf16 (the gradients travel as bfloat16)
#   bounded-int8  ... and OPTIREDUCE_CODEC=int8 (int8 levels and a scale per datagram)
#   bounded-carry, bounded-int8-carry, bounded-bf16-carry
#                 ... and OPTIREDUCE_CARRY=1 (what a step drops goes into the next step)
#   exact         ... OPTIREDUCE_MODE=exact
#   gloo          torch.distributed's Gloo (rank 0 on ordemo-h0, 10.77.0.10, interface eth0)
#   gloo-fp16     Gloo on float16 copies of the buckets (train.py --wire-dtype fp16, as PyTorch's
#                 fp16_compress_hook): the peer a reduced-precision codec is to be judged against
# The default runs native, bounded, exact and gloo; --backends picks any of them.
# under each condition:
#   clean    no loss
#   loss     1% of packets dropped on arrival at every host
#   tail     one random host's link cut to TAIL_RATE_MIN..MAX mbit for TAIL_MS_MIN..MAX ms,
#            every TAIL_GAP_MS_MIN..MAX ms, on a schedule that is the same for every back-end
#   cotenant no loss, but a second job of the same back-end (the co-tenant: the same training,
#            seed + 100) runs on the same 4 hosts at the same time, so the two share every link
#            (and, on a small machine, the cores). Both jobs are recorded: the measured one as
#            <backend>-s<seed>, the co-tenant as <backend>-cotenant-s<seed>
# The back-ends run with the same seeds and hyper-parameters, interleaved per seed (the order
# rotates with the seed). Writes OUTDIR/<condition>/<backend>-s<seed>.{csv,log,stats,net}
# (per-iteration CSV, the job's output with its RESULT line, the library's stats summary, the
# cloud's counters after the run) and OUTDIR/results.txt (one "condition RESULT {...}" line per
# run), then runs scripts/train/summarize-training.py OUTDIR for the tables (OUTDIR/training.md)
# and plots. Needs root; brings the cloud up per condition and always tears it down, and
# refuses to start while another emulated cloud is up.
# The tail schedule: before any back-end runs, scripts/train/tail.py draw writes one schedule per
# seed, OUTDIR/tail/schedule-s<seed>.txt (lines "start_s host rate_mbit ms"), from splitmix64
# seeded with the seed alone: the same seed gives the same schedule on any machine, in any run.
# Each run's applier (tail.py apply) reads that file and follows train.py's own training clock
# through --clock-file (<backend>-s<seed>.clock): a cut starts when the training time reaches its
# start_s and lasts its ms of training time. That clock starts after warm-up and stops during
# evaluations and drift measurements, as time to accuracy does, so every back-end meets each cut
# at the same point of its training time, however long its setup (Gloo's rendezvous) or its
# pauses took; no cut falls in setup or warm-up. The applier writes <backend>-s<seed>.schedule
# (the schedule it read) and .events (each cut applied, with when it was in place); at the end
# tail.py check compares them across the back-ends of each seed and the script exits 1 if they
# differ.
#   usage: scripts/train/bench-training.sh OUTDIR [BUILD_DIR] [--seeds N]
#            [--conditions clean,loss,tail] [--backends native,bounded,exact,gloo,...] [--quick]
#            [--dry-run] [--baseline-build DIR] [--mtu BYTES]
# --baseline-build adds the back-end "baseline": bounded mode with DIR's library (an earlier
# commit's build), interleaved with the others, so a change is measured against its parent side
# by side on the same machine and schedule.
# --mtu gives every link of the cloud that MTU (up.sh --mtu: 1500 by default, 9000 for jumbo
# frames, which AWS VPCs use and GCP VPCs allow), for every back-end alike: TCP's segments and the
# datagram channel's datagrams both follow it, so it shows how much of each back-end's time and
# CPU is paid per packet.
# Extra train.py options can be given in TRAIN_ARGS (e.g. TRAIN_ARGS="--max-iters 100").
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cloud=$repo/scripts/cloud
python=${PYTHON:-/usr/bin/python3}  # Debian's python3-torch etc. live in the system Python
backends=(native bounded exact gloo)
hosts=4

usage() {
  cat <<USAGE
usage: $(basename -- "$0") OUTDIR [BUILD_DIR] [--seeds N] [--conditions LIST] [--backends LIST]
          [--quick]
  BUILD_DIR     the build with wrappers/liboptireduce.so (default: the repository's build/)
  --seeds       seeds 1..N, each running every back-end (default 3)
  --conditions  which network conditions, in this order (default clean,loss,tail; also cotenant)
  --backends    which back-ends, from native, bounded, bounded-bf16, bounded-int8, exact, gloo
                and gloo-fp16 (default native,bounded,exact,gloo); bounded-bf16 and
                bounded-int8 are bounded with OPTIREDUCE_CODEC=bf16 / int8, gloo-fp16 is Gloo
                with the buckets cast to float16 around the all_reduce (fp16_compress_hook);
                a bounded back-end with -carry appended runs with OPTIREDUCE_CARRY=1
  --quick       30 iterations at most, target accuracy 0.9: a few minutes per condition
  --dry-run     check the arguments, write OUTDIR/setup.txt and the tail schedules, list the runs,
                and stop (no root, build or cloud needed)
  --baseline-build DIR
                also run "baseline": bounded mode with DIR/wrappers/liboptireduce.so (an earlier
                commit's build), for a before/after comparison in the same run
  --mtu BYTES   MTU of every link of the cloud (default 1500; 9000 for jumbo frames)
USAGE
}

out='' build=$repo/build seeds=3 conditions=clean,loss,tail quick=0 dry_run=0 baseline='' mtu=1500
while (($#)); do
  case $1 in
    --seeds) seeds=${2:?--seeds needs a value}; shift 2 ;;
    --conditions) conditions=${2:?--conditions needs a value}; shift 2 ;;
    --backends) IFS=, read -r -a backends <<<"${2:?--backends needs a value}"; shift 2 ;;
    --quick) quick=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    --baseline-build) baseline=${2:?--baseline-build needs a build directory}; shift 2 ;;
    --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) if [[ -z $out ]]; then out=$1; else build=$1; fi; shift ;;
  esac
done
[[ -n $out ]] || { usage >&2; exit 2; }
[[ $seeds =~ ^[1-9][0-9]*$ ]] || { echo "--seeds must be a positive number" >&2; exit 2; }
[[ $mtu =~ ^[1-9][0-9]*$ ]] || { echo "--mtu must be a number of bytes (1500, or 9000 for jumbo frames)" >&2; exit 2; }
IFS=, read -r -a conds <<<"$conditions"
for c in "${conds[@]}"; do
  [[ $c =~ ^(clean|loss|tail|cotenant)$ ]] ||
    { echo "unknown condition '$c' (clean, loss, tail, cotenant)" >&2; exit 2; }
done
for b in "${backends[@]}"; do
  [[ $b =~ ^(native|bounded(-bf16|-int8)?(-carry)?|exact|gloo|gloo-fp16)$ ]] ||
    { echo "unknown back-end '$b' (native, bounded, bounded-bf16, bounded-int8, each also with" \
        "-carry, exact, gloo, gloo-fp16)" >&2; exit 2; }
done
lib=$build/wrappers/liboptireduce.so
base_lib=''
if [[ -n $baseline ]]; then
  base_lib=$(cd "$baseline" && pwd)/wrappers/liboptireduce.so
  backends+=(baseline)
fi
if ((!dry_run)); then
  [[ -f $lib ]] || { echo "build first: $lib is missing" >&2; exit 1; }
  [[ -z $base_lib || -f $base_lib ]] || { echo "--baseline-build: $base_lib is missing" >&2; exit 1; }
  [[ $(id -u) -eq 0 ]] || { echo "needs root (network namespaces)" >&2; exit 1; }
  "$python" -c "import torch, mpi4py, sklearn" ||
    { echo "$python needs torch, mpi4py and sklearn (scripts/install-deps.sh)" >&2; exit 1; }
  # up.sh would tear down a cloud someone else is measuring on.
  if ip netns list | grep -q '^ordemo-'; then
    echo "an emulated cloud is already up (ip netns list shows ordemo-*): someone else's run?" \
      "Wait for it, or remove it with scripts/cloud/down.sh if it is a leftover" >&2
    exit 1
  fi
fi

# Hyper-parameters: the same for every back-end and seed. --quick stops at a lower target and
# fewer iterations, to prove the pipeline in a few minutes per condition.
train_args=(--batch 32 --lr 0.01 --bucket-mb 25 --eval-every 5 --drift-every 20 --max-iters 200
            --target-acc 0.95)
limit=600
if ((quick)); then
  train_args+=(--max-iters 30 --target-acc 0.9 --drift-every 0)
  limit=300
fi
# shellcheck disable=SC2206  # TRAIN_ARGS is a list of words
train_args+=(${TRAIN_ARGS:-})

# The tail condition's link cuts (scripts/train/tail.py). An iteration takes about 1.8 s here
# (1.2 s of it native allreduce), so cuts shorter than an iteration barely show: 100-200 Mbit/s
# for 0.3-1 s every 1-3 s gave native a P99/P50 of 1.6 and moved its median. These values slow
# about one iteration in five, by 1-3.5 s: native's P99/P50 came out at 2.74 and 2.76 (two seeds;
# measured when the cuts ran on wall time from the job's launch, before the schedule was drawn
# once and put on the training clock).
: "${TAIL_RATE_MIN:=50}" "${TAIL_RATE_MAX:=100}" "${TAIL_MS_MIN:=1500}" "${TAIL_MS_MAX:=3500}"
: "${TAIL_GAP_MS_MIN:=5000}" "${TAIL_GAP_MS_MAX:=10000}"
for v in TAIL_RATE_MIN TAIL_RATE_MAX TAIL_MS_MIN TAIL_MS_MAX TAIL_GAP_MS_MIN TAIL_GAP_MS_MAX; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$v must be a positive integer" >&2; exit 2; }
done

mkdir -p "$out"
# The tail schedules, one per seed, drawn before anything runs (see the top of this file). No cut
# starts after $limit s of training time: the job cannot train longer than that.
draw_schedules() {
  local seed
  mkdir -p "$out/tail"
  for ((seed = 1; seed <= seeds; seed++)); do
    "$python" "$here/tail.py" draw --seed "$seed" --hosts "$hosts" --horizon-s "$limit" \
      --rate-mbit "$TAIL_RATE_MIN" "$TAIL_RATE_MAX" --ms "$TAIL_MS_MIN" "$TAIL_MS_MAX" \
      --gap-ms "$TAIL_GAP_MS_MIN" "$TAIL_GAP_MS_MAX" --out "$out/tail/schedule-s$seed.txt"
  done
}

write_setup() {
  {
    echo "started $(date -Is) on $(uname -n), $(nproc) cores; build $build${baseline:+; baseline build $baseline}"
    echo "train.py ${train_args[*]}"
    echo "seeds 1..$seeds, conditions ${conds[*]}, back-ends ${backends[*]}, quick $quick, MTU $mtu"
    if [[ " ${conds[*]} " == *" tail "* ]]; then
      echo "tail: ${TAIL_RATE_MIN}-${TAIL_RATE_MAX} mbit for ${TAIL_MS_MIN}-${TAIL_MS_MAX} ms" \
        "every ${TAIL_GAP_MS_MIN}-${TAIL_GAP_MS_MAX} ms, on the training clock; schedules" \
        "tail/schedule-s<seed>.txt (scripts/train/tail.py draw --seed <seed>)"
    fi
  } | tee "$out/setup.txt"
}

if ((dry_run)); then
  write_setup
  if [[ " ${conds[*]} " == *" tail "* ]]; then
    draw_schedules
    for ((seed = 1; seed <= seeds; seed++)); do
      echo "tail seed $seed: $(grep -vc '^#' "$out/tail/schedule-s$seed.txt") cuts in" \
        "$out/tail/schedule-s$seed.txt, the first: $(grep -m1 -v '^#' "$out/tail/schedule-s$seed.txt")"
    done
  fi
  for cond in "${conds[@]}"; do
    for ((seed = 1; seed <= seeds; seed++)); do
      for ((k = 0; k < ${#backends[@]}; k++)); do
        echo "would run: $cond seed $seed ${backends[(k + seed - 1) % ${#backends[@]}]}"
      done
    done
  done
  exit 0
fi

tail_pid='' job='' cojob=''
# The job runs in the background and the script waits for it, so that SIGTERM or Ctrl-C reach
# this script at once (bash runs traps only between commands), and mpirun.sh gets to clean up.
cleanup() {
  local j
  for j in $job $cojob; do
    kill -TERM "$j" 2>/dev/null || true
    wait "$j" 2>/dev/null || true
  done
  stop_tail
  "$cloud/down.sh" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The applier of one run: waits for train.py to create its clock file (when the training clock
# starts), applies the seed's schedule on that clock, and stops at the clock's end line or at
# stop_tail's SIGTERM, which it acts on once the set.sh in progress, if any, is over (and then
# lifts the cut in place): no set.sh is left running behind stop_tail's restore.
start_tail() { # schedule run-base
  rm -f "$2.clock" "$2.events" "$2.schedule"
  "$python" "$here/tail.py" apply --schedule "$1" --clock "$2.clock" --events "$2.events" \
    --copy "$2.schedule" --set "$cloud/set.sh" --base-rate 1gbit &
  tail_pid=$!
}

# Stops the applier (even in the middle of a cut) and puts every link back to 1gbit.
stop_tail() {
  local status=0
  [[ -n $tail_pid ]] || return 0
  kill "$tail_pid" 2>/dev/null || true
  wait "$tail_pid" 2>/dev/null || status=$?
  tail_pid=''
  ((status == 0)) || echo "   the tail applier failed (exit $status): see the run's .events" >&2
  "$cloud/set.sh" --rate 1gbit >/dev/null
}

bring_up() { # condition
  local loss=0
  if [[ $1 == loss ]]; then loss=0.01; fi
  "$cloud/up.sh" "$hosts" --rate 1gbit --loss "$loss" --mtu "$mtu"
}

run_count=0
# Starts one training job in the background: the back-end's environment and options, its
# output under BASE.{log,csv}.
start_job() { # backend seed label base [train.py options...]
  local backend=$1 seed=$2 label=$3 base=$4 env=() extra=()
  shift 4
  run_count=$((run_count + 1))
  case $backend in
    native) ;;
    # The codec is set for every bounded back-end, fp32 included: an OPTIREDUCE_CODEC left in
    # the caller's environment (mpirun.sh passes OPTIREDUCE_* on) must not turn "bounded" into
    # a codec run under the wrong name.
    bounded|bounded-bf16|bounded-int8|bounded-carry|bounded-bf16-carry|bounded-int8-carry)
      local codec=fp32 carry=0 kind=${backend%-carry}
      if [[ $backend == *-carry ]]; then carry=1; fi
      if [[ $kind == bounded-* ]]; then codec=${kind#bounded-}; fi
      env=(LD_PRELOAD="$lib" OPTIREDUCE_MODE=bounded OPTIREDUCE_CODEC="$codec" OPTIREDUCE_CARRY="$carry"
           OPTIREDUCE_STATS=1) ;;
    exact) env=(LD_PRELOAD="$lib" OPTIREDUCE_MODE=exact OPTIREDUCE_STATS=1) ;;
    baseline) env=(LD_PRELOAD="$base_lib" OPTIREDUCE_MODE=bounded OPTIREDUCE_STATS=1) ;;
    gloo|gloo-fp16)
      extra=(--backend gloo --master-addr 10.77.0.10 --master-port $((29500 + run_count))
             --gloo-ifname eth0)
      if [[ $backend == gloo-fp16 ]]; then extra+=(--wire-dtype fp16); fi ;;
  esac
  env "${env[@]}" "$cloud/mpirun.sh" "$hosts" --timeout "$limit" -- "$python" "$here/train.py" \
    "${train_args[@]}" "${extra[@]}" "$@" --seed "$seed" --label "$label" \
    --csv "$base.csv" >"$base.log" 2>&1 &
}

# Waits for a job started by start_job and records it: its stats and RESULT line.
record_job() { # pid condition seed label base t0
  local status=0 result
  wait "$1" || status=$?
  grep '^optireduce\[0\] stats:' "$5.log" >"$5.stats" || true
  if result=$(grep -m1 '^RESULT ' "$5.log"); then
    echo "$2 $result" >>"$out/results.txt"
    echo "   $4 seed $3: $(summary_of "$result") ($((SECONDS - $6)) s)"
  else
    echo "   $4 seed $3: FAILED (exit $status, $((SECONDS - $6)) s), see $5.log"
    echo "$2 FAILED $4 $3 exit=$status" >>"$out/results.txt"
  fi
}

run_one() { # condition seed backend
  local cond=$1 seed=$2 backend=$3 base cobase clock=() t0=$SECONDS
  base=$out/$cond/$backend-s$seed
  if [[ $cond == tail ]]; then
    start_tail "$out/tail/schedule-s$seed.txt" "$base"
    clock=(--clock-file "$base.clock")
  fi
  start_job "$backend" "$seed" "$backend" "$base" "${clock[@]}"
  job=$!
  if [[ $cond == cotenant ]]; then
    # The co-tenant: the same training with another seed, started at the same moment.
    cobase=$out/$cond/$backend-cotenant-s$seed
    start_job "$backend" $((seed + 100)) "$backend-cotenant" "$cobase"
    cojob=$!
  fi
  record_job "$job" "$cond" "$seed" "$backend" "$base" "$t0"
  job=''
  if [[ -n $cojob ]]; then
    record_job "$cojob" "$cond" "$seed" "$backend-cotenant" "$cobase" "$t0"
    cojob=''
  fi
  stop_tail
  "$cloud/stats.sh" >"$base.net" 2>&1 || true
}

summary_of() { # RESULT line -> a few numbers
  "$python" -c 'import json, sys
r = json.loads(sys.argv[1].split(" ", 1)[1])
f = lambda v, s: "-" if v is None else s % v
print("target %s s, acc %s, %d iters, iter p50 %s ms p99 %s ms, lost %s, spread %s, cpu %s s/step"
      " (machine %s, softirq %s)" % (
    f(r["time_to_target_s"], "%.1f"), f(r["final_acc"], "%.4f"), r["iters"],
    f(r["iter_ms_p50"], "%.0f"), f(r["iter_ms_p99"], "%.0f"), f(r["entries_lost_frac"], "%.2e"),
    f(r["checksum_spread"], "%.3g"), f(r.get("cpu_s_per_step"), "%.3f"),
    f(r.get("machine_cpu_s_per_step"), "%.3f"), f(r.get("softirq_s_per_step"), "%.3f")))' "$1"
}

write_setup
if [[ " ${conds[*]} " == *" tail "* ]]; then draw_schedules; fi
for cond in "${conds[@]}"; do
  mkdir -p "$out/$cond"
  echo "== $cond"
  bring_up "$cond"
  for ((seed = 1; seed <= seeds; seed++)); do
    for ((k = 0; k < ${#backends[@]}; k++)); do
      run_one "$cond" "$seed" "${backends[(k + seed - 1) % ${#backends[@]}]}"
    done
  done
  "$cloud/down.sh"
done
# The tables and plots, so one command reproduces the whole of docs/results.md's section.
"$python" "$here/summarize-training.py" "$out" >/dev/null
echo "results in $out; tables and plots: $out/training.md, $out/*.png"
# Every back-end of a seed must have had the same tail: the same schedule, applied in order.
if [[ " ${conds[*]} " == *" tail "* ]]; then
  "$python" "$here/tail.py" check "$out/tail" --seeds "$seeds" \
    --backends "$(IFS=,; echo "${backends[*]}")" 2>&1 | tee "$out/tail/check.txt" ||
    { echo "the tail schedules differ between back-ends: see above" >&2; exit 1; }
fi
