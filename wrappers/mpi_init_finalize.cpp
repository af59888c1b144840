// SPDX-License-Identifier: BSD-3-Clause
// C entry points that bracket the library's life: configuration is parsed once MPI is up, and
// everything is released while MPI still works.
#include "abi_guard.hpp"
#include "engine/setup/context.hpp"
#include "float_sum.hpp"

using namespace optireduce;

OPTIREDUCE_EXPORT int MPI_Init(int *argc, char ***argv) {
    check_mpi_abi();  // again: mpi4py and other bindings open their MPI after we were loaded
    const int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) on_mpi_initialized();
    return rc;
}

// The requested thread level is passed on unchanged: raising it can slow the application's
// own MPI traffic (some transports disable fast paths under MPI_THREAD_MULTIPLE).
OPTIREDUCE_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    check_mpi_abi();
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) on_mpi_initialized();
    return rc;
}

OPTIREDUCE_EXPORT int MPI_Finalize(void) {
    on_mpi_finalize();
    return PMPI_Finalize();
}
