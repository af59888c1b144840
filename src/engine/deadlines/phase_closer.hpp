// SPDX-License-Identifier: BSD-3-Clause
// When a phase of a bounded operation ends (docs/architecture.md, "The life of one bounded
// operation"): a pure function of what each sender has delivered, the phase's clock and the time,
// so every rule can be tested with a made-up clock. It reads no router and takes no lock: the
// operation copies the facts out of its receive state under the router's lock and acts on the
// decision.
//
// A phase closes when every expected chunk arrived (complete); when every sender still missing
// chunks is past its own end (deadline: see sender_end); or early, once every sender's last
// datagram arrived and the link has been quiet for a moment (the rest was lost, not late). Before
// closing early, the missing chunks are asked for again (phase-2 repair; in the reduce-scatter
// too, with PhaseClock::scatter_repair), and the answers get a few quiet times, never past the
// senders' ends; what is still missing is asked for again meanwhile (repair_schedule.hpp). When some
// sender's last datagrams are missing too (lost with the batch they were sent in), the
// all-gather asks while the link is quiet and again after each doubling wait, until the
// senders' ends: a lost tail costs the repair's round trip, not the owners' whole end. The
// reduce-scatter does not: a sender whose tail is missing there is late (a slow path, or a
// rank still sending), and asking it again would only add to its queue.
//
// A sender whose data are still flowing at its end, fast enough that the rest arrives within
// half a deadline more, is waited for until then (flowing_end): it was late because it lost its
// core for a while, not because its path is slow, and cutting it costs the data, not time saved.
// The converse is decided before the end (hopeless): a sender whose rest, at the rate it has
// come at, would not arrive even by then is not waited for at all once half its deadline has
// shown that rate. Waiting out its end bought a tenth of its stream and cost every rank the rest
// of the deadline: one host at a tenth of the line rate held each phase of every peer at its
// deadline, 1.4-1.8x the phase's span, while its data were lost either way.
#pragma once

#include "engine/clock.hpp"
#include "engine/deadlines/queue_budget.hpp"
#include "engine/deadlines/repair_schedule.hpp"
#include "engine/deadlines/sender_facts.hpp"

#include <algorithm>
#include <cstdint>
#include <span>

namespace optireduce {

enum class Close { complete, early, deadline };

// The phase's clock at this rank.
struct PhaseClock {
    int phase = 0;                       // 0: reduce-scatter, 1: all-gather
    Clock::time_point start{};           // this phase's start here
    double deadline_ms[2] = {0, 0};      // each phase's deadline, per sender from its start
    double straggler_ms = 0;             // how long a peer that has not started is waited for
    Clock::time_point rs_all_started{};  // all-gather: the last reduce-scatter start seen here
    bool rs_all_seen = false;            // all-gather: every peer's reduce-scatter start was seen here
    bool scatter_repair = false;         // the reduce-scatter asks for its holes too (scatter_repair.hpp)
};

// What the link shows, for the early close.
struct LinkQuiet {
    bool all_tails = false;            // every sender's last datagram arrived
    Clock::time_point last_arrival{};  // of any datagram of the phase (time_point{}: none yet)
    double quiet_ms = 0;               // how long a quiet link means the rest was lost
};

struct CloseDecision {
    enum class Kind { wait, ask_repair, close };
    Kind kind = Kind::wait;
    Close how = Close::complete;  // kind == close
    Clock::time_point until{};    // kind == wait: decide again by then at the latest
};

class PhaseCloser {
public:
    // The owner's turnaround in the all-gather: woken, reduce, send. On a host whose cores are
    // shared it waits for one for milliseconds, longer than a small message's deadlines.
    static constexpr double kOwnerTurnaroundMs = 5;
    // How long repair answers are awaited: this many quiet times, at least kRepairMinMs.
    static constexpr double kRepairMinMs = 2, kRepairQuiets = 4;
    // Without every sender's tail, repair is asked for only after this share of the phase's
    // deadline without a datagram.
    static constexpr double kNoTailSilenceOfDeadline = 0.25;

    // With every sender's tail in, the silence after which the holes are asked for: the phase's
    // quiet time, at most kAllTailsSilenceMs. A stream's tail flags ride its last run, so little
    // more than the rest of the tail runs can still arrive (64 KiB from all senders together,
    // engine/bounded/incast_run.hpp: half a millisecond at 1 Gbit/s). The quiet time alone, a tenth of
    // the phase's expected time (34 ms in a 32 MiB reduce-scatter on the emulated cloud), was
    // waited out by every phase that lost a datagram before its holes were asked for: at 1% loss
    // that is every phase (docs/notes/2026-12-07-repair-asks-early.md). Asking early costs at most a duplicate
    // answer; closing early would cost data (a datagram can still come later: a sender that
    // moved to another core leaves its earlier datagrams in that core's backlog, and a
    // reduce-scatter without repair closing after this silence lost 779 entries of a lossless
    // run under AddressSanitizer), so the phase still closes no sooner than the quiet time and
    // the answers' window allow.
    static constexpr double kAllTailsSilenceMs = 2;
    static double all_tails_silence_ms(double quiet_ms) { return std::min(quiet_ms, kAllTailsSilenceMs); }

    PhaseCloser() = default;
    explicit PhaseCloser(const PhaseClock &clock) : clock_(clock) {}

    // When the phase may close at the latest as far as sender s is concerned.
    Clock::time_point sender_end(const SenderFacts &s) const;
    // A sender still delivering at its end (`end`: its sender_end) is waited for while the rest of
    // its data, at the rate its stream has come at since its first datagram (stalls included),
    // would arrive by `end` + kFlowingExtraDeadlines of the phase's deadline, and while it keeps
    // coming (each datagram within `gap_ms` of the last): then that arrival plus `gap_ms`.
    // Otherwise time_point{}. On the emulated cloud with its cores shared by four ranks, a rank's stream
    // stalled for tens of ms mid-phase, resumed at line rate, and was cut at its deadline with a
    // third of it still to come: 10% of clean reduce-scatters closed at the deadline, 0.5% of
    // the entries lost. Behind a slow link the rest would take many deadlines: it is not waited
    // for.
    Clock::time_point flowing_end(const SenderFacts &s, Clock::time_point end, Clock::time_point now,
                                  double gap_ms) const;
    static constexpr double kFlowingExtraDeadlines = 0.5;
    // The longest a sender whose end is `end` may be waited for: flowing_end's limit, which
    // hopeless and queue_deadline judge a slow path against too.
    Clock::time_point flowing_cap(Clock::time_point end) const;
    // A rate needs a few datagrams to mean anything.
    static constexpr std::uint32_t kFlowingMinChunks = 8;
    // Whether sender s (`end`: its sender_end, not reached yet) is a slow path not worth its
    // end: a stream of kFlowingMinChunks or more, started at least kHopelessAfterDeadlines of the
    // phase's deadline ago, still coming (its latest datagram within `gap_ms`), whose rest at the
    // rate it has come at since its start would arrive only after the longest flowing_end could
    // wait, and whose whole stream at that rate would take more than kHopelessSpanDeadlines
    // deadlines (under a third of the rate it needs, as typical_paths.hpp's slow path). While it
    // is too early to say, `judge_at` is lowered to when it will not be. (Judged on the rest
    // alone, the streams of two jobs sharing the links and two cores, at about half the rate
    // they needed, were cut, and both jobs lost 0.5-1.1% of their entries, not 0.1-0.2%.)
    bool hopeless(const SenderFacts &s, Clock::time_point end, Clock::time_point now, double gap_ms,
                  Clock::time_point &judge_at) const;
    // Half a deadline, and never before kHopelessMinMs: a stream's rate over that includes any
    // stall a shared core causes (tens of milliseconds), so a sender that lost its core for a
    // while is not taken for a slow path. (Judged after half a deadline of a few milliseconds,
    // three ranks on two cores cut descheduled senders and lost 1.7-2% more than the network
    // dropped.) Below twice the floor no stream is judged at all: its end comes first.
    static constexpr double kHopelessAfterDeadlines = 0.5, kHopelessMinMs = 50, kHopelessSpanDeadlines = 3;
    // When a stream that started at `started` may be judged (hopeless).
    Clock::time_point judged_from(Clock::time_point started) const;
    // The same rule seen from the sending side: when our receivers stop waiting for our data in
    // this phase (their sender_end for us, with our start as their clock's), plus
    // kSendSlackDeadlines of the phase's deadline. Data not sent by then would only arrive late,
    // and queue in front of the next operation's.
    Clock::time_point send_limit() const;
    static constexpr double kSendSlackDeadlines = 1;
    // Until when what we hand to the kernel must be able to reach the receivers (QueueBudget):
    // their end for us; past it, a queue that drains within kQueueGraceDeadlines of the deadline
    // (a receiver acts on its deadline late when it waits for a core, and takes what came by
    // then). The slack above lets a sender whose data still arrive in time finish; this keeps a
    // slow link's queue from carrying data nobody waits for.
    QueueDeadline queue_deadline() const;
    static constexpr double kQueueGraceDeadlines = 0.1;
    // `complete`: every expected chunk arrived. After an ask_repair decision the caller asks
    // (for every chunk still missing), then decides again.
    CloseDecision decide(std::span<const SenderFacts> senders, bool complete, const LinkQuiet &quiet,
                         Clock::time_point now);
    // After the phase closed with `how`: whether sender s is a straggler written off (silent in
    // a reduce-scatter that closed at its deadline, with no sign that it had started or that it
    // is ahead of us).
    bool written_off(const SenderFacts &s, Close how) const;
    // After an ask_repair decision: whether sender s is asked (RepairSchedule).
    bool asks(std::size_t s) const { return schedule_.asks(s); }
    // Whether a decision waited past some sender's end because its data were still flowing.
    bool waited_for_flowing() const { return waited_flowing_; }
    // Whether the phase closed before some sender's end because its path was hopeless.
    bool cut_slow_path() const { return cut_slow_; }

private:
    // Our receivers' end for us in this phase: their sender_end for a sender that started when we
    // did (send_limit and queue_deadline build on it).
    Clock::time_point receivers_end() const;
    // When the phase may close as far as the senders still missing chunks are concerned: the
    // latest of their ends (or flowing ends), leaving out the hopeless ones (cut_slow_ when any).
    Clock::time_point close_time(std::span<const SenderFacts> senders, Clock::time_point now, double gap_ms,
                                 Clock::time_point &judge_at);
    // Before close_at: wait for the rest, close early or ask for repair (the link's silence).
    CloseDecision before_close(std::span<const SenderFacts> senders, Clock::time_point now, Clock::time_point close_at,
                               const LinkQuiet &quiet);
    CloseDecision without_every_tail(Clock::time_point now, Clock::time_point close_at, const LinkQuiet &quiet);
    // Asks for the missing chunks (again), their answers awaited until `answers_until`.
    CloseDecision ask_repair(Clock::time_point answers_until);

    PhaseClock clock_;
    int repairs_asked_ = 0;
    Clock::time_point repair_until_{};  // the current wait for answers ends (then ask again)
    Clock::time_point repair_end_{};    // every tail in: the answers' whole window ends (then close)
    RepairSchedule schedule_;           // every tail in: which senders are asked again, and when
    bool waited_flowing_ = false;
    bool cut_slow_ = false;
};

}  // namespace optireduce
