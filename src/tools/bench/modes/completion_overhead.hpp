// SPDX-License-Identifier: BSD-3-Clause
// --completion-overhead: what the library costs the completion calls of ordinary requests
// (MPI_Test, MPI_Wait, MPI_Testall, MPI_Waitall), which it intercepts to complete its own
// MPI_Iallreduce requests. Every program that waits on a point-to-point request pays it, so the
// budget is that of a passed-through call: 50 ns.
#pragma once

#include "bench/support/library_probe.hpp"
#include "bench/support/options.hpp"

#include <mpi.h>

namespace optireduce::bench {

// Collective (each rank measures on its own; the figures are averaged over ranks). Returns the
// process exit status.
int run_completion_overhead(const Options &options, const LibraryProbe &library, MPI_Comm comm);

}  // namespace optireduce::bench
