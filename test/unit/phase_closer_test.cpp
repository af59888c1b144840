// SPDX-License-Identifier: BSD-3-Clause
// The phase-close rules (engine/deadlines/phase_closer.hpp) on a made-up clock: a slow link, a late
// starter, a dead rank, a co-tenant's burst, a lost one-datagram stream, and phase-2 repair.
#include "engine/deadlines/phase_closer.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace optireduce {
namespace {

const Clock::time_point T0 = Clock::time_point{} + std::chrono::seconds(1000);
Clock::time_point at(double ms) { return after_ms(T0, ms); }

// A reduce-scatter that started at T0 here with a 10 ms deadline per phase and a 100 ms
// straggler bound, three senders of 4 chunks (ours has none).
PhaseClock rs_clock() {
    PhaseClock c;
    c.phase = 0;
    c.start = T0;
    c.deadline_ms[0] = c.deadline_ms[1] = 10;
    c.straggler_ms = 100;
    return c;
}

// The all-gather of the same operation: it started here at `start_ms`, and the last
// reduce-scatter start seen here was at `rs_all_started_ms` (every peer's start was seen).
PhaseClock ag_clock(double start_ms, double rs_all_started_ms) {
    PhaseClock c = rs_clock();
    c.phase = 1;
    c.start = at(start_ms);
    c.rs_all_started = at(rs_all_started_ms);
    c.rs_all_seen = true;
    return c;
}

SenderFacts sender(std::uint32_t received, double started_ms = -1, double gathered_ms = -1) {
    SenderFacts s;
    s.chunks = 4;
    s.received = received;
    if (started_ms >= 0) s.started = at(started_ms);
    if (gathered_ms >= 0) s.gathered = at(gathered_ms);
    return s;
}

using Kind = CloseDecision::Kind;

TEST(PhaseCloser, APeerAlreadyOnALaterOperationIsNotWaitedFor) {
    // This rank is behind: a peer silent here has sent for a later operation (its datagrams for
    // this one were dropped while this rank could not hold them). Waiting the straggler bound
    // for it would keep this rank behind for good; it closes at once, and the peer is not a
    // straggler.
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(4, 0), sender(0)};
    f[1].ahead = true;
    const CloseDecision d = c.decide(f, false, {}, at(0.1));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_FALSE(c.written_off(f[1], d.how));
    // A peer ahead that did start here keeps its deadline: its data may still be arriving.
    f[1] = sender(1, 0);
    f[1].ahead = true;
    EXPECT_EQ(c.decide(f, false, {}, at(5)).until, at(10));
}

TEST(PhaseCloser, CompleteClosesAtOnce) {
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(4, 0), sender(4, 1)};
    const CloseDecision d = c.decide(f, true, {}, at(0.5));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::complete);
}

TEST(PhaseCloser, ASlowLinkGetsTheDeadlineFromItsOwnStart) {
    // The sender behind a slow link started 3 ms after us and is still sending: it is waited for
    // until 3 + 10 ms, not until our start + 10, and not for the straggler bound.
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(4, 0), sender(1, 3)};
    CloseDecision d = c.decide(f, false, {}, at(5));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(13));
    d = c.decide(f, false, {}, at(13));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_FALSE(c.written_off(f[1], d.how)) << "a slow sender that started is not a straggler";
}

// A stream of 100 chunks that started at `started_ms` and whose latest datagram came at `last_ms`.
SenderFacts stream(std::uint32_t received, double started_ms, double last_ms) {
    SenderFacts s;
    s.chunks = 100;
    s.received = received;
    s.started = at(started_ms);
    s.last = at(last_ms);
    return s;
}

TEST(PhaseCloser, AStalledSenderThatResumedGetsTheTimeItsRestTakes) {
    // A sender that lost its core mid-stream: at its end (10 ms) three quarters of its stream are
    // here and the last datagram came 0.1 ms ago. At the rate it has come at (0.132 ms a chunk,
    // the stall included) the rest arrives by 13.2 ms, within half a deadline more: it is waited
    // for until then plus the gap (1 ms), not cut at 10 ms with a quarter of its data.
    PhaseCloser c(rs_clock());
    const LinkQuiet quiet{false, at(9.9), 1};
    std::vector<SenderFacts> f{sender(4, 0), stream(75, 0, 9.9)};
    CloseDecision d = c.decide(f, false, quiet, at(10));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_GT(d.until, at(14.1));
    EXPECT_LT(d.until, at(14.3));
    EXPECT_TRUE(c.waited_for_flowing());
    // It keeps coming: the projection follows it.
    f[1] = stream(90, 0, 11.9);
    d = c.decide(f, false, quiet, at(12));
    EXPECT_EQ(d.kind, Kind::wait);
    // It stops coming (nothing for longer than the gap): what is missing is cut, at once.
    d = c.decide(f, false, quiet, at(13));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
}

TEST(PhaseCloser, ASlowPathIsNotWaitedForPastItsEnd) {
    // Behind a slow link a fifth of the stream came by the end, at 0.5 ms a chunk: the rest
    // would take four deadlines. It is cut at its end, as before, even while it keeps coming.
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{stream(20, 0, 9.9)};
    CloseDecision d = c.decide(f, false, {false, at(9.9), 1}, at(10));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_FALSE(c.waited_for_flowing());
    // Nor one whose rest would come just past half a deadline more (60 of 100: 16.5 ms > 15).
    f[0] = stream(60, 0, 9.9);
    EXPECT_EQ(c.decide(f, false, {false, at(9.9), 1}, at(10)).kind, Kind::close);
    // The wait is never longer than half a deadline past the end, whatever the gap.
    f[0] = stream(90, 0, 9.9);
    EXPECT_EQ(c.decide(f, false, {false, at(9.9), 10}, at(10)).until, at(15));
}

// The phases of a large message: a 200 ms deadline each (a slow path is judged from half of it).
PhaseClock long_clock(int phase = 0, double start_ms = 0) {
    PhaseClock c = rs_clock();
    c.deadline_ms[0] = c.deadline_ms[1] = 200;
    c.phase = phase;
    c.start = at(start_ms);
    c.rs_all_started = T0;
    c.rs_all_seen = phase == 1;
    return c;
}

TEST(PhaseCloser, ASlowLinkDoesNotSetEveryonesPace) {
    // Two senders complete by 140 ms; the third, behind a slow link, started at 0 and has sent
    // 14 of 100 chunks by then: at that rate the rest needs 860 ms more, far past its end (200
    // ms) plus the longest flowing wait (100 ms). Waiting until 200 ms would buy about six more
    // chunks of a stream lost either way, and cost every rank the rest of the deadline: the
    // phase closes as soon as the others are in, not at the slow path's end.
    PhaseCloser c(long_clock());
    std::vector<SenderFacts> f{stream(40, 0, 80), stream(100, 0, 120), stream(10, 0, 98)};
    CloseDecision d = c.decide(f, false, {false, at(98), 20}, at(80));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(100)) << "judged again once half its deadline has shown its rate";
    f[0] = stream(100, 0, 140);
    f[2] = stream(14, 0, 138);
    d = c.decide(f, false, {false, at(140), 20}, at(140));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_TRUE(c.cut_slow_path());
    EXPECT_FALSE(c.written_off(f[2], d.how)) << "a slow path that started is not a straggler";
}

TEST(PhaseCloser, AReceiverBehindASlowLinkCutsEveryStreamAtHalfItsDeadline) {
    // This rank's own downlink is slow: every sender's stream comes at a twentieth of the rate it
    // needs, and the senders stopped sending (their queues hold only what arrives in time), so
    // nothing more comes. It closes once the last of them has run half a deadline (108 ms), not
    // at their ends, and its hole vote and all-gather do not keep every peer waiting for the
    // rest of a deadline.
    PhaseCloser c(long_clock());
    std::vector<SenderFacts> f{stream(5, 0, 60), stream(5, 4, 60), stream(4, 8, 60)};
    CloseDecision d = c.decide(f, false, {false, at(60), 20}, at(70));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(100));
    f = {stream(5, 0, 99), stream(5, 4, 99), stream(4, 8, 99)};
    d = c.decide(f, false, {false, at(99), 20}, at(104));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(108));
    d = c.decide(f, false, {false, at(99), 20}, at(108));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_TRUE(c.cut_slow_path());
}

TEST(PhaseCloser, AStalledSenderThatCanStillFinishIsNotTakenForASlowPath) {
    // A sender that lost its core for a while: 40 of 100 chunks by 100 ms (half its deadline),
    // still coming. At its rate since its start the rest takes 150 ms (250 < 300): it is waited
    // for, up to its end. A short stream (under kFlowingMinChunks) is never judged.
    PhaseCloser c(long_clock());
    std::vector<SenderFacts> f{stream(100, 0, 80), stream(40, 0, 95)};
    CloseDecision d = c.decide(f, false, {false, at(95), 20}, at(100));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_GE(d.until, at(200)) << "waited for up to its end (or while it flows, past it)";
    EXPECT_FALSE(c.cut_slow_path());
    // Nor one whose rate says hopeless but that has been silent longer than the gap (20 ms): it
    // lost its core and may resume at line rate. Its end decides.
    f[1] = stream(10, 0, 70);
    d = c.decide(f, false, {false, at(80), 20}, at(100));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(200));
    f[1] = sender(1, 0);  // 1 of 4 chunks by 180 ms: too short a stream for a rate
    d = c.decide(f, false, {false, at(80), 20}, at(180));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(200));
}

TEST(PhaseCloser, AStreamAtHalfTheRateItNeedsIsNotASlowPath) {
    // Two jobs share the links: a stream comes at half the rate it needs, 25 of 100 chunks by
    // 100 ms, still coming. Its rest would arrive at 400 ms, past its end plus the flowing wait
    // (300 ms), but the whole stream takes 400 ms, two deadlines, not three: it is a shared
    // path, not a slow one, and by its end half of it is in. It is waited for.
    PhaseCloser c(long_clock());
    std::vector<SenderFacts> f{stream(100, 0, 80), stream(25, 0, 99)};
    const CloseDecision d = c.decide(f, false, {false, at(99), 20}, at(100));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(200));
    EXPECT_FALSE(c.cut_slow_path());
}

TEST(PhaseCloser, AShortPhaseIsNeverCutBeforeItsEnd) {
    // A 10 ms deadline: half of it is shorter than a stall of a shared core (three ranks on two
    // cores, judged at 5 ms, lost a fifth more than the network dropped). No stream is judged
    // before kHopelessMinMs, past this phase's end: a tenth of the stream by 9 ms is waited for
    // until 10 ms.
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{stream(100, 0, 8), stream(10, 0, 8.9)};
    const CloseDecision d = c.decide(f, false, {false, at(8.9), 0.5}, at(9));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(10));
}

TEST(PhaseCloser, AnAllGatherOwnerBehindASlowLinkIsCutOnceItsRateShows) {
    // The all-gather (our start 200 ms, the last reduce-scatter start 0): the owner behind a
    // slow link started its shard at 240 ms and has delivered 5 of 100 chunks by 340 ms. Its end
    // is 405 ms (both deadlines and the turnaround from the last start); the rest would need
    // 1.9 s.
    PhaseCloser c(long_clock(1, 200));
    std::vector<SenderFacts> f{stream(100, 200, 280), stream(5, 240, 330)};
    CloseDecision d = c.decide(f, false, {false, at(330), 20}, at(320));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(340));
    d = c.decide(f, false, {false, at(330), 20}, at(340));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_TRUE(c.cut_slow_path());
}

TEST(PhaseCloser, ALateStarterIsWaitedForUpToTheStragglerBound) {
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(4, 0), sender(0)};
    CloseDecision d = c.decide(f, false, {}, at(50));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(100));
    // It starts at 80 ms: from then on its own deadline counts, which ends before the bound.
    f[1] = sender(1, 80);
    d = c.decide(f, false, {}, at(85));
    EXPECT_EQ(d.until, at(90));
    d = c.decide(f, false, {}, at(90));
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_FALSE(c.written_off(f[1], d.how));
}

TEST(PhaseCloser, ADeadRankIsWrittenOffAtTheStragglerBound) {
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(4, 0), sender(0)};
    EXPECT_EQ(c.decide(f, false, {}, at(99.9)).kind, Kind::wait);
    const CloseDecision d = c.decide(f, false, {}, at(100));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_TRUE(c.written_off(f[1], d.how));
    EXPECT_FALSE(c.written_off(f[0], d.how));
}

TEST(PhaseCloser, TheStragglerBoundIsNeverShorterThanTheDeadline) {
    PhaseClock clock = rs_clock();
    clock.straggler_ms = 0;
    PhaseCloser c(clock);
    std::vector<SenderFacts> f{sender(0)};
    EXPECT_EQ(c.decide(f, false, {}, at(5)).until, at(10));
}

TEST(PhaseCloser, ALostOneDatagramStreamGetsTheDeadlineFromItsAllGather) {
    // Silent in the reduce-scatter, but its all-gather arrived at 2 ms: its stream to us was
    // lost whole. It gets the deadline from that evidence, not the straggler bound, and it is a
    // loss, not a straggler.
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(4, 0), sender(0, -1, 2)};
    CloseDecision d = c.decide(f, false, {}, at(3));
    EXPECT_EQ(d.until, at(12));
    d = c.decide(f, false, {}, at(12));
    EXPECT_EQ(d.how, Close::deadline);
    EXPECT_FALSE(c.written_off(f[1], d.how));
}

TEST(PhaseCloser, ACoTenantBurstLostTheRestOnceEveryTailArrivedAndTheLinkWentQuiet) {
    // A burst dropped some middle datagrams; every sender's last one arrived at 4 ms. After the
    // quiet time (2 ms) the phase closes early instead of waiting for the deadline at 10 ms.
    PhaseCloser c(rs_clock());
    std::vector<SenderFacts> f{sender(3, 0), sender(2, 1)};
    const LinkQuiet quiet{true, at(4), 2};
    CloseDecision d = c.decide(f, false, quiet, at(5));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(6));
    d = c.decide(f, false, quiet, at(6));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::early);
    // Without every tail, the same quiet link is waited on until the deadline.
    PhaseCloser c2(rs_clock());
    d = c2.decide(f, false, {false, at(4), 2}, at(6));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(11));
}

TEST(PhaseCloser, WithReduceScatterRepairACoTenantBurstsHolesAreAskedForBeforeClosing) {
    // The same burst with reduce-scatter repair on: once every tail is in and the link is quiet
    // (6 ms) the holes are asked for instead of closing, again every max(2 ms, 1 quiet time),
    // until the answers' window ends: min(senders' end 11, 6 + max(2, 4 quiet times)) = 11.
    PhaseClock clock = rs_clock();
    clock.scatter_repair = true;
    PhaseCloser c(clock);
    std::vector<SenderFacts> f{sender(3, 0), sender(2, 1)};
    const LinkQuiet quiet{true, at(4), 2};
    CloseDecision d = c.decide(f, false, quiet, at(6));
    ASSERT_EQ(d.kind, Kind::ask_repair) << "reduce-scatter holes closed without asking for them";
    EXPECT_EQ(d.until, at(8));
    d = c.decide(f, false, quiet, at(7));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(8));
    d = c.decide(f, false, quiet, at(8));
    EXPECT_EQ(d.kind, Kind::ask_repair) << "still missing: asked again";
    EXPECT_EQ(d.until, at(10));
    // The answers arrived: complete.
    d = c.decide(f, true, quiet, at(9));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::complete);
    // A sender whose tail is missing is late, not lost: never asked, only waited for.
    PhaseCloser c2(clock);
    for (const double ms : {6.0, 9.0}) {
        d = c2.decide(f, false, {false, at(4), 2}, at(ms));
        EXPECT_EQ(d.kind, Kind::wait) << ms;
        EXPECT_EQ(d.until, at(11)) << ms;
    }
}

TEST(PhaseCloser, WithEveryTailInAShortSilenceIsEnoughHoweverLongThePhasesQuietTime) {
    // A long phase's quiet time (30 ms, a tenth of its expected time) is not waited out once
    // every tail is in: only the rest of the tail runs can still come, so holes are asked for
    // after kAllTailsSilenceMs (2 ms).
    PhaseClock clock = rs_clock();
    clock.deadline_ms[0] = clock.deadline_ms[1] = 100;  // the senders' end: 101 ms
    clock.scatter_repair = true;
    std::vector<SenderFacts> f{sender(3, 0), sender(2, 1)};
    f[0].last = f[1].last = at(4);
    PhaseCloser c(clock);
    CloseDecision d = c.decide(f, false, {true, at(4), 30}, at(5));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(6));
    d = c.decide(f, false, {true, at(4), 30}, at(6));
    ASSERT_EQ(d.kind, Kind::ask_repair) << "holes behind every tail waited out the phase's whole quiet time";
    EXPECT_TRUE(c.asks(0) && c.asks(1)) << "the first ask goes to every sender";
    // Sender 0 answered at 7.5 and then stopped: what it still misses was lost, asked for again
    // 2 ms later. Sender 1 has not answered (busy): asked again only after the quiet time.
    f[0].last = at(7.5);
    d = c.decide(f, false, {true, at(7.5), 30}, at(8));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(9.5));
    d = c.decide(f, false, {true, at(7.5), 30}, at(9.5));
    ASSERT_EQ(d.kind, Kind::ask_repair) << "a lost answer waited for the next quiet time";
    EXPECT_TRUE(c.asks(0));
    EXPECT_FALSE(c.asks(1)) << "a sender that has not answered yet was asked twice for the same chunks";
    d = c.decide(f, false, {true, at(7.5), 30}, at(12));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(36)) << "sender 1, unanswered since 6";
    d = c.decide(f, false, {true, at(7.5), 30}, at(36));
    ASSERT_EQ(d.kind, Kind::ask_repair);
    EXPECT_FALSE(c.asks(0));
    EXPECT_TRUE(c.asks(1));
    // The answers' window, 4 quiet times from when the quiet time ends (34 + 120 ms: no sooner
    // than asking after the quiet time would close), is cut at the senders' end.
    d = c.decide(f, false, {true, at(7.5), 30}, at(101));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    // Without reduce-scatter repair nothing can be asked, and closing costs data: the phase still
    // waits out the quiet time (a datagram can come after the tails when its sender moved cores).
    PhaseClock no_repair = clock;
    no_repair.scatter_repair = false;
    PhaseCloser plain(no_repair);
    d = plain.decide(f, false, {true, at(4), 30}, at(6));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(34)) << "closing without repair after the short silence loses late datagrams";
    d = plain.decide(f, false, {true, at(4), 30}, at(34));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::early);
    // A quiet time shorter than that is used as it is.
    EXPECT_EQ(PhaseCloser::all_tails_silence_ms(0.5), 0.5);
    EXPECT_EQ(PhaseCloser::all_tails_silence_ms(30), PhaseCloser::kAllTailsSilenceMs);
}

TEST(PhaseCloser, AllGatherHolesAreAskedForUntilAFewQuietTimesPassed) {
    const PhaseClock clock = ag_clock(20, 2);
    PhaseCloser c(clock);
    std::vector<SenderFacts> f{sender(3, 21), sender(4, 21)};
    const LinkQuiet quiet{true, at(22), 1};
    // Answers are awaited max(2 ms, 4 quiet times) = 4 ms from the first ask, until 27; what
    // is still missing is asked for again every max(2 ms, 1 quiet time) meanwhile (a request
    // or an answer lost on the way no longer costs the whole window).
    CloseDecision d = c.decide(f, false, quiet, at(23));
    EXPECT_EQ(d.kind, Kind::ask_repair);
    EXPECT_EQ(d.until, at(25));
    d = c.decide(f, false, quiet, at(24));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(25));
    d = c.decide(f, false, quiet, at(25));
    EXPECT_EQ(d.kind, Kind::ask_repair) << "still missing: asked again";
    EXPECT_EQ(d.until, at(27));
    d = c.decide(f, false, quiet, at(27));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::early);
}

TEST(PhaseCloser, AnAllGatherStreamWhoseLastBatchWasLostIsAskedForWhileTheLinkIsQuiet) {
    // A full queue dropped an owner's last send batch, its tail with it: no tail, so no early
    // close. The owners' end is at 12 + 10 + 10 + 5 = 37 ms (the last reduce-scatter start + both
    // deadlines + turnaround). The holes are asked for once the
    // link has been silent a quarter of the 10 ms deadline (2.5 ms after the last arrival at
    // 22), and again after each doubling wait, until that end.
    const PhaseClock clock = ag_clock(20, 12);
    PhaseCloser c(clock);
    std::vector<SenderFacts> f{sender(2, 21), sender(4, 21)};
    const LinkQuiet quiet{false, at(22), 1};
    CloseDecision d = c.decide(f, false, quiet, at(23));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(24.5));
    d = c.decide(f, false, quiet, at(24.5));
    ASSERT_EQ(d.kind, Kind::ask_repair) << "a lost tail must not cost the owners' whole end";
    EXPECT_EQ(d.until, at(28.5));  // max(2 ms, 4 quiet times)
    d = c.decide(f, false, quiet, at(25));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(28.5));
    d = c.decide(f, false, quiet, at(28.5));  // no answer yet: asked again, waiting twice as long
    EXPECT_EQ(d.kind, Kind::ask_repair);
    EXPECT_EQ(d.until, at(36.5));
    d = c.decide(f, false, quiet, at(36.5));
    EXPECT_EQ(d.kind, Kind::ask_repair);
    EXPECT_EQ(d.until, at(37)) << "never past the owners' end";
    d = c.decide(f, false, quiet, at(37));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    // Silence before the phase started (early chunks) does not count: the streams that follow
    // the owners' reduce-scatter are given the silence from our start.
    PhaseCloser fresh(clock);
    d = fresh.decide(f, false, {false, at(5), 1}, at(21));
    EXPECT_EQ(d.kind, Kind::wait);
    EXPECT_EQ(d.until, at(22.5));
}

TEST(PhaseCloser, AllGatherSendersEndAfterBothDeadlinesFromTheLastStartPlusTurnaround) {
    const PhaseClock clock = ag_clock(8, 12);  // a peer started its reduce-scatter after we started ours
    PhaseCloser c(clock);
    EXPECT_EQ(c.sender_end(sender(0)), at(12 + 10 + 10 + PhaseCloser::kOwnerTurnaroundMs));
    // A sender whose all-gather started late gets the deadline from its start.
    EXPECT_EQ(c.sender_end(sender(1, 40)), at(50));
    EXPECT_FALSE(c.written_off(sender(0), Close::deadline)) << "the all-gather writes off no straggler";
}

TEST(PhaseCloser, AReceiverWhoseReduceScatterClosedLateWaitsForTheOwnersFromTheLastStartNotItsOwn) {
    // The slow host: its downlink queued its senders' first datagrams, so its reduce-scatter
    // closed at 20 ms although the last start it saw was at 5 ms. The owners closed theirs by
    // 5 + 10 ms and sent their shards then: their data are due by 5 + 10 + 10 + turnaround =
    // 30 ms, not a whole reduce-scatter deadline after its own all-gather began (45 ms; every
    // peer waits for its hole vote, so that would set everyone's pace).
    const PhaseClock clock = ag_clock(20, 5);
    PhaseCloser c(clock);
    const double end = 5 + 10 + 10 + PhaseCloser::kOwnerTurnaroundMs;
    EXPECT_EQ(c.sender_end(sender(0)), at(end));
    const SenderFacts silent[] = {sender(0), sender(4), sender(1)};
    EXPECT_EQ(c.decide(silent, false, {}, at(end - 1)).kind, Kind::wait);
    const CloseDecision d = c.decide(silent, false, {}, at(end));
    EXPECT_EQ(d.kind, Kind::close);
    EXPECT_EQ(d.how, Close::deadline);
    // An owner whose stream did reach it still gets the all-gather deadline from its first datagram.
    EXPECT_EQ(c.sender_end(sender(1, 25)), at(35));

    // A peer whose reduce-scatter start was never seen here (a straggler written off at the
    // bound, at 20 ms) may still be in its reduce-scatter: its shard comes after ours closed, so
    // the count starts at our all-gather's start, as before.
    PhaseClock straggler = clock;
    straggler.rs_all_seen = false;
    EXPECT_EQ(PhaseCloser(straggler).sender_end(sender(0)), at(20 + 10 + 10 + PhaseCloser::kOwnerTurnaroundMs));
}

TEST(PhaseCloser, SendersStopWhenTheirReceiversStopWaiting) {
    // A slow link: our reduce-scatter data that cannot leave by our start + the deadline would
    // reach receivers after their end for us (their clock for us starts at our first datagram),
    // and hold up the next operation behind it.
    PhaseClock rs = rs_clock();
    const double slack = 10 * PhaseCloser::kSendSlackDeadlines;  // receivers act when they get a core
    EXPECT_EQ(PhaseCloser(rs).send_limit(), at(10 + slack));
    // The all-gather: a receiver waits for an owner from the last reduce-scatter start it saw
    // (about the last one we saw) + both deadlines + the owner's turnaround, and for a stream
    // that started from that start + the all-gather deadline.
    PhaseClock ag = rs;
    ag.phase = 1;
    ag.start = at(12);
    ag.rs_all_started = at(3);
    ag.rs_all_seen = true;
    EXPECT_EQ(PhaseCloser(ag).send_limit(), at(3 + 20 + PhaseCloser::kOwnerTurnaroundMs + slack));
    ag.start = at(20);  // our reduce-scatter closed late: our own stream's start bounds it
    EXPECT_EQ(PhaseCloser(ag).send_limit(), at(20 + 10 + slack));
    ag.start = at(12);
    ag.rs_all_started = at(30);  // a later starter seen here: receivers wait for it too
    EXPECT_EQ(PhaseCloser(ag).send_limit(), at(30 + 20 + PhaseCloser::kOwnerTurnaroundMs + slack));
    ag.start = at(40);
    // The receivers' rule for us, had they started our clock at our start, plus the slack.
    SenderFacts us = sender(1, 40);
    EXPECT_EQ(after_ms(PhaseCloser(ag).sender_end(us), slack), PhaseCloser(ag).send_limit());
}

}  // namespace
}  // namespace optireduce
