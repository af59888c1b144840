// SPDX-License-Identifier: BSD-3-Clause
// The randomized Hadamard transform's math: orthonormal, its own inverse, vector and scalar
// kernels bit-identical, signs deterministic per (seed, communicator, sequence, block) and fresh
// across operations.
#include "codec/hadamard.hpp"

#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace optireduce::hadamard {
namespace {

using test::random_vector;

double norm(const std::vector<float> &v) {
    double s = 0;
    for (float x : v) s += static_cast<double>(x) * x;
    return std::sqrt(s);
}

TEST(Hadamard, TransformOfAUnitVectorIsFlat) {
    for (std::size_t n : {1u, 2u, 8u, 64u, 1024u}) {
        std::vector<float> v(n, 0.0f);
        v[0] = 1.0f;
        fwht(v.data(), n);
        for (float x : v) EXPECT_NEAR(x, 1.0 / std::sqrt(static_cast<double>(n)), 1e-6) << n;
    }
}

TEST(Hadamard, ForwardThenInverseReturnsTheInputAndKeepsTheNorm) {
    const SignKey key{42, 3, 17};
    for (std::size_t n = 1; n <= (1u << 22); n *= 2) {
        const auto orig = random_vector(n, static_cast<unsigned>(n));
        auto v = orig;
        forward(v.data(), n, key, 5);
        EXPECT_NEAR(norm(v), norm(orig), 1e-5 * norm(orig) + 1e-6) << n;
        inverse(v.data(), n, key, 5);
        double err = 0;
        for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(static_cast<double>(v[i]) - orig[i]));
        EXPECT_LE(err, 1e-5 * std::max(1.0, norm(orig) / std::sqrt(static_cast<double>(n))) * std::log2(2.0 * n))
            << "n=" << n;
    }
}

TEST(Hadamard, VectorKernelsMatchScalarBitForBit) {
    std::printf("best kernel on this CPU: %s\n", fwht_kernel());
    const SignKey key{3, 1, 4};
    for (Isa isa : {Isa::avx2, Isa::avx512}) {
        if (!isa_supported(isa)) {
            std::printf("%s: not on this CPU, not compared\n", to_string(isa));
            continue;
        }
        for (std::size_t n = 1; n <= (1u << 16); n *= 2) {
            auto a = random_vector(n, 7), b = a;
            fwht(a.data(), n, isa);
            fwht_scalar(b.data(), n);
            EXPECT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(float)), 0) << to_string(isa) << " n=" << n;
        }
        // Sign flips of every length, including partial 64-element words at the end.
        for (std::size_t n : {1u, 7u, 63u, 64u, 65u, 100u, 1000u, 4097u}) {
            const auto src = random_vector(n, 9);
            std::vector<float> a(n), b(n);
            signed_copy(a.data(), src.data(), n, key, 11, isa);
            signed_copy(b.data(), src.data(), n, key, 11, Isa::scalar);
            EXPECT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(float)), 0) << to_string(isa) << " n=" << n;
        }
    }
}

TEST(Hadamard, SignsAreDeterministicFreshPerOperationAndBalanced) {
    const SignKey k{1, 2, 3}, same{1, 2, 3}, next_op{1, 2, 4}, other_comm{1, 5, 3};
    EXPECT_EQ(sign_word(k, 0, 0), sign_word(same, 0, 0));  // what every rank computes
    EXPECT_NE(sign_word(k, 0, 0), sign_word(next_op, 0, 0));
    EXPECT_NE(sign_word(k, 0, 0), sign_word(other_comm, 0, 0));
    EXPECT_NE(sign_word(k, 0, 0), sign_word(k, 1, 0));
    EXPECT_NE(sign_word(k, 0, 0), sign_word(k, 0, 1));
    std::size_t negative = 0;
    const std::size_t n = 1 << 16;
    std::vector<float> v(n, 1.0f);
    apply_signs(v.data(), n, k, 9);
    for (float x : v) negative += x < 0;
    EXPECT_NEAR(static_cast<double>(negative) / n, 0.5, 0.01);
    apply_signs(v.data(), n, k, 9);  // its own inverse
    for (float x : v) EXPECT_EQ(x, 1.0f);
}

}  // namespace
}  // namespace optireduce::hadamard
