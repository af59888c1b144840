// SPDX-License-Identifier: BSD-3-Clause
// The wire layout of bounded mode (codec/block_layout.hpp): the transform returns every input,
// of every size from 1 to 2^24 elements, powers of two or not; shards are whole blocks, cover
// the padded vector and stay balanced; every instruction set gives the same bits.
#include "codec/block_layout.hpp"

#include "test_vectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace optireduce {
namespace {

using test::random_vector;

double norm2(const float *v, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(v[i]) * v[i];
    return s;
}

// Forward then inverse returns the input within 1e-5 of its norm per element (relative),
// and the wire vector has the input's norm (orthonormal; padding adds zeros).
void expect_round_trip(std::size_t n, int parts, std::size_t block, bool interleave) {
    BlockLayout l = plan_layout(n, parts, true, block);
    l.interleave = interleave;
    const auto in = random_vector(n, static_cast<unsigned>(n * 31 + static_cast<std::size_t>(parts)));
    std::vector<float> wire(l.padded), out(n, std::nanf(""));
    const hadamard::SignKey key{7, 3, static_cast<std::uint32_t>(n)};
    encode(l, in.data(), wire.data(), key);
    const double nin = norm2(in.data(), n);
    EXPECT_NEAR(norm2(wire.data(), l.padded), nin, 1e-5 * nin + 1e-12) << "n=" << n;
    decode(l, wire.data(), out.data(), key);
    const double rms = std::sqrt(nin / static_cast<double>(n));
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(static_cast<double>(out[i]) - in[i]));
    EXPECT_LE(worst, 1e-5 * std::max(rms, 1e-30) * 4) << "n=" << n << " parts=" << parts << " block=" << block;
}

TEST(BlockLayout, RoundTripForEverySizeFrom1To2Pow24) {
    std::vector<std::size_t> sizes;
    for (std::size_t n = 1; n <= 300; ++n) sizes.push_back(n);
    for (std::size_t p = 9; p <= 24; ++p) {
        const std::size_t n = std::size_t{1} << p;
        for (std::size_t s : {n - 1, n, n + 1, n + n / 3}) sizes.push_back(s);
    }
    sizes.push_back(1000003);
    for (std::size_t n : sizes)
        if (n <= (std::size_t{1} << 24)) expect_round_trip(n, 4, 4096, true);
    // One shard: every size is transformed, however small (with 4 shards, below 4 blocks of 256
    // the vector is sent untransformed).
    for (std::size_t n = 1; n <= 300; ++n) {
        ASSERT_TRUE(plan_layout(n, 1, true, 4096).transform) << n;
        expect_round_trip(n, 1, 4096, true);
    }
    for (std::size_t n : {1u, 777u, 65536u, 200003u}) {
        expect_round_trip(n, 2, 65536, true);
        expect_round_trip(n, 3, 256, false);
        expect_round_trip(n, 7, 1024, true);
    }
}

TEST(BlockLayout, ShardsAreWholeBlocksCoverTheVectorAndStayBalanced) {
    for (int parts : {2, 3, 4, 7, 16}) {
        for (std::size_t n : {1u, 100u, 4096u, 16384u, 16385u, 262144u, 1000003u, 16777216u}) {
            const BlockLayout l = plan_layout(n, parts, true, 4096);
            // Fewer blocks of the smallest size than shards: no transform, the plain shards.
            const bool fits =
                (n + BlockLayout::kMinBlock - 1) / BlockLayout::kMinBlock >= static_cast<std::size_t>(parts);
            ASSERT_EQ(l.transform, fits) << n << " " << parts;
            if (!fits) {
                EXPECT_EQ(l.padded, n);
                for (int j = 0; j < parts; ++j) EXPECT_EQ(l.shard(j), shard_of(n, parts, j));
                continue;
            }
            EXPECT_GE(l.padded, n);
            EXPECT_LT(l.padded - n, std::max<std::size_t>(l.tail, 1));  // padding only in the tail
            std::size_t at = 0, biggest = 0, smallest = SIZE_MAX;
            for (int j = 0; j < parts; ++j) {
                const Range r = l.shard(j);
                EXPECT_EQ(r.offset, at);
                EXPECT_GT(r.count, 0u) << n << " " << parts << " shard " << j;  // no empty shard
                EXPECT_EQ(r.offset % l.block, 0u);
                at += r.count;
                biggest = std::max(biggest, r.count);
                smallest = std::min(smallest, r.count);
            }
            EXPECT_EQ(at, l.padded);
            EXPECT_EQ(l.max_shard(), biggest);
            // Balanced within two blocks (one extra, one padded tail) once every shard can have
            // kBlocksPerShard of them: within a quarter of a shard.
            if (n >= BlockLayout::kBlocksPerShard * BlockLayout::kMinBlock * static_cast<std::size_t>(parts)) {
                EXPECT_LT(static_cast<double>(biggest - smallest), 2.0 * static_cast<double>(l.block))
                    << n << " " << parts;
            }
        }
    }
}

TEST(BlockLayout, WithoutTheTransformTheWireIsTheInput) {
    const BlockLayout l = plan_layout(1001, 3, false, 4096);
    EXPECT_EQ(l.padded, 1001u);
    for (int j = 0; j < 3; ++j) EXPECT_EQ(l.shard(j), shard_of(1001, 3, j));
}

TEST(BlockLayout, LargeBlocksRoundTrip) {
    // Blocks above the default 4096 elements: the scratch grows to one block (256 KiB at
    // 65536, out of L1), the line interleave is the same.
    for (std::size_t block : {8192u, 65536u}) {
        ASSERT_EQ(plan_layout(8 * 4 * block + 77, 4, true, block).block, block);
        expect_round_trip(8 * 4 * block + 77, 4, block, true);
    }
}

void expect_same_bits_on_every_isa(std::size_t n, int parts, std::size_t block) {
    const BlockLayout l = plan_layout(n, parts, true, block);
    const auto in = random_vector(n, 5);
    const hadamard::SignKey key{1, 2, 3};
    std::vector<float> ref(l.padded), back_ref(n);
    encode(l, in.data(), ref.data(), key, Isa::scalar);
    decode(l, ref.data(), back_ref.data(), key, Isa::scalar);
    for (Isa isa : {Isa::avx2, Isa::avx512}) {
        if (!isa_supported(isa)) {
            std::printf("%s: not on this CPU, not compared\n", to_string(isa));
            continue;
        }
        std::vector<float> w(l.padded), back(n);
        encode(l, in.data(), w.data(), key, isa);
        decode(l, w.data(), back.data(), key, isa);
        EXPECT_EQ(std::memcmp(w.data(), ref.data(), w.size() * sizeof(float)), 0) << to_string(isa);
        EXPECT_EQ(std::memcmp(back.data(), back_ref.data(), n * sizeof(float)), 0) << to_string(isa);
    }
}

TEST(BlockLayout, EveryInstructionSetGivesTheSameBits) {
    expect_same_bits_on_every_isa(3 * 4096 * 8 + 1234, 3, 4096);
    expect_same_bits_on_every_isa(4 * 16384 * 8 + 99, 4, 16384);  // groups of 4 blocks
}

// Interleaving: one datagram-sized run of the wire vector (22 lines of 16 floats) touches every
// full block of a 16-block shard.
TEST(BlockLayout, ARunOfTheWireVectorSpreadsOverEveryBlockOfTheShard) {
    const std::size_t n = 4 * 16 * 4096;
    const BlockLayout l = plan_layout(n, 4, true, 4096);
    ASSERT_EQ(l.block, 4096u);
    std::vector<float> in(n, 0.0f), wire(l.padded, 0.0f), out(n);
    const hadamard::SignKey key{1, 1, 1};
    // Mark 358 consecutive wire elements of shard 1, decode them alone: which blocks they hit.
    const Range r = l.shard(1);
    for (std::size_t i = 0; i < 358; ++i) wire[r.offset + 1000 + i] = 1.0f;
    decode(l, wire.data(), out.data(), key);
    std::size_t blocks_hit = 0;
    for (std::size_t b = 0; b < n / 4096; ++b) blocks_hit += norm2(out.data() + b * 4096, 4096) > 0 ? 1 : 0;
    EXPECT_EQ(blocks_hit, 16u);  // every block of shard 1, none of the others
}

// The interleave moves whole 16-float lines: line k of a shard's g-th block (of m) is wire line
// k * m + g of that shard, the same floats as the contiguous layout's, and block_of names the
// block of every wire element; the tail block follows as is.
TEST(BlockLayout, BlocksAreInterleavedOneCacheLineAtATime) {
    for (const int parts : {1, 3, 4}) {
        const std::size_t n = static_cast<std::size_t>(parts) * 40 * 1024 + 77;
        BlockLayout inter = plan_layout(n, parts, true, 1024);
        ASSERT_EQ(inter.block, 1024u);
        BlockLayout contiguous = inter;
        contiguous.interleave = false;
        const auto in = random_vector(n, 11);
        const hadamard::SignKey key{4, 5, 6};
        std::vector<float> a(inter.padded), b(inter.padded);
        encode(inter, in.data(), a.data(), key);
        encode(contiguous, in.data(), b.data(), key);
        const std::size_t B = inter.block;
        for (int j = 0; j < parts; ++j) {
            const ShardBlocks s = blocks_of_shard(inter, j);
            ASSERT_GT(s.m, 1u);
            for (std::size_t g = 0; g < s.m; ++g)
                for (std::size_t i = 0; i < B; ++i) {
                    const std::size_t x = (i / 16) * 16 * s.m + 16 * g + i % 16;
                    ASSERT_EQ(a[s.offset + x], b[s.offset + g * B + i])
                        << "shard " << j << " block " << g << " i " << i;
                    ASSERT_EQ(block_of(inter, j, x), s.first + g);
                    ASSERT_EQ(block_of(contiguous, j, g * B + i), s.first + g);
                }
            if (s.has_tail) {
                for (std::size_t i = 0; i < inter.tail; ++i) {
                    ASSERT_EQ(a[s.offset + s.m * B + i], b[s.offset + s.m * B + i]);
                    ASSERT_EQ(block_of(inter, j, s.m * B + i), inter.full);
                }
            }
        }
    }
}

}  // namespace
}  // namespace optireduce
