// SPDX-License-Identifier: BSD-3-Clause
// The waiting part of a bounded operation (engine/bounded/bounded_operation.hpp): how a phase's thread
// drains the endpoint, reads the facts the phase closer decides on, feeds the pipelined
// all-gather and sleeps in the kernel when there is nothing to do.
#include "engine/bounded/bounded_operation.hpp"
#include "engine/bounded/stream_sender.hpp"
#include "engine/deadlines/idle_policy.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "engine/dgram/phase2_repair.hpp"
#include "engine/dgram/scatter_repair.hpp"
#include "engine/setup/context.hpp"

#include <algorithm>
#include <chrono>

namespace optireduce {

int BoundedOperation::drain() {
    const int got = b_.channel->endpoint->poll(
        [this](std::span<const std::byte> d, fi_addr_t src) { router_.on_datagram(d, src); });
    router_.repair().serve(*b_.channel->endpoint, b_.host_drain_rate);
    router_.votes().serve(*b_.channel->endpoint);
    return got;
}

void BoundedOperation::read_facts(int phase) {
    const ChunkBitmap &map = rx_.map[phase];
    std::vector<SenderFacts> &facts = facts_[phase];
    facts.resize(static_cast<std::size_t>(comm_.size));
    for (std::size_t s = 0; s < facts.size(); ++s)
        facts[s] = {map.chunks(s),           map.received(s),
                    rx_.started[phase][s],   phase == 0 ? rx_.last_from[1][s] : Clock::time_point{},
                    rx_.last_from[phase][s], rx_.ahead[s] != 0};
}

std::vector<PathSample> BoundedOperation::path_samples(int phase, Clock::time_point closed) const {
    const ChunkBitmap &map = rx_.map[phase];
    std::vector<PathSample> paths(static_cast<std::size_t>(comm_.size));
    for (std::size_t s = 0; s < paths.size(); ++s) {
        PathSample &p = paths[s];
        p.expected = map.chunks(s);
        p.received = map.received(s);
        const Clock::time_point started = rx_.started[phase][s];
        if (started == Clock::time_point{}) continue;  // an all-gather owner heard only early: no clock
        p.elapsed_ms = ms_between(started, closed);
        p.last_arrival_ms = ms_between(started, rx_.last_from[phase][s]);
    }
    return paths;
}

LinkQuiet BoundedOperation::link_quiet(int phase) const {
    const Clock::time_point last = rx_.last_arrival[phase];
    const double ran_ms = last > clock_[phase].start ? ms_between(clock_[phase].start, last) : 0;
    return {rx_.map[phase].all_tails(), last, b_.deadlines.quiet_ms(n_ * sizeof(float), phase + 1, ran_ms)};
}

Close BoundedOperation::wait_phase(int phase, StreamSender *gather) {
    const Clock::time_point start = clock_[phase].start;
    PhaseCloser &closer = closer_[phase] = PhaseCloser(clock_[phase]);
    // The waiting thread drains the endpoint itself: it is on a core already, while the progress
    // thread may wait for one (ranks outnumber cores, or the MPI spins in its own progress) for
    // longer than a whole deadline; that one stands aside for the whole operation (run()). When
    // idle (engine/deadlines/idle_policy.hpp) it sleeps in the endpoint's wait fd, so waiting ranks leave
    // the cores to the ranks and the kernel that move the data.
    IdlePolicy idle(context().oversubscribed);
    DgramEndpoint &ep = *b_.channel->endpoint;
    Pumped pumped;
    Close how;
    Clock::time_point now;
    std::vector<std::uint32_t> ready;
    RepairAsks asks;
    std::unique_lock lock(router_.mutex());
    for (;;) {
        now = Clock::now();
        if (gather) ready.swap(rx_.ready);
        read_facts(phase);
        if (gather)  // a peer already on a later operation waits for no more of our shard
            for (std::size_t s = 0; s < facts_[phase].size(); ++s)
                if (facts_[phase][s].ahead) gather->stop(static_cast<int>(s));
        const CloseDecision d = closer.decide(facts_[phase], rx_.map[phase].complete(), link_quiet(phase), now);
        if (d.kind == CloseDecision::Kind::close) {
            how = d.how;
            break;
        }
        if (d.kind == CloseDecision::Kind::ask_repair) {
            // Under the lock: the router writes the map.
            if (phase == 0)
                scatter_missing(rx_.map[0], facts_[0], asks);
            else
                Phase2Repair::missing(rx_.map[1], asks);
            std::erase_if(asks, [&closer](const auto &a) { return !closer.asks(a.first); });
            lock.unlock();
            Phase2Repair::ask(ep, b_.peers, b_.key, comm_.rank, seq_, asks, b_.payload_bytes,
                              phase == 0 ? wire::Phase::scatter_repair : wire::Phase::repair);
            lock.lock();
            continue;
        }
        const Clock::time_point wake = d.until;
        lock.unlock();
        if (gather) pumped = pipeline(*gather, ready);
        const int got = drain();
        if (got < 0) {
            // Another thread is draining (another operation's, or the progress thread finishing
            // the round it began before it stood aside): the router notifies when the condition
            // may have changed.
            lock.lock();
            router_.changed().wait_until(lock, std::min(wake, Clock::now() + std::chrono::microseconds(200)));
            continue;
        }
        if (got > 0) {
            idle.event();
        } else if (idle.idle()) {
            rest(wake, gather, pumped);
        }
        lock.lock();
    }
    // From here on the router counts this phase's datagrams as late; those of a path far slower
    // than the others are not near misses (a longer deadline is not what it needs).
    typical_[phase] = typical_paths(path_samples(phase, now), how == Close::deadline);
    router_.close_phase(lock, rx_, phase, now,
                        std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double, std::milli>(clock_[phase].deadline_ms[phase])),
                        typical_[phase].slow);
    // Under the lock: in the reduce-scatter the router is still writing the all-gather's
    // arrivals, which say whether a silent sender had started (finish_phase).
    read_facts(phase);
    phase_ms_[phase] = ms_between(start, now);
    last_arrival_ms_[phase] = rx_.last_arrival[phase] > start ? ms_between(start, rx_.last_arrival[phase]) : 0;
    return how;
}

BoundedOperation::Pumped BoundedOperation::pipeline(StreamSender &gather, std::vector<std::uint32_t> &ready) {
    for (const std::uint32_t c : ready) {
        reducer_.reduce_complete(c);
        shard_chunk_ready(gather, c);
    }
    ready.clear();
    Pumped p;
    if (gather.has_ready()) gather.pump(&p.progressed, &p.next_slot);
    return p;
}

void BoundedOperation::rest(Clock::time_point wake, const StreamSender *gather, const Pumped &pumped) {
    DgramEndpoint &ep = *b_.channel->endpoint;
    const Clock::time_point now = Clock::now();
    // At most 1 ms at a time: a bound on what a missed wake-up could cost.
    Clock::time_point until = std::min(wake, now + std::chrono::milliseconds(1));
    if (gather && gather->has_ready()) {
        if (pumped.progressed) return;  // it is sending: pump again at once
        if (pumped.next_slot == Clock::time_point::max()) {
            // Nothing went out and nothing is paced: the socket's queue is full.
            ep.wait_for_send_space(std::chrono::duration_cast<std::chrono::microseconds>(until - now));
            return;
        }
        until = std::min(until, pumped.next_slot);
    }
    if (until > now) ep.wait(std::chrono::duration_cast<std::chrono::microseconds>(until - now));
}

}  // namespace optireduce
