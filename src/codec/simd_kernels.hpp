// SPDX-License-Identifier: BSD-3-Clause
// What the codec's SIMD kernel files share, and only they include: the intrinsics, the target
// attributes that let one function use AVX2 or AVX-512 in a build for the baseline x86-64 (the
// paths are chosen at run time, codec/simd.hpp), and a bracket for GCC's false warnings.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#define OPTIREDUCE_AVX2 __attribute__((target("avx2")))
#define OPTIREDUCE_AVX512 __attribute__((target("avx512f")))

// GCC 12's unmasked AVX-512 intrinsics pass _mm512_undefined_*() as the merge source, which its
// own -W(maybe-)uninitialized then reports from inside the header (GCC PR105593): the merge
// source of an all-ones mask is never read. Put OPTIREDUCE_AVX512_WARNINGS_OFF before the
// AVX-512 functions that meet it and OPTIREDUCE_AVX512_WARNINGS_ON after them.
#if defined(__GNUC__) && !defined(__clang__)
#define OPTIREDUCE_AVX512_WARNINGS_OFF                                                           \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
        _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define OPTIREDUCE_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define OPTIREDUCE_AVX512_WARNINGS_OFF
#define OPTIREDUCE_AVX512_WARNINGS_ON
#endif
#endif
