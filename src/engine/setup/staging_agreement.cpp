// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/staging_agreement.hpp"

#include "engine/setup/context.hpp"
#include "engine/setup/faults.hpp"
#include "telemetry/stats.hpp"

namespace optireduce {

Staging *agree_on_staging(CommState &comm, Staging *staging, bool grew, bool agree, std::string *error) {
    if (!grew) return staging;
    if (staging && injected_alloc_failure()) {
        comm.release_staging(staging);
        staging = nullptr;
        *error = "staging allocation failed (injected by OPTIREDUCE_FAULT_ALLOC_RANK)";
    }
    if (!staging) bump(process_stats().staging_failures);
    if (!agree) return staging;
    int failed = staging ? 0 : 1;
    if (PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm.comm) != MPI_SUCCESS) failed = 1;
    if (failed && staging) {
        comm.release_staging(staging);
        staging = nullptr;
        *error = "another rank of the communicator could not allocate its staging memory (its own log says why)";
    }
    return staging;
}

}  // namespace optireduce
