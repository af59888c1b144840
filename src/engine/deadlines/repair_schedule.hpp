// SPDX-License-Identifier: BSD-3-Clause
// Once every sender's tail is in, when each sender is asked again for the chunks still missing
// from it (engine/deadlines/phase_closer.hpp asks every sender once, then follows this). A sender answers
// an ask in a burst; once its answers came and then stopped for a short silence, what is still
// missing was lost (an answer, or the request) and is asked for at once. A sender that has not
// answered at all is busy (a reduce-scatter's answers queue behind the sender's own streams for
// 14-20 ms on the emulated cloud), and asking it again would only queue the same answers
// twice: it is asked again after the longer wait. Asking every sender again one quiet time after
// each ask, whatever came, left the one or two answers lost at 1% loss to a wait of 20-30 ms in
// a 32 MiB operation (docs/notes/2026-12-07-repair-asks-early.md).
#pragma once

#include "engine/clock.hpp"
#include "engine/deadlines/sender_facts.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace optireduce {

class RepairSchedule {
public:
    // Every one of `senders` was asked at `now`.
    void asked_all(std::size_t senders, Clock::time_point now) {
        asked_at_.assign(senders, now);
        due_.assign(senders, 1);
    }
    // Marks the senders due at `now` (still missing chunks; answered and then silent for
    // `silence_ms`, but never sooner than `min_gap_ms` after their last ask; or unanswered for
    // `unanswered_ms` since it) as asked now. False if none is, with `next` lowered to when the
    // first will be.
    bool take_due(std::span<const SenderFacts> senders, Clock::time_point now, double silence_ms, double min_gap_ms,
                  double unanswered_ms, Clock::time_point &next) {
        bool any = false;
        for (std::size_t s = 0; s < senders.size() && s < asked_at_.size(); ++s) {
            due_[s] = 0;
            if (!senders[s].missing()) continue;
            const Clock::time_point asked = asked_at_[s];
            Clock::time_point at = after_ms(asked, unanswered_ms);
            if (senders[s].last > asked)
                at = std::min(at, std::max(after_ms(senders[s].last, silence_ms), after_ms(asked, min_gap_ms)));
            if (now >= at) {
                due_[s] = 1;
                asked_at_[s] = now;
                any = true;
            } else {
                next = std::min(next, at);
            }
        }
        return any;
    }
    // Whether sender s is asked this time (every sender, before the schedule started).
    bool asks(std::size_t s) const { return s >= due_.size() || due_[s] != 0; }

private:
    std::vector<Clock::time_point> asked_at_;
    std::vector<std::uint8_t> due_;
};

}  // namespace optireduce
