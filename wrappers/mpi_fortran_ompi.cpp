// SPDX-License-Identifier: BSD-3-Clause
// Fortran entry points for Open MPI. Open MPI's Fortran bindings call PMPI_* directly, so a C
// MPI_Allreduce wrapper never sees Fortran callers (docs/architecture.md, "Layers"). We
// define every name Open MPI exports for these routines (mpif.h / use mpi manglings, the
// internal aliases, and use mpi_f08's mpi_*_f08_), give eligible calls to the engine, and hand
// everything else to Open MPI's own Fortran routine so its argument conversions stay its own.
// (MPICH's Fortran bindings call the C MPI_* symbols, so they need nothing here.)
#include "engine/setup/comm_hints.hpp"
#include "engine/setup/context.hpp"
#include "float_sum.hpp"
#include "fortran_ompi.hpp"

using namespace optireduce;

namespace {

using AllreduceFn = void (*)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using InitFn = void (*)(MPI_Fint *);
using InitThreadFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
using FinalizeFn = void (*)(MPI_Fint *);

void fortran_allreduce(AllreduceFn real, void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                       MPI_Fint *comm, MPI_Fint *ierr) {
    if (is_float_sum(PMPI_Type_f2c(*type), PMPI_Op_f2c(*op))) [[unlikely]] {
        static const Sentinel in_place("mpi_fortran_in_place"), bottom("mpi_fortran_bottom");
        // MPI_BOTTOM with a predefined type is meaningless for allreduce; let Open MPI judge it.
        if (!bottom.matches(sendbuf) && !bottom.matches(recvbuf)) {
            if (CommState *st = engine_route(PMPI_Comm_f2c(*comm), *count)) {
                const void *send = in_place.matches(sendbuf) ? MPI_IN_PLACE : sendbuf;
                const int rc = engine_allreduce(*st, send, recvbuf, static_cast<std::size_t>(*count));
                if (ierr) *ierr = rc;
                return;
            }
        }
    }
    count_passthrough();
    real(sendbuf, recvbuf, count, type, op, comm, ierr);
}

using IallreduceFn = void (*)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

// An eligible call gets an engine request; its Fortran handle is the C one's, so every Fortran
// completion routine (mpi_fortran_requests_ompi.cpp) can find it.
void fortran_iallreduce(IallreduceFn real, void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                        MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr) {
    if (is_float_sum(PMPI_Type_f2c(*type), PMPI_Op_f2c(*op))) [[unlikely]] {
        static const Sentinel in_place("mpi_fortran_in_place"), bottom("mpi_fortran_bottom");
        if (!bottom.matches(sendbuf) && !bottom.matches(recvbuf)) {
            if (CommState *st = engine_route(PMPI_Comm_f2c(*comm), *count, true)) {
                const void *send = in_place.matches(sendbuf) ? MPI_IN_PLACE : sendbuf;
                MPI_Request r = MPI_REQUEST_NULL;
                const int rc = engine_iallreduce(*st, send, recvbuf, static_cast<std::size_t>(*count), &r);
                *request = PMPI_Request_c2f(r);
                if (ierr) *ierr = rc;
                return;
            }
        }
    }
    count_passthrough();
    real(sendbuf, recvbuf, count, type, op, comm, request, ierr);
}

using SetInfoFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
using DupWithInfoFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

}  // namespace

// Communicator hints from Fortran (engine/setup/comm_hints.hpp): Open MPI's routine first, then ours
// read the keys, as the C wrappers do (wrappers/mpi_comm_info.cpp).
#define OPTIREDUCE_FORTRAN_SET_INFO(sym)                                                                      \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierr) {                              \
        static const SetInfoFn real = next_symbol<SetInfoFn>(#sym);                                           \
        MPI_Fint rc = MPI_SUCCESS;                                                                            \
        real(comm, info, &rc);                                                                                \
        if (rc == MPI_SUCCESS) set_comm_hints(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), HintUpdate::merge); \
        if (ierr) *ierr = rc;                                                                                 \
    }

#define OPTIREDUCE_FORTRAN_DUP_WITH_INFO(sym)                                                                      \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr) {                \
        static const DupWithInfoFn real = next_symbol<DupWithInfoFn>(#sym);                                        \
        MPI_Fint rc = MPI_SUCCESS;                                                                                 \
        real(comm, info, newcomm, &rc);                                                                            \
        if (rc == MPI_SUCCESS) set_comm_hints(PMPI_Comm_f2c(*newcomm), PMPI_Info_f2c(*info), HintUpdate::replace); \
        if (ierr) *ierr = rc;                                                                                      \
    }

#define OPTIREDUCE_FORTRAN_IALLREDUCE(sym)                                                                  \
    OPTIREDUCE_EXPORT void sym(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, \
                               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr) {                         \
        static const IallreduceFn real = next_symbol<IallreduceFn>(#sym);                                   \
        fortran_iallreduce(real, sendbuf, recvbuf, count, type, op, comm, request, ierr);                   \
    }

#define OPTIREDUCE_FORTRAN_ALLREDUCE(sym)                                                                   \
    OPTIREDUCE_EXPORT void sym(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, \
                               MPI_Fint *comm, MPI_Fint *ierr) {                                            \
        static const AllreduceFn real = next_symbol<AllreduceFn>(#sym);                                     \
        fortran_allreduce(real, sendbuf, recvbuf, count, type, op, comm, ierr);                             \
    }

#define OPTIREDUCE_FORTRAN_INIT(sym)                          \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *ierr) {              \
        static const InitFn real = next_symbol<InitFn>(#sym); \
        MPI_Fint rc = MPI_SUCCESS;                            \
        real(&rc);                                            \
        if (rc == MPI_SUCCESS) on_mpi_initialized();          \
        if (ierr) *ierr = rc;                                 \
    }

#define OPTIREDUCE_FORTRAN_INIT_THREAD(sym)                                              \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) { \
        static const InitThreadFn real = next_symbol<InitThreadFn>(#sym);                \
        MPI_Fint rc = MPI_SUCCESS;                                                       \
        real(required, provided, &rc);                                                   \
        if (rc == MPI_SUCCESS) on_mpi_initialized();                                     \
        if (ierr) *ierr = rc;                                                            \
    }

#define OPTIREDUCE_FORTRAN_FINALIZE(sym)                              \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *ierr) {                      \
        static const FinalizeFn real = next_symbol<FinalizeFn>(#sym); \
        on_mpi_finalize();                                            \
        real(ierr);                                                   \
    }

OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_ALLREDUCE, mpi_allreduce, MPI_ALLREDUCE, MPI_Allreduce)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_IALLREDUCE, mpi_iallreduce, MPI_IALLREDUCE, MPI_Iallreduce)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_SET_INFO, mpi_comm_set_info, MPI_COMM_SET_INFO, MPI_Comm_set_info)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_DUP_WITH_INFO, mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO,
                       MPI_Comm_dup_with_info)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_INIT, mpi_init, MPI_INIT, MPI_Init)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_INIT_THREAD, mpi_init_thread, MPI_INIT_THREAD, MPI_Init_thread)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_FINALIZE, mpi_finalize, MPI_FINALIZE, MPI_Finalize)

// `use mpi_f08` (libmpi_usempif08): handles are derived types holding one integer, passed by
// reference, so the ABI is the same; ierror is optional and then arrives as a null pointer.
OPTIREDUCE_FORTRAN_ALLREDUCE(mpi_allreduce_f08_)
OPTIREDUCE_FORTRAN_IALLREDUCE(mpi_iallreduce_f08_)
OPTIREDUCE_FORTRAN_SET_INFO(mpi_comm_set_info_f08_)
OPTIREDUCE_FORTRAN_DUP_WITH_INFO(mpi_comm_dup_with_info_f08_)
OPTIREDUCE_FORTRAN_INIT(mpi_init_f08_)
OPTIREDUCE_FORTRAN_INIT_THREAD(mpi_init_thread_f08_)
OPTIREDUCE_FORTRAN_FINALIZE(mpi_finalize_f08_)
