// SPDX-License-Identifier: BSD-3-Clause
#include "bench/modes/completion_overhead.hpp"

#include "bench/modes/report.hpp"

#include "common/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace optireduce::bench {
namespace {

constexpr long default_calls = 200'000;
constexpr long default_warmup = 10'000;
constexpr long block_calls = 1'000;
constexpr int array_requests = 8;  // per MPI_Testall / MPI_Waitall call

// The entry points under test, called through pointers on both sides so that the two differ
// only in which symbol is called (as in mode.hpp).
struct CompletionCalls {
    const char *name;
    int (*test)(MPI_Request *, int *, MPI_Status *);
    int (*wait)(MPI_Request *, MPI_Status *);
    int (*testall)(int, MPI_Request *, int *, MPI_Status *);
    int (*waitall)(int, MPI_Request *, MPI_Status *);
};

const CompletionCalls intercepted{"MPI", &MPI_Test, &MPI_Wait, &MPI_Testall, &MPI_Waitall};
const CompletionCalls direct{"PMPI", &PMPI_Test, &PMPI_Wait, &PMPI_Testall, &PMPI_Waitall};

enum class Kind { test_completed, test_null, wait_null, testall_completed, waitall_completed, self_loop };

struct Case {
    Kind kind;
    const char *label;
    int requests_per_call;  // completed requests each call consumes (made untimed beforehand)
};

const Case cases[] = {
    {Kind::test_completed, "MPI_Test, completed request", 1},
    {Kind::test_null, "MPI_Test, MPI_REQUEST_NULL", 0},
    {Kind::wait_null, "MPI_Wait, MPI_REQUEST_NULL", 0},
    {Kind::testall_completed, "MPI_Testall, 8 completed", array_requests},
    {Kind::waitall_completed, "MPI_Waitall, 8 completed", array_requests},
    {Kind::self_loop, "Irecv+Isend self, 2x MPI_Wait", 0},
};

// Completed ordinary requests: zero-byte sends to self and their receives, both complete once
// matched. Made through PMPI outside the timed loop and polled with PMPI_Request_get_status
// (which does not free them), so the timed call finds each one complete, as an application's
// MPI_Test does once the transfer is done, and frees it.
class CompletedRequests {
public:
    explicit CompletedRequests(MPI_Comm self) : self_(self) {}

    MPI_Request *make(std::size_t n) {
        requests_.assign(n + n % 2, MPI_REQUEST_NULL);
        for (std::size_t i = 0; i + 1 < requests_.size(); i += 2) {
            PMPI_Irecv(&sink_, 0, MPI_BYTE, 0, 0, self_, &requests_[i]);
            PMPI_Isend(&sink_, 0, MPI_BYTE, 0, 0, self_, &requests_[i + 1]);
        }
        for (MPI_Request &request : requests_) {
            for (int flag = 0; !flag;) PMPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE);
        }
        return requests_.data();
    }

private:
    MPI_Comm self_;
    std::vector<MPI_Request> requests_;
    int sink_ = 0;
};

// One block of `calls` calls of `c` through `fns`, in ns; requests are made before the clock starts.
double time_block(const Case &c, const CompletionCalls &fns, long calls, CompletedRequests &pool, MPI_Comm self) {
    using clock = std::chrono::steady_clock;
    MPI_Request *made = c.requests_per_call > 0
                            ? pool.make(static_cast<std::size_t>(calls) * static_cast<std::size_t>(c.requests_per_call))
                            : nullptr;
    int flag = 0, value = 1, received = 0;
    const auto start = clock::now();
    switch (c.kind) {
        case Kind::test_completed:
            for (long i = 0; i < calls; ++i) fns.test(&made[i], &flag, MPI_STATUS_IGNORE);
            break;
        case Kind::test_null:
            for (long i = 0; i < calls; ++i) {
                MPI_Request request = MPI_REQUEST_NULL;
                fns.test(&request, &flag, MPI_STATUS_IGNORE);
            }
            break;
        case Kind::wait_null:
            for (long i = 0; i < calls; ++i) {
                MPI_Request request = MPI_REQUEST_NULL;
                fns.wait(&request, MPI_STATUS_IGNORE);
            }
            break;
        case Kind::testall_completed:
            for (long i = 0; i < calls; ++i)
                fns.testall(array_requests, made + i * array_requests, &flag, MPI_STATUSES_IGNORE);
            break;
        case Kind::waitall_completed:
            for (long i = 0; i < calls; ++i)
                fns.waitall(array_requests, made + i * array_requests, MPI_STATUSES_IGNORE);
            break;
        case Kind::self_loop:
            // Isend and Irecv are not intercepted; PMPI on both sides keeps the difference to the waits.
            for (long i = 0; i < calls; ++i) {
                MPI_Request recv = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
                PMPI_Irecv(&received, 1, MPI_INT, 0, 1, self, &recv);
                PMPI_Isend(&value, 1, MPI_INT, 0, 1, self, &send);
                fns.wait(&send, MPI_STATUS_IGNORE);
                fns.wait(&recv, MPI_STATUS_IGNORE);
            }
            break;
    }
    return std::chrono::duration<double, std::nano>(clock::now() - start).count();
}

struct CaseResult {
    double mean[2] = {};    // ns per call: intercepted, direct
    double median[2] = {};  // over blocks
    double paired = 0;      // median over block pairs of intercepted - direct
};

// Collective. Times `c` both ways in alternating blocks (ABBA, as passthrough_overhead.cpp), each
// rank on its own, and averages the blocks over ranks on rank 0.
CaseResult measure(const Case &c, long calls, long warmup, MPI_Comm comm, MPI_Comm self, CompletedRequests &pool) {
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const CompletionCalls *sides[2] = {&intercepted, &direct};
    for (const CompletionCalls *side : sides)
        for (long done = 0; done < warmup; done += block_calls)
            time_block(c, *side, std::min(block_calls, warmup - done), pool, self);

    std::vector<double> blocks[2];
    double total_ns[2] = {};
    PMPI_Barrier(comm);
    for (long done = 0, block = 0; done < calls; ++block) {
        const long n = std::min(block_calls, calls - done);
        for (int k = 0; k < 2; ++k) {
            const int which = (block % 2 == 0) ? k : 1 - k;
            const double ns = time_block(c, *sides[which], n, pool, self);
            blocks[which].push_back(ns / static_cast<double>(n));
            total_ns[which] += ns;
        }
        done += n;
    }

    CaseResult result;
    std::vector<double> rank_mean[2];
    for (int m = 0; m < 2; ++m) {
        rank_mean[m].resize(rank == 0 ? blocks[m].size() : 0);
        PMPI_Reduce(blocks[m].data(), rank_mean[m].data(), static_cast<int>(blocks[m].size()), MPI_DOUBLE, MPI_SUM, 0,
                    comm);
        double total = 0;
        PMPI_Reduce(&total_ns[m], &total, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
        if (rank == 0) {
            for (double &v : rank_mean[m]) v /= ranks;
            result.mean[m] = total / ranks / static_cast<double>(calls);
            result.median[m] = tools::median(rank_mean[m]);
        }
    }
    if (rank == 0) {
        std::vector<double> paired(rank_mean[0].size());
        for (std::size_t b = 0; b < paired.size(); ++b) paired[b] = rank_mean[0][b] - rank_mean[1][b];
        result.paired = tools::median(paired);
    }
    return result;
}

}  // namespace

int run_completion_overhead(const Options &options, const LibraryProbe &library, MPI_Comm comm) {
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const long calls = options.iterations.value_or(default_calls);
    const long warmup = options.warmup.value_or(default_warmup);

    // A communicator of its own for the self messages; PMPI so the library never sees it.
    MPI_Comm self = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_SELF, &self);
    CompletedRequests pool(self);

    if (rank == 0) {
        print_preamble("interception cost of the completion calls on ordinary requests", library, ranks);
        std::printf(
            "# calls:      %ld per call kind and side in alternating blocks of up to %ld (ABBA), after %ld\n"
            "#             warm-up calls each; completed requests are zero-byte self messages made and\n"
            "#             completed (PMPI) before each block's clock starts; each call frees its own\n",
            calls, block_calls, warmup);
        std::printf(
            "# timing:     ns per call, averaged over ranks; Median is over blocks, and for Difference\n"
            "#             over the differences within each pair of blocks: the interception cost\n"
            "#             estimate (robust to preemption; use no more ranks than cores)\n");
        std::printf("%-34s%14s%14s%14s%14s%14s%14s\n", "# Call", "MPI-Mean", "MPI-Median", "PMPI-Mean", "PMPI-Median",
                    "Diff-Mean", "Diff-Median");
        std::fflush(stdout);
    }
    for (const Case &c : cases) {
        const CaseResult r = measure(c, calls, warmup, comm, self, pool);
        if (rank == 0) {
            std::printf("%-34s%14.1f%14.1f%14.1f%14.1f%14.1f%14.1f\n", c.label, r.mean[0], r.median[0], r.mean[1],
                        r.median[1], r.mean[0] - r.mean[1], r.paired);
            std::fflush(stdout);
        }
    }
    PMPI_Comm_free(&self);
    if (rank == 0) print_counters(library);
    return 0;
}

}  // namespace optireduce::bench
