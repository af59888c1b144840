#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libFuzzer run of the network-facing code (CI runs it after the tests): builds the targets in
# test/fuzz/ with clang (-fsanitize=fuzzer,address,undefined) into build-fuzz/, replays the
# committed corpus (test/fuzz/corpus/<target>, every input a regression test), then fuzzes each
# target for SECONDS (default 60) starting from a copy of it. Any crash, sanitizer report,
# broken invariant (the targets abort), input that runs past 10 s, or allocation past the limits
# below fails the run; libFuzzer leaves the input that did it as build-fuzz/crash-*.
#   scripts/fuzz.sh            # replay + 60 s per target
#   scripts/fuzz.sh 600        # a longer run
#   scripts/fuzz.sh --replay   # the corpus only (what ctest's fuzz.* tests run)
# New inputs that reach new code are left in build-fuzz/corpus-<target>; to keep them, merge
# them into the committed corpus:
#   build-fuzz/<target> -merge=1 test/fuzz/corpus/<target> build-fuzz/corpus-<target>
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
replay_only=0
case "${1:-}" in
  --replay) replay_only=1 ;;
  "") ;;
  *) seconds=$1 ;;
esac
out=${OPTIREDUCE_FUZZ_BUILD:-build-fuzz}

[ "$replay_only" = 1 ] || scripts/install-deps.sh
for tool in clang++ pkg-config; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

# The router and what it links: the decoder, the queue budget's rule the repair answers keep to,
# the stats it counts into, the log it writes to (which reads its level from the configuration
# table), and the codecs that decode each payload as it is placed. No MPI: the targets drive the
# code as the network and the engine do.
router_sources=(src/engine/dgram/dgram_router.cpp src/engine/dgram/phase2_repair.cpp src/engine/dgram/scatter_repair.cpp src/engine/dgram/hole_votes.cpp src/engine/dgram/hole_ranges.cpp src/transport/wire_header.cpp
                src/engine/deadlines/queue_budget.cpp src/telemetry/stats.cpp src/telemetry/log.cpp src/telemetry/histogram.cpp src/config/config.cpp
                src/codec/wire_codec.cpp src/codec/int8_codec.cpp src/codec/bf16_codec.cpp src/codec/simd.cpp)
declare -A sources=(
  [wire_decode_fuzz]="src/transport/wire_header.cpp"
  [router_fuzz]="${router_sources[*]}"
)
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I src -I include $(pkg-config --cflags libfabric))
mkdir -p "$out"
status=0
for target in wire_decode_fuzz router_fuzz; do
  # shellcheck disable=SC2086
  clang++ "${flags[@]}" "test/fuzz/$target.cpp" ${sources[$target]} $(pkg-config --libs libfabric) \
    -o "$out/$target"
  corpus=test/fuzz/corpus/$target
  # Inputs: up to 4 KiB, each under 10 s, no single allocation over 64 MiB, the process under
  # 2 GiB (ASan's quarantine alone holds 256 MiB; the router's own bound on held datagrams is far
  # below what these inputs can send).
  limits=(-max_len=4096 -timeout=10 -malloc_limit_mb=64 -rss_limit_mb=2048 -artifact_prefix="$out/")
  echo "== fuzz.sh: $target: replaying $(ls "$corpus" | wc -l) corpus inputs"
  if ! "$out/$target" "${limits[@]}" -runs=0 "$corpus" >"$out/$target-replay.log" 2>&1; then
    tail -40 "$out/$target-replay.log"
    status=1
  fi
  grep -E "DONE" "$out/$target-replay.log" || true
  [ "$replay_only" = 1 ] && continue
  work=$out/corpus-$target
  mkdir -p "$work"
  cp -n "$corpus"/* "$work"/
  echo "== fuzz.sh: $target: fuzzing for $seconds s"
  if ! "$out/$target" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work" \
      >"$out/$target-fuzz.log" 2>&1; then
    tail -60 "$out/$target-fuzz.log"
    status=1
  fi
  grep -E "DONE|number_of_executed_units|new_units_added" "$out/$target-fuzz.log" || true
done
exit "$status"
