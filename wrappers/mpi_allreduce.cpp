// SPDX-License-Identifier: BSD-3-Clause
// C entry points for the allreduce family.
#include "float_sum.hpp"

using namespace optireduce;

OPTIREDUCE_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm) {
    return allreduce_entry(sendbuf, recvbuf, count, type, op, comm, &PMPI_Allreduce);
}

// Eligible nonblocking calls return a request the engine completes (engine/requests/async_request.hpp);
// wrappers/mpi_requests.cpp makes every completion call aware of it.
OPTIREDUCE_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                     MPI_Comm comm, MPI_Request *request) {
    return iallreduce_entry(sendbuf, recvbuf, count, type, op, comm, request, &PMPI_Iallreduce);
}
