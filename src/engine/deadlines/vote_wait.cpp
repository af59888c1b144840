// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/vote_wait.hpp"

#include <algorithm>
#include <cmath>

namespace optireduce {

double VoteWait::extra_ms() const { return std::max(lesson_ms_, mean_ms_ + kDeviations * deviation_ms_); }

double VoteWait::budget_ms(double base_ms, double cap_ms) const {
    return base_ms + std::min(extra_ms(), std::max(0.0, cap_ms));
}

void VoteWait::learn_late(double late_past_base_ms) {
    lesson_ms_ *= kDecay;
    if (late_past_base_ms > 0) lesson_ms_ = std::max(lesson_ms_, kMargin * late_past_base_ms + kSlackMs);
}

void VoteWait::learn_from_peers(double peers_lesson_ms) { lesson_ms_ = std::max(lesson_ms_, peers_lesson_ms); }

std::uint16_t VoteWait::lesson_100us() const {
    return static_cast<std::uint16_t>(std::min(std::floor(lesson_ms_ * 10), 65535.0));
}

void VoteWait::learn_took(double took_past_base_ms) {
    const double sample = std::max(took_past_base_ms, 0.0);
    deviation_ms_ += kDeviationGain * (std::abs(sample - mean_ms_) - deviation_ms_);
    mean_ms_ += kMeanGain * (sample - mean_ms_);
}

}  // namespace optireduce
