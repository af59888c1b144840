// SPDX-License-Identifier: BSD-3-Clause
#include "bench/step/validator.hpp"

#include "bench/step/data.hpp"

#include <algorithm>

namespace optireduce::bench {

Validator::Validator(std::span<const float> input, MPI_Comm comm) : reference_(input.size()) {
    PMPI_Allreduce(input.data(), reference_.data(), static_cast<int>(input.size()), MPI_FLOAT, MPI_SUM, comm);
    // The scale is the sum over ranks of each rank's largest |x|, not the per-element sum: an
    // orthonormal transform (the engine's Hadamard step) spreads rounding error across a block,
    // so an element whose inputs happen to be near zero still carries error of the block's size.
    // 1e-6 of it is several float ulps of a 4-rank sum yet far below any lost contribution.
    double local_scale = max_magnitude(input);
    double scale = 0;
    PMPI_Allreduce(&local_scale, &scale, 1, MPI_DOUBLE, MPI_SUM, comm);
    tolerance_ = 1e-6 * scale;
}

void Validator::check(std::span<const float> result) { worst_ = std::max(worst_, max_abs_error(result, reference_)); }

ValidationResult Validator::finish(MPI_Comm comm) const {
    ValidationResult out;
    out.tolerance = tolerance_;
    PMPI_Allreduce(&worst_, &out.max_error, 1, MPI_DOUBLE, MPI_MAX, comm);
    return out;
}

}  // namespace optireduce::bench
