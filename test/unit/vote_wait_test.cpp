// SPDX-License-Identifier: BSD-3-Clause
// How long an operation waits for hole votes: the base its deadlines give, plus what the
// exchanges showed (how long past the base they took, and votes that came after they closed),
// forgotten slowly and never more than the cap.
#include "engine/deadlines/vote_wait.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace optireduce {
namespace {

TEST(VoteWait, ExchangesWithinTheBaseLeaveTheBudgetAtTheBase) {
    VoteWait w;
    for (int i = 0; i < 10; ++i) {
        w.learn_late(0);
        w.learn_took(-5);  // done 5 ms before the base ran out
    }
    EXPECT_DOUBLE_EQ(w.budget_ms(7, 300), 7);
}

// The 10.5 M-parameter benchmark's small operations: a base of 7 ms, and a peer's vote that came
// 4 ms after we had closed at the base. The next budgets cover it with a margin, whatever their
// own base, and forget it over a few hundred operations.
TEST(VoteWait, ALateVoteWidensTheNextBudgetsThenIsForgotten) {
    VoteWait w;
    w.learn_late(4);
    const double extra = VoteWait::kMargin * 4 + VoteWait::kSlackMs;
    EXPECT_DOUBLE_EQ(w.budget_ms(7, 300), 7 + extra);
    EXPECT_DOUBLE_EQ(w.budget_ms(20, 300), 20 + extra);
    w.learn_late(1);  // a smaller lesson does not shrink it
    EXPECT_DOUBLE_EQ(w.extra_ms(), VoteWait::kDecay * extra);
    for (int i = 0; i < 139; ++i) w.learn_late(0);  // about its half-life
    EXPECT_LT(w.extra_ms(), 0.55 * extra);
    EXPECT_GT(w.extra_ms(), 0.45 * extra);
    for (int i = 0; i < 1500; ++i) w.learn_late(0);
    EXPECT_LT(w.budget_ms(7, 300), 7.01);
}

// Exchanges that end past the base, with every vote in, widen the budget before a vote is
// missed: one that took 12 ms past it among quick ones leaves room for more than 12.
TEST(VoteWait, ExchangesThatRanPastTheBaseWidenItBeforeAVoteIsMissed) {
    VoteWait w;
    for (int i = 0; i < 20; ++i) w.learn_took(-3);
    w.learn_took(12);
    EXPECT_GT(w.budget_ms(7, 300), 7 + 12);
    for (int i = 0; i < 3; ++i) w.learn_took(-3);
    EXPECT_GT(w.budget_ms(7, 300), 7 + 6);
    for (int i = 0; i < 100; ++i) w.learn_took(-3);
    EXPECT_LT(w.budget_ms(7, 300), 7.01);
}

TEST(VoteWait, NeverWaitsPastTheCap) {
    VoteWait w;
    w.learn_late(1000);
    EXPECT_DOUBLE_EQ(w.budget_ms(7, 50), 57);
    EXPECT_DOUBLE_EQ(w.budget_ms(7, 5000), 7 + VoteWait::kMargin * 1000 + VoteWait::kSlackMs);
    EXPECT_DOUBLE_EQ(w.budget_ms(7, 0), 7);
    EXPECT_DOUBLE_EQ(w.budget_ms(7, -1), 7);
}

// A peer's lesson widens our budget as our own would; what our vote carries is the lesson in
// 0.1 ms, rounded down and saturated.
TEST(VoteWait, APeersLessonWidensOurBudgetAndOurVoteCarriesOurs) {
    VoteWait w;
    EXPECT_EQ(w.lesson_100us(), 0);
    w.learn_from_peers(13);
    EXPECT_DOUBLE_EQ(w.budget_ms(7, 300), 7 + 13);
    w.learn_from_peers(4);  // a smaller one does not shrink it
    EXPECT_DOUBLE_EQ(w.extra_ms(), 13);
    w.learn_late(0);  // decays like our own
    EXPECT_EQ(w.lesson_100us(), 129);  // 12.935 ms
    w.learn_from_peers(1e6);
    EXPECT_EQ(w.lesson_100us(), 65535);
}

// The order the engine keeps (bounded_holes.cpp): decay at an operation's start, then the vote
// carries the lesson, then the peers' lessons of that exchange are taken. Passed around four ranks
// that way, a lesson fades as fast as one rank's alone would: the largest decays every operation.
TEST(VoteWait, ALessonPassedAroundFadesAsFastAsOne) {
    constexpr int kRanks = 4, kOps = 1000;
    VoteWait w[kRanks];
    w[2].learn_late(40);  // rank 2 saw a vote 40 ms late
    VoteWait alone;
    alone.learn_late(40);
    for (int op = 0; op < kOps; ++op) {
        std::uint16_t sent[kRanks];
        for (int r = 0; r < kRanks; ++r) {
            w[r].learn_late(0);
            sent[r] = w[r].lesson_100us();
        }
        for (int r = 0; r < kRanks; ++r)
            for (int p = 0; p < kRanks; ++p)
                if (p != r) w[r].learn_from_peers(sent[p] / 10.0);
        alone.learn_late(0);
    }
    // Passed around, it never fades slower than alone (rounding down only speeds it up), and
    // after 1000 operations both are under 1% of what they were.
    for (int r = 0; r < kRanks; ++r) EXPECT_LE(w[r].extra_ms(), alone.extra_ms()) << r;
    EXPECT_LT(alone.extra_ms(), 0.01 * (VoteWait::kMargin * 40 + VoteWait::kSlackMs));
}

}  // namespace
}  // namespace optireduce
