// SPDX-License-Identifier: BSD-3-Clause
// A communicator's hints in the engine (config/info_hints.hpp says which keys exist): kept as an
// MPI attribute of the communicator, so that they exist before its engine state does and
// MPI_Comm_dup / MPI_Comm_idup copy them (as MPI copies info hints); agreed by every member when
// set; and applied to the engine state. The application sets them through MPI_Comm_set_info,
// MPI_Comm_dup_with_info (wrappers/mpi_comm_info.cpp) and optireduce_comm_enable (api.cpp).
#pragma once

#include <mpi.h>

namespace optireduce {

class CommState;

enum class HintUpdate {
    merge,    // MPI_Comm_set_info: keys the info object lacks keep their values
    replace,  // MPI_Comm_dup_with_info: the new communicator has only the hints in the info object
};

// After the underlying MPI accepted the call on `comm` (it is collective, so every member is
// here): reads our keys from `info` (MPI_INFO_NULL: none) and checks with one PMPI_Allreduce that
// every member got valid and identical hints. Where not, the communicator falls back to the
// underlying MPI, and the lowest rank with a bad value logs an error naming the hint and its
// allowed range, or rank 0 a warning naming the hints that differ; the job goes on. A later call
// with good hints turns the engine back on. If the communicator's engine state exists, it takes
// the new values after its nonblocking operations, which read them, have finished.
// Intercommunicators are ignored: the engine never runs on them.
void set_comm_hints(MPI_Comm comm, MPI_Info info, HintUpdate how);

// Whether the hints let the engine take float SUM calls on `comm`: switched on, valid and the
// same on every member. One attribute lookup; true for a communicator without hints.
bool comm_hints_allow_engine(MPI_Comm comm);

// optireduce_comm_enable: sets the "optireduce" switch of `comm` on this rank only (the caller
// promises every member does the same between the same two calls) and returns its previous value,
// 1 on or 0 off.
int set_comm_switch(MPI_Comm comm, bool on);

// Sets what the hints override on a set-up communicator's engine state: its minimum size, its
// deadline settings and its loss budget; each the hint's value where given, else the
// environment's. Called at setup and whenever the hints change.
void apply_comm_hints(CommState &st);

// Callbacks of ProcessContext::hints_keyval.
int copy_comm_hints_attr(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag);
int delete_comm_hints_attr(MPI_Comm comm, int keyval, void *attr, void *extra);

}  // namespace optireduce
