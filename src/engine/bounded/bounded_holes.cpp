// SPDX-License-Identifier: BSD-3-Clause
// OPTIREDUCE_IDENTICAL_REPLICAS: the hole exchange after the all-gather, and the fill that is the
// same on every rank (engine/dgram/hole_votes.hpp says why and how).
#include "codec/block_rescale.hpp"
#include "codec/estimators.hpp"
#include "engine/bounded/bounded_operation.hpp"
#include "engine/deadlines/vote_wait.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "engine/setup/context.hpp"
#include "engine/setup/faults.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
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

// Calls fn(shard, chunk, the shard's range, the chunk's range within it) for every chunk of the
// agreed holes.
template <class Fn>
void each_hole_chunk(const BlockLayout &layout, int ranks, std::size_t F, const std::vector<ChunkRange> &holes,
                     Fn &&fn) {
    const std::vector<std::uint64_t> base = chunk_bases(layout, ranks, F);
    for (const ChunkRange &r : holes) {
        for (std::uint64_t g = r.first; g < std::uint64_t{r.first} + r.count; ++g) {
            const auto s = static_cast<std::size_t>(std::upper_bound(base.begin(), base.end(), g) - base.begin() - 1);
            const auto c = static_cast<std::uint32_t>(g - base[s]);
            const Range theirs = layout.shard(static_cast<int>(s));
            fn(s, c, theirs, segment_of(theirs.count, F, c));
        }
    }
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

void BoundedOperation::agree_on_holes() {
    HoleVotes &votes = router_.votes();
    DgramEndpoint &ep = *b_.channel->endpoint;
    const std::size_t F = b_.floats_per_datagram;
    injected_vote_delay(b_.faults);
    votes.open(b_.key, seq_, chunk_bases(layout_, comm_.size, F).back(), our_holes(), b_.payload_bytes);
    // A peer behind a slow link closes its all-gather up to both phases' deadlines after us (it
    // waits for the last reduce-scatter start, then the owners' streams), and its vote may then
    // queue behind up to one more deadline of its own data (StreamSender's send limit): twice
    // that is the base. A peer that waits for a core, or drains a megabyte its host queued
    // behind a link just slowed, takes longer: past the straggler bound's cap too, its vote is
    // overdue (counted), and still waited for (engine/deadlines/vote_wait.hpp says why).
    const double deadline_ms = clock_[1].deadline_ms[1];
    const double base_ms = 2 * (clock_[1].deadline_ms[0] + deadline_ms) + 5;
    const Clock::time_point start = Clock::now();
    VoteWait wait(start, base_ms + b_.stragglers.cap_ms(), context().config.vote_timeout_ms,
                  std::max(1.0, deadline_ms / 16));
    // What our host still holds of our sends: our vote queues behind it (debug log only).
    const std::int64_t queued_at_start = log_enabled(LogLevel::debug) ? ep.queued_bytes() : -1;
    for (;;) {
        const Clock::time_point now = Clock::now();
        votes.send(ep, b_.key, seq_, now, wait.every());
        if (votes.done(b_.key, seq_)) break;
        const VoteWait::Step step = wait.step(now);
        if (step == VoteWait::Step::give_up) {
            vote_gone(start, now);
            break;
        }
        if (step == VoteWait::Step::overdue) {
            bump(process_stats().hole_votes_late);
            OPTIREDUCE_LOG(info,
                           "op %u: rank %d's hole vote is %.0f ms late; waiting for it (OPTIREDUCE_VOTE_TIMEOUT_MS)",
                           seq_, votes.first_lacking(b_.key, seq_), ms_between(start, now) - base_ms);
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
    agreed_ = votes.close(b_.key, seq_);
    std::uint64_t union_chunks = 0;
    for (const ChunkRange &r : agreed_.holes) union_chunks += r.count;
    OPTIREDUCE_LOG(debug,
                   "op %u hole vote: %.1f ms (base %.1f%s), %llu chunks in the union, "
                   "%lld bytes of ours queued on the host when it began",
                   seq_, ms_between(start, closed), base_ms, wait.overdue() ? ", a vote overdue" : "",
                   static_cast<unsigned long long>(union_chunks), static_cast<long long>(queued_at_start));
}

void BoundedOperation::vote_gone(Clock::time_point start, Clock::time_point now) {
    const int p = router_.votes().first_lacking(b_.key, seq_);
    const Clock::time_point heard = router_.last_heard(b_.key, p);
    bump(process_stats().hole_votes_missing);
    char heard_text[48] = "never";
    if (heard != Clock::time_point{})
        std::snprintf(heard_text, sizeof heard_text, "%.1f s ago", ms_between(heard, now) / 1e3);
    char why[320];
    std::snprintf(why, sizeof why,
                  "rank %d's hole vote for bounded operation %u did not come in %.0f ms (OPTIREDUCE_VOTE_TIMEOUT_MS); "
                  "its last datagram came %s: that rank is stopped, has died or no longer reaches this one, and "
                  "without its vote the ranks' results could differ",
                  p, seq_, ms_between(start, now), heard_text);
    failure_ = why;
}

void BoundedOperation::fill_agreed_holes() {
    if (agreed_.holes.empty()) return;
    const int me = comm_.rank;
    const std::size_t F = b_.floats_per_datagram;
    const ChunkBitmap &map = rx_.map[1];
    // A hole's error is its true value, unknown where we miss it: we count the energy per entry
    // of the chunks we have instead (the transform spreads energy evenly).
    double had_sq = 0;
    std::uint64_t had = 0, missed = 0, zeroed_for_peers = 0, zeroed_own = 0;
    // Under the transform the rest of each block that lost elements is scaled up so the result
    // stays unbiased (codec/block_rescale.hpp); every rank has the same holes, so the same factors.
    // Not where carried: the holes' true values come in the next call, and a rescale would count
    // them twice.
    std::optional<ZeroedPerBlock> zeroed;
    if (layout_.transform) zeroed.emplace(layout_);
    each_hole_chunk(layout_, comm_.size, F, agreed_.holes,
                    [&](std::size_t s, std::uint32_t c, Range theirs, Range seg) {
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
                    });
    hole_entries_ = had + missed;
    carrying_ = carry_ && static_cast<double>(hole_entries_) <= kCarryMaxHoles * static_cast<double>(layout_.padded);
    if (carry_ && !carrying_) bump(process_stats().carry_spell_calls);
    if (zeroed && !carrying_) zeroed->rescale(result_);
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

void BoundedOperation::keep_residual() {
    if (!carrying_ || agreed_.holes.empty()) return;
    const std::size_t F = b_.floats_per_datagram;
    const CarryStore::Target to = b_.carry->target(*carry_, n_, layout_.padded, hole_entries_);
    if (!to.residual) return;  // beyond OPTIREDUCE_CARRY_MAX_MB: dropped, counted
    // Our contribution where the holes are, zero elsewhere, in the wire domain; then back in the
    // input's (the transform is linear, so the next call's transform of input plus residual
    // sends exactly what was dropped). The scratch is built first: the residual's buffer may be
    // this call's input, which wire_ is without the transform.
    std::fill(to.scratch, to.scratch + layout_.padded, 0.0f);
    each_hole_chunk(layout_, comm_.size, F, agreed_.holes, [&](std::size_t, std::uint32_t, Range theirs, Range seg) {
        const std::size_t at = theirs.offset + seg.offset;
        std::memcpy(to.scratch + at, wire_ + at, seg.count * sizeof(float));
    });
    if (layout_.transform)
        decode(layout_, to.scratch, to.residual, hadamard::SignKey{b_.sign_seed, comm_.comm_id, seq_});
    else
        std::memcpy(to.residual, to.scratch, n_ * sizeof(float));
}

}  // namespace optireduce
