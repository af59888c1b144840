// SPDX-License-Identifier: BSD-3-Clause
// The bf16 wire codec: each float travels as its top 16 bits (sign, the full 8-bit exponent, 7
// mantissa bits), so a chunk takes half the bytes and keeps float's range.
//
// Rounding is to nearest, ties to even, not stochastic: the relative error is at most 2^-8 per
// entry (half a unit in the last of bf16's 8 significant bits; an NMSE near 3e-6 on Gaussian
// data), far below the noise of SGD, so its small bias does not matter; and it needs no random
// bits and gives the same bytes every time, as the bf16 compression hooks of the training
// frameworks do. A float that rounds past bf16's largest value becomes infinity (as any IEEE
// narrowing does); a NaN stays a NaN (quieted, sign and top payload bits kept), never an
// infinity.
//
// Integer arithmetic on the bits, so subnormals round like every other number and the scalar,
// AVX2 and AVX-512 paths (codec/simd.hpp) give the same bytes. Wire order little-endian, as
// everywhere in the project.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>
#include <cstdint>

namespace optireduce::bf16_codec {

// The bf16 bits of one float: what encode() writes for it.
std::uint16_t from_float(float x);
// The float of a bf16 (exact: bf16 is a subset of float).
float to_float(std::uint16_t b);

// 2n bytes at `out` from n floats at `in`.
void encode(const float *in, std::size_t n, std::byte *out, Isa isa = best_isa());
// n floats at `out` from the 2n bytes at `in`; any bytes are a valid input (some decode to
// infinities or NaNs, as the float bits would).
void decode(const std::byte *in, std::size_t n, float *out, Isa isa = best_isa());

}  // namespace optireduce::bf16_codec
