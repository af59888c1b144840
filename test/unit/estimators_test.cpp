// SPDX-License-Identifier: BSD-3-Clause
// The estimators of bounded mode (codec/estimators.hpp), on exact inputs and as statistics:
// unbiased for fixed inputs over random loss (a chi-square style check that the naive
// rescaling fails), the error formula against enumeration, and the Hadamard transform's
// spreading of bursty loss.
#include "codec/estimators.hpp"
#include "codec/block_layout.hpp"

#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace optireduce {
namespace {

TEST(Estimators, PartialSumOnExactInputs) {
    const std::vector<float> own{1, 2, 3}, a{10, 20, 30}, b{100, 200, 300}, c{1000, 2000, 3000};
    std::vector<float> dst(3);
    const float *all[] = {a.data(), b.data(), c.data()};
    estimate_partial_sum(own.data(), all, 4, dst.data(), 3);  // nothing lost: the plain sum
    EXPECT_EQ(dst, (std::vector<float>{1111, 2222, 3333}));
    const float *two[] = {a.data(), c.data()};  // b lost: a and c stand for three peers
    estimate_partial_sum(own.data(), two, 4, dst.data(), 3);
    EXPECT_EQ(dst, (std::vector<float>{1 + 1.5f * 1010, 2 + 1.5f * 2020, 3 + 1.5f * 3030}));
    estimate_partial_sum(own.data(), {}, 4, dst.data(), 3);  // every peer lost
    EXPECT_EQ(dst, (std::vector<float>{4, 8, 12}));
    // Equal contributions come back exact whatever was lost.
    const std::vector<float> same(5, 2.5f);
    const float *one[] = {same.data()};
    estimate_partial_sum(same.data(), one, 4, dst.data(), 3);
    for (float v : dst) EXPECT_EQ(v, 10.0f);
}

TEST(Estimators, FillFromOwnScalesByRanks) {
    const std::vector<float> own{1.0f, -2.0f, 0.5f};
    std::vector<float> dst(3);
    fill_from_own(own.data(), dst.data(), dst.size(), 4);
    EXPECT_EQ(dst, (std::vector<float>{4.0f, -8.0f, 2.0f}));
}

TEST(Estimators, EveryInstructionSetGivesTheSameBits) {
    const std::size_t n = 1000;
    std::vector<std::vector<float>> v;
    for (unsigned k = 0; k < 4; ++k) v.push_back(test::random_vector(n, 3 + k));
    const float *peers[] = {v[1].data(), v[2].data()};
    std::vector<float> ref(n), got(n);
    for (Isa isa : {Isa::avx2, Isa::avx512}) {
        if (!isa_supported(isa)) {
            std::printf("%s: not on this CPU, not compared\n", to_string(isa));
            continue;
        }
        // The reference is recomputed for each instruction set: the fill below overwrites it.
        estimate_partial_sum(v[0].data(), peers, 4, ref.data(), n, Isa::scalar);
        estimate_partial_sum(v[0].data(), peers, 4, got.data(), n, isa);
        EXPECT_EQ(std::memcmp(ref.data(), got.data(), n * sizeof(float)), 0) << to_string(isa);
        fill_from_own(v[3].data(), got.data(), n, 4, isa);
        fill_from_own(v[3].data(), ref.data(), n, 4, Isa::scalar);
        EXPECT_EQ(std::memcmp(ref.data(), got.data(), n * sizeof(float)), 0) << to_string(isa);
    }
}

// Mean over K trials of (estimate - truth) per coordinate, as z-scores; returns sum(z^2)/d,
// which is 1 +- sqrt(2/d) for an unbiased estimator and grows with K for a biased one.
// Each coordinate is its own chunk, so losses are independent across coordinates. Trials in
// which every peer's copy was lost (probability q^(ranks-1)) are left out: nothing about the
// peers is known then and the estimate, ranks * own, cannot be unbiased for fixed inputs
// (at 20% loss and 4 ranks that is 0.8% of chunks, and K = 4000 trials do resolve it).
template <class Estimate>
double chi_square_per_coordinate(int ranks, double q, int K, Estimate estimate) {
    const std::size_t d = 1024;
    std::mt19937_64 rng(1234);
    std::normal_distribution<double> value(0.0, 1.0);
    std::vector<std::vector<float>> x(static_cast<std::size_t>(ranks), std::vector<float>(d));
    for (auto &r : x)
        for (auto &v : r) v = static_cast<float>(value(rng));
    std::bernoulli_distribution lost(q);
    double chi = 0;
    std::vector<const float *> peers;
    for (std::size_t i = 0; i < d; ++i) {
        double truth = 0;
        for (int r = 0; r < ranks; ++r) truth += x[static_cast<std::size_t>(r)][i];
        double s = 0, s2 = 0;
        for (int k = 0; k < K;) {
            peers.clear();
            for (int r = 1; r < ranks; ++r)  // rank 0 is the owner: its own value never travels
                if (!lost(rng)) peers.push_back(&x[static_cast<std::size_t>(r)][i]);
            if (peers.empty()) continue;
            ++k;
            const double e = estimate(&x[0][i], peers, ranks) - truth;
            s += e;
            s2 += e * e;
        }
        const double mean = s / K, var = (s2 - s * s / K) / (K - 1);
        if (var > 0) chi += mean * mean / (var / K);
    }
    return chi / static_cast<double>(d);
}

float ours(const float *own, std::span<const float *const> peers, int ranks) {
    float out;
    estimate_partial_sum(own, peers, ranks, &out, 1);
    return out;
}

// Rescaling everything that arrived, our own value included, by ranks / (arrived): the
// textbook "N / contributors" that looks unbiased but weighs the owner (always present) more.
float naive(const float *own, std::span<const float *const> peers, int ranks) {
    float s = *own;
    for (const float *p : peers) s += *p;
    return s * static_cast<float>(ranks) / static_cast<float>(peers.size() + 1);
}

TEST(Estimators, PartialSumIsUnbiasedForFixedInputsAt5And20PercentLoss) {
    const int K = 4000;
    for (double q : {0.05, 0.2}) {
        const double chi = chi_square_per_coordinate(4, q, K, ours);
        const double chi_naive = chi_square_per_coordinate(4, q, K, naive);
        std::printf("loss %.2f: sum(z^2)/d = %.3f for ours, %.1f for the naive N/(m+1) rescaling (d = 1024, K = %d)\n",
                    q, chi, chi_naive, K);
        // ours: 1 +- 0.044 (one sigma), so 0.25 is beyond 5 sigma.
        EXPECT_NEAR(chi, 1.0, 0.25) << q;
        EXPECT_GT(chi_naive, 5.0) << "the check cannot tell a biased estimator at loss " << q;
    }
}

// The error formula: averaged over every subset of m of the M peers (all equally likely), the
// squared error of the partial sum is M (M - m) / m * S^2, S^2 the peers' sample variance.
TEST(Estimators, ErrorFormulaMatchesEnumerationOverLossPatterns) {
    const std::vector<float> x{0.5f, 3.0f, -1.0f, 2.0f, 7.0f};  // x[0] the owner, 4 peers
    const int ranks = 5, M = 4;
    double mean = 0, s2 = 0, truth = 0;
    for (int i = 1; i <= M; ++i) mean += x[static_cast<std::size_t>(i)] / M;
    for (int i = 1; i <= M; ++i) s2 += std::pow(x[static_cast<std::size_t>(i)] - mean, 2) / (M - 1);
    for (float v : x) truth += v;
    for (int m = 1; m < M; ++m) {
        double sum_sq = 0;
        int subsets = 0;
        for (unsigned mask = 0; mask < (1u << M); ++mask) {
            if (__builtin_popcount(mask) != m) continue;
            std::vector<const float *> peers;
            for (int i = 0; i < M; ++i)
                if (mask & (1u << i)) peers.push_back(&x[static_cast<std::size_t>(i + 1)]);
            sum_sq += std::pow(ours(&x[0], peers, ranks) - truth, 2);
            ++subsets;
        }
        EXPECT_NEAR(sum_sq / subsets, partial_sum_error_sq(1, ranks, m, s2), 1e-4) << "m=" << m;
    }
    EXPECT_EQ(partial_sum_error_sq(10, ranks, M, s2), 0.0);
}

// The phase-2 fill N * own stands for the sum of all N contributions, own included. Over the
// choice of which rank fills (own drawn from the N values), the mean squared error is
// N (N - 1) sigma2 with sigma2 the N values' sample variance: exact, by enumeration.
TEST(Estimators, FillErrorFormulaMatchesEnumerationOverFillingRanks) {
    const std::vector<double> x{0.5, 3.0, -1.0, 2.0, 7.0};
    const int N = 5;
    double mean = 0, s2 = 0, truth = 0;
    for (double v : x) mean += v / N;
    for (double v : x) s2 += (v - mean) * (v - mean) / (N - 1);
    for (double v : x) truth += v;
    double sum_sq = 0;
    for (double own : x) sum_sq += std::pow(N * own - truth, 2);
    EXPECT_NEAR(sum_sq / N, fill_error_sq(1, N, s2), 1e-9);
    EXPECT_NEAR(fill_error_sq(7, N, s2), 7 * fill_error_sq(1, N, s2), 1e-9);  // per element
}

// Every peer lost: the estimate N * own misses the M = N - 1 peers' values by M * own - sum.
// With own and the peers independent draws of one spread sigma2 its mean square is
// M (M + 1) sigma2 (Monte Carlo, 400k draws, within 2%).
TEST(Estimators, ErrorFormulaWithNoPeerMatchesSimulation) {
    std::mt19937 rng(11);
    std::normal_distribution<double> d(3.0, 2.0);  // sigma2 = 4, mean far from 0
    const int ranks = 4, M = 3, trials = 400000;
    double sum_sq = 0;
    for (int t = 0; t < trials; ++t) {
        const float own = static_cast<float>(d(rng));
        double truth = own;
        for (int i = 0; i < M; ++i) truth += d(rng);
        float est = 0;
        estimate_partial_sum(&own, {}, ranks, &est, 1);
        sum_sq += std::pow(est - truth, 2);
    }
    const double want = partial_sum_error_sq(1, ranks, 0, 4.0);
    EXPECT_DOUBLE_EQ(want, M * (M + 1) * 4.0);
    EXPECT_NEAR(sum_sq / trials / want, 1.0, 0.02);
}

// The spread sample: per coordinate the terms' sample variance (k - 1 in the denominator),
// averaged over coordinates; fewer than two terms carry no spread and are not counted.
TEST(Estimators, SpreadSampleOnExactInputs) {
    const std::vector<float> a{1, 0}, b{2, 0}, c{3, 6};
    const float *three[] = {a.data(), b.data(), c.data()};
    SpreadSample s;
    s.add(three, 2);  // coordinate 0: 1, 2, 3 -> 1; coordinate 1: 0, 0, 6 -> 12
    EXPECT_DOUBLE_EQ(s.coords, 2.0);
    EXPECT_DOUBLE_EQ(s.sigma2(), 6.5);
    const float *one[] = {a.data()};
    s.add(one, 2);
    EXPECT_DOUBLE_EQ(s.coords, 2.0);
    EXPECT_DOUBLE_EQ(SpreadSample{}.sigma2(), 0.0);
}

}  // namespace
}  // namespace optireduce
