// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the datagram header parser. Any bytes: decode never reads past the datagram,
// and what it accepts is exactly what encode writes (re-encoding an accepted header gives the
// same 40 bytes back, so no unchecked bit of the header can smuggle meaning) and obeys the rules
// of docs/protocol.md ("Validation"). Built by scripts/fuzz.sh.
#include "transport/wire_header.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "wire_decode_fuzz: invariant broken: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    using namespace optireduce::wire;
    // A copy of exactly `size` bytes, so ASan sees a read past the end.
    std::vector<std::byte> d(size);
    if (size) std::memcpy(d.data(), data, size);
    const Decoded dec = decode(d);
    if (!dec.header) {
        if (std::strlen(to_string(dec.error)) == 0) fail("an error without a description");
        return 0;
    }
    const Header &h = *dec.header;
    if (size < kHeaderBytes || h.payload_len != size - kHeaderBytes) fail("accepted a length that does not match");
    if (h.version != kVersion) fail("accepted another version");
    if (is_repair_request(h.phase) && (h.payload_len == 0 || h.payload_len % 4 != 0 || h.flags != 0))
        fail("accepted a malformed repair request");
    if (h.phase == Phase::hole_vote && (h.payload_len == 0 || h.flags != 0)) fail("accepted a malformed hole vote");
    if (h.phase != Phase::all_gather && (h.shard_error != 0 || (h.flags & kEarly)))
        fail("accepted all-gather fields outside the all-gather");
    if (h.phase != Phase::reduce_scatter && (h.flags & kWaited)) fail("accepted kWaited outside the reduce-scatter");
    if (h.shard_error >= 0x7c00) fail("accepted a shard error that is not finite and non-negative");
    std::byte again[kHeaderBytes];
    encode(h, std::span<std::byte, kHeaderBytes>(again, kHeaderBytes));
    if (std::memcmp(again, d.data(), kHeaderBytes) != 0) fail("re-encoding an accepted header changed its bytes");
    return 0;
}
