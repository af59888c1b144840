#include "engine/send_fault.hpp"

#include "engine/context.hpp"
#include "engine/fault_rng.hpp"

#include <atomic>
#include <cstdint>

namespace optireduce {

bool injected_send_failure() {
    const Config &cfg = context().config;
    if (cfg.fault_send_rank != context().world_rank) return false;
    // Draws numbered per process (senders run on several threads), seeded by the seed knob, so a
    // failing run repeats.
    static std::atomic<std::uint64_t> draws{0};
    return FaultRng(cfg.fault_seed, draws.fetch_add(1, std::memory_order_relaxed)).chance(cfg.fault_send_prob);
}

}  // namespace optireduce
