// C entry points for the allreduce family.
#include "float_sum.hpp"

using namespace optireduce;

OPTIREDUCE_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm) {
    return allreduce_entry(sendbuf, recvbuf, count, type, op, comm, &PMPI_Allreduce);
}

// Nonblocking allreduce goes to the underlying MPI in this release (engine support needs request
// completion hooks); it is still counted so the statistics account for every call.
OPTIREDUCE_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                     MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    count_passthrough();
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
}
