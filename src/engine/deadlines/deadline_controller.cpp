// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/deadline_controller.hpp"

#include "engine/deadlines/lower_median.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace optireduce {

int DeadlineController::size_class(std::size_t bytes) { return static_cast<int>(std::bit_width(bytes)); }

const DeadlineController::State *DeadlineController::find(std::size_t bytes, int phase) const {
    auto it = states_.find({size_class(bytes), phase});
    return it == states_.end() ? nullptr : &it->second;
}

double DeadlineController::deadline_ms(std::size_t bytes, int phase) const {
    const double own = own_deadline_ms(bytes, phase);
    const State *st = find(bytes, phase);
    // An all-gather stream carries as many bytes as a reduce-scatter stream; pipelined, most of
    // it went early, and the span of the rest (after the owner's first late datagram) teaches a
    // deadline near nothing (0.5-1 ms on back-to-back 1 MiB calls), which an owner a few ms
    // late for its core then missed, and every rank zeroed its last batch (12-23% of a call).
    const double floor_ms = phase == 2 ? deadline_ms(bytes, 1) : 0;
    if (s_.fixed_ms > 0 || !st) return std::max(own, floor_ms);
    std::vector<double> all{own};
    for (double p : st->peers)
        if (p > 0) all.push_back(p);
    // Of two ranks, the shorter deadline: the slower rank's data are its own loss.
    return std::max(lower_median(all), floor_ms);
}

void DeadlineController::observe_peer(std::size_t bytes, int phase, int peer, double ms) {
    if (peer < 0 || !(ms >= 0)) return;
    std::vector<double> &peers = states_[{size_class(bytes), phase}].peers;
    const auto i = static_cast<std::size_t>(peer);
    if (peers.size() <= i) peers.resize(i + 1, 0);
    peers[i] = ms;
}

double DeadlineController::own_deadline_ms(std::size_t bytes, int phase) const {
    if (s_.fixed_ms > 0) return s_.fixed_ms;
    const State *st = find(bytes, phase);
    if (!st || st->observed < kCalibrationOps) {
        // Calibrating. A larger message than any seen takes longer in proportion where the link
        // is the limit: the largest calibrated smaller size, scaled up, keeps a 64 MiB message
        // that follows 16 MiB ones from losing its tail to max_ms while it learns.
        for (auto it = states_.lower_bound({size_class(bytes), phase}); it != states_.begin();) {
            --it;
            if (it->first.second != phase || it->second.observed < kCalibrationOps) continue;
            const double scaled = std::ldexp(it->second.expected_ms, size_class(bytes) - it->first.first);
            return std::max(s_.max_ms, kCeilingOverExpected * scaled);
        }
        return s_.max_ms;
    }
    // A phase whose data alone take longer than max_ms to arrive (64 MiB over 1 Gbit/s) would
    // lose its tail every time: there the ceiling is a multiple of the completion time instead.
    const double ceiling = std::max(s_.max_ms, kCeilingOverExpected * st->expected_ms);
    return std::clamp(st->multiple * (st->expected_ms + kDeviations * st->deviation_ms), s_.min_ms, ceiling);
}

double DeadlineController::expected_ms(std::size_t bytes, int phase) const {
    const State *st = find(bytes, phase);
    return st ? st->expected_ms : 0;
}

double DeadlineController::quiet_ms(std::size_t bytes, int phase, double ran_ms) const {
    const State *st = find(bytes, phase);
    // Before anything is known, a silence of a tenth of the minimum deadline.
    const double base = st && st->expected_ms > 0 ? st->expected_ms : s_.min_ms;
    return std::max({kQuietFraction * base, kQuietFraction * ran_ms, s_.quiet_floor_ms});
}

void DeadlineController::observe(std::size_t bytes, int phase, const PhaseOutcome &o) {
    if (o.expected == 0) return;  // every sender silent: nothing learnt about the network
    State &st = states_[{size_class(bytes), phase}];
    const double unwidened_ms = st.expected_ms + kDeviations * st.deviation_ms;  // before this sample
    // Completion time: when the last datagram came if everything came; otherwise the time full
    // delivery would have taken at the rate observed (elapsed / fraction received), capped so
    // one near-empty phase cannot throw the estimate far off.
    // Late, not lost: the phase was cut at the deadline while data were still arriving (in its
    // second half). A deadline phase whose last datagram came early in it waited for data the
    // network had dropped (behind a slow link's full queue even the tail datagrams are lost, so
    // it cannot close early); waiting longer would not have brought them.
    const bool late = o.cut_short && o.last_arrival_ms >= kStillArrivingFraction * o.elapsed_ms;
    double sample;
    if (o.received >= o.expected || !late) {
        // Everything that was coming came: its span is the completion time. (Extrapolating a
        // lossy phase's span by the fraction received reads loss as slowness: behind a link
        // whose queue drops 80% of an incast, it taught a deadline of seconds, the rank waited
        // it out every operation and its peers then waited for that rank.)
        sample = o.last_arrival_ms;
    } else {
        const double fraction = std::max(static_cast<double>(o.received) / static_cast<double>(o.expected), 0.05);
        sample = std::min(o.elapsed_ms / fraction, 4 * s_.max_ms);
    }
    if (st.observed == 0) {
        st.expected_ms = sample;
        st.deviation_ms = sample / 2;  // as TCP's first RTT sample
    } else {
        // A sample faster than expected says little about how late the next one may be: count
        // its deviation at an eighth, as Linux TCP does, so a network that got faster shrinks
        // the deadline instead of first widening it.
        const double err = std::abs(sample - st.expected_ms) / (sample < st.expected_ms ? 8.0 : 1.0);
        st.deviation_ms += kSmoothing * (err - st.deviation_ms);
        st.expected_ms += kSmoothing * (sample - st.expected_ms);
    }
    ++st.observed;

    const double loss = 1.0 - static_cast<double>(std::min(o.received, o.expected)) / static_cast<double>(o.expected);
    // Loss widens the deadline only where a longer one would have prevented it: data were still
    // arriving when the phase was cut. After an early close (every tail in, the link quiet) or
    // at a deadline that data had stopped reaching, what is missing was dropped, and a wider
    // deadline only makes the next lost tail cost more: two jobs sharing the links lost whole
    // send batches to full queues, and deadlines widened to 8x the phases' span (1 s for
    // phases of 100 ms) turned each such loss into a second's wait for every rank.
    st.widened = loss > s_.target_loss && late;
    if (st.widened) {
        st.multiple = std::min(st.multiple * kWiden, kMaxMultiple);
    } else if (loss <= s_.target_loss / 2) {
        const bool unneeded = st.observed > 1 && o.received >= o.expected && sample <= unwidened_ms;
        st.multiple = std::max(st.multiple * (unneeded ? kNarrowUnneeded : kNarrow), kMinMultiple);
    }
}

void DeadlineController::observe_near_misses(std::size_t bytes, int phase, std::uint64_t near, std::uint64_t expected) {
    auto it = states_.find({size_class(bytes), phase});
    if (it == states_.end() || expected == 0 || it->second.widened) return;
    if (static_cast<double>(near) / static_cast<double>(expected) > s_.target_loss)
        it->second.multiple = std::min(it->second.multiple * kWiden, kMaxMultiple);
}

void DeadlineController::widen_all(double factor) {
    for (auto &[key, st] : states_) st.multiple = std::min(st.multiple * factor, kMaxMultiple);
}

}  // namespace optireduce
