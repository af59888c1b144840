// SPDX-License-Identifier: BSD-3-Clause
// Keeping the result unbiased when wire elements are zeroed (docs/architecture.md, "Estimating
// what was lost"). With the transform, a coordinate of the result is a random-signed mix of its
// block's wire coordinates, so zeroing a fraction f of one block's wire shrinks that block's
// coordinates by 1 - f on average over the signs; scaling the block's other wire elements by
// 1 / (1 - f) undoes it. The fraction is per block, not per shard: the wire layout interleaves
// blocks a line at a time (codec/block_layout.hpp), so a lost datagram takes a line from each of
// a few dozen blocks and nothing from the rest. Pure arithmetic over the layout; every rank that
// zeroes the same elements computes the same factors.
#pragma once

#include "codec/block_layout.hpp"

#include <cstddef>
#include <vector>

namespace optireduce {

class ZeroedPerBlock {
public:
    explicit ZeroedPerBlock(const BlockLayout &layout);

    // Elements [seg.offset, seg.offset + seg.count) of shard j's wire were zeroed.
    void add(int j, Range seg);
    bool any() const { return any_; }
    // The block's zeroed elements (global block index).
    std::size_t zeroed(std::size_t block) const { return zeroed_[block]; }

    // Multiplies every element of each block that lost some, but not all, of its wire by
    // (block length) / (length - zeroed); `wire` is the whole wire vector (layout.padded).
    void rescale(float *wire) const;

private:
    const BlockLayout &layout_;
    std::vector<std::size_t> zeroed_;
    bool any_ = false;
};

}  // namespace optireduce
