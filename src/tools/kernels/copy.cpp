// SPDX-License-Identifier: BSD-3-Clause
// The memory copy every kernel is compared with.
#include "measure.hpp"

#include <cstring>

namespace optireduce::kernel_bench {

CopyRow measure_copy(const Settings &s, std::size_t bytes, std::size_t total) {
    Buffer src(bytes / sizeof(float)), dst(bytes / sizeof(float));
    fill_random(src, 1);
    const std::size_t times = std::max<std::size_t>(total / bytes, 1);
    const Timing t = time_runs(s, [&] {
        for (std::size_t i = 0; i < times; ++i) {
            std::memcpy(dst.data(), src.data(), bytes);
            keep(dst.data());
        }
    });
    if (std::memcmp(dst.data(), src.data(), bytes) != 0) fail("memcpy of %zu bytes differs from its source", bytes);
    const double moved = static_cast<double>(times * bytes);
    return {bytes, {gbps(moved, t.median), gbps(moved, t.best)}};
}

CopyRow better(const CopyRow &a, const CopyRow &b) { return a.gbps.best >= b.gbps.best ? a : b; }

}  // namespace optireduce::kernel_bench
