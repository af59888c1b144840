// SPDX-License-Identifier: BSD-3-Clause
// The sender's kernel-queue budget (engine/deadlines/queue_budget.hpp) with a clock of the test's own: a
// slow link's queue is held to what it drains before the limit (from the previous phase's rate
// until its own is measured), a fast link's never, an unknown queue or rate holds nothing.
#include "engine/deadlines/queue_budget.hpp"

#include <gtest/gtest.h>

namespace optireduce {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(100);

// A host queue of `capacity` bytes that a link drains at `rate` bytes/s, fed as fast as the
// budget allows, until `limit`: what it still holds at the limit. `prior_rate`: the rate the
// previous phase measured.
std::int64_t queued_at_limit(double rate, double prior_rate, std::int64_t capacity, Clock::duration limit_after,
                             bool budget_on) {
    QueueBudget budget;
    const Clock::time_point limit = t0 + limit_after;
    budget.start(t0, 0, prior_rate);
    double queued = 0;
    std::uint64_t handed = 0;
    Clock::time_point now = t0;
    const Clock::duration step = microseconds(100);
    while (now < limit) {
        // A round: at most three 64 KiB runs, what the kernel has room for, and with the budget
        // on what its room allows.
        double hand = std::min(192.0 * 1024, static_cast<double>(capacity) - queued);
        if (budget_on) hand = std::min(hand, static_cast<double>(budget.room(now, QueueDeadline{limit})));
        if (hand >= 1472) {
            handed += static_cast<std::uint64_t>(hand);
            queued += hand;
        }
        budget.observe(now, handed, static_cast<std::int64_t>(queued));
        now += step;
        queued = std::max(0.0, queued - rate * std::chrono::duration<double>(step).count());
    }
    return static_cast<std::int64_t>(queued);
}

TEST(QueueBudget, ASlowLinksQueueIsEmptyWhenItsReceiversStopWaiting) {
    // 90 Mbit/s, 2 MB of socket buffer and host queue (about 180 ms of data), 150 ms left.
    const double rate = 90e6 / 8;
    const std::int64_t without = queued_at_limit(rate, rate, 2'000'000, milliseconds(150), false);
    EXPECT_GT(without, 1'000'000) << "without the budget the queue stays full: the test tests nothing";
    const std::int64_t with = queued_at_limit(rate, rate, 2'000'000, milliseconds(150), true);
    EXPECT_LE(with, QueueBudget::kAlwaysQueued) << "a long queue is left at the limit";
    // The previous phase ran on a fast link (the cut began since): its first round fills the
    // queue, and from the measured rate on nothing more is queued than the link drains in time.
    const std::int64_t after_cut = queued_at_limit(rate, 125e6, 2'000'000, milliseconds(250), true);
    EXPECT_LE(after_cut, QueueBudget::kAlwaysQueued);
    // No prior at all: the same.
    EXPECT_LE(queued_at_limit(rate, 0, 2'000'000, milliseconds(250), true), QueueBudget::kAlwaysQueued);
}

TEST(QueueBudget, AFastLinkIsNeverHeld) {
    QueueBudget budget;
    budget.start(t0, 0, 0);
    // 1 Gbit/s: 2 MB queued with 100 ms left is 16 ms of data.
    budget.observe(t0 + milliseconds(10), 3'250'000, 2'000'000);
    EXPECT_NEAR(budget.rate(), 125e6, 1e6);
    EXPECT_GT(budget.room(t0 + milliseconds(10), QueueDeadline{t0 + milliseconds(110)}), 10'000'000);
    EXPECT_EQ(budget.hold(64 * 1024, t0 + milliseconds(10), QueueDeadline{t0 + milliseconds(110)}),
              Clock::duration::zero());
}

TEST(QueueBudget, RoomIsWhatTheLinkDrainsBeforeTheLimitLessWhatIsQueued) {
    QueueBudget budget;
    budget.start(t0, 0, 0);
    // 10 MB/s measured; 400 KB queued with 50 ms left (500 KB): room for 100 KB.
    budget.observe(t0 + milliseconds(100), 1'400'000, 400'000);
    EXPECT_NEAR(budget.rate(), 10e6, 1e3);
    const Clock::time_point now = t0 + milliseconds(100), limit = now + milliseconds(50);
    EXPECT_NEAR(static_cast<double>(budget.room(now, QueueDeadline{limit})), 100e3, 1e3);
    EXPECT_EQ(budget.hold(64 * 1024, now, QueueDeadline{limit}), Clock::duration::zero());
    // 600 KB queued: none, and waiting makes none at this rate (the queue and the time left
    // shrink alike): held a millisecond at a time, to see whether the rate changed.
    budget.observe(now, 1'600'000, 600'000);
    EXPECT_EQ(budget.room(now, QueueDeadline{limit}), 0);
    EXPECT_EQ(budget.hold(5000, now, QueueDeadline{limit}), QueueBudget::kMaxHold);
    budget.observe(now + milliseconds(10), 1'600'000, 500'000);
    EXPECT_EQ(budget.room(now + milliseconds(10), QueueDeadline{limit}), 0);
    // Past the limit: only a short queue (kAlwaysQueued) may be kept.
    budget.observe(now, 1'000'000, 0);
    EXPECT_EQ(budget.room(limit, QueueDeadline{limit}), QueueBudget::kAlwaysQueued);
    budget.observe(now, 1'150'000, 150'000);
    EXPECT_EQ(budget.room(limit, QueueDeadline{limit}), 0);
    EXPECT_EQ(budget.hold(5000, limit + milliseconds(1), QueueDeadline{limit}), QueueBudget::kMaxHold);
    // With a grace window: past the deadline a queue that drains within it may still be kept (a
    // late receiver takes what comes by then), no longer one. 20 ms at 10 MB/s: 200 KB.
    const QueueDeadline graced{limit, milliseconds(20)};
    EXPECT_NEAR(static_cast<double>(budget.room(limit + milliseconds(5), graced)), 50e3, 1e3);
    budget.observe(now, 1'250'000, 250'000);
    EXPECT_EQ(budget.room(limit + milliseconds(5), graced), 0);
}

TEST(QueueBudget, ASlowPathQueuesOnlyWhatDrainsBeforeItsReceiversCutIt) {
    // 90 Mbit/s measured, 500 KB queued and 5 MB of the phase unsent: 490 ms to drain, past the
    // receivers' end plus the flowing wait (300 ms from now), so they cut the stream half a
    // deadline after its start (50 ms from now): room only for what drains by then (562 KB,
    // less the 500 KB queued), not for what drains by their end (200 ms: 2.25 MB).
    QueueBudget budget;
    budget.start(t0, 0, 0);
    const double rate = 90e6 / 8;
    budget.observe(t0 + milliseconds(100), 1'625'000, 500'000);
    ASSERT_NEAR(budget.rate(), rate, 1e3);
    const Clock::time_point now = t0 + milliseconds(100);
    const QueueDeadline d{now + milliseconds(200), milliseconds(10), now + milliseconds(300), now + milliseconds(50)};
    EXPECT_TRUE(budget.slow_path(now, d, 5'000'000));
    EXPECT_NEAR(static_cast<double>(budget.room(now, d, 5'000'000)), 62'500, 1e3);
    // What can drain by then (1 MB unsent: 133 ms) keeps the whole window.
    EXPECT_FALSE(budget.slow_path(now, d, 1'000'000));
    EXPECT_NEAR(static_cast<double>(budget.room(now, d, 1'000'000)), 1'750'000, 1e3);
    // A queue of kAlwaysQueued or less: the rate is our core's, not the link's (a sender that
    // lost its core hands over little), and nothing is cut.
    budget.observe(now, 1'225'000, 100'000);
    EXPECT_FALSE(budget.slow_path(now, d, 50'000'000));
}

TEST(QueueBudget, UnknownQueueOrRateHoldsNothing) {
    QueueBudget budget;
    budget.start(t0, -1, 10e6);  // the channel cannot tell
    budget.observe(t0 + milliseconds(50), 1'000'000, -1);
    EXPECT_EQ(budget.room(t0 + milliseconds(50), QueueDeadline{t0 + milliseconds(51)}), QueueBudget::kUnlimited);
    EXPECT_EQ(budget.hold(64 * 1024, t0 + milliseconds(50), QueueDeadline{t0 + milliseconds(51)}),
              Clock::duration::zero());
    budget.start(t0, 0, 0);  // too early to know the rate, no prior
    budget.observe(t0 + microseconds(500), 1'000'000, 1'000'000);
    EXPECT_EQ(budget.rate(), 0);
    EXPECT_EQ(budget.room(t0 + microseconds(500), QueueDeadline{t0 + microseconds(600)}), QueueBudget::kUnlimited);
}

TEST(QueueBudget, WhatTheKernelHeldAtTheStartCountsAsDrainedWhenItLeaves) {
    QueueBudget budget;
    budget.start(t0, 400'000, 0);                       // the previous phase's data still queued
    budget.observe(t0 + milliseconds(20), 0, 200'000);  // nothing handed, 200 KB left in 20 ms
    EXPECT_NEAR(budget.rate(), 10e6, 1e3);
}

}  // namespace
}  // namespace optireduce
