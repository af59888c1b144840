// SPDX-License-Identifier: BSD-3-Clause
// Which communicator a datagram belongs to: the job nonce rank 0 drew and the communicator id
// the ranks agreed at setup. Both are in every header, so this key is how the receive side finds
// a datagram's communicator, and how every sender fills its headers (wire_header_for).
#pragma once

#include "transport/wire_header.hpp"

#include <compare>
#include <cstdint>

namespace optireduce {

struct CommKey {
    std::uint64_t nonce;
    std::uint32_t comm_id;
    auto operator<=>(const CommKey &) const = default;
};

// The one place a header's identity is filled: every datagram this rank sends (both phases'
// streams, repair requests and their answers) starts from it and adds only what its kind needs.
inline wire::Header wire_header_for(CommKey key, int rank, std::uint32_t seq, wire::Phase phase) {
    wire::Header h;
    h.phase = phase;
    h.job_nonce = key.nonce;
    h.comm_id = key.comm_id;
    h.seq = seq;
    h.src_rank = static_cast<std::uint32_t>(rank);
    return h;
}

}  // namespace optireduce
