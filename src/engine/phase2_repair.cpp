#include "engine/phase2_repair.hpp"

#include "codec/sharding.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

namespace optireduce {

void DgramRouter::publish_shard(CommKey key, std::uint32_t seq, std::span<const float> shard,
                                std::size_t floats_per_datagram, std::uint16_t shard_error) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return;
    Comm::Published &p = it->second.published;
    p.valid = true;
    p.seq = seq;
    p.floats_per_datagram = floats_per_datagram;
    p.shard_error = shard_error;
    p.shard.assign(shard.begin(), shard.end());
}

// Under mutex_, from on_datagram: checks 1-3 passed.
void DgramRouter::queue_repair(Comm &c, const wire::Header &h, std::span<const std::byte> payload) {
    if (c.requests.size() >= kQueuedRequestsPerComm) return reject("repair request queue full");
    Comm::Request r{h.seq, h.src_rank, std::vector<std::uint32_t>(payload.size() / sizeof(std::uint32_t))};
    for (std::size_t i = 0; i < r.chunks.size(); ++i) {
        std::uint32_t v;
        std::memcpy(&v, payload.data() + i * sizeof v, sizeof v);  // host order, as the float payloads
        r.chunks[i] = v;
    }
    c.requests.push_back(std::move(r));
    repairs_pending_.store(true, std::memory_order_release);
}

void DgramRouter::take_repairs(std::vector<RepairJob> &out) {
    out.clear();
    std::lock_guard lock(mutex_);
    repairs_pending_.store(false, std::memory_order_relaxed);
    for (auto &[key, c] : comms_) {
        const Comm::Published &p = c.published;
        for (const Comm::Request &r : c.requests) {
            // Only the latest shard is kept: a request for an older operation came too late.
            if (!p.valid || r.seq != p.seq || p.floats_per_datagram == 0) {
                bump(process_stats().repair_chunks_unavailable, r.chunks.size());
                continue;
            }
            wire::Header h;
            h.phase = wire::Phase::all_gather;
            h.job_nonce = key.nonce;
            h.comm_id = key.comm_id;
            h.seq = p.seq;
            h.src_rank = static_cast<std::uint32_t>(c.rank);
            h.shard_error = p.shard_error;
            const std::size_t chunks = segment_count(p.shard.size(), p.floats_per_datagram);
            for (const std::uint32_t chunk : r.chunks) {
                if (chunk >= chunks) {
                    reject("repair request for a chunk beyond the shard");
                    continue;
                }
                const Range g = segment_of(p.shard.size(), p.floats_per_datagram, chunk);
                h.chunk = chunk;
                h.payload_len = static_cast<std::uint16_t>(g.count * sizeof(float));
                RepairJob &job = out.emplace_back();
                job.dest = c.peers[r.src];
                wire::encode(h, job.header);
                job.payload.assign(p.shard.begin() + static_cast<std::ptrdiff_t>(g.offset),
                                   p.shard.begin() + static_cast<std::ptrdiff_t>(g.offset + g.count));
            }
        }
        c.requests.clear();
    }
}

void serve_repairs(DgramEndpoint &ep, DgramRouter &router) {
    if (!router.repairs_pending()) return;
    thread_local std::vector<RepairJob> jobs;
    router.take_repairs(jobs);
    std::uint64_t sent = 0;
    for (const RepairJob &j : jobs) {
        // Best effort: a full queue or a failed send is one more loss, which the requester
        // already accounts for.
        const auto payload = std::as_bytes(std::span(j.payload));
        if (ep.send(j.dest, j.header, payload) == 0) ++sent;
    }
    bump(process_stats().repair_chunks_sent, sent);
    bump(process_stats().datagrams_sent, sent);
}

std::string request_repair(DgramEndpoint &ep, fi_addr_t dest, const wire::Header &base,
                           std::span<const std::uint32_t> chunks, std::size_t max_payload_bytes) {
    const std::size_t per = std::max<std::size_t>(1, max_payload_bytes / sizeof(std::uint32_t));
    std::array<std::byte, wire::kHeaderBytes> header{};
    std::vector<std::byte> payload;
    for (std::size_t at = 0; at < chunks.size(); at += per) {
        const std::size_t n = std::min(per, chunks.size() - at);
        wire::Header h = base;
        h.phase = wire::Phase::repair;
        h.flags = 0;
        h.shard_error = 0;
        h.chunk = 0;
        h.payload_len = static_cast<std::uint16_t>(n * sizeof(std::uint32_t));
        wire::encode(h, header);
        payload.resize(n * sizeof(std::uint32_t));
        std::memcpy(payload.data(), chunks.data() + at, payload.size());
        int rc;
        // A request is one datagram: retry a full queue briefly rather than lose it.
        for (int tries = 0; (rc = ep.send(dest, header, payload)) == -FI_EAGAIN && tries < 100; ++tries) {
        }
        if (rc != 0 && rc != -FI_EAGAIN) return "repair request: " + std::string(fi_strerror(-rc));
        bump(process_stats().repair_chunks_requested, n);
    }
    return {};
}

void missing_chunks(const ChunkBitmap &map, RepairAsks &asks) {
    asks.clear();
    for (std::size_t i = 0; i < map.size(); ++i) {
        if (map.received(i) == map.chunks(i)) continue;
        std::vector<std::uint32_t> &missing = asks.emplace_back(i, std::vector<std::uint32_t>{}).second;
        for (std::uint32_t c = 0; c < map.chunks(i); ++c)
            if (!map.test(i, c)) missing.push_back(c);
    }
}

void ask_repairs(DgramEndpoint &ep, std::span<const fi_addr_t> peers, const wire::Header &base, const RepairAsks &asks,
                 std::size_t max_payload_bytes) {
    for (const auto &[peer, missing] : asks)
        if (std::string e = request_repair(ep, peers[peer], base, missing, max_payload_bytes); !e.empty())
            OPTIREDUCE_LOG(debug, "op %u: %s", base.seq, e.c_str());
}

}  // namespace optireduce
