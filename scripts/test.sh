#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# README step 2: install what is missing, build with warnings as errors into build-test/, and run
# the whole suite (unit, MPI, install). Extra arguments go to ctest, e.g.
#   scripts/test.sh -L unit          only the unit tests
#   scripts/test.sh -LE slow         skip the long stress and 64 MiB runs
#   scripts/test.sh -R mpich         only the MPICH tests
# Exits non-zero if anything fails to build or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

build=build-test
cmake -S . -B "$build" -DOPTIREDUCE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)"

# The MPI tests are RUN_SERIAL (each job already oversubscribes the cores and runs alone), so -j
# only lets the millisecond-long unit tests overlap. The tests set the Open MPI run-as-root
# variables themselves.
cd "$build"
exec ctest --output-on-failure -j "$(nproc)" "$@"
