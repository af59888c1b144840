// SPDX-License-Identifier: BSD-3-Clause
// One exact Transpose AllReduce on one communicator (docs/architecture.md, "Exact mode").
//
// Phase 1 (reduce-scatter): this rank sends shard j of its input straight to rank j, segment by
// segment, starting with rank+1 and interleaving destinations. The owner adds the N
// contributions of each segment, in rank order, as soon as the segment's last contribution
// arrived. Phase 2 (all-gather): each reduced segment is sent straight to every other rank right
// away, so the phases overlap per segment instead of waiting for a whole shard.
//
// All receives are posted when the operation starts; messages that arrive before this rank
// started (a faster peer) wait in the provider's unexpected queue, so no barrier is needed.
// Messages are matched by tag (communicator, sequence, source, phase, segment), so several
// operations can be in flight on one communicator.
#pragma once

#include "engine/setup/comm_state.hpp"
#include "transport/fabric/rdm_endpoint.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace optireduce {

class TarOperation final : public Progressable {
public:
    // `in` is the caller's input (sendbuf, or recvbuf for MPI_IN_PLACE); it must stay valid and
    // unchanged until the operation completed. `out` (may be null) receives each piece of the
    // result as soon as it is final: a peer's reduced segment once it landed in staging, our
    // own once reduced, so the copy-out overlaps the wait for the rest. With MPI_IN_PLACE that
    // is safe: a piece of shard p arrives only after p consumed our contribution to it, and our
    // own segment is written only after its reduction read it.
    TarOperation(CommState &comm, Staging &staging, const float *in, float *out, std::size_t n);
    TarOperation(const TarOperation &) = delete;
    TarOperation &operator=(const TarOperation &) = delete;
    ~TarOperation() = default;

    // The whole operation on the calling thread: starts it and progresses the endpoint (other
    // threads' operations on it too) until it finished. Takes the endpoint lock itself.
    void run();
    // The parts of run(), for a caller that drives several operations at once. Require the
    // endpoint lock. start() queues every receive and the phase-1 sends.
    void start();
    void advance() override;
    bool finished() const { return failed_ ? outstanding_ == 0 : done_ == transfers_.size(); }
    bool failed() const { return failed_; }
    const std::string &error() const { return error_; }
    // After finished() and !failed(): the whole result vector (engine staging).
    const float *result() const { return result_; }

private:
    enum class Kind : std::uint8_t { recv_reduce, recv_gather, send_reduce, send_gather };
    struct Transfer {
        Completion completion;
        void *buf = nullptr;
        std::size_t bytes = 0;
        std::uint64_t tag = 0;
        fi_addr_t peer_addr = 0;
        int peer = 0;
        std::uint32_t segment = 0;
        Kind kind = Kind::recv_reduce;
        bool posted = false;
        bool done = false;
    };

    static void on_done(Completion *c, int error);
    void handle(Transfer &t, int error);
    void reduce_segment(std::uint32_t s);
    void add(Kind kind, int peer, std::uint32_t segment, void *buf, std::size_t floats, std::uint64_t tag);
    void fail(std::string why);

    CommState &comm_;
    RdmEndpoint &ep_;
    const float *in_;
    float *out_;
    void *in_desc_ = nullptr;
    float *result_;
    void *result_desc_;
    float *incoming_;
    void *incoming_desc_;
    std::vector<const float *> terms_;  // scratch for reduce_segment, one per rank
    std::uint32_t seq_;
    std::size_t own_offset_ = 0, own_count_ = 0, own_segments_ = 0;

    std::vector<Transfer> transfers_;   // all created up front: Completion pointers must not move
    std::size_t gather_send_base_ = 0;  // transfers_[base + s*(N-1) + k-1]: segment s to peer k
    std::vector<std::uint32_t> queue_;  // transfer indices waiting to be posted, in order
    std::size_t queue_head_ = 0;
    std::vector<std::uint32_t> arrived_;  // per own segment: phase-1 contributions received
    std::size_t done_ = 0;
    std::size_t outstanding_ = 0;  // posted, not yet completed
    bool failed_ = false;
    std::string error_;
};

}  // namespace optireduce
