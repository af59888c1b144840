// SPDX-License-Identifier: BSD-3-Clause
// The int8 wire codec (codec/int8_codec.hpp): every instruction set writes the scalar path's
// bytes, a decoded entry is within one scale of the input and unbiased over the seeds (which
// truncation or round-to-nearest would not be), the edge cases behave as documented, and any
// bytes off the network decode to finite floats without a read past the chunk.
#include "codec/int8_codec.hpp"

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

namespace optireduce::int8_codec {
namespace {

using test::random_vector;

constexpr Isa kIsas[] = {Isa::scalar, Isa::avx2, Isa::avx512};
constexpr std::size_t kLengths[] = {0, 1, 15, 16, 17, 255, 1000, 4096 + 3};
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<std::byte> encoded(const std::vector<float> &x, std::uint64_t seed, Isa isa = Isa::scalar) {
    std::vector<std::byte> out(kScaleBytes + x.size());
    encode(x.data(), x.size(), out.data(), seed, isa);
    return out;
}

std::vector<float> decoded(const std::vector<std::byte> &in, Isa isa = Isa::scalar) {
    std::vector<float> out(in.size() - kScaleBytes, -1.0f);
    decode(in.data(), out.size(), out.data(), isa);
    return out;
}

float scale_of(const std::vector<std::byte> &coded) {
    float s;
    std::memcpy(&s, coded.data(), sizeof s);
    return s;
}

// Normal data with the specials sprinkled in: signed zeros, NaNs, infinities, subnormals.
std::vector<float> with_specials(std::size_t n, unsigned seed) {
    std::vector<float> x = random_vector(n, seed);
    const float specials[] = {0.0f, -0.0f, std::nanf(""), kInf, -kInf, 1e-40f, -3e-39f};
    for (std::size_t i = 3; i < n; i += 7) x[i] = specials[(i / 7) % std::size(specials)];
    return x;
}

TEST(Int8Codec, EveryInstructionSetWritesTheScalarBytes) {
    for (const std::size_t n : kLengths)
        for (unsigned variant = 0; variant < 2; ++variant) {
            const auto x = variant == 0 ? random_vector(n, 7 + static_cast<unsigned>(n)) : with_specials(n, 11);
            const auto want = encoded(x, 1234 + n);
            const auto want_out = decoded(want);
            for (const Isa isa : kIsas) {
                if (!isa_supported(isa)) {
                    std::printf("%s: not on this CPU, not compared\n", to_string(isa));
                    continue;
                }
                EXPECT_EQ(encoded(x, 1234 + n, isa), want) << to_string(isa) << " n=" << n << " variant " << variant;
                const auto got = decoded(want, isa);
                if (n > 0) {
                    EXPECT_EQ(std::memcmp(got.data(), want_out.data(), n * sizeof(float)), 0)
                        << to_string(isa) << " n=" << n;
                }
            }
        }
}

TEST(Int8Codec, UniformIsOnTheTwoToMinus24GridAndHasMeanOneHalf) {
    double sum_over_i = 0, sum_over_seeds = 0;
    const int count = 100000;
    for (int k = 0; k < count; ++k) {
        const float u = uniform(99, static_cast<std::uint32_t>(k));
        ASSERT_GE(u, 0.0f);
        ASSERT_LT(u, 1.0f);
        ASSERT_EQ(u * 0x1p24f, std::floor(u * 0x1p24f));
        sum_over_i += u;
        sum_over_seeds += uniform(static_cast<std::uint64_t>(k), 5);
    }
    // The standard deviation of either mean is 1 / sqrt(12 count) = 0.0009.
    EXPECT_NEAR(sum_over_i / count, 0.5, 0.005);
    EXPECT_NEAR(sum_over_seeds / count, 0.5, 0.005);
}

TEST(Int8Codec, ScaleIsTheLargestMagnitudeOver127AndErrorsStayBelowOneScale) {
    const auto x = random_vector(1000, 3);
    float m = 0;
    for (float v : x) m = std::max(m, std::fabs(v));
    double abs_err = 0, sq_err = 0;
    const int seeds = 50;
    for (int seed = 0; seed < seeds; ++seed) {
        const auto coded = encoded(x, static_cast<std::uint64_t>(seed));
        const float scale = scale_of(coded);
        ASSERT_EQ(scale, m / 127.0f);
        const auto y = decoded(coded);
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double e = std::fabs(static_cast<double>(y[i]) - x[i]);
            ASSERT_LE(e, scale * (1 + 1e-6)) << "entry " << i;
            abs_err += e / scale;
            sq_err += e * e / (static_cast<double>(scale) * scale);
        }
    }
    // Per entry E|err| = 2 p (1 - p) scale <= scale / 2 and E[err^2] = p (1 - p) scale^2 <=
    // scale^2 / 4 (p: the fractional part of x / scale); over uniform p, 1/3 and 1/6.
    const double n = static_cast<double>(seeds) * static_cast<double>(x.size());
    std::printf("mean |error| %.4f scale, mean error^2 %.4f scale^2\n", abs_err / n, sq_err / n);
    EXPECT_LE(abs_err / n, 0.5);
    EXPECT_LE(sq_err / n, 0.25);
}

// Mean over entries of |mean over trials of the decoded entry - the entry|, in scales.
double mean_abs_bias(const std::vector<double> &sum, const std::vector<float> &x, int trials, float scale) {
    double bias = 0;
    for (std::size_t i = 0; i < x.size(); ++i) bias += std::fabs(sum[i] / trials - x[i]);
    return bias / static_cast<double>(x.size()) / scale;
}

// Unbiased, the mean of T decodings is off by noise of standard deviation at most
// scale / (2 sqrt(T)) per entry (sqrt(1/6) scale / sqrt(T) on average), whose mean absolute
// value is about 0.33 scale / sqrt(T). The bound allows 4 / sqrt(12) = 1.15 scale / sqrt(T):
// over 1000 entries that mean is far tighter than the factor 3.5. Truncation would leave a
// bias of about 0.5 scale, round-to-nearest 0.25 scale, whatever T.
TEST(Int8Codec, StochasticRoundingIsUnbiased) {
    const auto x = random_vector(1000, 17);
    const float scale = scale_of(encoded(x, 0));
    std::vector<double> sum(x.size(), 0.0);
    for (int t = 1; t <= 2000; ++t) {
        const auto y = decoded(encoded(x, 0x5eed0000u + static_cast<std::uint64_t>(t)));
        for (std::size_t i = 0; i < x.size(); ++i) sum[i] += y[i];
        if (t != 500 && t != 2000) continue;
        const double bias = mean_abs_bias(sum, x, t, scale), bound = 4.0 / std::sqrt(t) / std::sqrt(12.0);
        std::printf("%d trials: mean |bias| %.4f scale (bound %.4f)\n", t, bias, bound);
        EXPECT_LT(bias, bound) << t << " trials";
    }
}

TEST(Int8Codec, AllZerosAndTinyChunksEncodeToScaleZero) {
    for (const float v : {0.0f, -0.0f, 1e-37f, 0x1p-120f}) {
        const std::vector<float> x(37, v);
        const auto coded = encoded(x, 1);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(scale_of(coded)), 0u) << v;
        for (std::size_t i = kScaleBytes; i < coded.size(); ++i) EXPECT_EQ(coded[i], std::byte{0});
        for (float y : decoded(coded)) EXPECT_EQ(y, 0.0f);
    }
}

TEST(Int8Codec, OneHugeValueKeepsItsMagnitudeAndTheRestRoundToZeroOrOneLevel) {
    std::vector<float> x = random_vector(100, 5);
    x[40] = -1e30f;
    const auto coded = encoded(x, 9);
    const float scale = scale_of(coded);
    EXPECT_EQ(scale, 1e30f / 127.0f);
    const auto y = decoded(coded);
    EXPECT_NEAR(y[40], -1e30f, 1e30f * 1e-6f);
    for (std::size_t i = 0; i < y.size(); ++i)
        if (i != 40) {
            EXPECT_TRUE(y[i] == 0.0f || std::fabs(y[i]) == scale) << i << " " << y[i];
        }
}

TEST(Int8Codec, NonFiniteEntriesEncodeToZeroAndDoNotSetTheScale) {
    const std::vector<float> x = {1.0f, std::nanf(""), -2.0f, kInf, -kInf, 0.5f, -std::nanf("")};
    for (const Isa isa : kIsas) {
        const auto coded = encoded(x, 3, isa);
        EXPECT_EQ(scale_of(coded), 2.0f / 127.0f);
        const auto y = decoded(coded, isa);
        for (const std::size_t i : {1u, 3u, 4u, 6u}) EXPECT_EQ(y[i], 0.0f) << i;
        EXPECT_EQ(y[2], -127.0f * (2.0f / 127.0f));
    }
    const std::vector<float> bad = {std::nanf(""), kInf, -kInf};
    EXPECT_EQ(scale_of(encoded(bad, 3)), 0.0f);
}

TEST(Int8Codec, MagnitudesNearFloatMaxSaturateAtTheLargestScale) {
    const float big = std::numeric_limits<float>::max();
    const std::vector<float> x = {big, -big, 1.0f, big / 2};
    const auto coded = encoded(x, 4);
    EXPECT_EQ(scale_of(coded), kMaxScale);
    const auto y = decoded(coded);
    EXPECT_EQ(y[0], 127.0f * kMaxScale);
    EXPECT_EQ(y[1], -127.0f * kMaxScale);
    for (float v : y) EXPECT_TRUE(std::isfinite(v));
}

TEST(Int8Codec, AnyBytesDecodeToFiniteFloats) {
    std::mt19937 rng(8);
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<std::byte> in(kScaleBytes + 100);
        for (auto &b : in) b = static_cast<std::byte>(rng());
        for (const Isa isa : kIsas)
            for (float y : decoded(in, isa)) ASSERT_TRUE(std::isfinite(y)) << to_string(isa);
    }
}

TEST(Int8Codec, InvalidScalesDecodeToZerosAndLevelMinus128ReadsAsMinus127) {
    std::vector<std::byte> in(kScaleBytes + 40);
    for (std::size_t i = kScaleBytes; i < in.size(); ++i) in[i] = static_cast<std::byte>(0x80 + 3 * i);
    const float nan = std::nanf(""), big = std::nextafter(kMaxScale, kInf);
    for (const float s : {nan, -nan, kInf, -kInf, -1.0f, -0.0f, -1e-45f, big, std::numeric_limits<float>::max()}) {
        std::memcpy(in.data(), &s, sizeof s);
        for (const Isa isa : kIsas)
            for (float y : decoded(in, isa)) ASSERT_EQ(std::bit_cast<std::uint32_t>(y), 0u) << s << to_string(isa);
    }
    in[kScaleBytes] = std::byte{0x80};
    for (const float s : {kMaxScale, 1.0f, 1e-45f}) {
        std::memcpy(in.data(), &s, sizeof s);
        for (const Isa isa : kIsas) EXPECT_EQ(decoded(in, isa)[0], -127.0f * s) << s << to_string(isa);
    }
}

TEST(Int8Codec, NoPathTouchesAByteBeyondTheChunk) {
    for (const std::size_t n : kLengths)
        for (const Isa isa : kIsas) {
            const auto x = random_vector(n, 21);
            test::GuardedBytes in(n * sizeof(float)), coded(kScaleBytes + n), out(n * sizeof(float));
            in.fill(x.data());
            encode(in.floats(), n, coded.data(), 6, isa);
            decode(coded.data(), n, out.floats(), isa);
            EXPECT_EQ(std::memcmp(coded.data(), encoded(x, 6).data(), coded.size()), 0) << to_string(isa) << n;
        }
}

}  // namespace
}  // namespace optireduce::int8_codec
