// The per-job summary written at MPI_Finalize (OPTIREDUCE_STATS, OPTIREDUCE_STATS_FILE).
#pragma once

#include "config/config.hpp"

namespace optireduce {

// Collective over MPI_COMM_WORLD (every rank calls it from its finalize hook, whatever its own
// settings), so rank 0 can report job totals. Rank 0 prints and/or writes the JSON file.
void write_job_summary(const Config &config, int world_rank);

}  // namespace optireduce
