// SPDX-License-Identifier: BSD-3-Clause
#include "engine/bounded/op_feedback.hpp"

#include "codec/sharding.hpp"
#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace optireduce {

void OpFeedback::count_phase(const PhaseClock &clock, Close how, const PhaseCloser &closer, double phase_ms,
                             double last_arrival_ms, OpReport &report) {
    ProcessStats &ps = process_stats();
    const int phase = clock.phase;
    const ChunkBitmap &map = rx_.map[phase];
    const std::size_t F = b_.floats_per_datagram;
    std::uint64_t expected = 0, lost = 0;
    for (int s = 0; s < ranks_; ++s) {
        const auto i = static_cast<std::size_t>(s);
        const std::size_t len = rx_.length[phase][i];
        expected += len;
        if (map.received(i) == map.chunks(i)) continue;
        const bool listing = log_enabled(LogLevel::debug);
        std::string missing;  // for the debug log: which chunks, e.g. a whole run
        for (std::uint32_t c = 0; c < map.chunks(i); ++c)
            if (!map.test(i, c)) {
                lost += segment_of(len, F, c).count;
                if (listing && missing.size() < 120)
                    missing.append(" ").append(std::to_string(c));  // (not " " + ...: GCC 12 -O3 warns falsely)
            }
        OPTIREDUCE_LOG(debug, "op %u phase %d: from rank %d missing %u of %u chunks:%s", seq_, phase + 1, s,
                       map.chunks(i) - map.received(i), map.chunks(i), missing.c_str());
        const auto world = static_cast<std::size_t>(b_.world_ranks[i]);
        bump(ps.late_phases_by_rank[std::min(world, ProcessStats::kTrackedRanks - 1)]);
    }
    report.expected += expected;
    report.lost += lost;
    bump(phase == 0 ? ps.entries_expected_rs : ps.entries_expected_ag, expected);
    bump(phase == 0 ? ps.entries_lost_rs : ps.entries_lost_ag, lost);
    bump(how == Close::complete ? ps.phases_complete
         : how == Close::early  ? ps.phases_early_close
                                : ps.phases_deadline);
    if (closer.waited_for_flowing()) bump(ps.phases_waited_flowing);
    if (closer.cut_slow_path()) bump(ps.phases_cut_slow_path);
    OPTIREDUCE_LOG(debug,
                   "op %u phase %d: %s after %.3f ms (deadline %.3f ms per sender, straggler bound %.3f ms), last "
                   "arrival %.3f ms, %llu/%llu chunks%s",
                   seq_, phase + 1,
                   how == Close::complete ? "complete"
                   : how == Close::early  ? "early close"
                                          : "deadline",
                   phase_ms, clock.deadline_ms[phase], clock.straggler_ms, last_arrival_ms,
                   static_cast<unsigned long long>(map.received_total()),
                   static_cast<unsigned long long>(map.expected()),
                   closer.waited_for_flowing() ? ", waited past a sender's end while its data still flowed"
                   : closer.cut_slow_path()    ? ", cut a slow path before its end"
                                               : "");
}

void OpFeedback::phase_closed(const PhaseClock &clock, Close how, const PhaseCloser &closer,
                              std::span<const SenderFacts> facts, const TypicalPaths &typical, double phase_ms,
                              double last_arrival_ms, OpReport &report) {
    count_phase(clock, how, closer, phase_ms, last_arrival_ms, report);
    const int phase = clock.phase;
    const ChunkBitmap &map = rx_.map[phase];
    // The deadline learns how long each sender's data took from its own start (a late starter's
    // compute is the straggler bound's business), over the typical paths (typical_paths.hpp).
    // Each sender's own deadline, from its headers, goes to the job's (deadline_controller.hpp).
    for (int s = 0; s < ranks_; ++s) {
        const auto i = static_cast<std::size_t>(s);
        if (map.chunks(i) == 0) continue;
        if (rx_.deadline_us[phase][i] > 0)
            b_.deadlines.observe_peer(bytes_, phase + 1, s, rx_.deadline_us[phase][i] / 1000.0);
        if (rx_.started[phase][i] == Clock::time_point{} && closer.written_off(facts[i], how)) {
            wrote_off_ = true;
            bump(process_stats().stragglers_written_off);
        }
    }
    if (const int slow = typical.slow_count(); slow > 0)
        OPTIREDUCE_LOG(debug, "op %u phase %d: %d path(s) far slower than the others, not learnt", seq_, phase + 1,
                       slow);
    b_.deadlines.observe(bytes_, phase + 1, typical.outcome);
    if (log_enabled(LogLevel::debug)) log_learnt(phase, typical.outcome);
}

void OpFeedback::log_learnt(int phase, const PhaseOutcome &o) const {
    const DeadlineController &d = b_.deadlines;
    const DeadlineController::State *st = d.find(bytes_, phase + 1);
    if (!st) return;
    std::string peers;
    for (double p : st->peers) peers.append(" ").append(std::to_string(static_cast<int>(p)));
    OPTIREDUCE_LOG(debug,
                   "op %u phase %d learnt from typical paths %llu/%llu chunks, last %.1f of %.1f ms%s: expected "
                   "%.1f ms, deviation %.1f, multiple %.2f; own deadline %.1f ms, job's %.1f (peers':%s)",
                   seq_, phase + 1, static_cast<unsigned long long>(o.received),
                   static_cast<unsigned long long>(o.expected), o.last_arrival_ms, o.elapsed_ms,
                   o.cut_short ? ", cut" : "", st->expected_ms, st->deviation_ms, st->multiple,
                   d.own_deadline_ms(bytes_, phase + 1), d.deadline_ms(bytes_, phase + 1), peers.c_str());
}

void OpFeedback::operation_done(Clock::time_point our_start, std::span<const std::uint64_t> sent_bytes,
                                std::span<const double> send_seconds, bool sends_given_up) {
    // The skew of this operation: how far the latest start trailed the earliest, ours included,
    // so a rank that is usually the late one learns the job's skew as well as the others.
    // A start flagged wire::kWaited (ours too) was delayed by that rank's previous operation (a
    // wait for a straggler, or a link too slow for its data): it may be the earliest start but
    // not the latest, or each write-off would teach the bound a lateness as long as the bound
    // itself, and a slow link would teach it its own delay.
    Clock::time_point first = our_start, last = b_.waited ? Clock::time_point{} : our_start;
    for (std::size_t s = 0; s < rx_.started[0].size(); ++s) {
        const Clock::time_point started = rx_.started[0][s];
        if (started == Clock::time_point{}) continue;
        first = std::min(first, started);
        if (!rx_.waited[s]) last = std::max(last, started);
    }
    b_.stragglers.observe(last > first ? ms_between(first, last) : 0.0, wrote_off_);
    b_.stragglers.observe_deadlines(b_.deadlines.deadline_ms(bytes_, 1) + b_.deadlines.deadline_ms(bytes_, 2));
    // Our next start will look late to peers for reasons that are not compute skew: we waited
    // for a straggler, or our link was too slow to carry our data by the receivers' deadline
    // (what reaches them first of the next operation waited behind this one's in the queues).
    // Either way peers must not learn it as skew (wire::kWaited), or a slow link would set
    // everyone's pace through the straggler bound.
    b_.waited = wrote_off_ || sends_given_up;

    // Our loss hint for the peers' pacing: what slower senders could have saved, i.e. holes in
    // the streams we heard (a buffer or a queue that overflowed, or a lossy link, which the
    // pacer learns to tell apart). A stream cut short by the deadline misses its end, not its
    // middle: lateness is the deadline's business, and slowing the sender would only make it
    // later. Streams of peers we never heard from (stragglers) do not count either.
    std::uint64_t heard = 0, holes = 0;
    for (const ChunkBitmap &m : rx_.map) {
        heard += m.expected_from_heard();
        for (int s = 0; s < ranks_; ++s) holes += m.holes(static_cast<std::size_t>(s));
    }
    const double loss = heard ? static_cast<double>(holes) / static_cast<double>(heard) : 0.0;
    b_.loss_hint = static_cast<std::uint8_t>(std::min(255.0, std::ceil(loss * 255.0)));
    const double target = b_.deadlines.settings().target_loss;  // the communicator's hint, if any
    for (int p = 0; p < ranks_; ++p) {
        if (p == rank_) continue;
        const auto i = static_cast<std::size_t>(p);
        const double achieved = send_seconds[i] > 0 ? static_cast<double>(sent_bytes[i]) / send_seconds[i] : 0;
        b_.pacer.update(p, rx_.loss_hint[i] / 255.0, target, achieved);
        OPTIREDUCE_LOG(debug, "op %u pacing to rank %d: reported loss %.4f, achieved %.1f MB/s, rate now %.1f MB/s%s",
                       seq_, p, rx_.loss_hint[i] / 255.0, achieved / 1e6, b_.pacer.rate(p) / 1e6,
                       b_.pacer.rate(p) > 0 ? "" : " (unpaced)");
    }
}

void OpFeedback::log_timeline(const OpTimeline &t) const {
    if (!log_enabled(LogLevel::debug)) return;
    const auto began = std::chrono::system_clock::now() - (Clock::now() - t.began);
    OPTIREDUCE_LOG(debug,
                   "op %u took %.1f ms: transform %.1f, reduce-scatter %.1f, all-gather %.1f, hole vote %.1f, "
                   "fill and inverse %.1f (began at %.3f s by the system clock)",
                   seq_, ms_between(t.began, t.done), ms_between(t.began, t.transformed),
                   ms_between(t.transformed, t.scattered), ms_between(t.scattered, t.gathered),
                   ms_between(t.gathered, t.voted), ms_between(t.voted, t.done),
                   std::chrono::duration<double>(began.time_since_epoch()).count());
}

}  // namespace optireduce
