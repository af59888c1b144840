// SPDX-License-Identifier: BSD-3-Clause
#include "common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace optireduce::tools {

double median(std::vector<double> samples) {
    if (samples.empty()) return 0;
    const std::size_t k = samples.size() / 2;
    std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
    const double upper = samples[k];
    if (samples.size() % 2) return upper;
    const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k));
    return (lower + upper) / 2;
}

double nearest_rank(std::span<const double> sorted, double percent) {
    const auto rank = static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

Summary summarize(std::span<const double> samples) {
    if (samples.empty()) return {};
    std::vector<double> sorted(samples.begin(), samples.end());
    std::sort(sorted.begin(), sorted.end());
    Summary s;
    s.avg = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
    s.min = sorted.front();
    s.p50 = nearest_rank(sorted, 50);
    s.p99 = nearest_rank(sorted, 99);
    s.max = sorted.back();
    return s;
}

}  // namespace optireduce::tools
