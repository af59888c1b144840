// SPDX-License-Identifier: BSD-3-Clause
// Command line of optireduce-bench.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace optireduce::bench {

// This binary's name: optireduce-bench is built for Open MPI's ABI, optireduce-bench-mpich for
// MPICH's, from the same sources (CMakeLists.txt gives each its OPTIREDUCE_ABI_* definition).
#if defined(OPTIREDUCE_ABI_MPICH)
inline constexpr const char *kToolName = "optireduce-bench-mpich";
#elif defined(OPTIREDUCE_ABI_OMPI)
inline constexpr const char *kToolName = "optireduce-bench";
#else
#error "optireduce-bench is built for OPTIREDUCE_ABI_OMPI or OPTIREDUCE_ABI_MPICH"
#endif

struct Options {
    std::size_t min_bytes = 4;
    std::size_t max_bytes = std::size_t{64} << 20;
    std::optional<long> iterations;  // unset: chosen per size (plan.cpp), or the pass-through default
    std::optional<long> warmup;
    bool validate = false;
    bool in_place = false;
    double compute_ms = 0;       // work before each call, as a training step's (with skew between ranks)
    double skew_ms = 0;          // extra work, uniform in [0, skew_ms) per rank and call
    bool compute_sleep = false;  // the work sleeps instead of spinning
    bool progress = false;       // force the progress line: launchers hide the terminal from ranks
    bool passthrough_overhead = false;
    bool completion_overhead = false;
    bool nonblocking = false;  // --threads: MPI_Iallreduce and at once MPI_Wait instead of MPI_Allreduce
    long threads = 0;          // --threads: this many threads per rank, one communicator each (0: off)
    bool help = false;
    bool version = false;  // answered before MPI starts
    std::string csv_path;
};

// Fills `out` from argv. Returns an empty string on success, else a one-line reason.
std::string parse_options(int argc, char **argv, Options &out);

void print_usage(std::FILE *to, const char *argv0);

}  // namespace optireduce::bench
