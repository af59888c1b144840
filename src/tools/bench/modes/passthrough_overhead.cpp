// SPDX-License-Identifier: BSD-3-Clause
#include "bench/modes/passthrough_overhead.hpp"

#include "bench/modes/report.hpp"
#include "bench/step/mode.hpp"

#include "common/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace optireduce::bench {
namespace {

constexpr long default_calls = 1'000'000;
constexpr long default_warmup = 10'000;
constexpr long block_calls = 1'000;

void call_many(const Mode &mode, long calls, MPI_Comm comm) {
    int one = 1, sum = 0;
    for (long i = 0; i < calls; ++i) mode.allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
}

struct ModeTimes {
    std::vector<double> block_ns_per_call;  // this rank only
    double total_ns = 0;
};

}  // namespace

int run_passthrough_overhead(const Options &options, const LibraryProbe &library, MPI_Comm comm) {
    using clock = std::chrono::steady_clock;
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const long calls = options.iterations.value_or(default_calls);
    const long warmup = options.warmup.value_or(default_warmup);
    const Mode *modes[2] = {&optireduce_mode, &native_mode};

    if (rank == 0) {
        print_preamble("pass-through cost of MPI_Allreduce (1 x MPI_INT, MPI_SUM, never eligible)", library, ranks);
        std::printf("# calls:      %ld per mode in alternating blocks of up to %ld, after %ld warm-up calls each\n",
                    calls, block_calls, warmup);
        std::printf(
            "# timing:     ns per call, averaged over ranks; Median is over blocks, and for Difference\n"
            "#             over the differences within each pair of blocks: the pass-through cost estimate\n"
            "#             (robust to preemption; use no more ranks than cores)\n");
    }

    for (const Mode *mode : modes) call_many(*mode, warmup, comm);

    ModeTimes times[2];
    PMPI_Barrier(comm);
    for (long done = 0, block = 0; done < calls; ++block) {
        const long n = std::min(block_calls, calls - done);
        // ABBA order: a drift over the run (frequency, other load) cancels instead of favouring one.
        for (int k = 0; k < 2; ++k) {
            const int which = (block % 2 == 0) ? k : 1 - k;
            auto start = clock::now();
            call_many(*modes[which], n, comm);
            double ns = std::chrono::duration<double, std::nano>(clock::now() - start).count();
            times[which].block_ns_per_call.push_back(ns / static_cast<double>(n));
            times[which].total_ns += ns;
        }
        done += n;
    }

    double mean[2] = {}, median_ns[2] = {};
    std::vector<double> rank_mean[2];
    for (int m = 0; m < 2; ++m) {
        std::vector<double> &blocks = times[m].block_ns_per_call;
        rank_mean[m].resize(rank == 0 ? blocks.size() : 0);
        PMPI_Reduce(blocks.data(), rank_mean[m].data(), static_cast<int>(blocks.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
        double total = 0;
        PMPI_Reduce(&times[m].total_ns, &total, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
        if (rank == 0) {
            for (double &v : rank_mean[m]) v /= ranks;
            mean[m] = total / ranks / static_cast<double>(calls);
            median_ns[m] = tools::median(rank_mean[m]);
        }
    }

    if (rank == 0) {
        // The two blocks of a pair ran next to each other, so their difference is free of drift
        // across the run; its median also ignores the blocks a preemption landed in.
        std::vector<double> paired(rank_mean[0].size());
        for (std::size_t b = 0; b < paired.size(); ++b) paired[b] = rank_mean[0][b] - rank_mean[1][b];
        std::printf("%-20s%18s%18s\n", "# Mode", "Mean(ns/call)", "Median(ns/call)");
        std::printf("%-20s%18.1f%18.1f\n", "MPI_Allreduce", mean[0], median_ns[0]);
        std::printf("%-20s%18.1f%18.1f\n", "PMPI_Allreduce", mean[1], median_ns[1]);
        std::printf("%-20s%18.1f%18.1f\n", "Difference", mean[0] - mean[1], tools::median(paired));
        print_counters(library);
    }
    return 0;
}

}  // namespace optireduce::bench
