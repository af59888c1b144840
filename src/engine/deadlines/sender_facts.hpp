// SPDX-License-Identifier: BSD-3-Clause
// What one sender has delivered in one phase of a bounded operation, as the router recorded it:
// the facts the phase's close (engine/deadlines/phase_closer.hpp) and its repair asks
// (engine/deadlines/repair_schedule.hpp) are decided on.
#pragma once

#include "engine/clock.hpp"

#include <cstdint>

namespace optireduce {

struct SenderFacts {
    std::uint32_t chunks = 0;  // expected from it (0: nothing, e.g. this rank itself)
    std::uint32_t received = 0;
    Clock::time_point started{};   // its clock: its first datagram of the phase (none: time_point{})
    Clock::time_point gathered{};  // reduce-scatter only: its latest all-gather datagram, if any
    Clock::time_point last{};      // its latest datagram of this phase (none: time_point{})
    bool ahead = false;            // it already sent for a later operation: it sends no more of this
    bool missing() const { return received < chunks; }
};

}  // namespace optireduce
