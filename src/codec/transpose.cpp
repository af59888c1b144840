#include "codec/transpose.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optireduce {
namespace {

void transpose_scalar(const float *src, std::size_t ss, float *dst, std::size_t ds, std::size_t r0, std::size_t r1,
                      std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c)
        for (std::size_t r = r0; r < r1; ++r) dst[c * ds + r] = src[r * ss + c];
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void transpose_avx2(const float *src, std::size_t ss, float *dst, std::size_t ds,
                                                    std::size_t rows, std::size_t cols) {
    const std::size_t R = rows / 8 * 8, C = cols / 8 * 8;
    for (std::size_t r = 0; r < R; r += 8)
        for (std::size_t c = 0; c < C; c += 8) {
            const float *s = src + r * ss + c;
            const __m256 a0 = _mm256_loadu_ps(s), a1 = _mm256_loadu_ps(s + ss), a2 = _mm256_loadu_ps(s + 2 * ss),
                         a3 = _mm256_loadu_ps(s + 3 * ss), a4 = _mm256_loadu_ps(s + 4 * ss),
                         a5 = _mm256_loadu_ps(s + 5 * ss), a6 = _mm256_loadu_ps(s + 6 * ss),
                         a7 = _mm256_loadu_ps(s + 7 * ss);
            const __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
            const __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
            const __m256 t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5);
            const __m256 t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
            const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *d = dst + c * ds + r;
            _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    // The edges that do not fill a tile.
    transpose_scalar(src, ss, dst, ds, R, rows, 0, cols);
    transpose_scalar(src, ss, dst, ds, 0, R, C, cols);
}
#endif

}  // namespace

void transpose(const float *src, std::size_t src_stride, float *dst, std::size_t dst_stride, std::size_t rows,
               std::size_t cols, Isa isa) {
#if defined(__x86_64__)
    // AVX-512 would move 16 x 16 tiles; the 8 x 8 AVX2 tile already runs at memory speed here.
    if (isa != Isa::scalar && isa_supported(Isa::avx2))
        return transpose_avx2(src, src_stride, dst, dst_stride, rows, cols);
#endif
    transpose_scalar(src, src_stride, dst, dst_stride, 0, rows, 0, cols);
}

}  // namespace optireduce
