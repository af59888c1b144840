// SPDX-License-Identifier: BSD-3-Clause
#include "telemetry/log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace optireduce {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::warn)};
std::atomic<int> g_rank{-1};
std::atomic<std::int64_t> g_emitted{0};
// Per process, so that debug logging of every call stays bounded; before configuration (and by
// default) OPTIREDUCE_LOG_LIMIT's default.
std::atomic<int> g_limit{200};
}  // namespace

void log_configure(LogLevel level, int world_rank, int limit) {
    g_level.store(static_cast<int>(level), std::memory_order_relaxed);
    g_rank.store(world_rank, std::memory_order_relaxed);
    g_limit.store(limit > 0 ? limit : std::numeric_limits<int>::max(), std::memory_order_relaxed);
    g_emitted.store(0, std::memory_order_relaxed);  // the limit counts from here
}

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed); }

void log_message(LogLevel level, const char *fmt, ...) {
    const int limit = g_limit.load(std::memory_order_relaxed);
    const std::int64_t n = g_emitted.fetch_add(1, std::memory_order_relaxed);  // 64 bits: never wraps to the limit
    if (n > limit) return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    if (n == limit)
        std::snprintf(text, sizeof text, "further messages suppressed (limit %d: OPTIREDUCE_LOG_LIMIT)", limit);
    else  // va_start is above: clang-analyzer 14 loses track of it through std::vsnprintf
        std::vsnprintf(text, sizeof text, fmt, ap);  // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
    // One fprintf per line so lines of different ranks sharing a terminal do not interleave.
    const int rank = g_rank.load(std::memory_order_relaxed);
    if (rank >= 0)
        std::fprintf(stderr, "optireduce[%d] %s: %s\n", rank, to_string(level), text);
    else
        std::fprintf(stderr, "optireduce[?] %s: %s\n", to_string(level), text);
}

}  // namespace optireduce
