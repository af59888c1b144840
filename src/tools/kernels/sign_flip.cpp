// SPDX-License-Identifier: BSD-3-Clause
// The keyed sign flip (signed_copy).
#include "measure.hpp"

#include <cstdio>
#include <cstring>

namespace optireduce::kernel_bench {

void measure_sign(const Settings &s, Results &r) {
    const std::size_t n = s.vec_floats, hn = hot_floats(2);
    Buffer src(n), dst(n), want(n), hsrc(hn), hdst(hn), hwant(hn);
    fill_random(src, 3);
    std::memcpy(hsrc.data(), src.data(), hsrc.bytes());
    // The specification, independently of every path: element i flips iff its bit is set.
    const auto check_signs = [&](const float *got) {
        for (std::size_t i = 0; i < n; ++i) {
            std::uint32_t a, b;
            std::memcpy(&a, &src.data()[i], 4);
            std::memcpy(&b, &got[i], 4);
            const std::uint64_t bits = hadamard::sign_word(kKey, 0, i / 64);
            if ((a ^ b) != static_cast<std::uint32_t>((bits >> (i % 64)) & 1u) << 31)
                fail("signed_copy scalar: element %zu is not its source with the keyed sign", i);
        }
    };
    const std::size_t iters = std::max<std::size_t>(s.hot_work / hn, 1);
    for (const Isa isa : r.isas) {
        // The whole vector in one call: signs are hashed per 64 elements, so how the vector is
        // cut into blocks does not change the work.
        const Timing t = time_runs(s, [&] {
            hadamard::signed_copy(dst.data(), src.data(), n, kKey, 0, isa);
            keep(dst.data());
        });
        const Timing th = time_runs(s, [&] {
            for (std::size_t i = 0; i < iters; ++i) {
                hadamard::signed_copy(hdst.data(), hsrc.data(), hn, kKey, 0, isa);
                keep(hdst.data());
            }
        });
        char what[64];
        std::snprintf(what, sizeof what, "signed_copy %s", to_string(isa));
        if (isa == Isa::scalar) {
            check_signs(dst.data());
            std::memcpy(want.data(), dst.data(), dst.bytes());
            std::memcpy(hwant.data(), hdst.data(), hdst.bytes());
        } else {
            check_same_bits(what, dst.data(), want.data(), n);
            check_same_bits(what, hdst.data(), hwant.data(), hn);
        }
        r.sign.push_back({isa, gbps(static_cast<double>(dst.bytes()), t.median),
                          gbps(static_cast<double>(iters * hdst.bytes()), th.median)});
    }
}

}  // namespace optireduce::kernel_bench
