#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cloud-rate-change.sh: how fast bounded mode's adaptive deadline follows the network. Runs 1 MiB
# allreduces in bounded mode on the emulated cloud (4 hosts) while the link rate changes under
# the job: 1 Gbit/s, then 250 Mbit/s after 12 s, then 1 Gbit/s again 15 s later. Rank 0 prints one
# line per operation (test/bounded's `timeline` case: start ms, latency ms, entries lost, phases
# closed at the deadline) to OUTDIR/rate-change.txt; the wall-clock time of each change goes to
# OUTDIR/rate-change.events. Needs root.
#   usage: scripts/cloud-rate-change.sh OUTDIR [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
out=${1:?usage: cloud-rate-change.sh OUTDIR [BUILD_DIR]}
build=${2:-$here/../build}
cloud=$here/cloud
mkdir -p "$out"
trap '"$cloud/down.sh" >/dev/null 2>&1 || true' EXIT
"$cloud/up.sh" 4 --rate 1gbit >/dev/null
: >"$out/rate-change.events"
(
  sleep 12; echo "$(date +%s.%N) 250mbit" >>"$out/rate-change.events"; "$cloud/set.sh" --rate 250mbit >/dev/null
  sleep 15; echo "$(date +%s.%N) 1gbit" >>"$out/rate-change.events"; "$cloud/set.sh" --rate 1gbit >/dev/null
) &
changer=$!
LD_PRELOAD=$build/wrappers/liboptireduce.so OPTIREDUCE_MODE=bounded OPTIREDUCE_STATS=1 \
  CHECK_TIMELINE_FLOATS=262144 CHECK_TIMELINE_OPS=${OPS:-700} \
  "$cloud/mpirun.sh" 4 --timeout 300 -- "$build/test/bounded/optireduce_bounded_check" timeline \
  >"$out/rate-change.txt" 2>&1
wait "$changer" || true
grep -E "stats: (bounded|engine)" "$out/rate-change.txt"
