#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# demo.sh: from a fresh Debian 12 clone to a table of optireduce against the plain MPI.
#
# Installs what is missing, builds in build/, and runs optireduce-bench on 4 local ranks with
# liboptireduce preloaded. In that one job the bench times MPI_Allreduce (caught by the library)
# and PMPI_Allreduce (never caught) alternately per size, so one table shows both side by side.
# Arguments go to optireduce-bench, e.g. `scripts/demo.sh -m 4:1M -c`; see
# `build/src/tools/bench/optireduce-bench --help`.
set -euo pipefail
cd "$(dirname -- "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"

# The bench and the library are both built for Open MPI, so use Open MPI's launcher even where
# the Debian alternatives point mpirun at MPICH.
launcher=$(command -v mpirun.openmpi || command -v mpirun) || {
  echo "demo.sh: mpirun not found (scripts/install-deps.sh installs openmpi-bin)" >&2
  exit 1
}
if [[ $(id -u) -eq 0 ]]; then
  # Open MPI refuses to start as root unless told twice.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
bench_args=()
# The ranks never see this terminal (mpirun gives them pipes), so ask for the progress line when
# the output goes to a person rather than a file.
[[ -t 1 ]] && bench_args+=(--progress)

# optireduce-run finds build/wrappers/liboptireduce.so and passes LD_PRELOAD (and any
# OPTIREDUCE_* settings of this shell) to the ranks. --oversubscribe: 4 ranks may exceed the cores.
exec scripts/optireduce-run "$launcher" --oversubscribe -np 4 \
  build/src/tools/bench/optireduce-bench "${bench_args[@]}" "$@"
