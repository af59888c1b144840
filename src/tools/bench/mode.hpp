// The two ways the bench calls allreduce. Both go through a function pointer so that the
// comparison, down to the pass-through overhead, differs only in which symbol is called.
#pragma once

#include <mpi.h>

#include <array>

namespace optireduce::bench {

using AllreduceFn = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);

struct Mode {
    const char* name;
    AllreduceFn allreduce;
};

// MPI_Allreduce resolves to liboptireduce when it is preloaded; PMPI_Allreduce never does.
inline const Mode optireduce_mode{"optireduce", &MPI_Allreduce};
inline const Mode native_mode{"native", &PMPI_Allreduce};

} // namespace optireduce::bench
