// SPDX-License-Identifier: BSD-3-Clause
// The wire codecs (int8, bf16) chunk by chunk, as the engine codes a datagram's payload: each
// chunk of a vector into its own slot, with its own seed.
#include "measure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace optireduce::kernel_bench {
namespace {

// A datagram's payload on a 1500-byte and on a 9000-byte MTU path.
constexpr std::size_t kPayloads[] = {1472, 8960};
constexpr Codec kCodecs[] = {Codec::int8, Codec::bf16};

// n entries cut into chunks of `chunk`, chunk c coded at byte c * slot.
struct Chunks {
    Codec codec;
    std::size_t n, chunk, slot;
    std::size_t count() const { return (n + chunk - 1) / chunk; }
    std::size_t len(std::size_t c) const { return std::min(chunk, n - c * chunk); }
    std::size_t floats_for_bytes() const { return (count() * slot + 3) / 4; }
};

std::byte *bytes_of(Buffer &b) { return reinterpret_cast<std::byte *>(b.data()); }

void encode_all(const Chunks &k, const float *in, std::byte *coded, Isa isa) {
    for (std::size_t c = 0; c < k.count(); ++c)
        encode_chunk(k.codec, in + c * k.chunk, k.len(c), coded + c * k.slot, c, isa);
}

void decode_all(const Chunks &k, const std::byte *coded, float *out, Isa isa) {
    for (std::size_t c = 0; c < k.count(); ++c)
        decode_chunk(k.codec, coded + c * k.slot, k.len(c), out + c * k.chunk, isa);
}

// What each codec promises per entry: int8 within one scale of its chunk (its largest |x| / 127),
// bf16 within 2^-8 of the entry.
void check_errors(const char *what, const Chunks &k, const float *in, const float *out) {
    for (std::size_t c = 0; c < k.count(); ++c) {
        const float *x = in + c * k.chunk, *y = out + c * k.chunk;
        float m = 0;
        for (std::size_t i = 0; i < k.len(c); ++i) m = std::max(m, std::fabs(x[i]));
        for (std::size_t i = 0; i < k.len(c); ++i) {
            const float bound = k.codec == Codec::int8 ? m / 127.0f * 1.0001f : std::ldexp(std::fabs(x[i]), -8);
            if (!(std::fabs(y[i] - x[i]) <= bound))
                fail("%s: entry %zu decodes to %.9g from %.9g, beyond %.3g", what, c * k.chunk + i, y[i], x[i], bound);
        }
    }
}

void check_same_bytes(const char *what, const std::byte *got, const std::byte *want, std::size_t bytes) {
    const auto at = std::mismatch(got, got + bytes, want).first - got;
    if (static_cast<std::size_t>(at) != bytes)
        fail("%s: coded bytes differ from the scalar path's at byte %td", what, at);
}

struct Vectors {
    Buffer in, coded, out, want_coded, want_out;
    Vectors(const Chunks &k, const float *src)
        : in(k.n), coded(k.floats_for_bytes()), out(k.n), want_coded(k.floats_for_bytes()), want_out(k.n) {
        std::memcpy(in.data(), src, in.bytes());
    }
};

struct Passes {
    Timing enc, dec;
};

// `iters` passes over the whole vector per timed run.
Passes time_passes(const Settings &s, const Chunks &k, Vectors &v, Isa isa, std::size_t iters) {
    Passes p;
    p.enc = time_runs(s, [&] {
        for (std::size_t i = 0; i < iters; ++i) {
            encode_all(k, v.in.data(), bytes_of(v.coded), isa);
            keep(v.coded.data());
        }
    });
    p.dec = time_runs(s, [&] {
        for (std::size_t i = 0; i < iters; ++i) {
            decode_all(k, bytes_of(v.coded), v.out.data(), isa);
            keep(v.out.data());
        }
    });
    return p;
}

// Scalar first: its bytes and floats are what the other paths must give.
void check(const char *what, const Chunks &k, Vectors &v, Isa isa) {
    const std::size_t bytes = v.coded.bytes();
    if (isa == Isa::scalar) {
        check_errors(what, k, v.in.data(), v.out.data());
        std::memcpy(v.want_coded.data(), v.coded.data(), bytes);
        std::memcpy(v.want_out.data(), v.out.data(), v.out.bytes());
    } else {
        check_same_bytes(what, bytes_of(v.coded), bytes_of(v.want_coded), bytes);
        check_same_bits(what, v.out.data(), v.want_out.data(), k.n);
    }
}

void measure_one(const Settings &s, Results &r, Codec codec, std::size_t payload, const Buffer &src) {
    const std::size_t chunk = entries_per_payload(codec, payload), slot = coded_bytes(codec, chunk);
    const Chunks k{codec, s.vec_floats, chunk, slot};
    // In L2: whole chunks filling about half of it with the input and output vectors.
    const Chunks hk{codec, std::max(hot_floats(2) / chunk, std::size_t{1}) * chunk, chunk, slot};
    Vectors v(k, src.data()), hv(hk, src.data());
    const std::size_t iters = std::max<std::size_t>(s.hot_work / hk.n, 1);
    const double bytes = static_cast<double>(v.in.bytes()), hot_bytes = static_cast<double>(iters * hv.in.bytes());
    for (const Isa isa : r.isas) {
        const Passes p = time_passes(s, k, v, isa, 1), hp = time_passes(s, hk, hv, isa, iters);
        char what[96];
        std::snprintf(what, sizeof what, "wire codec %s %s chunk %zu", to_string(codec), to_string(isa), chunk);
        check(what, k, v, isa);
        check(what, hk, hv, isa);
        r.wire.push_back({codec, isa, payload, chunk, gbps(bytes, p.enc.median), gbps(bytes, p.dec.median),
                          gbps(hot_bytes, hp.enc.median), gbps(hot_bytes, hp.dec.median)});
    }
}

}  // namespace

void measure_wire(const Settings &s, Results &r) {
    Buffer src(s.vec_floats);
    fill_random(src, 30);
    for (const Codec codec : kCodecs)
        for (const std::size_t payload : kPayloads) measure_one(s, r, codec, payload, src);
}

}  // namespace optireduce::kernel_bench
