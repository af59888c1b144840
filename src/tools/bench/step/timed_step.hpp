// SPDX-License-Identifier: BSD-3-Clause
// One message size in one mode: warm-up calls, then calls timed one by one.
#pragma once

#include "bench/step/mode.hpp"
#include "bench/step/validator.hpp"
#include "bench/support/plan.hpp"

#include <span>
#include <vector>

namespace optireduce::bench {

struct StepBuffers {
    std::span<const float> input;  // this rank's contribution, step.count floats
    std::span<float> output;
    bool in_place = false;
    double compute_ms = 0;       // spun before each call, +-25% per rank and call (--compute-ms)
    double skew_ms = 0;          // plus up to this much more, uniform per rank and call (--skew-ms)
    bool compute_sleep = false;  // sleep instead of spinning (--compute-sleep)
};

struct StepTimes {
    std::vector<double> latency_us;  // each timed call on the slowest rank (what the application waits for)
    // CPU time (every thread, user and system) spent while the timed calls ran, summed over the
    // ranks, per call: what a call costs in cores, progress threads included.
    double cpu_us_per_call = 0;
};

// Collective. Returns the times on rank 0; other ranks get an empty vector and 0. `validator`,
// when given, checks every result, warm-up included.
StepTimes run_timed_step(const Mode &mode, const SizeStep &step, const StepBuffers &buffers, Validator *validator,
                         MPI_Comm comm);

}  // namespace optireduce::bench
