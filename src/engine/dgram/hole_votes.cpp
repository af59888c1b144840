// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/hole_votes.hpp"

#include "engine/dgram/seq_order.hpp"
#include "telemetry/log.hpp"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace optireduce {
namespace {

constexpr std::size_t kAnswersQueued = 64;

// A vote is one small datagram: retry a full queue briefly rather than lose it (it is resent
// anyway while the exchange lasts).
void send_one(DgramEndpoint &ep, fi_addr_t dest, std::span<const std::byte> d) {
    const auto header = d.first(wire::kHeaderBytes);
    const auto payload = d.subspan(wire::kHeaderBytes);
    int rc = -FI_EAGAIN;
    for (int tries = 0; rc == -FI_EAGAIN && tries < 100; ++tries) rc = ep.send(dest, header, payload);
    if (rc != 0) OPTIREDUCE_LOG(debug, "hole vote not sent: %s", fi_strerror(-rc));
}

}  // namespace

void HoleVotes::add_comm(CommKey key, int rank, int size, std::vector<fi_addr_t> peers) {
    std::lock_guard lock(mutex_);
    Comm &c = comms_[key];
    c.rank = rank;
    c.size = size;
    c.peers = std::move(peers);
}

void HoleVotes::remove_comm(CommKey key) {
    std::lock_guard lock(mutex_);
    comms_.erase(key);
}

HoleVotes::Round &HoleVotes::start_round(Comm &c, Round &r) {
    if (!r.in.empty()) return r;
    const auto n = static_cast<std::size_t>(c.size);
    r.in.assign(n, 0);
    r.reply_due.assign(n, 0);
    r.votes.assign(n, {});
    r.last_sent.assign(n, Clock::time_point{});
    return r;
}

std::vector<std::byte> HoleVotes::datagram(CommKey key, const Comm &c, std::uint32_t seq, const Round &r, bool final) {
    HoleVote v{r.in, r.ours, final};
    v.have[static_cast<std::size_t>(c.rank)] = 1;
    std::vector<std::byte> payload = encode_vote(v, r.max_payload);
    if (payload.empty()) return {};
    wire::Header h = wire_header_for(key, c.rank, seq, wire::Phase::hole_vote);
    h.payload_len = static_cast<std::uint16_t>(payload.size());
    std::vector<std::byte> d(wire::kHeaderBytes);
    wire::encode(h, std::span<std::byte, wire::kHeaderBytes>(d.data(), wire::kHeaderBytes));
    d.insert(d.end(), payload.begin(), payload.end());
    return d;
}

const char *HoleVotes::on_vote(CommKey key, const wire::Header &h, std::span<const std::byte> payload) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return "hole vote for a communicator not served here";
    Comm &c = it->second;
    const std::size_t src = h.src_rank, me = static_cast<std::size_t>(c.rank);
    if (auto done = c.closed.find(h.seq); done != c.closed.end()) {
        // The peer is still asking for a round we closed: repeat our final vote to it.
        const std::optional<HoleVote> v = decode_vote(payload, c.size, std::numeric_limits<std::uint32_t>::max());
        if (!v) return "malformed hole vote";
        if (v->needs_from(me) && c.answers.size() < kAnswersQueued && !done->second.empty()) {
            c.answers.push_back({c.peers[src], done->second});
            pending_.store(true, std::memory_order_release);
        }
        return "";
    }
    if (!c.closed.empty() && seq_before(h.seq, c.closed.begin()->first)) return "";  // older: nobody waits
    auto r = c.rounds.find(h.seq);
    if (r == c.rounds.end()) {
        if (c.rounds.size() >= kRoundsKept) return "hole vote for an operation too far ahead";
        r = c.rounds.emplace(h.seq, Round{}).first;
    }
    Round &round = start_round(c, r->second);
    const std::uint64_t bound = round.opened ? round.total_chunks : std::numeric_limits<std::uint32_t>::max();
    std::optional<HoleVote> v = decode_vote(payload, c.size, bound);
    if (!v) return "malformed hole vote";
    if (!round.in[src]) round.votes[src] = std::move(v->holes);
    round.in[src] = 1;
    if (v->needs_from(me)) round.reply_due[src] = 1;
    return "";
}

void HoleVotes::open(CommKey key, std::uint32_t seq, std::uint64_t total_chunks, std::vector<ChunkRange> holes,
                     std::size_t max_payload) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return;
    Comm &c = it->second;
    Round &r = start_round(c, c.rounds[seq]);
    r.opened = true;
    r.total_chunks = total_chunks;
    r.max_payload = max_payload;
    // What peers get is our holes coarsened to fit one datagram (encode_vote): we fill that same
    // superset, or the replicas differ wherever a gap between our holes was closed.
    r.ours = coarsen_ranges(merge_ranges(std::move(holes)), vote_max_ranges(c.size, max_payload));
    // Votes that came before we knew the result's size: drop ranges beyond it (a malformed vote).
    for (std::vector<ChunkRange> &v : r.votes)
        std::erase_if(v, [&](const ChunkRange &x) { return std::uint64_t{x.first} + x.count > total_chunks; });
}

void HoleVotes::send(DgramEndpoint &ep, CommKey key, std::uint32_t seq, Clock::time_point now, Clock::duration every) {
    std::vector<fi_addr_t> dests;
    std::vector<std::byte> d;
    {
        std::lock_guard lock(mutex_);
        auto it = comms_.find(key);
        if (it == comms_.end()) return;
        Comm &c = it->second;
        auto r = c.rounds.find(seq);
        if (r == c.rounds.end() || !r->second.opened) return;
        Round &round = r->second;
        for (std::size_t p = 0; p < round.in.size(); ++p) {
            if (static_cast<int>(p) == c.rank) continue;
            // Once to every peer; again, as a request, to a peer whose vote we lack; at once to a
            // peer that lacks ours.
            const bool first = round.last_sent[p] == Clock::time_point{};
            if (!round.reply_due[p] && !first && (round.in[p] || now - round.last_sent[p] < every)) continue;
            round.reply_due[p] = 0;
            round.last_sent[p] = now;
            dests.push_back(c.peers[p]);
        }
        if (!dests.empty()) d = datagram(key, c, seq, round, false);
    }
    if (d.empty()) return;
    for (const fi_addr_t dest : dests) send_one(ep, dest, d);
}

bool HoleVotes::done(CommKey key, std::uint32_t seq) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return true;
    auto r = it->second.rounds.find(seq);
    if (r == it->second.rounds.end()) return false;
    const Round &round = r->second;
    for (std::size_t p = 0; p < round.in.size(); ++p)
        if (static_cast<int>(p) != it->second.rank && !round.in[p]) return false;
    return true;
}

bool HoleVotes::voted(CommKey key, std::uint32_t seq, int peer) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return false;
    auto r = it->second.rounds.find(seq);
    const auto p = static_cast<std::size_t>(peer);
    return r != it->second.rounds.end() && p < r->second.in.size() && r->second.in[p] != 0;
}

int HoleVotes::first_lacking(CommKey key, std::uint32_t seq) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(key);
    if (it == comms_.end()) return -1;
    auto r = it->second.rounds.find(seq);
    for (int p = 0; p < it->second.size; ++p) {
        if (p == it->second.rank) continue;
        if (r == it->second.rounds.end() || !r->second.in[static_cast<std::size_t>(p)]) return p;
    }
    return -1;
}

HoleVotes::Outcome HoleVotes::close(CommKey key, std::uint32_t seq) {
    std::lock_guard lock(mutex_);
    Outcome out;
    auto it = comms_.find(key);
    if (it == comms_.end()) return out;
    Comm &c = it->second;
    auto r = c.rounds.find(seq);
    if (r == c.rounds.end()) return out;
    Round &round = r->second;
    std::vector<ChunkRange> all = round.ours;
    for (std::size_t p = 0; p < round.in.size(); ++p) {
        if (static_cast<int>(p) == c.rank) continue;
        if (!round.in[p]) ++out.missing;
        all.insert(all.end(), round.votes[p].begin(), round.votes[p].end());
    }
    out.holes = merge_ranges(std::move(all));
    c.closed[seq] = datagram(key, c, seq, round, true);
    if (c.closed.size() > kClosedKept) c.closed.erase(c.closed.begin());
    c.rounds.erase(r);
    return out;
}

void HoleVotes::serve(DgramEndpoint &ep) {
    if (!pending_.load(std::memory_order_acquire)) return;
    std::vector<Answer> answers;
    {
        std::lock_guard lock(mutex_);
        pending_.store(false, std::memory_order_relaxed);
        for (auto &[key, c] : comms_) {
            for (Answer &a : c.answers) answers.push_back(std::move(a));
            c.answers.clear();
        }
    }
    for (const Answer &a : answers) send_one(ep, a.dest, a.datagram);
}

}  // namespace optireduce
