#include "engine/staging_agreement.hpp"

#include "engine/context.hpp"
#include "telemetry/stats.hpp"

#include <atomic>

namespace optireduce {
namespace {

// OPTIREDUCE_FAULT_ALLOC_*: whether this growth is the one that fails (once per process).
bool injected_failure() {
    static std::atomic<std::uint64_t> growths{0};
    const Config &cfg = context().config;
    if (cfg.fault_alloc_rank < 0 || cfg.fault_alloc_rank != context().world_rank) return false;
    return growths.fetch_add(1, std::memory_order_relaxed) + 1 == cfg.fault_alloc_nth;
}

}  // namespace

Staging *agree_on_staging(CommState &comm, Staging *staging, bool grew, bool agree, std::string *error) {
    if (!grew) return staging;
    if (staging && injected_failure()) {
        comm.release_staging(staging);
        staging = nullptr;
        *error = "staging allocation failed (injected by OPTIREDUCE_FAULT_ALLOC_RANK)";
    }
    if (!staging) bump(process_stats().staging_failures);
    if (!agree) return staging;
    int failed = staging ? 0 : 1;
    if (PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm.comm) != MPI_SUCCESS) failed = 1;
    if (failed && staging) {
        comm.release_staging(staging);
        staging = nullptr;
        *error = "another rank of the communicator could not allocate its staging memory (its own log says why)";
    }
    return staging;
}

}  // namespace optireduce
