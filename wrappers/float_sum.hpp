// SPDX-License-Identifier: BSD-3-Clause
// The wrappers' one shared decision helper. Inline so the pass-through path is two or four
// handle comparisons, a counter and a tail call to PMPI.
#pragma once

#include "engine/engine.hpp"
#include "telemetry/stats.hpp"

#include <mpi.h>

#define OPTIREDUCE_EXPORT extern "C" __attribute__((visibility("default")))

namespace optireduce {

// MPI_FLOAT, or Fortran's MPI_REAL / MPI_REAL4 (4-byte reals on both MPIs as packaged), so
// Fortran gradients get the same policy. Ranks cannot mix these handles in one call: their type
// signatures differ, which MPI forbids.
inline bool is_float_sum(MPI_Datatype type, MPI_Op op) {
    return op == MPI_SUM && (type == MPI_FLOAT || type == MPI_REAL || type == MPI_REAL4);
}

// MPI_Allreduce and MPI_Allreduce_c share this body; Pmpi is the matching PMPI entry point.
template <class Count, class Pmpi>
inline int allreduce_entry(const void *sendbuf, void *recvbuf, Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                           Pmpi pmpi) {
    if (is_float_sum(type, op)) [[unlikely]] {
        if (CommState *st = engine_route(comm, static_cast<std::int64_t>(count)))
            return engine_allreduce(*st, sendbuf, recvbuf, static_cast<std::size_t>(count));
    }
    count_passthrough();
    return pmpi(sendbuf, recvbuf, count, type, op, comm);
}

// MPI_Iallreduce and MPI_Iallreduce_c: the same decision, then a request the engine owns.
template <class Count, class Pmpi>
inline int iallreduce_entry(const void *sendbuf, void *recvbuf, Count count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, MPI_Request *request, Pmpi pmpi) {
    if (is_float_sum(type, op) && request) [[unlikely]] {
        if (CommState *st = engine_route(comm, static_cast<std::int64_t>(count), true))
            return engine_iallreduce(*st, sendbuf, recvbuf, static_cast<std::size_t>(count), request);
    }
    count_passthrough();
    return pmpi(sendbuf, recvbuf, count, type, op, comm, request);
}

}  // namespace optireduce
