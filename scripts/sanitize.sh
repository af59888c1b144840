#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Sanitizer runs (CI runs them after scripts/test.sh); any report fails the run.
#
# ThreadSanitizer: builds build-tsan/ with -DOPTIREDUCE_SANITIZE=thread and runs the tests where
# our threads meet: the unit and engine tests, and the Open MPI jobs that run the engine's
# progress thread, several threads calling MPI_Allreduce at once, or more than one channel (the
# ranks exit 66 on a race); test/sanitizers/tsan.supp silences races inside MPI and libfabric
# only. About 2 minutes on 2 cores (docs/reliability.md#ci); TSan slows the code 5-15x, so the long
# tests stay out.
#
# AddressSanitizer + UndefinedBehaviorSanitizer: builds build-asan/ with
# -DOPTIREDUCE_SANITIZE=address+undefined and runs the whole suite but the slow label (the
# 64 MiB, stress and 10,000-operation cases), the install tests and train_smoke (they build or
# launch programs outside ctest's sanitizer preload, which ASan refuses to start: the runtime
# must come first) and valgrind (reported skipped in a sanitized build). An ASan report exits 67,
# a UBSan one aborts; no suppressions. About 10 minutes on 2 cores (docs/reliability.md#ci).
#
#   scripts/sanitize.sh                      # both
#   scripts/sanitize.sh thread               # one of them
#   scripts/sanitize.sh address -R bounded   # one, with a ctest selection of your own
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

# Builds $1 with -DOPTIREDUCE_SANITIZE=$2 and any further cmake arguments; with a list in
# $wanted, only those targets (the ones this tree has).
configure_and_build() {
  local build=$1 sanitizer=$2
  shift 2
  cmake -S . -B "$build" -DOPTIREDUCE_SANITIZE="$sanitizer" -DOPTIREDUCE_WERROR=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  if ((${#wanted[@]})); then
    local have targets=()
    have=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
    for t in "${wanted[@]}"; do
      if grep -qx "$t" <<<"$have"; then targets+=("$t"); fi
    done
    cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
  else
    cmake --build "$build" -j "$(nproc)"
  fi
}

run() {
  echo "== sanitize.sh: ctest $*"
  ctest -N "$@" | sed -n 's/^ *Test *#[0-9]*: /   /p'
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ctest --output-on-failure "$@"
}

thread_run() {
  # MPICH's busy-polling progress loop runs for minutes once instrumented; its library is left out.
  # Only the programs the tests below run: the tools and the other check programs would double
  # the build.
  wanted=(optireduce optireduce_unit_tests optireduce_router_test optireduce_udp_channel_test
          optireduce_inflight_check optireduce_check_ompi optireduce_bounded_check
          optireduce_requests_ompi optireduce_device_check optireduce_fake_cuda optireduce_fake_cuda_mpi)
  configure_and_build build-tsan thread -DOPTIREDUCE_BUILD_MPICH=OFF
  cd build-tsan
  if (($#)); then
    run "$@"
    return
  fi
  # Left out of the unit tests: single-threaded number crunching that takes minutes under TSan
  # and has no thread to race (the codec's exhaustive round trips), and the tools' tests, whose
  # programs are not built here.
  local heavy='^(tools\.|unit\.BlockLayout\.RoundTripForEverySize|unit\.Spreading\.BurstyLoss|unit\.Hadamard\.ForwardThenInverse|unit\.Estimators\.PartialSumIsUnbiased)'
  # Open MPI jobs, one per kind of concurrency in the engine: exact mode over the default and the
  # tcp provider, the shm channel, the finalize summary; two threads per rank in bounded
  # allreduces (MPI_THREAD_MULTIPLE) over the kernel and the libfabric datagram channel, with
  # their progress thread and 2% loss; two operations in flight on one communicator; and every
  # test whose name says thread or multiple (nonblocking requests included); GPU buffers staged on
  # the executor thread (on the fake CUDA driver). Bounded tests that time calls against a pinned
  # deadline or bound the loss (requests_bounded) are left out: TSan alone slows the ranks enough
  # to miss deadlines.
  local mpi='^(mpi\.ompi\.np3\.(correctness|provider_tcp|bounded_one_node_uses_shm|stats)|mpi\.ompi\..*(thread|multiple).*|bounded\.(udp\.)?np3\.threads|engine_inflight_np3|device\.np2\.iallreduce)$'
  local status=0
  run -L unit -E "$heavy" -j "$(nproc)" || status=1
  run -R "$mpi" || status=1
  return "$status"
}

address_run() {
  wanted=()
  configure_and_build build-asan address+undefined
  cd build-asan
  if (($#)); then
    run "$@"
    return
  fi
  # Timing checks keep the library's promise (deadlines, straggler bound) and scale only their
  # slack for a loaded host (CHECK_SLACK_SCALE, test/bounded/check_util.h) by ASan's ~2-3x.
  CHECK_SLACK_SCALE=4 run -LE slow -E '^(install\.|train_smoke$)' -j "$(nproc)" --timeout 600
}

which=both
case "${1:-}" in
  thread|address) which=$1; shift ;;
esac
status=0
if [ "$which" != address ]; then (thread_run "$@") || status=1; fi
if [ "$which" != thread ]; then (address_run "$@") || status=1; fi
exit "$status"
