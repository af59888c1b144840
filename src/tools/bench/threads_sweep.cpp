#include "threads_sweep.hpp"

#include "csv_log.hpp"
#include "data.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "threads_step.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace optireduce::bench {

int run_threads_sweep(const Options& options, const LibraryProbe& library, MPI_Comm comm)
{
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);

    CsvLog csv;
    if (!open_csv_on_rank0(csv, options.csv_path, rank, comm))
        return 1;

    const auto threads = static_cast<std::size_t>(options.threads);
    // One communicator per thread, made here on one thread so that every rank dups in the same
    // order. The one-thread runs use the first.
    std::vector<MPI_Comm> comms(threads, MPI_COMM_NULL);
    for (MPI_Comm& dup : comms)
        MPI_Comm_dup(comm, &dup);

    const std::vector<SizeStep> plan = make_plan(options);
    const std::size_t max_count = static_cast<std::size_t>(plan.back().count);
    std::vector<float> input(max_count);
    fill_inputs(input, rank);
    std::vector<std::vector<float>> outputs(threads, std::vector<float>(max_count));

    const ThreadedMode lib_n{"optireduce", &optireduce_mode, options.nonblocking ? &optireduce_nonblocking : nullptr};
    const ThreadedMode nat_n{"native", &native_mode, options.nonblocking ? &native_nonblocking : nullptr};
    // The four runs of a size: library and native on N threads, then on one.
    struct Run {
        const ThreadedMode* mode;
        std::size_t threads;
    };
    const std::array<Run, 4> runs{Run{&lib_n, threads}, Run{&nat_n, threads}, Run{&lib_n, 1}, Run{&nat_n, 1}};

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
        const SizeStep& step = plan[index];
        std::span<const float> data = std::span<const float>(input).first(static_cast<std::size_t>(step.count));
        // One validator per thread (each keeps its own worst error), made collectively here.
        std::vector<Validator> validators;
        if (options.validate)
            for (std::size_t t = 0; t < threads; ++t)
                validators.emplace_back(data, comm);

        // Reverse the order every other size, so drift does not always favour the same run.
        std::array<std::size_t, 4> order{0, 1, 2, 3};
        if (index % 2 == 1)
            std::reverse(order.begin(), order.end());
        std::array<ThreadedTimes, 4> times;
        std::optional<double> engine;
        for (std::size_t which : order) {
            const Run& run = runs[which];
            if (rank == 0) {
                auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                char line[160];
                std::snprintf(line, sizeof line, "optireduce-bench: size %zu B (%zu/%zu), %s, %zu thread(s), %.0f s elapsed",
                              step.bytes(), index + 1, plan.size(), run.mode->name, run.threads, elapsed);
                progress.show(line);
            }
            auto before = library.stats();
            times[which] = run_threaded_step(*run.mode, step, data, options.in_place,
                                             std::span<const MPI_Comm>(comms).first(run.threads),
                                             std::span<std::vector<float>>(outputs).first(run.threads),
                                             std::span<Validator>(validators).first(validators.empty() ? 0 : run.threads),
                                             comm);
            auto after = library.stats();
            if (which == 0)
                engine = engine_percent(before, after,
                                        static_cast<double>(threads) * static_cast<double>(step.warmup + step.iterations));
            const std::string series = std::string(run.mode->name) + "-t" + std::to_string(run.threads);
            csv.write(step.bytes(), series.c_str(), times[which].slowest);
        }

        std::optional<ValidationResult> validation;
        if (options.validate) {
            validation = ValidationResult{};
            for (const Validator& validator : validators) {
                ValidationResult one = validator.finish(comm);
                validation->tolerance = one.tolerance;
                validation->max_error = std::max(validation->max_error, one.max_error);
            }
            all_valid = all_valid && validation->pass();
        }
        if (rank == 0) {
            progress.clear();
            table.print_row(step, times[0], engine, times[1], times[2], times[3], validation);
        }
    }

    for (MPI_Comm& dup : comms)
        MPI_Comm_free(&dup);
    return finish_sweep(rank == 0, library, csv.close(), options.csv_path, all_valid);
}

} // namespace optireduce::bench
