// SPDX-License-Identifier: BSD-3-Clause
// Reduce-scatter repair: a receiver asks a sender for the chunks of its contribution that did not
// arrive, while the phase has time, and the sender answers from its wire vector while its
// operation is open (docs/protocol.md, "Repair").
//
// Loss the network did not cause is not what a deadline is for: a receiver descheduled while its
// socket buffer overflowed, a co-tenant's burst through its host's queue, a datagram dropped by
// the switch on an otherwise clean path. Without repair each such datagram is estimated from the
// other contributions (noise in the result, and one more sample in the loss the deadline
// controller learns from); asked for again, it costs a round trip inside the deadline. With two
// jobs sharing the hosts' cores and links, 0.17-0.21% of the entries were lost that way, most in
// the reduce-scatter, which had no repair; the first operation under a slow link lost a fifth of
// its reduce-scatter.
//
// The sender's side needs no copy: its wire vector (the transformed input, or the input itself)
// is not written until its operation has closed in the router, so the router answers a request
// for an open operation under its own lock, and a request for any other operation counts as
// unavailable. A sender that has not started (late, not lost) is not asked.
#pragma once

#include "codec/coded_stream.hpp"
#include "codec/sharding.hpp"
#include "engine/deadlines/phase_closer.hpp"
#include "engine/dgram/chunk_bitmap.hpp"
#include "engine/dgram/phase2_repair.hpp"
#include "transport/wire_header.hpp"

#include <rdma/fabric.h>

#include <cstddef>
#include <span>
#include <vector>

namespace optireduce {

// What an open operation offers its receivers' requests: its contribution in the wire layout,
// where each receiver's shard of it lies, and the reduce-scatter's common header.
struct ScatterSource {
    bool offered = false;              // false: nothing offered (not transformed yet)
    std::vector<CodedStream> streams;  // our contribution to each receiver's shard, by its rank
    wire::Header header{};             // chunk and payload length set per answer, no tail flag
};

// The answers to a request from `h.src_rank` (its header already checked by the router) for
// chunks of its shard of `source`: one reduce-scatter datagram per chunk, to `dest`, as many as
// fit in `room` bytes of payload (the rest are dropped: the receiver asks again while its phase
// has time). Returns "" or why the request was refused (a chunk beyond the shard: the router
// counts it invalid, and answers none of it).
const char *answer_scatter_request(const ScatterSource &source, const wire::Header &h,
                                   std::span<const std::byte> payload, fi_addr_t dest, std::size_t room,
                                   std::vector<RepairJob> &out);

// The asking side: the chunks missing from each sender that has started its stream to us.
void scatter_missing(const ChunkBitmap &reduce_scatter, std::span<const SenderFacts> senders, RepairAsks &asks);

}  // namespace optireduce
