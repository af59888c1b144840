// SPDX-License-Identifier: BSD-3-Clause
#include "codec/estimators.hpp"

#include "codec/simd_kernels.hpp"

#include <algorithm>

namespace optireduce {
namespace {

// Blocked so the partial sum of a block stays in registers/L1 while every peer is added.
constexpr std::size_t kBlock = 1024;

void partial_sum_scalar(const float *own, std::span<const float *const> peers, float scale, float *dst, std::size_t n) {
    float acc[kBlock];
    for (std::size_t b = 0; b < n; b += kBlock) {
        const std::size_t len = std::min(kBlock, n - b);
        const float *p0 = peers[0] + b;
        for (std::size_t i = 0; i < len; ++i) acc[i] = p0[i];
        for (std::size_t k = 1; k < peers.size(); ++k) {
            const float *p = peers[k] + b;
            for (std::size_t i = 0; i < len; ++i) acc[i] += p[i];
        }
        for (std::size_t i = 0; i < len; ++i) dst[b + i] = own[b + i] + acc[i] * scale;
    }
}

// Elements [from, n) the scalar way: the vector paths' remainder.
void partial_sum_tail(const float *own, std::span<const float *const> peers, float scale, float *dst, std::size_t from,
                      std::size_t n) {
    for (std::size_t i = from; i < n; ++i) {
        float acc = peers[0][i];
        for (std::size_t k = 1; k < peers.size(); ++k) acc += peers[k][i];
        dst[i] = own[i] + acc * scale;
    }
}

void scale_scalar(const float *src, float scale, float *dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] * scale;
}

#if defined(__x86_64__)
// The vector paths keep the partial sum of 8 (16) lanes in a register across all peers: the same
// additions in the same order as the scalar path, per element.
OPTIREDUCE_AVX2 void partial_sum_avx2(const float *own, std::span<const float *const> peers, float scale, float *dst,
                                      std::size_t n) {
    const __m256 s = _mm256_set1_ps(scale);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 acc = _mm256_loadu_ps(peers[0] + i);
        for (std::size_t k = 1; k < peers.size(); ++k) acc = _mm256_add_ps(acc, _mm256_loadu_ps(peers[k] + i));
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(own + i), _mm256_mul_ps(acc, s)));
    }
    partial_sum_tail(own, peers, scale, dst, i, n);
}

OPTIREDUCE_AVX2 void scale_avx2(const float *src, float scale, float *dst, std::size_t n) {
    const __m256 s = _mm256_set1_ps(scale);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_loadu_ps(src + i), s));
    for (; i < n; ++i) dst[i] = src[i] * scale;
}

OPTIREDUCE_AVX512 void partial_sum_avx512(const float *own, std::span<const float *const> peers, float scale,
                                          float *dst, std::size_t n) {
    const __m512 s = _mm512_set1_ps(scale);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 acc = _mm512_loadu_ps(peers[0] + i);
        for (std::size_t k = 1; k < peers.size(); ++k) acc = _mm512_add_ps(acc, _mm512_loadu_ps(peers[k] + i));
        _mm512_storeu_ps(dst + i, _mm512_add_ps(_mm512_loadu_ps(own + i), _mm512_mul_ps(acc, s)));
    }
    partial_sum_tail(own, peers, scale, dst, i, n);
}

OPTIREDUCE_AVX512 void scale_avx512(const float *src, float scale, float *dst, std::size_t n) {
    const __m512 s = _mm512_set1_ps(scale);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_mul_ps(_mm512_loadu_ps(src + i), s));
    for (; i < n; ++i) dst[i] = src[i] * scale;
}
#endif

void scaled_copy(const float *src, float scale, float *dst, std::size_t n, Isa isa) {
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return scale_avx512(src, scale, dst, n);
        case Isa::avx2: return scale_avx2(src, scale, dst, n);
#endif
        default: return scale_scalar(src, scale, dst, n);
    }
}

}  // namespace

void estimate_partial_sum(const float *own, std::span<const float *const> peers, int ranks, float *dst, std::size_t n,
                          Isa isa) {
    if (peers.empty()) return scaled_copy(own, static_cast<float>(ranks), dst, n, isa);
    const float scale = static_cast<float>(ranks - 1) / static_cast<float>(peers.size());
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return partial_sum_avx512(own, peers, scale, dst, n);
        case Isa::avx2: return partial_sum_avx2(own, peers, scale, dst, n);
#endif
        default: return partial_sum_scalar(own, peers, scale, dst, n);
    }
}

void fill_from_own(const float *own, float *dst, std::size_t n, int ranks, Isa isa) {
    scaled_copy(own, static_cast<float>(ranks), dst, n, isa);
}

// Estimating the total of M = ranks - 1 peer values from m of them drawn without replacement:
// the variance of M * mean(sample) is M (M - m) sigma2 / m. With m = 0 the estimate is
// M * own, whose error sum_i (x_i - own) has variance M sigma2 + M^2 sigma2.
double partial_sum_error_sq(std::size_t len, int ranks, int received_peers, double sigma2) {
    const double M = ranks - 1, m = received_peers;
    if (m >= M) return 0;
    const double per = m > 0 ? M * (M - m) / m : M * (M + 1);
    return per * sigma2 * static_cast<double>(len);
}

// N * own - sum = N (own - mean): variance N^2 sigma2 (1 - 1/N) = N (N - 1) sigma2.
double fill_error_sq(std::size_t len, int ranks, double sigma2) {
    const double N = ranks;
    return N * (N - 1) * sigma2 * static_cast<double>(len);
}

void SpreadSample::add(std::span<const float *const> terms, std::size_t n) {
    const std::size_t k = terms.size();
    if (k < 2) return;
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double s = 0, s2 = 0;
        for (const float *t : terms) {
            const double v = t[i];
            s += v;
            s2 += v * v;
        }
        total += (s2 - s * s / static_cast<double>(k)) / static_cast<double>(k - 1);
    }
    sum += std::max(0.0, total);
    coords += static_cast<double>(n);
}

double sum_squares(const float *x, std::size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += static_cast<double>(x[i]) * x[i];
        s1 += static_cast<double>(x[i + 1]) * x[i + 1];
        s2 += static_cast<double>(x[i + 2]) * x[i + 2];
        s3 += static_cast<double>(x[i + 3]) * x[i + 3];
    }
    for (; i < n; ++i) s0 += static_cast<double>(x[i]) * x[i];
    return (s0 + s1) + (s2 + s3);
}

}  // namespace optireduce
