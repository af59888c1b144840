// SPDX-License-Identifier: BSD-3-Clause
// What one operation of a communicator did, as the public C API reports it
// (optireduce_last_op in include/optireduce/optireduce.h). This rank's view only: no number
// here needed a message beyond the operation's own datagrams.
#pragma once

#include <cstdint>

namespace optireduce {

enum class OpPath { bounded = 0, reliable = 1, exact = 2 };

struct OpReport {
    std::uint64_t ops = 0;       // engine operations on the communicator so far
    std::uint64_t count = 0;     // floats
    std::uint64_t expected = 0;  // entries this rank expected in both phases
    std::uint64_t lost = 0;      // ... and estimated instead
    double error_estimate = 0;   // estimated ||result - exact|| / ||result||
    double drift_estimate = 0;   // the part of it this rank alone has (phase-2 fills)
    bool hadamard = false;
    bool excess = false;  // lost / expected > OPTIREDUCE_MAX_LOSS (on any rank where agreed)
    OpPath path = OpPath::bounded;
    double loss() const { return expected ? static_cast<double>(lost) / static_cast<double>(expected) : 0; }
};

}  // namespace optireduce
