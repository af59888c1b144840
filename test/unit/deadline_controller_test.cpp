// SPDX-License-Identifier: BSD-3-Clause
// The adaptive deadline: calibration, reaction to a slower and a faster network, the loss
// budget, clamps, pinning, and that silent senders (stragglers) do not drag the deadline up.
#include "engine/deadlines/deadline_controller.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace optireduce {
namespace {

constexpr std::size_t kBytes = 1 << 20;

PhaseOutcome complete_after(double ms) { return {ms, ms, 100, 100}; }

DeadlineController calibrated(double ms, DeadlineSettings s = {}) {
    DeadlineController c(s);
    for (int i = 0; i < 20; ++i) c.observe(kBytes, 1, complete_after(ms));
    return c;
}

TEST(DeadlineController, MaxWhileCalibratingThenNearTheObservedTime) {
    DeadlineController c(DeadlineSettings{0.001, 0.5, 1000, 0});
    for (int i = 0; i < DeadlineController::kCalibrationOps; ++i) {
        EXPECT_EQ(c.deadline_ms(kBytes, 1), 1000);
        c.observe(kBytes, 1, complete_after(10));
    }
    const double d = c.deadline_ms(kBytes, 1);
    EXPECT_GT(d, 10);
    EXPECT_LT(d, 100);
    // Many steady operations: the deviation decays and the deadline approaches the mean.
    const DeadlineController steady = calibrated(10);
    EXPECT_GT(steady.deadline_ms(kBytes, 1), 10);
    EXPECT_LT(steady.deadline_ms(kBytes, 1), 15);
}

TEST(DeadlineController, SizeClassesAndPhasesAreIndependent) {
    DeadlineController c = calibrated(10);
    EXPECT_EQ(c.deadline_ms(kBytes, 2), 1000);
    EXPECT_EQ(c.deadline_ms(kBytes * 4, 1), 1000);
    EXPECT_LT(c.deadline_ms(kBytes + 1000, 1), 1000);  // same power of two
    // The reduce-scatter learns nothing from the all-gather.
    for (int i = 0; i < 20; ++i) c.observe(kBytes, 2, complete_after(100));
    EXPECT_LT(c.deadline_ms(kBytes, 1), 15);
}

TEST(DeadlineController, APipelinedAllGatherIsNeverGivenLessTimeThanTheReduceScatter) {
    // Back-to-back calls: the reduce-scatter takes 6 ms; nearly all of the all-gather went out
    // early, so its streams' rest arrives within 0.05 ms of their start. Its own deadline falls
    // to the 0.5 ms floor; the one applied is the reduce-scatter's, as are peers' shorter ones.
    DeadlineController c = calibrated(6);
    for (int i = 0; i < 20; ++i) c.observe(kBytes, 2, complete_after(0.05));
    EXPECT_EQ(c.own_deadline_ms(kBytes, 2), 0.5);
    EXPECT_GT(c.deadline_ms(kBytes, 1), 6);
    EXPECT_EQ(c.deadline_ms(kBytes, 2), c.deadline_ms(kBytes, 1));
    c.observe_peer(kBytes, 2, 1, 0.5);
    c.observe_peer(kBytes, 2, 2, 0.5);
    EXPECT_EQ(c.deadline_ms(kBytes, 2), c.deadline_ms(kBytes, 1));
    // A longer all-gather keeps its own.
    DeadlineController slow = calibrated(6);
    for (int i = 0; i < 20; ++i) slow.observe(kBytes, 2, complete_after(30));
    EXPECT_GT(slow.deadline_ms(kBytes, 2), 30);
}

// A link that gets 4x slower: phases hit the deadline with part of the data; within a few
// operations the deadline has grown past the new completion time.
TEST(DeadlineController, ReactsWithinAFewOperationsWhenTheNetworkSlowsDown) {
    DeadlineController c = calibrated(10);
    int ops = 0;
    while (c.deadline_ms(kBytes, 1) < 40 && ops < 20) {
        const double d = c.deadline_ms(kBytes, 1);
        const auto received = static_cast<std::uint64_t>(100 * d / 40);  // at the new rate
        c.observe(kBytes, 1, {d, d, 100, received});
        ++ops;
    }
    EXPECT_LE(ops, 5) << "deadline " << c.deadline_ms(kBytes, 1);
}

TEST(DeadlineController, ReactsWithinAFewOperationsWhenTheNetworkSpeedsUp) {
    DeadlineController c = calibrated(40);
    int ops = 0;
    while (c.deadline_ms(kBytes, 1) > 20 && ops < 30) {
        c.observe(kBytes, 1, complete_after(10));
        ++ops;
    }
    EXPECT_LE(ops, 10) << "deadline " << c.deadline_ms(kBytes, 1);
}

TEST(DeadlineController, LossAboveTheTargetWidensAndBelowItNarrows) {
    DeadlineController c = calibrated(10);
    const double before = c.deadline_ms(kBytes, 1);
    // Completion times unchanged, but 5% of the data missed the deadline: widen.
    c.observe(kBytes, 1, {10, 10, 100, 95});
    const double widened = c.deadline_ms(kBytes, 1);
    EXPECT_GT(widened, before * 1.3);
    for (int i = 0; i < 100; ++i) c.observe(kBytes, 1, complete_after(10));
    EXPECT_LT(c.deadline_ms(kBytes, 1), widened);
}

// Loss is not lateness. A phase cut at the deadline after data had stopped arriving lost what is
// missing to the network: neither its span extrapolated by the fraction received nor the loss
// may widen the deadline. Behind a slow link whose queue dropped most of an incast (its tail
// datagrams too, so no early close), that taught a deadline of seconds, which the rank then
// waited out every operation while its peers waited for it.
TEST(DeadlineController, LossInTheNetworkDoesNotWidenTheDeadline) {
    // An early close learns the span of what came, not an extrapolation (80% lost would make
    // it 50 ms), and its loss does not widen the deadline: every tail was in and the link quiet,
    // so the rest was dropped. (It used to widen the multiple up to 8x, so that a later lost
    // tail cost up to 8 spans of waiting.)
    DeadlineController early = calibrated(10);
    const double calibrated_deadline = early.deadline_ms(kBytes, 1);
    for (int i = 0; i < 10; ++i) early.observe(kBytes, 1, {12, 10, 100, 20, false});
    EXPECT_LE(early.deadline_ms(kBytes, 1), 1.2 * calibrated_deadline);
    // At the deadline, but nothing arrived in its second half: the tails were lost too, not
    // late. It learns the span of what did arrive and never widens.
    DeadlineController lost = calibrated(10);
    const double before = lost.deadline_ms(kBytes, 1);
    for (int i = 0; i < 10; ++i) lost.observe(kBytes, 1, {before, before * 0.3, 100, 11, true});
    EXPECT_LE(lost.deadline_ms(kBytes, 1), before);
    // Data still arriving at the deadline: late, so it widens.
    lost.observe(kBytes, 1, {before, before, 100, 20, true});
    EXPECT_GT(lost.deadline_ms(kBytes, 1), before * 1.3);
}

// A rank that sent nothing (paused) is not counted: its phase's heard senders all completed,
// so the deadline stays where it was instead of growing to wait for stragglers.
TEST(DeadlineController, SilentSendersDoNotWidenTheDeadline) {
    DeadlineController c = calibrated(10);
    const double before = c.deadline_ms(kBytes, 1);
    for (int i = 0; i < 10; ++i) c.observe(kBytes, 1, {before, 10, 75, 75});  // 1 of 4 silent
    EXPECT_NEAR(c.deadline_ms(kBytes, 1), before, before * 0.05);
    c.observe(kBytes, 1, {before, 0, 0, 0});  // everyone silent: nothing learnt
    EXPECT_NEAR(c.deadline_ms(kBytes, 1), before, before * 0.05);
}

TEST(DeadlineController, ClampsAndPinning) {
    DeadlineController lo = calibrated(0.01, DeadlineSettings{0.001, 2, 1000, 0});
    EXPECT_EQ(lo.deadline_ms(kBytes, 1), 2);
    // Loss widens the deadline of a 400 ms phase eightfold, but never past the maximum.
    DeadlineController hi(DeadlineSettings{0.001, 2, 1000, 0});
    for (int i = 0; i < 20; ++i) hi.observe(kBytes, 1, PhaseOutcome{400, 400, 100, 90});
    EXPECT_EQ(hi.deadline_ms(kBytes, 1), 1000);
    // A phase that takes longer than the maximum to arrive at all: the ceiling follows it, at
    // twice its completion time, instead of cutting its tail every time.
    DeadlineController slow = calibrated(3000, DeadlineSettings{0.001, 2, 1000, 0});
    EXPECT_GT(slow.deadline_ms(kBytes, 1), 3000);
    EXPECT_LE(slow.deadline_ms(kBytes, 1), 6000);
    // Phases cut at the maximum while their data kept coming: the extrapolated completion time
    // (elapsed / fraction received) lifts the ceiling, so the next ones complete.
    DeadlineController cut(DeadlineSettings{0.001, 2, 1000, 0});
    for (int i = 0; i < 10; ++i) cut.observe(kBytes, 1, PhaseOutcome{1000, 1000, 100, 60});
    EXPECT_GT(cut.deadline_ms(kBytes, 1), 1600);
    DeadlineController pinned = calibrated(10, DeadlineSettings{0.001, 2, 1000, 25});
    EXPECT_EQ(pinned.deadline_ms(kBytes, 1), 25);
    EXPECT_EQ(DeadlineController(DeadlineSettings{0.001, 2, 1000, 25}).deadline_ms(kBytes, 2), 25);
}

// A size not seen yet starts at max_ms, unless a smaller calibrated size, scaled by the ratio
// of sizes, says the transfer alone takes longer (then twice that).
TEST(DeadlineController, LargerSizesCalibrateFromSmallerOnes) {
    DeadlineController fast = calibrated(100, DeadlineSettings{0.001, 2, 1000, 0});  // 1 MiB: 100 ms
    EXPECT_EQ(fast.deadline_ms(kBytes * 2, 1), 1000);                             // 200 ms expected: max_ms covers it
    DeadlineController c = calibrated(300, DeadlineSettings{0.001, 2, 1000, 0});  // 1 MiB: 300 ms
    EXPECT_NEAR(c.deadline_ms(kBytes * 2, 1), 2 * 600, 1);
    EXPECT_NEAR(c.deadline_ms(kBytes * 8, 1), 2 * 2400, 1);                 // 2.4 s expected
    EXPECT_EQ(c.own_deadline_ms(kBytes * 8, 2), 1000);                      // phases are separate
    EXPECT_EQ(c.deadline_ms(kBytes * 8, 2), c.deadline_ms(kBytes * 8, 1));  // but the all-gather's is never shorter
    EXPECT_EQ(c.deadline_ms(kBytes / 8, 1), 1000);                          // smaller sizes do not scale down
}

TEST(DeadlineController, QuietWindowIsAFractionOfTheExpectedTime) {
    const DeadlineController c = calibrated(10);
    EXPECT_NEAR(c.quiet_ms(kBytes, 1, 0), 1.0, 0.1);
    // A phase that has run longer than usual waits a tenth of that instead.
    EXPECT_NEAR(c.quiet_ms(kBytes, 1, 50), 5.0, 1e-9);
    // A size not seen yet: a tenth of the minimum deadline, or of the time the phase ran.
    EXPECT_NEAR(c.quiet_ms(kBytes * 64, 1, 0), 0.05, 1e-9);
    EXPECT_NEAR(c.quiet_ms(kBytes * 64, 1, 30), 3.0, 1e-9);
    EXPECT_NEAR(c.expected_ms(kBytes, 1), 10, 0.5);
}

}  // namespace
}  // namespace optireduce

namespace optireduce {
namespace {
// Single-datagram streams: a late sender looks silent at the deadline, so only its datagrams
// arriving just after the close tell the controller to widen.
TEST(DeadlineController, NearMissesWiden) {
    DeadlineController c = calibrated(1);
    const double before = c.deadline_ms(kBytes, 1);
    c.observe_near_misses(kBytes, 1, 1, 3);
    EXPECT_GT(c.deadline_ms(kBytes, 1), before * 1.3);
    const double widened = c.deadline_ms(kBytes, 1);
    c.observe_near_misses(kBytes, 1, 0, 3);
    EXPECT_EQ(c.deadline_ms(kBytes, 1), widened);
}

// A late tail cut at the deadline widens it once: its datagrams then arrive just after the close
// as near misses, and counting them again widened one late tail 2.25x (seen under a slow link,
// where fast ranks' multiples climbed to 3.6 in three operations).
TEST(DeadlineController, ALateTailWidensOnceNotAgainAsNearMisses) {
    DeadlineController c = calibrated(10);
    const double before = c.deadline_ms(kBytes, 1);
    c.observe(kBytes, 1, {before, before, 100, 90, true});  // still arriving at the deadline
    const double widened = c.deadline_ms(kBytes, 1);
    EXPECT_GT(widened, before * 1.3);
    c.observe_near_misses(kBytes, 1, 10, 100);  // the same 10 chunks, just after the close
    EXPECT_EQ(c.deadline_ms(kBytes, 1), widened);
    // A phase that did not widen still learns from its near misses.
    c.observe(kBytes, 1, complete_after(10));
    const double after = c.deadline_ms(kBytes, 1);
    c.observe_near_misses(kBytes, 1, 10, 100);
    EXPECT_GT(c.deadline_ms(kBytes, 1), after * 1.3);
}

// A spell in which the typical paths need 100 ms instead of 60 (a slow link elsewhere slows
// them too), modelled as the network behaves: a phase gets what arrived by its deadline, and its
// tail datagrams arrive just after the close as near misses. The deadline should follow the
// need, not double it (the late tail widened the multiple twice, as loss and as near misses,
// and the extrapolated sample widened the mean as well: the deadline reached 3.2x the need and
// every fast rank waited it out for a slow host's trickle), and come back soon after.
TEST(DeadlineController, FollowsASlowSpellAndComesBackAfterIt) {
    DeadlineController c = calibrated(60);
    const double usual = c.deadline_ms(kBytes, 1);
    constexpr double kNeed = 100;
    double highest = 0;
    for (int i = 0; i < 10; ++i) {
        const double d = c.deadline_ms(kBytes, 1);
        if (d < kNeed) {
            const auto got = static_cast<std::uint64_t>(100 * d / kNeed);
            c.observe(kBytes, 1, {d, d, 100, got, true});
            c.observe_near_misses(kBytes, 1, 100 - got, 100);
        } else {
            c.observe(kBytes, 1, {kNeed, kNeed, 100, 100, false});
        }
        highest = std::max(highest, c.deadline_ms(kBytes, 1));
    }
    EXPECT_LE(highest, 2 * kNeed);
    for (int i = 0; i < 5; ++i) c.observe(kBytes, 1, complete_after(60));
    EXPECT_LE(c.deadline_ms(kBytes, 1), 1.5 * usual);
}
}  // namespace
}  // namespace optireduce
