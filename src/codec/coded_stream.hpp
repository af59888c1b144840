// SPDX-License-Identifier: BSD-3-Clause
// A stream of entries as bounded mode's datagrams carry it: cut into chunks of `per_chunk`
// entries (one datagram each), every chunk coded on its own (codec/wire_codec.hpp) and stored at a
// fixed stride, so chunk c's payload starts at c * stride() and a run of consecutive chunks is
// one span with a constant segment size. Under fp32 the coded bytes are the floats themselves,
// so a float vector is its own coded stream and nothing is copied.
#pragma once

#include "codec/sharding.hpp"
#include "codec/wire_codec.hpp"
#include "config/config.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace optireduce {

struct CodedStream {
    const std::byte *data = nullptr;
    std::size_t entries = 0;    // the stream's length in entries
    std::size_t per_chunk = 0;  // entries per datagram (floats_per_datagram)
    Codec codec = Codec::fp32;

    // A float vector sent as is.
    static CodedStream floats(const float *p, std::size_t n, std::size_t per_chunk) {
        return {reinterpret_cast<const std::byte *>(p), n, per_chunk, Codec::fp32};
    }
    std::size_t stride() const { return coded_bytes(codec, per_chunk); }
    // A stream of no chunk size (nothing published yet) has no chunks.
    std::size_t chunks() const { return per_chunk ? segment_count(entries, per_chunk) : 0; }
    // Entries of chunk c (c < chunks()).
    std::size_t count(std::uint32_t c) const { return segment_of(entries, per_chunk, c).count; }
    std::span<const std::byte> chunk(std::uint32_t c) const {
        return {data + c * stride(), coded_bytes(codec, count(c))};
    }
    // The bytes a stream of n entries takes.
    static std::size_t bytes_for(Codec codec, std::size_t n, std::size_t per_chunk) {
        if (n == 0 || per_chunk == 0) return 0;
        const std::size_t full = n / per_chunk, rest = n % per_chunk;
        return full * coded_bytes(codec, per_chunk) + (rest ? coded_bytes(codec, rest) : 0);
    }
};

}  // namespace optireduce
