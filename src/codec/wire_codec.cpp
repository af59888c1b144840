// SPDX-License-Identifier: BSD-3-Clause
#include "codec/wire_codec.hpp"

#include "codec/bf16_codec.hpp"
#include "codec/int8_codec.hpp"

#include <bit>
#include <cstring>

namespace optireduce {

// fp32 travels as the host's float bytes, as every other float payload of the project does.
static_assert(std::endian::native == std::endian::little, "the fp32 wire format assumes a little-endian host");

std::size_t coded_bytes(Codec c, std::size_t n) {
    switch (c) {
        case Codec::bf16: return 2 * n;
        case Codec::int8: return int8_codec::kScaleBytes + n;
        case Codec::fp32: break;
    }
    return 4 * n;
}

std::size_t entries_per_payload(Codec c, std::size_t payload_bytes) {
    std::size_t n = payload_bytes / 4;
    if (c == Codec::bf16) n = payload_bytes / 2;
    if (c == Codec::int8) n = payload_bytes > int8_codec::kScaleBytes ? payload_bytes - int8_codec::kScaleBytes : 0;
    return n;
}

void encode_chunk(Codec c, const float *in, std::size_t n, std::byte *out, std::uint64_t seed, Isa isa) {
    switch (c) {
        case Codec::bf16: return bf16_codec::encode(in, n, out, isa);
        case Codec::int8: return int8_codec::encode(in, n, out, seed, isa);
        case Codec::fp32: break;
    }
    if (n > 0) std::memcpy(out, in, 4 * n);
}

void decode_chunk(Codec c, const std::byte *in, std::size_t n, float *out, Isa isa) {
    switch (c) {
        case Codec::bf16: return bf16_codec::decode(in, n, out, isa);
        case Codec::int8: return int8_codec::decode(in, n, out, isa);
        case Codec::fp32: break;
    }
    if (n > 0) std::memcpy(out, in, 4 * n);
}

}  // namespace optireduce
