// SPDX-License-Identifier: BSD-3-Clause
// Identical replicas: after its all-gather every rank tells every peer which chunks of the
// result it is missing, and every rank then fills the union of those holes the same way (with
// zeros, engine/bounded/bounded_holes.cpp), so the ranks' results stay bit-identical even where the
// network lost or delayed different data to different ranks. A rank that fills a hole with its
// own estimate (the alternative) makes its replica drift from its peers' with every such operation.
//
// The exchange, per operation, over the datagram channel (docs/protocol.md, "Identical
// replicas"): each rank sends its vote (its holes and which peers' votes it has) once to every
// peer, then again, as a request, every resend interval to the peers whose vote it still lacks;
// it answers at once a vote that lacks ours, unless that vote is final. It is done when it has
// every peer's vote: there is no confirmation round. A rank that closed keeps its last votes
// (kClosedKept operations) and answers late requests with a final vote, which settles it for the
// asker at once (the progress thread sends those answers).
// No rank closes without every peer's vote (engine/deadlines/vote_wait.hpp): a vote that is late
// is waited for, however late, up to OPTIREDUCE_VOTE_TIMEOUT_MS, past which the job ends with
// that reason. Closing without it (as this exchange did until 2026-12) left replicas that differ
// whenever the vote carried a hole: on the 10.5 M-parameter benchmark under the tail, in about
// half of the runs. Operations of one communicator run one at a time, so a peer is at most one
// operation behind the last one we closed: kClosedKept covers it.
#pragma once

#include "engine/clock.hpp"
#include "engine/dgram/comm_key.hpp"
#include "engine/dgram/hole_ranges.hpp"
#include "transport/dgram_endpoint.hpp"
#include "transport/wire_header.hpp"

#include <rdma/fabric.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <vector>

namespace optireduce {

class HoleVotes {
public:
    static constexpr std::size_t kRoundsKept = 8;  // per communicator: the open ones and peers' next ones
    static constexpr std::size_t kClosedKept = 4;  // per communicator: closed rounds still answered

    void add_comm(CommKey key, int rank, int size, std::vector<fi_addr_t> peers);
    void remove_comm(CommKey key);

    // A vote from `h.src_rank` (its header already checked by the router). Returns "" or why it
    // was refused (the router counts it as invalid).
    const char *on_vote(CommKey key, const wire::Header &h, std::span<const std::byte> payload);

    // The operation's side. open: our holes for operation `seq` of a result of `total_chunks`.
    void open(CommKey key, std::uint32_t seq, std::uint64_t total_chunks, std::vector<ChunkRange> holes,
              std::size_t max_payload);
    // Sends our vote where it is due (see above); `now` and `every` pace the repeats.
    void send(DgramEndpoint &ep, CommKey key, std::uint32_t seq, Clock::time_point now, Clock::duration every);
    // Every peer's vote is in.
    bool done(CommKey key, std::uint32_t seq);
    // The lowest rank whose vote we still lack (-1: none), for the error that ends a wait.
    int first_lacking(CommKey key, std::uint32_t seq);
    // `peer`'s vote for operation `seq` is in (before we opened it too): that peer has closed the
    // operation's all-gather and waits for none of our data.
    bool voted(CommKey key, std::uint32_t seq, int peer);
    struct Outcome {
        std::vector<ChunkRange> holes;  // the union of our holes and every vote in, merged
        int missing = 0;                // peers whose vote had not come (only where the wait gave up)
    };
    // Ends the operation's exchange; our vote stays to answer peers still asking.
    Outcome close(CommKey key, std::uint32_t seq);

    // Answers to votes for operations this rank has closed, sent by whichever thread drains.
    void serve(DgramEndpoint &ep);

private:
    struct Round {
        bool opened = false;
        std::uint64_t total_chunks = 0;
        std::size_t max_payload = 0;
        std::vector<ChunkRange> ours;             // our holes, once open
        std::vector<std::uint8_t> in, reply_due;  // by peer: its vote is in; it asked for ours
        std::vector<std::vector<ChunkRange>> votes;
        std::vector<Clock::time_point> last_sent;
    };
    struct Answer {
        fi_addr_t dest;
        std::vector<std::byte> datagram;
    };
    struct Comm {
        int rank = 0, size = 0;
        std::vector<fi_addr_t> peers;
        std::map<std::uint32_t, Round> rounds;
        // Our final votes (datagrams) of the latest rounds we closed, by sequence number: more than
        // one, as operations of one communicator may be in flight together.
        std::map<std::uint32_t, std::vector<std::byte>> closed;
        std::vector<Answer> answers;
    };
    static Round &start_round(Comm &c, Round &r);
    static std::vector<std::byte> datagram(CommKey key, const Comm &c, std::uint32_t seq, const Round &r, bool final);

    std::mutex mutex_;  // taken after the router's when the router hands a vote in; never before
    std::map<CommKey, Comm> comms_;
    std::atomic<bool> pending_{false};
};

}  // namespace optireduce
