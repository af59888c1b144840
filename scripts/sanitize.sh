#!/usr/bin/env bash
# ThreadSanitizer run (CI runs it after scripts/test.sh): builds build-tsan/ with
# -DOPTIREDUCE_SANITIZE=thread and runs the tests where our threads meet: the unit and engine
# tests, and the Open MPI jobs that run the engine's progress thread, several threads calling
# MPI_Allreduce at once, or more than one channel. Any race report fails the run (the ranks exit
# 66); test/sanitizers/tsan.supp silences races inside MPI and libfabric only. Extra arguments
# replace that subset with a ctest selection of your own, e.g.
#   scripts/sanitize.sh -R bounded.np3.threads
# About 8 minutes on 2 cores; TSan slows the code 5-15x, so the long tests stay out.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

build=build-tsan
# MPICH's busy-polling progress loop runs for minutes once instrumented; its library is left out.
cmake -S . -B "$build" -DOPTIREDUCE_SANITIZE=thread -DOPTIREDUCE_WERROR=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTIREDUCE_BUILD_MPICH=OFF
# Only the programs the tests below run (those this tree has): the tools and the other check
# programs would double the build.
wanted=(optireduce optireduce_unit_tests optireduce_router_test optireduce_udp_channel_test
        optireduce_inflight_check optireduce_check_ompi optireduce_bounded_check
        optireduce_requests_ompi)
have=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
targets=()
for t in "${wanted[@]}"; do
  if grep -qx "$t" <<<"$have"; then targets+=("$t"); fi
done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
cd "$build"

run() {
  echo "== sanitize.sh: ctest $*"
  ctest -N "$@" | sed -n 's/^ *Test *#[0-9]*: /   /p'
  ctest --output-on-failure "$@"
}

if (($#)); then
  run "$@"
  exit
fi

# Left out of the unit tests: single-threaded number crunching that takes minutes under TSan
# and has no thread to race (the codec's exhaustive round trips), and the tools' tests, whose
# programs are not built here.
heavy='^(tools\.|unit\.BlockLayout\.RoundTripForEverySize|unit\.Spreading\.BurstyLoss|unit\.Hadamard\.ForwardThenInverse|unit\.Estimators\.PartialSumIsUnbiased)'
# Open MPI jobs, one per kind of concurrency in the engine: exact mode over the default and the
# tcp provider, the shm channel, the finalize summary; two threads per rank in bounded
# allreduces (MPI_THREAD_MULTIPLE) over the kernel and the libfabric datagram channel, with
# their progress thread and 2% loss; two operations in flight on one communicator; and every
# test whose name says thread or multiple (nonblocking requests included). Bounded tests that
# time calls against a pinned deadline or bound the loss (requests_bounded) are left out: TSan
# alone slows the ranks enough to miss deadlines.
mpi='^(mpi\.ompi\.np3\.(correctness|provider_tcp|bounded_one_node_uses_shm|stats)|mpi\.ompi\..*(thread|multiple).*|bounded\.(udp\.)?np3\.threads|engine_inflight_np3)$'

status=0
run -L unit -E "$heavy" -j "$(nproc)" || status=1
run -R "$mpi" || status=1
exit "$status"
