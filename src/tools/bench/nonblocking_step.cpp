#include "nonblocking_step.hpp"

#include "compute.hpp"

#include <algorithm>
#include <array>
#include <chrono>

namespace optireduce::bench {
namespace {

using clock = std::chrono::steady_clock;

double micros(clock::time_point from, clock::time_point to)
{
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// The parts of one call with compute, in microseconds.
struct CallTimes {
    double overall = 0, compute = 0, init = 0, test = 0, wait = 0;
};

// Runs the compute in `slices` pieces with a test after each, as OSU's dummy compute with -t does,
// so a library that progresses only inside MPI_Test gets the same chances as under OSU. After the
// request completes MPI_Test sees MPI_REQUEST_NULL, which is legal and what OSU does too.
void compute_and_test(const NonblockingMode& mode, MPI_Request& request, double ms, const OverlapCompute& compute,
                      CallTimes& times)
{
    const long slices = std::max(1L, compute.test_calls);
    for (long s = 0; s < slices; ++s) {
        auto start = clock::now();
        spend(ms / static_cast<double>(slices), compute.sleep);
        auto computed = clock::now();
        times.compute += micros(start, computed);
        if (compute.test_calls > 0) {
            int flag = 0;
            mode.test(&request, &flag, MPI_STATUS_IGNORE);
            times.test += micros(computed, clock::now());
        }
    }
}

std::vector<double> slowest_on_root(std::vector<double>& local, int rank, MPI_Comm comm)
{
    std::vector<double> slowest(rank == 0 ? local.size() : 0);
    PMPI_Reduce(local.data(), slowest.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
    return slowest;
}

} // namespace

double NonblockingTimes::overlap() const
{
    if (pure_comm <= 0)
        return 0;
    return std::max(0.0, 100.0 - (overall - compute) / pure_comm * 100.0);
}

NonblockingTimes run_nonblocking_step(const NonblockingMode& mode, const SizeStep& step, const StepBuffers& buffers,
                                      const OverlapCompute& compute, Validator* validator, MPI_Comm comm)
{
    const auto count = static_cast<std::size_t>(step.count);
    std::span<const float> input = buffers.input.first(count);
    std::span<float> output = buffers.output.first(count);
    const void* send = buffers.in_place ? MPI_IN_PLACE : input.data();
    const auto iterations = static_cast<std::size_t>(step.iterations);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);

    // One call: Iallreduce, the compute and tests (none in the first loop, as in OSU's), Wait. No
    // barrier between calls, as in timed_step.cpp: they run back to back as in a training loop.
    auto call = [&](bool overlapped, double compute_ms, CallTimes& times) {
        if (buffers.in_place) // the last sum overwrote it; unrefilled, values grow N-fold a call
            std::copy(input.begin(), input.end(), output.begin());
        MPI_Request request = MPI_REQUEST_NULL;
        auto start = clock::now();
        mode.iallreduce(send, output.data(), step.count, MPI_FLOAT, MPI_SUM, comm, &request);
        auto started = clock::now();
        if (overlapped)
            compute_and_test(mode, request, compute_ms, compute, times);
        auto waiting = clock::now();
        mode.wait(&request, MPI_STATUS_IGNORE);
        auto stop = clock::now();
        times.init = micros(start, started);
        times.wait = micros(waiting, stop);
        times.overall = micros(start, stop);
        if (validator)
            validator->check(output);
    };

    // Loop 1: the pure communication time. Start together so stragglers from the previous step
    // are not charged to this one.
    std::vector<double> pure_local(iterations);
    double pure_sum = 0;
    PMPI_Barrier(comm);
    for (long i = -step.warmup; i < step.iterations; ++i) {
        CallTimes times;
        call(false, 0, times);
        if (i >= 0) {
            pure_local[static_cast<std::size_t>(i)] = times.overall;
            pure_sum += times.overall;
        }
    }
    double pure_mean = 0;
    PMPI_Allreduce(&pure_sum, &pure_mean, 1, MPI_DOUBLE, MPI_SUM, comm);
    pure_mean /= static_cast<double>(ranks) * static_cast<double>(step.iterations);

    // Loop 2: the same calls with the compute between Iallreduce and Wait. Without --compute-ms
    // every rank computes the mean pure communication time (OSU gives each rank its own mean; one
    // value keeps ranks from arriving apart by accident).
    const bool osu_like = compute.ms <= 0;
    const double base_ms = osu_like ? pure_mean / 1e3 : compute.ms;
    std::vector<double> overall_local(iterations);
    std::array<double, 5> sums{}; // overall, compute, init, test, wait
    PMPI_Barrier(comm);
    for (long i = -step.warmup; i < step.iterations; ++i) {
        CallTimes times;
        call(true, compute_duration_ms(base_ms, !osu_like, compute.skew_ms, rank, i), times);
        if (i >= 0) {
            overall_local[static_cast<std::size_t>(i)] = times.overall;
            const std::array<double, 5> parts{times.overall, times.compute, times.init, times.test, times.wait};
            for (std::size_t k = 0; k < sums.size(); ++k)
                sums[k] += parts[k];
        }
    }

    NonblockingTimes out;
    std::array<double, 5> total{};
    PMPI_Reduce(sums.data(), total.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
    const double calls = static_cast<double>(ranks) * static_cast<double>(step.iterations);
    out.pure_comm = pure_mean;
    out.overall = total[0] / calls;
    out.compute = total[1] / calls;
    out.init = total[2] / calls;
    out.test = total[3] / calls;
    out.wait = total[4] / calls;
    out.pure_comm_slowest = slowest_on_root(pure_local, rank, comm);
    out.overall_slowest = slowest_on_root(overall_local, rank, comm);
    return out;
}

} // namespace optireduce::bench
