// SPDX-License-Identifier: BSD-3-Clause
// The bf16 wire codec (codec/bf16_codec.hpp): round to nearest, ties to even, on the bits; NaN
// stays NaN; every instruction set writes the scalar path's bytes; decoding is a shift.
#include "codec/bf16_codec.hpp"

#include "guarded_bytes.hpp"
#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace optireduce::bf16_codec {
namespace {

constexpr Isa kIsas[] = {Isa::scalar, Isa::avx2, Isa::avx512};
constexpr std::size_t kLengths[] = {0, 1, 15, 16, 17, 255, 1000, 4096 + 3};

float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

std::vector<std::byte> encoded(const std::vector<float> &x, Isa isa = Isa::scalar) {
    std::vector<std::byte> out(2 * x.size());
    encode(x.data(), x.size(), out.data(), isa);
    return out;
}

// Random bit patterns: every class of float (NaNs with any payload, subnormals, ties) turns up.
std::vector<float> random_bits(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<float> x(n);
    for (auto &v : x) v = from_bits(static_cast<std::uint32_t>(rng()));
    return x;
}

TEST(Bf16Codec, EveryInstructionSetWritesTheScalarBytes) {
    for (const std::size_t n : kLengths)
        for (unsigned variant = 0; variant < 2; ++variant) {
            const auto x = variant == 0 ? test::random_vector(n, 3) : random_bits(n, static_cast<unsigned>(n));
            const auto want = encoded(x);
            std::vector<float> want_out(n);
            decode(want.data(), n, want_out.data(), Isa::scalar);
            for (const Isa isa : kIsas) {
                if (!isa_supported(isa)) {
                    std::printf("%s: not on this CPU, not compared\n", to_string(isa));
                    continue;
                }
                EXPECT_EQ(encoded(x, isa), want) << to_string(isa) << " n=" << n;
                std::vector<float> got(n, -1.0f);
                decode(want.data(), n, got.data(), isa);
                if (n > 0) {
                    EXPECT_EQ(std::memcmp(got.data(), want_out.data(), n * sizeof(float)), 0) << to_string(isa);
                }
            }
        }
}

TEST(Bf16Codec, RoundsToNearestWithTiesToEven) {
    struct Case {
        std::uint32_t in;
        std::uint16_t want;
    };
    const Case cases[] = {
        {0x3f800000u, 0x3f80u},                          // 1.0: exact
        {0x3f807fffu, 0x3f80u},                          // just below the midpoint: down
        {0x3f808000u, 0x3f80u},                          // tie, kept part even: down
        {0x3f808001u, 0x3f81u},                          // just above: up
        {0x3f818000u, 0x3f82u},                          // tie, kept part odd: up to even
        {0xbf818000u, 0xbf82u},                          // the same, negative
        {0xbf808000u, 0xbf80u}, {0x3f7fffffu, 0x3f80u},  // carries into the exponent
        {0x00008000u, 0x0000u},                          // subnormal tie: to even (zero)
        {0x00018000u, 0x0002u},                          // subnormal tie, odd: up
        {0x7f7fffffu, 0x7f80u},                          // FLT_MAX rounds past bf16's largest: infinity
        {0x7f7f7fffu, 0x7f7fu},                          // below the midpoint: bf16's largest
        {0x7f800000u, 0x7f80u},                          // infinity stays
        {0xff800000u, 0xff80u}, {0x80000000u, 0x8000u},  // -0 stays
    };
    for (const Case &c : cases) EXPECT_EQ(from_float(from_bits(c.in)), c.want) << std::hex << c.in;
}

TEST(Bf16Codec, NanStaysNanOnEveryPath) {
    // Signalling NaNs whose payload lies only in the dropped bits: truncated, they would be
    // infinities.
    const std::vector<float> x = {from_bits(0x7f800001u), from_bits(0xff800001u), from_bits(0x7fc00000u),
                                  from_bits(0x7fffffffu), std::nanf("")};
    for (const Isa isa : kIsas) {
        const auto coded = encoded(std::vector<float>(x.begin(), x.end()), isa);
        std::vector<float> y(x.size());
        decode(coded.data(), x.size(), y.data(), isa);
        for (std::size_t i = 0; i < x.size(); ++i) {
            EXPECT_TRUE(std::isnan(y[i])) << i << to_string(isa);
            EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i])) << i;
        }
    }
    EXPECT_EQ(from_float(from_bits(0x7f800001u)), 0x7fc0u);
    EXPECT_EQ(from_float(from_bits(0xff800001u)), 0xffc0u);
}

// Half a unit in the last of bf16's 8 significant bits: 2^-8 of the number's power of two.
TEST(Bf16Codec, RoundTripRelativeErrorIsAtMostTwoToMinus8) {
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-125, 126);
    for (int k = 0; k < 200000; ++k) {
        const float x = std::ldexp(mantissa(rng), exponent(rng)) * (k % 2 ? -1.0f : 1.0f);
        if (std::fabs(x) > 0x1.fep127f) continue;  // may round past bf16's largest
        const float y = to_float(from_float(x));
        ASSERT_LE(std::fabs(static_cast<double>(y) - x), std::ldexp(std::fabs(static_cast<double>(x)), -8)) << x;
    }
}

TEST(Bf16Codec, NormalisedSquaredErrorOfGaussianDataIsAboutThreeMillionths) {
    const auto x = test::random_vector(100000, 6);
    double err = 0, norm = 0;
    for (const float v : x) {
        const double d = static_cast<double>(to_float(from_float(v))) - v;
        err += d * d;
        norm += static_cast<double>(v) * v;
    }
    std::printf("bf16 NMSE %.3g\n", err / norm);
    EXPECT_LT(err / norm, 4e-6);
}

TEST(Bf16Codec, DecodeIsTheBitsShiftedUp) {
    std::vector<std::byte> in(2 * 65536);
    for (std::uint32_t b = 0; b < 65536; ++b) {
        in[2 * b] = static_cast<std::byte>(b & 0xffu);
        in[2 * b + 1] = static_cast<std::byte>(b >> 8);
    }
    for (const Isa isa : kIsas) {
        std::vector<float> y(65536);
        decode(in.data(), y.size(), y.data(), isa);
        for (std::uint32_t b = 0; b < 65536; ++b)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(y[b]), b << 16) << to_string(isa);
    }
}

TEST(Bf16Codec, NoPathTouchesAByteBeyondTheChunk) {
    for (const std::size_t n : kLengths)
        for (const Isa isa : kIsas) {
            const auto x = test::random_vector(n, 8);
            test::GuardedBytes in(n * sizeof(float)), coded(2 * n), out(n * sizeof(float));
            in.fill(x.data());
            encode(in.floats(), n, coded.data(), isa);
            decode(coded.data(), n, out.floats(), isa);
            if (n > 0) {
                EXPECT_EQ(std::memcmp(coded.data(), encoded(x).data(), coded.size()), 0) << to_string(isa) << n;
            }
        }
}

}  // namespace
}  // namespace optireduce::bf16_codec
