#include "engine/send_pacer.hpp"

#include <algorithm>

namespace optireduce {

void SendPacer::update(int peer, double reported_loss, double target_loss, double achieved) {
    double &r = rate_[static_cast<std::size_t>(peer)];
    if (reported_loss > target_loss && achieved > 0) {
        const double base = r > 0 ? std::min(r, achieved) : achieved;
        r = std::max(base * kDecrease, kFloorBytesPerS);
    } else if (r > 0) {
        r *= kIncrease;
        if (achieved > 0 && r > kUnpacedAbove * achieved) r = 0;
    }
}

}  // namespace optireduce
