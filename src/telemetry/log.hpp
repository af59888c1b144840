// SPDX-License-Identifier: BSD-3-Clause
// OPTIREDUCE_LOG: messages to stderr as "optireduce[rank] level: text", at most
// OPTIREDUCE_LOG_LIMIT per process so a misbehaving loop cannot flood a job's output. Never used
// on the pass-through path.
#pragma once

#include "config/config.hpp"

namespace optireduce {

// `limit`: messages from here on before the log stops, the last one saying so (0: no limit).
void log_configure(LogLevel level, int world_rank, int limit);
bool log_enabled(LogLevel level);
void log_message(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace optireduce

#define OPTIREDUCE_LOG(level, ...)                                                 \
    do {                                                                           \
        if (::optireduce::log_enabled(::optireduce::LogLevel::level))              \
            ::optireduce::log_message(::optireduce::LogLevel::level, __VA_ARGS__); \
    } while (0)
