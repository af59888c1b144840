#include "timed_step.hpp"

#include "compute.hpp"

#include <algorithm>
#include <chrono>

namespace optireduce::bench {

std::vector<double> run_timed_step(const Mode &mode, const SizeStep &step, const StepBuffers &buffers,
                                   Validator *validator, MPI_Comm comm) {
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
    for (long i = -step.warmup; i < step.iterations; ++i) {
        spend(compute_duration_ms(buffers.compute_ms, buffers.skew_ms, rank, i), buffers.compute_sleep);
        if (buffers.in_place)  // the last sum overwrote it; unrefilled, values grow N-fold a call
            std::copy(input.begin(), input.end(), output.begin());
        auto start = clock::now();
        mode.allreduce(send, output.data(), step.count, MPI_FLOAT, MPI_SUM, comm);
        auto stop = clock::now();
        if (i >= 0)
            local[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::micro>(stop - start).count();
        if (validator) validator->check(output);
    }

    std::vector<double> slowest(rank == 0 ? local.size() : 0);
    PMPI_Reduce(local.data(), slowest.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
    return slowest;
}

}  // namespace optireduce::bench
