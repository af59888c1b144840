// SPDX-License-Identifier: BSD-3-Clause
// Which message sizes a sweep visits and how many calls each gets.
#pragma once

#include "bench/support/options.hpp"

#include <vector>

namespace optireduce::bench {

struct SizeStep {
    int count;  // floats per rank
    long iterations;
    long warmup;
    std::size_t bytes() const { return static_cast<std::size_t>(count) * sizeof(float); }
};

std::vector<SizeStep> make_plan(const Options &options);

// The default number of timed calls for a message of `bytes`.
long default_iterations(std::size_t bytes);

}  // namespace optireduce::bench
