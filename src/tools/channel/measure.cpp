// SPDX-License-Identifier: BSD-3-Clause
#include "measure.hpp"

#include <sys/resource.h>
#include <time.h>

namespace optireduce::channel_bench {

const Channel *find_channel(std::string_view name) {
    for (const Channel &c : kChannels)
        if (name == c.name) return &c;
    return nullptr;
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const auto s = [](const timeval &t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    return s(u.ru_utime) + s(u.ru_stime);
}

double wall_seconds() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace optireduce::channel_bench
