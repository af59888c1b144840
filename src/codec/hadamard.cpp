// SPDX-License-Identifier: BSD-3-Clause
#include "codec/hadamard.hpp"

#include "codec/mix64.hpp"
#include "codec/simd_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace optireduce::hadamard {
namespace {

float scale_of(std::size_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); }

// The order every path follows: stages of span 1, 2, 4, ... n/2, each butterfly
// (a, b) -> (a + b, a - b); the last stage multiplies both results by 1/sqrt(n), so the scale
// costs no extra pass. A path may do two stages per pass over memory (radix 4) or several
// inside a register: the values each butterfly sees are the same, so the bits are too.
void fwht_scalar_impl(float *x, std::size_t n) {
    if (n < 2) return;
    const std::size_t last = n / 2;
    for (std::size_t h = 1; h < last; h *= 2)
        for (std::size_t i = 0; i < n; i += 2 * h)
            for (std::size_t j = i; j < i + h; ++j) {
                const float a = x[j], b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
    const float s = scale_of(n);
    for (std::size_t j = 0; j < last; ++j) {
        const float a = x[j], b = x[j + last];
        x[j] = (a + b) * s;
        x[j + last] = (a - b) * s;
    }
}

// From element 64 * first_word on (the vector paths hand over their last partial word).
void signed_copy_scalar(float *dst, const float *src, std::size_t n, const SignKey &key, std::uint64_t block,
                        std::size_t first_word = 0) {
    for (std::size_t w = first_word; w * 64 < n; ++w) {
        const std::uint64_t bits = sign_word(key, block, w);
        const std::size_t end = std::min(n, w * 64 + 64);
        for (std::size_t i = w * 64; i < end; ++i) {
            std::uint32_t u;
            std::memcpy(&u, &src[i], sizeof u);
            u ^= static_cast<std::uint32_t>((bits >> (i - w * 64)) & 1u) << 31;
            std::memcpy(&dst[i], &u, sizeof u);
        }
    }
}

#if defined(__x86_64__)
// ---- AVX2: 8 floats per register ----

OPTIREDUCE_AVX2 inline __m256 bfly_in_register(__m256 v, __m256 partner, int mask_sel) {
    const __m256 sum = _mm256_add_ps(v, partner), diff = _mm256_sub_ps(partner, v);
    // The upper element of each pair takes partner - v = (its lower) - (itself), as a - b.
    switch (mask_sel) {
        case 1: return _mm256_blend_ps(sum, diff, 0xAA);
        case 2: return _mm256_blend_ps(sum, diff, 0xCC);
        default: return _mm256_blend_ps(sum, diff, 0xF0);
    }
}

OPTIREDUCE_AVX2 void fwht_avx2(float *x, std::size_t n) {
    // Spans 1, 2, 4 inside each register; n >= 16 so the last (scaled) stage is a wide one.
    for (std::size_t i = 0; i < n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        v = bfly_in_register(v, _mm256_permute_ps(v, 0xB1), 1);
        v = bfly_in_register(v, _mm256_permute_ps(v, 0x4E), 2);
        v = bfly_in_register(v, _mm256_permute2f128_ps(v, v, 0x01), 4);
        _mm256_storeu_ps(x + i, v);
    }
    const __m256 s = _mm256_set1_ps(scale_of(n));
    std::size_t h = 8;
    while (h < n) {
        if (4 * h <= n) {  // stages h and 2h in one pass
            const bool last = 4 * h == n;
            for (std::size_t i = 0; i < n; i += 4 * h)
                for (std::size_t j = i; j < i + h; j += 8) {
                    const __m256 x0 = _mm256_loadu_ps(x + j), x1 = _mm256_loadu_ps(x + j + h);
                    const __m256 x2 = _mm256_loadu_ps(x + j + 2 * h), x3 = _mm256_loadu_ps(x + j + 3 * h);
                    const __m256 y0 = _mm256_add_ps(x0, x1), y1 = _mm256_sub_ps(x0, x1);
                    const __m256 y2 = _mm256_add_ps(x2, x3), y3 = _mm256_sub_ps(x2, x3);
                    __m256 z0 = _mm256_add_ps(y0, y2), z2 = _mm256_sub_ps(y0, y2);
                    __m256 z1 = _mm256_add_ps(y1, y3), z3 = _mm256_sub_ps(y1, y3);
                    if (last) {
                        z0 = _mm256_mul_ps(z0, s);
                        z1 = _mm256_mul_ps(z1, s);
                        z2 = _mm256_mul_ps(z2, s);
                        z3 = _mm256_mul_ps(z3, s);
                    }
                    _mm256_storeu_ps(x + j, z0);
                    _mm256_storeu_ps(x + j + h, z1);
                    _mm256_storeu_ps(x + j + 2 * h, z2);
                    _mm256_storeu_ps(x + j + 3 * h, z3);
                }
            h *= 4;
        } else {  // 2h == n: the last stage alone
            for (std::size_t j = 0; j < h; j += 8) {
                const __m256 a = _mm256_loadu_ps(x + j), b = _mm256_loadu_ps(x + j + h);
                _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_add_ps(a, b), s));
                _mm256_storeu_ps(x + j + h, _mm256_mul_ps(_mm256_sub_ps(a, b), s));
            }
            h *= 2;
        }
    }
}

OPTIREDUCE_AVX2 void signed_copy_avx2(float *dst, const float *src, std::size_t n, const SignKey &key,
                                      std::uint64_t block) {
    const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
    std::size_t w = 0;
    for (; w * 64 + 64 <= n; ++w) {
        const std::uint64_t bits = sign_word(key, block, w);
        for (int k = 0; k < 8; ++k) {
            const std::size_t i = w * 64 + static_cast<std::size_t>(k) * 8;
            const __m256i b = _mm256_set1_epi32(static_cast<int>((bits >> (8 * k)) & 0xffu));
            const __m256i on = _mm256_cmpeq_epi32(_mm256_and_si256(b, lane_bit), lane_bit);
            const __m256 flip = _mm256_castsi256_ps(_mm256_and_si256(on, sign));
            _mm256_storeu_ps(dst + i, _mm256_xor_ps(_mm256_loadu_ps(src + i), flip));
        }
    }
    if (w * 64 < n) signed_copy_scalar(dst, src, n, key, block, w);
}

// ---- AVX-512: 16 floats per register ----

OPTIREDUCE_AVX512 inline __m512 bfly512(__m512 v, __m512 partner, __mmask16 upper) {
    return _mm512_mask_blend_ps(upper, _mm512_add_ps(v, partner), _mm512_sub_ps(partner, v));
}

OPTIREDUCE_AVX512 void fwht_avx512(float *x, std::size_t n) {
    // Spans 1, 2, 4, 8 inside each register; n >= 32 so the last stage is a wide one.
    // The partner of lane i at span h is lane i ^ h. (maskz_permutexvar rather than permute_ps and
    // shuffle_f32x4, whose GCC 12 headers pass an undefined vector and trip
    // -Wmaybe-uninitialized.)
    const __m512i p1 = _mm512_setr_epi32(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    const __m512i p2 = _mm512_setr_epi32(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m512i p4 = _mm512_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
    const __m512i p8 = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    for (std::size_t i = 0; i < n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        v = bfly512(v, _mm512_maskz_permutexvar_ps(0xFFFF, p1, v), 0xAAAA);
        v = bfly512(v, _mm512_maskz_permutexvar_ps(0xFFFF, p2, v), 0xCCCC);
        v = bfly512(v, _mm512_maskz_permutexvar_ps(0xFFFF, p4, v), 0xF0F0);
        v = bfly512(v, _mm512_maskz_permutexvar_ps(0xFFFF, p8, v), 0xFF00);
        _mm512_storeu_ps(x + i, v);
    }
    const __m512 s = _mm512_set1_ps(scale_of(n));
    std::size_t h = 16;
    while (h < n) {
        if (4 * h <= n) {
            const bool last = 4 * h == n;
            for (std::size_t i = 0; i < n; i += 4 * h)
                for (std::size_t j = i; j < i + h; j += 16) {
                    const __m512 x0 = _mm512_loadu_ps(x + j), x1 = _mm512_loadu_ps(x + j + h);
                    const __m512 x2 = _mm512_loadu_ps(x + j + 2 * h), x3 = _mm512_loadu_ps(x + j + 3 * h);
                    const __m512 y0 = _mm512_add_ps(x0, x1), y1 = _mm512_sub_ps(x0, x1);
                    const __m512 y2 = _mm512_add_ps(x2, x3), y3 = _mm512_sub_ps(x2, x3);
                    __m512 z0 = _mm512_add_ps(y0, y2), z2 = _mm512_sub_ps(y0, y2);
                    __m512 z1 = _mm512_add_ps(y1, y3), z3 = _mm512_sub_ps(y1, y3);
                    if (last) {
                        z0 = _mm512_mul_ps(z0, s);
                        z1 = _mm512_mul_ps(z1, s);
                        z2 = _mm512_mul_ps(z2, s);
                        z3 = _mm512_mul_ps(z3, s);
                    }
                    _mm512_storeu_ps(x + j, z0);
                    _mm512_storeu_ps(x + j + h, z1);
                    _mm512_storeu_ps(x + j + 2 * h, z2);
                    _mm512_storeu_ps(x + j + 3 * h, z3);
                }
            h *= 4;
        } else {
            for (std::size_t j = 0; j < h; j += 16) {
                const __m512 a = _mm512_loadu_ps(x + j), b = _mm512_loadu_ps(x + j + h);
                _mm512_storeu_ps(x + j, _mm512_mul_ps(_mm512_add_ps(a, b), s));
                _mm512_storeu_ps(x + j + h, _mm512_mul_ps(_mm512_sub_ps(a, b), s));
            }
            h *= 2;
        }
    }
}

OPTIREDUCE_AVX512 void signed_copy_avx512(float *dst, const float *src, std::size_t n, const SignKey &key,
                                          std::uint64_t block) {
    const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    std::size_t w = 0;
    for (; w * 64 + 64 <= n; ++w) {
        const std::uint64_t bits = sign_word(key, block, w);
        for (int k = 0; k < 4; ++k) {
            const std::size_t i = w * 64 + static_cast<std::size_t>(k) * 16;
            const auto m = static_cast<__mmask16>((bits >> (16 * k)) & 0xffffu);
            const __m512i v = _mm512_loadu_si512(src + i);
            _mm512_storeu_si512(dst + i, _mm512_mask_xor_epi32(v, m, v, sign));
        }
    }
    if (w * 64 < n) signed_copy_scalar(dst, src, n, key, block, w);
}
#endif

}  // namespace

std::uint64_t sign_word(const SignKey &key, std::uint64_t block, std::uint64_t word) {
    std::uint64_t h = mix64(key.seed ^ 0x6f707469726564ull);
    h = mix64(h ^ (static_cast<std::uint64_t>(key.comm) << 32 | key.seq));
    h = mix64(h ^ block);
    return mix64(h ^ word);
}

void signed_copy(float *dst, const float *src, std::size_t n, const SignKey &key, std::uint64_t block, Isa isa) {
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return signed_copy_avx512(dst, src, n, key, block);
        case Isa::avx2: return signed_copy_avx2(dst, src, n, key, block);
#endif
        default: return signed_copy_scalar(dst, src, n, key, block);
    }
}

void fwht(float *x, std::size_t n, Isa isa) {
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512:
            if (n >= 32) return fwht_avx512(x, n);
            if (n >= 16 && isa_supported(Isa::avx2)) return fwht_avx2(x, n);
            break;
        case Isa::avx2:
            if (n >= 16) return fwht_avx2(x, n);
            break;
#endif
        default: break;
    }
    fwht_scalar_impl(x, n);
}

void forward(float *x, std::size_t n, const SignKey &key, std::uint64_t block, Isa isa) {
    signed_copy(x, x, n, key, block, isa);
    fwht(x, n, isa);
}

void inverse(float *x, std::size_t n, const SignKey &key, std::uint64_t block, Isa isa) {
    fwht(x, n, isa);
    signed_copy(x, x, n, key, block, isa);
}

}  // namespace optireduce::hadamard
