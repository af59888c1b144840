// SPDX-License-Identifier: BSD-3-Clause
// optireduce-bench: the allreduce latency of optireduce and of the MPI underneath, measured in
// the same job. Deliberately not linked against liboptireduce; see support/library_probe.hpp.
#include "bench/modes/completion_overhead.hpp"
#include "bench/modes/passthrough_overhead.hpp"
#include "bench/modes/sweep.hpp"
#include "bench/modes/threads_sweep.hpp"
#include "bench/support/library_probe.hpp"
#include "bench/support/options.hpp"
#include "common/version.hpp"

#include <mpi.h>

#include <cstdio>

int main(int argc, char **argv) {
    using namespace optireduce::bench;
    // Parsed before MPI starts (no MPI call is needed for it; errors are reported from rank 0
    // below), because --threads asks for another thread level.
    Options options;
    const std::string error = parse_options(argc, argv, options);
    // Answered without MPI, so it works where no launcher or MPI runtime is at hand.
    if (error.empty() && options.version) {
        optireduce::tools::print_version(kToolName);
        return 0;
    }
    int provided = MPI_THREAD_SINGLE;
    if (error.empty() && options.threads > 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    int status = 0;
    if (!error.empty()) {
        if (rank == 0) {
            std::fprintf(stderr, "%s: %s\n", kToolName, error.c_str());
            print_usage(stderr, argv[0]);
        }
        status = 2;
    } else if (options.help) {
        if (rank == 0) print_usage(stdout, argv[0]);
    } else if (options.threads > 0 && provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            std::fprintf(stderr, "%s: --threads needs MPI_THREAD_MULTIPLE; this MPI provides level %d\n", kToolName,
                         provided);
        status = 1;
    } else {
        const LibraryProbe library;
        if (options.passthrough_overhead)
            status = run_passthrough_overhead(options, library, MPI_COMM_WORLD);
        else if (options.completion_overhead)
            status = run_completion_overhead(options, library, MPI_COMM_WORLD);
        else if (options.threads > 0)
            status = run_threads_sweep(options, library, MPI_COMM_WORLD);
        else
            status = run_sweep(options, library, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return status;
}
