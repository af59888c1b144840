// SPDX-License-Identifier: BSD-3-Clause
// How a bounded-mode chunk's floats travel in a datagram's payload: as they are (fp32), as bf16
// (codec/bf16_codec.hpp, half the bytes, rounded to nearest) or as int8 levels with one scale
// (codec/int8_codec.hpp, a quarter plus four, rounded stochastically so the sum stays unbiased).
// Pure functions over bytes; the engine picks the codec and the seeds.
#pragma once

#include "codec/simd.hpp"
#include "config/config.hpp"  // Codec: the knob's enum is the wire's

#include <cstddef>
#include <cstdint>

namespace optireduce {

// Bytes a chunk of n entries takes in a payload: fp32 4n; bf16 2n; int8 4 + n (a float32 scale,
// little-endian, then n int8 levels).
std::size_t coded_bytes(Codec c, std::size_t n);

// The most entries a payload of `payload_bytes` carries: bounded mode's entries per datagram.
// Not rounded to whole 16-float lines: chunks need not align with them (fp32's were never).
std::size_t entries_per_payload(Codec c, std::size_t payload_bytes);

// coded_bytes(c, n) bytes at `out` from n floats at `in`. `seed` feeds int8's stochastic
// rounding (give every chunk its own) and is ignored by the others.
void encode_chunk(Codec c, const float *in, std::size_t n, std::byte *out, std::uint64_t seed, Isa isa = best_isa());

// n floats at `out` from the coded_bytes(c, n) bytes at `in`, which may be anything (they come
// off the network): never reads beyond them, and an int8 chunk always decodes to finite floats
// (a non-finite or negative scale to zeros).
void decode_chunk(Codec c, const std::byte *in, std::size_t n, float *out, Isa isa = best_isa());

}  // namespace optireduce
