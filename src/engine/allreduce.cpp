#include "engine/comm_registry.hpp"
#include "engine/comm_state.hpp"
#include "engine/context.hpp"
#include "engine/engine.hpp"
#include "engine/bounded_operation.hpp"
#include "engine/tar_operation.hpp"
#include "policy/eligibility.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <sched.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace optireduce {

CommState *engine_route(MPI_Comm comm, std::int64_t count) {
    // Erroneous arguments: the underlying MPI reports them exactly as it would without us.
    if (comm == MPI_COMM_NULL || count < 0) return nullptr;
    if (!ensure_ready()) return nullptr;
    CommState *st = comm_state_for(comm);
    const Route route = decide(CallFacts{true, true, count}, st->facts());
    if (route == Route::engine) return st;
    process_stats().fallback_calls.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

namespace {

// OPTIREDUCE_FAULT_DELAY_*: the test-only straggler, before it enters the operation.
void maybe_delay(CommState::Bounded &b) {
    const Config &cfg = context().config;
    if (cfg.fault_delay_rank != context().world_rank || cfg.fault_delay_ms <= 0) return;
    if (b.faults.chance(cfg.fault_delay_prob))
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(cfg.fault_delay_ms));
}

int bounded_allreduce(CommState &comm, const float *in, float *out, std::size_t count) {
    const auto t0 = std::chrono::steady_clock::now();
    maybe_delay(*comm.bounded);
    std::string error;
    Staging *staging = comm.acquire_staging(count, &error);
    if (!staging) {
        OPTIREDUCE_LOG(error, "allreduce of %zu floats: %s", count, error.c_str());
        PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }
    BoundedOperation op(comm, *staging, in, out, count);
    error = op.run();
    comm.release_staging(staging);
    if (!error.empty()) {
        OPTIREDUCE_LOG(error, "bounded allreduce of %zu floats failed: %s", count, error.c_str());
        PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_OTHER);
        return MPI_ERR_OTHER;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    bump(process_stats().bounded_calls);
    process_stats().record_engine_call(count * sizeof(float), static_cast<std::uint64_t>(ns.count()));
    return MPI_SUCCESS;
}

}  // namespace

int engine_allreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count) {
    const float *in = static_cast<const float *>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf);
    if (comm.bounded) return bounded_allreduce(comm, in, static_cast<float *>(recvbuf), count);
    const auto t0 = std::chrono::steady_clock::now();
    RdmEndpoint &ep = *comm.endpoint;

    std::string error;
    Staging *staging = nullptr;
    {
        std::lock_guard lock(ep.mutex());  // registration goes through the domain
        staging = comm.acquire_staging(count, &error);
    }
    if (!staging) {
        OPTIREDUCE_LOG(error, "allreduce of %zu floats: %s", count, error.c_str());
        PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }

    TarOperation op(comm, *staging, in, static_cast<float *>(recvbuf), count);
    std::unique_lock lock(ep.mutex());
    ep.add_active(&op);
    op.start();
    // With a core per rank, spin while completions keep coming and yield only after
    // kSpinBeforeYield without any: yielding at once would hand the core to any other runnable
    // process for a whole time slice between two messages microseconds apart. With more ranks
    // than cores on the node, yield on every empty poll, as Open MPI does in that case: the
    // peer we wait for may need this very core.
    constexpr auto kSpinBeforeYield = std::chrono::microseconds(200);
    const auto spin = context().oversubscribed ? std::chrono::microseconds(0) : kSpinBeforeYield;
    auto last_event = std::chrono::steady_clock::now();
    while (!op.finished()) {
        if (ep.progress() > 0) {
            last_event = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - last_event >= spin) {
            lock.unlock();  // other threads may progress this endpoint meanwhile
            sched_yield();
            lock.lock();
        }
    }
    ep.remove_active(&op);
    lock.unlock();

    if (op.failed()) {
        comm.release_staging(staging);
        OPTIREDUCE_LOG(error, "allreduce of %zu floats failed: %s", count, op.error().c_str());
        PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_OTHER);
        return MPI_ERR_OTHER;
    }
    comm.release_staging(staging);

    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    process_stats().record_engine_call(count * sizeof(float), static_cast<std::uint64_t>(ns.count()));
    return MPI_SUCCESS;
}

}  // namespace optireduce
