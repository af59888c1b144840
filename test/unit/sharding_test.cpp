// SPDX-License-Identifier: BSD-3-Clause
// The shard and segment arithmetic runs independently on every rank and must tile the buffer
// exactly: a gap is an element nobody reduces, an overlap one that is summed twice. The sizes
// cover the edges where remainder handling goes wrong (fewer elements than ranks, exact
// multiples, one over, primes and powers of two plus or minus one).
#include "codec/sharding.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <vector>

namespace optireduce {
namespace {

std::vector<std::size_t> sizes_for(int parts) {
    const std::size_t n = static_cast<std::size_t>(parts);
    std::vector<std::size_t> out{0, 1, n - 1, n, n + 1, 2 * n - 1, 2 * n + 1, 1000 * n + n - 1};
    for (std::size_t p : {2u, 3u, 5u, 7u, 11u, 13u, 97u, 997u, 65537u, 1000003u}) out.push_back(p);
    for (int k = 1; k <= 24; ++k) {
        const std::size_t pow2 = std::size_t{1} << k;
        out.insert(out.end(), {pow2 - 1, pow2, pow2 + 1});
    }
    return out;
}

TEST(Sharding, ShardsTileTheBufferWithSizesWithinOne) {
    for (int parts = 1; parts <= 9; ++parts) {
        for (std::size_t n : sizes_for(parts)) {
            SCOPED_TRACE(testing::Message() << "n=" << n << " parts=" << parts);
            std::size_t next = 0, smallest = n, largest = 0;
            for (int i = 0; i < parts; ++i) {
                const Range r = shard_of(n, parts, i);
                ASSERT_EQ(r.offset, next) << "shard " << i << " leaves a gap or overlaps";
                next += r.count;
                smallest = std::min(smallest, r.count);
                largest = std::max(largest, r.count);
            }
            EXPECT_EQ(next, n);
            EXPECT_LE(largest - smallest, 1u);
        }
    }
}

// The remainder goes to the first shards, so a rank can compute any peer's shard without
// communication and larger shards never follow smaller ones.
TEST(Sharding, RemainderGoesToTheFirstShards) {
    for (int parts = 1; parts <= 9; ++parts) {
        for (std::size_t n : sizes_for(parts)) {
            const std::size_t p = static_cast<std::size_t>(parts);
            for (int i = 0; i < parts; ++i) {
                const std::size_t expected = n / p + (static_cast<std::size_t>(i) < n % p ? 1 : 0);
                EXPECT_EQ(shard_of(n, parts, i).count, expected) << "n=" << n << " parts=" << parts << " i=" << i;
            }
        }
    }
}

TEST(Sharding, FewerElementsThanRanksLeavesTrailingShardsEmpty) {
    for (int i = 0; i < 5; ++i) {
        const Range r = shard_of(3, 5, i);
        EXPECT_EQ(r.count, i < 3 ? 1u : 0u);
        EXPECT_EQ(r.offset, static_cast<std::size_t>(std::min(i, 3)));
    }
}

TEST(Segments, SegmentsTileEveryShard) {
    for (int parts = 1; parts <= 9; ++parts) {
        for (std::size_t n : sizes_for(parts)) {
            for (std::size_t seg :
                 {std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{1024}, std::size_t{65536}}) {
                for (int i = 0; i < parts; ++i) {
                    const std::size_t count = shard_of(n, parts, i).count;
                    const std::size_t segs = segment_count(count, seg);
                    // Walking millions of one-element segments proves nothing the larger
                    // segment sizes do not, and costs seconds.
                    if (segs > 4096) continue;
                    SCOPED_TRACE(testing::Message()
                                 << "n=" << n << " parts=" << parts << " shard=" << i << " seg=" << seg);
                    std::size_t next = 0;
                    for (std::size_t s = 0; s < segs; ++s) {
                        const Range r = segment_of(count, seg, s);
                        ASSERT_EQ(r.offset, next);
                        ASSERT_GT(r.count, 0u) << "empty segment " << s;
                        ASSERT_LE(r.count, seg);
                        if (s + 1 < segs) {
                            ASSERT_EQ(r.count, seg) << "short segment mid-shard";
                        }
                        next += r.count;
                    }
                    ASSERT_EQ(next, count);
                }
            }
        }
    }
}

TEST(Segments, CountEdgeCases) {
    EXPECT_EQ(segment_count(0, 16), 0u);
    EXPECT_EQ(segment_count(1, 16), 1u);
    EXPECT_EQ(segment_count(16, 16), 1u);
    EXPECT_EQ(segment_count(17, 16), 2u);
    EXPECT_EQ(segment_of(17, 16, 1), (Range{16, 1}));
}

// Every rank sends to each other rank exactly once, never to itself.
TEST(StaggeredPeer, VisitsEveryOtherRankOnce) {
    for (int parts = 1; parts <= 9; ++parts) {
        for (int rank = 0; rank < parts; ++rank) {
            std::set<int> seen;
            for (int k = 1; k < parts; ++k) {
                const int peer = staggered_peer(rank, parts, k);
                EXPECT_NE(peer, rank);
                EXPECT_GE(peer, 0);
                EXPECT_LT(peer, parts);
                EXPECT_TRUE(seen.insert(peer).second) << "rank " << rank << " repeats " << peer;
            }
            EXPECT_EQ(seen.size(), static_cast<std::size_t>(parts - 1));
        }
    }
}

// The point of staggering: at each step the ranks target distinct receivers (no incast).
TEST(StaggeredPeer, EachStepIsAPermutation) {
    for (int parts = 2; parts <= 9; ++parts) {
        for (int k = 1; k < parts; ++k) {
            std::set<int> targets;
            for (int rank = 0; rank < parts; ++rank) targets.insert(staggered_peer(rank, parts, k));
            EXPECT_EQ(targets.size(), static_cast<std::size_t>(parts)) << "parts=" << parts << " k=" << k;
        }
    }
}

}  // namespace
}  // namespace optireduce
