// SPDX-License-Identifier: BSD-3-Clause
// The wait for hole votes, on a fake clock: a vote however late is waited for (overdue once
// past the mark, asked for less often), and only the limit ends the wait.
#include "engine/deadlines/vote_wait.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace optireduce {
namespace {

using std::chrono::milliseconds;
const Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(100);

TEST(VoteWait, AVoteWithinTheMarkIsWaitedForAndAskedForAtTheGivenPace) {
    VoteWait w(t0, 50, 60000, 2);
    EXPECT_EQ(w.step(t0), VoteWait::Step::wait);
    EXPECT_EQ(w.step(t0 + milliseconds(49)), VoteWait::Step::wait);
    EXPECT_EQ(w.every(), milliseconds(2));
    EXPECT_FALSE(w.overdue());
}

// The case that once left replicas different: a vote later than every budget (a peer stopped
// for a second). It is overdue once, then still waited for, asked for every 20 ms, not closed
// without.
TEST(VoteWait, AVoteLaterThanTheMarkIsStillWaitedFor) {
    VoteWait w(t0, 50, 60000, 2);
    EXPECT_EQ(w.step(t0 + milliseconds(51)), VoteWait::Step::overdue);
    EXPECT_TRUE(w.overdue());
    EXPECT_EQ(w.every(), milliseconds(static_cast<int>(VoteWait::kOverdueEveryMs)));
    for (int ms = 52; ms < 60000; ms += 97) EXPECT_EQ(w.step(t0 + milliseconds(ms)), VoteWait::Step::wait) << ms;
    EXPECT_EQ(w.step(t0 + milliseconds(1050)), VoteWait::Step::wait);  // a rank stopped for a second
}

TEST(VoteWait, OnlyTheLimitEndsTheWait) {
    VoteWait w(t0, 50, 60000, 2);
    EXPECT_EQ(w.step(t0 + milliseconds(59999)), VoteWait::Step::overdue);
    EXPECT_EQ(w.step(t0 + milliseconds(60000)), VoteWait::Step::give_up);
    // A limit below the mark is the mark: the vote is overdue before the wait gives up.
    VoteWait short_limit(t0, 50, 10, 2);
    EXPECT_EQ(short_limit.step(t0 + milliseconds(20)), VoteWait::Step::wait);
    EXPECT_EQ(short_limit.step(t0 + milliseconds(50)), VoteWait::Step::give_up);
}

TEST(VoteWait, ASlowResendPaceIsKeptWhenOverdue) {
    VoteWait w(t0, 50, 60000, 40);
    EXPECT_EQ(w.step(t0 + milliseconds(60)), VoteWait::Step::overdue);
    EXPECT_EQ(w.every(), milliseconds(40));
}

}  // namespace
}  // namespace optireduce
