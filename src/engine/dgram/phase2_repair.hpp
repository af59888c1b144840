// SPDX-License-Identifier: BSD-3-Clause
// Phase-2 repair: a rank missing chunks of a peer's reduced shard asks that peer for them while
// the all-gather's budget lasts, because all-gather loss is the only thing that makes replicas
// differ (each rank fills a missing reduced chunk with its own estimate). This component owns
// both sides: the owner publishes its latest reduced shard, the router hands it every request
// that passed the header checks, and whichever thread drains the endpoint answers them with
// ordinary all-gather datagrams (the operation's own while it runs, the progress thread after
// it returned); the asking side turns a bitmap's holes into requests. Best effort, bounded: at
// most kQueuedRequestsPerComm queued per communicator, answers only for the latest shard.
// Reduce-scatter repair (engine/dgram/scatter_repair.hpp) makes its answers under the router's lock
// and queues them here, so that both phases' answers go out through one serve() and one cap.
#pragma once

#include "codec/coded_stream.hpp"
#include "engine/clock.hpp"
#include "engine/dgram/chunk_bitmap.hpp"
#include "engine/dgram/comm_key.hpp"
#include "transport/dgram_endpoint.hpp"
#include "transport/wire_header.hpp"

#include <rdma/fabric.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

namespace optireduce {

// One datagram to send again, answering a peer's request: an all-gather one, or a reduce-scatter
// one (engine/dgram/scatter_repair.hpp).
struct RepairJob {
    fi_addr_t dest = 0;
    bool scatter = false;
    std::array<std::byte, wire::kHeaderBytes> header{};
    std::vector<std::byte> payload;
};

// The asking side, for one operation: the all-gather chunks missing from each owner.
using RepairAsks = std::vector<std::pair<std::size_t, std::vector<std::uint32_t>>>;

// Appends the answer to a request for chunk `chunk` of `stream` (the chunk is within it) to
// `dest`: `header` (the phase's common one, its codec included) with the chunk's index and
// length, and a copy of its coded bytes, the very bytes the first sending carried. Both phases'
// answers are made here (engine/dgram/scatter_repair.hpp for the reduce-scatter's).
void append_answer(std::vector<RepairJob> &out, fi_addr_t dest, bool scatter, wire::Header header,
                   const CodedStream &stream, std::uint32_t chunk);

class Phase2Repair {
public:
    static constexpr std::size_t kQueuedRequestsPerComm = 64;

    void add_comm(CommKey key, int rank, std::vector<fi_addr_t> peers);
    void remove_comm(CommKey key);

    // The owner's reduced shard of operation `seq`, once final. It stays until the next one
    // replaces it, so a peer's request is answered even after the owner's call returned.
    // Its coded bytes are kept, so every answer carries what the first sending did and every
    // replica decodes the same values.
    void publish(CommKey key, std::uint32_t seq, const CodedStream &shard, std::uint16_t shard_error);
    // A request from `h.src_rank` (its header already checked by the router). Returns "" or why
    // it was refused (the router counts it as invalid).
    const char *queue(CommKey key, const wire::Header &h, std::span<const std::byte> payload);
    // Answers already made (reduce-scatter repair, under the router's lock while their operation
    // is open), sent with the others. At most kQueuedAnswerBytes of payload wait per
    // communicator (answer_room): twice what the host's queue may hold of answers at 1 Gbit/s
    // (answer_queue_cap), since what does not fit there is dropped anyway, and each answer is a
    // copy made under the router's lock.
    void queue_answers(CommKey key, std::vector<RepairJob> &answers);
    std::size_t answer_room(CommKey key);
    static constexpr std::size_t kQueuedAnswerBytes = 1u << 20;

    // Requests that arrived since the last call, turned into the datagrams that answer them.
    bool pending() const { return pending_.load(std::memory_order_acquire); }
    void take(std::vector<RepairJob> &out);
    // Sends them (a no-op, one atomic load, when nothing was asked) while our host holds at
    // most answer_queue_cap(drain_bytes_per_s); the rest are dropped and asked for again.
    void serve(DgramEndpoint &ep, double drain_bytes_per_s = 0);
    // Answers queue in front of our hole vote, which every peer waits for, so they may fill our
    // host's queue only up to what it drains in kAnswerQueueWindow at the rate it drains
    // (QueueBudget's measurement, and its rule: QueueBudget::drains_within), never less than
    // QueueBudget::kAlwaysQueued (the whole cap when the rate is unknown or slow). At 1 Gbit/s
    // that is 500 KB (about 290 chunks per request in the 10.5 M-parameter benchmark), where the
    // fixed 128 KB cap answered about 90 and a rank that missed 500 had to ask six times
    // (docs/notes/2026-12-06-clean-network-loss-send-rounds.md); behind a link cut to 90 Mbit/s
    // it stays 128 KB (12 ms of that link).
    static constexpr Clock::duration kAnswerQueueWindow = std::chrono::milliseconds(4);
    static std::int64_t answer_queue_cap(double drain_bytes_per_s);
    // Reduce-scatter answers are asked for while the sender still streams its own reduce-scatter,
    // which keeps its host's queue longer than the all-gather's cap: under that cap, on the
    // 2.2 M-parameter job at 1% loss, half of them were dropped ("our host's queue is full") and
    // the receivers waited out their answers' window for nothing. They go while the queue drains
    // within kScatterAnswerQueueWindow (a fraction of the receiver's window, four quiet times of
    // a phase of tens of ms), after the all-gather's answers, whose holes cost every rank.
    static constexpr Clock::duration kScatterAnswerQueueWindow = std::chrono::milliseconds(20);
    static std::int64_t scatter_answer_queue_cap(double drain_bytes_per_s);

    // The asking side. `missing` reads the map under the router's lock (the router writes it);
    // `ask` sends one request to each owner without it (`phase`: wire::Phase::repair, or
    // scatter_repair for the chunks of the senders' reduce-scatter contributions). A failed
    // request is one more loss, already counted as such: it is only logged.
    // `asked(s)`, when given, says whether sender s is asked at all (the reduce-scatter's asks only
    // the senders that have started).
    static void missing(const ChunkBitmap &all_gather, RepairAsks &asks,
                        const std::function<bool(std::size_t)> &asked = nullptr);
    static void ask(DgramEndpoint &ep, std::span<const fi_addr_t> peers, CommKey key, int rank, std::uint32_t seq,
                    const RepairAsks &asks, std::size_t max_payload_bytes, wire::Phase phase = wire::Phase::repair);

private:
    struct Request {
        std::uint32_t seq, src;
        std::vector<std::uint32_t> chunks;
    };
    struct Comm {
        int rank = 0;
        std::vector<fi_addr_t> peers;
        bool published = false;
        std::uint32_t seq = 0;
        std::uint16_t shard_error = 0;
        CodedStream shard;  // its data points into shard_bytes
        std::vector<std::byte> shard_bytes;
        std::vector<Request> requests;
        std::vector<RepairJob> answers;  // made already (queue_answers)
        std::size_t answer_bytes = 0;    // their payload
    };
    void answer(CommKey key, const Comm &c, const Request &r, std::vector<RepairJob> &out);

    // Taken after the router's mutex when the router queues a request; never the other way.
    std::mutex mutex_;
    std::map<CommKey, Comm> comms_;
    std::atomic<bool> pending_{false};
};

}  // namespace optireduce
