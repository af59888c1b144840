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
    return 0;
}
