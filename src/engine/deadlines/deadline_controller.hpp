// SPDX-License-Identifier: BSD-3-Clause
// The per-phase deadline of bounded mode (docs/architecture.md, "Deadlines, the straggler bound
// and early close"): no number the user has to tune per model. For each (message-size class,
// phase) it learns the completion time from the job's own operations the way TCP learns its
// retransmission timeout (a smoothed mean and a smoothed mean deviation, Jacobson/Karels), and
// sets the deadline to mean + 4 deviations, times a factor steered by the loss the deadline
// causes against OPTIREDUCE_TARGET_LOSS. The deviation term is what keeps a host with noisy
// scheduling from losing data to a deadline fitted to its quiet moments. Pure arithmetic: no
// clock, no MPI, no fabric, so it is unit-tested alone.
//
// What counts as loss here is loss a longer deadline could have prevented: chunks missing from
// senders that sent something. A sender that sent nothing at all (paused, preempted) is a
// straggler; waiting longer for it is exactly what bounded mode refuses to do.
//
// The deadline a rank applies is the job's, not its own: the lower median of its own deadline
// and the ones its peers put in their headers (observe_peer). A rank behind a slow link learns
// a long deadline of its own (every path into it is slow), and the median over the ranks keeps
// that from becoming its wait: a slow path costs its own late data, never everyone's time.
// (Its peers do not learn it either: typical_paths.hpp leaves a path far slower than the
// others out of what they observe.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace optireduce {

struct DeadlineSettings {
    double target_loss = 0.001;
    double min_ms = 0.5;
    double max_ms = 1000;
    double fixed_ms = 0;  // > 0: always this deadline, no adaptation
    // The shortest silence after every sender's tail before a phase closes early.
    double quiet_floor_ms = 0.05;
};

// What one phase of one operation saw at this rank.
struct PhaseOutcome {
    double elapsed_ms = 0;       // phase start to close
    double last_arrival_ms = 0;  // phase start to the last datagram that arrived (0 if it was
                                 // there before the phase started)
    std::uint64_t expected = 0;  // chunks expected from senders that sent at least one
    std::uint64_t received = 0;  // of those, how many arrived
    // The phase closed at the deadline with data missing (it may have been on its way). False
    // when it closed complete or early (every sender's last datagrams in and the link quiet):
    // then what is missing was lost, not late, and its span, not an extrapolation, is learnt.
    bool cut_short = true;
};

class DeadlineController {
public:
    // Deadline while learning: max_ms, or more for a message larger than a calibrated one.
    static constexpr int kCalibrationOps = 3;
    static constexpr double kSmoothing = 0.25;  // weight of the newest sample: reacts in ~3 ops
    // A phase cut at the deadline counts as late only if its last datagram came after this
    // fraction of it (observe).
    static constexpr double kStillArrivingFraction = 0.5;
    static constexpr double kDeviations = 4;  // as TCP's RTO = srtt + 4 rttvar
    static constexpr double kMinMultiple = 1.0, kMaxMultiple = 8.0;
    static constexpr double kWiden = 1.5, kNarrow = 0.97;
    // A phase whose data all came within the unwidened deadline (mean + 4 deviations) shows
    // the widening had nothing to catch: narrow faster. A slow link's seconds widen the
    // multiple several times over; at kNarrow alone it took 50 operations to come back, and
    // the next slow link met a deadline still several times the phases' span.
    static constexpr double kNarrowUnneeded = 0.8;
    static constexpr double kQuietFraction = 0.1;  // early close after this much silence
    // Where the completion time itself exceeds max_ms, the deadline's ceiling is this multiple
    // of it (no more than 4 x max_ms: samples are capped there).
    static constexpr double kCeilingOverExpected = 2.0;

    explicit DeadlineController(DeadlineSettings s) : s_(s) {}

    const DeadlineSettings &settings() const { return s_; }
    // New settings (a communicator's hints changed) without forgetting what was learnt: the
    // completion times measured so far stay true whatever the target or the pinned deadline.
    void set_settings(const DeadlineSettings &s) { s_ = s; }

    // The deadline of `phase` (1 or 2) for a message of `bytes`, in ms from the phase's start:
    // the lower median of own_deadline_ms and the peers' latest (see the top of this file); the
    // all-gather's (phase 2) never below the reduce-scatter's (phase 1).
    double deadline_ms(std::size_t bytes, int phase) const;
    // What this rank's own observations say: what it puts in its headers for its peers.
    double own_deadline_ms(std::size_t bytes, int phase) const;
    // Peer `peer`'s own deadline of `phase` for `bytes`, from its latest header (0: unknown).
    void observe_peer(std::size_t bytes, int phase, int peer, double ms);
    // Expected completion time (0 before the first observation).
    double expected_ms(std::size_t bytes, int phase) const;
    // Silence after which a phase whose every sender's tail arrived closes early, when its
    // last datagram came `ran_ms` after it started: a fraction of the expected time, and at
    // least that fraction of `ran_ms` (before the first operations of a size have taught the
    // controller its usual time, the expected one is a guess, and a sender's last runs may
    // still be on their way behind its tails).
    double quiet_ms(std::size_t bytes, int phase, double ran_ms) const;
    void observe(std::size_t bytes, int phase, const PhaseOutcome &o);
    // Datagrams of a closed phase that arrived just after its deadline (within one more
    // deadline): the deadline was a little short. This is the only loss signal when a stream is
    // a single datagram, whose sender looks silent at the deadline. After a phase whose late
    // data already widened the deadline (observe), they are that same late data and do not
    // widen it again: counted twice, one late tail widened it 2.25x.
    void observe_near_misses(std::size_t bytes, int phase, std::uint64_t near, std::uint64_t expected);

    // Every size's deadline times `factor` (clamped): OPTIREDUCE_ON_EXCESS_LOSS=exact, after an
    // operation lost more than the user's budget.
    void widen_all(double factor);

    static int size_class(std::size_t bytes);  // log2 bucket

    struct State {
        int observed = 0;
        double expected_ms = 0;   // smoothed completion time
        double deviation_ms = 0;  // smoothed mean deviation from it
        double multiple = kMinMultiple;
        bool widened = false;       // the latest observe widened the multiple (observe_near_misses)
        std::vector<double> peers;  // by rank, 0 where unknown (and for this rank)
    };
    // What has been learnt for (bytes, phase), for the debug log; nullptr before anything.
    const State *find(std::size_t bytes, int phase) const;

private:
    DeadlineSettings s_;
    std::map<std::pair<int, int>, State> states_;
};

}  // namespace optireduce
