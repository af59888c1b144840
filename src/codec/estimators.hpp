// What bounded mode puts where data missed the deadline (DESIGN.md section 6). Pure functions.
#pragma once

#include <cstddef>

namespace optireduce {

// Phase 1: `sum` holds the sum of the `contributors` of N ranks whose chunk arrived. Scaling it
// by N / contributors makes it an unbiased estimate of the full sum when which contributions go
// missing does not depend on their values.
void rescale_partial_sum(float *sum, std::size_t n, int contributors, int ranks);

// Phase 2: a reduced chunk that never arrived is estimated by this rank's own contribution
// times N (its gradient is an unbiased estimate of the mean gradient).
void fill_from_own(const float *own, float *dst, std::size_t n, int ranks);

}  // namespace optireduce
