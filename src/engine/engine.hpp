// SPDX-License-Identifier: BSD-3-Clause
// What the MPI wrappers call for a float SUM allreduce. Everything else never reaches the engine.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace optireduce {

class CommState;

// The communicator's engine state when the engine takes this call, else nullptr: the caller
// then passes the call to PMPI unchanged. May run the communicator's collective setup, which is
// safe because every member is inside the same float SUM call (eligibility is identical on all
// ranks by construction: policy/eligibility.hpp).
// `nonblocking`: the call is an MPI_Iallreduce, which the engine does not take where an
// operation's outcome must be agreed with a collective (OPTIREDUCE_ON_EXCESS_LOSS=error or
// exact): no point of a nonblocking call is shared by every rank to run it at.
CommState *engine_route(MPI_Comm comm, std::int64_t count, bool nonblocking = false);

// Runs one blocking allreduce through the engine, after the nonblocking ones called before it
// on the communicator. Returns an MPI error code; failures are also raised through the
// communicator's error handler, as MPI itself would.
int engine_allreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count);

// Starts one nonblocking allreduce through the engine (engine/requests/async_request.hpp).
int engine_iallreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, MPI_Request *request);

// The operation itself, on the calling thread. With `from_mpi_call` false (a nonblocking
// operation on its executor thread) it calls no MPI function at all: a failure is only
// returned, and reaches the application through the request's status.
// Buffers in GPU memory are staged through host memory first (engine/device/device_call.hpp).
int engine_run(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, bool from_mpi_call);

// engine_run on buffers in host memory: the communicator's exact or bounded operation.
int host_run(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, bool from_mpi_call);

}  // namespace optireduce
