// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/phase2_repair.hpp"

#include "codec/sharding.hpp"
#include "engine/deadlines/queue_budget.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

namespace optireduce {

void Phase2Repair::add_comm(CommKey key, int rank, std::vector<fi_addr_t> peers) {
    std::lock_guard lock(mutex_);
    Comm &c = comms_[key];
    c.rank = rank;
    c.peers = std::move(peers);
}

void Phase2Repair::remove_comm(CommKey key) {
    std::lock_guard lock(mutex_);
    comms_.erase(key);
}

void Phase2Repair::publish(CommKey key, std::uint32_t seq, const CodedStream &shard, std::uint16_t shard_error) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return;
    Comm &c = it->second;
    c.published = true;
    c.seq = seq;
    c.shard_error = shard_error;
    c.shard_bytes.assign(shard.data, shard.data + CodedStream::bytes_for(shard.codec, shard.entries, shard.per_chunk));
    c.shard = shard;
    c.shard.data = c.shard_bytes.data();
}

const char *Phase2Repair::queue(CommKey key, const wire::Header &h, std::span<const std::byte> payload) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return "repair request for a communicator not served here";
    Comm &c = it->second;
    if (c.requests.size() >= kQueuedRequestsPerComm) return "repair request queue full";
    Request r{h.seq, h.src_rank, std::vector<std::uint32_t>(payload.size() / sizeof(std::uint32_t))};
    for (std::size_t i = 0; i < r.chunks.size(); ++i)
        std::memcpy(&r.chunks[i], payload.data() + i * sizeof(std::uint32_t), sizeof(std::uint32_t));  // host order
    c.requests.push_back(std::move(r));
    pending_.store(true, std::memory_order_release);
    return "";
}

void Phase2Repair::queue_answers(CommKey key, std::vector<RepairJob> &answers) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end() || answers.empty()) return;
    Comm &c = it->second;
    for (RepairJob &j : answers) {
        c.answer_bytes += j.payload.size();
        c.answers.push_back(std::move(j));
    }
    pending_.store(true, std::memory_order_release);
}

std::size_t Phase2Repair::answer_room(CommKey key) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return 0;
    return kQueuedAnswerBytes - std::min(kQueuedAnswerBytes, it->second.answer_bytes);
}

void Phase2Repair::take(std::vector<RepairJob> &out) {
    out.clear();
    std::lock_guard lock(mutex_);
    pending_.store(false, std::memory_order_relaxed);
    // The all-gather's answers first: its holes are filled alike on every rank, and every rank's
    // hole vote waits for them.
    for (auto &[key, c] : comms_) {
        for (const Request &r : c.requests) answer(key, c, r, out);
        c.requests.clear();
    }
    for (auto &[key, c] : comms_) {
        std::move(c.answers.begin(), c.answers.end(), std::back_inserter(out));
        c.answers.clear();
        c.answer_bytes = 0;
    }
}

void Phase2Repair::answer(CommKey key, const Comm &c, const Request &r, std::vector<RepairJob> &out) {
    // Only the latest shard is kept: a request for an older operation came too late.
    if (!c.published || r.seq != c.seq || c.shard.per_chunk == 0) {
        bump(process_stats().repair_chunks_unavailable, r.chunks.size());
        return;
    }
    wire::Header h = wire_header_for(key, c.rank, c.seq, wire::Phase::all_gather);
    h.shard_error = c.shard_error;
    h.flags = wire::codec_flags(static_cast<std::uint8_t>(c.shard.codec));
    const std::size_t chunks = c.shard.chunks();
    for (const std::uint32_t chunk : r.chunks) {
        if (chunk >= chunks) {
            bump(process_stats().datagrams_invalid);
            OPTIREDUCE_LOG(debug, "datagram dropped: repair request for a chunk beyond the shard");
            continue;
        }
        append_answer(out, c.peers[r.src], false, h, c.shard, chunk);
    }
}

void append_answer(std::vector<RepairJob> &out, fi_addr_t dest, bool scatter, wire::Header header,
                   const CodedStream &stream, std::uint32_t chunk) {
    const std::span<const std::byte> bytes = stream.chunk(chunk);
    header.chunk = chunk;
    header.payload_len = static_cast<std::uint16_t>(bytes.size());
    RepairJob &job = out.emplace_back();
    job.dest = dest;
    job.scatter = scatter;
    wire::encode(header, job.header);
    job.payload.assign(bytes.begin(), bytes.end());
}

std::int64_t Phase2Repair::answer_queue_cap(double drain_bytes_per_s) {
    return QueueBudget::drains_within(drain_bytes_per_s, kAnswerQueueWindow);
}

std::int64_t Phase2Repair::scatter_answer_queue_cap(double drain_bytes_per_s) {
    return QueueBudget::drains_within(drain_bytes_per_s, kScatterAnswerQueueWindow);
}

void Phase2Repair::serve(DgramEndpoint &ep, double drain_bytes_per_s) {
    if (!pending()) return;
    thread_local std::vector<RepairJob> jobs;
    take(jobs);
    std::uint64_t sent = 0, scatter_sent = 0, held_back = 0;
    // Answers queue behind what our host still holds, and so does our hole vote, which every
    // peer waits for: behind a slow uplink, peers that missed most of our shard asked for all
    // of it, and the answers held a megabyte (90 ms at 90 Mbit/s) in front of the vote in every
    // operation of the spell. So they go only while the host's queue is short (a few
    // milliseconds of its drain rate, answer_queue_cap); the rest are dropped, and the requester
    // asks again while its phase has time.
    const std::int64_t cap = answer_queue_cap(drain_bytes_per_s),
                       scatter_cap = scatter_answer_queue_cap(drain_bytes_per_s);
    std::int64_t queued = ep.queued_bytes();  // -1: the channel cannot tell, no cap
    for (const RepairJob &j : jobs) {
        if (queued > (j.scatter ? scatter_cap : cap)) {
            ++held_back;
            continue;
        }
        // Best effort: a full queue or a failed send is one more loss, which the requester
        // already accounts for.
        const std::span<const std::byte> payload(j.payload);
        if (ep.send(j.dest, j.header, payload) == 0) {
            ++(j.scatter ? scatter_sent : sent);
            if (queued >= 0) queued += static_cast<std::int64_t>(j.header.size() + payload.size());
        }
    }
    if (held_back > 0)
        OPTIREDUCE_LOG(debug, "repair: %llu chunks answered, %llu not (our host's queue is full)",
                       static_cast<unsigned long long>(sent + scatter_sent),
                       static_cast<unsigned long long>(held_back));
    bump(process_stats().repair_chunks_sent, sent);
    bump(process_stats().scatter_repair_chunks_sent, scatter_sent);
    bump(process_stats().datagrams_sent, sent + scatter_sent);
}

void Phase2Repair::missing(const ChunkBitmap &map, RepairAsks &asks, const std::function<bool(std::size_t)> &asked) {
    asks.clear();
    for (std::size_t i = 0; i < map.size(); ++i) {
        if (map.received(i) == map.chunks(i) || (asked && !asked(i))) continue;
        std::vector<std::uint32_t> &holes = asks.emplace_back(i, std::vector<std::uint32_t>{}).second;
        for (std::uint32_t c = 0; c < map.chunks(i); ++c)
            if (!map.test(i, c)) holes.push_back(c);
    }
}

namespace {

// Asks `dest` for `chunks`, in as many requests as the datagram size needs. Returns "" or what
// failed.
std::string request(DgramEndpoint &ep, fi_addr_t dest, const wire::Header &base, std::span<const std::uint32_t> chunks,
                    std::size_t max_payload_bytes) {
    const std::size_t per = std::max<std::size_t>(1, max_payload_bytes / sizeof(std::uint32_t));
    std::array<std::byte, wire::kHeaderBytes> header{};
    std::vector<std::byte> payload;
    for (std::size_t at = 0; at < chunks.size(); at += per) {
        const std::size_t n = std::min(per, chunks.size() - at);
        wire::Header h = base;
        h.payload_len = static_cast<std::uint16_t>(n * sizeof(std::uint32_t));
        wire::encode(h, header);
        payload.resize(n * sizeof(std::uint32_t));
        std::memcpy(payload.data(), chunks.data() + at, payload.size());
        int rc;
        // A request is one datagram: retry a full queue briefly rather than lose it.
        for (int tries = 0; (rc = ep.send(dest, header, payload)) == -FI_EAGAIN && tries < 100; ++tries) {
        }
        if (rc != 0 && rc != -FI_EAGAIN) return "repair request: " + std::string(fi_strerror(-rc));
        bump(base.phase == wire::Phase::scatter_repair ? process_stats().scatter_repair_chunks_requested
                                                       : process_stats().repair_chunks_requested,
             n);
    }
    return {};
}

}  // namespace

void Phase2Repair::ask(DgramEndpoint &ep, std::span<const fi_addr_t> peers, CommKey key, int rank, std::uint32_t seq,
                       const RepairAsks &asks, std::size_t max_payload_bytes, wire::Phase phase) {
    const wire::Header base = wire_header_for(key, rank, seq, phase);
    for (const auto &[peer, holes] : asks)
        if (std::string e = request(ep, peers[peer], base, holes, max_payload_bytes); !e.empty())
            OPTIREDUCE_LOG(debug, "op %u: %s", seq, e.c_str());
}

}  // namespace optireduce
