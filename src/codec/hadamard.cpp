#include "codec/hadamard.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optireduce::hadamard {
namespace {

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// One butterfly stage of span h over the whole vector.
inline void stage_scalar(float *x, std::size_t n, std::size_t h) {
    for (std::size_t i = 0; i < n; i += 2 * h)
        for (std::size_t j = i; j < i + h; ++j) {
            const float a = x[j], b = x[j + h];
            x[j] = a + b;
            x[j + h] = a - b;
        }
}

inline void scale_scalar(float *x, std::size_t n) {
    const float s = 1.0f / std::sqrt(static_cast<float>(n));
    for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

#if defined(__x86_64__)
// Spans of 8 and more are 8-float vectors; the three smaller spans stay scalar (they are a
// small share of the work and would need shuffles). Same operations, same order: same bits.
__attribute__((target("avx2"))) void fwht_avx2(float *x, std::size_t n) {
    for (std::size_t h = 1; h < n && h < 8; h *= 2) stage_scalar(x, n, h);
    for (std::size_t h = 8; h < n; h *= 2)
        for (std::size_t i = 0; i < n; i += 2 * h)
            for (std::size_t j = i; j < i + h; j += 8) {
                const __m256 a = _mm256_loadu_ps(x + j), b = _mm256_loadu_ps(x + j + h);
                _mm256_storeu_ps(x + j, _mm256_add_ps(a, b));
                _mm256_storeu_ps(x + j + h, _mm256_sub_ps(a, b));
            }
    const __m256 s = _mm256_set1_ps(1.0f / std::sqrt(static_cast<float>(n)));
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), s));
    const float s1 = 1.0f / std::sqrt(static_cast<float>(n));
    for (; i < n; ++i) x[i] *= s1;
}

bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
#endif

}  // namespace

std::uint64_t sign_word(const SignKey &key, std::uint64_t block, std::uint64_t word) {
    std::uint64_t h = mix(key.seed ^ 0x6f707469726564ull);
    h = mix(h ^ (static_cast<std::uint64_t>(key.comm) << 32 | key.seq));
    h = mix(h ^ block);
    return mix(h ^ word);
}

void apply_signs(float *x, std::size_t n, const SignKey &key, std::uint64_t block) {
    for (std::size_t w = 0; w * 64 < n; ++w) {
        const std::uint64_t bits = sign_word(key, block, w);
        const std::size_t end = std::min(n, w * 64 + 64);
        for (std::size_t i = w * 64; i < end; ++i) {
            // Flipping the IEEE sign bit: exact, and its own inverse.
            std::uint32_t u;
            std::memcpy(&u, &x[i], sizeof u);
            u ^= static_cast<std::uint32_t>((bits >> (i - w * 64)) & 1u) << 31;
            std::memcpy(&x[i], &u, sizeof u);
        }
    }
}

void fwht_scalar(float *x, std::size_t n) {
    for (std::size_t h = 1; h < n; h *= 2) stage_scalar(x, n, h);
    scale_scalar(x, n);
}

void fwht(float *x, std::size_t n) {
#if defined(__x86_64__)
    if (n >= 16 && has_avx2()) return fwht_avx2(x, n);
#endif
    fwht_scalar(x, n);
}

const char *fwht_kernel() {
#if defined(__x86_64__)
    if (has_avx2()) return "avx2";
#endif
    return "scalar";
}

void forward(float *x, std::size_t n, const SignKey &key, std::uint64_t block) {
    apply_signs(x, n, key, block);
    fwht(x, n);
}

void inverse(float *x, std::size_t n, const SignKey &key, std::uint64_t block) {
    fwht(x, n);
    apply_signs(x, n, key, block);
}

}  // namespace optireduce::hadamard
