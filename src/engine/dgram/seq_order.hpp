// SPDX-License-Identifier: BSD-3-Clause
// The order of a communicator's operation sequence numbers. They are not wrapped on the wire but
// compared modulo 2^32, so a job that runs more than four billion operations on one communicator
// keeps working.
#pragma once

#include <cstdint>

namespace optireduce {

inline bool seq_before(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) < 0; }

}  // namespace optireduce
