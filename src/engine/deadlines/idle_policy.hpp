// SPDX-License-Identifier: BSD-3-Clause
// How a thread that waits for the network spends a poll that found nothing, in both modes' wait
// loops: poll again, or give the core away (sleep in the kernel, or yield).
//
// Polling again pays only when the next arrival is near: a wake-up from the kernel costs a few
// microseconds, so for data that comes every 20 us a short spin saves wake-ups, while for data
// that comes every millisecond any spin is a core burnt for nothing. So the spin follows the
// arrivals seen: about twice the recent gap between polls that found something, never more than
// kSpinMax, and none once that gap exceeds kSpinMax. Whether the thread slept does not matter:
// a wait that ends on a datagram is an event like any other, so a flow that speeds up brings the
// spin back. With more ranks than cores on the node it never spins, as Open MPI does there: the
// peer we wait for may need this very core.
#pragma once

#include "engine/clock.hpp"

#include <algorithm>

namespace optireduce {

class IdlePolicy {
public:
    static constexpr Clock::duration kSpinMax = std::chrono::microseconds(50);

    explicit IdlePolicy(bool oversubscribed, Clock::time_point now = Clock::now())
        : never_(oversubscribed), last_event_(now) {}

    // A poll found something.
    void event(Clock::time_point now = Clock::now()) {
        gap_ = (3 * gap_ + (now - last_event_)) / 4;  // the mean gap, the latest weighing 1/4
        spin_ = never_ || gap_ > kSpinMax ? Clock::duration::zero() : std::min(2 * gap_, kSpinMax);
        last_event_ = now;
    }
    // After an empty poll: whether to sleep or yield now rather than poll again.
    bool idle(Clock::time_point now = Clock::now()) const { return now - last_event_ >= spin_; }
    Clock::duration spin() const { return spin_; }

private:
    bool never_;
    Clock::duration gap_ = 2 * kSpinMax;  // nothing seen yet: no spin until arrivals come close
    Clock::duration spin_ = Clock::duration::zero();
    Clock::time_point last_event_;
};

}  // namespace optireduce
