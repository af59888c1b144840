// SPDX-License-Identifier: BSD-3-Clause
#include "bench/step/compute.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

namespace optireduce::bench {
namespace {

double uniform(int rank, long iteration, std::uint64_t salt) {
    std::uint64_t h =
        (static_cast<std::uint64_t>(rank) << 32) ^ static_cast<std::uint64_t>(iteration + (1L << 30)) ^ salt;
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53);
}

}  // namespace

double compute_duration_ms(double ms, double skew_ms, int rank, long iteration) {
    const double base = ms * (0.75 + 0.5 * uniform(rank, iteration, 0));
    return base + skew_ms * uniform(rank, iteration, 0x5eed5eed5eedULL);
}

void spend(double ms, bool sleep) {
    if (ms <= 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    if (sleep) {
        std::this_thread::sleep_until(until);
        return;
    }
    while (std::chrono::steady_clock::now() < until) {
    }
}

}  // namespace optireduce::bench
