// SPDX-License-Identifier: BSD-3-Clause
// The per-job summary written at MPI_Finalize (OPTIREDUCE_STATS, OPTIREDUCE_STATS_FILE).
#pragma once

#include "config/config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace optireduce {

// What ran on one communicator, as its rank 0 recorded it at setup: the summary lists every
// communicator that reached the engine's setup (a float SUM call), once, whichever ranks it has.
struct CommSummary {
    int ranks = 0;
    std::string mode;      // OPTIREDUCE_MODE as it applied here
    std::string channel;   // "kernel", a libfabric provider, or "mpi" where the engine is off
    std::string codec;     // the wire format of its data
    std::string fallback;  // empty when the engine ran; else why the communicator went to MPI
    std::uint64_t calls = 0;  // engine calls on it (eligible calls, if it fell back: none)
};

// Collective over MPI_COMM_WORLD (every rank calls it from its finalize hook, whatever its own
// settings), so rank 0 can report job totals. Rank 0 prints and/or writes the JSON file. `comms`:
// the communicators this rank is rank 0 of; `unlisted`: those it had no room to record.
void write_job_summary(const Config &config, int world_rank, const std::vector<CommSummary> &comms,
                       std::uint64_t unlisted);

}  // namespace optireduce
