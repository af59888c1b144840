#include "timed_step.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace optireduce::bench {
namespace {

// Work standing in for a training step's compute: `ms` give or take a quarter, plus a uniform
// extra of up to `skew_ms` (a rank whose batch or core is slower), drawn from (rank, iteration)
// so each run repeats and ranks reach each call at different times, as they do after forward
// and backward passes of uneven length. Spun (the rank's core is busy, as with CPU training) or
// slept (it is free, as while a GPU computes).
double uniform(int rank, long iteration, std::uint64_t salt)
{
    std::uint64_t h = (static_cast<std::uint64_t>(rank) << 32) ^ static_cast<std::uint64_t>(iteration + (1L << 30)) ^ salt;
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53);
}

void compute(const StepBuffers& b, int rank, long iteration)
{
    const double ms = b.compute_ms * (0.75 + 0.5 * uniform(rank, iteration, 0)) +
                      b.skew_ms * uniform(rank, iteration, 0x5eed5eed5eedULL);
    if (ms <= 0)
        return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    if (b.compute_sleep) {
        std::this_thread::sleep_until(until);
        return;
    }
    while (std::chrono::steady_clock::now() < until) {
    }
}

} // namespace

std::vector<double> run_timed_step(const Mode& mode, const SizeStep& step, const StepBuffers& buffers,
                                   Validator* validator, MPI_Comm comm)
{
    using clock = std::chrono::steady_clock;
    const auto count = static_cast<std::size_t>(step.count);
    std::span<const float> input = buffers.input.first(count);
    std::span<float> output = buffers.output.first(count);
    const void* send = buffers.in_place ? MPI_IN_PLACE : input.data();
    std::vector<double> local(static_cast<std::size_t>(step.iterations));

    // Start together so stragglers from the previous step are not charged to this one. Inside
    // the step there is no barrier: calls run back to back as in a training loop, and the
    // slowest-rank reduction below already accounts for ranks arriving at different times.
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    PMPI_Barrier(comm);
    for (long i = -step.warmup; i < step.iterations; ++i) {
        compute(buffers, rank, i);
        if (buffers.in_place) // the last sum overwrote it; unrefilled, values grow N-fold a call
            std::copy(input.begin(), input.end(), output.begin());
        auto start = clock::now();
        mode.allreduce(send, output.data(), step.count, MPI_FLOAT, MPI_SUM, comm);
        auto stop = clock::now();
        if (i >= 0)
            local[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::micro>(stop - start).count();
        if (validator)
            validator->check(output);
    }

    std::vector<double> slowest(rank == 0 ? local.size() : 0);
    PMPI_Reduce(local.data(), slowest.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
    return slowest;
}

} // namespace optireduce::bench
