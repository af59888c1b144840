// SPDX-License-Identifier: BSD-3-Clause
#include "bench/step/data.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace optireduce::bench {
namespace {

// splitmix64: a counter-based hash, so element i needs no state from element i-1.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

void fill_inputs(std::span<float> out, int rank) {
    const std::uint64_t seed = mix(static_cast<std::uint64_t>(rank) + 1) << 32;
    for (std::size_t i = 0; i < out.size(); ++i) {
        // 24 random bits land on the float grid exactly: k / 2^23 - 1 covers [-1, 1).
        auto bits = static_cast<std::uint32_t>(mix(seed ^ i) >> 40);
        out[i] = static_cast<float>(bits) * 0x1p-23f - 1.0f;
    }
}

float max_magnitude(std::span<const float> values) {
    float m = 0.0f;
    for (float v : values) m = std::fmax(m, std::fabs(v));
    return m;
}

double max_abs_error(std::span<const float> got, std::span<const float> want) {
    double worst = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        double e = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
        if (!std::isfinite(e)) return std::numeric_limits<double>::infinity();
        worst = std::fmax(worst, e);
    }
    return worst;
}

}  // namespace optireduce::bench
