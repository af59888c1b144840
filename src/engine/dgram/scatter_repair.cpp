// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/scatter_repair.hpp"

#include <cstring>

namespace optireduce {

const char *answer_scatter_request(const ScatterSource &source, const wire::Header &h,
                                   std::span<const std::byte> payload, fi_addr_t dest, std::size_t room,
                                   std::vector<RepairJob> &out) {
    if (h.src_rank >= source.streams.size() || source.streams[h.src_rank].per_chunk == 0)
        return "reduce-scatter repair request from a rank without a shard";
    const CodedStream &stream = source.streams[h.src_rank];
    const std::size_t chunks = stream.chunks();
    const std::size_t asked = payload.size() / sizeof(std::uint32_t);
    std::vector<std::uint32_t> asked_chunks(asked);
    std::memcpy(asked_chunks.data(), payload.data(), asked * sizeof(std::uint32_t));  // host order, as asked
    for (const std::uint32_t chunk : asked_chunks)
        if (chunk >= chunks) return "reduce-scatter repair request for a chunk beyond the shard";
    wire::Header a = source.header;
    a.flags &= static_cast<std::uint8_t>(~wire::kTail);
    for (const std::uint32_t chunk : asked_chunks) {
        const std::size_t bytes = stream.chunk(chunk).size();
        if (bytes > room) break;
        room -= bytes;
        append_answer(out, dest, true, a, stream, chunk);
    }
    return "";
}

void scatter_missing(const ChunkBitmap &map, std::span<const SenderFacts> senders, RepairAsks &asks) {
    Phase2Repair::missing(map, asks, [senders](std::size_t s) {
        return s < senders.size() && senders[s].started != Clock::time_point{};
    });
}

}  // namespace optireduce
