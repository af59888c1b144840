// SPDX-License-Identifier: BSD-3-Clause
// Which MPI_Allreduce calls the engine takes (docs/usage.md, "What the engine takes over").
//
// The decision must come out the same on every rank, or one rank enters the engine while another
// calls PMPI and the job deadlocks. So it only looks at what MPI requires to match across ranks
// (op, predefined datatype, count) plus communicator facts and configuration that were agreed
// collectively at communicator setup. It never looks at buffer addresses, alignment, timing,
// the language binding or whether the large-count symbol was used.
#pragma once

#include <cstdint>

namespace optireduce {

// What the wrapper knows about one call, decoded from MPI handles.
struct CallFacts {
    bool op_is_sum = false;
    // The predefined MPI_FLOAT handle, or Fortran's MPI_REAL / MPI_REAL4 (4-byte reals, so
    // Fortran gradients get the same policy); never a derived type, even of floats.
    bool datatype_is_float = false;
    std::int64_t count = 0;
};

// What the engine knows about the communicator once it was set up collectively.
struct CommFacts {
    bool intracomm = false;
    int size = 0;
    bool engine_enabled = false;  // setup succeeded and configuration agreed on every rank
    std::uint64_t min_bytes = 0;  // agreed OPTIREDUCE_MIN_BYTES
    // The largest count the engine's channel can address on this communicator (exact mode's tag
    // has 20 bits of segment index per shard); larger calls (MPI_Allreduce_c) fall back.
    std::uint64_t max_count = UINT64_MAX;
};

enum class Route {
    passthrough,  // not a float SUM: the underlying MPI, untouched
    candidate,    // a float SUM whose communicator has not been set up yet
    fallback,     // a float SUM the engine does not take on this communicator (or too small)
    engine,       // the engine runs it
};

// Cheap first test, made before any communicator lookup: only float SUM calls can be eligible.
// Called on the pass-through path, so it must stay two comparisons.
constexpr bool is_float_sum(const CallFacts &c) { return c.op_is_sum && c.datatype_is_float; }

// Calls with count < 0 are erroneous: they go to the underlying MPI, which reports the error
// through the communicator's handler exactly as it would without the library.
constexpr Route decide(const CallFacts &c, const CommFacts &comm) {
    if (!is_float_sum(c) || c.count < 0) return Route::passthrough;
    if (!comm.intracomm || comm.size < 2) return Route::fallback;
    if (!comm.engine_enabled) return Route::fallback;
    if (static_cast<std::uint64_t>(c.count) * 4u < comm.min_bytes) return Route::fallback;
    if (static_cast<std::uint64_t>(c.count) > comm.max_count) return Route::fallback;
    return Route::engine;
}

}  // namespace optireduce
