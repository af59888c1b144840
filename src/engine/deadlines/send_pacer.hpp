// SPDX-License-Identifier: BSD-3-Clause
// Per-destination send pacing of bounded mode (docs/protocol.md, "Pacing and the loss hint"): the
// datagram channel has no acknowledgements, so a sender learns that it overruns a receiver (its
// socket buffer, a rate-limited link) only from the loss that receiver reports in the header of
// its own datagrams. Multiplicative decrease on reported loss, from the rate actually achieved;
// gentle increase while it stays clean; unpaced again once the limit is far above what the host
// sends anyway.
//
// Not all loss is overload: a lossy link drops the same fraction at any rate, and cutting the
// rate for it only makes every operation slower. So each cut is a test: if the next report
// shows the loss did not fall, the cut is undone and that loss is remembered as the path's
// floor, which later reports must clearly exceed before the sender slows down again. Pure
// arithmetic; the sender applies the rate as a token bucket.
#pragma once

#include <vector>

namespace optireduce {

class SendPacer {
public:
    static constexpr double kDecrease = 0.7, kIncrease = 1.15;
    static constexpr double kFloorBytesPerS = 5e6;  // never slower than 40 Mbit/s
    // Nor slower than this share of the best rate achieved to that peer: a cut is a test of
    // whether slower is cleaner, and a few of them in a row must not strand a 1 Gbit/s path
    // at 40 Mbit/s for the hundreds of operations it takes to climb back.
    static constexpr double kFloorOfBest = 0.25;
    static constexpr double kUnpacedAbove = 4.0;  // x the achieved rate: the limit is moot
    static constexpr double kHelped = 0.7;        // a cut helped if loss fell below this share
    static constexpr double kFloorMargin = 2.0;   // loss must exceed the floor this much
    static constexpr double kFloorDecay = 0.98;   // per report: paths can get cleaner

    explicit SendPacer(int peers) : peers_(static_cast<std::size_t>(peers)) {}

    // Bytes per second to send to `peer` at; 0: as fast as the host can.
    double rate(int peer) const { return peers_[static_cast<std::size_t>(peer)].rate; }
    // The loss `peer`'s path shows whatever our rate (what cutting could not remove).
    double loss_floor(int peer) const { return peers_[static_cast<std::size_t>(peer)].floor; }

    // After an operation: the loss fraction `peer` reported, and the rate we achieved to it.
    void update(int peer, double reported_loss, double target_loss, double achieved_bytes_per_s);

private:
    struct Peer {
        double rate = 0;
        double floor = 0;
        double loss_at_cut = -1;  // >= 0: the last update cut the rate, at this loss
        double rate_before_cut = 0;
        double best = 0;  // highest rate achieved
    };
    std::vector<Peer> peers_;
};

}  // namespace optireduce
