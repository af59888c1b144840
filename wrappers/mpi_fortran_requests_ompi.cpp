// SPDX-License-Identifier: BSD-3-Clause
// Fortran completion routines for Open MPI, whose Fortran bindings call PMPI_* directly (as for
// the allreduce, mpi_fortran_ompi.cpp): each completes the engine requests among its arguments
// (engine/requests/async_request.hpp) on their C handles and then calls Open MPI's own routine, which
// converts statuses, indices and handles as it always does. While no engine request is
// outstanding, each is one load and the call.
#include "engine/requests/async_request.hpp"
#include "float_sum.hpp"
#include "fortran_ompi.hpp"

#include <vector>

using namespace optireduce;

namespace {

using WaitFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
using TestFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using WaitallFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using TestallFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using WaitanyFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using TestanyFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using SomeFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using FreeFn = void (*)(MPI_Fint *, MPI_Fint *);

// The C handles of n Fortran ones, as they are now.
struct Handles {
    std::vector<MPI_Request> c;
    std::span<const MPI_Request> of(const MPI_Fint *f, MPI_Fint n) {
        c.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = PMPI_Request_f2c(f[i]);
        return c;
    }
};

// Before a routine that must not return before its engine requests completed (wait, waitall).
void finish(const MPI_Fint *f, MPI_Fint n) {
    Handles h;
    const auto reqs = h.of(f, n);
    finish_requests(reqs.data(), static_cast<int>(reqs.size()));
}

// Before the test forms and get_status.
void complete(const MPI_Fint *f, MPI_Fint n) {
    Handles h;
    const auto reqs = h.of(f, n);
    complete_finished(reqs.data(), static_cast<int>(reqs.size()));
}

}  // namespace

#define OPTIREDUCE_FORTRAN_WAIT(sym)                                                  \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr) { \
        static const WaitFn real = next_symbol<WaitFn>(#sym);                         \
        if (live()) [[unlikely]]                                                      \
            finish(request, 1);                                                       \
        real(request, status, ierr);                                                  \
    }

#define OPTIREDUCE_FORTRAN_TEST(sym)                                                                  \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr) { \
        static const TestFn real = next_symbol<TestFn>(#sym);                                         \
        if (live()) [[unlikely]]                                                                      \
            complete(request, 1);                                                                     \
        real(request, flag, status, ierr);                                                            \
    }

// mpi_request_get_status(request, flag, status, ierr) has the test form's signature.
#define OPTIREDUCE_FORTRAN_GET_STATUS(sym) OPTIREDUCE_FORTRAN_TEST(sym)

#define OPTIREDUCE_FORTRAN_WAITALL(sym)                                                                   \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr) { \
        static const WaitallFn real = next_symbol<WaitallFn>(#sym);                                       \
        if (live()) [[unlikely]]                                                                          \
            finish(requests, *count);                                                                     \
        real(count, requests, statuses, ierr);                                                            \
    }

#define OPTIREDUCE_FORTRAN_TESTALL(sym)                                                                 \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, \
                               MPI_Fint *ierr) {                                                        \
        static const TestallFn real = next_symbol<TestallFn>(#sym);                                     \
        if (live()) [[unlikely]]                                                                        \
            complete(requests, *count);                                                                 \
        real(count, requests, flag, statuses, ierr);                                                    \
    }

#define OPTIREDUCE_FORTRAN_TESTANY(sym)                                                                                \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, \
                               MPI_Fint *ierr) {                                                                       \
        static const TestanyFn real = next_symbol<TestanyFn>(#sym);                                                    \
        if (live()) [[unlikely]]                                                                                       \
            complete(requests, *count);                                                                                \
        real(count, requests, index, flag, status, ierr);                                                              \
    }

#define OPTIREDUCE_FORTRAN_TESTSOME(sym)                                                                     \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices, \
                               MPI_Fint *statuses, MPI_Fint *ierr) {                                         \
        static const SomeFn real = next_symbol<SomeFn>(#sym);                                                \
        if (live()) [[unlikely]]                                                                             \
            complete(requests, *incount);                                                                    \
        real(incount, requests, outcount, indices, statuses, ierr);                                          \
    }

// Waitany and Waitsome loop over Open MPI's own test forms while an engine request is among
// theirs (see wait_through_test); the test form's name is the wait form's with "wait" -> "test".
#define OPTIREDUCE_FORTRAN_WAITANY(sym, test_sym)                                                      \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, \
                               MPI_Fint *ierr) {                                                       \
        static const WaitanyFn real = next_symbol<WaitanyFn>(#sym);                                    \
        if (live()) [[unlikely]] {                                                                     \
            static const TestanyFn test = next_symbol<TestanyFn>(#test_sym);                           \
            Handles h;                                                                                 \
            MPI_Fint rc = MPI_SUCCESS;                                                                 \
            wait_through_test([&] { return h.of(requests, *count); },                                  \
                              [&](bool &done) {                                                        \
                                  MPI_Fint flag = 0;                                                   \
                                  test(count, requests, index, &flag, status, &rc);                    \
                                  done = flag != 0;                                                    \
                                  return static_cast<int>(rc);                                         \
                              });                                                                      \
            if (ierr) *ierr = rc;                                                                      \
            return;                                                                                    \
        }                                                                                              \
        real(count, requests, index, status, ierr);                                                    \
    }

#define OPTIREDUCE_FORTRAN_WAITSOME(sym, test_sym)                                                           \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices, \
                               MPI_Fint *statuses, MPI_Fint *ierr) {                                         \
        static const SomeFn real = next_symbol<SomeFn>(#sym);                                                \
        if (live()) [[unlikely]] {                                                                           \
            static const SomeFn test = next_symbol<SomeFn>(#test_sym);                                       \
            Handles h;                                                                                       \
            MPI_Fint rc = MPI_SUCCESS;                                                                       \
            wait_through_test([&] { return h.of(requests, *incount); },                                      \
                              [&](bool &done) {                                                              \
                                  test(incount, requests, outcount, indices, statuses, &rc);                 \
                                  done = *outcount != 0;                                                     \
                                  return static_cast<int>(rc);                                               \
                              });                                                                            \
            if (ierr) *ierr = rc;                                                                            \
            return;                                                                                          \
        }                                                                                                    \
        real(incount, requests, outcount, indices, statuses, ierr);                                          \
    }

#define OPTIREDUCE_FORTRAN_REQUEST_FREE(sym)                        \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *request, MPI_Fint *ierr) { \
        static const FreeFn real = next_symbol<FreeFn>(#sym);       \
        if (live()) [[unlikely]]                                    \
            prepare_free(PMPI_Request_f2c(*request));               \
        real(request, ierr);                                        \
    }

OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_WAIT, mpi_wait, MPI_WAIT, MPI_Wait)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_TEST, mpi_test, MPI_TEST, MPI_Test)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_WAITALL, mpi_waitall, MPI_WAITALL, MPI_Waitall)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_TESTALL, mpi_testall, MPI_TESTALL, MPI_Testall)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_TESTANY, mpi_testany, MPI_TESTANY, MPI_Testany)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_TESTSOME, mpi_testsome, MPI_TESTSOME, MPI_Testsome)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_GET_STATUS, mpi_request_get_status, MPI_REQUEST_GET_STATUS,
                       MPI_Request_get_status)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_REQUEST_FREE, mpi_request_free, MPI_REQUEST_FREE, MPI_Request_free)

// The wait-any forms, spelled out: each needs its own test form's name.
OPTIREDUCE_FORTRAN_WAITANY(mpi_waitany, mpi_testany)
OPTIREDUCE_FORTRAN_WAITANY(mpi_waitany_, mpi_testany_)
OPTIREDUCE_FORTRAN_WAITANY(mpi_waitany__, mpi_testany__)
OPTIREDUCE_FORTRAN_WAITANY(MPI_WAITANY, MPI_TESTANY)
OPTIREDUCE_FORTRAN_WAITANY(MPI_Waitany_f, MPI_Testany_f)
OPTIREDUCE_FORTRAN_WAITANY(MPI_Waitany_f08, MPI_Testany_f08)
OPTIREDUCE_FORTRAN_WAITSOME(mpi_waitsome, mpi_testsome)
OPTIREDUCE_FORTRAN_WAITSOME(mpi_waitsome_, mpi_testsome_)
OPTIREDUCE_FORTRAN_WAITSOME(mpi_waitsome__, mpi_testsome__)
OPTIREDUCE_FORTRAN_WAITSOME(MPI_WAITSOME, MPI_TESTSOME)
OPTIREDUCE_FORTRAN_WAITSOME(MPI_Waitsome_f, MPI_Testsome_f)
OPTIREDUCE_FORTRAN_WAITSOME(MPI_Waitsome_f08, MPI_Testsome_f08)

// `use mpi_f08` (libmpi_usempif08): the same ABI, handles being one-integer derived types.
OPTIREDUCE_FORTRAN_WAIT(mpi_wait_f08_)
OPTIREDUCE_FORTRAN_TEST(mpi_test_f08_)
OPTIREDUCE_FORTRAN_WAITALL(mpi_waitall_f08_)
OPTIREDUCE_FORTRAN_TESTALL(mpi_testall_f08_)
OPTIREDUCE_FORTRAN_TESTANY(mpi_testany_f08_)
OPTIREDUCE_FORTRAN_TESTSOME(mpi_testsome_f08_)
OPTIREDUCE_FORTRAN_GET_STATUS(mpi_request_get_status_f08_)
OPTIREDUCE_FORTRAN_REQUEST_FREE(mpi_request_free_f08_)
OPTIREDUCE_FORTRAN_WAITANY(mpi_waitany_f08_, mpi_testany_f08_)
OPTIREDUCE_FORTRAN_WAITSOME(mpi_waitsome_f08_, mpi_testsome_f08_)
