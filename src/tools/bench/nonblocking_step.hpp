// --nonblocking: one message size in one mode, measured as OSU's osu_iallreduce does: first
// MPI_Iallreduce + MPI_Wait alone (the pure communication time), then with compute between them.
#pragma once

#include "mode.hpp"
#include "plan.hpp"
#include "timed_step.hpp"
#include "validator.hpp"

#include <vector>

namespace optireduce::bench {

// What the compute between MPI_Iallreduce and MPI_Wait is.
struct OverlapCompute {
    // > 0: --compute-ms, +-25% per rank and call. 0: as OSU, this size's pure communication time
    // (the mean over ranks and calls of the first loop), the same on every rank and call.
    double ms = 0;
    double skew_ms = 0; // plus up to this much, uniform per rank and call
    bool sleep = false;
    long test_calls = 0; // MPI_Test calls, one after each of this many slices of the compute
};

// Means over ranks and timed calls, in microseconds, as OSU reports them (so the overlap below is
// OSU's), plus the slowest rank's latency per call for the CSV.
struct NonblockingTimes {
    double pure_comm = 0; // Iallreduce + Wait, nothing between
    double overall = 0;   // Iallreduce + compute + Tests + Wait
    double compute = 0;   // the compute alone, Tests excluded
    double init = 0;      // inside MPI_Iallreduce
    double test = 0;      // inside the MPI_Test calls, all of a call's together
    double wait = 0;      // inside MPI_Wait
    // OSU's: the share of the pure communication time hidden behind the compute, in percent.
    double overlap() const;

    std::vector<double> pure_comm_slowest; // per timed call, on rank 0 only
    std::vector<double> overall_slowest;
};

// Collective. The times are meaningful on rank 0 only. `validator`, when given, checks every
// result of both loops, warm-up included.
NonblockingTimes run_nonblocking_step(const NonblockingMode& mode, const SizeStep& step, const StepBuffers& buffers,
                                      const OverlapCompute& compute, Validator* validator, MPI_Comm comm);

} // namespace optireduce::bench
