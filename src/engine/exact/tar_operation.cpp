// SPDX-License-Identifier: BSD-3-Clause
#include "engine/exact/tar_operation.hpp"

#include "codec/reduce.hpp"
#include "codec/sharding.hpp"
#include "engine/deadlines/idle_policy.hpp"
#include "engine/setup/context.hpp"
#include "engine/setup/faults.hpp"
#include "transport/tag.hpp"

#include <rdma/fi_errno.h>
#include <sched.h>

#include <algorithm>
#include <cstring>

namespace optireduce {

TarOperation::TarOperation(CommState &comm, Staging &staging, const float *in, float *out, std::size_t n)
    : comm_(comm),
      ep_(*comm.endpoint),
      in_(in),
      out_(out),
      result_(staging.result.data()),
      result_desc_(staging.result.desc()),
      incoming_(staging.incoming.data()),
      incoming_desc_(staging.incoming.desc()),
      terms_(static_cast<std::size_t>(comm.size)),
      seq_(comm.next_seq++) {
    if (ep_.needs_registration() && n > 0) {
        // The provider can only send from registered memory: send from a registered copy.
        std::memcpy(staging.input.data(), in, n * sizeof(float));
        in_ = staging.input.data();
        in_desc_ = staging.input.desc();
    }
    const int N = comm.size, r = comm.rank;
    const std::size_t seg = comm.segment_floats;
    const Range own = shard_of(n, N, r);
    own_offset_ = own.offset;
    own_count_ = own.count;
    own_segments_ = segment_count(own.count, seg);
    arrived_.assign(own_segments_, 0);

    std::size_t total = 2 * (static_cast<std::size_t>(N) - 1) * own_segments_;
    for (int p = 0; p < N; ++p)
        if (p != r) total += 2 * segment_count(shard_of(n, N, p).count, seg);
    transfers_.reserve(total);

    const auto me = static_cast<std::uint32_t>(r);
    // Receives. Phase 1: every peer's contribution to each segment of our shard, into the
    // peer's slot of `incoming`. Phase 2: every peer's reduced shard, into place in `result`.
    for (int k = 1; k < N; ++k) {
        const int p = staggered_peer(r, N, N - k);  // rank-1, rank-2, ...: who sends to us first
        const auto src = static_cast<std::uint32_t>(p);
        float *slot = incoming_ + static_cast<std::size_t>(p) * own_count_;
        for (std::uint32_t s = 0; s < own_segments_; ++s) {
            const Range g = segment_of(own_count_, seg, s);
            add(Kind::recv_reduce, p, s, slot + g.offset, g.count,
                tag::make(comm.comm_id, seq_, src, tag::reduce_scatter, s));
        }
        const Range theirs = shard_of(n, N, p);
        const auto segs = static_cast<std::uint32_t>(segment_count(theirs.count, seg));
        for (std::uint32_t s = 0; s < segs; ++s) {
            const Range g = segment_of(theirs.count, seg, s);
            add(Kind::recv_gather, p, s, result_ + theirs.offset + g.offset, g.count,
                tag::make(comm.comm_id, seq_, src, tag::all_gather, s));
        }
    }
    // Phase-1 sends, segment-major so that every destination gets its first segment early.
    std::size_t max_segs = 0;
    for (int p = 0; p < N; ++p) max_segs = std::max(max_segs, segment_count(shard_of(n, N, p).count, seg));
    for (std::uint32_t s = 0; s < max_segs; ++s)
        for (int k = 1; k < N; ++k) {
            const int p = staggered_peer(r, N, k);
            const Range theirs = shard_of(n, N, p);
            if (s >= segment_count(theirs.count, seg)) continue;
            const Range g = segment_of(theirs.count, seg, s);
            add(Kind::send_reduce, p, s, const_cast<float *>(in_) + theirs.offset + g.offset, g.count,
                tag::make(comm.comm_id, seq_, me, tag::reduce_scatter, s));
        }
    // Phase-2 sends: created now, queued by reduce_segment() when the segment is reduced.
    gather_send_base_ = transfers_.size();
    for (std::uint32_t s = 0; s < own_segments_; ++s) {
        const Range g = segment_of(own_count_, seg, s);
        for (int k = 1; k < N; ++k)
            add(Kind::send_gather, staggered_peer(r, N, k), s, result_ + own_offset_ + g.offset, g.count,
                tag::make(comm.comm_id, seq_, me, tag::all_gather, s));
    }
}

void TarOperation::add(Kind kind, int peer, std::uint32_t segment, void *buf, std::size_t floats, std::uint64_t tag) {
    Transfer &t = transfers_.emplace_back();
    t.completion.on_done = &TarOperation::on_done;
    t.completion.owner = this;
    t.completion.index = static_cast<std::uint32_t>(transfers_.size() - 1);
    t.buf = buf;
    t.bytes = floats * sizeof(float);
    t.tag = tag;
    t.peer = peer;
    t.peer_addr = comm_.peers[static_cast<std::size_t>(peer)];
    t.segment = segment;
    t.kind = kind;
}

void TarOperation::run() {
    std::unique_lock lock(ep_.mutex());
    ep_.add_active(this);
    start();
    IdlePolicy idle(context().oversubscribed);
    while (!finished()) {
        if (ep_.progress() > 0) {
            idle.event();
        } else if (idle.idle()) {
            lock.unlock();  // other threads may progress this endpoint meanwhile
            sched_yield();
            lock.lock();
        }
    }
    ep_.remove_active(this);
}

void TarOperation::start() {
    queue_.reserve(transfers_.size());
    for (std::uint32_t i = 0; i < gather_send_base_; ++i) queue_.push_back(i);
    advance();
}

void TarOperation::advance() {
    while (queue_head_ < queue_.size() && !failed_) {
        Transfer &t = transfers_[queue_[queue_head_]];
        const bool is_send = t.kind == Kind::send_reduce || t.kind == Kind::send_gather;
        void *desc = t.kind == Kind::send_reduce   ? in_desc_
                     : t.kind == Kind::recv_reduce ? incoming_desc_
                                                   : result_desc_;
        const int rc = !is_send ? ep_.post_recv(t.buf, t.bytes, desc, t.tag, &t.completion)
                       : injected_send_failure()
                           ? -FI_EIO
                           : ep_.post_send(t.buf, t.bytes, desc, t.peer_addr, t.tag, &t.completion);
        if (rc == -FI_EAGAIN) return;  // queue full: the next progress round retries
        if (rc != 0) {
            fail(fi_error_text(is_send ? "fi_tsend" : "fi_trecv", rc));
            return;
        }
        t.posted = true;
        ++outstanding_;
        ++queue_head_;
    }
}

void TarOperation::on_done(Completion *c, int error) {
    auto *op = static_cast<TarOperation *>(c->owner);
    op->handle(op->transfers_[c->index], error);
}

void TarOperation::handle(Transfer &t, int error) {
    --outstanding_;
    t.done = true;
    if (error) {
        if (error != FI_ECANCELED)
            fail("transfer with rank " + std::to_string(t.peer) + " failed: " + fi_strerror(error));
        return;
    }
    ++done_;
    if (t.kind == Kind::recv_reduce && ++arrived_[t.segment] == static_cast<std::uint32_t>(comm_.size - 1))
        reduce_segment(t.segment);
    else if (t.kind == Kind::recv_gather && out_)
        std::memcpy(out_ + (static_cast<const float *>(t.buf) - result_), t.buf, t.bytes);
}

void TarOperation::reduce_segment(std::uint32_t s) {
    const Range g = segment_of(own_count_, comm_.segment_floats, s);
    // Terms in rank order, our own input at our rank: the same bits on every run.
    for (int j = 0; j < comm_.size; ++j)
        terms_[static_cast<std::size_t>(j)] = j == comm_.rank
                                                  ? in_ + own_offset_ + g.offset
                                                  : incoming_ + static_cast<std::size_t>(j) * own_count_ + g.offset;
    float *reduced = result_ + own_offset_ + g.offset;
    sum_in_order(terms_, reduced, g.count);
    if (out_) std::memcpy(out_ + own_offset_ + g.offset, reduced, g.count * sizeof(float));
    const std::size_t peers = static_cast<std::size_t>(comm_.size - 1);
    for (std::size_t k = 0; k < peers; ++k)
        queue_.push_back(static_cast<std::uint32_t>(gather_send_base_ + s * peers + k));
}

void TarOperation::fail(std::string why) {
    if (failed_) return;
    failed_ = true;
    error_ = std::move(why);
    // Withdraw what is still posted so the operation can end; the provider reports each
    // withdrawn receive with FI_ECANCELED. Sends complete or fail on their own.
    for (auto &t : transfers_)
        if (t.posted && !t.done && (t.kind == Kind::recv_reduce || t.kind == Kind::recv_gather))
            ep_.cancel(&t.completion);
}

}  // namespace optireduce
