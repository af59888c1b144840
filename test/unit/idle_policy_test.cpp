// SPDX-License-Identifier: BSD-3-Clause
// The wait loops' spin rule (engine/deadlines/idle_policy.hpp) with a made-up clock: a spin that follows
// the arrivals, never longer than kSpinMax, none for sparse arrivals or on an oversubscribed node.
#include "engine/deadlines/idle_policy.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using optireduce::Clock;
using optireduce::IdlePolicy;

namespace {

// Events every `gap`, `n` of them, from t0; returns when the last one came.
Clock::time_point events(IdlePolicy &p, Clock::time_point t0, Clock::duration gap, int n) {
    Clock::time_point t = t0;
    for (int i = 0; i < n; ++i) p.event(t += gap);
    return t;
}

}  // namespace

TEST(IdlePolicy, NoSpinBeforeArrivalsComeClose) {
    const Clock::time_point t0{};
    IdlePolicy p(false, t0);
    EXPECT_TRUE(p.idle(t0));
    EXPECT_EQ(p.spin(), Clock::duration::zero());
}

TEST(IdlePolicy, DenseArrivalsSpinAboutTwiceTheGap) {
    const Clock::time_point t0{};
    IdlePolicy p(false, t0);
    const Clock::time_point t = events(p, t0, 10us, 40);
    EXPECT_GE(p.spin(), 19us);
    EXPECT_LE(p.spin(), 21us);
    EXPECT_FALSE(p.idle(t + 15us));  // the next datagram is due: poll again
    EXPECT_TRUE(p.idle(t + 21us));
}

TEST(IdlePolicy, SpinNeverExceedsItsCap) {
    const Clock::time_point t0{};
    IdlePolicy p(false, t0);
    const Clock::time_point t = events(p, t0, 40us, 40);  // twice the gap would be 80 us
    EXPECT_EQ(p.spin(), IdlePolicy::kSpinMax);
    EXPECT_TRUE(p.idle(t + IdlePolicy::kSpinMax));
}

TEST(IdlePolicy, SparseArrivalsSleepAtOnce) {
    // The 200 us spin this replaced would poll for 200 us after every one of these.
    const Clock::time_point t0{};
    IdlePolicy p(false, t0);
    const Clock::time_point t = events(p, t0, 300us, 20);
    EXPECT_EQ(p.spin(), Clock::duration::zero());
    EXPECT_TRUE(p.idle(t + 1us));
}

TEST(IdlePolicy, SpinComesBackWhenTheFlowSpeedsUp) {
    const Clock::time_point t0{};
    IdlePolicy p(false, t0);
    Clock::time_point t = events(p, t0, 1ms, 10);
    EXPECT_EQ(p.spin(), Clock::duration::zero());
    t = events(p, t, 5us, 30);
    EXPECT_GT(p.spin(), Clock::duration::zero());
    EXPECT_LE(p.spin(), 12us);
    EXPECT_FALSE(p.idle(t + 5us));
}

TEST(IdlePolicy, OversubscribedNeverSpins) {
    const Clock::time_point t0{};
    IdlePolicy p(true, t0);
    const Clock::time_point t = events(p, t0, 5us, 40);
    EXPECT_EQ(p.spin(), Clock::duration::zero());
    EXPECT_TRUE(p.idle(t));
}
