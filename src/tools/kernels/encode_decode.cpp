// SPDX-License-Identifier: BSD-3-Clause
// Whole-vector encode and decode through a block layout.
#include "measure.hpp"

#include "codec/block_layout.hpp"

#include <cstdio>
#include <cstring>

namespace optireduce::kernel_bench {

void measure_codec(const Settings &s, Results &r) {
    const std::size_t n = s.codec_floats;
    Buffer in(n), out(n), want_out(n);
    fill_random(in, 20);
    const double bytes = static_cast<double>(in.bytes());
    for (std::size_t k = kMinLog; k <= kMaxLog; ++k) {
        for (const bool interleave : {true, false}) {
            BlockLayout l = plan_layout(n, kRanks, true, std::size_t{1} << k);
            l.interleave = interleave;
            Buffer wire(l.padded), want_wire(l.padded);
            for (const Isa isa : r.isas) {
                std::vector<double> te, td, ts;
                for (int i = 0; i < s.warmup + s.reps; ++i) {
                    const auto t0 = Clock::now();
                    encode(l, in.data(), wire.data(), kKey, isa);
                    keep(wire.data());
                    const double e = seconds_since(t0);
                    const auto t1 = Clock::now();
                    decode(l, wire.data(), out.data(), kKey, isa);
                    keep(out.data());
                    const double d = seconds_since(t1);
                    if (i < s.warmup) continue;
                    te.push_back(e);
                    td.push_back(d);
                    ts.push_back(e + d);
                }
                char what[96];
                std::snprintf(what, sizeof what, "encode/decode %s block %zu interleave %s", to_string(isa), l.block,
                              interleave ? "on" : "off");
                check_round_trip(what, out.data(), in.data(), n);
                if (isa == Isa::scalar) {
                    std::memcpy(want_wire.data(), wire.data(), wire.bytes());
                    std::memcpy(want_out.data(), out.data(), out.bytes());
                } else {
                    check_same_bits(what, wire.data(), want_wire.data(), l.padded);
                    check_same_bits(what, out.data(), want_out.data(), n);
                }
                r.codec.push_back({isa, std::size_t{1} << k, l.block, interleave, gbps(bytes, tools::median(te)),
                                   gbps(bytes, tools::median(td)), gbps(bytes, tools::median(ts))});
            }
        }
    }
}

}  // namespace optireduce::kernel_bench
