// SPDX-License-Identifier: BSD-3-Clause
#include "telemetry/job_summary.hpp"

#include "optireduce/optireduce.h"
#include "telemetry/stats.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace optireduce {
namespace {

// The integer counters of optireduce_stats_t (its uint64_t fields, in its order): the summary
// adds them over the ranks and prints them by name. The double fields (error estimates) are
// reduced on their own, see write_job_summary.
#define OPTIREDUCE_STATS_COUNTER_NAME_(name, doc) #name,
// NOLINTNEXTLINE(bugprone-macro-parentheses): the argument is a member name.
#define OPTIREDUCE_STATS_COUNTER_VALUE_(name, doc) s.name,
#define OPTIREDUCE_STATS_SKIP_(name, doc)
constexpr std::array kCounterNames{OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_COUNTER_NAME_, OPTIREDUCE_STATS_SKIP_)};
using Counters = std::array<std::uint64_t, kCounterNames.size()>;

Counters counters_of(const optireduce_stats_t &s) {
    return {OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_COUNTER_VALUE_, OPTIREDUCE_STATS_SKIP_)};
}
#undef OPTIREDUCE_STATS_COUNTER_NAME_
#undef OPTIREDUCE_STATS_COUNTER_VALUE_
#undef OPTIREDUCE_STATS_SKIP_

// The error estimates of the job: their sum over every rank's bounded calls, and the maxima.
struct Accuracy {
    double error_sum = 0, error_max = 0, drift_max = 0;
};

std::uint64_t total_of(const Counters &c, std::string_view name) {
    for (std::size_t i = 0; i < kCounterNames.size(); ++i)
        if (name == kCounterNames[i]) return c[i];
    return 0;
}

double percent(std::uint64_t part, std::uint64_t whole) {
    return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Peers whose streams were incomplete when someone closed a phase, most often first.
using Lateness = std::vector<std::pair<int, std::uint64_t>>;
Lateness slowest_peers(const std::vector<std::uint64_t> &late_by_rank, std::size_t top) {
    Lateness out;
    for (std::size_t r = 0; r < late_by_rank.size(); ++r)
        if (late_by_rank[r]) out.emplace_back(static_cast<int>(r), late_by_rank[r]);
    std::stable_sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.second > b.second; });
    if (out.size() > top) out.resize(top);
    return out;
}

// Every rank's CommSummary records, gathered to rank 0 as text lines "ranks mode channel codec
// calls fallback" (tab-separated; the reason last, the only field with spaces), in world-rank order.
std::vector<CommSummary> gather_comms(const std::vector<CommSummary> &mine, int world_rank, int ranks) {
    std::string text;
    for (const CommSummary &c : mine) {
        std::string reason = c.fallback;
        std::replace_if(reason.begin(), reason.end(), [](char ch) { return ch == '\t' || ch == '\n'; }, ' ');
        text += std::to_string(c.ranks) + '\t' + c.mode + '\t' + c.channel + '\t' + c.codec + '\t' +
                std::to_string(c.calls) + '\t' + reason + '\n';
    }
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(world_rank == 0 ? static_cast<std::size_t>(ranks) : 0), offsets(lengths.size());
    PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        offsets[r] = total;
        total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    PMPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                 MPI_COMM_WORLD);
    std::vector<CommSummary> out;
    std::istringstream lines(all);
    for (std::string line; std::getline(lines, line);) {
        std::array<std::string, 6> f;
        std::size_t from = 0;
        for (std::size_t i = 0; i + 1 < f.size(); ++i) {
            const std::size_t tab = line.find('\t', from);
            f[i] = line.substr(from, tab - from);
            from = tab + 1;
        }
        f[5] = line.substr(from);
        out.push_back({std::stoi(f[0]), f[1], f[2], f[3], f[5], std::stoull(f[4])});
    }
    return out;
}

// One communicator as the summary's text shows it.
std::string describe(const CommSummary &c) {
    std::string s = std::to_string(c.ranks) + (c.ranks == 1 ? " rank, " : " ranks, ");
    if (!c.fallback.empty()) return s + "engine off (" + c.fallback + ")";
    return s + "mode " + c.mode + ", channel " + c.channel + ", codec " + c.codec + ", " + std::to_string(c.calls) +
           " engine calls";
}

// The communicators in the text summary: the first few; the JSON file has them all.
constexpr std::size_t kCommLines = 16;

void print_comms(const std::vector<CommSummary> &comms, std::uint64_t unlisted) {
    for (std::size_t i = 0; i < comms.size() && i < kCommLines; ++i)
        std::fprintf(stderr, "optireduce[0] stats: communicator %zu: %s\n", i + 1, describe(comms[i]).c_str());
    const std::uint64_t more = (comms.size() > kCommLines ? comms.size() - kCommLines : 0) + unlisted;
    if (more)
        std::fprintf(stderr, "optireduce[0] stats: communicators: %llu more not shown%s\n",
                     static_cast<unsigned long long>(more),
                     unlisted ? "" : " (OPTIREDUCE_STATS_FILE lists them)");
}

// JSON string contents: the reasons are the library's own words, but quote them safely anyway.
std::string json_escaped(const std::string &s) {
    std::string out;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
    }
    return out;
}

void print_summary(int ranks, const Counters &totals, const LatencyHistogram &h, const Lateness &slow,
                   const Accuracy &acc, const std::vector<CommSummary> &comms, std::uint64_t unlisted) {
    // First line: machine-readable key=value pairs (tests and scripts parse it).
    std::fprintf(stderr, "optireduce[0] stats: ranks=%d", ranks);
    for (std::size_t i = 0; i < totals.size(); ++i)
        std::fprintf(stderr, " %s=%llu", kCounterNames[i], static_cast<unsigned long long>(totals[i]));
    std::fprintf(stderr, "\n");
    std::fprintf(stderr,
                 "optireduce[0] stats: engine allreduce latency over %llu calls (all ranks): "
                 "p50 %.1f us, p99 %.1f us, max %.1f us\n",
                 static_cast<unsigned long long>(h.count()), h.percentile_ns(0.50) / 1e3, h.percentile_ns(0.99) / 1e3,
                 static_cast<double>(h.max_ns()) / 1e3);
    print_comms(comms, unlisted);
    if (total_of(totals, "bounded_calls") == 0) return;
    std::fprintf(stderr,
                 "optireduce[0] stats: bounded: entries lost %.4f%% in reduce-scatter, %.4f%% in all-gather; "
                 "phases %llu complete, %llu closed early, %llu at the deadline; datagrams %llu late, %llu "
                 "duplicate, %llu invalid; %llu peers written off as stragglers; all-gather repair: %llu chunks "
                 "requested, %llu sent again\n",
                 percent(total_of(totals, "entries_lost_rs"), total_of(totals, "entries_expected_rs")),
                 percent(total_of(totals, "entries_lost_ag"), total_of(totals, "entries_expected_ag")),
                 static_cast<unsigned long long>(total_of(totals, "phases_complete")),
                 static_cast<unsigned long long>(total_of(totals, "phases_early_close")),
                 static_cast<unsigned long long>(total_of(totals, "phases_deadline")),
                 static_cast<unsigned long long>(total_of(totals, "datagrams_late")),
                 static_cast<unsigned long long>(total_of(totals, "datagrams_duplicate")),
                 static_cast<unsigned long long>(total_of(totals, "datagrams_invalid")),
                 static_cast<unsigned long long>(total_of(totals, "stragglers_written_off")),
                 static_cast<unsigned long long>(total_of(totals, "repair_chunks_requested")),
                 static_cast<unsigned long long>(total_of(totals, "repair_chunks_sent")));
    std::string line;
    for (const auto &[rank, n] : slow)
        line += (line.empty() ? "" : ", ") + ("rank " + std::to_string(rank)) + " incomplete in " + std::to_string(n) +
                " phases";
    std::fprintf(stderr, "optireduce[0] stats: slowest peers: %s\n", line.empty() ? "none" : line.c_str());
    const std::uint64_t bounded = total_of(totals, "bounded_calls");
    std::fprintf(stderr,
                 "optireduce[0] stats: accuracy: Hadamard transform in %llu of %llu bounded calls; estimated "
                 "relative error mean %.3g, max %.3g; replica drift estimate max %.3g; %llu calls over "
                 "OPTIREDUCE_MAX_LOSS, %llu run through the underlying MPI\n",
                 static_cast<unsigned long long>(total_of(totals, "hadamard_calls")),
                 static_cast<unsigned long long>(bounded), bounded ? acc.error_sum / static_cast<double>(bounded) : 0.0,
                 acc.error_max, acc.drift_max, static_cast<unsigned long long>(total_of(totals, "excess_loss_calls")),
                 static_cast<unsigned long long>(total_of(totals, "reliable_calls")));
}

void write_json(const char *path, int ranks, const Counters &totals, const std::vector<std::uint64_t> &per_rank,
                const LatencyHistogram &h, const Lateness &slow, const Accuracy &acc,
                const std::vector<CommSummary> &comms, std::uint64_t unlisted) {
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
    std::fprintf(f, "  \"slowest_peers\": [");
    for (std::size_t i = 0; i < slow.size(); ++i)
        std::fprintf(f, "%s{\"rank\": %d, \"incomplete_phases\": %llu}", i ? ", " : "", slow[i].first,
                     static_cast<unsigned long long>(slow[i].second));
    std::fprintf(f, "],\n");
    const std::uint64_t bounded = total_of(totals, "bounded_calls");
    std::fprintf(f,
                 "  \"accuracy\": {\"error_estimate_mean\": %.6g, \"error_estimate_max\": %.6g, "
                 "\"drift_estimate_max\": %.6g},\n",
                 bounded ? acc.error_sum / static_cast<double>(bounded) : 0.0, acc.error_max, acc.drift_max);
    std::fprintf(f, "  \"communicators\": [");
    for (std::size_t i = 0; i < comms.size(); ++i) {
        const CommSummary &c = comms[i];
        std::fprintf(f,
                     "%s\n    {\"ranks\": %d, \"engine\": %s, \"mode\": \"%s\", \"channel\": \"%s\", \"codec\": "
                     "\"%s\", \"calls\": %llu, \"fallback\": \"%s\"}",
                     i ? "," : "", c.ranks, c.fallback.empty() ? "true" : "false", c.mode.c_str(), c.channel.c_str(),
                     c.codec.c_str(), static_cast<unsigned long long>(c.calls), json_escaped(c.fallback).c_str());
    }
    std::fprintf(f, "%s],\n  \"communicators_unlisted\": %llu,\n", comms.empty() ? "" : "\n  ",
                 static_cast<unsigned long long>(unlisted));
    std::fprintf(f, "  \"per_rank\": [\n");
    for (int r = 0; r < ranks; ++r) {
        std::fprintf(f, "    {\"rank\": %d", r);
        for (std::size_t i = 0; i < kCounterNames.size(); ++i)
            std::fprintf(
                f, ", \"%s\": %llu", kCounterNames[i],
                static_cast<unsigned long long>(per_rank[static_cast<std::size_t>(r) * kCounterNames.size() + i]));
        std::fprintf(f, "}%s\n", r + 1 < ranks ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

}  // namespace

void write_job_summary(const Config &config, int world_rank, const std::vector<CommSummary> &my_comms,
                       std::uint64_t my_unlisted) {
    int ranks = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
    // One reading of this rank's counters for the integer totals and the error estimates alike.
    optireduce_stats_t st{};
    optireduce_get_stats_sized(&st, sizeof st);
    const Counters mine = counters_of(st);
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

    // Lateness of each peer as every other rank saw it, summed.
    const std::size_t tracked = std::min<std::size_t>(static_cast<std::size_t>(ranks), ProcessStats::kTrackedRanks);
    std::vector<std::uint64_t> late(tracked), late_sum(tracked);
    for (std::size_t r = 0; r < tracked; ++r)
        late[r] = process_stats().late_phases_by_rank[r].load(std::memory_order_relaxed);
    PMPI_Reduce(late.data(), late_sum.data(), static_cast<int>(tracked), MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

    Accuracy acc;
    PMPI_Reduce(&st.error_estimate_sum, &acc.error_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    const double maxima[2] = {st.error_estimate_max, st.drift_estimate_max};
    double job_max[2] = {0, 0};
    PMPI_Reduce(maxima, job_max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    acc.error_max = job_max[0];
    acc.drift_max = job_max[1];

    const std::vector<CommSummary> comms = gather_comms(my_comms, world_rank, ranks);
    std::uint64_t unlisted = 0;
    PMPI_Reduce(&my_unlisted, &unlisted, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

    if (world_rank != 0) return;
    const Lateness slow = slowest_peers(late_sum, 5);
    if (config.stats) print_summary(ranks, totals, job, slow, acc, comms, unlisted);
    if (!config.stats_file.empty())
        write_json(config.stats_file.c_str(), ranks, totals, per_rank, job, slow, acc, comms, unlisted);
}

}  // namespace optireduce
