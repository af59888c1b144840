// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/typical_paths.hpp"

#include "engine/deadlines/lower_median.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace optireduce {

double PathSample::rate() const {
    if (last_arrival_ms <= 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(received) / last_arrival_ms;
}

int TypicalPaths::slow_count() const { return static_cast<int>(std::count(slow.begin(), slow.end(), 1)); }

TypicalPaths typical_paths(std::span<const PathSample> paths, bool cut_short) {
    TypicalPaths t;
    t.outcome.cut_short = cut_short;
    t.slow.assign(paths.size(), 0);
    std::vector<double> rates;
    rates.reserve(paths.size());
    for (const PathSample &p : paths)
        if (p.received > 0) rates.push_back(p.rate());
    if (rates.empty()) return t;
    // Of four paths, the slower middle one: the rule leaves out fewer.
    const double floor = rates.size() >= kMinPathsToCompare ? lower_median(rates) / kSlowOverMedian : 0;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        const PathSample &p = paths[i];
        if (p.received == 0) continue;
        if (p.rate() < floor) {
            t.slow[i] = 1;
            continue;
        }
        t.outcome.elapsed_ms = std::max(t.outcome.elapsed_ms, p.elapsed_ms);
        t.outcome.last_arrival_ms = std::max(t.outcome.last_arrival_ms, p.last_arrival_ms);
        t.outcome.expected += p.expected;
        t.outcome.received += p.received;
    }
    return t;
}

}  // namespace optireduce
