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
// ranks by construction, DESIGN.md section 3).
CommState *engine_route(MPI_Comm comm, std::int64_t count);

// Runs one blocking allreduce through the engine. Returns an MPI error code; failures are also
// raised through the communicator's error handler, as MPI itself would.
int engine_allreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count);

}  // namespace optireduce
