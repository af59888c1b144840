// One bounded-time Transpose AllReduce (DESIGN.md sections 4-6) over the datagram channel.
//
// Phase 1 (reduce-scatter): this rank sends shard j of its input to rank j in datagrams,
// destinations interleaved and paced per destination. The phase closes when every contribution
// to our shard arrived, when every sender's tail datagram arrived and the link has been quiet for
// a fraction of the expected completion time (early close), or at the phase deadline, whichever
// comes first. Each chunk of our shard is then the sum of the contributions that arrived,
// rescaled by N / contributors. Phase 2 (all-gather): our reduced shard goes to every rank;
// the phase closes the same way, and a reduced chunk that did not arrive is filled with our own
// contribution times N. No barrier before either phase: datagrams that arrive before this rank
// opened the operation are held by the router and replayed.
//
// The result is written to the user's buffer once, after both phases closed; nothing from the
// network can reach it after the call returned, because the router only places into staging of
// open operations.
#pragma once

#include "codec/sharding.hpp"
#include "engine/comm_state.hpp"
#include "engine/dgram_router.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace optireduce {

class BoundedOperation {
public:
    BoundedOperation(CommState &comm, Staging &staging, const float *in, float *out, std::size_t n);
    BoundedOperation(const BoundedOperation &) = delete;
    BoundedOperation &operator=(const BoundedOperation &) = delete;

    // Runs the whole operation on the calling thread; returns an empty string or what failed.
    std::string run();

private:
    enum class Close { complete, early, deadline };
    // Sends our stream of `phase` (0, 1) to every peer, paced, until done or `limit`.
    std::string send_phase(int phase, Clock::time_point limit);
    int drain();  // DgramEndpoint::poll into the router
    Close wait_phase(int phase, Clock::time_point start, Clock::time_point deadline, double quiet_ms);
    void reduce_own_shard();
    void finish_phase(int phase, Close how);
    void fill_and_copy_out();
    void learn();

    CommState &comm_;
    CommState::Bounded &b_;
    DgramRouter &router_;
    const float *in_;
    float *out_;
    std::size_t n_;
    float *result_;
    float *incoming_;
    std::uint32_t seq_;
    Range own_;
    OpReceive rx_;
    // Per peer and phase: what we sent, for the pacer.
    std::vector<std::uint64_t> sent_bytes_;
    std::vector<double> send_seconds_;
    double phase_ms_[2] = {0, 0};
    double last_arrival_ms_[2] = {0, 0};
};

}  // namespace optireduce
