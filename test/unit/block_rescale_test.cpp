// SPDX-License-Identifier: BSD-3-Clause
// Rescaling after zeroed wire elements (codec/block_rescale.hpp): each block that lost part of
// its wire is scaled by its own fraction, blocks that lost nothing are left exact, and the
// decoded result is unbiased over the random signs.
#include "codec/block_rescale.hpp"

#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace optireduce {
namespace {

using test::random_vector;

// 64 blocks of 256 and a tail block of 128 in 4 shards: shard 1 holds 16 full blocks (wire rows
// of 256 floats), shard 3 15 and the tail.
constexpr std::size_t kN = 4 * 16 * 256 + 100;

BlockLayout layout() {
    const BlockLayout l = plan_layout(kN, 4, true, 256);
    EXPECT_EQ(l.block, 256u);
    EXPECT_EQ(l.tail, 128u);
    return l;
}

// Zeroes wire elements [at, at + count) of shard j, counting them.
void zero(const BlockLayout &l, std::vector<float> &wire, ZeroedPerBlock &z, int j, std::size_t at, std::size_t count) {
    const Range r = l.shard(j);
    for (std::size_t i = at; i < at + count; ++i) wire[r.offset + i] = 0.0f;
    z.add(j, {at, count});
}

TEST(BlockRescale, CountsPerBlockAndScalesOnlyTheBlocksThatLostElements) {
    const BlockLayout l = layout();
    std::vector<float> wire(l.padded, 1.0f);
    ZeroedPerBlock z(l);
    EXPECT_FALSE(z.any());
    // Shard 1, wire elements 40..87: the last 8 floats of its block 2's line 0, all of block 3's
    // and block 4's, the first 8 of block 5's.
    const ShardBlocks s1 = blocks_of_shard(l, 1);
    ASSERT_EQ(s1.m, 16u);
    const std::size_t f = s1.first;
    zero(l, wire, z, 1, 40, 48);
    // The tail block (shard 3, after its full blocks): 32 of its 128.
    const ShardBlocks s3 = blocks_of_shard(l, 3);
    ASSERT_TRUE(s3.has_tail);
    zero(l, wire, z, 3, s3.m * 256 + 10, 32);
    EXPECT_TRUE(z.any());
    for (std::size_t b = 0; b < l.blocks(); ++b) {
        const std::size_t want = b == f + 2 || b == f + 5 ? 8 : b == f + 3 || b == f + 4 ? 16 : b == l.full ? 32 : 0;
        EXPECT_EQ(z.zeroed(b), want) << "block " << b;
    }
    z.rescale(wire.data());
    for (int j = 0; j < 4; ++j) {
        const Range r = l.shard(j);
        for (std::size_t x = 0; x < r.count; ++x) {
            const float v = wire[r.offset + x];
            if (v == 0.0f) continue;
            const std::size_t b = block_of(l, j, x);
            const double want = b == f + 2 || b == f + 5   ? 256.0 / 248
                                : b == f + 3 || b == f + 4 ? 256.0 / 240
                                : b == l.full              ? 128.0 / 96
                                                           : 1.0;
            ASSERT_FLOAT_EQ(v, static_cast<float>(want)) << "shard " << j << " element " << x << " block " << b;
        }
    }
}

// A block that lost all of its wire has nothing to scale; the others are unaffected.
TEST(BlockRescale, AWhollyLostBlockStaysZero) {
    BlockLayout l = layout();
    l.interleave = false;
    std::vector<float> wire(l.padded, 2.0f);
    ZeroedPerBlock z(l);
    zero(l, wire, z, 0, 256, 256);  // block 1 whole
    z.rescale(wire.data());
    for (std::size_t i = 0; i < l.padded; ++i) ASSERT_EQ(wire[i], i >= 256 && i < 512 ? 0.0f : 2.0f) << i;
}

// Decoded over many sign keys, a vector whose wire lost one 48-float run keeps its blocks
// unbiased: the blocks that lost nothing decode exactly, and for those that lost a line the mean
// projection on the truth stays 1 (without rescaling it is 1 - 16/256 = 0.9375 for a whole line;
// with one factor for the whole shard, 1 - 16/256 + 48/4096 for it and 1.012 for the others).
TEST(BlockRescale, TheResultStaysUnbiasedPerBlock) {
    const BlockLayout l = layout();
    const std::size_t f = blocks_of_shard(l, 1).first;
    const auto in = random_vector(kN, 3);
    constexpr int kKeys = 400;
    std::vector<double> mean(kN, 0.0);
    for (int k = 0; k < kKeys; ++k) {
        const hadamard::SignKey key{17, 2, static_cast<std::uint32_t>(k)};
        std::vector<float> wire(l.padded), out(kN);
        encode(l, in.data(), wire.data(), key);
        ZeroedPerBlock z(l);
        zero(l, wire, z, 1, 40, 48);
        z.rescale(wire.data());
        decode(l, wire.data(), out.data(), key);
        for (std::size_t i = 0; i < kN; ++i) mean[i] += out[i] / kKeys;
        if (k == 0) {
            // Blocks that lost nothing come back exactly (to the transform's rounding).
            for (std::size_t b = 0; b < l.full; ++b) {
                if (b >= f + 2 && b <= f + 5) continue;
                for (std::size_t i = b * 256; i < b * 256 + 256; ++i) ASSERT_NEAR(out[i], in[i], 1e-4) << "block " << b;
            }
        }
    }
    for (std::size_t b = f + 2; b <= f + 5; ++b) {
        double dot = 0, sq = 0;
        for (std::size_t i = b * 256; i < b * 256 + 256; ++i) {
            dot += mean[i] * in[i];
            sq += static_cast<double>(in[i]) * in[i];
        }
        // Blocks f + 3 and f + 4 lost a whole line (16 of 256): the bias to catch is 0.0625; the mean over
        // 400 keys has a standard error of about 0.006 here.
        EXPECT_NEAR(dot / sq, 1.0, 0.025) << "block " << b;
    }
}

}  // namespace
}  // namespace optireduce
