// Matrix transpose for the interleaved wire layout (codec/block_layout.hpp): moves floats only,
// so every instruction set gives the same bits. The vector path transposes 8 x 8 tiles in
// registers, so both sides are read and written in whole 32-byte rows instead of one float at a
// time with a stride.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>

namespace optireduce {

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols.
void transpose(const float *src, std::size_t src_stride, float *dst, std::size_t dst_stride, std::size_t rows,
               std::size_t cols, Isa isa = best_isa());

}  // namespace optireduce
