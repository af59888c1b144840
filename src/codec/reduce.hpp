// SPDX-License-Identifier: BSD-3-Clause
// Reduction kernels for the engine. Pure functions over spans; no MPI, no fabric.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>
#include <span>

namespace optireduce {

// dst[i] = sum over k of srcs[k][i], adding in the order of srcs so every run (and every rank
// that computes the same chunk) gets the same bits, whatever `isa`. dst may alias srcs[0].
void sum_in_order(std::span<const float *const> srcs, float *dst, std::size_t n, Isa isa = best_isa());

}  // namespace optireduce
