// SPDX-License-Identifier: BSD-3-Clause
// C entry points that give a communicator MPI_Info hints (engine/setup/comm_hints.hpp): MPI does its
// part first, and only when it succeeded does the engine read our keys from the info object.
// Both calls are collective, so the engine's agreement across the members may run inside them.
#include "engine/setup/comm_hints.hpp"
#include "float_sum.hpp"

using namespace optireduce;

OPTIREDUCE_EXPORT int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    const int rc = PMPI_Comm_set_info(comm, info);
    if (rc == MPI_SUCCESS) set_comm_hints(comm, info, HintUpdate::merge);
    return rc;
}

// The new communicator inherits the old one's hints through the attribute copy (as
// MPI_Comm_dup does); the info object then replaces them.
OPTIREDUCE_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    const int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    if (rc == MPI_SUCCESS) set_comm_hints(*newcomm, info, HintUpdate::replace);
    return rc;
}
