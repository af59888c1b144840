// SPDX-License-Identifier: BSD-3-Clause
// --threads N: every size of the plan with N threads per rank, each calling allreduce on its own
// duplicate of the communicator at the same time, against native and against one thread.
#pragma once

#include "bench/support/library_probe.hpp"
#include "bench/support/options.hpp"

#include <mpi.h>

namespace optireduce::bench {

// Collective; needs MPI_THREAD_MULTIPLE. Returns the process exit status: 0, or 1 when validation
// failed or the CSV could not be written.
int run_threads_sweep(const Options &options, const LibraryProbe &library, MPI_Comm comm);

}  // namespace optireduce::bench
