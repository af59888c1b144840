// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/faults.hpp"

#include "engine/setup/context.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace optireduce {
namespace {

bool is_faulty_rank(int knob) { return knob >= 0 && knob == context().world_rank; }

// The delayed rank (OPTIREDUCE_FAULT_DELAY_RANK) sleeps `ms`, with OPTIREDUCE_FAULT_DELAY_PROB,
// drawn from the communicator's fault sequence; no draw when this rank or `ms` asks for none.
void sleep_if_delayed(FaultRng &faults, double ms) {
    const Config &cfg = context().config;
    if (!is_faulty_rank(cfg.fault_delay_rank) || ms <= 0) return;
    if (faults.chance(cfg.fault_delay_prob)) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

bool injected_send_failure() {
    const Config &cfg = context().config;
    if (!is_faulty_rank(cfg.fault_send_rank)) return false;
    // Draws numbered per process (senders run on several threads), seeded by the seed knob.
    static std::atomic<std::uint64_t> draws{0};
    return FaultRng(cfg.fault_seed, draws.fetch_add(1, std::memory_order_relaxed)).chance(cfg.fault_send_prob);
}

bool injected_alloc_failure() {
    static std::atomic<std::uint64_t> growths{0};
    const Config &cfg = context().config;
    if (!is_faulty_rank(cfg.fault_alloc_rank)) return false;
    return growths.fetch_add(1, std::memory_order_relaxed) + 1 == cfg.fault_alloc_nth;
}

void injected_delay(FaultRng &faults) { sleep_if_delayed(faults, context().config.fault_delay_ms); }

void injected_vote_delay(FaultRng &faults) { sleep_if_delayed(faults, context().config.fault_vote_delay_ms); }

void arm_exit_fault() {
    if (!is_faulty_rank(context().config.fault_exit_rank)) return;
    std::atexit([] {
        std::fprintf(stderr, "optireduce[%d] warn: OPTIREDUCE_FAULT_EXIT_RANK: aborting at exit (test-only fault)\n",
                     context().world_rank);
        std::abort();
    });
}

}  // namespace optireduce
