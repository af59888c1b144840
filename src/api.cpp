// The public C API (include/optireduce/optireduce.h).
#include "optireduce/optireduce.h"

#include "telemetry/stats.hpp"

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
    return 0;
}
