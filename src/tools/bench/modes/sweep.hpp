// SPDX-License-Identifier: BSD-3-Clause
// The default run: every size of the plan in both modes, one table row per size.
#pragma once

#include "bench/support/library_probe.hpp"
#include "bench/support/options.hpp"

#include <mpi.h>

namespace optireduce::bench {

// Collective. Returns the process exit status: 0, or 1 when validation failed or the CSV could
// not be written.
int run_sweep(const Options &options, const LibraryProbe &library, MPI_Comm comm);

}  // namespace optireduce::bench
