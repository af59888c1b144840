// Phase-2 repair: a rank missing chunks of a peer's reduced shard asks that peer for them while
// the all-gather's budget lasts, because all-gather loss is the only thing that makes replicas
// differ (each rank fills a missing reduced chunk with its own estimate). The owner keeps its
// latest reduced shard (DgramRouter::publish_shard) and answers with ordinary all-gather
// datagrams, from whichever thread drains its endpoint: the operation's own while it runs, the
// progress thread after it returned. Best effort, bounded: one round of requests per operation,
// at most kQueuedRequestsPerComm queued per communicator, answers only for the latest shard.
#pragma once

#include "engine/dgram_router.hpp"
#include "transport/dgram_endpoint.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace optireduce {

// Sends what peers asked for since the last call (a no-op, one atomic load, when nothing was).
void serve_repairs(DgramEndpoint &ep, DgramRouter &router);

// Asks `owner` (at `dest`) for the all-gather chunks `chunks` of operation `seq`, in as many
// requests as the datagram size needs. Returns "" or what failed.
std::string request_repair(DgramEndpoint &ep, fi_addr_t dest, const wire::Header &base,
                           std::span<const std::uint32_t> chunks, std::size_t max_payload_bytes);

// The asking side, for one operation: the all-gather chunks missing from each owner.
using RepairAsks = std::vector<std::pair<std::size_t, std::vector<std::uint32_t>>>;
// Read under the router's lock (it writes the map).
void missing_chunks(const ChunkBitmap &all_gather, RepairAsks &asks);
// One request to each owner, without the lock. A failed request is one more loss, already
// counted as such: it is only logged.
void ask_repairs(DgramEndpoint &ep, std::span<const fi_addr_t> peers, const wire::Header &base, const RepairAsks &asks,
                 std::size_t max_payload_bytes);

}  // namespace optireduce
