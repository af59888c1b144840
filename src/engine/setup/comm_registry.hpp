// SPDX-License-Identifier: BSD-3-Clause
// Creation and destruction of per-communicator engine state (the MPI attribute's lifecycle).
#pragma once

#include <mpi.h>

namespace optireduce {

class CommState;

// The state cached on `comm`, set up collectively on first use. Every member of `comm` must be
// in the same float SUM call. Never nullptr: a communicator the engine cannot serve gets a
// disabled state, so the setup runs once.
CommState *comm_state_for(MPI_Comm comm);

// The attribute delete callback (MPI_Comm_free, MPI_Finalize): frees the state.
int delete_comm_state_attr(MPI_Comm comm, int keyval, void *attr, void *extra);

}  // namespace optireduce
