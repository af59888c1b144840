// SPDX-License-Identifier: BSD-3-Clause
// Everything optireduce-bench prints on stdout. Rank 0 calls these; the output follows OSU's
// conventions (comment lines start with '#', one whitespace-separated row per size, size in
// column 1 and average latency in column 2) so OSU parsers read it unchanged.
#pragma once

#include "bench/step/threads_step.hpp"
#include "bench/step/validator.hpp"
#include "bench/support/library_probe.hpp"
#include "bench/support/options.hpp"
#include "bench/support/plan.hpp"
#include "common/stats.hpp"

#include <optional>
#include <string>

namespace optireduce::bench {

struct ModeOutcome {
    tools::Summary latency;                // microseconds
    double cpu_us = 0;                     // CPU per call, summed over the ranks (StepTimes)
    std::optional<double> engine_percent;  // calls the engine ran; empty without the library's counters
};

// The "# optireduce-bench" block: what ran, where, on which library.
void print_preamble(const char *what, const LibraryProbe &library, int ranks);

void print_sweep_notes(const Options &options);
void print_threads_notes(const Options &options);

// The library's own counters on rank 0, so a reader can tell engine calls from pass-through.
void print_counters(const LibraryProbe &library);
// The end of every sweep: rank 0 prints the counters and what went wrong; the exit status.
int finish_sweep(bool root, const LibraryProbe &library, bool csv_ok, const std::string &csv_path, bool all_valid);

class SweepTable {
public:
    SweepTable(int ranks, bool validate) : ranks_(ranks), validate_(validate) {}

    void print_header() const;
    void print_row(const SizeStep &step, const ModeOutcome &optireduce, const ModeOutcome &native,
                   const std::optional<ValidationResult> &validation) const;

private:
    double bus_bandwidth(std::size_t bytes, double latency_us) const;

    int ranks_;
    bool validate_;
};

// --threads: per call per thread and aggregate bandwidth of the library and native on N threads,
// then of both on one thread.
class ThreadsTable {
public:
    ThreadsTable(std::size_t threads, bool validate) : threads_(threads), validate_(validate) {}

    void print_header() const;
    void print_row(const SizeStep &step, const ThreadedTimes &optireduce, std::optional<double> engine_percent,
                   const ThreadedTimes &native, const ThreadedTimes &optireduce_one, const ThreadedTimes &native_one,
                   const std::optional<ValidationResult> &validation) const;

private:
    std::size_t threads_;
    bool validate_;
};

}  // namespace optireduce::bench
