// SPDX-License-Identifier: BSD-3-Clause
// The pure pieces of bounded mode: the loss bitmap and the send pacer (estimators: estimators_test.cpp).
#include "engine/deadlines/send_pacer.hpp"
#include "engine/dgram/chunk_bitmap.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace optireduce {
namespace {

TEST(ChunkBitmap, CountsArrivalsRejectsDuplicatesAndTracksTails) {
    ChunkBitmap m;
    const std::vector<std::uint32_t> chunks{3, 0, 70};  // rank 1 is us
    m.reset(chunks);
    EXPECT_EQ(m.expected(), 73u);
    EXPECT_FALSE(m.complete());
    EXPECT_FALSE(m.all_tails());
    EXPECT_TRUE(m.set(0, 2, true));
    EXPECT_FALSE(m.set(0, 2, true));  // duplicate
    EXPECT_TRUE(m.test(0, 2));
    EXPECT_FALSE(m.test(0, 1));
    EXPECT_EQ(m.expected_from_heard(), 3u);  // only sender 0 heard yet
    for (std::uint32_t c = 0; c < 70; ++c) EXPECT_TRUE(m.set(2, c, c == 69));
    EXPECT_TRUE(m.all_tails());
    EXPECT_FALSE(m.complete());
    EXPECT_EQ(m.received(0), 1u);
    EXPECT_TRUE(m.set(0, 0, false));
    EXPECT_TRUE(m.set(0, 1, false));
    EXPECT_TRUE(m.complete());
    EXPECT_EQ(m.received_total(), 73u);
    // Bits of one sender never alias another's (sender 2 starts at bit 3, across a word).
    m.reset(chunks);
    EXPECT_TRUE(m.set(2, 0, false));
    EXPECT_FALSE(m.test(0, 0));
    EXPECT_FALSE(m.test(0, 2));
}

// Holes are what is missing below the highest chunk that arrived; a missing end is not one.
TEST(ChunkBitmap, HolesAreGapsNotAMissingEnd) {
    ChunkBitmap m;
    const std::uint32_t chunks[] = {0, 10};
    m.reset(chunks);
    EXPECT_EQ(m.holes(1), 0u);  // nothing yet
    for (std::uint32_t c : {0u, 1u, 2u, 3u}) m.set(1, c, false);
    EXPECT_EQ(m.holes(1), 0u);  // cut short: 6 missing at the end
    m.set(1, 6, false);
    EXPECT_EQ(m.holes(1), 2u);  // 4 and 5
    m.set(1, 9, true);
    EXPECT_EQ(m.holes(1), 4u);  // 4, 5, 7, 8
}

TEST(SendPacer, BacksOffOnOverloadLossAndRecoversToUnpaced) {
    SendPacer p(3);
    EXPECT_EQ(p.rate(1), 0);  // unpaced at first
    p.update(1, 0.0, 0.001, 1e9);
    EXPECT_EQ(p.rate(1), 0);
    p.update(1, 0.05, 0.001, 1e9);
    EXPECT_DOUBLE_EQ(p.rate(1), 0.7e9);
    EXPECT_EQ(p.rate(2), 0);         // per destination
    p.update(1, 0.0, 0.001, 0.7e9);  // the cut helped: kept, then raised while clean
    EXPECT_GT(p.rate(1), 0.7e9);
    int clean = 0;
    while (p.rate(1) > 0 && clean < 100) {
        p.update(1, 0.0, 0.001, 0.7e9);
        ++clean;
    }
    EXPECT_EQ(p.rate(1), 0);
    EXPECT_LT(clean, 20);
}

// A link that drops 1% whatever the rate: the first cut does not lower the loss, so it is
// undone, and the same loss never slows the sender again (it would only make every operation
// slower: the bug this guards against took 4 MiB allreduces from 0.2 s to 0.5 s at 1% loss).
TEST(SendPacer, RandomLossIsLearntAsTheFloorAndNotPacedFor) {
    SendPacer p(2);
    p.update(1, 0.01, 0.001, 1e8);
    EXPECT_DOUBLE_EQ(p.rate(1), 0.7e8);  // first, it cannot tell: try slower
    p.update(1, 0.01, 0.001, 0.7e8);
    EXPECT_EQ(p.rate(1), 0);  // no better: back to unpaced
    EXPECT_NEAR(p.loss_floor(1), 0.01, 1e-3);
    for (int i = 0; i < 20; ++i) {
        p.update(1, 0.01, 0.001, 1e8);
        EXPECT_EQ(p.rate(1), 0) << "op " << i;
    }
    // Overload on top of the floor (5% now) is still paced for.
    p.update(1, 0.05, 0.001, 1e8);
    EXPECT_DOUBLE_EQ(p.rate(1), 0.7e8);
}

TEST(SendPacer, NeverBelowAQuarterOfTheBestRateAchieved) {
    SendPacer p(2);
    p.update(1, 0.0, 0.001, 1e8);  // 800 Mbit/s achieved once
    double loss = 0.5;
    for (int i = 0; i < 10; ++i, loss *= 0.6) p.update(1, loss, 0.001, 1e7);  // each cut helps
    EXPECT_DOUBLE_EQ(p.rate(1), 0.25e8);
}

TEST(SendPacer, NeverBelowTheFloorRate) {
    SendPacer p(2);
    double loss = 0.5;
    for (int i = 0; i < 5; ++i, loss *= 0.6) p.update(1, loss, 0.001, 1e3);  // each cut helps
    EXPECT_DOUBLE_EQ(p.rate(1), SendPacer::kFloorBytesPerS);
}

}  // namespace
}  // namespace optireduce
