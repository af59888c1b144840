// The randomized Hadamard transform of DESIGN.md section 6 (issue "Accuracy under loss"): random
// signs, then an orthonormal fast Walsh-Hadamard transform, on power-of-two blocks. Pure math;
// not wired into the engine yet.
//
// Signs come from a counter-based hash of (job seed, communicator, sequence, block, index), so
// every rank computes the same ones without storing or exchanging a table, and they are fresh
// every operation. The transform is orthonormal (scaled by 1/sqrt(n)), so it is its own inverse
// and preserves the norm: a lost coordinate in the transformed domain becomes noise of the same
// energy spread over the whole block.
#pragma once

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

// x[i] = -x[i] where the sign bit of element i of `block` is set (n elements, any n).
void apply_signs(float *x, std::size_t n, const SignKey &key, std::uint64_t block);

// Orthonormal fast Walsh-Hadamard transform in place; n must be a power of two. The vector
// path, when the CPU has one, does the same additions in the same order as the scalar one, so
// both give the same bits.
void fwht(float *x, std::size_t n);
void fwht_scalar(float *x, std::size_t n);

// Which fwht() runs on this CPU: "avx2" or "scalar".
const char *fwht_kernel();

// Forward: signs, then the transform. Inverse: the transform, then the same signs.
void forward(float *x, std::size_t n, const SignKey &key, std::uint64_t block);
void inverse(float *x, std::size_t n, const SignKey &key, std::uint64_t block);

}  // namespace optireduce::hadamard
