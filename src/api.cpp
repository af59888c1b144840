// The public C API (include/optireduce/optireduce.h).
#include "optireduce/optireduce.h"

#include "engine/comm_hints.hpp"
#include "engine/comm_state.hpp"
#include "engine/context.hpp"
#include "telemetry/stats.hpp"

#include <mpi.h>

#include <mutex>

#define OPTIREDUCE_EXPORT extern "C" __attribute__((visibility("default")))

OPTIREDUCE_EXPORT const char *optireduce_version(void) { return OPTIREDUCE_VERSION_STRING; }

OPTIREDUCE_EXPORT const char *optireduce_mpi_abi(void) {
#if defined(OPTIREDUCE_ABI_MPICH)
    return "MPICH";
#else
    return "Open MPI";
#endif
}

OPTIREDUCE_EXPORT int optireduce_get_stats(optireduce_stats_t *out) {
    if (!out) return -1;
    const auto &s = optireduce::process_stats();
    constexpr auto relaxed = std::memory_order_relaxed;
    out->engine_calls = s.engine_calls.load(relaxed);
    out->engine_bytes = s.engine_bytes.load(relaxed);
    out->passthrough_calls = s.passthrough_calls.load(relaxed);
    out->fallback_calls = s.fallback_calls.load(relaxed);
    out->comms_enabled = s.comms_enabled.load(relaxed);
    out->comms_fallback = s.comms_fallback.load(relaxed);
    out->bounded_calls = s.bounded_calls.load(relaxed);
    out->entries_expected_rs = s.entries_expected_rs.load(relaxed);
    out->entries_lost_rs = s.entries_lost_rs.load(relaxed);
    out->entries_expected_ag = s.entries_expected_ag.load(relaxed);
    out->entries_lost_ag = s.entries_lost_ag.load(relaxed);
    out->phases_complete = s.phases_complete.load(relaxed);
    out->phases_early_close = s.phases_early_close.load(relaxed);
    out->phases_deadline = s.phases_deadline.load(relaxed);
    out->datagrams_sent = s.datagrams_sent.load(relaxed);
    out->datagrams_late = s.datagrams_late.load(relaxed);
    out->datagrams_duplicate = s.datagrams_duplicate.load(relaxed);
    out->datagrams_invalid = s.datagrams_invalid.load(relaxed);
    out->datagrams_held = s.datagrams_held.load(relaxed);
    out->datagrams_held_dropped = s.datagrams_held_dropped.load(relaxed);
    out->datagrams_fault_dropped = s.datagrams_fault_dropped.load(relaxed);
    out->hadamard_calls = s.hadamard_calls.load(relaxed);
    out->excess_loss_calls = s.excess_loss_calls.load(relaxed);
    out->reliable_calls = s.reliable_calls.load(relaxed);
    out->error_estimate_sum = s.error_estimate_sum.load(relaxed);
    out->error_estimate_max = s.error_estimate_max.load(relaxed);
    out->drift_estimate_max = s.drift_estimate_max.load(relaxed);
    out->stragglers_written_off = s.stragglers_written_off.load(relaxed);
    out->repair_chunks_requested = s.repair_chunks_requested.load(relaxed);
    out->repair_chunks_sent = s.repair_chunks_sent.load(relaxed);
    out->repair_chunks_unavailable = s.repair_chunks_unavailable.load(relaxed);
    out->nonblocking_calls = s.nonblocking_calls.load(relaxed);
    out->staging_failures = s.staging_failures.load(relaxed);
    out->datagrams_send_failed = s.datagrams_send_failed.load(relaxed);
    out->send_queue_full = s.send_queue_full.load(relaxed);
    out->completion_errors = s.completion_errors.load(relaxed);
    return 0;
}

OPTIREDUCE_EXPORT int optireduce_last_op(int comm_fortran_handle, optireduce_op_report_t *out) {
    if (!out) return -1;
    *out = optireduce_op_report_t{};
    if (!optireduce::ensure_ready()) return -1;
    // A lookup only: a communicator without engine state gets none created here.
    MPI_Comm comm = PMPI_Comm_f2c(comm_fortran_handle);
    if (comm == MPI_COMM_NULL) return -1;
    void *attr = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, optireduce::context().comm_keyval, &attr, &found) != MPI_SUCCESS || !found) return -1;
    const auto *st = static_cast<const optireduce::CommState *>(attr);
    optireduce::OpReport r;
    {
        std::lock_guard lock(st->report_mutex);
        r = st->last_op;
    }
    if (r.ops == 0) return -1;
    out->ops = r.ops;
    out->count = r.count;
    out->entries_expected = r.expected;
    out->entries_lost = r.lost;
    out->loss = r.loss();
    out->error_estimate = r.error_estimate;
    out->drift_estimate = r.drift_estimate;
    out->hadamard = r.hadamard ? 1 : 0;
    out->excess = r.excess ? 1 : 0;
    out->path = static_cast<int>(r.path);
    return 0;
}

OPTIREDUCE_EXPORT int optireduce_comm_enable(int comm_fortran_handle, int on) {
    if (!optireduce::ensure_ready()) return -1;
    MPI_Comm comm = PMPI_Comm_f2c(comm_fortran_handle);
    if (comm == MPI_COMM_NULL) return -1;
    return optireduce::set_comm_switch(comm, on != 0);
}
