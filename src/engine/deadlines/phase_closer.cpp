// SPDX-License-Identifier: BSD-3-Clause
#include "engine/deadlines/phase_closer.hpp"

#include <algorithm>

namespace optireduce {

Clock::time_point PhaseCloser::sender_end(const SenderFacts &s) const {
    const double rs_ms = clock_.deadline_ms[0], ag_ms = clock_.deadline_ms[1];
    // Nothing from it in this phase, and it is already on a later operation: what it sent for
    // this one was lost (or dropped here while this rank was too far behind to hold it), and no
    // more will come. Waiting would only keep this rank behind: it closes without that data.
    if (s.started == Clock::time_point{} && s.ahead) return clock_.start;
    if (clock_.phase == 0) {
        // Started: the deadline bounds how long its data take on the network from there.
        if (s.started != Clock::time_point{}) return after_ms(s.started, rs_ms);
        // Silent here, but its all-gather is arriving: it started long ago (it sends its
        // reduce-scatter before anything else), and its stream to us was lost on the way. Waiting
        // for it is waiting for loss: it gets the deadline from that evidence, not the straggler
        // bound. (A short stream, one or two datagrams, is lost whole often enough at 1-2% loss,
        // and the bound is up to seconds.)
        if (s.gathered != Clock::time_point{}) return after_ms(std::max(clock_.start, s.gathered), rs_ms);
        // Not started: still computing, or preempted. It is waited for up to the straggler
        // bound, from our own start (never less than the deadline: a peer a little behind us
        // is not a straggler).
        return after_ms(clock_.start, std::max(clock_.straggler_ms, rs_ms));
    }
    // The all-gather. An owner sends the rest of its shard once its own reduce-scatter closed,
    // which is once the data of the last rank to start have arrived: no later than that start
    // (as seen here) + the reduce-scatter deadline, as for us. Its data then get the all-gather
    // deadline, and never less than that from its first datagram after its reduce-scatter.
    // When every peer's start was seen, the count starts at the last one, not at our own
    // all-gather's start: when our reduce-scatter closed late (our downlink slow, its senders'
    // first datagrams queued behind each other), the owners' data were no later for it, and
    // restarting the count there kept the slow host, and every peer waiting for its hole vote,
    // a whole deadline longer. A peer whose start we never saw (a straggler written off at the
    // bound) may still be in its reduce-scatter: its shard comes after ours closed, so then the
    // count starts no earlier than our all-gather.
    const Clock::time_point last_start =
        clock_.rs_all_seen ? clock_.rs_all_started : std::max(clock_.start, clock_.rs_all_started);
    Clock::time_point end = after_ms(last_start, rs_ms + ag_ms + kOwnerTurnaroundMs);
    if (s.started != Clock::time_point{}) end = std::max(end, after_ms(s.started, ag_ms));
    return end;
}

Clock::time_point PhaseCloser::flowing_cap(Clock::time_point end) const {
    return after_ms(end, kFlowingExtraDeadlines * clock_.deadline_ms[clock_.phase]);
}

Clock::time_point PhaseCloser::flowing_end(const SenderFacts &s, Clock::time_point end, Clock::time_point now,
                                           double gap_ms) const {
    if (!s.missing() || s.received < kFlowingMinChunks || s.started == Clock::time_point{} || s.last <= s.started)
        return {};
    if (now > after_ms(s.last, gap_ms)) return {};  // it stopped coming: lost, or stalled again
    const double ms_per_chunk = ms_between(s.started, s.last) / static_cast<double>(s.received);
    const Clock::time_point done = after_ms(s.last, ms_per_chunk * static_cast<double>(s.chunks - s.received));
    const Clock::time_point cap = flowing_cap(end);
    if (done > cap) return {};  // a slow path: the rest would come too late to wait for
    return std::min(after_ms(done, gap_ms), cap);
}

Clock::time_point PhaseCloser::receivers_end() const {
    // A receiver starts our clock at our first datagram, which left no earlier than our start
    // here (held datagrams, at a receiver behind us, keep their arrival time), and its phase
    // clock is about ours (every rank sees the same starts): its end for us is sender_end of a
    // sender that started when we did.
    SenderFacts us;
    us.chunks = 1;
    us.started = clock_.start;
    return sender_end(us);
}

Clock::time_point PhaseCloser::send_limit() const {
    // Plus one more deadline: receivers act on their deadline only when they get a core, and
    // what reached their socket before that still counts (on a host whose cores the ranks share,
    // stopping at the nominal end doubled the loss of a clean network). One deadline of stale
    // data queued is what a slow link then costs the next operation, not seconds.
    return after_ms(receivers_end(), clock_.deadline_ms[clock_.phase] * kSendSlackDeadlines);
}

QueueDeadline PhaseCloser::queue_deadline() const {
    const double deadline_ms = clock_.deadline_ms[clock_.phase];
    const Clock::time_point end = receivers_end();
    // The receivers' hopeless rule seen from here: a stream that cannot arrive by their end plus
    // the longest flowing wait, nor within kHopelessSpanDeadlines of its start, is cut from
    // judged_from(our start) on.
    return {end,
            std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double, std::milli>(deadline_ms * kQueueGraceDeadlines)),
            std::max(flowing_cap(end), after_ms(clock_.start, kHopelessSpanDeadlines * deadline_ms)),
            judged_from(clock_.start)};
}

namespace {
CloseDecision wait_until(Clock::time_point t) { return {CloseDecision::Kind::wait, Close::complete, t}; }
}  // namespace

Clock::time_point PhaseCloser::judged_from(Clock::time_point started) const {
    return after_ms(started, std::max(kHopelessAfterDeadlines * clock_.deadline_ms[clock_.phase], kHopelessMinMs));
}

bool PhaseCloser::hopeless(const SenderFacts &s, Clock::time_point end, Clock::time_point now, double gap_ms,
                           Clock::time_point &judge_at) const {
    if (!s.missing() || s.chunks < kFlowingMinChunks || s.received == 0 || s.started == Clock::time_point{})
        return false;
    // Silent: a sender that lost its core (it may resume at line rate), or one whose data stopped
    // coming; its end decides. A slow path's data keep trickling in.
    if (now > after_ms(s.last, gap_ms)) return false;
    const double deadline_ms = clock_.deadline_ms[clock_.phase];
    const Clock::time_point judged = judged_from(s.started);
    if (now < judged) {
        judge_at = std::min(judge_at, judged);
        return false;
    }
    const double ms_per_chunk = ms_between(s.started, now) / static_cast<double>(s.received);
    const Clock::time_point done = after_ms(now, ms_per_chunk * static_cast<double>(s.chunks - s.received));
    return done > flowing_cap(end) &&
           ms_per_chunk * static_cast<double>(s.chunks) > kHopelessSpanDeadlines * deadline_ms;
}

Clock::time_point PhaseCloser::close_time(std::span<const SenderFacts> senders, Clock::time_point now, double gap_ms,
                                          Clock::time_point &judge_at) {
    // Each sender still missing chunks is waited for until its own end (its clock starts when it
    // does): the phase closes when every one of them is past it, or hopeless before it.
    Clock::time_point close_at = clock_.start;
    bool cut = false;
    for (const SenderFacts &s : senders) {
        if (!s.missing()) continue;
        const Clock::time_point end = sender_end(s), flowing = flowing_end(s, end, now, gap_ms);
        if (now >= end && flowing > now) waited_flowing_ = true;
        if (now < end && hopeless(s, end, now, gap_ms, judge_at)) {
            cut = true;
            continue;
        }
        close_at = std::max({close_at, end, flowing});
    }
    if (now >= close_at) cut_slow_ = cut;
    return close_at;
}

CloseDecision PhaseCloser::decide(std::span<const SenderFacts> senders, bool complete, const LinkQuiet &quiet,
                                  Clock::time_point now) {
    if (complete) return {CloseDecision::Kind::close, Close::complete, {}};
    Clock::time_point judge_at = Clock::time_point::max();
    const Clock::time_point close_at = close_time(senders, now, quiet.quiet_ms, judge_at);
    if (now >= close_at) return {CloseDecision::Kind::close, Close::deadline, {}};
    CloseDecision d = before_close(senders, now, close_at, quiet);
    // A stream too young to judge is looked at again once it is not (its data may stop coming).
    if (d.kind == CloseDecision::Kind::wait) d.until = std::min(d.until, judge_at);
    return d;
}

CloseDecision PhaseCloser::before_close(std::span<const SenderFacts> senders, Clock::time_point now,
                                        Clock::time_point close_at, const LinkQuiet &quiet) {
    if (quiet.last_arrival == Clock::time_point{}) return wait_until(close_at);  // nothing came: no silence to read
    if (!quiet.all_tails) return without_every_tail(now, close_at, quiet);
    // Every sender's last datagrams are here, so the rest of what is missing was lost, not late:
    // once the link has been quiet a while, waiting longer buys nothing. A phase that cannot ask
    // closes then; one that can asks much sooner (all_tails_silence_ms), but closes no sooner.
    const Clock::time_point quiet_until = after_ms(quiet.last_arrival, quiet.quiet_ms);
    if (clock_.phase == 0 && !clock_.scatter_repair) {
        if (now < quiet_until) return wait_until(std::min(close_at, quiet_until));
        return {CloseDecision::Kind::close, Close::early, {}};
    }
    const double silence_ms = all_tails_silence_ms(quiet.quiet_ms);
    const Clock::time_point ask_from = after_ms(quiet.last_arrival, silence_ms);
    if (now < ask_from) return wait_until(std::min(close_at, ask_from));
    // Holes are asked for, and the answers get a few quiet times (never past the senders' ends):
    // all-gather holes make replicas differ, reduce-scatter holes are noise estimated in their
    // place. What is still missing is asked for again meanwhile, sender by sender
    // (RepairSchedule): on a lossy link a request or an answer is lost as often as any datagram,
    // and waiting out the whole window for it held every peer's hole vote.
    if (repair_end_ == Clock::time_point{}) {
        // The window counts from when the quiet time would have ended: the early close comes no
        // sooner than when asking waited for it.
        repair_end_ = std::min(
            close_at, after_ms(std::max(now, quiet_until), std::max(kRepairMinMs, kRepairQuiets * quiet.quiet_ms)));
        schedule_.asked_all(senders.size(), now);
        return ask_repair(std::min(repair_end_, after_ms(now, kRepairMinMs)));
    }
    if (now >= repair_end_) return {CloseDecision::Kind::close, Close::early, {}};
    Clock::time_point next = repair_end_;
    if (schedule_.take_due(senders, now, silence_ms, kRepairMinMs, std::max(kRepairMinMs, quiet.quiet_ms), next))
        return ask_repair(std::min(repair_end_, after_ms(now, kRepairMinMs)));
    return wait_until(next);
}

CloseDecision PhaseCloser::without_every_tail(Clock::time_point now, Clock::time_point close_at,
                                              const LinkQuiet &quiet) {
    // Some sender's last datagrams are missing too: it is slow, or they were lost with the rest
    // (a full queue drops a whole offloaded batch, tail included). The reduce-scatter has only
    // its deadline. In the all-gather a lost tail would cost the owners' whole end, so the holes
    // are asked for once the link has been silent a good part of the deadline (an owner still
    // reducing, or waiting for a core, is silent too, and asking it sends its shard twice),
    // again after each doubling wait. Silence counts from the phase's start at the earliest:
    // early chunks that came before it say nothing about the streams that follow.
    if (clock_.phase == 0) return wait_until(close_at);
    const double silence_ms = std::max(quiet.quiet_ms, kNoTailSilenceOfDeadline * clock_.deadline_ms[1]);
    const Clock::time_point quiet_until = after_ms(std::max(quiet.last_arrival, clock_.start), silence_ms);
    if (now < quiet_until) return wait_until(std::min(close_at, quiet_until));
    if (repairs_asked_ == 0 || now >= repair_until_) {
        const double window_ms =
            std::max(kRepairMinMs, kRepairQuiets * quiet.quiet_ms) * (1 << std::min(repairs_asked_, 6));
        return ask_repair(std::min(close_at, after_ms(now, window_ms)));
    }
    return wait_until(std::min(close_at, repair_until_));
}

CloseDecision PhaseCloser::ask_repair(Clock::time_point answers_until) {
    ++repairs_asked_;
    repair_until_ = answers_until;
    return {CloseDecision::Kind::ask_repair, Close::complete, repair_until_};
}

bool PhaseCloser::written_off(const SenderFacts &s, Close how) const {
    // One whose all-gather we heard started: its stream was lost, it was not late. An owner
    // whose all-gather did not start in time is late on the network like any other.
    return clock_.phase == 0 && how == Close::deadline && s.missing() && s.started == Clock::time_point{} &&
           s.gathered == Clock::time_point{} && !s.ahead;
}

}  // namespace optireduce
