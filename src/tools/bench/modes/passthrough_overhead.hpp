// SPDX-License-Identifier: BSD-3-Clause
// --passthrough-overhead: what the library costs a call it does not take (Horovod issues a tiny
// integer allreduce every few milliseconds; the budget is 50 ns a call).
#pragma once

#include "bench/support/library_probe.hpp"
#include "bench/support/options.hpp"

#include <mpi.h>

namespace optireduce::bench {

// Collective. Returns the process exit status.
int run_passthrough_overhead(const Options &options, const LibraryProbe &library, MPI_Comm comm);

}  // namespace optireduce::bench
