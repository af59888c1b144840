#include "codec/reduce.hpp"

#include <algorithm>

namespace optireduce {

void sum_in_order(std::span<const float *const> srcs, float *dst, std::size_t n) {
    if (srcs.empty()) return;
    // Blocked so each block of dst stays in L1 while all sources are added into it: one pass
    // over memory instead of one pass per source. Within a block, the adds per element happen
    // in source order, so the result does not depend on the blocking.
    constexpr std::size_t kBlock = 2048;
    for (std::size_t b = 0; b < n; b += kBlock) {
        const std::size_t len = std::min(kBlock, n - b);
        float *__restrict d = dst + b;
        const float *s0 = srcs[0] + b;
        if (d != s0)
            for (std::size_t i = 0; i < len; ++i) d[i] = s0[i];
        for (std::size_t k = 1; k < srcs.size(); ++k) {
            const float *__restrict s = srcs[k] + b;
            for (std::size_t i = 0; i < len; ++i) d[i] += s[i];
        }
    }
}

}  // namespace optireduce
