// SPDX-License-Identifier: BSD-3-Clause
#include "bench/step/timed_step.hpp"

#include "bench/step/compute.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace optireduce::bench {
namespace {

double process_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

StepTimes run_timed_step(const Mode &mode, const SizeStep &step, const StepBuffers &buffers, Validator *validator,
                         MPI_Comm comm) {
    using clock = std::chrono::steady_clock;
    const auto count = static_cast<std::size_t>(step.count);
    std::span<const float> input = buffers.input.first(count);
    std::span<float> output = buffers.output.first(count);
    const void *send = buffers.in_place ? MPI_IN_PLACE : input.data();
    std::vector<double> local(static_cast<std::size_t>(step.iterations));

    // Start together so stragglers from the previous step are not charged to this one. Inside
    // the step there is no barrier: calls run back to back as in a training loop, and the
    // slowest-rank reduction below already accounts for ranks arriving at different times.
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    PMPI_Barrier(comm);
    double cpu_us = 0;  // over the timed calls only: the compute spin and the checks are not theirs
    for (long i = -step.warmup; i < step.iterations; ++i) {
        spend(compute_duration_ms(buffers.compute_ms, buffers.skew_ms, rank, i), buffers.compute_sleep);
        if (buffers.in_place)  // the last sum overwrote it; unrefilled, values grow N-fold a call
            std::copy(input.begin(), input.end(), output.begin());
        const double cpu_start = process_cpu_us();
        auto start = clock::now();
        mode.allreduce(send, output.data(), step.count, MPI_FLOAT, MPI_SUM, comm);
        auto stop = clock::now();
        if (i >= 0) {
            local[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::micro>(stop - start).count();
            cpu_us += process_cpu_us() - cpu_start;
        }
        if (validator) validator->check(output);
    }

    StepTimes out;
    out.latency_us.resize(rank == 0 ? local.size() : 0);
    PMPI_Reduce(local.data(), out.latency_us.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
    double cpu_sum = 0;
    PMPI_Reduce(&cpu_us, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0 && step.iterations > 0) out.cpu_us_per_call = cpu_sum / static_cast<double>(step.iterations);
    return out;
}

}  // namespace optireduce::bench
