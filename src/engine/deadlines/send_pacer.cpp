// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/send_pacer.hpp"

#include <algorithm>

namespace optireduce {

void SendPacer::update(int peer, double reported_loss, double target_loss, double achieved) {
    Peer &p = peers_[static_cast<std::size_t>(peer)];
    p.floor *= kFloorDecay;
    p.best = std::max(p.best, achieved);
    if (p.loss_at_cut >= 0) {
        const bool helped = reported_loss < kHelped * p.loss_at_cut;
        if (!helped) {
            // Slower did not mean cleaner: this loss is the path's, not ours.
            p.floor = std::max(p.floor, reported_loss);
            p.rate = p.rate_before_cut;
            p.loss_at_cut = -1;
            return;
        }
        p.loss_at_cut = -1;
    }
    if (reported_loss > std::max(target_loss, kFloorMargin * p.floor) && achieved > 0) {
        p.rate_before_cut = p.rate;
        p.loss_at_cut = reported_loss;
        const double base = p.rate > 0 ? std::min(p.rate, achieved) : achieved;
        p.rate = std::max(base * kDecrease, std::max(kFloorBytesPerS, kFloorOfBest * p.best));
    } else if (p.rate > 0) {
        p.rate *= kIncrease;
        if (achieved > 0 && p.rate > kUnpacedAbove * achieved) p.rate = 0;
    }
}

}  // namespace optireduce
