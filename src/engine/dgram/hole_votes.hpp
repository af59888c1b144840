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
// asker at once (the progress thread sends those answers). Bounded: a vote that does not come
// within the operation's budget is counted (hole_votes_missing) and the union of the votes in is
// filled; only then may replicas differ. A vote that comes after we closed without it is counted
// (hole_votes_late) and tells how much longer the budget would have had to be (take_late), which
// the next operations' budgets learn (engine/deadlines/vote_wait.hpp); every vote also carries its sender's
// lesson, and close() returns the largest of this round's (votes that come after it teach only
// their lateness: their lesson is an operation old).
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

    // A vote from `h.src_rank` (its header already checked by the router), arrived at `arrival`.
    // Returns "" or why it was refused (the router counts it as invalid).
    const char *on_vote(CommKey key, const wire::Header &h, std::span<const std::byte> payload,
                        Clock::time_point arrival);

    // The operation's side. open: our holes for operation `seq` of a result of `total_chunks`.
    // `lesson_100us`: our lesson of late votes (VoteWait::lesson_100us), which our vote carries.
    void open(CommKey key, std::uint32_t seq, std::uint64_t total_chunks, std::vector<ChunkRange> holes,
              std::size_t max_payload, std::uint16_t lesson_100us = 0);
    // Sends our vote where it is due (see above); `now` and `every` pace the repeats.
    void send(DgramEndpoint &ep, CommKey key, std::uint32_t seq, Clock::time_point now, Clock::duration every);
    // Every peer's vote is in.
    bool done(CommKey key, std::uint32_t seq);
    // `peer`'s vote for operation `seq` is in (before we opened it too): that peer has closed the
    // operation's all-gather and waits for none of our data.
    bool voted(CommKey key, std::uint32_t seq, int peer);
    struct Outcome {
        std::vector<ChunkRange> holes;  // the union of our holes and every vote in, merged
        int missing = 0;                // peers whose vote did not come
        double peers_lesson_ms = 0;     // the largest lesson (HoleVote::lesson_100us) their votes carried
    };
    // Ends the operation's exchange at `now`, `past_base_ms` after its budget's base (VoteWait);
    // our vote stays to answer peers still asking.
    Outcome close(CommKey key, std::uint32_t seq, Clock::time_point now, double past_base_ms);
    // The most that a vote we had closed without needed past its operation's base (how long we
    // had waited past it, plus how late it came), over the late votes since the last call; 0:
    // none came.
    double take_late(CommKey key);

    // Answers to votes for operations this rank has closed, sent by whichever thread drains.
    void serve(DgramEndpoint &ep);

private:
    struct Round {
        bool opened = false;
        std::uint64_t total_chunks = 0;
        std::size_t max_payload = 0;
        std::uint16_t lesson_100us = 0;           // our lesson, which our vote carries
        std::uint16_t peers_lesson_100us = 0;     // the largest lesson the peers' votes in carry
        std::vector<ChunkRange> ours;             // our holes, once open
        std::vector<std::uint8_t> in, reply_due;  // by peer: its vote is in; it asked for ours
        std::vector<std::vector<ChunkRange>> votes;
        std::vector<Clock::time_point> last_sent;
    };
    // A round we closed: our final vote (a datagram), and whose votes we closed without.
    struct Closed {
        std::vector<std::byte> datagram;
        Clock::time_point at{};
        double past_base_ms = 0;
        std::vector<std::uint8_t> missing;  // by peer
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
        std::map<std::uint32_t, Closed> closed;
        std::vector<Answer> answers;
        double late_past_base_ms = 0;  // take_late's
    };
    static Round &start_round(Comm &c, Round &r);
    static std::vector<std::byte> datagram(CommKey key, const Comm &c, std::uint32_t seq, const Round &r, bool final);

    std::mutex mutex_;  // taken after the router's when the router hands a vote in; never before
    std::map<CommKey, Comm> comms_;
    std::atomic<bool> pending_{false};
};

}  // namespace optireduce
