// SPDX-License-Identifier: BSD-3-Clause
// One bounded-time Transpose AllReduce over the datagram channel (docs/architecture.md, "The life
// of one bounded operation").
//
// The vector first goes into its wire layout (codec/block_layout.hpp): with the randomized
// Hadamard transform on, random signs and an orthonormal transform per block, shards of whole
// blocks, blocks interleaved inside each shard; without it, the input as is.
//
// Phase 1 (reduce-scatter): this rank sends shard j of its wire vector to rank j in datagrams,
// destinations interleaved and paced per destination (engine/bounded/stream_sender.hpp). The phase closes when every
// contribution to our shard arrived, when every sender's tail datagram arrived and the link has been quiet for a
// fraction of the expected completion time (early close), or at the phase deadline, whichever comes first. Each chunk
// of our shard is then our own contribution plus the peers' that arrived, rescaled to stand for all peers
// (codec/estimators.hpp). Phase 2 (all-gather): our reduced shard goes to every rank, each chunk as soon as all its
// contributions are in (the first ones while phase 1 still runs), the rest after phase 1 closed; the phase closes the
// same way, and a reduced chunk that did not arrive is filled with our own contribution times N. No barrier before
// either phase: datagrams that arrive before this rank opened the operation are held by the router and replayed. The
// inverse transform runs at every rank over the whole vector, not at each shard's owner
// (docs/notes/2026-12-02-hadamard-accuracy.md says why).
//
// The result is written to the user's buffer once, after both phases closed; nothing from the
// network can reach it after the call returned, because the router only places into staging of
// open operations. Alongside, the operation estimates the error it introduced (OpReport).
#pragma once

#include "codec/block_layout.hpp"
#include "codec/sharding.hpp"
#include "engine/bounded/op_feedback.hpp"
#include "engine/bounded/stream_sender.hpp"
#include "engine/deadlines/phase_closer.hpp"
#include "engine/deadlines/typical_paths.hpp"
#include "engine/dgram/dgram_router.hpp"
#include "engine/dgram/shard_reducer.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/op_report.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace optireduce {

class BoundedOperation {
public:
    // seq: the operation's sequence number, taken from comm.next_seq by the caller before anything
    // that can fail, so that every rank numbers every eligible call alike.
    // carry: OPTIREDUCE_CARRY's slot for this call (nullptr: off); what the operation drops is
    // kept there for the next call on the same buffer.
    BoundedOperation(CommState &comm, Staging &staging, const BlockLayout &layout, std::uint32_t seq, const float *in,
                     float *out, CarryStore::Slot *carry = nullptr);
    BoundedOperation(const BoundedOperation &) = delete;
    BoundedOperation &operator=(const BoundedOperation &) = delete;

    // Runs the whole operation on the calling thread. Loss does not fail it: a send the channel
    // refuses is loss (StreamSender), which the deadlines and estimators handle like any other,
    // so every rank returns alike. Only a peer gone for good does (failure()).
    void run();
    // Bytes of Staging::coded an operation of `layout` needs (0 under fp32).
    static std::size_t coded_staging_bytes(const BlockLayout &layout, const CommState::Bounded &b);
    // After run(): what it lost and the error it estimates it introduced.
    const OpReport &report() const { return report_; }
    // The one way run() fails: a peer's hole vote did not come by OPTIREDUCE_VOTE_TIMEOUT_MS
    // (the peer is gone); the result is then not written. Empty: it did not fail.
    const std::string &failure() const { return failure_; }

private:
    // The steps of run(), in order: open the receive side, transform, start the clock; the
    // reduce-scatter (our shard reduced, each chunk handed to `gather` when ready); the all-gather.
    void open();
    void reduce_scatter(StreamSender &gather);
    void all_gather(StreamSender &gather);
    wire::Header phase_header(int phase) const;  // what every datagram of the phase shares
    int drain();                                 // DgramEndpoint::poll into the router
    // Gives up `sender`'s streams to the receivers that closed `phase` (StreamSender::stop).
    void stop_sends_to_closed(StreamSender &sender, int phase);
    // Waits for the phase to close, as closer_[phase] decides (engine/deadlines/phase_closer.hpp). In the
    // reduce-scatter, `gather` gets each chunk of our shard whose contributions are all in,
    // reduced, and sends it on (pipelined phases).
    Close wait_phase(int phase, StreamSender *gather);
    // The closer's inputs, read from the receive state under the router's lock.
    void read_facts(int phase);
    LinkQuiet link_quiet(int phase) const;
    // Each sender's path as the phase closed at `closed` (for typical_paths), under the lock.
    std::vector<PathSample> path_samples(int phase, Clock::time_point closed) const;
    // What the all-gather sender did in one pipeline() round: it sent something, or when its
    // pacer lets it send next (max(): not paced; with nothing sent, the socket's queue is full).
    struct Pumped {
        bool progressed = false;
        Clock::time_point next_slot = Clock::time_point::max();
    };
    Pumped pipeline(StreamSender &gather, std::vector<std::uint32_t> &ready);
    // A poll found nothing and the spin is over: sleeps in the kernel until a datagram comes,
    // `wake` (the closer's next moment) or the sender's next slot; with the sender's queue full,
    // until it has room (or `wake`).
    void rest(Clock::time_point wake, const StreamSender *gather, const Pumped &pumped);
    void finish_phase(int phase, Close how);
    void fill_and_copy_out();
    void fill_own_holes();
    void estimate_error();
    // OPTIREDUCE_IDENTICAL_REPLICAS (engine/bounded/bounded_holes.cpp): the all-gather chunks we miss, in
    // the numbering every rank shares; the exchange of them (engine/dgram/hole_votes.hpp); the fill of
    // the union, alike on every rank.
    std::vector<ChunkRange> our_holes() const;
    void agree_on_holes();
    // The wait for votes gave up at `now` (it began at `start`): failure_ says whose and why.
    void vote_gone(Clock::time_point start, Clock::time_point now);
    void fill_agreed_holes();
    // OPTIREDUCE_CARRY: our own contribution to the agreed holes, back in the input's domain, into
    // the carry slot (engine/setup/carry_store.hpp).
    void keep_residual();
    // Under carry, an operation whose agreed holes hold more than this fraction of the vector is
    // not carried but rescaled, as without carry: a host slow for seconds makes every step of
    // its spell lose most of itself (75% on the 2.2 M job under the tail), and carried, that
    // much came back as stale lumps that cost the job 5-20 more steps. Every rank has the same
    // holes, so the same choice.
    static constexpr double kCarryMaxHoles = 0.25;
    // Codecs other than fp32: every chunk of our contribution to the others' shards, coded once.
    void code_contribution();
    // Chunk c of our reduced shard is final: coded once for every receiver (and for repair), and
    // our own copy replaced by what they decode, so that every replica holds the same values;
    // then it may go.
    void shard_chunk_ready(StreamSender &gather, std::uint32_t c);
    // The stream seed of chunk c of `shard` under stochastic rounding: independent between
    // senders, operations and chunks.
    std::uint64_t chunk_seed(int shard, std::uint32_t c) const;

    CommState &comm_;
    CommState::Bounded &b_;
    DgramRouter &router_;
    const BlockLayout &layout_;
    const float *in_;
    float *out_;
    std::size_t n_;
    float *transformed_;  // staging for our transformed contribution (transform only)
    const float *wire_;   // our contribution in the wire layout: transformed_ or in_
    float *result_;
    float *incoming_;
    std::byte *coded_;  // coded payloads, by shard (codecs other than fp32; Staging::coded)
    std::uint32_t seq_;
    Range own_;
    // What our datagrams carry of each shard (codec/coded_stream.hpp): our contribution to the
    // others', our reduced shard at our own rank. Under fp32 they point into wire_ and result_.
    std::vector<CodedStream> streams_;
    OpReceive rx_;
    // Per peer and phase: what we sent, for the pacer.
    std::vector<std::uint64_t> sent_bytes_;
    std::vector<double> send_seconds_;
    PhaseClock clock_[2];  // each phase's, set when it starts
    PhaseCloser closer_[2];
    std::vector<SenderFacts> facts_[2];  // per sender; at the phase's close, as it closed
    TypicalPaths typical_[2];            // at the phase's close: what the deadline learns
    double phase_ms_[2] = {0, 0};
    bool sends_given_up_ = false;  // a phase's senders stopped at the receivers' deadline
    double last_arrival_ms_[2] = {0, 0};
    ShardReducer reducer_;  // our shard: the reduction, its estimates and their error
    OpFeedback feedback_;   // to the counters and the communicator's controllers
    // Our phase-2 fills' error (squared, absolute, in the wire domain, whose norm is the result's:
    // the transform is orthonormal).
    double fill_error_sq_ = 0;
    HoleVotes::Outcome agreed_;  // the union of every rank's holes, once agree_on_holes ran
    std::string failure_;
    CarryStore::Slot *carry_;
    bool carrying_ = false;           // carry_, and this operation's holes are carried (kCarryMaxHoles)
    std::uint64_t hole_entries_ = 0;  // wire entries in the agreed holes
    OpReport report_;
};

}  // namespace optireduce
