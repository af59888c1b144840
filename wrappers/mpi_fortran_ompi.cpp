// Fortran entry points for Open MPI. Open MPI's Fortran bindings call PMPI_* directly, so a C
// MPI_Allreduce wrapper never sees Fortran callers (../shared/reference/ecosystem.md 1.3). We
// define every name Open MPI exports for these routines (mpif.h / use mpi manglings, the
// internal aliases, and use mpi_f08's mpi_*_f08_), give eligible calls to the engine, and hand
// everything else to Open MPI's own Fortran routine so its argument conversions stay its own.
// (MPICH's Fortran bindings call the C MPI_* symbols, so they need nothing here.)
#include "engine/context.hpp"
#include "float_sum.hpp"

#include <dlfcn.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace optireduce;

namespace {

using AllreduceFn = void (*)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using InitFn = void (*)(MPI_Fint *);
using InitThreadFn = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
using FinalizeFn = void (*)(MPI_Fint *);

// Open MPI's own implementation of `name`, found past this library in lookup order.
template <class Fn>
Fn next_symbol(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        std::fprintf(stderr, "optireduce error: %s not found in the MPI library: %s\n", name, dlerror());
        std::abort();
    }
    return reinterpret_cast<Fn>(f);
}

// Fortran passes MPI_IN_PLACE / MPI_BOTTOM as the address of a common-block variable. Open MPI
// checks several spellings of it; one global definition of each wins symbol resolution, so
// addresses looked up in the global scope match what Open MPI itself compares against. Looked
// up once: dlsym is far too slow for every call.
struct Sentinel {
    std::array<const void *, 4> addrs{};
    explicit Sentinel(const char *base) {
        const std::string b(base), upper = [&] {
            std::string u = b;
            for (char &c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            return u;
        }();
        const std::string names[4] = {b, b + "_", b + "__", upper};
        for (std::size_t i = 0; i < 4; ++i) addrs[i] = dlsym(RTLD_DEFAULT, names[i].c_str());
    }
    bool matches(const void *buf) const {
        for (const void *a : addrs)
            if (a && a == buf) return true;
        return false;
    }
};

void fortran_allreduce(AllreduceFn real, void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type,
                       MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr) {
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

}  // namespace

#define OPTIREDUCE_FORTRAN_ALLREDUCE(sym)                                                                      \
    OPTIREDUCE_EXPORT void sym(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,    \
                               MPI_Fint *comm, MPI_Fint *ierr) {                                               \
        static const AllreduceFn real = next_symbol<AllreduceFn>(#sym);                                       \
        fortran_allreduce(real, sendbuf, recvbuf, count, type, op, comm, ierr);                                \
    }

#define OPTIREDUCE_FORTRAN_INIT(sym)                                          \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *ierr) {                              \
        static const InitFn real = next_symbol<InitFn>(#sym);                \
        MPI_Fint rc = MPI_SUCCESS;                                            \
        real(&rc);                                                            \
        if (rc == MPI_SUCCESS) on_mpi_initialized();                          \
        if (ierr) *ierr = rc;                                                 \
    }

#define OPTIREDUCE_FORTRAN_INIT_THREAD(sym)                                          \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) { \
        static const InitThreadFn real = next_symbol<InitThreadFn>(#sym);           \
        MPI_Fint rc = MPI_SUCCESS;                                                   \
        real(required, provided, &rc);                                               \
        if (rc == MPI_SUCCESS) on_mpi_initialized();                                 \
        if (ierr) *ierr = rc;                                                        \
    }

#define OPTIREDUCE_FORTRAN_FINALIZE(sym)                            \
    OPTIREDUCE_EXPORT void sym(MPI_Fint *ierr) {                    \
        static const FinalizeFn real = next_symbol<FinalizeFn>(#sym); \
        on_mpi_finalize();                                          \
        real(ierr);                                                 \
    }

// mpif.h and `use mpi` (libmpi_mpifh): every mangling and alias Open MPI 4.1 exports.
#define OPTIREDUCE_FORTRAN_ALL(macro, lower, upper, mixed) \
    macro(lower) macro(lower##_) macro(lower##__) macro(upper) macro(mixed##_f) macro(mixed##_f08)

OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_ALLREDUCE, mpi_allreduce, MPI_ALLREDUCE, MPI_Allreduce)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_INIT, mpi_init, MPI_INIT, MPI_Init)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_INIT_THREAD, mpi_init_thread, MPI_INIT_THREAD, MPI_Init_thread)
OPTIREDUCE_FORTRAN_ALL(OPTIREDUCE_FORTRAN_FINALIZE, mpi_finalize, MPI_FINALIZE, MPI_Finalize)

// `use mpi_f08` (libmpi_usempif08): handles are derived types holding one integer, passed by
// reference, so the ABI is the same; ierror is optional and then arrives as a null pointer.
OPTIREDUCE_FORTRAN_ALLREDUCE(mpi_allreduce_f08_)
OPTIREDUCE_FORTRAN_INIT(mpi_init_f08_)
OPTIREDUCE_FORTRAN_INIT_THREAD(mpi_init_thread_f08_)
OPTIREDUCE_FORTRAN_FINALIZE(mpi_finalize_f08_)
