// SPDX-License-Identifier: BSD-3-Clause
// Input data and the accuracy check of -c.
#pragma once

#include <span>

namespace optireduce::bench {

// Deterministic pseudo-random floats in [-1, 1), different on every rank, identical across runs
// so a failing size can be reproduced.
void fill_inputs(std::span<float> out, int rank);

float max_magnitude(std::span<const float> values);

// Largest |got - want| over the elements; infinity when any element is NaN or infinite, so a
// result that went non-finite can never pass.
double max_abs_error(std::span<const float> got, std::span<const float> want);

}  // namespace optireduce::bench
