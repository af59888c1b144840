// SPDX-License-Identifier: BSD-3-Clause
// How much of a phase's data a sender may keep queued on its own host (the socket's send buffer
// and the host's egress queue), so that what it queues can still reach the receivers before they
// stop waiting for it: at most what the link drains in the time left until their end for us
// (PhaseCloser::queue_deadline; past it, a short queue). On a fast link that is more than the
// kernel can hold and it never binds; behind a slow one (a link cut to 90 Mbit/s drains a 1 MiB
// send buffer and a 1000-frame queue in about 200 ms) it keeps the queue from holding data that
// arrives after the deadline and delays everything after it: this phase's end, the next phase's
// data and the hole vote.
//
// The drain rate is measured, not assumed: what was handed to the kernel since the phase started,
// less what the kernel still holds, over the time since. Until that is known (the first 2 ms),
// the rate the previous phase measured stands in: a phase's first round would otherwise fill the
// whole send buffer unchecked. Pure arithmetic with the clock passed in; StreamSender reads the
// queue (DgramEndpoint::queued_bytes) and applies the hold.
#pragma once

#include "engine/clock.hpp"

#include <cstdint>
#include <limits>

namespace optireduce {

// Until when what is queued must be able to reach the receivers, and the shortest window the
// budget counts with: past `until` a late receiver may still take what arrives within `grace`,
// but no queue longer than that (or than kAlwaysQueued) is kept.
struct QueueDeadline {
    Clock::time_point until;
    Clock::duration grace{};
    // A sender whose unsent data and queue cannot drain by `finish_by` at the rate its queue
    // drains is the slow path its receivers stop waiting for from `cut_from` on
    // (PhaseCloser::hopeless): then only what drains by `cut_from` is worth queueing. Behind a
    // link cut to 90 Mbit/s the queue still held 1 MB when the receivers had cut the stream, and
    // the sender's hole vote, queued behind it, kept every peer waiting 90-100 ms more.
    Clock::time_point finish_by = Clock::time_point::max();
    Clock::time_point cut_from = Clock::time_point::max();
};

class QueueBudget {
public:
    // The rate is measured once this much time and data went by (before that the prior stands).
    static constexpr Clock::duration kMinWindow = std::chrono::milliseconds(2);
    static constexpr std::uint64_t kMinDrained = std::uint64_t{16} * 1024;
    // The longest single hold: the caller drains the receive side and checks again.
    static constexpr Clock::duration kMaxHold = std::chrono::milliseconds(1);
    // A queue this short may always be kept (12 ms at 90 Mbit/s, 1 ms at 1 Gbit/s): holding
    // back for less costs a sender that was only descheduled (its measured rate then looks
    // slow) its data, and costs a slow link little.
    static constexpr std::int64_t kAlwaysQueued = std::int64_t{128} * 1024;
    // The longest queue that drains within `window` at `bytes_per_s`, and at least kAlwaysQueued
    // (all of it when the rate is unknown, 0 or less): room()'s rule, which the repair answers
    // share (Phase2Repair::answer_queue_cap).
    static std::int64_t drains_within(double bytes_per_s, Clock::duration window);

    // The phase's sending starts: `queued` is what the kernel holds already (-1: the channel
    // cannot tell, and the budget never holds); `prior_rate` the previous phase's rate (0: none).
    void start(Clock::time_point now, std::int64_t queued, double prior_rate);
    // After a round: `handed` bytes given to the kernel since start(), `queued` still held.
    void observe(Clock::time_point now, std::uint64_t handed, std::int64_t queued);
    static constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();
    // Bytes that may be handed to the kernel now: what the link drains until `d.until` (until
    // `d.cut_from` when slow_path(), at least in `d.grace`, at least kAlwaysQueued), less what the
    // kernel holds (kUnlimited: no rate or queue known). `unsent`: bytes of the phase still to be
    // handed over.
    std::int64_t room(Clock::time_point now, const QueueDeadline &d, std::int64_t unsent = 0) const;
    // Zero when there is room for `bytes`; else how long to hold back before asking again:
    // kMaxHold. Before `d.until` no room comes at an unchanged rate (what is queued and the time
    // left shrink alike); the rate may change (a cut ends), and past it the queue drains.
    Clock::duration hold(std::int64_t bytes, Clock::time_point now, const QueueDeadline &d,
                         std::int64_t unsent = 0) const;
    // Whether what is queued and `unsent` drain only after `d.finish_by`, with the queue longer
    // than kAlwaysQueued: the link sets the pace, not this rank's core (a sender starved of its
    // core hands over little, and its queue's rate looks slow while the queue is empty).
    bool slow_path(Clock::time_point now, const QueueDeadline &d, std::int64_t unsent) const;
    // Bytes per second the host's queue drains at: the prior until measured; 0 if neither.
    double rate() const { return rate_; }

private:
    Clock::time_point start_{};
    std::int64_t queued_at_start_ = -1;
    std::int64_t queued_ = -1;
    double rate_ = 0;
};

}  // namespace optireduce
