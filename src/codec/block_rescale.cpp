// SPDX-License-Identifier: BSD-3-Clause
#include "codec/block_rescale.hpp"

#include "codec/lines.hpp"

#include <algorithm>

namespace optireduce {

ZeroedPerBlock::ZeroedPerBlock(const BlockLayout &layout) : layout_(layout), zeroed_(layout.blocks(), 0) {}

void ZeroedPerBlock::add(int j, Range seg) {
    // Every line-aligned run of kLineFloats belongs to one block (block_of).
    const std::size_t end = seg.offset + seg.count;
    for (std::size_t x = seg.offset; x < end;) {
        const std::size_t next = std::min(end, (x / kLineFloats + 1) * kLineFloats);
        zeroed_[block_of(layout_, j, x)] += next - x;
        x = next;
    }
    any_ = any_ || seg.count > 0;
}

void ZeroedPerBlock::rescale(float *wire) const {
    if (!any_) return;
    const std::size_t B = layout_.block;
    auto factor = [&](std::size_t b, std::size_t len) {
        const std::size_t z = zeroed_[b];
        return z == 0 || z >= len ? 1.0f : static_cast<float>(static_cast<double>(len) / static_cast<double>(len - z));
    };
    auto scale = [](float *p, std::size_t n, float k) {
        for (std::size_t i = 0; i < n; ++i) p[i] *= k;
    };
    for (int j = 0; j < layout_.parts; ++j) {
        const ShardBlocks s = blocks_of_shard(layout_, j);
        float *w = wire + s.offset;
        for (std::size_t g = 0; g < s.m; ++g) {
            const float k = factor(s.first + g, B);
            if (k == 1.0f) continue;
            if (!s.interleaved) {
                scale(w + g * B, B, k);
                continue;
            }
            for (std::size_t line = 0; line < B / kLineFloats; ++line)
                scale(w + line * s.m * kLineFloats + g * kLineFloats, kLineFloats, k);
        }
        if (s.has_tail) scale(w + s.m * B, layout_.tail, factor(layout_.full, layout_.tail));
    }
}

}  // namespace optireduce
