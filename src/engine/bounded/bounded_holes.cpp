// SPDX-License-Identifier: BSD-3-Clause
// OPTIREDUCE_IDENTICAL_REPLICAS: the hole exchange after the all-gather, and the fill that is the
// same on every rank (engine/dgram/hole_votes.hpp says why and how).
#include "codec/block_rescale.hpp"
#include "codec/estimators.hpp"
#include "engine/bounded/bounded_operation.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "engine/setup/context.hpp"
#include "engine/setup/faults.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

namespace optireduce {
namespace {

// Chunk numbers shared by every rank: shard s's chunks follow those of shards 0..s-1.
std::vector<std::uint64_t> chunk_bases(const BlockLayout &layout, int ranks, std::size_t F) {
    std::vector<std::uint64_t> base(static_cast<std::size_t>(ranks) + 1, 0);
    for (int s = 0; s < ranks; ++s)
        base[static_cast<std::size_t>(s) + 1] =
            base[static_cast<std::size_t>(s)] + segment_count(layout.shard(s).count, F);
    return base;
}

}  // namespace

std::vector<ChunkRange> BoundedOperation::our_holes() const {
    const std::vector<std::uint64_t> base = chunk_bases(layout_, comm_.size, b_.floats_per_datagram);
    const ChunkBitmap &map = rx_.map[1];
    std::vector<ChunkRange> holes;
    for (std::size_t s = 0; s < map.size(); ++s) {
        if (map.received(s) == map.chunks(s)) continue;
        for (std::uint32_t c = 0; c < map.chunks(s); ++c) {
            if (map.test(s, c)) continue;
            const auto g = static_cast<std::uint32_t>(base[s] + c);
            if (!holes.empty() && holes.back().first + holes.back().count == g)
                ++holes.back().count;
            else
                holes.push_back({g, 1});
        }
    }
    return holes;
}

bool BoundedOperation::lacking_vote_still_sending(Clock::time_point now) {
    HoleVotes &votes = router_.votes();
    for (int p = 0; p < comm_.size; ++p) {
        if (p == comm_.rank || votes.voted(b_.key, seq_, p)) continue;
        const Clock::time_point heard = router_.last_heard(b_.key, p);
        if (heard != Clock::time_point{} && now <= after_ms(heard, kVoteFlowGapMs)) return true;
    }
    return false;
}

void BoundedOperation::agree_on_holes() {
    HoleVotes &votes = router_.votes();
    DgramEndpoint &ep = *b_.channel->endpoint;
    const std::size_t F = b_.floats_per_datagram;
    injected_vote_delay(b_.faults);
    // The late votes we saw since the last operation (and the lesson's decay), before our vote
    // carries it.
    b_.vote_wait.learn_late(votes.take_late(b_.key));
    votes.open(b_.key, seq_, chunk_bases(layout_, comm_.size, F).back(), our_holes(), b_.payload_bytes,
               b_.vote_wait.lesson_100us());
    // A peer behind a slow link closes its all-gather up to both phases' deadlines after us (it
    // waits for the last reduce-scatter start, then the owners' streams), and its vote may then
    // queue behind up to one more deadline of its own data (StreamSender's send limit): twice
    // that before a missing vote counts. Only a slow peer makes the wait that long. The deadlines
    // do not show how long a peer waits for a core: what late votes showed is added (VoteWait),
    // never more than the straggler bound's cap (a few operations' deadlines): a vote that late
    // costs everyone more time than its holes are worth.
    const double deadline_ms = clock_[1].deadline_ms[1];
    const double base_ms = 2 * (clock_[1].deadline_ms[0] + deadline_ms) + 5;
    const double budget_ms = b_.vote_wait.budget_ms(base_ms, b_.stragglers.cap_ms());
    const auto budget = std::chrono::duration<double, std::milli>(budget_ms);
    const auto every = std::chrono::duration<double, std::milli>(std::max(1.0, deadline_ms / 16));
    const Clock::time_point start = Clock::now();
    // What our host still holds of our sends: our vote queues behind it (debug log only).
    const std::int64_t queued_at_start = log_enabled(LogLevel::debug) ? ep.queued_bytes() : -1;
    const Clock::time_point until = start + std::chrono::duration_cast<Clock::duration>(budget);
    // Past the budget, a peer whose vote is lacking but whose datagrams still come is alive and
    // sending what its host queued before the vote, which follows them through the same queue
    // (behind a link just slowed, a megabyte: 100 ms at 60-100 Mbit/s). It is waited for while
    // they flow, never past the same cap.
    const Clock::time_point hard_until = after_ms(start, base_ms + b_.stragglers.cap_ms());
    bool waited_flowing = false;
    for (;;) {
        const Clock::time_point now = Clock::now();
        votes.send(ep, b_.key, seq_, now, std::chrono::duration_cast<Clock::duration>(every));
        if (votes.done(b_.key, seq_)) break;
        if (now >= until) {
            if (now >= hard_until || !lacking_vote_still_sending(now)) break;
            waited_flowing = true;
        }
        const int got = drain();
        if (got < 0) {
            // The progress thread is draining: it notifies when a vote came.
            std::unique_lock lock(router_.mutex());
            router_.changed().wait_for(lock, std::chrono::microseconds(200));
        } else if (got == 0) {
            ep.wait(std::chrono::milliseconds(1));
        }
    }
    const Clock::time_point closed = Clock::now();
    const double past_base_ms = ms_between(start, closed) - base_ms;
    agreed_ = votes.close(b_.key, seq_, closed, std::max(0.0, past_base_ms));
    b_.vote_wait.learn_took(past_base_ms);
    b_.vote_wait.learn_from_peers(agreed_.peers_lesson_ms);
    if (agreed_.missing > 0) bump(process_stats().hole_votes_missing);
    std::uint64_t union_chunks = 0;
    for (const ChunkRange &r : agreed_.holes) union_chunks += r.count;
    OPTIREDUCE_LOG(debug,
                   "op %u hole vote: %.1f ms (budget %.1f, base %.1f%s), %d votes missing, %llu chunks in the union, "
                   "%lld bytes of ours queued on the host when it began",
                   seq_, ms_between(start, closed), budget_ms, base_ms,
                   waited_flowing ? ", waited past it for a peer still sending" : "", agreed_.missing,
                   static_cast<unsigned long long>(union_chunks), static_cast<long long>(queued_at_start));
}

void BoundedOperation::fill_agreed_holes() {
    if (agreed_.holes.empty()) return;
    const int me = comm_.rank;
    const std::size_t F = b_.floats_per_datagram;
    const std::vector<std::uint64_t> base = chunk_bases(layout_, comm_.size, F);
    const ChunkBitmap &map = rx_.map[1];
    // A hole's error is its true value, unknown where we miss it: we count the energy per entry
    // of the chunks we have instead (the transform spreads energy evenly).
    double had_sq = 0;
    std::uint64_t had = 0, missed = 0, zeroed_for_peers = 0, zeroed_own = 0;
    // Under the transform the rest of each block that lost elements is scaled up so the result
    // stays unbiased (codec/block_rescale.hpp); every rank has the same holes, so the same factors.
    std::optional<ZeroedPerBlock> zeroed;
    if (layout_.transform) zeroed.emplace(layout_);
    for (const ChunkRange &r : agreed_.holes) {
        for (std::uint64_t g = r.first; g < std::uint64_t{r.first} + r.count; ++g) {
            const auto s = static_cast<std::size_t>(std::upper_bound(base.begin(), base.end(), g) - base.begin() - 1);
            const auto c = static_cast<std::uint32_t>(g - base[s]);
            const Range theirs = layout_.shard(static_cast<int>(s));
            const Range seg = segment_of(theirs.count, F, c);
            float *p = result_ + theirs.offset + seg.offset;
            if (static_cast<int>(s) == me || map.test(s, c)) {
                had_sq += sum_squares(p, seg.count);
                had += seg.count;
                zeroed_for_peers += seg.count;
                if (static_cast<int>(s) == me) zeroed_own += seg.count;
            } else {
                missed += seg.count;
            }
            std::memset(p, 0, seg.count * sizeof(float));
            if (zeroed) zeroed->add(static_cast<int>(s), seg);
        }
    }
    if (zeroed) zeroed->rescale(result_);
    const double total_sq = sum_squares(result_, layout_.padded);
    const std::uint64_t kept = layout_.padded - had - missed;
    fill_error_sq_ += had_sq + (kept > 0 ? total_sq / static_cast<double>(kept) * static_cast<double>(missed) : 0);
    // Our own shard is in neither phase's expected entries (none of it arrives in the
    // all-gather): in the operation's report what of it is zeroed counts as expected and lost, so
    // that its loss stays a fraction (an owner whose shard a slow peer missed reported over 100%).
    // The process counters keep counting the entries expected from the network, as before.
    report_.expected += zeroed_own;
    report_.lost += zeroed_for_peers;
    bump(process_stats().entries_lost_ag, zeroed_for_peers);
    bump(process_stats().entries_zeroed_for_peers, zeroed_for_peers);
}

}  // namespace optireduce
