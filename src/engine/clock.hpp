// SPDX-License-Identifier: BSD-3-Clause
// The engine's one clock, and the millisecond arithmetic the deadlines use on it. Monotonic:
// deadlines must not move when the wall clock is set.
#pragma once

#include <chrono>

namespace optireduce {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

inline Clock::time_point after_ms(Clock::time_point t, double ms) {
    return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace optireduce
