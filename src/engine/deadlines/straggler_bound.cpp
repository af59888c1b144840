// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/straggler_bound.hpp"

#include <algorithm>
#include <cmath>

namespace optireduce {

double StragglerBound::bound_ms() const {
    if (s_.max_ms <= 0) return 0;
    if (observed_ < kCalibrationOps) return s_.max_ms;
    const double estimate = std::max(mean_ms_ + kDeviations * deviation_ms_, kPeakMargin * peak_ms_);
    return std::clamp(multiple_ * estimate, std::min(kFloorMs, s_.max_ms), cap_ms());
}

double StragglerBound::cap_ms() const {
    if (deadlines_peak_ms_ <= 0) return s_.max_ms;
    return std::min(s_.max_ms, std::max(kCapFloorMs, kDeadlineMultiple * deadlines_peak_ms_));
}

void StragglerBound::observe_deadlines(double deadlines_ms) {
    deadlines_peak_ms_ = std::max(std::max(deadlines_ms, 0.0), deadlines_peak_ms_ * kPeakDecay);
}

void StragglerBound::observe(double lateness_ms, bool wrote_off) {
    // A peer written off started later than the bound, by how much we do not know; only the
    // multiple widens for it. (Taking the bound as its lateness fed the peak with the bound's
    // own margin: every write-off then quadrupled the bound, up to the maximum, where a lost
    // one-datagram stream, which looks just like a straggler, cost seconds.)
    const double sample = std::max(lateness_ms, 0.0);
    peak_ms_ = std::max(sample, peak_ms_ * kPeakDecay);
    if (observed_ == 0) {
        mean_ms_ = sample;
        deviation_ms_ = sample / 2;
    } else {
        deviation_ms_ += kSmoothing * (std::abs(sample - mean_ms_) - deviation_ms_);
        mean_ms_ += kSmoothing * (sample - mean_ms_);
    }
    ++observed_;
    multiple_ = wrote_off ? std::min(multiple_ * kWiden, kMaxMultiple) : std::max(multiple_ * kNarrow, kMinMultiple);
}

}  // namespace optireduce
