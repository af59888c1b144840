// SPDX-License-Identifier: BSD-3-Clause
#include "engine/device/device_call.hpp"

#include "device/cuda_driver.hpp"
#include "device/staging_copies.hpp"
#include "engine/engine.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace optireduce {

namespace {

// A rank's say on the call's route, agreed with MPI_MAX: the largest wins.
enum Vote : int {
    kEngine = 0,       // host buffers, or GPU buffers staged: the engine runs the call
    kPassthrough = 1,  // GPU buffers and OPTIREDUCE_DEVICE=passthrough
    kFailed = 2,       // GPU buffers whose staging failed here (the error says why)
};

// One call's buffers as this rank holds them, and as the engine is to see them.
struct Call {
    const void *send;  // the caller's, MPI_IN_PLACE included
    void *recv;
    std::size_t bytes;
    PointerInfo send_info, recv_info;
    const void *engine_send;  // what the engine runs on: host memory only
    void *engine_recv;
    std::string error;

    bool any_device() const { return send_info.device || recv_info.device; }
};

// Where each buffer is; kFailed if the driver could not say.
Vote classify(const CudaDriver &cuda, Call &c) {
    if (!cuda.classify(c.recv, &c.recv_info, &c.error)) return kFailed;
    if (c.send != MPI_IN_PLACE && !cuda.classify(c.send, &c.send_info, &c.error)) return kFailed;
    if (c.any_device() && context().config.device == DeviceMemory::passthrough) return kPassthrough;
    return kEngine;
}

// The context the copies run in: the buffers' own (one, if both are on the GPU), else the
// calling thread's (memory mapped through the virtual memory API reports none).
cuda::CUcontext copy_context(const CudaDriver &cuda, Call &c) {
    cuda::CUcontext ctx = c.send_info.device ? c.send_info.context : c.recv_info.context;
    if (c.send_info.device && c.recv_info.device && c.send_info.context != c.recv_info.context) {
        c.error = "the send and receive buffers belong to different CUDA contexts (devices)";
        return nullptr;
    }
    if (!ctx && cuda.ctx_get_current(&ctx) != cuda::CUDA_SUCCESS) ctx = nullptr;
    if (!ctx) c.error = "no CUDA context owns the GPU buffer, and none is current on the calling thread";
    return ctx;
}

std::uint64_t since(std::chrono::steady_clock::time_point t0) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
}

// The input into host staging, and the buffers the engine then runs on (the staging in place
// where the result goes back to the GPU too). The caller made the context current.
bool stage_in(StagingCopies &staging, Call &c, cuda::CUcontext ctx, bool pageable_ok) {
    if (!staging.reserve(c.bytes, ctx, pageable_ok, &c.error)) return false;
    float *host = staging.host();
    const void *input = c.send == MPI_IN_PLACE ? c.recv : c.send;
    const bool input_on_device = c.send == MPI_IN_PLACE ? c.recv_info.device : c.send_info.device;
    c.engine_send = c.send;
    c.engine_recv = c.recv_info.device ? host : c.recv;
    if (!input_on_device) return true;  // host input, result to the GPU: the engine reads the input itself
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = staging.copy(host, input, c.bytes, &c.error);
    bump(process_stats().device_copy_ns, since(t0));
    if (!ok) return false;
    c.engine_send = c.recv_info.device ? MPI_IN_PLACE : static_cast<const void *>(host);
    return true;
}

// Every rank's vote, where the communicator agrees per call; else this rank's own.
Vote agree(CommState &comm, Vote mine, bool agreed) {
    if (!agreed) return mine;
    int vote = mine;
    if (PMPI_Allreduce(MPI_IN_PLACE, &vote, 1, MPI_INT, MPI_MAX, comm.comm) != MPI_SUCCESS) return kFailed;
    return static_cast<Vote>(vote);
}

// The agreed route is the underlying MPI: every rank hands it the call with its own buffers.
int hand_to_mpi(CommState &comm, const Call &c, Vote mine, Vote agreed) {
    ProcessStats &ps = process_stats();
    bump(ps.device_fallback_calls);
    bump(ps.fallback_calls);
    count_passthrough();
    if (mine == kFailed)
        OPTIREDUCE_LOG(warn,
                       "staging GPU buffers of an allreduce of %zu bytes failed: %s; the call runs through "
                       "the underlying MPI on every rank of the communicator (it must be CUDA-aware)",
                       c.bytes, c.error.c_str());
    else if (agreed == kFailed)
        OPTIREDUCE_LOG(info,
                       "another rank could not stage its GPU buffers (its log says why): this call runs "
                       "through the underlying MPI");
    const std::size_t count = c.bytes / sizeof(float);
    if (count > static_cast<std::size_t>(INT_MAX)) {
        OPTIREDUCE_LOG(error,
                       "an allreduce of %zu floats cannot be handed to the underlying MPI (its count is an "
                       "int): the call fails",
                       count);
        PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_COUNT);
        return MPI_ERR_COUNT;
    }
    return PMPI_Allreduce(c.send, c.recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm.comm);
}

// A staging failure no agreement can cover: the peers are already in the operation, waiting for
// this rank's data. CUDA errors of copies are as a rule sticky (the context is lost), so, as a
// CUDA-aware MPI does, the job ends with the reason instead of leaving the peers waiting.
[[noreturn]] void abort_job(CommState &comm, const Call &c, bool from_mpi_call) {
    OPTIREDUCE_LOG(error,
                   "staging GPU buffers of an allreduce of %zu bytes failed: %s. Its peers wait for its data: "
                   "aborting the job. (OPTIREDUCE_DEVICE=passthrough hands GPU buffers to a CUDA-aware MPI "
                   "instead.)",
                   c.bytes, c.error.c_str());
    std::fflush(stderr);
    if (from_mpi_call) PMPI_Abort(comm.comm, MPI_ERR_OTHER);
    std::_Exit(1);  // the executor thread may call no MPI: the launcher ends the job
}

// The result back to the GPU; a failure here is this rank's alone (the peers have theirs).
int stage_out(CommState &comm, StagingCopies &staging, Call &c, bool from_mpi_call) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = staging.copy(c.recv, staging.host(), c.bytes, &c.error);
    bump(process_stats().device_copy_ns, since(t0));
    if (ok) return MPI_SUCCESS;
    OPTIREDUCE_LOG(error, "copying the result of an allreduce of %zu bytes back to the GPU failed: %s", c.bytes,
                   c.error.c_str());
    if (from_mpi_call) PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

// Asked for passthrough where no agreement can take the call to MPI: staged instead, said once.
void say_staged_anyway() {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
        OPTIREDUCE_LOG(warn,
                       "OPTIREDUCE_DEVICE=passthrough: GPU buffers on a communicator set up before any rank "
                       "had loaded CUDA are staged through host memory all the same (its ranks cannot agree "
                       "to hand them to MPI); set the communicator up after CUDA is loaded");
}

}  // namespace

int device_run(CommState &comm, const CudaDriver *cuda, const void *sendbuf, void *recvbuf, std::size_t count,
               bool from_mpi_call) {
    Call c{sendbuf, recvbuf, count * sizeof(float), {}, {}, sendbuf, recvbuf, {}};
    Vote mine = cuda ? classify(*cuda, c) : kEngine;
    const bool agreed = from_mpi_call && comm.device_capable;
    if (mine == kPassthrough && !agreed) {
        say_staged_anyway();
        mine = kEngine;
    }
    std::optional<CudaContextScope> scope;
    if (mine == kEngine && c.any_device()) {
        const cuda::CUcontext ctx = copy_context(*cuda, c);
        if (ctx) scope.emplace(*cuda, ctx);
        if (scope && scope->status() != cuda::CUDA_SUCCESS)
            c.error = cuda->describe("cuCtxPushCurrent", scope->status());
        if (!comm.device_staging) comm.device_staging = std::make_unique<StagingCopies>(*cuda);
        if (!ctx || !c.error.empty() || !stage_in(*comm.device_staging, c, ctx, !agreed)) mine = kFailed;
    }
    if (mine == kFailed && !agreed) abort_job(comm, c, from_mpi_call);
    const Vote route = agree(comm, mine, agreed);
    if (route != kEngine) return hand_to_mpi(comm, c, mine, route);
    const int rc = host_run(comm, c.engine_send, c.engine_recv, count, from_mpi_call);
    if (!c.any_device()) return rc;
    bump(process_stats().device_calls);
    if (!c.recv_info.device) return rc;
    const int out = stage_out(comm, *comm.device_staging, c, from_mpi_call);
    return rc != MPI_SUCCESS ? rc : out;
}

}  // namespace optireduce
