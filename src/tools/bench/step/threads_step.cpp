// SPDX-License-Identifier: BSD-3-Clause
#include "bench/step/threads_step.hpp"

#include "common/stats.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <thread>

namespace optireduce::bench {
namespace {

using clock = std::chrono::steady_clock;

double micros(clock::time_point from, clock::time_point to) {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// What one thread measured.
struct ThreadRecord {
    std::vector<double> latencies;  // us per timed call
    clock::time_point begin, end;   // of the timed loop
};

// Back on one thread: the slowest rank's figures, on rank 0 of `world`.
ThreadedTimes slowest_over_ranks(const std::vector<ThreadRecord> &records, std::size_t iterations, MPI_Comm world) {
    const std::size_t threads = records.size();
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    std::vector<double> local;
    local.reserve(threads * iterations);
    double mean_local = 0;
    auto first = records.front().begin, last = records.front().end;
    for (const ThreadRecord &record : records) {
        local.insert(local.end(), record.latencies.begin(), record.latencies.end());
        mean_local += micros(record.begin, record.end) / static_cast<double>(iterations);
        first = std::min(first, record.begin);
        last = std::max(last, record.end);
    }
    double scalars[2] = {mean_local / static_cast<double>(threads), micros(first, last)};
    double slowest_scalars[2] = {0, 0};
    PMPI_Reduce(scalars, slowest_scalars, 2, MPI_DOUBLE, MPI_MAX, 0, world);

    ThreadedTimes out;
    out.slowest.resize(rank == 0 ? local.size() : 0);
    PMPI_Reduce(local.data(), out.slowest.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, 0, world);
    out.p50 = tools::summarize(out.slowest).p50;
    out.mean = slowest_scalars[0];
    out.wall = slowest_scalars[1];
    return out;
}

}  // namespace

ThreadedTimes run_threaded_step(const ThreadedMode &mode, const SizeStep &step, std::span<const float> input,
                                bool in_place, std::span<const MPI_Comm> comms, std::span<std::vector<float>> outputs,
                                std::span<Validator> validators, MPI_Comm world) {
    const std::size_t threads = comms.size();
    const auto count = static_cast<std::size_t>(step.count);
    const auto iterations = static_cast<std::size_t>(step.iterations);
    std::vector<ThreadRecord> records(threads);
    std::barrier warmed_up(static_cast<std::ptrdiff_t>(threads));

    auto body = [&](std::size_t t) {
        const MPI_Comm comm = comms[t];
        std::span<float> output = std::span<float>(outputs[t]).first(count);
        std::span<const float> mine = input.first(count);
        const void *send = in_place ? MPI_IN_PLACE : mine.data();
        Validator *validator = validators.empty() ? nullptr : &validators[t];
        auto call = [&] {
            if (in_place)  // the last sum overwrote it; unrefilled, values grow N-fold a call
                std::copy(mine.begin(), mine.end(), output.begin());
            if (mode.nonblocking) {
                MPI_Request request = MPI_REQUEST_NULL;
                mode.nonblocking->iallreduce(send, output.data(), step.count, MPI_FLOAT, MPI_SUM, comm, &request);
                mode.nonblocking->wait(&request, MPI_STATUS_IGNORE);
            } else {
                mode.blocking->allreduce(send, output.data(), step.count, MPI_FLOAT, MPI_SUM, comm);
            }
        };
        for (long i = 0; i < step.warmup; ++i) {
            call();
            if (validator) validator->check(output);
        }
        // Every thread of this rank past its warm-up (which sets up the engine on a new
        // communicator), then this thread's peers on the other ranks.
        warmed_up.arrive_and_wait();
        PMPI_Barrier(comm);
        ThreadRecord &record = records[t];
        record.latencies.resize(iterations);
        record.begin = clock::now();
        for (std::size_t i = 0; i < iterations; ++i) {
            auto start = clock::now();
            call();
            record.latencies[i] = micros(start, clock::now());
            if (validator) validator->check(output);
        }
        record.end = clock::now();
    };

    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(body, t);
    for (std::thread &thread : pool) thread.join();

    return slowest_over_ranks(records, iterations, world);
}

}  // namespace optireduce::bench
