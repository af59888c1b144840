#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Soak run: 4 local ranks with the library preloaded, SECONDS (default 3600) of mixed eligible,
# ineligible, nonblocking and communicator-churn calls under 1% injected datagram loss, ranks
# stalling 0.2-1.5 s at random (test/soak/soak_check.c says what is checked). Prints the resource
# curve (rank 0's RSS and open fds, ten samples) and each rank's summary; exits non-zero on any
# wrong result, call past its deadline allowance, memory or fd growth, or a hang (the run is
# killed at SECONDS + 10 minutes). CI runs the 2-minute version (ctest soak.np4.2min).
#   scripts/soak.sh            # one hour
#   scripts/soak.sh 600        # ten minutes
# Uses build-test/ (what scripts/test.sh builds), building what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
build=${OPTIREDUCE_SOAK_BUILD:-build-test}

scripts/install-deps.sh
cmake -S . -B "$build" -DOPTIREDUCE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target optireduce optireduce_soak_check >/dev/null

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$build/soak-$seconds.log
echo "soak.sh: $seconds s, 4 ranks, log in $log"
status=0
timeout $((seconds + 600)) mpirun --oversubscribe -np 4 \
  -x LD_PRELOAD="$PWD/$build/wrappers/liboptireduce.so" -x OPTIREDUCE_MIN_BYTES=0 -x OPTIREDUCE_STATS=1 \
  -x OPTIREDUCE_DGRAM_PROVIDER=kernel -x OPTIREDUCE_FAULT_DROP=0.01 -x OPTIREDUCE_FAULT_SEED=41 \
  -x OPTIREDUCE_TIMEOUT_MS=100 -x OPTIREDUCE_STRAGGLER_MAX_MS=300 -x CHECK_SOAK_SECONDS="$seconds" \
  "$build/test/soak/optireduce_soak_check" soak >"$log" 2>&1 || status=$?
grep -E "^(soak|FAIL|PASS)" "$log" || true
[ "$status" = 124 ] && echo "soak.sh: FAIL: still running $((seconds + 600)) s after the start (a hang)"
exit "$status"
