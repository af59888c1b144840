// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/dgram_router.hpp"

#include "codec/sharding.hpp"
#include "engine/dgram/seq_order.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace optireduce {
namespace {

// A held datagram's prefix: its length (uint32: a datagram is up to 40 + 65535 bytes) and
// arrival time (Clock::rep).
constexpr std::size_t kHeldPrefix = sizeof(std::uint32_t) + sizeof(Clock::rep);

bool flagged(const std::vector<std::uint8_t> &per_sender, std::uint32_t s) {
    return s < per_sender.size() && per_sender[s] != 0;
}

}  // namespace

void DgramRouter::add_comm(CommKey key, int rank, int size, std::vector<fi_addr_t> peers) {
    std::lock_guard lock(mutex_);
    Comm &c = comms_[key];
    c.rank = rank;
    c.size = size;
    c.peers = std::move(peers);
    c.latest.assign(static_cast<std::size_t>(size), 0);
    c.heard.assign(static_cast<std::size_t>(size), 0);
    c.last_heard.assign(static_cast<std::size_t>(size), Clock::time_point{});
    repair_.add_comm(key, rank, c.peers);
    votes_.add_comm(key, rank, size, c.peers);
}

void DgramRouter::remove_comm(CommKey key) {
    std::lock_guard lock(mutex_);
    comms_.erase(key);
    repair_.remove_comm(key);
    votes_.remove_comm(key);
    if (retired_.size() >= kRetiredKept) retired_.erase(retired_.begin());
    retired_.insert(key);
}

void DgramRouter::reject(const char *why) {
    bump(process_stats().datagrams_invalid);
    OPTIREDUCE_LOG(debug, "datagram dropped: %s", why);
}

void DgramRouter::on_datagram(std::span<const std::byte> d, fi_addr_t source) {
    const wire::Decoded dec = wire::decode(d);  // check 1: the header alone
    std::lock_guard lock(mutex_);
    if (!dec.header) return reject(wire::to_string(dec.error));
    const wire::Header &h = *dec.header;
    auto it = comms_.find({h.job_nonce, h.comm_id});  // check 2
    if (it == comms_.end()) {
        if (retired_.count({h.job_nonce, h.comm_id})) return bump(process_stats().datagrams_late);
        return reject("job nonce or communicator id not served here");
    }
    Comm &c = it->second;
    // Check 3. FI_SOURCE, where the provider resolves it, must name the rank the header claims.
    if (h.src_rank >= static_cast<std::uint32_t>(c.size) || h.src_rank == static_cast<std::uint32_t>(c.rank) ||
        (source != FI_ADDR_NOTAVAIL && source != c.peers[h.src_rank]))
        return reject("source rank out of range, our own, or not the sending address");
    const Clock::time_point now = Clock::now();
    c.last_heard[h.src_rank] = now;
    if (h.phase == wire::Phase::repair) {
        if (const char *why = repair_.queue(it->first, h, d.subspan(wire::kHeaderBytes)); *why) reject(why);
        return;
    }
    if (h.phase == wire::Phase::scatter_repair) {
        if (const char *why = answer_scatter(it->first, c, h, d.subspan(wire::kHeaderBytes)); *why) reject(why);
        return;
    }
    if (h.phase == wire::Phase::hole_vote) {
        if (const char *why = votes_.on_vote(it->first, h, d.subspan(wire::kHeaderBytes)); *why) reject(why);
        changed_.notify_all();
        return;
    }
    dispatch(c, h, d, now);
}

// Check 5: which operation.
void DgramRouter::dispatch(Comm &c, const wire::Header &h, std::span<const std::byte> d, Clock::time_point now) {
    // A sender already on a later operation has sent all it will send for the earlier ones
    // open here: they note it (OpReceive::ahead), so they do not wait for it as for a straggler;
    // an operation opened later learns it from `latest`.
    const std::size_t src = h.src_rank;
    if (!c.heard[src] || seq_before(c.latest[src], h.seq)) c.latest[src] = h.seq;
    c.heard[src] = 1;
    for (auto &[seq, earlier] : c.open)
        if (seq_before(seq, h.seq)) earlier->ahead[src] = 1;
    auto op = c.open.find(h.seq);
    if (op != c.open.end()) return place(*op->second, h, d.subspan(wire::kHeaderBytes), now);
    if (seq_before(h.seq, c.next_open)) return count_late(c, h, now);
    hold(c, h.seq, d, now);
}

const char *DgramRouter::answer_scatter(CommKey key, Comm &c, const wire::Header &h,
                                        std::span<const std::byte> payload) {
    auto op = c.open.find(h.seq);
    if (op == c.open.end() || !op->second->scatter.offered) {
        // Asked after we closed the operation (or before our transform): nothing to send from.
        bump(process_stats().scatter_repair_chunks_unavailable, payload.size() / sizeof(std::uint32_t));
        return "";
    }
    const OpReceive &r = *op->second;
    std::vector<RepairJob> answers;
    if (const char *why =
            answer_scatter_request(r.scatter, h, payload, c.peers[h.src_rank], repair_.answer_room(key), answers);
        *why)
        return why;
    repair_.queue_answers(key, answers);
    return "";
}

void DgramRouter::offer_scatter(OpReceive &op, ScatterSource source) {
    std::lock_guard lock(mutex_);
    op.scatter = std::move(source);
}

void DgramRouter::count_late(Comm &c, const wire::Header &h, Clock::time_point now) {
    bump(process_stats().datagrams_late);
    auto &k = c.closed[h.seq % c.closed.size()];
    if (!k.valid || k.seq != h.seq) return;
    const int p = h.phase == wire::Phase::reduce_scatter ? 0 : 1;
    if (now - k.closed_at[p] <= k.near_window[p] && !flagged(k.slow[p], h.src_rank)) ++k.misses.count[p];
}

Clock::time_point DgramRouter::last_heard(CommKey key, int src) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    const auto s = static_cast<std::size_t>(src);
    if (it == comms_.end() || s >= it->second.last_heard.size()) return {};
    return it->second.last_heard[s];
}

std::vector<NearMisses> DgramRouter::take_near_misses(CommKey key) {
    std::lock_guard lock(mutex_);
    std::vector<NearMisses> out;
    auto it = comms_.find(key);
    if (it == comms_.end()) return out;
    for (auto &k : it->second.closed) {
        // Reported once, after its near window has passed (later ones are not near misses).
        if (!k.valid || k.reported || Clock::now() - k.closed_at[1] <= k.near_window[1]) continue;
        k.reported = true;
        if (k.misses.count[0] || k.misses.count[1]) out.push_back(k.misses);
    }
    return out;
}

void DgramRouter::hold(Comm &c, std::uint32_t seq, std::span<const std::byte> d, Clock::time_point arrival) {
    // Held state is bounded twice: operations ahead and bytes. A rank that is that far behind
    // loses those datagrams, which its deadline then treats like any other loss.
    if (seq - c.next_open >= kHeldAheadOps || c.held_bytes + d.size() > kHeldBytesPerComm) {
        bump(process_stats().datagrams_held_dropped);
        // Peers this far ahead do not wait for this rank: it is a straggler beyond their
        // straggler bound, every operation, and loses most of what they send it. Say so once.
        if (!c.warned_behind) {
            c.warned_behind = true;
            OPTIREDUCE_LOG(warn,
                           "peers are %u operations ahead of this rank on a communicator: their datagrams are "
                           "dropped here (datagrams_held_dropped). This rank is slower every step (more work "
                           "than the others, e.g. evaluation or logging on rank 0) by more than "
                           "OPTIREDUCE_STRAGGLER_MAX_MS; balance the work or raise that maximum",
                           seq - c.next_open + 1);
        }
        return;
    }
    std::vector<std::byte> &buf = c.held[seq];
    const auto len = static_cast<std::uint32_t>(d.size());
    const Clock::rep arrival_rep = arrival.time_since_epoch().count();
    const std::size_t at = buf.size();
    buf.resize(at + kHeldPrefix + d.size());
    std::memcpy(buf.data() + at, &len, sizeof len);
    std::memcpy(buf.data() + at + sizeof len, &arrival_rep, sizeof arrival_rep);
    std::memcpy(buf.data() + at + kHeldPrefix, d.data(), d.size());
    c.held_bytes += d.size();
    bump(process_stats().datagrams_held);
}

// Checks 4 and 6, then the copy into staging.
void DgramRouter::place(OpReceive &op, const wire::Header &h, std::span<const std::byte> payload,
                        Clock::time_point arrival) {
    const int p = h.phase == wire::Phase::reduce_scatter ? 0 : 1;
    if (OpReceive::Window &w = op.window[p]; !w.open) {
        bump(process_stats().datagrams_late);
        if (Clock::now() - w.closed_at <= w.near_window && !flagged(w.slow, h.src_rank)) ++w.near_misses;
        return;
    }
    const std::size_t s = h.src_rank;
    ChunkBitmap &map = op.map[p];
    const std::size_t F = op.floats_per_datagram;
    if (h.chunk >= map.chunks(s)) return reject("chunk index beyond the stream");
    const Range g = segment_of(op.length[p][s], F, h.chunk);
    if (wire::codec_of(h.flags) != static_cast<std::uint8_t>(op.codec))
        return reject("payload coded otherwise than the communicator's codec");
    if (payload.size() != coded_bytes(op.codec, g.count)) return reject("payload length is not the chunk's");
    if (!map.set(s, h.chunk, (h.flags & wire::kTail) != 0)) {
        bump(process_stats().datagrams_duplicate);
        return;
    }
    decode_chunk(op.codec, payload.data(), g.count, op.dest[p][s] + g.offset);
    op.last_arrival[p] = std::max(op.last_arrival[p], arrival);
    op.last_from[p][s] = std::max(op.last_from[p][s], arrival);
    // The sender's clock starts here; its owner's wait condition changes (its end moves from the
    // straggler bound to the deadline), so the owner is woken below. An early all-gather datagram
    // does not start it (the rest of the shard comes after the sender's reduce-scatter), unless
    // it is a tail: then the whole stream went early and nothing later would.
    const bool starts =
        op.started[p][s] == Clock::time_point{} && (!(h.flags & wire::kEarly) || (h.flags & wire::kTail));
    if (starts) op.started[p][s] = arrival;
    op.loss_hint[s] = h.loss_hint;
    op.deadline_us[p][s] = h.sender_deadline_us;
    if (h.flags & wire::kWaited) op.waited[s] = 1;
    // Non-negative binary16 values order like their bits (decode refused anything else).
    if (p == 1) op.shard_error[s] = std::max(op.shard_error[s], h.shard_error);
    bool chunk_ready = false;
    if (p == 0 && op.contributors > 0 && ++op.arrivals[h.chunk] == op.contributors) {
        op.ready.push_back(h.chunk);
        chunk_ready = true;
    }
    // Wake the owner only when its wait condition may have changed.
    if (starts || chunk_ready || map.complete() || map.all_tails()) changed_.notify_all();
}

template <typename Fn>
void DgramRouter::take_held(Comm &c, std::uint32_t seq, Fn &&each) {
    if (!seq_before(seq, c.next_open)) c.next_open = seq + 1;
    auto held = c.held.find(seq);
    if (held == c.held.end()) return;
    const std::vector<std::byte> buf = std::move(held->second);
    c.held.erase(held);
    for (std::size_t at = 0; at + kHeldPrefix <= buf.size();) {
        std::uint32_t len;
        Clock::rep arrival;
        std::memcpy(&len, buf.data() + at, sizeof len);
        std::memcpy(&arrival, buf.data() + at + sizeof len, sizeof arrival);
        const std::span<const std::byte> d(buf.data() + at + kHeldPrefix, len);
        at += kHeldPrefix + len;
        c.held_bytes -= len;
        each(d, Clock::time_point(Clock::duration(arrival)));
    }
}

void DgramRouter::open_op(CommKey key, OpReceive *op) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return;
    Comm &c = it->second;
    c.open[op->seq] = op;
    for (std::size_t s = 0; s < c.heard.size() && s < op->ahead.size(); ++s)
        op->ahead[s] = c.heard[s] && seq_before(op->seq, c.latest[s]);
    // Replay what arrived early through the same checks as live datagrams.
    take_held(c, op->seq, [&](std::span<const std::byte> d, Clock::time_point arrival) {
        const wire::Decoded dec = wire::decode(d);
        if (dec.header) place(*op, *dec.header, d.subspan(wire::kHeaderBytes), arrival);
    });
}

void DgramRouter::skip_op(CommKey key, std::uint32_t seq) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return;
    take_held(it->second, seq,
              [](std::span<const std::byte>, Clock::time_point) { bump(process_stats().datagrams_late); });
}

void DgramRouter::close_op(CommKey key, OpReceive *op) {
    std::lock_guard lock(mutex_);
    op->window[0].open = op->window[1].open = false;
    op->scatter.offered = false;  // the owner may write it from now on
    auto it = comms_.find(key);
    if (it == comms_.end()) return;
    Comm &c = it->second;
    if (c.open.erase(op->seq) == 0) return;  // closed already (the owner's guard runs again)
    auto &k = c.closed[op->seq % c.closed.size()];
    k = {};
    k.seq = op->seq;
    k.valid = true;
    k.misses.bytes = op->bytes;
    for (int p = 0; p < 2; ++p) {
        k.closed_at[p] = op->window[p].closed_at;
        k.near_window[p] = op->window[p].near_window;
        k.slow[p] = op->window[p].slow;
        k.misses.expected[p] = op->map[p].expected();
        k.misses.count[p] = op->window[p].near_misses;  // e.g. phase 1's, while phase 2 ran
    }
}

void DgramRouter::close_phase(const std::unique_lock<std::mutex> &lock, OpReceive &op, int phase, Clock::time_point at,
                              Clock::duration near_window, std::span<const std::uint8_t> slow) {
    // The lock is the proof the caller holds the mutex the router writes the window under.
    assert(lock.owns_lock() && lock.mutex() == &mutex_);
    (void)lock;
    OpReceive::Window &w = op.window[phase];
    w.open = false;
    w.closed_at = at;
    w.near_window = near_window;
    w.slow.assign(slow.begin(), slow.end());
}

}  // namespace optireduce
