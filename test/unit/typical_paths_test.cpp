// SPDX-License-Identifier: BSD-3-Clause
// What a closed phase teaches the deadline: the typical paths, without one far slower than the
// others (engine/deadlines/typical_paths.hpp); and, with the deadline controller, that one slow link does
// not set every rank's pace (a fake clock: outcomes made up per operation).
#include "engine/deadlines/typical_paths.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace optireduce {
namespace {

constexpr std::size_t kBytes = 8 << 20;

PathSample complete(double ms) { return {ms, ms, 100, 100}; }
// Cut at the deadline `ms` with a fraction delivered, still arriving.
PathSample cut(double ms, std::uint64_t received) { return {ms, ms, 100, received}; }

TEST(TypicalPaths, APathFarSlowerThanTheOthersIsLeftOut) {
    // Index 0: this rank (nothing expected); 3: a link at a tenth of the others' rate.
    const std::vector<PathSample> paths{{}, complete(80), complete(85), cut(100, 15)};
    const TypicalPaths t = typical_paths(paths, true);
    EXPECT_EQ(t.slow, (std::vector<std::uint8_t>{0, 0, 0, 1}));
    EXPECT_EQ(t.slow_count(), 1);
    EXPECT_EQ(t.outcome.expected, 200u);
    EXPECT_EQ(t.outcome.received, 200u);
    EXPECT_DOUBLE_EQ(t.outcome.last_arrival_ms, 85);
    EXPECT_TRUE(t.outcome.cut_short);
}

TEST(TypicalPaths, JitterStaysIn) {
    // The slowest path takes 2.5x the median (a sender descheduled a while): waiting for it is
    // the deadline's job.
    const std::vector<PathSample> paths{complete(80), complete(100), complete(250), {}};
    const TypicalPaths t = typical_paths(paths, false);
    EXPECT_EQ(t.slow_count(), 0);
    EXPECT_EQ(t.outcome.expected, 300u);
    EXPECT_DOUBLE_EQ(t.outcome.last_arrival_ms, 250);
    // A stream cut at 100 ms with 40% in would take about 250 ms: within 3x the median.
    const std::vector<PathSample> cut_paths{complete(90), complete(95), cut(100, 40)};
    EXPECT_EQ(typical_paths(cut_paths, true).slow_count(), 0);
}

TEST(TypicalPaths, FewerThanThreePathsAreNeverLeftOut) {
    // Of two paths neither is "the others" (three ranks: each hears two senders).
    const std::vector<PathSample> one{{}, cut(100, 5)};
    EXPECT_EQ(typical_paths(one, true).slow_count(), 0);
    EXPECT_EQ(typical_paths(one, true).outcome.received, 5u);
    const std::vector<PathSample> two{complete(50), cut(100, 10), {}};
    const TypicalPaths t = typical_paths(two, true);
    EXPECT_EQ(t.slow_count(), 0);
    EXPECT_EQ(t.outcome.expected, 200u);
    EXPECT_EQ(t.outcome.received, 110u);
}

TEST(TypicalPaths, SendersNeverHeardAreNotPaths) {
    // A straggler that sent nothing: not slow, not counted (deadline_controller.hpp).
    const std::vector<PathSample> paths{complete(80), {0, 0, 100, 0}, complete(90)};
    const TypicalPaths t = typical_paths(paths, true);
    EXPECT_EQ(t.slow_count(), 0);
    EXPECT_EQ(t.outcome.expected, 200u);
    EXPECT_EQ(typical_paths(std::vector<PathSample>{}, true).outcome.expected, 0u);
}

// 20 operations of a ~80 ms phase on a clean network, three senders: the deadline it gives.
DeadlineController calibrated() {
    DeadlineController c(DeadlineSettings{});
    for (int i = 0; i < 20; ++i) {
        const std::vector<PathSample> paths{{}, complete(78 + i % 3), complete(80), complete(82)};
        c.observe(kBytes, 1, typical_paths(paths, false).outcome);
    }
    return c;
}

// The rule the tail broke: one host's link drops to a tenth for seconds, its stream reaches each
// receiver 15% complete at the deadline and still arriving. Its peers' deadline must not follow
// it (before, the phase's slowest path was its sample: 1 s deadlines within a few operations, and
// every rank's operations took the slow link's time).
TEST(TypicalPaths, ASlowLinkDoesNotSetEveryonesPace) {
    DeadlineController c = calibrated();
    const double before = c.deadline_ms(kBytes, 1);
    for (int op = 0; op < 20; ++op) {
        const double d = c.deadline_ms(kBytes, 1);
        const std::vector<PathSample> paths{{}, complete(80), complete(81), cut(d, 15)};
        c.observe(kBytes, 1, typical_paths(paths, true).outcome);
    }
    EXPECT_LT(c.deadline_ms(kBytes, 1), 1.2 * before) << "calibrated " << before;
}

// At the rank behind the slow link every path into it is slow, and its own deadline follows
// them; the one it applies is the ranks' lower median (deadline_controller.hpp), so it closes
// on its peers' clock and costs only its own late data.
TEST(TypicalPaths, TheRankBehindASlowLinkAppliesItsPeersDeadline) {
    DeadlineController c = calibrated();
    const double fast = c.own_deadline_ms(kBytes, 1);
    for (int peer = 1; peer < 4; ++peer) c.observe_peer(kBytes, 1, peer, fast);
    for (int op = 0; op < 20; ++op) {
        const double d = c.own_deadline_ms(kBytes, 1);
        const std::vector<PathSample> paths{{}, cut(d, 15), cut(d, 14), cut(d, 16)};
        c.observe(kBytes, 1, typical_paths(paths, true).outcome);
    }
    EXPECT_GT(c.own_deadline_ms(kBytes, 1), 4 * fast);  // what it advertises
    EXPECT_DOUBLE_EQ(c.deadline_ms(kBytes, 1), fast);   // what it applies
}

TEST(TypicalPaths, NoSingleRankSetsTheJobsDeadline) {
    DeadlineController c = calibrated();
    const double own = c.own_deadline_ms(kBytes, 1);
    // One peer learnt a much shorter deadline, one a much longer: the lower median of four.
    c.observe_peer(kBytes, 1, 1, own / 10);
    c.observe_peer(kBytes, 1, 2, own * 10);
    c.observe_peer(kBytes, 1, 3, own);
    EXPECT_DOUBLE_EQ(c.deadline_ms(kBytes, 1), own);
    // Two ranks: the shorter one's (the slower rank's data are its own loss).
    DeadlineController pair = calibrated();
    pair.observe_peer(kBytes, 1, 1, own * 10);
    EXPECT_DOUBLE_EQ(pair.deadline_ms(kBytes, 1), pair.own_deadline_ms(kBytes, 1));
    pair.observe_peer(kBytes, 1, 1, own / 2);
    EXPECT_DOUBLE_EQ(pair.deadline_ms(kBytes, 1), own / 2);
    // A pinned deadline is every rank's: peers do not move it.
    DeadlineSettings pinned;
    pinned.fixed_ms = 250;
    DeadlineController p(pinned);
    p.observe_peer(kBytes, 1, 1, 10);
    EXPECT_EQ(p.deadline_ms(kBytes, 1), 250);
}

}  // namespace
}  // namespace optireduce
