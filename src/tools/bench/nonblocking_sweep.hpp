// --nonblocking: every size of the plan in both modes through MPI_Iallreduce, one table row per
// size, as OSU's osu_iallreduce reports it.
#pragma once

#include "library_probe.hpp"
#include "options.hpp"

#include <mpi.h>

namespace optireduce::bench {

// Collective. Returns the process exit status: 0, or 1 when validation failed or the CSV could
// not be written.
int run_nonblocking_sweep(const Options& options, const LibraryProbe& library, MPI_Comm comm);

} // namespace optireduce::bench
