// SPDX-License-Identifier: BSD-3-Clause
#include "codec/lines.hpp"

#include "codec/simd_kernels.hpp"

#include <cstdint>
#include <cstring>

namespace optireduce {
namespace {

void copy_lines_scalar(const float *src, std::size_t ss, float *dst, std::size_t ds, std::size_t lines) {
    for (std::size_t l = 0; l < lines; ++l) std::memcpy(dst + l * ds, src + l * ss, kLineFloats * sizeof(float));
}

#if defined(__x86_64__)
bool aligned_lines(const float *dst, std::size_t ds) {
    return reinterpret_cast<std::uintptr_t>(dst) % 64 == 0 && ds % kLineFloats == 0;
}

OPTIREDUCE_AVX2 void copy_lines_avx2(const float *src, std::size_t ss, float *dst, std::size_t ds, std::size_t lines,
                                     bool stream) {
    if (stream) {
        for (std::size_t l = 0; l < lines; ++l) {
            const float *s = src + l * ss;
            float *d = dst + l * ds;
            _mm256_stream_ps(d, _mm256_loadu_ps(s));
            _mm256_stream_ps(d + 8, _mm256_loadu_ps(s + 8));
        }
        return;
    }
    for (std::size_t l = 0; l < lines; ++l) {
        const float *s = src + l * ss;
        float *d = dst + l * ds;
        _mm256_storeu_ps(d, _mm256_loadu_ps(s));
        _mm256_storeu_ps(d + 8, _mm256_loadu_ps(s + 8));
    }
}

OPTIREDUCE_AVX512 void copy_lines_avx512(const float *src, std::size_t ss, float *dst, std::size_t ds,
                                         std::size_t lines, bool stream) {
    if (stream) {
        for (std::size_t l = 0; l < lines; ++l) _mm512_stream_ps(dst + l * ds, _mm512_loadu_ps(src + l * ss));
        return;
    }
    for (std::size_t l = 0; l < lines; ++l) _mm512_storeu_ps(dst + l * ds, _mm512_loadu_ps(src + l * ss));
}
#endif

}  // namespace

void copy_lines(const float *src, std::size_t src_stride, float *dst, std::size_t dst_stride, std::size_t lines,
                bool stream, Isa isa) {
#if defined(__x86_64__)
    isa = usable_isa(isa);
    // Non-temporal stores need whole aligned lines; anything else takes ordinary stores.
    stream = stream && aligned_lines(dst, dst_stride);
    if (isa == Isa::avx512) return copy_lines_avx512(src, src_stride, dst, dst_stride, lines, stream);
    if (isa == Isa::avx2) return copy_lines_avx2(src, src_stride, dst, dst_stride, lines, stream);
#else
    (void)stream;
#endif
    copy_lines_scalar(src, src_stride, dst, dst_stride, lines);
}

void lines_fence() {
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

}  // namespace optireduce
