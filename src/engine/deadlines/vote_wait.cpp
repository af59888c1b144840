// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/vote_wait.hpp"

#include <algorithm>
#include <chrono>

namespace optireduce {

VoteWait::VoteWait(Clock::time_point start, double overdue_ms, double limit_ms, double every_ms)
    : overdue_at_(after_ms(start, overdue_ms)),
      limit_at_(after_ms(start, std::max(limit_ms, overdue_ms))),
      every_ms_(std::max(every_ms, 0.0)) {}

VoteWait::Step VoteWait::step(Clock::time_point now) {
    if (now >= limit_at_) return Step::give_up;
    if (overdue_ || now < overdue_at_) return Step::wait;
    overdue_ = true;
    return Step::overdue;
}

Clock::duration VoteWait::every() const {
    const double ms = overdue_ ? std::max(every_ms_, kOverdueEveryMs) : every_ms_;
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace optireduce
