// SPDX-License-Identifier: BSD-3-Clause
// --threads: one message size in one mode on T threads of every rank at once, each thread on its
// own communicator, calls back to back.
#pragma once

#include "bench/step/mode.hpp"
#include "bench/step/validator.hpp"
#include "bench/support/plan.hpp"

#include <mpi.h>

#include <span>
#include <vector>

namespace optireduce::bench {

// How every thread calls allreduce: MPI_Allreduce through `blocking`, or, when `nonblocking` is
// set, Iallreduce and at once Wait through it (the request's whole life on one side, as in
// mode.hpp).
struct ThreadedMode {
    const char *name;
    const Mode *blocking;
    const NonblockingMode *nonblocking;  // null: blocking calls
};

// Times of one step, meaningful on rank 0.
struct ThreadedTimes {
    // Per call per thread, in us: the median over all threads' timed calls of the slowest rank's
    // latency of that call, and the mean (a thread's timed loop / iterations, averaged over the
    // threads, the slowest rank's).
    double p50 = 0;
    double mean = 0;
    // The timed loops together: from the first thread's start to the last one's end, in us, on
    // the slowest rank.
    double wall = 0;
    std::vector<double> slowest;  // per thread, then per call: the slowest rank's latency (CSV)
};

// Collective over `world`; every rank passes as many communicators (one per thread, each a dup
// of `world`), output buffers of at least step.count floats and, when validating, validators as
// threads. A thread's warm-up runs on its own; then the threads of a rank wait for each other,
// each meets its peers on other ranks in a barrier on its communicator, and the timed calls run.
ThreadedTimes run_threaded_step(const ThreadedMode &mode, const SizeStep &step, std::span<const float> input,
                                bool in_place, std::span<const MPI_Comm> comms, std::span<std::vector<float>> outputs,
                                std::span<Validator> validators, MPI_Comm world);

}  // namespace optireduce::bench
