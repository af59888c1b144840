// SPDX-License-Identifier: BSD-3-Clause
// The 64-bit tag of every engine message on the reliable (tagged) channel. One definition, used
// by sender and receiver. Bits 60..63 stay zero: libfabric's own collectives use bit 63.
//
//   59........46 45.....38 37..........22 21..20 19...........0
//   comm id (14)  seq (8)   source rank(16) phase   segment (20)
//
// The comm id is agreed at communicator setup to be unused by every member; the sequence number
// counts eligible calls on the communicator, so it only has to tell apart operations that can be
// in flight at the same time (a small window), and wraps.
#pragma once

#include <cstdint>

namespace optireduce::tag {

constexpr int kSegmentBits = 20, kPhaseBits = 2, kRankBits = 16, kSeqBits = 8, kCommBits = 14;
constexpr std::uint32_t kMaxCommIds = 1u << kCommBits;
constexpr std::uint32_t kMaxRanks = 1u << kRankBits;
constexpr std::uint64_t kMaxSegments = 1ull << kSegmentBits;

enum Phase : std::uint32_t { reduce_scatter = 1, all_gather = 2 };

constexpr std::uint64_t make(std::uint32_t comm_id, std::uint32_t seq, std::uint32_t src_rank, Phase phase,
                             std::uint64_t segment) {
    std::uint64_t t = comm_id & (kMaxCommIds - 1);
    t = (t << kSeqBits) | (seq & ((1u << kSeqBits) - 1));
    t = (t << kRankBits) | (src_rank & (kMaxRanks - 1));
    t = (t << kPhaseBits) | phase;
    t = (t << kSegmentBits) | (segment & (kMaxSegments - 1));
    return t;
}

static_assert(kSegmentBits + kPhaseBits + kRankBits + kSeqBits + kCommBits == 60);

}  // namespace optireduce::tag
