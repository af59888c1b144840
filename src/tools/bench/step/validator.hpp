// SPDX-License-Identifier: BSD-3-Clause
// The -c check: every result against PMPI_Allreduce of the same inputs. Both modes are checked,
// the native one too, so the untimed work between calls is the same in both columns.
#pragma once

#include <mpi.h>

#include <span>
#include <vector>

namespace optireduce::bench {

struct ValidationResult {
    double max_error = 0;  // worst |result - reference| over all calls, elements and ranks
    double tolerance = 0;
    bool pass() const { return max_error <= tolerance; }
};

class Validator {
public:
    // Collective: computes the reference sum and the tolerance for these inputs.
    Validator(std::span<const float> input, MPI_Comm comm);

    // Local and cheap enough to run after every call.
    void check(std::span<const float> result);

    // Collective: the worst error seen on any rank.
    ValidationResult finish(MPI_Comm comm) const;

private:
    std::vector<float> reference_;
    double tolerance_ = 0;
    double worst_ = 0;
};

}  // namespace optireduce::bench
