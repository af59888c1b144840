// SPDX-License-Identifier: BSD-3-Clause
// C entry points of the request completion family. Engine requests (from eligible
// MPI_Iallreduce calls) are generalized requests that only we can complete, so each of these
// first completes those it is given (engine/requests/async_request.hpp) and then hands the call, unchanged,
// to PMPI. While no engine request is outstanding, each is one relaxed load and a tail call.
#include "engine/requests/async_request.hpp"
#include "float_sum.hpp"

using namespace optireduce;

OPTIREDUCE_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    if (live() && request) [[unlikely]]
        finish_requests(request, 1);
    return PMPI_Wait(request, status);
}

OPTIREDUCE_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (live() && request) [[unlikely]]
        complete_finished(request, 1);
    return PMPI_Test(request, flag, status);
}

OPTIREDUCE_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (live() && requests && count > 0) [[unlikely]]
        finish_requests(requests, count);
    return PMPI_Waitall(count, requests, statuses);
}

OPTIREDUCE_EXPORT int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (live() && requests && count > 0) [[unlikely]]
        complete_finished(requests, count);
    return PMPI_Testall(count, requests, flag, statuses);
}

OPTIREDUCE_EXPORT int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (live() && requests && count > 0) [[unlikely]]
        complete_finished(requests, count);
    return PMPI_Testany(count, requests, index, flag, status);
}

OPTIREDUCE_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                                   MPI_Status statuses[]) {
    if (live() && requests && incount > 0) [[unlikely]]
        complete_finished(requests, incount);
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

// Waitany and Waitsome return as soon as any request completes: a loop over their test forms
// while an engine request is among them (PMPI_Waitany could block on ordinary requests while an
// engine operation finished, which only we can report).
OPTIREDUCE_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (live() && requests && count > 0 && index) [[unlikely]]
        return wait_through_test(
            [&] { return std::span<const MPI_Request>(requests, static_cast<std::size_t>(count)); },
            [&](bool &done) {
                int flag = 0;
                const int rc = PMPI_Testany(count, requests, index, &flag, status);
                done = flag != 0;
                return rc;
            });
    return PMPI_Waitany(count, requests, index, status);
}

OPTIREDUCE_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                                   MPI_Status statuses[]) {
    if (live() && requests && incount > 0 && outcount) [[unlikely]]
        return wait_through_test(
            [&] { return std::span<const MPI_Request>(requests, static_cast<std::size_t>(incount)); },
            [&](bool &done) {
                const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
                done = *outcount != 0;  // some completed, or MPI_UNDEFINED: none active
                return rc;
            });
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
}

OPTIREDUCE_EXPORT int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    if (live()) [[unlikely]]
        complete_finished(&request, 1);
    return PMPI_Request_get_status(request, flag, status);
}

OPTIREDUCE_EXPORT int MPI_Request_free(MPI_Request *request) {
    if (live() && request) [[unlikely]]
        prepare_free(*request);
    return PMPI_Request_free(request);
}
