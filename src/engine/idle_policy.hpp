// How a thread that waits for the network spends a poll that found nothing, in both modes' wait
// loops. With a core per rank it keeps polling while events keep coming and gives the core away
// only after kSpin without any: giving it away at once would hand it to any other runnable
// process for a whole time slice between two messages microseconds apart. With more ranks than
// cores on the node it gives the core away on every empty poll, as Open MPI does there: the peer
// we wait for may need this very core.
#pragma once

#include "engine/clock.hpp"

namespace optireduce {

class IdlePolicy {
public:
    static constexpr auto kSpin = std::chrono::microseconds(200);

    explicit IdlePolicy(bool oversubscribed)
        : spin_(oversubscribed ? Clock::duration::zero() : Clock::duration(kSpin)), last_event_(Clock::now()) {}
    void event() { last_event_ = Clock::now(); }
    // After an empty poll: whether to sleep or yield now rather than poll again.
    bool idle() const { return Clock::now() - last_event_ >= spin_; }

private:
    Clock::duration spin_;
    Clock::time_point last_event_;
};

}  // namespace optireduce
