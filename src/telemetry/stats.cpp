#include "telemetry/stats.hpp"

namespace optireduce {

constinit ProcessStats g_process_stats;

void ProcessStats::record_engine_call(std::uint64_t bytes, std::uint64_t ns) {
    engine_calls.fetch_add(1, std::memory_order_relaxed);
    engine_bytes.fetch_add(bytes, std::memory_order_relaxed);
    std::lock_guard lock(latency_mutex);
    latency.record(ns);
}

}  // namespace optireduce
