// SPDX-License-Identifier: BSD-3-Clause
#include "codec/int8_codec.hpp"

#include "codec/mix64.hpp"
#include "codec/simd_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace optireduce::int8_codec {
namespace {

static_assert(std::endian::native == std::endian::little, "the int8 wire format's scale assumes a little-endian host");

// Below it 127 / m overflows or m / 127 is subnormal (int8_codec.hpp).
constexpr float kMinMax = 0x1p-119f;
constexpr float kLevel = static_cast<float>(kMaxLevel);
constexpr std::uint32_t kAbs = 0x7fffffffu;
// The hash: the counter is spread by the golden ratio, then murmur3's 32-bit finaliser with
// the key's second half folded in between its rounds. Only 32-bit multiplies, so a vector lane
// computes exactly what the scalar code does.
constexpr std::uint32_t kSpread = 0x9e3779b1u, kMul1 = 0x85ebca6bu, kMul2 = 0xc2b2ae35u;
constexpr float kUnit = 0x1p-24f;

struct Key {
    std::uint32_t k0, k1;
};

// splitmix64 of the seed: neighbouring seeds give unrelated keys.
Key key_of(std::uint64_t seed) {
    const std::uint64_t z = mix64(seed + 0x9e3779b97f4a7c15ull);
    return {static_cast<std::uint32_t>(z), static_cast<std::uint32_t>(z >> 32)};
}

// `spread` is i * kSpread + k0, which the vector paths step by a constant instead of
// multiplying.
std::uint32_t finish(std::uint32_t spread, std::uint32_t k1) {
    std::uint32_t h = spread;
    h ^= h >> 16;
    h *= kMul1;
    h ^= h >> 13;
    h ^= k1;
    h *= kMul2;
    return h ^ (h >> 16);
}

float unit_of(std::uint32_t h) { return static_cast<float>(h >> 8) * kUnit; }

struct Params {
    float scale, inv;
};

Params params_of(float m) {
    if (!(m >= kMinMax)) return {0.0f, 0.0f};
    const float scale = m / kLevel;
    if (scale > kMaxScale) return {kMaxScale, 1.0f / kMaxScale};
    return {scale, kLevel / m};
}

bool valid_scale(float scale) { return std::bit_cast<std::uint32_t>(scale) <= std::bit_cast<std::uint32_t>(kMaxScale); }

// ---- scalar ----

float max_abs_scalar(const float *in, std::size_t from, std::size_t n, float m) {
    for (std::size_t i = from; i < n; ++i) {
        const float a = std::fabs(in[i]);
        if (a < std::numeric_limits<float>::infinity()) m = std::max(m, a);
    }
    return m;
}

std::int8_t level_of(float x, float u, float inv) {
    if (!std::isfinite(x)) x = 0.0f;
    const float y = std::floor(x * inv + u);
    return static_cast<std::int8_t>(std::min(std::max(y, -kLevel), kLevel));
}

void levels_scalar(const float *in, std::size_t from, std::size_t n, std::byte *out, Key k, float inv) {
    for (std::size_t i = from; i < n; ++i) {
        const std::uint32_t spread = static_cast<std::uint32_t>(i) * kSpread + k.k0;
        const std::int8_t l = level_of(in[i], unit_of(finish(spread, k.k1)), inv);
        out[i] = static_cast<std::byte>(static_cast<std::uint8_t>(l));
    }
}

void decode_scalar(const std::byte *levels, std::size_t from, std::size_t n, float scale, float *out) {
    for (std::size_t i = from; i < n; ++i) {
        const int l = std::max(static_cast<int>(static_cast<std::int8_t>(levels[i])), -kMaxLevel);
        out[i] = static_cast<float>(l) * scale;
    }
}

#if defined(__x86_64__)
// ---- AVX2: 8 entries per register ----

OPTIREDUCE_AVX2 inline __m256 abs_avx2(__m256 x) {
    return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kAbs))));
}

// |x| where finite, else 0.
OPTIREDUCE_AVX2 inline __m256 finite_abs_avx2(__m256 x) {
    const __m256 a = abs_avx2(x);
    return _mm256_and_ps(a, _mm256_cmp_ps(a, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ));
}

OPTIREDUCE_AVX2 float max_abs_avx2(const float *in, std::size_t n) {
    // Four accumulators: one max waits for the last, four overlap. max is exact, so the order
    // does not change the result.
    __m256 m0 = _mm256_setzero_ps(), m1 = m0, m2 = m0, m3 = m0;
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm256_max_ps(m0, finite_abs_avx2(_mm256_loadu_ps(in + i)));
        m1 = _mm256_max_ps(m1, finite_abs_avx2(_mm256_loadu_ps(in + i + 8)));
        m2 = _mm256_max_ps(m2, finite_abs_avx2(_mm256_loadu_ps(in + i + 16)));
        m3 = _mm256_max_ps(m3, finite_abs_avx2(_mm256_loadu_ps(in + i + 24)));
    }
    for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(m0, finite_abs_avx2(_mm256_loadu_ps(in + i)));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    return max_abs_scalar(in, i, n, *std::max_element(lanes, lanes + 8));
}

OPTIREDUCE_AVX2 inline __m256 unit_avx2(__m256i spread, __m256i k1) {
    __m256i h = _mm256_xor_si256(spread, _mm256_srli_epi32(spread, 16));
    h = _mm256_mullo_epi32(h, _mm256_set1_epi32(static_cast<int>(kMul1)));
    h = _mm256_xor_si256(_mm256_xor_si256(h, _mm256_srli_epi32(h, 13)), k1);
    h = _mm256_mullo_epi32(h, _mm256_set1_epi32(static_cast<int>(kMul2)));
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(h, 8)), _mm256_set1_ps(kUnit));
}

OPTIREDUCE_AVX2 inline __m256i level_avx2(__m256 x, __m256 u, __m256 inv) {
    const __m256 finite =
        _mm256_cmp_ps(abs_avx2(x), _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
    const __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_and_ps(x, finite), inv), u);
    const __m256 f = _mm256_round_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m256 c = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(-kLevel)), _mm256_set1_ps(kLevel));
    return _mm256_cvtps_epi32(c);
}

OPTIREDUCE_AVX2 std::size_t levels_avx2(const float *in, std::size_t n, std::byte *out, Key k, float inv) {
    const __m256i step = _mm256_set1_epi32(static_cast<int>(8 * kSpread)),
                  k1 = _mm256_set1_epi32(static_cast<int>(k.k1));
    const __m256 vinv = _mm256_set1_ps(inv);
    __m256i spread = _mm256_add_epi32(
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(kSpread))),
        _mm256_set1_epi32(static_cast<int>(k.k0)));
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a = level_avx2(_mm256_loadu_ps(in + i), unit_avx2(spread, k1), vinv);
        spread = _mm256_add_epi32(spread, step);
        const __m256i b = level_avx2(_mm256_loadu_ps(in + i + 8), unit_avx2(spread, k1), vinv);
        spread = _mm256_add_epi32(spread, step);
        // Both packs work per 128-bit half: the permute puts a's eight 16-bit levels before b's.
        const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
        const __m128i bytes = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), bytes);
    }
    return i;
}

OPTIREDUCE_AVX2 void decode_avx2(const std::byte *levels, std::size_t n, float scale, float *out) {
    const __m256 s = _mm256_set1_ps(scale);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(levels + i));
        v = _mm_max_epi8(v, _mm_set1_epi8(-kMaxLevel));
        const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
        const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(lo, s));
        _mm256_storeu_ps(out + i + 8, _mm256_mul_ps(hi, s));
    }
    decode_scalar(levels, i, n, scale, out);
}

OPTIREDUCE_AVX512_WARNINGS_OFF
// ---- AVX-512: 16 entries per register ----

// |x| where finite, else 0 (integer and: AVX-512F has no float and).
OPTIREDUCE_AVX512 inline __m512 finite_abs_avx512(__m512 x) {
    const __m512 a =
        _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(kAbs))));
    return _mm512_maskz_mov_ps(
        _mm512_cmp_ps_mask(a, _mm512_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ), a);
}

OPTIREDUCE_AVX512 float max_abs_avx512(const float *in, std::size_t n) {
    __m512 m0 = _mm512_setzero_ps(), m1 = m0, m2 = m0, m3 = m0;
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        m0 = _mm512_max_ps(m0, finite_abs_avx512(_mm512_loadu_ps(in + i)));
        m1 = _mm512_max_ps(m1, finite_abs_avx512(_mm512_loadu_ps(in + i + 16)));
        m2 = _mm512_max_ps(m2, finite_abs_avx512(_mm512_loadu_ps(in + i + 32)));
        m3 = _mm512_max_ps(m3, finite_abs_avx512(_mm512_loadu_ps(in + i + 48)));
    }
    for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(m0, finite_abs_avx512(_mm512_loadu_ps(in + i)));
    const float m = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
    return max_abs_scalar(in, i, n, m);
}

OPTIREDUCE_AVX512 inline __m512 unit_avx512(__m512i spread, __m512i k1) {
    __m512i h = _mm512_xor_si512(spread, _mm512_srli_epi32(spread, 16));
    h = _mm512_mullo_epi32(h, _mm512_set1_epi32(static_cast<int>(kMul1)));
    h = _mm512_xor_si512(_mm512_xor_si512(h, _mm512_srli_epi32(h, 13)), k1);
    h = _mm512_mullo_epi32(h, _mm512_set1_epi32(static_cast<int>(kMul2)));
    h = _mm512_xor_si512(h, _mm512_srli_epi32(h, 16));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(h, 8)), _mm512_set1_ps(kUnit));
}

OPTIREDUCE_AVX512 inline __m512i level_avx512(__m512 x, __m512 u, __m512 inv) {
    const __mmask16 finite = _mm512_cmp_ps_mask(
        _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(kAbs)))),
        _mm512_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
    const __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_mov_ps(finite, x), inv), u);
    const __m512 f = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 c = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-kLevel)), _mm512_set1_ps(kLevel));
    return _mm512_cvtps_epi32(c);
}

OPTIREDUCE_AVX512 std::size_t levels_avx512(const float *in, std::size_t n, std::byte *out, Key k, float inv) {
    const __m512i step = _mm512_set1_epi32(static_cast<int>(16 * kSpread)),
                  k1 = _mm512_set1_epi32(static_cast<int>(k.k1));
    const __m512 vinv = _mm512_set1_ps(inv);
    __m512i spread =
        _mm512_add_epi32(_mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(static_cast<int>(kSpread))),
                         _mm512_set1_epi32(static_cast<int>(k.k0)));
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i l = level_avx512(_mm512_loadu_ps(in + i), unit_avx512(spread, k1), vinv);
        spread = _mm512_add_epi32(spread, step);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), _mm512_cvtepi32_epi8(l));
    }
    return i;
}

OPTIREDUCE_AVX512 void decode_avx512(const std::byte *levels, std::size_t n, float scale, float *out) {
    const __m512 s = _mm512_set1_ps(scale);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i v = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(levels + i)));
        v = _mm512_max_epi32(v, _mm512_set1_epi32(-kMaxLevel));
        _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_cvtepi32_ps(v), s));
    }
    decode_scalar(levels, i, n, scale, out);
}
OPTIREDUCE_AVX512_WARNINGS_ON
#endif

float max_abs(const float *in, std::size_t n, Isa isa) {
    switch (isa) {
#if defined(__x86_64__)
        case Isa::avx512: return max_abs_avx512(in, n);
        case Isa::avx2: return max_abs_avx2(in, n);
#endif
        default: return max_abs_scalar(in, 0, n, 0.0f);
    }
}

void levels(const float *in, std::size_t n, std::byte *out, Key k, float inv, Isa isa) {
    std::size_t done = 0;
    switch (isa) {
#if defined(__x86_64__)
        case Isa::avx512: done = levels_avx512(in, n, out, k, inv); break;
        case Isa::avx2: done = levels_avx2(in, n, out, k, inv); break;
#endif
        default: break;
    }
    levels_scalar(in, done, n, out, k, inv);
}

}  // namespace

float uniform(std::uint64_t seed, std::uint32_t i) {
    const Key k = key_of(seed);
    return unit_of(finish(i * kSpread + k.k0, k.k1));
}

void encode(const float *in, std::size_t n, std::byte *out, std::uint64_t seed, Isa isa) {
    isa = usable_isa(isa);
    const Params p = params_of(max_abs(in, n, isa));
    std::memcpy(out, &p.scale, sizeof p.scale);
    if (p.scale == 0.0f) {
        std::memset(out + kScaleBytes, 0, n);
        return;
    }
    levels(in, n, out + kScaleBytes, key_of(seed), p.inv, isa);
}

void decode(const std::byte *in, std::size_t n, float *out, Isa isa) {
    float scale;
    std::memcpy(&scale, in, sizeof scale);
    if (!valid_scale(scale)) {
        std::fill(out, out + n, 0.0f);
        return;
    }
    const std::byte *levels = in + kScaleBytes;
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return decode_avx512(levels, n, scale, out);
        case Isa::avx2: return decode_avx2(levels, n, scale, out);
#endif
        default: return decode_scalar(levels, 0, n, scale, out);
    }
}

}  // namespace optireduce::int8_codec
