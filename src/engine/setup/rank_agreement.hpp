// SPDX-License-Identifier: BSD-3-Clause
// How a collective agreement of the engine learns, in the same MPI_MAX reduction as the values
// it compares, whether any member failed and which (communicator setup, per-communicator hints).
#pragma once

#include <cstdint>

namespace optireduce {

// Encodes "rank r failed" so that MPI_MAX yields the lowest failing rank (0: nobody failed).
inline std::uint64_t failure_code(bool ok, int rank, int size) {
    return ok ? 0 : static_cast<std::uint64_t>(size - rank);
}
inline int failed_rank(std::uint64_t code, int size) { return size - static_cast<int>(code); }

}  // namespace optireduce
