// SPDX-License-Identifier: BSD-3-Clause
// What one bounded operation tells the counters and teaches its communicator (docs/architecture.md,
// "The life of one bounded operation"): after each phase, the entries expected and lost, the late
// peers, how the phase closed, and how long the senders' data took (the deadline controller);
// after both, the skew between the ranks' starts (the straggler bound), this rank's receive loss
// for the peers' pacing, and each peer's send rate (the pacer).
#pragma once

#include "engine/deadlines/phase_closer.hpp"
#include "engine/deadlines/typical_paths.hpp"
#include "engine/dgram/dgram_router.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/op_report.hpp"

#include <cstdint>
#include <span>

namespace optireduce {

// When each step of one operation ended on this rank, for the debug log: where its time went
// (the transform and the inverse are local work outside both phases' clocks).
struct OpTimeline {
    Clock::time_point began, transformed, scattered, gathered, voted, done;
};

class OpFeedback {
public:
    OpFeedback(CommState::Bounded &b, const OpReceive &rx, int rank, int ranks, std::uint32_t seq, std::size_t bytes)
        : b_(b), rx_(rx), rank_(rank), ranks_(ranks), seq_(seq), bytes_(bytes) {}

    // After phase `clock.phase` closed `how`, with the facts it closed on and its paths as the
    // deadline learns them. Adds to `report`. phase_ms, last_arrival_ms: how long it ran here,
    // and when its last datagram came.
    void phase_closed(const PhaseClock &clock, Close how, const PhaseCloser &closer, std::span<const SenderFacts> facts,
                      const TypicalPaths &typical, double phase_ms, double last_arrival_ms, OpReport &report);
    // After both phases. our_start: our reduce-scatter's start; sent_bytes / send_seconds: per
    // peer, what we sent it and for how long; sends_given_up: our senders stopped at the
    // receivers' deadline (our link was slow, so our next start may look late to peers).
    void operation_done(Clock::time_point our_start, std::span<const std::uint64_t> sent_bytes,
                        std::span<const double> send_seconds, bool sends_given_up);

    // Debug log: the operation's steps, and when it began by the system clock (ranks sharing a
    // host line up on it).
    void log_timeline(const OpTimeline &t) const;

private:
    // Debug log: what the deadline learnt from a phase (why a deadline moved).
    void log_learnt(int phase, const PhaseOutcome &o) const;
    void count_phase(const PhaseClock &clock, Close how, const PhaseCloser &closer, double phase_ms,
                     double last_arrival_ms, OpReport &report);

    CommState::Bounded &b_;
    const OpReceive &rx_;
    int rank_, ranks_;
    std::uint32_t seq_;
    std::size_t bytes_;
    bool wrote_off_ = false;  // a peer that never started was written off
};

}  // namespace optireduce
