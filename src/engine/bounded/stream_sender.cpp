// SPDX-License-Identifier: BSD-3-Clause
#include "engine/bounded/stream_sender.hpp"

#include "codec/sharding.hpp"
#include "engine/bounded/incast_run.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "engine/setup/faults.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <atomic>
#include <limits>

namespace optireduce {
namespace {

// How many datagrams at the end of a stream carry the tail flag: the last 1%, at least 3, so
// that losing the very last one does not cost the receiver its early close (the released
// OptiReduce's "Last%ile" marker has the same purpose), and no more than one of the stream's
// runs: a receiver takes the first tail it sees as the stream's end, and a tail spread over
// several rounds (70 datagrams of a 7000-datagram stream in runs of 14) can tell it that the rest
// was lost while the tail's other runs are still to be sent. At 1% loss such tails made the
// training benchmark 4-8% slower in two runs; with the tail in one run it was not
// (docs/notes/2026-12-07-runs-sized-for-receiver.md). A run shorter than three datagrams (4 ranks, datagrams of 9000
// bytes: runs of 2) caps the tail at one run too: a tail of 3 went out in two rounds, and a
// sender that lost its core between them (4 ranks on 2 cores) had its receiver close early
// without the stream's last datagram on a lossless network (§39).
std::uint32_t tail_chunks(std::uint32_t chunks, std::size_t run) {
    const auto longest = static_cast<std::uint32_t>(std::max<std::size_t>(run, 1));
    return std::min({chunks, longest, std::max(3u, chunks / 100)});
}

}  // namespace

StreamSender::StreamSender(CommState::Bounded &b, const wire::Header &header, std::vector<std::uint64_t> &bytes,
                           std::vector<double> &seconds)
    : b_(b),
      ep_(*b.channel->endpoint),
      header_(header),
      base_flags_(header.flags),
      datagram_bytes_(wire::kHeaderBytes + coded_bytes(b.codec, b.floats_per_datagram)),
      // The longest run the channel sends in one offloaded send (64 KiB with GSO); each stream's
      // own is no longer than its receiver's link takes from all senders at once (incast_run).
      channel_run_(ep_.run_datagrams(datagram_bytes_)),
      bytes_(bytes),
      seconds_(seconds) {}

void StreamSender::add_stream(int peer, const CodedStream &src) {
    const auto chunks = static_cast<std::uint32_t>(src.chunks());
    // One round sends a run to every stream, destinations interleaved: one system call for all.
    const std::size_t run =
        incast_run(channel_run_, std::max<std::size_t>(b_.peers.size(), 1) - 1, datagram_bytes_, chunks);
    Stream s{peer, src, chunks, run, {}, 0, {}, {}, 0, std::vector<std::byte>(run * wire::kHeaderBytes)};
    s.order.reserve(s.chunks);
    streams_.push_back(std::move(s));
}

void StreamSender::make_ready(Stream &s, std::uint32_t c, Clock::time_point now) {
    if (s.stopped) {
        ++given_up_;
        return;
    }
    if (s.sent == s.order.size()) s.pending_since = now;
    s.order.push_back(c);
}

void StreamSender::all_ready() {
    const Clock::time_point now = Clock::now();
    for (Stream &s : streams_)
        for (std::uint32_t c = static_cast<std::uint32_t>(s.order.size()); c < s.chunks; ++c) make_ready(s, c, now);
}

void StreamSender::ready(std::uint32_t c) {
    const Clock::time_point now = Clock::now();
    for (Stream &s : streams_)
        if (c < s.chunks) make_ready(s, c, now);
}

bool StreamSender::has_ready() const {
    return std::any_of(streams_.begin(), streams_.end(), [](const Stream &s) { return s.sent < s.order.size(); });
}

std::int64_t StreamSender::unsent_bytes() const {
    std::uint64_t chunks = 0;
    for (const Stream &s : streams_)
        if (!s.stopped) chunks += s.chunks - s.sent;
    return static_cast<std::int64_t>(chunks * datagram_bytes_);
}

std::uint32_t StreamSender::build_run(Stream &s, DgramRun &run, std::size_t max_count) {
    const std::uint32_t first = s.order[s.sent];
    const std::size_t most = std::min(s.run, max_count);
    std::uint32_t count = 1;
    while (count < most && s.sent + count < s.order.size() && s.order[s.sent + count] == first + count) ++count;
    // The tail datagrams go out together, in the stream's last run: a run that would carry
    // only some of them stops before them. Otherwise (46 chunks in runs of 44: the tail in the
    // first run, two chunks in the next round) the receiver sees a tail, waits its quiet time
    // and closes while the rest is still being sent.
    const std::uint32_t tail_from = s.chunks - tail_chunks(s.chunks, s.run);
    const auto end = static_cast<std::uint32_t>(s.sent) + count;
    if (end > tail_from && end < s.chunks && s.sent < tail_from) count = tail_from - static_cast<std::uint32_t>(s.sent);
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t c = first + i;
        header_.chunk = c;
        // The last datagrams this peer gets in the phase, in sending order. (Flagging only the
        // run that ends the stream also kept a run cut short, by the queue budget or by the
        // all-gather's gaps in chunk order, from flagging early; but that run is often a single
        // datagram, and at 20% loss bounded.np3.drift_late_votes failed 3 times in 12 under
        // AddressSanitizer against 0 in 12: docs/notes/2026-12-07-tail-at-most-one-run.md.)
        const bool tail = s.sent + i >= tail_from;
        header_.flags = static_cast<std::uint8_t>(base_flags_ | (tail ? wire::kTail : 0) | early_);
        header_.payload_len = static_cast<std::uint16_t>(s.src.chunk(c).size());
        wire::encode(header_, std::span<std::byte, wire::kHeaderBytes>(s.headers.data() + i * wire::kHeaderBytes,
                                                                       wire::kHeaderBytes));
    }
    // Consecutive chunks are consecutive in the coded stream, at its stride: one span.
    const std::span<const std::byte> last = s.src.chunk(first + count - 1);
    const std::byte *begin = s.src.chunk(first).data();
    run = {b_.peers[static_cast<std::size_t>(s.peer)],
           std::span<const std::byte>(s.headers.data(), count * wire::kHeaderBytes),
           wire::kHeaderBytes,
           std::span<const std::byte>(begin, static_cast<std::size_t>(last.data() + last.size() - begin)),
           s.src.stride(),
           count};
    return count;
}

void StreamSender::pump(bool *progressed, Clock::time_point *earliest, std::int64_t room) {
    const Clock::time_point now = Clock::now();
    runs_.clear();
    run_stream_.clear();
    const std::size_t first = first_stream_++;  // rotating: see pump()'s comment
    for (std::size_t k = 0; k < streams_.size(); ++k) {
        Stream &s = streams_[(first + k) % streams_.size()];
        if (s.sent >= s.order.size()) continue;
        if (b_.pacer.rate(s.peer) > 0 && s.next_time > now) {
            *earliest = std::min(*earliest, s.next_time);
            continue;
        }
        run_stream_.push_back(&s);
    }
    // The queue budget's room, shared among the streams that may send (at least one datagram
    // each while it lasts).
    std::size_t left = std::numeric_limits<std::size_t>::max(), share = channel_run_;
    if (room != QueueBudget::kUnlimited && !run_stream_.empty()) {
        left = static_cast<std::size_t>(std::max<std::int64_t>(room, 0)) / datagram_bytes_;
        share = std::max<std::size_t>(1, left / run_stream_.size());
    }
    std::size_t kept = 0;
    for (Stream *s : run_stream_) {
        if (left == 0) break;
        runs_.emplace_back();
        const std::uint32_t n = build_run(*s, runs_.back(), std::min(share, left));
        if (left != std::numeric_limits<std::size_t>::max()) left -= n;
        run_stream_[kept++] = s;
    }
    run_stream_.resize(kept);
    if (runs_.empty()) return;
    sent_now_.assign(runs_.size(), 0);
    const int rc = injected_send_failure() ? -FI_EIO : ep_.send_runs(runs_, sent_now_);
    if (rc < 0) {
        give_up_failed_run(rc);
        *progressed = true;
    } else {
        for (std::size_t r = 0; r < runs_.size(); ++r)
            if (sent_now_[r] < runs_[r].count) {  // the queue filled up: the rest goes next round
                bump(process_stats().send_queue_full);
                break;
            }
    }
    const Clock::time_point after = Clock::now();
    for (std::size_t r = 0; r < runs_.size(); ++r) {
        Stream &s = *run_stream_[r];
        const DgramRun &run = runs_[r];
        if (sent_now_[r] == 0) continue;
        *progressed = true;
        std::uint64_t bytes = 0;
        for (std::size_t i = 0; i < sent_now_[r]; ++i) {
            const std::size_t at = i * run.segment;
            const std::size_t len = std::min(run.segment, run.payload.size() - at);
            bytes += wire::kHeaderBytes + len;
        }
        s.sent += sent_now_[r];
        sent_ += sent_now_[r];
        handed_ += bytes;
        bytes_[static_cast<std::size_t>(s.peer)] += bytes;
        if (const double rate = b_.pacer.rate(s.peer); rate > 0)
            s.next_time =
                std::max(s.next_time, now) + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(static_cast<double>(bytes) / rate));
        if (s.sent == s.order.size()) s.busy_s += std::chrono::duration<double>(after - s.pending_since).count();
    }
}

void StreamSender::give_up_failed_run(int rc) {
    for (std::size_t r = 0; r < runs_.size(); ++r) {
        const std::size_t lost = runs_[r].count - sent_now_[r];
        if (lost == 0) continue;
        // Marked sent to the stream (they are not sent again: their time has passed by the next
        // round, and a channel that failed once may fail every time), not to the byte counts the
        // pacer learns from.
        run_stream_[r]->sent += lost;
        bump(process_stats().datagrams_send_failed, lost);
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true))
            OPTIREDUCE_LOG(warn,
                           "the datagram channel failed a send (%s): its datagrams are lost to their receiver, "
                           "which estimates them like any other loss (counter datagrams_send_failed). Further "
                           "failures are only counted",
                           fi_strerror(-rc));
        return;
    }
}

void StreamSender::give_up_unsent(Stream &s, Clock::time_point now) {
    if (s.sent >= s.order.size()) return;
    // Still waiting when it stopped: that wait was sending time too.
    s.busy_s += std::chrono::duration<double>(now - s.pending_since).count();
    given_up_ += s.order.size() - s.sent;
    s.sent = s.order.size();
}

void StreamSender::stop(int peer) {
    const Clock::time_point now = Clock::now();
    for (Stream &s : streams_) {
        if (s.peer != peer || s.stopped) continue;
        give_up_unsent(s, now);
        s.stopped = true;
    }
}

void StreamSender::finish() {
    const Clock::time_point now = Clock::now();
    for (Stream &s : streams_) {
        give_up_unsent(s, now);
        seconds_[static_cast<std::size_t>(s.peer)] += s.busy_s;
        s.busy_s = 0;
        s.pending_since = now;
    }
    bump(process_stats().datagrams_sent, sent_);
    sent_ = 0;
    if (given_up_ > 0) {
        gave_up_ = true;
        bump(process_stats().datagrams_given_up, given_up_);
        given_up_ = 0;
    }
}

}  // namespace optireduce
