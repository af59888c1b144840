// SPDX-License-Identifier: BSD-3-Clause
#include "codec/bf16_codec.hpp"

#include "codec/simd_kernels.hpp"

#include <bit>
#include <cstring>

namespace optireduce::bf16_codec {
namespace {

// The vector paths store the lanes as they lie in memory, the scalar path host-order uint16s:
// both are the wire's little-endian order only on a little-endian host.
static_assert(std::endian::native == std::endian::little, "the bf16 wire format assumes a little-endian host");

constexpr std::uint32_t kAbs = 0x7fffffffu, kInf = 0x7f800000u;
// bf16's top mantissa bit: set on a NaN so that dropping the low payload bits cannot turn a
// signalling NaN with only low payload bits into an infinity.
constexpr std::uint32_t kQuiet = 0x0040u;

void encode_scalar(const float *in, std::size_t from, std::size_t n, std::byte *out) {
    for (std::size_t i = from; i < n; ++i) {
        const std::uint16_t b = from_float(in[i]);
        std::memcpy(out + 2 * i, &b, sizeof b);
    }
}

void decode_scalar(const std::byte *in, std::size_t from, std::size_t n, float *out) {
    for (std::size_t i = from; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, in + 2 * i, sizeof b);
        out[i] = to_float(b);
    }
}

#if defined(__x86_64__)

// The 32-bit lanes hold each entry's bf16 in their low half, as from_float() computes it.
OPTIREDUCE_AVX2 inline __m256i bf16_lanes_avx2(__m256 x) {
    const __m256i v = _mm256_castps_si256(x);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(v, 16), _mm256_set1_epi32(1));
    const __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(v, bias), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(v, 16), _mm256_set1_epi32(kQuiet));
    const __m256i abs = _mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(kAbs)));
    const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(static_cast<int>(kInf)));
    return _mm256_blendv_epi8(rounded, quiet, nan);
}

OPTIREDUCE_AVX2 void encode_avx2(const float *in, std::size_t n, std::byte *out) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a = bf16_lanes_avx2(_mm256_loadu_ps(in + i));
        const __m256i b = bf16_lanes_avx2(_mm256_loadu_ps(in + i + 8));
        // packus works per 128-bit half; the permute puts a's eight before b's.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 2 * i), packed);
    }
    encode_scalar(in, i, n, out);
}

OPTIREDUCE_AVX2 void decode_avx2(const std::byte *in, std::size_t n, float *out) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + 2 * i)));
        _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
    }
    decode_scalar(in, i, n, out);
}

OPTIREDUCE_AVX512_WARNINGS_OFF

OPTIREDUCE_AVX512 void encode_avx512(const float *in, std::size_t n, std::byte *out) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i v = _mm512_loadu_si512(in + i);
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(v, 16), _mm512_set1_epi32(1));
        const __m512i bias = _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff));
        const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(v, bias), 16);
        const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(v, 16), _mm512_set1_epi32(kQuiet));
        const __m512i abs = _mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(kAbs)));
        const __mmask16 nan = _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(static_cast<int>(kInf)));
        const __m512i lanes = _mm512_mask_blend_epi32(nan, rounded, quiet);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 2 * i), _mm512_cvtepi32_epi16(lanes));
    }
    encode_scalar(in, i, n, out);
}

OPTIREDUCE_AVX512 void decode_avx512(const std::byte *in, std::size_t n, float *out) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + 2 * i)));
        _mm512_storeu_si512(out + i, _mm512_slli_epi32(v, 16));
    }
    decode_scalar(in, i, n, out);
}
OPTIREDUCE_AVX512_WARNINGS_ON
#endif

}  // namespace

std::uint16_t from_float(float x) {
    const auto v = std::bit_cast<std::uint32_t>(x);
    if ((v & kAbs) > kInf) return static_cast<std::uint16_t>((v >> 16) | kQuiet);
    // Adding 0x7fff (plus one when the kept part is odd) carries into bit 16 exactly when the
    // dropped half is above the midpoint, or at it with an odd kept part. The largest non-NaN
    // pattern, 0xff800000, cannot overflow.
    return static_cast<std::uint16_t>((v + 0x7fffu + ((v >> 16) & 1u)) >> 16);
}

float to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

void encode(const float *in, std::size_t n, std::byte *out, Isa isa) {
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return encode_avx512(in, n, out);
        case Isa::avx2: return encode_avx2(in, n, out);
#endif
        default: return encode_scalar(in, 0, n, out);
    }
}

void decode(const std::byte *in, std::size_t n, float *out, Isa isa) {
    switch (usable_isa(isa)) {
#if defined(__x86_64__)
        case Isa::avx512: return decode_avx512(in, n, out);
        case Isa::avx2: return decode_avx2(in, n, out);
#endif
        default: return decode_scalar(in, 0, n, out);
    }
}

}  // namespace optireduce::bf16_codec
