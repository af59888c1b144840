// SPDX-License-Identifier: BSD-3-Clause
// Deterministic random data for the codec tests.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace optireduce::test {

// n standard-normal floats from `seed`.
inline std::vector<float> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto &x : v) x = d(rng);
    return v;
}

}  // namespace optireduce::test
