// SPDX-License-Identifier: BSD-3-Clause
#include "bench/support/plan.hpp"

#include <algorithm>

namespace optireduce::bench {

long default_iterations(std::size_t bytes) {
    // Small messages are cheap and noisy: 1000 calls give a stable P99. Above 1 MiB the bytes
    // moved per size stay constant (20 x 64 MiB), so no large size dominates and a default 4-rank
    // sweep of both modes on a 2-core machine takes about a minute and a half; 20 calls at 64 MiB
    // still yield a median, and P99 there is the maximum.
    constexpr std::size_t budget = std::size_t{20} << 26;
    return std::clamp<long>(static_cast<long>(budget / std::max<std::size_t>(bytes, 1)), 20, 1000);
}

std::vector<SizeStep> make_plan(const Options &options) {
    std::vector<SizeStep> plan;
    // At least one float; sizes that are not a multiple of 4 round down to whole floats.
    for (std::size_t bytes = std::max<std::size_t>(options.min_bytes, sizeof(float)); bytes <= options.max_bytes;
         bytes *= 2) {
        SizeStep step;
        step.count = static_cast<int>(bytes / sizeof(float));
        step.iterations = options.iterations.value_or(default_iterations(step.bytes()));
        step.warmup = options.warmup.value_or(std::max(2L, step.iterations / 10));
        plan.push_back(step);
    }
    return plan;
}

}  // namespace optireduce::bench
