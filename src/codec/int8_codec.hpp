// SPDX-License-Identifier: BSD-3-Clause
// The int8 wire codec: a chunk travels as one float32 scale (little-endian) and one int8 level
// per entry, a quarter of its fp32 bytes plus four. Levels are rounded stochastically, so a
// decoded entry is an unbiased estimate of the entry sent: the sum over ranks stays unbiased,
// which is what bounded mode promises for everything else it does to the data.
//
// Encode (m: the largest finite |x_i| of the chunk):
//   scale   = m / 127, inv = 127 / m   (float divisions, once per chunk)
//   level_i = clamp(floor(x_i * inv + u_i), -127, 127)   (a float multiply, then an add)
// with u_i uniform in [0, 1), so E[level_i] = x_i * inv and E[level_i * scale] = x_i, up to float
// rounding (about 2^-22 |x_i| + 2^-24 scale, from scale * inv != 1 and u's 2^-24 grid). The
// error of an entry is below one scale and its variance at most scale^2 / 4. -127 rather than
// -128 keeps the levels symmetric.
//   - NaN and infinite entries encode to level 0 and do not count towards m: one bad value must
//     not erase the rest of its chunk, and the engine cannot forward it anyway.
//   - m below 2^-119 (all zeros among them) gives scale 0 and all levels 0: below it 127 / m
//     would overflow or the scale be subnormal; values that small carry nothing for training.
//   - m above 127 * kMaxScale (within 0.8% of FLT_MAX) gives scale kMaxScale, and entries
//     beyond 127 * kMaxScale saturate at +-127: a decoded chunk is then finite whatever it is.
//
// u_i is a counter-based hash of (seed, i), i the entry's index in the chunk, with 24 of its
// bits making the float: no state, so every path computes it lane by lane and the scalar, AVX2
// and AVX-512 paths (codec/simd.hpp) give the same bytes. The caller gives every chunk of every
// rank and operation its own seed: a reused seed reuses the same u's, leaving each entry unbiased
// but the two chunks' errors correlated.
//
// Decode: level * scale (a float multiply). The bytes come off the network, so every pattern is
// valid input and decodes to finite floats: a scale that is negative (-0 included), NaN,
// infinite or above kMaxScale gives all zeros, and the level -128 (never sent) reads as -127.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace optireduce::int8_codec {

inline constexpr std::size_t kScaleBytes = 4;
inline constexpr int kMaxLevel = 127;
// The largest scale: 127 levels of it stay below FLT_MAX, whatever the bytes.
inline constexpr float kMaxScale = std::numeric_limits<float>::max() / 128.0f;

// u_i of the entry at index i of a chunk encoded with `seed`: a multiple of 2^-24 in [0, 1).
float uniform(std::uint64_t seed, std::uint32_t i);

// kScaleBytes + n bytes at `out` from n floats at `in` (n below 2^32: the counter is 32 bits).
void encode(const float *in, std::size_t n, std::byte *out, std::uint64_t seed, Isa isa = best_isa());
// n floats at `out` from the kScaleBytes + n bytes at `in`; reads no byte beyond them.
void decode(const std::byte *in, std::size_t n, float *out, Isa isa = best_isa());

}  // namespace optireduce::int8_codec
