// SPDX-License-Identifier: BSD-3-Clause
// How long an operation waits for its peers' hole votes (engine/dgram/hole_votes.hpp). The base is
// what its deadlines account for (bounded_holes.cpp: both phases twice, plus a few ms); what
// the deadlines do not show is how long a peer takes to get a core, or how much of its own data
// its vote queues behind. Two things add to the base, like a retransmission timeout:
// - how long past the base the exchanges took (all votes in, or the budget spent): a smoothed
//   mean plus kDeviations mean deviations (Jacobson/Karels), so that votes coming ever later
//   widen the budget before one is missed;
// - a vote we closed without that came after all: the time it would have needed past the base,
//   times kMargin plus kSlackMs, forgotten slowly (kDecay per operation). Every vote carries its
//   sender's lesson and each rank takes the largest of its peers' (learn_from_peers): a vote
//   late to one rank is usually late to all (a slow peer's), but each rank learnt it only from
//   its own miss, and on the 10.5 M-parameter benchmark under the tail 1-3 calls per run still
//   ended without every vote, enough to leave the replicas 3e-4 apart.
//   A lesson that travels is not renewed by it: each rank takes its peers' at the close of the
//   exchange that carried them and decays the result at its next operation, before its vote
//   carries it, so the largest decays too (taken from a later vote, a lesson sent back to the
//   rank that had decayed it would come back undecayed, and never fade).
// A vote that never comes (a dead peer) teaches nothing, so it costs only what the others show;
// a late one costs its lateness, and without it the replicas differ: on the 10.5 M-parameter
// benchmark, with four ranks sharing two cores, votes came 1-47 ms after the 7 ms base of the
// small operations, in 27-64 calls per run, and the replicas drifted apart. Never more than
// the cap past the base (the straggler bound's cap, a few operations' deadlines: a vote that
// late costs everyone more time than its holes are worth). Pure arithmetic, unit-tested alone.
#pragma once

#include <cstdint>

namespace optireduce {

class VoteWait {
public:
    // Twice the lateness seen, plus a few ms: a peer's delay is how long it waited for a core,
    // and the next wait can be longer (a margin of 1.5 and no slack left 9-13 calls per run
    // without a vote, most 2-30 ms past the budget).
    static constexpr double kMargin = 2, kSlackMs = 5;
    // Per operation: a late vote's lesson lasts several hundred operations (the tail's cuts last
    // seconds, a few operations per second on the benchmark, and recur every 5-10 s).
    static constexpr double kDecay = 0.995;
    // TCP's smoothing of a retransmission timeout.
    static constexpr double kMeanGain = 0.125, kDeviationGain = 0.25, kDeviations = 4;

    // The operation's budget: base_ms plus what the exchanges showed, at most cap_ms past it.
    double budget_ms(double base_ms, double cap_ms) const;
    // Once per operation, before its budget: the longest a late vote needed past its operation's
    // base since the last call (ms; 0 or less: none came late). Also ages the last lesson.
    void learn_late(double late_past_base_ms);
    // Once per operation, after its exchange: how long past its base it took (ms; 0 or less:
    // within the base).
    void learn_took(double took_past_base_ms);
    // Once per operation, at the close of its exchange: the largest lesson the peers' votes of
    // that exchange carried (ms).
    void learn_from_peers(double peers_lesson_ms);
    double extra_ms() const;
    // What our vote carries: the late votes' lesson in 0.1 ms, saturated, rounded down: rounded
    // up (or to the nearest) a lesson passed back and forth would come back as large as before
    // its decay and never fade.
    std::uint16_t lesson_100us() const;

private:
    double mean_ms_ = 0, deviation_ms_ = 0, lesson_ms_ = 0;
};

}  // namespace optireduce
