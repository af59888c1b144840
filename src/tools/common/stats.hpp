// SPDX-License-Identifier: BSD-3-Clause
// Sample statistics for the tools' tables: one definition of a median and of a percentile.
#pragma once

#include <span>
#include <vector>

namespace optireduce::tools {

// The middle sample, or the mean of the two middle ones; 0 for no samples.
double median(std::vector<double> samples);

// Nearest rank: the smallest sample with at least `percent`% of the samples at or below it, so
// the result is a value that was measured. `sorted` must be ascending and not empty.
double nearest_rank(std::span<const double> sorted, double percent);

struct Summary {
    double avg = 0, min = 0, p50 = 0, p99 = 0, max = 0;
};

// Percentiles by nearest rank; all zero for no samples.
Summary summarize(std::span<const double> samples);

}  // namespace optireduce::tools
