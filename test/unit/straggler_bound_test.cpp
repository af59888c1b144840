// SPDX-License-Identifier: BSD-3-Clause
// The straggler bound: the maximum while calibrating (a job's first steps lose nothing), then
// above the skew the job shows, widening when a peer had to be written off, never beyond the
// user's maximum, and off (0) when the maximum is 0.
#include "engine/deadlines/straggler_bound.hpp"

#include <gtest/gtest.h>

#include <random>

namespace optireduce {
namespace {

TEST(StragglerBound, MaximumWhileCalibrating) {
    StragglerBound b(StragglerSettings{10000});
    for (int i = 0; i < StragglerBound::kCalibrationOps; ++i) {
        EXPECT_EQ(b.bound_ms(), 10000);
        b.observe(20, false);
    }
    EXPECT_LT(b.bound_ms(), 10000);
}

TEST(StragglerBound, CoversTheSkewTheJobShows) {
    // Start-time spreads uniform in [0, 400) ms, as the MPI skew test: the bound stays above
    // every one of them once learned.
    StragglerBound b(StragglerSettings{10000});
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> spread(0, 400);
    int exceeded = 0;
    for (int i = 0; i < 1000; ++i) {
        const double s = spread(rng);
        if (i >= 20 && s > b.bound_ms()) ++exceeded;
        b.observe(s, false);
    }
    EXPECT_EQ(exceeded, 0);
    EXPECT_LT(b.bound_ms(), 1000);  // and not far above it
}

TEST(StragglerBound, SmallSkewSmallBoundAtLeastTheFloor) {
    StragglerBound b(StragglerSettings{10000});
    for (int i = 0; i < 200; ++i) b.observe(0.2, false);
    EXPECT_GE(b.bound_ms(), StragglerBound::kFloorMs);
    EXPECT_LT(b.bound_ms(), 10 * StragglerBound::kFloorMs);
}

TEST(StragglerBound, WidensWhenAPeerIsWrittenOffAndNarrowsAfter) {
    StragglerBound b(StragglerSettings{10000});
    for (int i = 0; i < 200; ++i) b.observe(10, false);
    const double before = b.bound_ms();
    b.observe(10, true);
    EXPECT_GE(b.bound_ms(), 2 * before);
    for (int i = 0; i < 300; ++i) b.observe(10, false);
    EXPECT_NEAR(b.bound_ms(), before, 0.5 * before);
}

// A lost one-datagram stream looks like a straggler: write-offs at a loss rate must widen the
// bound by a bounded multiple, never escalate it towards the maximum.
TEST(StragglerBound, RepeatedWriteOffsStayWithinTheMultiple) {
    StragglerBound b(StragglerSettings{10000});
    for (int i = 0; i < 500; ++i) b.observe(1, i % 20 == 0);
    EXPECT_LE(b.bound_ms(), StragglerBound::kMaxMultiple * 2 * StragglerBound::kFloorMs);
}

TEST(StragglerBound, NeverAboveTheMaximumAndOffAtZero) {
    StragglerBound capped(StragglerSettings{100});
    for (int i = 0; i < 50; ++i) capped.observe(5000, true);
    EXPECT_EQ(capped.bound_ms(), 100);
    StragglerBound off(StragglerSettings{0});
    off.observe(50, true);
    EXPECT_EQ(off.bound_ms(), 0);
}

TEST(StragglerBound, CappedByTheDeadlinesOnceCalibrated) {
    // Huge skew (a slow link's late starts, say) would teach a bound of seconds; the deadlines the
    // job shows (both phases 100 ms) cap it at kDeadlineMultiple times their sum. Not while
    // calibrating: the first steps keep the maximum.
    StragglerBound b(StragglerSettings{10000});
    b.observe_deadlines(200);
    EXPECT_EQ(b.bound_ms(), 10000);
    for (int i = 0; i < 20; ++i) b.observe(3000, i % 2 == 0);
    EXPECT_DOUBLE_EQ(b.cap_ms(), StragglerBound::kDeadlineMultiple * 200);
    EXPECT_DOUBLE_EQ(b.bound_ms(), StragglerBound::kDeadlineMultiple * 200);
    // A job of tiny operations still gets the floor, and never more than the user's maximum.
    StragglerBound tiny(StragglerSettings{10000});
    tiny.observe_deadlines(0.5);
    EXPECT_DOUBLE_EQ(tiny.cap_ms(), StragglerBound::kCapFloorMs);
    StragglerBound low(StragglerSettings{30});
    low.observe_deadlines(200);
    EXPECT_DOUBLE_EQ(low.cap_ms(), 30);
    // The cap follows the deadlines down, slowly (the peak decays like the skew's).
    for (int i = 0; i < 5000; ++i) b.observe_deadlines(20);
    EXPECT_NEAR(b.cap_ms(), StragglerBound::kDeadlineMultiple * 20, 1e-6);
}

}  // namespace
}  // namespace optireduce
