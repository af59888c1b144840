// SPDX-License-Identifier: BSD-3-Clause
// The Hadamard transform, forward and inverse, block by block.
#include "measure.hpp"

#include <cstdio>
#include <cstring>

namespace optireduce::kernel_bench {

void measure_fwht(const Settings &s, Results &r) {
    const std::size_t n = s.vec_floats;
    Buffer ref(n), x(n), want(n);
    fill_random(ref, 2);
    for (std::size_t k = kMinLog; k <= kMaxLog; ++k) {
        const std::size_t B = std::size_t{1} << k;
        Buffer hot(B), hot_want(B);
        for (const Isa isa : r.isas) {
            std::memcpy(x.data(), ref.data(), ref.bytes());
            const Timing t = time_runs(s, [&] {
                for (std::size_t b = 0; b < n; b += B) {
                    hadamard::fwht(x.data() + b, B, isa);
                    hadamard::fwht(x.data() + b, B, isa);
                }
                keep(x.data());
            });
            // One block again and again: what the kernel does when memory is not the limit.
            std::memcpy(hot.data(), ref.data(), hot.bytes());
            const std::size_t iters = std::max<std::size_t>(s.hot_work / B, 1);
            const Timing th = time_runs(s, [&] {
                for (std::size_t i = 0; i < iters; ++i) {
                    hadamard::fwht(hot.data(), B, isa);
                    hadamard::fwht(hot.data(), B, isa);
                }
                keep(hot.data());
            });
            char what[64];
            std::snprintf(what, sizeof what, "fwht %s block %zu", to_string(isa), B);
            // Every run applied forward+inverse once more; after a few the error is still tiny.
            // (Not so for the thousands of the in-L2 loop, so that one is only compared bitwise.)
            check_round_trip(what, x.data(), ref.data(), n);
            if (isa == Isa::scalar) {
                std::memcpy(want.data(), x.data(), x.bytes());
                std::memcpy(hot_want.data(), hot.data(), hot.bytes());
            } else {
                check_same_bits(what, x.data(), want.data(), n);
                check_same_bits(what, hot.data(), hot_want.data(), B);
            }
            r.fwht.push_back({isa, B, gbps(static_cast<double>(x.bytes()), t.median),
                              gbps(static_cast<double>(iters * hot.bytes()), th.median)});
        }
    }
}

}  // namespace optireduce::kernel_bench
