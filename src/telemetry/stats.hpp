// Process-wide counters behind optireduce_get_stats() and the finalize summary.
#pragma once

#include "telemetry/histogram.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>

namespace optireduce {

struct ProcessStats {
    std::atomic<std::uint64_t> engine_calls{0};
    std::atomic<std::uint64_t> engine_bytes{0};
    std::atomic<std::uint64_t> passthrough_calls{0};
    std::atomic<std::uint64_t> fallback_calls{0};
    std::atomic<std::uint64_t> comms_enabled{0};
    std::atomic<std::uint64_t> comms_fallback{0};

    std::mutex latency_mutex;  // engine path only
    LatencyHistogram latency;

    void record_engine_call(std::uint64_t bytes, std::uint64_t ns);
};

// Constant-initialised (no constructor runs, no guard on access) and trivially destroyed, so it is
// readable from atexit handlers and from the attribute callback inside PMPI_Finalize.
extern ProcessStats g_process_stats;
inline ProcessStats &process_stats() { return g_process_stats; }

// The pass-through path's only bookkeeping: a relaxed load and store, no locked instruction.
// Under MPI_THREAD_MULTIPLE two threads passing through at the same instant may lose one count;
// that is the price of keeping the path as cheap as a plain PMPI call.
inline void count_passthrough() {
    auto &c = process_stats().passthrough_calls;
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace optireduce
