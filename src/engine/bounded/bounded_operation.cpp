// SPDX-License-Identifier: BSD-3-Clause
#include "engine/bounded/bounded_operation.hpp"

#include "codec/block_layout.hpp"
#include "codec/estimators.hpp"
#include "codec/mix64.hpp"
#include "codec/sharding.hpp"
#include "engine/bounded/stream_sender.hpp"
#include "engine/dgram/dgram_channel.hpp"
#include "engine/dgram/phase2_repair.hpp"
#include "transport/wire_header.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace optireduce {
namespace {

// Our own coded streams live in staging this operation owns (Staging::coded), written only here,
// each chunk before it is sent: the streams hand out read-only views for the senders.
std::byte *writable(const CodedStream &s, std::uint32_t c) { return const_cast<std::byte *>(s.chunk(c).data()); }

}  // namespace

std::size_t BoundedOperation::coded_staging_bytes(const BlockLayout &layout, const CommState::Bounded &b) {
    if (b.codec == Codec::fp32) return 0;
    std::size_t bytes = 0;
    for (int s = 0; s < layout.parts; ++s)
        bytes += CodedStream::bytes_for(b.codec, layout.shard(s).count, b.floats_per_datagram);
    return bytes;
}

BoundedOperation::BoundedOperation(CommState &comm, Staging &staging, const BlockLayout &layout, std::uint32_t seq,
                                   const float *in, float *out, CarryStore::Slot *carry)
    : comm_(comm),
      b_(*comm.bounded),
      router_(comm.bounded->channel->router),
      layout_(layout),
      in_(in),
      out_(out),
      n_(layout.n),
      transformed_(staging.wire.data()),
      wire_(layout.transform ? transformed_ : in),
      result_(staging.result.data()),
      incoming_(staging.incoming.data()),
      coded_(reinterpret_cast<std::byte *>(staging.coded.data())),
      seq_(seq),
      own_(layout.shard(comm.rank)),
      sent_bytes_(static_cast<std::size_t>(comm.size), 0),
      send_seconds_(static_cast<std::size_t>(comm.size), 0),
      reducer_(comm.rank, comm.size, own_, b_.floats_per_datagram, {wire_, incoming_, result_, layout.padded}),
      feedback_(b_, rx_, comm.rank, comm.size, seq, layout.n * sizeof(float)),
      carry_(carry) {
    const int N = comm.size, me = comm.rank;
    const std::size_t F = b_.floats_per_datagram;
    rx_.seq = seq_;
    rx_.floats_per_datagram = F;
    rx_.codec = b_.codec;
    streams_.resize(static_cast<std::size_t>(N));
    std::size_t at = 0;
    for (int s = 0; s < N; ++s) {
        const Range r = layout_.shard(s);
        const float *floats = (s == me ? result_ : wire_) + r.offset;
        streams_[static_cast<std::size_t>(s)] = b_.codec == Codec::fp32
                                                    ? CodedStream::floats(floats, r.count, F)
                                                    : CodedStream{coded_ + at, r.count, F, b_.codec};
        at += CodedStream::bytes_for(b_.codec, r.count, F);
    }
    rx_.size_for(static_cast<std::size_t>(N));
    std::vector<std::uint32_t> chunks[2];
    for (int p = 0; p < 2; ++p) {
        rx_.dest[p].assign(static_cast<std::size_t>(N), nullptr);
        rx_.length[p].assign(static_cast<std::size_t>(N), 0);
        chunks[p].assign(static_cast<std::size_t>(N), 0);
    }
    for (int s = 0; s < N; ++s) {
        if (s == me) continue;
        const auto i = static_cast<std::size_t>(s);
        // Phase 1: sender s's contribution to our shard, into s's slot of `incoming`.
        rx_.dest[0][i] = incoming_ + i * own_.count;
        rx_.length[0][i] = own_.count;
        chunks[0][i] = static_cast<std::uint32_t>(segment_count(own_.count, F));
        // Phase 2: s's reduced shard, in place in `result`.
        const Range theirs = layout_.shard(s);
        rx_.dest[1][i] = result_ + theirs.offset;
        rx_.length[1][i] = theirs.count;
        chunks[1][i] = static_cast<std::uint32_t>(segment_count(theirs.count, F));
    }
    rx_.map[0].reset(chunks[0]);
    rx_.map[1].reset(chunks[1]);
    // Every peer sends our shard in the same chunks: the router counts each chunk's arrivals.
    const std::size_t own_chunks = reducer_.chunks();
    rx_.contributors = static_cast<std::uint16_t>(own_chunks > 0 ? N - 1 : 0);
    rx_.arrivals.assign(own_chunks, 0);
}

void BoundedOperation::run() {
    report_.count = n_;
    report_.hadamard = layout_.transform;
    // Whatever happens below, the router forgets this operation before staging is reused.
    struct Closer {
        DgramRouter &r;
        DgramRouter::CommKey k;
        OpReceive *op;
        ~Closer() { r.close_op(k, op); }
    } closer{router_, b_.key, &rx_};
    OpTimeline t;
    t.began = Clock::now();
    open();
    t.transformed = Clock::now();
    {
        // From our first send to the hole vote this thread drains the endpoint itself (between
        // send rounds, and while it waits), so the progress thread stands aside for all of it,
        // not only for the waits: two threads draining one socket took turns at the router's
        // lock and each other's cores, and the sending thread lost its turn at the link
        // (docs/notes/2026-12-05-one-thread-drains.md). During the transform above it still drains for us.
        const ProgressThread::Aside aside(b_.channel->progress.get());
        // The all-gather's streams: our reduced shard to every peer, each chunk as soon as it is
        // reduced, the first ones while the reduce-scatter still runs.
        StreamSender gather(b_, phase_header(1), sent_bytes_, send_seconds_);
        gather.set_early(true);
        for (int k = 1; k < comm_.size; ++k)
            gather.add_stream(staggered_peer(comm_.rank, comm_.size, k),
                              streams_[static_cast<std::size_t>(comm_.rank)]);
        reduce_scatter(gather);
        t.scattered = Clock::now();
        all_gather(gather);
        t.gathered = Clock::now();
        if (b_.identical_replicas) agree_on_holes();
        t.voted = Clock::now();
    }
    if (!failure_.empty()) return;
    fill_and_copy_out();
    t.done = Clock::now();
    feedback_.operation_done(clock_[0].start, sent_bytes_, send_seconds_, sends_given_up_);
    feedback_.log_timeline(t);
}

void BoundedOperation::open() {
    const std::size_t bytes = n_ * sizeof(float);
    // What arrived just too late for earlier operations steers this one's deadline.
    for (const NearMisses &m : router_.take_near_misses(b_.key))
        for (int p = 0; p < 2; ++p) b_.deadlines.observe_near_misses(m.bytes, p + 1, m.count[p], m.expected[p]);
    // Open for receiving first: peers that finished their own transform sooner are sending
    // already, and what arrives for an open operation is placed at once (its destinations do
    // not depend on our transform) instead of being held and copied a second time.
    rx_.bytes = bytes;
    router_.open_op(b_.key, &rx_);
    // The transform is local work before our phase 1 starts: not time the deadline counts.
    if (layout_.transform) encode(layout_, in_, transformed_, hadamard::SignKey{b_.sign_seed, comm_.comm_id, seq_});
    if (b_.codec != Codec::fp32) code_contribution();
    // Receivers that miss chunks of our contribution may ask for them again from here on.
    router_.offer_scatter(rx_, ScatterSource{true, streams_, phase_header(0)});
    PhaseClock &clock = clock_[0];
    clock.start = Clock::now();
    clock.deadline_ms[0] = b_.deadlines.deadline_ms(bytes, 1);
    clock.deadline_ms[1] = b_.deadlines.deadline_ms(bytes, 2);
    clock.straggler_ms = b_.stragglers.bound_ms();
    clock.scatter_repair = b_.scatter_repair;
}

void BoundedOperation::reduce_scatter(StreamSender &gather) {
    {
        StreamSender scatter(b_, phase_header(0), sent_bytes_, send_seconds_);
        for (int k = 1; k < comm_.size; ++k) {
            const int p = staggered_peer(comm_.rank, comm_.size, k);
            scatter.add_stream(p, streams_[static_cast<std::size_t>(p)]);
        }
        scatter.all_ready();
        // Until our receivers stop waiting for us: data later than that is lost anyway, and on a
        // slow link it would hold up the next operation's in our queues (PhaseCloser::send_limit).
        const PhaseCloser ours(clock_[0]);
        scatter.send_all(ours.send_limit(), ours.queue_deadline(), [this, &scatter] {
            drain();
            stop_sends_to_closed(scatter, 0);
        });
        scatter.finish();
        sends_given_up_ = scatter.gave_up();
    }
    finish_phase(0, wait_phase(0, &gather));
    // The chunks of our shard not reduced while the phase ran, estimated where contributions
    // are missing; each goes to the all-gather.
    reducer_.reduce_rest(rx_.map[0], [this, &gather](std::uint32_t c) { shard_chunk_ready(gather, c); });
}

void BoundedOperation::all_gather(StreamSender &gather) {
    PhaseClock &clock = clock_[1];
    clock = clock_[0];
    clock.phase = 1;
    clock.start = Clock::now();
    clock.rs_all_started = clock_[0].start;
    clock.rs_all_seen = true;
    for (int s = 0; s < comm_.size; ++s) {
        if (s == comm_.rank) continue;
        const Clock::time_point t = rx_.started[0][static_cast<std::size_t>(s)];
        if (t == Clock::time_point{}) clock.rs_all_seen = false;
        clock.rs_all_started = std::max(clock.rs_all_started, t);
    }
    const std::uint16_t own_shard_error = reducer_.shard_error();
    gather.set_shard_error(own_shard_error);
    gather.set_early(false);
    // Final from here on: peers that miss some of it may ask for it again (phase2_repair.hpp).
    router_.repair().publish(b_.key, seq_, streams_[static_cast<std::size_t>(comm_.rank)], own_shard_error);
    const PhaseCloser ours(clock);
    gather.send_all(ours.send_limit(), ours.queue_deadline(), [this, &gather] {
        drain();
        stop_sends_to_closed(gather, 1);
    });
    gather.finish();
    sends_given_up_ = sends_given_up_ || gather.gave_up();
    const Close how = wait_phase(1, nullptr);
    router_.close_op(b_.key, &rx_);
    finish_phase(1, how);
}

void BoundedOperation::stop_sends_to_closed(StreamSender &sender, int phase) {
    // A receiver whose post-reduce-scatter all-gather datagrams arrived has closed its
    // reduce-scatter (an owner sends the rest of its shard only then, and a whole shard sent
    // early means it needed nothing more); one whose hole vote arrived has closed its all-gather;
    // one already sending for a later operation has closed both phases of this one. Behind a
    // slow link, what our sender still holds for them would only queue in front of our next
    // phase's data (and our vote, which they wait for).
    std::lock_guard lock(router_.mutex());
    for (int p = 0; p < comm_.size; ++p) {
        if (p == comm_.rank) continue;
        const auto i = static_cast<std::size_t>(p);
        const bool closed = rx_.ahead[i] || (phase == 0 && rx_.started[1][i] != Clock::time_point{}) ||
                            (phase == 1 && b_.identical_replicas && router_.votes().voted(b_.key, seq_, p));
        if (closed) sender.stop(p);
    }
}

wire::Header BoundedOperation::phase_header(int phase) const {
    wire::Header h =
        wire_header_for(b_.key, comm_.rank, seq_, phase == 0 ? wire::Phase::reduce_scatter : wire::Phase::all_gather);
    h.loss_hint = b_.loss_hint;
    h.flags = wire::codec_flags(static_cast<std::uint8_t>(b_.codec));
    if (phase == 0 && b_.waited) h.flags |= wire::kWaited;
    h.sender_deadline_us =
        static_cast<std::uint32_t>(std::min(b_.deadlines.own_deadline_ms(n_ * sizeof(float), phase + 1) * 1000.0, 4e9));
    return h;
}

void BoundedOperation::code_contribution() {
    const std::size_t F = b_.floats_per_datagram;
    for (int s = 0; s < comm_.size; ++s) {
        if (s == comm_.rank) continue;
        const Range r = layout_.shard(s);
        const CodedStream &to = streams_[static_cast<std::size_t>(s)];
        for (std::uint32_t c = 0; c < to.chunks(); ++c) {
            const Range g = segment_of(r.count, F, c);
            encode_chunk(b_.codec, wire_ + r.offset + g.offset, g.count, writable(to, c), chunk_seed(s, c));
        }
    }
}

void BoundedOperation::shard_chunk_ready(StreamSender &gather, std::uint32_t c) {
    if (b_.codec != Codec::fp32) {
        const CodedStream &ours = streams_[static_cast<std::size_t>(comm_.rank)];
        float *x = result_ + own_.offset + segment_of(own_.count, b_.floats_per_datagram, c).offset;
        std::byte *coded = writable(ours, c);
        encode_chunk(b_.codec, x, ours.count(c), coded, chunk_seed(comm_.rank, c));
        decode_chunk(b_.codec, coded, ours.count(c), x);
    }
    gather.ready(c);
}

std::uint64_t BoundedOperation::chunk_seed(int shard, std::uint32_t c) const {
    // The job's seed hashed with what makes a chunk's coding unique.
    std::uint64_t z = mix64(b_.sign_seed ^ (static_cast<std::uint64_t>(comm_.comm_id) << 32 | seq_));
    z = mix64(z ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(comm_.rank)) << 32 |
                   static_cast<std::uint32_t>(shard)));
    return mix64(z ^ c);
}

void BoundedOperation::finish_phase(int phase, Close how) {
    feedback_.phase_closed(clock_[phase], how, closer_[phase], facts_[phase], typical_[phase], phase_ms_[phase],
                           last_arrival_ms_[phase], report_);
}

void BoundedOperation::fill_and_copy_out() {
    if (b_.identical_replicas) {
        fill_agreed_holes();
        keep_residual();
    } else {
        fill_own_holes();
    }
    estimate_error();
    // One write into the user's buffer, after every read of the input (MPI_IN_PLACE aliases
    // them): the inverse transform, or a copy.
    if (layout_.transform)
        decode(layout_, result_, out_, hadamard::SignKey{b_.sign_seed, comm_.comm_id, seq_});
    else
        std::memcpy(out_, result_, n_ * sizeof(float));
}

void BoundedOperation::fill_own_holes() {
    const int N = comm_.size, me = comm_.rank;
    const std::size_t F = b_.floats_per_datagram;
    const ChunkBitmap &map = rx_.map[1];
    for (int s = 0; s < N; ++s) {
        const auto i = static_cast<std::size_t>(s);
        if (s == me || map.received(i) == map.chunks(i)) continue;
        const Range theirs = layout_.shard(s);
        for (std::uint32_t c = 0; c < map.chunks(i); ++c) {
            if (map.test(i, c)) continue;
            const Range g = segment_of(theirs.count, F, c);
            fill_from_own(wire_ + theirs.offset + g.offset, result_ + theirs.offset + g.offset, g.count, N);
            fill_error_sq_ += fill_error_sq(g.count, N, reducer_.sigma2(rx_.map[0]));
        }
    }
}

void BoundedOperation::estimate_error() {
    const int N = comm_.size;
    bool any = reducer_.error_sq() > 0 || fill_error_sq_ > 0;
    for (std::uint16_t e : rx_.shard_error) any = any || e != 0;
    if (!any) return;  // nothing was lost anywhere we know of: the estimate is 0, no pass needed
    // Norms in the wire domain equal the result's (the transform is orthonormal). A shard's
    // owner sent its relative error; it applies to the part of the shard that reached us.
    double total2 = 0, err2 = reducer_.error_sq() + fill_error_sq_;
    for (int s = 0; s < N; ++s) {
        const Range r = layout_.shard(s);
        const double n2 = sum_squares(result_ + r.offset, r.count);
        total2 += n2;
        const auto i = static_cast<std::size_t>(s);
        if (s == comm_.rank || rx_.shard_error[i] == 0 || rx_.map[1].chunks(i) == 0) continue;
        const double rel = wire::from_half(rx_.shard_error[i]);
        const double got = static_cast<double>(rx_.map[1].received(i)) / static_cast<double>(rx_.map[1].chunks(i));
        err2 += rel * rel * n2 * got;
    }
    report_.error_estimate = total2 > 0 ? std::sqrt(err2 / total2) : 0;
    // Agreed fills are the same on every rank: no drift.
    report_.drift_estimate = total2 > 0 && !b_.identical_replicas ? std::sqrt(fill_error_sq_ / total2) : 0;
}

}  // namespace optireduce
