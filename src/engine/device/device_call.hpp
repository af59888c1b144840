// SPDX-License-Identifier: BSD-3-Clause
// An engine call whose buffers may be in GPU memory (docs/usage.md, "GPU buffers").
//
// The route never depends on where this rank's buffers are: MPI lets each rank choose, so
// another rank of the same call may hold host buffers. A rank with GPU buffers copies its input
// into pinned host staging (device/staging_copies.hpp), runs the same engine operation as the
// others on it, and copies the result back before the call returns (before the request
// completes, for MPI_Iallreduce, whose operation runs on the communicator's executor thread).
//
// What can differ between ranks (OPTIREDUCE_DEVICE=passthrough wants this call in the underlying
// MPI; the staging failed here) is agreed in one int MAX allreduce per blocking call, on
// communicators where some rank had loaded CUDA at setup (CommState::device_capable): where any
// rank asks, every rank hands the call to the underlying MPI with its own buffers. Nonblocking
// calls cannot agree (no point of them is shared by every rank); on such communicators
// passthrough takes them all to the underlying MPI at the route (engine_route), and a staging
// failure inside one ends the job with the reason, as a CUDA-aware MPI does.
#pragma once

#include <cstddef>

namespace optireduce {

class CommState;
class CudaDriver;

// engine_run's body where this process has the CUDA driver loaded (`cuda`, else nullptr) or the
// communicator is device capable; `from_mpi_call` as for engine_run.
int device_run(CommState &comm, const CudaDriver *cuda, const void *sendbuf, void *recvbuf, std::size_t count,
               bool from_mpi_call);

}  // namespace optireduce
