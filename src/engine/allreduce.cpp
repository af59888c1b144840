// SPDX-License-Identifier: BSD-3-Clause
#include "codec/block_layout.hpp"
#include "device/cuda_driver.hpp"
#include "engine/bounded/bounded_operation.hpp"
#include "engine/device/device_call.hpp"
#include "engine/engine.hpp"
#include "engine/exact/tar_operation.hpp"
#include "engine/requests/async_request.hpp"
#include "engine/setup/comm_hints.hpp"
#include "engine/setup/comm_registry.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"
#include "engine/setup/faults.hpp"
#include "engine/setup/staging_agreement.hpp"
#include "policy/eligibility.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <mutex>

namespace optireduce {

CommState *engine_route(MPI_Comm comm, std::int64_t count, bool nonblocking) {
    // Erroneous arguments: the underlying MPI reports them exactly as it would without us.
    if (comm == MPI_COMM_NULL || count < 0) return nullptr;
    if (!ensure_ready()) return nullptr;
    // A communicator switched off (its "optireduce" hint or optireduce_comm_enable), or whose
    // hints are invalid or differ across ranks, falls back before any setup: the hints were
    // agreed when set, so every rank takes the same way, and one that is off never sets up.
    if (!comm_hints_allow_engine(comm)) {
        process_stats().fallback_calls.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    CommState *st = comm_state_for(comm);
    const Route route = decide(CallFacts{true, true, count}, st->facts());
    // Nonblocking calls cannot agree on anything per call: where an outcome must be agreed
    // (OPTIREDUCE_ON_EXCESS_LOSS), or the route of a GPU buffer (OPTIREDUCE_DEVICE=passthrough on
    // a communicator where some rank had CUDA loaded), they go to the underlying MPI. The knobs
    // and the flag were agreed at setup, so every rank takes the same way.
    const Config &cfg = context().config;
    const bool needs_agreement =
        cfg.on_excess_loss != ExcessLoss::warn || (st->device_capable && cfg.device == DeviceMemory::passthrough);
    if (route == Route::engine && !(nonblocking && needs_agreement)) return st;
    if (route == Route::fallback && static_cast<std::uint64_t>(count) > st->max_count) {
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
            OPTIREDUCE_LOG(warn,
                           "an allreduce of %lld floats is beyond what exact mode addresses on a %d-rank "
                           "communicator (%llu floats: 2^20 segments of OPTIREDUCE_SEGMENT_BYTES per rank); it "
                           "runs through the underlying MPI (raise OPTIREDUCE_SEGMENT_BYTES to keep such calls)",
                           static_cast<long long>(count), st->size, static_cast<unsigned long long>(st->max_count));
    }
    process_stats().fallback_calls.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

namespace {

// The MPI error code OPTIREDUCE_ON_EXCESS_LOSS=error returns: its own class, so that
// MPI_Error_string tells the user what happened and which knob to change.
int excess_loss_error_code() {
    static int code = MPI_ERR_OTHER;
    static std::once_flag once;
    std::call_once(once, [] {
        int cls = 0, c = 0;
        if (PMPI_Add_error_class(&cls) != MPI_SUCCESS || PMPI_Add_error_code(cls, &c) != MPI_SUCCESS) return;
        static const char text[] =
            "optireduce: a bounded allreduce lost more than OPTIREDUCE_MAX_LOSS of its entries; the result is "
            "an estimate. Raise OPTIREDUCE_MAX_LOSS or OPTIREDUCE_TIMEOUT_MS, or set "
            "OPTIREDUCE_ON_EXCESS_LOSS=warn or exact";
        PMPI_Add_error_string(c, text);
        code = c;
    });
    return code;
}

// Numbers `r` (its ops, which the excess-loss warning names) and keeps it as the communicator's
// last operation.
void record(CommState &comm, OpReport &r) {
    ProcessStats &ps = process_stats();
    {
        std::lock_guard lock(comm.report_mutex);
        r.ops = comm.last_op.ops + 1;
        comm.last_op = r;
    }
    if (r.path != OpPath::bounded) return;
    if (r.hadamard) bump(ps.hadamard_calls);
    if (r.excess) bump(ps.excess_loss_calls);
    add_estimate(ps, r.error_estimate, r.drift_estimate);
}

// OPTIREDUCE_ON_EXCESS_LOSS=error and =exact: whether the operation exceeded the budget on any
// rank. Only the ranks that lost too much know it, and both actions must be the same on every
// rank (one error code for all, or one path for the next operations): one small allreduce per
// bounded operation agrees, the price the knob's documentation states. With warn each rank
// judges its own loss and nothing is exchanged.
bool agree_on_excess(CommState &comm, bool mine) {
    int any = mine ? 1 : 0;
    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm.comm);
    return any != 0;
}

// OPTIREDUCE_ON_EXCESS_LOSS=exact after an agreed excess: wider deadlines for when bounded
// operations resume (a no-op where OPTIREDUCE_TIMEOUT_MS pins them), and a run of reliable
// operations that doubles (4, 8, ... 64) while the agreed loss stays above the budget. Every rank
// calls it for the same operations, so the state stays identical.
void start_reliable_run(CommState::Bounded &b) {
    b.deadlines.widen_all(2.0);
    b.reliable_run = std::min(64, std::max(4, 2 * b.reliable_run));
    b.reliable_left = b.reliable_run;
}

// OPTIREDUCE_ON_EXCESS_LOSS=exact's run of reliable operations: this one through the underlying
// MPI.
int run_reliable(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count) {
    --comm.bounded->reliable_left;
    const int rc = PMPI_Allreduce(sendbuf, recvbuf, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm.comm);
    bump(process_stats().reliable_calls);
    OpReport r;
    r.count = count;
    r.path = OpPath::reliable;
    record(comm, r);
    return rc;
}

int outcome(CommState &comm, OpReport r);

// A failure the peers cannot get past (they wait for this rank, or it for them): the job ends
// with `why` (logged here unless null), as MPI's default error handler would.
[[noreturn]] void abort_job(CommState &comm, bool from_mpi_call, const char *why) {
    if (why) OPTIREDUCE_LOG(error, "%s: aborting the job. (OPTIREDUCE_MODE=off runs the job on MPI alone.)", why);
    if (from_mpi_call) PMPI_Abort(comm.comm, MPI_ERR_OTHER);
    // A nonblocking call runs on its communicator's executor, which may call no MPI function
    // (the thread level may not allow it): the process ends, and the launcher ends the job.
    std::fflush(stderr);
    std::_Exit(1);
}

// Without `from_mpi_call` (a nonblocking operation) OPTIREDUCE_ON_EXCESS_LOSS is warn
// (engine_route), so neither the agreement nor the reliable run, which call MPI, can happen.
int bounded_allreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, bool from_mpi_call) {
    const Config &cfg = context().config;
    CommState::Bounded &b = *comm.bounded;
    const float *in = static_cast<const float *>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf);
    float *out = static_cast<float *>(recvbuf);
    const auto t0 = std::chrono::steady_clock::now();
    // A run of reliable operations after an excess (OPTIREDUCE_ON_EXCESS_LOSS=exact): reliable_left
    // is driven only by agreed outcomes, so every rank takes this branch for the same operations.
    // Counts beyond int cannot go through PMPI_Allreduce here; they stay on the bounded path (the
    // count is the same on every rank, so that choice agrees too).
    if (b.reliable_left > 0 && count <= static_cast<std::size_t>(INT_MAX))
        return run_reliable(comm, sendbuf, recvbuf, count);
    injected_delay(b.faults);
    const std::uint32_t seq = comm.next_seq++;  // before anything can fail: the same on every rank
    const BlockLayout layout = plan_layout(count, comm.size, b.hadamard, cfg.hadamard_block);
    std::string error;
    bool grew = false;
    Staging *staging = comm.acquire_staging(layout.padded, layout.max_shard(), layout.transform ? layout.padded : 0,
                                            BoundedOperation::coded_staging_bytes(layout, b), &error, &grew);
    staging = agree_on_staging(comm, staging, grew, from_mpi_call, &error);
    // A rank that fails still takes part in the agreement the others will run after their
    // operation (as an excess: its result is not an estimate), so that the collectives stay in
    // step and the others learn of the failure; and it reports the operation like they do.
    const auto fail = [&](int code, const char *what) {
        OPTIREDUCE_LOG(error, "bounded allreduce of %zu floats failed: %s", count, what);
        OpReport r;
        r.count = count;
        r.excess = cfg.on_excess_loss != ExcessLoss::warn && agree_on_excess(comm, true);
        record(comm, r);
        if (cfg.on_excess_loss == ExcessLoss::exact) start_reliable_run(b);  // as the others do
        if (from_mpi_call) PMPI_Comm_call_errhandler(comm.comm, code);
        return code;
    };
    if (!staging) {
        b.channel->router.skip_op(b.key, seq);  // the others' datagrams for it: late, not replayed next
        return fail(MPI_ERR_NO_MEM, error.c_str());
    }
    // OPTIREDUCE_CARRY: what the last call on this buffer dropped joins our input.
    CarryStore::Slot *carry = b.carry ? &b.carry->begin(recvbuf, count) : nullptr;
    if (carry) in = b.carry->input(*carry, in, count);
    BoundedOperation op(comm, *staging, layout, seq, in, out, carry);
    op.run();
    if (!op.failure().empty()) abort_job(comm, from_mpi_call, op.failure().c_str());
    comm.release_staging(staging);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    bump(process_stats().bounded_calls);
    process_stats().record_engine_call(count * sizeof(float), static_cast<std::uint64_t>(ns.count()));
    return outcome(comm, op.report());
}

// What a bounded operation's loss means for the call: within OPTIREDUCE_MAX_LOSS, success; over
// it, what OPTIREDUCE_ON_EXCESS_LOSS says (agreed across the ranks, except under warn).
int outcome(CommState &comm, OpReport r) {
    const Config &cfg = context().config;
    CommState::Bounded &b = *comm.bounded;
    const std::size_t count = r.count;
    const bool mine = r.loss() > b.max_loss;
    r.excess = cfg.on_excess_loss == ExcessLoss::warn ? mine : agree_on_excess(comm, mine);
    record(comm, r);
    if (!r.excess) {
        b.reliable_run = 0;  // back under the budget: the next excess starts from the shortest run
        return MPI_SUCCESS;
    }
    // Rate-limited: the first excess and then every 100th, so a lossy job does not flood stderr.
    // Only the ranks over the budget say it, with their own figures.
    if (mine && b.excess_warnings++ % 100 == 0)
        OPTIREDUCE_LOG(warn,
                       "allreduce %llu of %zu floats lost %.2f%% of its entries (budget %g: OPTIREDUCE_MAX_LOSS, or "
                       "the communicator's optireduce_max_loss hint), estimated relative error %.3g; %llu such "
                       "operations so far on this communicator",
                       static_cast<unsigned long long>(r.ops), count, 100.0 * r.loss(), b.max_loss, r.error_estimate,
                       static_cast<unsigned long long>(b.excess_warnings));
    switch (cfg.on_excess_loss) {
        case ExcessLoss::warn: return MPI_SUCCESS;
        case ExcessLoss::error: {
            const int code = excess_loss_error_code();
            PMPI_Comm_call_errhandler(comm.comm, code);
            return code;
        }
        case ExcessLoss::exact: start_reliable_run(b); return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

// Exact mode, the same shape as bounded_allreduce: staging, agreed where it grew; the operation
// (its loop inside it); the outcome.
int exact_allreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, bool from_mpi_call) {
    const float *in = static_cast<const float *>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf);
    const auto t0 = std::chrono::steady_clock::now();
    RdmEndpoint &ep = *comm.endpoint;

    std::string error;
    Staging *staging = nullptr;
    bool grew = false;
    {
        std::lock_guard lock(ep.mutex());  // registration goes through the domain
        staging = comm.acquire_staging(count, &error, &grew);
    }
    // Not under the endpoint's lock: the agreement is an MPI collective, and this rank's other
    // threads may need the endpoint meanwhile.
    staging = agree_on_staging(comm, staging, grew, from_mpi_call, &error);
    if (!staging) {
        OPTIREDUCE_LOG(error, "allreduce of %zu floats: %s", count, error.c_str());
        if (from_mpi_call) PMPI_Comm_call_errhandler(comm.comm, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }

    TarOperation op(comm, *staging, in, static_cast<float *>(recvbuf), count);
    op.run();

    if (op.failed()) {
        // A transfer of the reliable channel failed here (a full queue is retried, so this is an
        // error): the peers wait for data this rank will not send, and nothing this rank can do
        // completes their call. Returning an error here alone would leave the job hanging, so
        // the job is aborted with the reason, as MPI's default error handler would.
        OPTIREDUCE_LOG(error,
                       "exact-mode allreduce of %zu floats failed on this rank: %s. Its peers wait for its "
                       "data and cannot complete the call: aborting the job. (OPTIREDUCE_MODE=off runs "
                       "the job on MPI alone.)",
                       count, op.error().c_str());
        abort_job(comm, from_mpi_call, nullptr);
    }
    comm.release_staging(staging);

    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    process_stats().record_engine_call(count * sizeof(float), static_cast<std::uint64_t>(ns.count()));
    OpReport r;
    r.count = count;
    r.path = OpPath::exact;
    record(comm, r);
    return MPI_SUCCESS;
}

}  // namespace

int engine_allreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count) {
    // While the nonblocking operations called before it run, MPI keeps progressing the rest, as
    // in a completion call (poke_mpi_progress).
    if (comm.executor)
        while (!comm.executor->wait_idle_for(kPokeEvery)) poke_mpi_progress();
    return engine_run(comm, sendbuf, recvbuf, count, true);
}

int engine_iallreduce(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, MPI_Request *request) {
    return start_iallreduce(comm, sendbuf, recvbuf, count, request);
}

int engine_run(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, bool from_mpi_call) {
    // A process that never loaded CUDA, on a communicator where no rank had: host buffers only.
    const CudaDriver *cuda = CudaDriver::loaded();
    if (cuda || comm.device_capable) [[unlikely]]
        return device_run(comm, cuda, sendbuf, recvbuf, count, from_mpi_call);
    return host_run(comm, sendbuf, recvbuf, count, from_mpi_call);
}

int host_run(CommState &comm, const void *sendbuf, void *recvbuf, std::size_t count, bool from_mpi_call) {
    return comm.bounded ? bounded_allreduce(comm, sendbuf, recvbuf, count, from_mpi_call)
                        : exact_allreduce(comm, sendbuf, recvbuf, count, from_mpi_call);
}

}  // namespace optireduce
