// SPDX-License-Identifier: BSD-3-Clause
#include "bench/modes/report.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace optireduce::bench {
namespace {

std::string mpi_library_first_line() {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string line(text, static_cast<std::size_t>(length));
    line = line.substr(0, line.find('\n'));
    std::replace(line.begin(), line.end(), '\t', ' ');  // MPICH: "MPICH Version:<TAB>4.0.2"
    return line;
}

// OSU's widths for its columns, narrower ones for ours to keep a row readable.
constexpr int size_width = 10, osu_width = 20, iterations_width = 12, extra_width = 13;

}  // namespace

void print_preamble(const char *what, const LibraryProbe &library, int ranks) {
    std::printf("# optireduce-bench: %s\n", what);
    std::printf("# library:    %s\n", library.describe().c_str());
    if (auto mismatch = library.abi_mismatch())
        std::printf("# WARNING:    %s; use the matching optireduce-bench binary\n", mismatch->c_str());
    std::printf("# MPI:        %s\n", mpi_library_first_line().c_str());
    std::printf("# ranks:      %d\n", ranks);
}

void print_sweep_notes(const Options &options) {
    if (options.iterations)
        std::printf("# iterations: %ld per size and mode", *options.iterations);
    else
        std::printf("# iterations: 1000 per size and mode up to 1 MiB, then 20 x 64 MiB / size (at least 20)");
    if (options.warmup)
        std::printf(", warm-up %ld\n", *options.warmup);
    else
        std::printf(", warm-up a tenth of that (at least 2)\n");
    std::printf("# data:       MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, %s%s\n",
                options.in_place ? "MPI_IN_PLACE (refilled before each call)" : "separate send and receive buffers",
                options.validate ? ", every result checked against PMPI_Allreduce" : "");
    if (options.compute_ms > 0 || options.skew_ms > 0)
        std::printf(
            "# compute:    %g ms +-25%% plus 0..%g ms %s on every rank before each call (ranks arrive "
            "apart)\n",
            options.compute_ms, options.skew_ms, options.compute_sleep ? "slept" : "spun");
    std::printf(
        "# timing:     per size both modes run back to back, the first one alternating; calls are\n"
        "#             timed one by one, no barrier between them; an iteration's latency is that\n"
        "#             of its slowest rank\n"
        "# cpu:        CPU(us), Nat-CPU(us): process CPU time (every thread, user and system) while\n"
        "#             the timed calls ran, summed over the ranks, per call\n");
    std::printf(
        "# columns:    Avg..BusBW: optireduce (MPI_Allreduce), in us; Nat-*: native (PMPI_Allreduce);\n"
        "#             BusBW = size / P50 * 2(N-1)/N in GB/s (nccl-tests); Engine(%%): optireduce calls\n"
        "#             the engine ran on rank 0 ('-' without the library); P50-Ratio = optireduce / native\n");
}

void print_threads_notes(const Options &options) {
    if (options.iterations)
        std::printf("# iterations: %ld per size, mode and thread", *options.iterations);
    else
        std::printf("# iterations: per size, mode and thread 1000 up to 1 MiB, then 20 x 64 MiB / size (at least 20)");
    if (options.warmup)
        std::printf(", warm-up %ld\n", *options.warmup);
    else
        std::printf(", warm-up a tenth of that (at least 2)\n");
    std::printf(
        "# data:       MPI_FLOAT, MPI_SUM, %ld threads per rank (MPI_THREAD_MULTIPLE), each on its own\n"
        "#             MPI_Comm_dup of MPI_COMM_WORLD (one thread: the first), %s%s\n",
        options.threads,
        options.in_place ? "MPI_IN_PLACE (refilled before each call)" : "separate send and receive buffers",
        options.validate ? ", every result checked against PMPI_Allreduce" : "");
    std::printf("# calls:      %s, back to back, no compute\n",
                options.nonblocking ? "MPI_Iallreduce then at once MPI_Wait (PMPI_Iallreduce + PMPI_Wait for native)"
                                    : "MPI_Allreduce (PMPI_Allreduce for native)");
    std::printf(
        "# timing:     per size four runs back to back, the order reversed every other size: optireduce\n"
        "#             and native on %ld threads at once, then each on one thread; a run's threads finish\n"
        "#             their warm-up, meet, and each meets its peers on the other ranks in a barrier on\n"
        "#             its communicator before the timed calls\n",
        options.threads);
    std::printf(
        "# columns:    Avg Latency = optireduce on %ld threads, per call per thread (a thread's timed loop /\n"
        "#             iterations, mean over threads, slowest rank), in us; P50 = median over every thread's\n"
        "#             calls of the slowest rank's latency; AggBW = threads x size x iterations / (first\n"
        "#             thread's start to last thread's end, slowest rank), in GB/s; Engine(%%): optireduce\n"
        "#             calls the engine ran on rank 0; Nat-*: native on %ld threads; Lib1-*, Nat1-*: one\n"
        "#             thread; BW-Ratio = AggBW / Nat-AggBW; Lib-Scale = AggBW / Lib1-AggBW, Nat-Scale the\n"
        "#             same for native (%ld if the threads do not slow each other down, 1 if they take turns)\n",
        options.threads, options.threads, options.threads);
}

void print_counters(const LibraryProbe &library) {
    auto stats = library.stats();
    if (!stats) return;
    std::printf(
        "# optireduce counters on rank 0: engine_calls=%llu engine_bytes=%llu passthrough_calls=%llu "
        "fallback_calls=%llu comms_enabled=%llu comms_fallback=%llu\n",
        static_cast<unsigned long long>(stats->engine_calls), static_cast<unsigned long long>(stats->engine_bytes),
        static_cast<unsigned long long>(stats->passthrough_calls),
        static_cast<unsigned long long>(stats->fallback_calls), static_cast<unsigned long long>(stats->comms_enabled),
        static_cast<unsigned long long>(stats->comms_fallback));
}

int finish_sweep(bool root, const LibraryProbe &library, bool csv_ok, const std::string &csv_path, bool all_valid) {
    if (root) {
        print_counters(library);
        if (!csv_ok) std::fprintf(stderr, "optireduce-bench: writing %s failed\n", csv_path.c_str());
        if (!all_valid) std::fprintf(stderr, "optireduce-bench: validation FAILED (see the Validation column)\n");
    }
    return all_valid && csv_ok ? 0 : 1;
}

double SweepTable::bus_bandwidth(std::size_t bytes, double latency_us) const {
    if (latency_us <= 0) return 0;
    double algbw = static_cast<double>(bytes) / (latency_us * 1e3);  // GB/s, 1 GB = 1e9 bytes
    return algbw * 2.0 * (ranks_ - 1) / ranks_;
}

void SweepTable::print_header() const {
    std::printf("%-*s%*s%*s%*s%*s", size_width, "# Size", osu_width, "Avg Latency(us)", osu_width, "Min Latency(us)",
                osu_width, "Max Latency(us)", iterations_width, "Iterations");
    for (const char *name :
         {"P50(us)", "P99(us)", "BusBW(GB/s)", "Engine(%)", "Nat-Avg(us)", "Nat-P50(us)", "Nat-P99(us)", "Nat-Max(us)",
          "Nat-BusBW", "P50-Ratio", "CPU(us)", "Nat-CPU(us)", "CPU-Ratio"})
        std::printf("%*s", extra_width, name);
    if (validate_) std::printf("%*s%*s", extra_width, "Max-Error", extra_width, "Validation");
    std::printf("\n");
    std::fflush(stdout);
}

void SweepTable::print_row(const SizeStep &step, const ModeOutcome &optireduce, const ModeOutcome &native,
                           const std::optional<ValidationResult> &validation) const {
    const tools::Summary &o = optireduce.latency;
    const tools::Summary &n = native.latency;
    std::printf("%-*zu%*.2f%*.2f%*.2f%*ld", size_width, step.bytes(), osu_width, o.avg, osu_width, o.min, osu_width,
                o.max, iterations_width, step.iterations);
    std::printf("%*.2f%*.2f%*.3f", extra_width, o.p50, extra_width, o.p99, extra_width,
                bus_bandwidth(step.bytes(), o.p50));
    if (optireduce.engine_percent)
        std::printf("%*.1f", extra_width, *optireduce.engine_percent);
    else
        std::printf("%*s", extra_width, "-");
    std::printf("%*.2f%*.2f%*.2f%*.2f%*.3f%*.3f", extra_width, n.avg, extra_width, n.p50, extra_width, n.p99,
                extra_width, n.max, extra_width, bus_bandwidth(step.bytes(), n.p50), extra_width,
                n.p50 > 0 ? o.p50 / n.p50 : 0.0);
    std::printf("%*.1f%*.1f%*.3f", extra_width, optireduce.cpu_us, extra_width, native.cpu_us, extra_width,
                native.cpu_us > 0 ? optireduce.cpu_us / native.cpu_us : 0.0);
    if (validate_ && validation)
        std::printf("%*.2e%*s", extra_width, validation->max_error, extra_width, validation->pass() ? "PASS" : "FAIL");
    std::printf("\n");
    std::fflush(stdout);
}

}  // namespace optireduce::bench

namespace optireduce::bench {
namespace {

// GB/s (1 GB = 1e9 bytes) moved by `threads` threads of `iterations` calls of `bytes` in `wall_us`.
double aggregate_bandwidth(std::size_t threads, std::size_t bytes, long iterations, double wall_us) {
    if (wall_us <= 0) return 0;
    return static_cast<double>(threads) * static_cast<double>(bytes) * static_cast<double>(iterations) /
           (wall_us * 1e3);
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

void ThreadsTable::print_header() const {
    std::printf("%-*s%*s%*s%*s", size_width, "# Size", osu_width, "Avg Latency(us)", iterations_width, "Iterations",
                iterations_width, "Threads");
    for (const char *name :
         {"P50(us)", "AggBW(GB/s)", "Engine(%)", "Nat-Avg(us)", "Nat-P50(us)", "Nat-AggBW", "Lib1-Avg(us)",
          "Lib1-AggBW", "Nat1-Avg(us)", "Nat1-AggBW", "BW-Ratio", "Lib-Scale", "Nat-Scale"})
        std::printf("%*s", extra_width, name);
    if (validate_) std::printf("%*s%*s", extra_width, "Max-Error", extra_width, "Validation");
    std::printf("\n");
    std::fflush(stdout);
}

void ThreadsTable::print_row(const SizeStep &step, const ThreadedTimes &o, std::optional<double> engine_percent,
                             const ThreadedTimes &n, const ThreadedTimes &o1, const ThreadedTimes &n1,
                             const std::optional<ValidationResult> &validation) const {
    const std::size_t bytes = step.bytes();
    const double bw = aggregate_bandwidth(threads_, bytes, step.iterations, o.wall);
    const double nat_bw = aggregate_bandwidth(threads_, bytes, step.iterations, n.wall);
    const double bw1 = aggregate_bandwidth(1, bytes, step.iterations, o1.wall);
    const double nat_bw1 = aggregate_bandwidth(1, bytes, step.iterations, n1.wall);
    std::printf("%-*zu%*.2f%*ld%*zu", size_width, bytes, osu_width, o.mean, iterations_width, step.iterations,
                iterations_width, threads_);
    std::printf("%*.2f%*.3f", extra_width, o.p50, extra_width, bw);
    if (engine_percent)
        std::printf("%*.1f", extra_width, *engine_percent);
    else
        std::printf("%*s", extra_width, "-");
    std::printf("%*.2f%*.2f%*.3f%*.2f%*.3f%*.2f%*.3f%*.3f%*.3f%*.3f", extra_width, n.mean, extra_width, n.p50,
                extra_width, nat_bw, extra_width, o1.mean, extra_width, bw1, extra_width, n1.mean, extra_width, nat_bw1,
                extra_width, ratio(bw, nat_bw), extra_width, ratio(bw, bw1), extra_width, ratio(nat_bw, nat_bw1));
    if (validate_ && validation)
        std::printf("%*.2e%*s", extra_width, validation->max_error, extra_width, validation->pass() ? "PASS" : "FAIL");
    std::printf("\n");
    std::fflush(stdout);
}

}  // namespace optireduce::bench
