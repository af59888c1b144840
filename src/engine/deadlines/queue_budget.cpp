// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/queue_budget.hpp"

#include <algorithm>

namespace optireduce {

void QueueBudget::start(Clock::time_point now, std::int64_t queued, double prior_rate) {
    start_ = now;
    queued_at_start_ = queued;
    queued_ = queued;
    rate_ = prior_rate > 0 ? prior_rate : 0;
}

void QueueBudget::observe(Clock::time_point now, std::uint64_t handed, std::int64_t queued) {
    queued_ = queued;
    if (queued < 0 || queued_at_start_ < 0) return;
    const double drained =
        static_cast<double>(handed) + static_cast<double>(queued_at_start_) - static_cast<double>(queued);
    const Clock::duration window = now - start_;
    if (window < kMinWindow || drained < static_cast<double>(kMinDrained)) return;
    rate_ = drained / std::chrono::duration<double>(window).count();
}

std::int64_t QueueBudget::drains_within(double bytes_per_s, Clock::duration window) {
    const double drains = std::max(bytes_per_s, 0.0) * std::chrono::duration<double>(window).count();
    return std::max(static_cast<std::int64_t>(drains), kAlwaysQueued);
}

bool QueueBudget::slow_path(Clock::time_point now, const QueueDeadline &d, std::int64_t unsent) const {
    if (rate_ <= 0 || queued_ <= kAlwaysQueued || d.finish_by == Clock::time_point::max()) return false;
    const double drain_s = static_cast<double>(queued_ + std::max<std::int64_t>(unsent, 0)) / rate_;
    return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(drain_s)) > d.finish_by;
}

std::int64_t QueueBudget::room(Clock::time_point now, const QueueDeadline &d, std::int64_t unsent) const {
    if (rate_ <= 0 || queued_ < 0) return kUnlimited;
    const Clock::time_point until = slow_path(now, d, unsent) ? std::min(d.until, d.cut_from) : d.until;
    return std::max<std::int64_t>(0, drains_within(rate_, std::max(until - now, d.grace)) - queued_);
}

Clock::duration QueueBudget::hold(std::int64_t bytes, Clock::time_point now, const QueueDeadline &d,
                                  std::int64_t unsent) const {
    if (room(now, d, unsent) >= bytes) return Clock::duration::zero();
    // Waiting makes no room at an unchanged rate (the queue and the time left shrink alike): it
    // only lets a changed rate show, or the caller see its receivers close, so it is short.
    return kMaxHold;
}

}  // namespace optireduce
