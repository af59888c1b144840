// SPDX-License-Identifier: BSD-3-Clause
// The randomized Hadamard transform of bounded mode (docs/architecture.md, "Sharding and the
// transform"): random signs, then an orthonormal fast Walsh-Hadamard transform, on one
// power-of-two block. Pure math; codec/block_layout.hpp cuts a whole vector into blocks and lays
// them out for the wire.
//
// Signs come from a counter-based hash of (job seed, communicator, sequence, block, index), so
// every rank computes the same ones without storing or exchanging a table, and they are fresh
// every operation. The transform is orthonormal (scaled by 1/sqrt(n)), so it is its own inverse
// and preserves the norm: a lost coordinate in the transformed domain becomes noise of the same
// energy spread over the whole block.
//
// Every kernel has a scalar, an AVX2 and an AVX-512 path (codec/simd.hpp); all three do the same
// additions in the same order and give the same bits.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>
#include <cstdint>

namespace optireduce::hadamard {

struct SignKey {
    std::uint64_t seed = 0;
    std::uint32_t comm = 0;
    std::uint32_t seq = 0;
};

// 64 sign bits (1 = negate) for elements [64*word, 64*word + 64) of `block`.
std::uint64_t sign_word(const SignKey &key, std::uint64_t block, std::uint64_t word);

// dst[i] = -src[i] where the sign bit of element i of `block` is set, else src[i] (n elements,
// any n; dst may be src). Flipping the IEEE sign bit is exact and its own inverse.
void signed_copy(float *dst, const float *src, std::size_t n, const SignKey &key, std::uint64_t block,
                 Isa isa = best_isa());
inline void apply_signs(float *x, std::size_t n, const SignKey &key, std::uint64_t block, Isa isa = best_isa()) {
    signed_copy(x, x, n, key, block, isa);
}

// Orthonormal fast Walsh-Hadamard transform in place; n must be a power of two.
void fwht(float *x, std::size_t n, Isa isa = best_isa());
inline void fwht_scalar(float *x, std::size_t n) { fwht(x, n, Isa::scalar); }

// Which fwht() runs on this CPU: "avx512", "avx2" or "scalar".
inline const char *fwht_kernel() { return to_string(best_isa()); }

// Forward: signs, then the transform. Inverse: the transform, then the same signs.
void forward(float *x, std::size_t n, const SignKey &key, std::uint64_t block, Isa isa = best_isa());
void inverse(float *x, std::size_t n, const SignKey &key, std::uint64_t block, Isa isa = best_isa());

}  // namespace optireduce::hadamard
