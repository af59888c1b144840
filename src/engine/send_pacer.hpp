// Per-destination send pacing of bounded mode (the dynamic incast of DESIGN.md section 4): the
// datagram channel has no acknowledgements, so a sender learns that it overruns a receiver (its
// socket buffer, a rate-limited link) only from the loss that receiver reports in the header of
// its own datagrams. Multiplicative decrease on reported loss, from the rate actually achieved;
// gentle increase while it stays clean; unpaced again once the limit is far above what the host
// sends anyway. Pure arithmetic; the sender applies the rate as a token bucket.
#pragma once

#include <vector>

namespace optireduce {

class SendPacer {
public:
    static constexpr double kDecrease = 0.7, kIncrease = 1.15;
    static constexpr double kFloorBytesPerS = 5e6;     // never slower than 40 Mbit/s
    static constexpr double kUnpacedAbove = 4.0;       // x the achieved rate: the limit is moot

    explicit SendPacer(int peers) : rate_(static_cast<std::size_t>(peers), 0.0) {}

    // Bytes per second to send to `peer` at; 0: as fast as the host can.
    double rate(int peer) const { return rate_[static_cast<std::size_t>(peer)]; }

    // After an operation: the loss fraction `peer` reported, and the rate we achieved to it.
    void update(int peer, double reported_loss, double target_loss, double achieved_bytes_per_s);

private:
    std::vector<double> rate_;
};

}  // namespace optireduce
