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

namespace optireduce {

// Sends what peers asked for since the last call (a no-op, one atomic load, when nothing was).
void serve_repairs(DgramEndpoint &ep, DgramRouter &router);

// Asks `owner` (at `dest`) for the all-gather chunks `chunks` of operation `seq`, in as many
// requests as the datagram size needs. Returns "" or what failed.
std::string request_repair(DgramEndpoint &ep, fi_addr_t dest, const wire::Header &base,
                           std::span<const std::uint32_t> chunks, std::size_t max_payload_bytes);

}  // namespace optireduce
