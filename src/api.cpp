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

namespace {

optireduce_stats_t read_stats() {
    const auto &s = optireduce::process_stats();
    constexpr auto relaxed = std::memory_order_relaxed;
    optireduce_stats_t out{};
#define OPTIREDUCE_STATS_COPY_(name, doc) out.name = s.name.load(relaxed);
    OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_COPY_, OPTIREDUCE_STATS_COPY_)
#undef OPTIREDUCE_STATS_COPY_
    return out;
}

}  // namespace

OPTIREDUCE_EXPORT int optireduce_get_stats(optireduce_stats_t *out) {
    if (!out) return -1;
    *out = read_stats();
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
