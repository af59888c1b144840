#include "telemetry/job_summary.hpp"

#include "optireduce/optireduce.h"
#include "telemetry/stats.hpp"

#include <mpi.h>

#include <array>
#include <cstdio>
#include <vector>

namespace optireduce {
namespace {

constexpr std::array kCounterNames{"engine_calls",   "engine_bytes",  "passthrough_calls",
                                   "fallback_calls", "comms_enabled", "comms_fallback"};
using Counters = std::array<std::uint64_t, kCounterNames.size()>;

Counters snapshot() {
    optireduce_stats_t s{};
    optireduce_get_stats(&s);
    return {s.engine_calls, s.engine_bytes, s.passthrough_calls, s.fallback_calls, s.comms_enabled,
            s.comms_fallback};
}

void print_summary(int ranks, const Counters &totals, const LatencyHistogram &h) {
    // First line: machine-readable key=value pairs (tests and scripts parse it).
    std::fprintf(stderr, "optireduce[0] stats: ranks=%d", ranks);
    for (std::size_t i = 0; i < totals.size(); ++i)
        std::fprintf(stderr, " %s=%llu", kCounterNames[i], static_cast<unsigned long long>(totals[i]));
    std::fprintf(stderr, "\n");
    std::fprintf(stderr,
                 "optireduce[0] stats: engine allreduce latency over %llu calls (all ranks): "
                 "p50 %.1f us, p99 %.1f us, max %.1f us\n",
                 static_cast<unsigned long long>(h.count()), h.percentile_ns(0.50) / 1e3,
                 h.percentile_ns(0.99) / 1e3, static_cast<double>(h.max_ns()) / 1e3);
}

void write_json(const char *path, int ranks, const Counters &totals, const std::vector<std::uint64_t> &per_rank,
                const LatencyHistogram &h) {
    std::FILE *f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "optireduce[0] warn: cannot write OPTIREDUCE_STATS_FILE=%s; check the path\n", path);
        return;
    }
    std::fprintf(f, "{\n  \"version\": \"%s\",\n  \"mpi_abi\": \"%s\",\n  \"ranks\": %d,\n  \"totals\": {",
                 optireduce_version(), optireduce_mpi_abi(), ranks);
    for (std::size_t i = 0; i < totals.size(); ++i)
        std::fprintf(f, "%s\"%s\": %llu", i ? ", " : "", kCounterNames[i], static_cast<unsigned long long>(totals[i]));
    std::fprintf(f, "},\n  \"latency_us\": {\"count\": %llu, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n",
                 static_cast<unsigned long long>(h.count()), h.percentile_ns(0.50) / 1e3, h.percentile_ns(0.99) / 1e3,
                 static_cast<double>(h.max_ns()) / 1e3);
    std::fprintf(f, "  \"per_rank\": [\n");
    for (int r = 0; r < ranks; ++r) {
        std::fprintf(f, "    {\"rank\": %d", r);
        for (std::size_t i = 0; i < kCounterNames.size(); ++i)
            std::fprintf(f, ", \"%s\": %llu", kCounterNames[i],
                         static_cast<unsigned long long>(per_rank[static_cast<std::size_t>(r) * kCounterNames.size() + i]));
        std::fprintf(f, "}%s\n", r + 1 < ranks ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

}  // namespace

void write_job_summary(const Config &config, int world_rank) {
    int ranks = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const Counters mine = snapshot();
    Counters totals{};
    std::vector<std::uint64_t> per_rank(world_rank == 0 ? mine.size() * static_cast<std::size_t>(ranks) : 0);
    PMPI_Reduce(mine.data(), totals.data(), static_cast<int>(mine.size()), MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, per_rank.data(),
                static_cast<int>(mine.size()), MPI_UINT64_T, 0, MPI_COMM_WORLD);

    LatencyHistogram local;
    {
        std::lock_guard lock(process_stats().latency_mutex);
        local = process_stats().latency;
    }
    LatencyHistogram job;
    PMPI_Reduce(local.buckets().data(), job.buckets().data(), LatencyHistogram::kBuckets, MPI_UINT64_T, MPI_SUM, 0,
                MPI_COMM_WORLD);
    std::array<std::uint64_t, 2> cm{local.count(), local.max_ns()}, sum_cm{}, max_cm{};
    PMPI_Reduce(cm.data(), sum_cm.data(), 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(cm.data(), max_cm.data(), 2, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    job.set_totals(sum_cm[0], max_cm[1]);

    if (world_rank != 0) return;
    if (config.stats) print_summary(ranks, totals, job);
    if (!config.stats_file.empty()) write_json(config.stats_file.c_str(), ranks, totals, per_rank, job);
}

}  // namespace optireduce
