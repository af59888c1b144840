// SPDX-License-Identifier: BSD-3-Clause
// The receive side of bounded mode: every datagram the progress thread drains comes here, is
// checked in the order of docs/protocol.md ("Validation"), and is placed into the staging memory
// of the operation it belongs to. No barrier anywhere: datagrams for an operation this rank has
// not started yet are held (bounded), those for an operation it already closed are counted late
// and dropped. Every drop is counted in the process stats (datagrams_*), and logged at debug
// level with its reason. Nothing from the network is written anywhere before every check passed.
#pragma once

#include "codec/wire_codec.hpp"
#include "engine/clock.hpp"
#include "engine/dgram/chunk_bitmap.hpp"
#include "engine/dgram/comm_key.hpp"
#include "engine/dgram/hole_votes.hpp"
#include "engine/dgram/phase2_repair.hpp"
#include "engine/dgram/scatter_repair.hpp"
#include "transport/wire_header.hpp"

#include <rdma/fabric.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <utility>
#include <vector>

namespace optireduce {

// The receive state of one open operation. Written by the router under its mutex; the owning
// operation reads it under the same mutex (or after closing the phase, without it).
struct OpReceive {
    std::uint32_t seq = 0;
    std::size_t floats_per_datagram = 0;
    Codec codec = Codec::fp32;  // of every reduce-scatter and all-gather payload
    // Per phase (index 0: reduce-scatter, 1: all-gather) and sender: where its stream lands and
    // how long it is (floats).
    std::vector<float *> dest[2];
    std::vector<std::size_t> length[2];
    ChunkBitmap map[2];
    Clock::time_point last_arrival[2]{};
    // Per phase and sender: when its clock started (its first datagram, in the all-gather its
    // first not flagged kEarly; time_point{} until then) and its latest arrival. The phase
    // deadline runs per sender from `started`: it bounds the network, not the sender's compute.
    std::vector<Clock::time_point> started[2], last_from[2];
    // Reduce-scatter, when the owner pipelines (contributors > 0): contributions that arrived for
    // each chunk of its shard, and the chunks whose contributions are all in since it last took
    // them, so their reduced values can go out before the phase closes.
    std::uint16_t contributors = 0;
    std::vector<std::uint16_t> arrivals;
    std::vector<std::uint32_t> ready;
    std::vector<std::uint8_t> loss_hint;  // latest reported by each sender
    // Per phase and sender: its own deadline of the phase, from its latest header (us; 0: none).
    std::vector<std::uint32_t> deadline_us[2];
    std::vector<std::uint8_t> waited;  // reduce-scatter: the sender's header said wire::kWaited
    std::vector<std::uint8_t> ahead;   // a datagram of the sender's for a later operation arrived
    // Phase 2: each owner's error of its shard (binary16), the largest it sent: datagrams it sent
    // before its reduce-scatter closed are exact and carry 0.
    std::vector<std::uint16_t> shard_error;
    // Per phase, written only by DgramRouter::close_phase (the owner decides when, the router
    // records it): datagrams that arrive within `near_window` after `closed_at` are near misses,
    // a sign the deadline was a little short. A straggler's arrive much later and do not count.
    struct Window {
        bool open = true;
        Clock::time_point closed_at{};
        Clock::duration near_window{};
        std::uint64_t near_misses = 0;
        std::vector<std::uint8_t> slow;  // per sender: a path far slower than the others (no near misses)
    } window[2];
    std::size_t bytes = 0;  // the operation's size, for the deadline controller
    // Our own reduce-scatter contribution, offered to receivers that ask for chunks of it again
    // (set by offer_scatter once it is in the wire layout; read only while the operation is open).
    ScatterSource scatter;

    // Sizes the per-sender state for a communicator of `senders` ranks, all zero.
    void size_for(std::size_t senders) {
        loss_hint.assign(senders, 0);
        waited.assign(senders, 0);
        ahead.assign(senders, 0);
        shard_error.assign(senders, 0);
        for (int p = 0; p < 2; ++p) {
            started[p].assign(senders, Clock::time_point{});
            last_from[p].assign(senders, Clock::time_point{});
            deadline_us[p].assign(senders, 0);
        }
    }
};

// Near misses of a closed operation, reported back to the deadline controller.
struct NearMisses {
    std::size_t bytes = 0;
    std::uint64_t expected[2] = {0, 0};  // chunks of each phase
    std::uint64_t count[2] = {0, 0};
};

class DgramRouter {
public:
    // Operations of a communicator held ahead of the one this rank has open, and their bytes.
    static constexpr std::uint32_t kHeldAheadOps = 4;
    static constexpr std::size_t kHeldBytesPerComm = 256u << 20;

    using CommKey = optireduce::CommKey;

    void add_comm(CommKey key, int rank, int size, std::vector<fi_addr_t> peers);
    void remove_comm(CommKey key);

    // The progress thread: one datagram, with the FI_SOURCE address when the provider gave one.
    void on_datagram(std::span<const std::byte> d, fi_addr_t source);

    // The operation's receive side: opens it (replaying what was held for it) / closes it
    // entirely. Later datagrams for it are late.
    void open_op(CommKey key, OpReceive *op);
    void close_op(CommKey key, OpReceive *op);
    // The open operation's reduce-scatter contribution is in the wire layout: from now until it
    // closes, receivers' requests for chunks of it are answered from `source`.
    void offer_scatter(OpReceive &op, ScatterSource source);
    // The owner closed one phase (holding `lock`, the router's mutex): from now on its datagrams
    // are late, and those within `near_window` count as near misses, except from the senders
    // flagged in `slow` (paths far slower than the others: typical_paths.hpp).
    void close_phase(const std::unique_lock<std::mutex> &lock, OpReceive &op, int phase, Clock::time_point at,
                     Clock::duration near_window, std::span<const std::uint8_t> slow);
    // An operation this rank will not run (it failed before opening): datagrams held for it are
    // dropped and counted late, later ones are late, so the next operation is seq + 1 here as on
    // every other rank.
    void skip_op(CommKey key, std::uint32_t seq);
    // Near misses of operations closed since the last call, then forgotten.
    std::vector<NearMisses> take_near_misses(CommKey key);

    // When sender `src` of the communicator was last heard from (any datagram that passed
    // checks 1-3; time_point{}: never).
    Clock::time_point last_heard(CommKey key, int src);

    // For operations waiting on their receive state.
    std::mutex &mutex() { return mutex_; }
    std::condition_variable &changed() { return changed_; }

    // Phase-2 repair: requests that pass the header checks go to it; communicators are added
    // to and removed from it with the router's.
    Phase2Repair &repair() { return repair_; }
    // The all-gather's hole votes, the same way (engine/dgram/hole_votes.hpp); each vote handed in
    // also notifies changed().
    HoleVotes &votes() { return votes_; }

private:
    struct Comm {
        int rank = 0, size = 0;
        std::vector<fi_addr_t> peers;
        std::uint32_t next_open = 0;  // lowest sequence not opened yet
        std::map<std::uint32_t, OpReceive *> open;
        // Raw datagrams, each prefixed by its length and arrival time.
        std::map<std::uint32_t, std::vector<std::byte>> held;
        std::size_t held_bytes = 0;
        bool warned_behind = false;  // held datagrams dropped: logged once
        // Per sender: the latest operation it sent a datagram for, once heard (OpReceive::ahead).
        std::vector<std::uint32_t> latest;
        std::vector<std::uint8_t> heard;
        std::vector<Clock::time_point> last_heard;  // per sender, its latest datagram of any kind
        // Recently closed operations, by sequence modulo the ring, for near-miss accounting.
        struct Closed {
            std::uint32_t seq = 0;
            bool valid = false, reported = false;
            Clock::time_point closed_at[2]{};
            Clock::duration near_window[2]{};
            std::vector<std::uint8_t> slow[2];
            NearMisses misses;
        };
        std::array<Closed, 8> closed;
    };
    void count_late(Comm &c, const wire::Header &h, Clock::time_point now);
    // A request for reduce-scatter chunks again (engine/dgram/scatter_repair.hpp): answered if its
    // operation is open here with its contribution offered. Returns "" or why it was refused.
    const char *answer_scatter(CommKey key, Comm &c, const wire::Header &h, std::span<const std::byte> payload);
    void dispatch(Comm &c, const wire::Header &h, std::span<const std::byte> d, Clock::time_point now);
    // `arrival`: when the datagram came off the wire (held ones keep theirs).
    void place(OpReceive &op, const wire::Header &h, std::span<const std::byte> payload, Clock::time_point arrival);
    void hold(Comm &c, std::uint32_t seq, std::span<const std::byte> d, Clock::time_point arrival);
    // Marks seq as started (later datagrams for it are late) and hands each datagram held for it
    // to `each(datagram, arrival)`, forgetting them.
    template <typename Fn>
    void take_held(Comm &c, std::uint32_t seq, Fn &&each);
    void reject(const char *why);

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<CommKey, Comm> comms_;
    // Communicators freed here, so their stragglers' datagrams count as late, not invalid.
    static constexpr std::size_t kRetiredKept = 1024;
    std::set<CommKey> retired_;
    Phase2Repair repair_;
    HoleVotes votes_;
};

}  // namespace optireduce
