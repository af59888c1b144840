// SPDX-License-Identifier: BSD-3-Clause
// Whole 64-byte lines moved between strided places, for the wire layout's cache-line interleave
// (codec/block_layout.hpp). Moves floats only, so every instruction set gives the same bits.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>

namespace optireduce {

// Floats per line: one 64-byte cache line.
inline constexpr std::size_t kLineFloats = 16;

// dst[l * dst_stride + k] = src[l * src_stride + k] for l < lines, k < kLineFloats.
// `stream`: write with non-temporal stores where the vector paths can (every destination line
// 64-byte aligned): the lines bypass the cache instead of first reading in what they overwrite,
// which pays when the destination is larger than the cache and is not read again soon by this
// core. A caller that streams must call `lines_fence()` before another thread reads `dst`.
void copy_lines(const float *src, std::size_t src_stride, float *dst, std::size_t dst_stride, std::size_t lines,
                bool stream, Isa isa = best_isa());

// Orders the non-temporal stores of `copy_lines` before every later store of this thread.
void lines_fence();

}  // namespace optireduce
