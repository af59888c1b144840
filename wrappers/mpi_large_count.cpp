// SPDX-License-Identifier: BSD-3-Clause
// MPI-4 large-count entry points (MPICH >= 4.0 exports them; mpi4py >= 4 calls them whenever
// they exist). Same policy as the int-count versions: the count type never decides eligibility.
#include "float_sum.hpp"

#if MPI_VERSION >= 4
using namespace optireduce;

OPTIREDUCE_EXPORT int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                                      MPI_Comm comm) {
    return allreduce_entry(sendbuf, recvbuf, count, type, op, comm, &PMPI_Allreduce_c);
}

OPTIREDUCE_EXPORT int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                                       MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    return iallreduce_entry(sendbuf, recvbuf, count, type, op, comm, request, &PMPI_Iallreduce_c);
}
#endif
