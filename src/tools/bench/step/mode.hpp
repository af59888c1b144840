// SPDX-License-Identifier: BSD-3-Clause
// The two ways the bench calls allreduce, blocking and nonblocking. Both go through a function
// pointer so that the comparison, down to the pass-through overhead, differs only in which symbol
// is called.
#pragma once

#include <mpi.h>

#include <array>

namespace optireduce::bench {

using AllreduceFn = int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

struct Mode {
    const char *name;
    AllreduceFn allreduce;
};

// MPI_Allreduce resolves to liboptireduce when it is preloaded; PMPI_Allreduce never does.
inline const Mode optireduce_mode{"optireduce", &MPI_Allreduce};
inline const Mode native_mode{"native", &PMPI_Allreduce};

// --threads --nonblocking: the request's whole life goes through one side, because an engine
// request is a generalized request that only the library's MPI_Wait and MPI_Test complete.
using IallreduceFn = int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
using WaitFn = int (*)(MPI_Request *, MPI_Status *);

struct NonblockingMode {
    const char *name;
    IallreduceFn iallreduce;
    WaitFn wait;
};

inline const NonblockingMode optireduce_nonblocking{"optireduce", &MPI_Iallreduce, &MPI_Wait};
inline const NonblockingMode native_nonblocking{"native", &PMPI_Iallreduce, &PMPI_Wait};

}  // namespace optireduce::bench
