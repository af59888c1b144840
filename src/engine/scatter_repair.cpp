#include "engine/scatter_repair.hpp"

#include <cstring>

namespace optireduce {

const char *answer_scatter_request(const ScatterSource &source, std::size_t floats_per_datagram, const wire::Header &h,
                                   std::span<const std::byte> payload, fi_addr_t dest, std::size_t room,
                                   std::vector<RepairJob> &out) {
    if (h.src_rank >= source.shards.size() || floats_per_datagram == 0)
        return "reduce-scatter repair request from a rank without a shard";
    const Range shard = source.shards[h.src_rank];
    const std::size_t chunks = segment_count(shard.count, floats_per_datagram);
    const std::size_t asked = payload.size() / sizeof(std::uint32_t);
    std::vector<std::uint32_t> asked_chunks(asked);
    std::memcpy(asked_chunks.data(), payload.data(), asked * sizeof(std::uint32_t));  // host order, as asked
    for (const std::uint32_t chunk : asked_chunks)
        if (chunk >= chunks) return "reduce-scatter repair request for a chunk beyond the shard";
    wire::Header a = source.header;
    a.flags &= static_cast<std::uint8_t>(~wire::kTail);
    for (const std::uint32_t chunk : asked_chunks) {
        const Range g = segment_of(shard.count, floats_per_datagram, chunk);
        if (g.count * sizeof(float) > room) break;
        room -= g.count * sizeof(float);
        a.chunk = chunk;
        a.payload_len = static_cast<std::uint16_t>(g.count * sizeof(float));
        RepairJob &job = out.emplace_back();
        job.dest = dest;
        job.scatter = true;
        wire::encode(a, job.header);
        const float *from = source.wire + shard.offset + g.offset;
        job.payload.assign(from, from + g.count);
    }
    return "";
}

void scatter_missing(const ChunkBitmap &map, std::span<const SenderFacts> senders, RepairAsks &asks) {
    asks.clear();
    for (std::size_t s = 0; s < map.size() && s < senders.size(); ++s) {
        if (map.received(s) == map.chunks(s) || senders[s].started == Clock::time_point{}) continue;
        std::vector<std::uint32_t> &holes = asks.emplace_back(s, std::vector<std::uint32_t>{}).second;
        for (std::uint32_t c = 0; c < map.chunks(s); ++c)
            if (!map.test(s, c)) holes.push_back(c);
    }
}

}  // namespace optireduce
