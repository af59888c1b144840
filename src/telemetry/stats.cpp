// SPDX-License-Identifier: BSD-3-Clause
#include "telemetry/stats.hpp"

namespace optireduce {

constinit ProcessStats g_process_stats;

void ProcessStats::record_engine_call(std::uint64_t bytes, std::uint64_t ns) {
    engine_calls.fetch_add(1, std::memory_order_relaxed);
    engine_bytes.fetch_add(bytes, std::memory_order_relaxed);
    std::lock_guard lock(latency_mutex);
    latency.record(ns);
}

namespace {
void raise_to(std::atomic<double> &m, double v) {
    double cur = m.load(std::memory_order_relaxed);
    while (v > cur && !m.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
}
}  // namespace

void add_estimate(ProcessStats &s, double error, double drift) {
    s.error_estimate_sum.fetch_add(error, std::memory_order_relaxed);
    raise_to(s.error_estimate_max, error);
    raise_to(s.drift_estimate_max, drift);
}

}  // namespace optireduce
