// Process-wide counters behind optireduce_get_stats() and the finalize summary.
#pragma once

#include "telemetry/histogram.hpp"

#include <array>
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

    // Bounded mode (the fields of optireduce_stats_t of the same names).
    std::atomic<std::uint64_t> bounded_calls{0};
    std::atomic<std::uint64_t> entries_expected_rs{0}, entries_lost_rs{0};
    std::atomic<std::uint64_t> entries_expected_ag{0}, entries_lost_ag{0};
    std::atomic<std::uint64_t> phases_complete{0}, phases_early_close{0}, phases_deadline{0};
    std::atomic<std::uint64_t> datagrams_sent{0}, datagrams_late{0}, datagrams_duplicate{0};
    std::atomic<std::uint64_t> datagrams_invalid{0}, datagrams_held{0}, datagrams_held_dropped{0};
    std::atomic<std::uint64_t> datagrams_fault_dropped{0};
    std::atomic<std::uint64_t> stragglers_written_off{0};
    std::atomic<std::uint64_t> repair_chunks_requested{0}, repair_chunks_sent{0}, repair_chunks_unavailable{0};
    std::atomic<std::uint64_t> nonblocking_calls{0};  // of engine_calls: MPI_Iallreduce
    std::atomic<std::uint64_t> staging_failures{0};    // staging that could not grow here
    std::atomic<std::uint64_t> datagrams_send_failed{0};  // given up: the channel failed their send
    std::atomic<std::uint64_t> send_queue_full{0};        // send rounds cut short by a full queue
    std::atomic<std::uint64_t> completion_errors{0};      // error completions (-FI_EAVAIL) read
    // Accuracy under loss.
    std::atomic<std::uint64_t> hadamard_calls{0}, excess_loss_calls{0}, reliable_calls{0};
    std::atomic<double> error_estimate_sum{0}, error_estimate_max{0}, drift_estimate_max{0};
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
