// SPDX-License-Identifier: BSD-3-Clause
// Process-wide counters behind optireduce_get_stats() and the finalize summary.
#pragma once

#include "optireduce/stats_fields.h"
#include "telemetry/histogram.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace optireduce {

struct ProcessStats {
    // One atomic per field of optireduce_stats_t, of the same name (optireduce/stats_fields.h).
    // The X-macro arguments are member names: parentheses around them would not compile.
    // NOLINTBEGIN(bugprone-macro-parentheses)
#define OPTIREDUCE_STATS_U64_ATOMIC_(name, doc) std::atomic<std::uint64_t> name{0};
#define OPTIREDUCE_STATS_F64_ATOMIC_(name, doc) std::atomic<double> name{0};
    // NOLINTEND(bugprone-macro-parentheses)
    OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_U64_ATOMIC_, OPTIREDUCE_STATS_F64_ATOMIC_)
#undef OPTIREDUCE_STATS_U64_ATOMIC_
#undef OPTIREDUCE_STATS_F64_ATOMIC_

    // Phases in which a peer's stream was incomplete when this rank closed them, by the peer's
    // world rank (the last slot counts every rank beyond): the "slowest peers" of the summary.
    static constexpr std::size_t kTrackedRanks = 1024;
    std::array<std::atomic<std::uint64_t>, kTrackedRanks> late_phases_by_rank{};

    std::mutex latency_mutex;  // engine path only
    LatencyHistogram latency;

    void record_engine_call(std::uint64_t bytes, std::uint64_t ns);
};

// Constant-initialised (no constructor runs, no guard on access) and trivially destroyed, so it is
// readable from atexit handlers and from the attribute callback inside PMPI_Finalize.
extern ProcessStats g_process_stats;
inline ProcessStats &process_stats() { return g_process_stats; }

inline void bump(std::atomic<std::uint64_t> &counter, std::uint64_t by = 1) {
    counter.fetch_add(by, std::memory_order_relaxed);
}

// One bounded operation's error estimates into the sum and the maxima.
void add_estimate(ProcessStats &s, double error, double drift);

// The pass-through path's only bookkeeping: a relaxed load and store, no locked instruction.
// Under MPI_THREAD_MULTIPLE two threads passing through at the same instant may lose one count;
// that is the price of keeping the path as cheap as a plain PMPI call.
inline void count_passthrough() {
    auto &c = process_stats().passthrough_calls;
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace optireduce
