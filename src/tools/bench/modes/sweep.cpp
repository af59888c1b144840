// SPDX-License-Identifier: BSD-3-Clause
#include "bench/modes/sweep.hpp"

#include "bench/modes/report.hpp"
#include "bench/step/data.hpp"
#include "bench/step/timed_step.hpp"
#include "bench/support/csv_log.hpp"
#include "bench/support/progress.hpp"

#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace optireduce::bench {

int run_sweep(const Options &options, const LibraryProbe &library, MPI_Comm comm) {
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);

    CsvLog csv;
    if (!open_csv_on_rank0(csv, options.csv_path, rank, comm)) return 1;

    const std::vector<SizeStep> plan = make_plan(options);
    const std::size_t max_count = static_cast<std::size_t>(plan.back().count);
    std::vector<float> input(max_count), output(max_count);
    fill_inputs(input, rank);
    const StepBuffers buffers{
        input, output, options.in_place, options.compute_ms, options.skew_ms, options.compute_sleep};

    const SweepTable table(ranks, options.validate);
    if (rank == 0) {
        print_preamble("MPI_Allreduce (optireduce) vs PMPI_Allreduce (native)", library, ranks);
        print_sweep_notes(options);
        table.print_header();
    }

    const Progress progress(rank == 0, options.progress);
    const auto started = std::chrono::steady_clock::now();
    bool all_valid = true;
    for (std::size_t index = 0; index < plan.size(); ++index) {
        const SizeStep &step = plan[index];
        std::optional<Validator> validator;
        if (options.validate)
            validator.emplace(std::span<const float>(input).first(static_cast<std::size_t>(step.count)), comm);

        // Alternate which mode goes first, so drift (thermal, page cache, other jobs) does not
        // always favour the same one.
        const Mode *order[2] = {&optireduce_mode, &native_mode};
        if (index % 2 == 1) std::swap(order[0], order[1]);
        ModeOutcome outcome[2];
        for (const Mode *mode : order) {
            const bool is_optireduce = mode == &optireduce_mode;
            if (rank == 0) {
                auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                char line[128];
                std::snprintf(line, sizeof line, "optireduce-bench: size %zu B (%zu/%zu), %s, %.0f s elapsed",
                              step.bytes(), index + 1, plan.size(), mode->name, elapsed);
                progress.show(line);
            }
            auto before = library.stats();
            const StepTimes times = run_timed_step(*mode, step, buffers, validator ? &*validator : nullptr, comm);
            auto after = library.stats();
            ModeOutcome &out = outcome[is_optireduce ? 0 : 1];
            out.latency = tools::summarize(times.latency_us);
            out.cpu_us = times.cpu_us_per_call;
            out.engine_percent = engine_percent(before, after, static_cast<double>(step.warmup + step.iterations));
            csv.write(step.bytes(), mode->name, times.latency_us);
        }

        std::optional<ValidationResult> validation;
        if (validator) {
            validation = validator->finish(comm);
            all_valid = all_valid && validation->pass();
        }
        if (rank == 0) {
            progress.clear();
            table.print_row(step, outcome[0], outcome[1], validation);
        }
    }

    return finish_sweep(rank == 0, library, csv.close(), options.csv_path, all_valid);
}

}  // namespace optireduce::bench
