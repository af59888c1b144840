// SPDX-License-Identifier: BSD-3-Clause
// The sending side of one phase of a bounded operation: one stream of datagrams per peer, sent in
// runs (one offloaded send each on the kernel channel), every peer's run of a round in one call,
// paced per destination (SendPacer) and retried when the channel is full.
//
// A chunk may be sent only once it is ready. In the reduce-scatter every chunk is ready at once
// (the input is there); in the all-gather a chunk of our reduced shard becomes ready as soon as
// its contributions are in, so the all-gather of the first chunks overlaps the reduce-scatter's
// last (pipelined phases: docs/architecture.md, "Phase 1"). Chunks go out in the order they
// became ready; the tail flag marks the last datagrams sent to each peer, whatever their index.
#pragma once

#include "codec/coded_stream.hpp"
#include "engine/deadlines/queue_budget.hpp"
#include "engine/setup/comm_state.hpp"
#include "transport/dgram_endpoint.hpp"
#include "transport/wire_header.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace optireduce {

class StreamSender {
public:
    // `header` is the phase's common header (chunk, flags, payload length set per datagram).
    // Sent bytes and the time each stream took are added to bytes[peer] and seconds[peer], which
    // the pacer learns from after the operation.
    StreamSender(CommState::Bounded &b, const wire::Header &header, std::vector<std::uint64_t> &bytes,
                 std::vector<double> &seconds);

    // A stream to `peer`, one datagram per chunk of `src` (its chunks are floats_per_datagram
    // entries, coded by the communicator's codec).
    void add_stream(int peer, const CodedStream &src);
    // Every chunk of every stream may go (the reduce-scatter).
    void all_ready();
    // Chunk `c` may go to every stream (the all-gather: streams share our reduced shard).
    void ready(std::uint32_t c);
    // The shard_error that datagrams sent from now on carry (the all-gather: known once the
    // reduce-scatter closed; chunks sent before it are exact and carry 0).
    void set_shard_error(std::uint16_t e) { header_.shard_error = e; }
    // Whether datagrams sent from now on carry wire::kEarly (the all-gather, while our
    // reduce-scatter still runs: receivers do not start our phase-2 clock on them).
    void set_early(bool early) { early_ = early ? wire::kEarly : 0; }

    // One round: a run to every stream with ready chunks whose pacer allows it. *progressed says
    // whether anything went out or was given up; *earliest, when nothing could go, is when a
    // paced stream may send again (time_point::max(): none is paced). A run the channel fails
    // (an error, not a full queue) is given up and counted (datagrams_send_failed): to its
    // receiver that is loss like any other, which its deadline and estimators handle. Failing
    // the operation instead would return an error on this rank alone while the others go on
    // without our data anyway. `room`: at most this many bytes go out (QueueBudget::room).
    // Each round starts with the next stream: a queue that fills part-way through a round
    // takes its first runs, and rounds that always began with the same stream gave that
    // receiver most of our uplink on top of the other senders' shares, more than its switch port
    // drains (a clean network lost 0.3-1.1% of the datagrams; docs/notes/2026-12-06-clean-network-loss-send-rounds.md).
    void pump(bool *progressed, Clock::time_point *earliest, std::int64_t room = QueueBudget::kUnlimited);
    // Rounds until every chunk is sent or `limit`, draining the receive side between them. What
    // the host still holds of our sends is kept to what its link drains in time (QueueBudget;
    // PhaseCloser::queue_deadline): behind a slow link the rest would arrive after the
    // receivers' deadline and hold up everything sent after it.
    template <typename Drain>
    void send_all(Clock::time_point limit, const QueueDeadline &queue, Drain &&drain);

    // The receiver `peer` stopped waiting for this phase's data (it closed the phase, or moved on
    // to a later operation): what its stream has not sent is given up now, and so is every chunk
    // that becomes ready for it later. A link too slow for its data then carries nothing nobody
    // waits for, and the rank starts its next phase as soon as the receivers are done with it.
    void stop(int peer);

    bool has_ready() const;  // ready chunks not sent yet
    // Bytes on the wire of the chunks not sent yet, ready or not, to receivers still waiting.
    std::int64_t unsent_bytes() const;
    // Ends the phase: each stream's sending time is accounted (the time it had ready chunks
    // not sent yet: an all-gather stream waiting for chunks to be reduced is not slow), and the
    // ready chunks still unsent are given up (datagrams_given_up): send_all stopped at the
    // receivers' deadline.
    void finish();
    // Whether finish() gave anything up: this rank's link, not its compute, made it late.
    bool gave_up() const { return gave_up_; }

private:
    struct Stream {
        int peer;
        CodedStream src;
        std::uint32_t chunks;
        std::size_t run;                   // datagrams per offloaded send (incast_run)
        std::vector<std::uint32_t> order;  // ready chunks in the order they go out
        std::size_t sent = 0;              // of order
        Clock::time_point next_time{};
        Clock::time_point pending_since{};  // ready chunks waiting since then (sent < order)
        double busy_s = 0;                  // time with ready chunks waiting, closed intervals
        std::vector<std::byte> headers;     // of the run in flight
        bool stopped = false;               // stop(peer): its receiver waits no more
    };
    // The ready chunks of `s` from its next unsent one that are consecutive: one run, contiguous
    // payload. Fills its headers; returns how many.
    std::uint32_t build_run(Stream &s, DgramRun &run, std::size_t max_count);
    void make_ready(Stream &s, std::uint32_t c, Clock::time_point now);
    // Gives up what `s` has not sent (its waiting time counted as sending time).
    void give_up_unsent(Stream &s, Clock::time_point now);
    // Gives up the first run of this round that the channel did not send whole (rc: its error).
    void give_up_failed_run(int rc);

    CommState::Bounded &b_;
    DgramEndpoint &ep_;
    wire::Header header_;
    std::uint8_t base_flags_;  // the caller's (wire::kWaited); tail and early are added per datagram
    std::uint8_t early_ = 0;
    std::size_t datagram_bytes_;  // header and a full chunk: one datagram on the wire
    std::size_t channel_run_;     // the channel's longest run (DgramEndpoint::run_datagrams)
    std::vector<std::uint64_t> &bytes_;
    std::vector<double> &seconds_;
    std::vector<Stream> streams_;
    std::uint64_t sent_ = 0;
    std::uint64_t given_up_ = 0;  // since the last finish()
    std::uint64_t handed_ = 0;    // bytes handed to the channel, for the queue budget
    QueueBudget budget_;
    std::size_t first_stream_ = 0;  // the stream each round starts with, rotating
    bool gave_up_ = false;
    // Scratch of one round.
    std::vector<DgramRun> runs_;
    std::vector<Stream *> run_stream_;
    std::vector<std::size_t> sent_now_;
};

template <typename Drain>
void StreamSender::send_all(Clock::time_point limit, const QueueDeadline &queue, Drain &&drain) {
    const std::uint64_t handed_before = handed_;
    budget_.start(Clock::now(), ep_.queued_bytes(), b_.host_drain_rate);
    for (;;) {
        // Past the limit every receiver has stopped waiting for our data: what is unsent would
        // arrive late, behind it the next operation's data too (finish() gives it up).
        const Clock::time_point now = Clock::now();
        if (now >= limit || !has_ready()) break;
        const std::int64_t unsent = unsent_bytes();
        if (const Clock::duration hold = budget_.hold(static_cast<std::int64_t>(datagram_bytes_), now, queue, unsent);
            hold > Clock::duration::zero()) {
            drain();
            std::this_thread::sleep_for(std::min(hold, limit - now));
            budget_.observe(Clock::now(), handed_ - handed_before, ep_.queued_bytes());
            continue;
        }
        bool progressed = false;
        Clock::time_point earliest = Clock::time_point::max();
        pump(&progressed, &earliest, budget_.room(now, queue, unsent));
        budget_.observe(Clock::now(), handed_ - handed_before, ep_.queued_bytes());
        drain();  // what peers sent meanwhile, before the socket buffer overflows
        if (!progressed) {
            // Paced: sleep in the kernel until the earliest token (never past the limit) or an
            // arrival, which the next round drains: while the operation runs this thread is the
            // only one draining (ProgressThread::Aside), and a slow path's token may be tens of
            // milliseconds away. The queue is full: sleep until it has room, at most until the
            // next token or 1 ms, never past the limit (the next round drains what arrived).
            const Clock::time_point after = Clock::now();
            if (earliest != Clock::time_point::max() && earliest - after > std::chrono::microseconds(50))
                ep_.wait(std::chrono::ceil<std::chrono::microseconds>(std::min(earliest, limit) - after));
            else
                ep_.wait_for_send_space(
                    std::chrono::duration_cast<std::chrono::microseconds>(std::clamp<Clock::duration>(
                        std::min(earliest, limit) - after, Clock::duration::zero(), std::chrono::milliseconds(1))));
        }
    }
    if (budget_.rate() > 0) b_.host_drain_rate = budget_.rate();
}

}  // namespace optireduce
