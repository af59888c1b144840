// SPDX-License-Identifier: BSD-3-Clause
#include "bench/modes/threads_sweep.hpp"

#include "bench/modes/report.hpp"
#include "bench/step/data.hpp"
#include "bench/step/threads_step.hpp"
#include "bench/support/csv_log.hpp"
#include "bench/support/progress.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace optireduce::bench {
namespace {

// The four runs of a size: library and native on N threads, then on one.
struct Run {
    const ThreadedMode *mode;
    std::size_t threads;
};

// What every size's runs share: the threads' communicators and buffers, the modes, the library.
struct Sweep {
    const Options &options;
    const LibraryProbe &library;
    MPI_Comm comm;
    int rank;
    std::size_t threads;
    std::vector<MPI_Comm> comms;  // one per thread, each a dup of comm; one-thread runs use the first
    std::vector<float> input;
    std::vector<std::vector<float>> outputs;
    std::array<Run, 4> runs;
};

void show_progress(const Progress &progress, const Sweep &sweep, const SizeStep &step, std::size_t index,
                   std::size_t sizes, const Run &run, std::chrono::steady_clock::time_point started) {
    if (sweep.rank != 0) return;
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[160];
    std::snprintf(line, sizeof line, "optireduce-bench: size %zu B (%zu/%zu), %s, %zu thread(s), %.0f s elapsed",
                  step.bytes(), index + 1, sizes, run.mode->name, run.threads, elapsed);
    progress.show(line);
}

// The worst error over the threads' validators.
ValidationResult combine(const std::vector<Validator> &validators, MPI_Comm comm) {
    ValidationResult all{};
    for (const Validator &validator : validators) {
        ValidationResult one = validator.finish(comm);
        all.tolerance = one.tolerance;
        all.max_error = std::max(all.max_error, one.max_error);
    }
    return all;
}

struct SizeOutcome {
    std::array<ThreadedTimes, 4> times;
    std::optional<double> engine;
};

// One size: the four runs, in reverse order every other size so drift does not always favour
// the same run.
SizeOutcome run_size(Sweep &sweep, const SizeStep &step, std::size_t index, std::span<Validator> validators,
                     CsvLog &csv, const Progress &progress, std::chrono::steady_clock::time_point started,
                     std::size_t sizes) {
    std::span<const float> data = std::span<const float>(sweep.input).first(static_cast<std::size_t>(step.count));
    std::array<std::size_t, 4> order{0, 1, 2, 3};
    if (index % 2 == 1) std::reverse(order.begin(), order.end());
    SizeOutcome out;
    for (std::size_t which : order) {
        const Run &run = sweep.runs[which];
        show_progress(progress, sweep, step, index, sizes, run, started);
        auto before = sweep.library.stats();
        out.times[which] = run_threaded_step(*run.mode, step, data, sweep.options.in_place,
                                             std::span<const MPI_Comm>(sweep.comms).first(run.threads),
                                             std::span<std::vector<float>>(sweep.outputs).first(run.threads),
                                             validators.first(validators.empty() ? 0 : run.threads), sweep.comm);
        auto after = sweep.library.stats();
        if (which == 0)
            out.engine = engine_percent(
                before, after, static_cast<double>(sweep.threads) * static_cast<double>(step.warmup + step.iterations));
        const std::string series = std::string(run.mode->name) + "-t" + std::to_string(run.threads);
        csv.write(step.bytes(), series.c_str(), out.times[which].slowest);
    }
    return out;
}

}  // namespace

int run_threads_sweep(const Options &options, const LibraryProbe &library, MPI_Comm comm) {
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);

    CsvLog csv;
    if (!open_csv_on_rank0(csv, options.csv_path, rank, comm)) return 1;

    const auto threads = static_cast<std::size_t>(options.threads);
    const std::vector<SizeStep> plan = make_plan(options);
    const std::size_t max_count = static_cast<std::size_t>(plan.back().count);
    const ThreadedMode lib_n{"optireduce", &optireduce_mode, options.nonblocking ? &optireduce_nonblocking : nullptr};
    const ThreadedMode nat_n{"native", &native_mode, options.nonblocking ? &native_nonblocking : nullptr};
    Sweep sweep{options,
                library,
                comm,
                rank,
                threads,
                std::vector<MPI_Comm>(threads, MPI_COMM_NULL),
                std::vector<float>(max_count),
                std::vector<std::vector<float>>(threads, std::vector<float>(max_count)),
                {Run{&lib_n, threads}, Run{&nat_n, threads}, Run{&lib_n, 1}, Run{&nat_n, 1}}};
    // Made here on one thread, so that every rank dups in the same order.
    for (MPI_Comm &dup : sweep.comms) MPI_Comm_dup(comm, &dup);
    fill_inputs(sweep.input, rank);

    const ThreadsTable table(threads, options.validate);
    if (rank == 0) {
        print_preamble(options.nonblocking
                           ? "MPI_Iallreduce + MPI_Wait on N threads, one communicator each (optireduce vs native)"
                           : "MPI_Allreduce on N threads, one communicator each (optireduce vs native)",
                       library, ranks);
        print_threads_notes(options);
        table.print_header();
    }

    const Progress progress(rank == 0, options.progress);
    const auto started = std::chrono::steady_clock::now();
    bool all_valid = true;
    for (std::size_t index = 0; index < plan.size(); ++index) {
        const SizeStep &step = plan[index];
        // One validator per thread (each keeps its own worst error), made collectively here.
        std::vector<Validator> validators;
        if (options.validate)
            for (std::size_t t = 0; t < threads; ++t)
                validators.emplace_back(std::span<const float>(sweep.input).first(static_cast<std::size_t>(step.count)),
                                        comm);
        const SizeOutcome out = run_size(sweep, step, index, validators, csv, progress, started, plan.size());
        std::optional<ValidationResult> validation;
        if (options.validate) {
            validation = combine(validators, comm);
            all_valid = all_valid && validation->pass();
        }
        if (rank == 0) {
            progress.clear();
            table.print_row(step, out.times[0], out.engine, out.times[1], out.times[2], out.times[3], validation);
        }
    }

    for (MPI_Comm &dup : sweep.comms) MPI_Comm_free(&dup);
    return finish_sweep(rank == 0, library, csv.close(), options.csv_path, all_valid);
}

}  // namespace optireduce::bench
