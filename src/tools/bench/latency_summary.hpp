// Reduces a list of per-iteration latencies to the numbers the table prints.
#pragma once

#include <span>

namespace optireduce::bench {

struct LatencySummary {
    double avg = 0, min = 0, p50 = 0, p99 = 0, max = 0; // microseconds
};

// Percentiles are nearest-rank (the smallest sample with at least p% of samples at or below it),
// so every reported value is a latency that was actually measured.
LatencySummary summarize(std::span<const double> latencies_us);

} // namespace optireduce::bench
