// SPDX-License-Identifier: BSD-3-Clause
// The scaled sum of a rank's vector and its peers' (estimate_partial_sum), next to the plain sum.
#include "measure.hpp"

#include "codec/estimators.hpp"
#include "codec/reduce.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace optireduce::kernel_bench {
namespace {

// The definition, own + (ranks - 1) / m * sum(peers), in the documented order; the tolerance only
// allows for how the compiler may round this reference. The paths themselves must agree exactly.
void check_definition(const char *what, const float *own, const std::array<const float *, kRanks - 1> &peers,
                      const float *got, std::size_t n) {
    const float scale = static_cast<float>(kRanks - 1) / static_cast<float>(peers.size());
    for (std::size_t i = 0; i < n; ++i) {
        const float e = own[i] + ((peers[0][i] + peers[1][i]) + peers[2][i]) * scale;
        if (!(std::fabs(got[i] - e) <= 1e-6f * (1 + std::fabs(e))))
            fail("%s: element %zu is %.9g, expected %.9g", what, i, got[i], e);
    }
}

// The plain sum in order, bit for bit.
void check_plain_sum(const std::array<const float *, kRanks> &all, const float *got, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float e = ((all[0][i] + all[1][i]) + all[2][i]) + all[3][i];
        if (std::memcmp(&got[i], &e, sizeof e) != 0)  // NOLINT(bugprone-suspicious-memory-comparison): bits
            fail("sum_in_order: element %zu is %.9g, expected %.9g", i, got[i], e);
    }
}

}  // namespace

void measure_sum(const Settings &s, Results &r) {
    const std::size_t n = s.vec_floats, hn = hot_floats(kRanks + 1);
    std::vector<Buffer> in, hin;
    for (int k = 0; k < kRanks; ++k) {
        in.emplace_back(n);
        fill_random(in.back(), 10 + static_cast<std::uint64_t>(k));
        hin.emplace_back(hn);
        std::memcpy(hin.back().data(), in.back().data(), hin.back().bytes());
    }
    Buffer dst(n), want(n), hdst(hn), hwant(hn);
    const std::array<const float *, kRanks - 1> peers{in[1].data(), in[2].data(), in[3].data()};
    const std::array<const float *, kRanks - 1> hpeers{hin[1].data(), hin[2].data(), hin[3].data()};
    const std::array<const float *, kRanks> all{in[0].data(), in[1].data(), in[2].data(), in[3].data()};
    const std::array<const float *, kRanks> hall{hin[0].data(), hin[1].data(), hin[2].data(), hin[3].data()};
    const double out_bytes = static_cast<double>(dst.bytes());
    const std::size_t iters = std::max<std::size_t>(s.hot_work / hn, 1);
    const auto add = [&](const char *kernel, const char *isa, Timing t, Timing th) {
        r.sum.push_back({kernel, isa, gbps(out_bytes, t.median), gbps(kTrafficVectors * out_bytes, t.median),
                         gbps(static_cast<double>(iters * hdst.bytes()), th.median)});
    };
    for (const Isa isa : r.isas) {
        const Timing t = time_runs(s, [&] {
            estimate_partial_sum(in[0].data(), peers, kRanks, dst.data(), n, isa);
            keep(dst.data());
        });
        const Timing th = time_runs(s, [&] {
            for (std::size_t i = 0; i < iters; ++i) {
                estimate_partial_sum(hin[0].data(), hpeers, kRanks, hdst.data(), hn, isa);
                keep(hdst.data());
            }
        });
        char what[64];
        std::snprintf(what, sizeof what, "estimate_partial_sum %s", to_string(isa));
        if (isa == Isa::scalar) {
            check_definition(what, in[0].data(), peers, dst.data(), n);
            std::memcpy(want.data(), dst.data(), dst.bytes());
            std::memcpy(hwant.data(), hdst.data(), hdst.bytes());
        } else {
            check_same_bits(what, dst.data(), want.data(), n);
            check_same_bits(what, hdst.data(), hwant.data(), hn);
        }
        add("estimate_partial_sum", to_string(isa), t, th);
    }
    // The plain sum of the same four vectors (the owner's reduction), each path bit for bit.
    for (const Isa isa : r.isas) {
        const Timing t = time_runs(s, [&] {
            sum_in_order(all, dst.data(), n, isa);
            keep(dst.data());
        });
        const Timing th = time_runs(s, [&] {
            for (std::size_t i = 0; i < iters; ++i) {
                sum_in_order(hall, hdst.data(), hn, isa);
                keep(hdst.data());
            }
        });
        check_plain_sum(all, dst.data(), n);
        add("sum_in_order (4 srcs)", to_string(isa), t, th);
    }
}

}  // namespace optireduce::kernel_bench
