// SPDX-License-Identifier: BSD-3-Clause
#include "codec/reduce.hpp"

#include "codec/simd_kernels.hpp"

#include <algorithm>

namespace optireduce {
namespace {

void sum_scalar(std::span<const float *const> srcs, float *dst, std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < n; ++i) {
        float acc = srcs[0][i];
        for (std::size_t k = 1; k < srcs.size(); ++k) acc += srcs[k][i];
        dst[i] = acc;
    }
}

#if defined(__x86_64__)
// Each element's sum stays in a register across all sources, added in source order (the scalar
// path's order), and dst is written once: one read of every source and one write, where adding
// source by source into dst re-reads and re-writes dst once per source. Four registers at a time
// so the adds of independent lanes overlap (an add's latency is four of its throughput slots).
OPTIREDUCE_AVX2 void sum_avx2(std::span<const float *const> srcs, float *dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a0 = _mm256_loadu_ps(srcs[0] + i), a1 = _mm256_loadu_ps(srcs[0] + i + 8);
        __m256 a2 = _mm256_loadu_ps(srcs[0] + i + 16), a3 = _mm256_loadu_ps(srcs[0] + i + 24);
        for (std::size_t k = 1; k < srcs.size(); ++k) {
            const float *s = srcs[k] + i;
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(s));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(s + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(s + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(s + 24));
        }
        _mm256_storeu_ps(dst + i, a0);
        _mm256_storeu_ps(dst + i + 8, a1);
        _mm256_storeu_ps(dst + i + 16, a2);
        _mm256_storeu_ps(dst + i + 24, a3);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 a = _mm256_loadu_ps(srcs[0] + i);
        for (std::size_t k = 1; k < srcs.size(); ++k) a = _mm256_add_ps(a, _mm256_loadu_ps(srcs[k] + i));
        _mm256_storeu_ps(dst + i, a);
    }
    sum_scalar(srcs, dst, i, n);
}

OPTIREDUCE_AVX512 void sum_avx512(std::span<const float *const> srcs, float *dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 a0 = _mm512_loadu_ps(srcs[0] + i), a1 = _mm512_loadu_ps(srcs[0] + i + 16);
        __m512 a2 = _mm512_loadu_ps(srcs[0] + i + 32), a3 = _mm512_loadu_ps(srcs[0] + i + 48);
        for (std::size_t k = 1; k < srcs.size(); ++k) {
            const float *s = srcs[k] + i;
            a0 = _mm512_add_ps(a0, _mm512_loadu_ps(s));
            a1 = _mm512_add_ps(a1, _mm512_loadu_ps(s + 16));
            a2 = _mm512_add_ps(a2, _mm512_loadu_ps(s + 32));
            a3 = _mm512_add_ps(a3, _mm512_loadu_ps(s + 48));
        }
        _mm512_storeu_ps(dst + i, a0);
        _mm512_storeu_ps(dst + i + 16, a1);
        _mm512_storeu_ps(dst + i + 32, a2);
        _mm512_storeu_ps(dst + i + 48, a3);
    }
    for (; i + 16 <= n; i += 16) {
        __m512 a = _mm512_loadu_ps(srcs[0] + i);
        for (std::size_t k = 1; k < srcs.size(); ++k) a = _mm512_add_ps(a, _mm512_loadu_ps(srcs[k] + i));
        _mm512_storeu_ps(dst + i, a);
    }
    sum_scalar(srcs, dst, i, n);
}
#endif

}  // namespace

void sum_in_order(std::span<const float *const> srcs, float *dst, std::size_t n, Isa isa) {
    if (srcs.empty()) return;
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return sum_avx512(srcs, dst, n);
        case Isa::avx2: return sum_avx2(srcs, dst, n);
#endif
        default: return sum_scalar(srcs, dst, 0, n);
    }
}

}  // namespace optireduce
