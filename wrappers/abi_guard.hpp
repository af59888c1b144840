// SPDX-License-Identifier: BSD-3-Clause
// The library must be the build for the MPI the program runs on: the Open MPI and MPICH ABIs
// differ in every handle, so the wrong one crashes in the first MPI call or, worse, computes
// with the other MPI's handles. This finds out before that happens.
#pragma once

namespace optireduce {

// Exits the process with one message naming both MPIs and the library to use instead when the
// other MPI's library is loaded in the process. Called when the library is loaded (for programs
// linked against MPI) and again before MPI_Init (for those that open it later, like mpi4py).
void check_mpi_abi();

}  // namespace optireduce
