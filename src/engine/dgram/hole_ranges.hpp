// SPDX-License-Identifier: BSD-3-Clause
// The all-gather's holes as ranges of chunk indices, and the vote that carries them (pure).
//
// Chunks are numbered across the whole result, shard by shard in rank order (shard s's chunk c
// is base(s) + c), so every rank names a chunk the same way. A vote is one datagram's payload:
//   uint16 have_bytes | uint8 final (1: the sender has closed this operation's exchange) |
//   uint16 reserved (0; it carried a lesson of late votes while a rank could close without a vote) |
//   have_bytes of bitmap (bit p: the sender has rank p's vote) |
//   uint32 ranges | ranges x (uint32 first, uint32 count), all little-endian.
// Where the holes are too scattered for one datagram, nearby ranges are merged, so a vote may
// name chunks its sender has: a superset is harmless, since every rank fills the union.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace optireduce {

struct ChunkRange {
    std::uint32_t first = 0, count = 0;
    bool operator==(const ChunkRange &) const = default;
};

// Sorted, disjoint, non-adjacent ranges covering exactly the ranges given.
std::vector<ChunkRange> merge_ranges(std::vector<ChunkRange> ranges);

// At most `max_ranges` ranges covering `ranges` (sorted and merged), closing the smallest gaps.
std::vector<ChunkRange> coarsen_ranges(std::vector<ChunkRange> ranges, std::size_t max_ranges);
// How many ranges a vote of a communicator of `ranks` carries in `max_payload` bytes: a rank
// with more holes votes them coarsened to this many, and must fill that same superset itself.
std::size_t vote_max_ranges(int ranks, std::size_t max_payload);

struct HoleVote {
    std::vector<std::uint8_t> have;  // by rank: 1 if the sender has that rank's vote
    std::vector<ChunkRange> holes;
    // The sender closed the exchange: it will take no more votes nor confirm any, so nobody
    // waits for it any longer (and a final vote is never answered).
    bool final = false;
    // Whether the sender still needs rank r's vote. Only then does r answer it, so an answer
    // (which has r's bit set, or is final) is never answered.
    bool needs_from(std::size_t r) const { return !final && !have[r]; }
};

// The payload bytes of a vote for `ranks` ranks, holes coarsened to fit `max_payload` bytes;
// empty if not even the have-bitmap and one range fit.
std::vector<std::byte> encode_vote(const HoleVote &v, std::size_t max_payload);
// nullopt for a payload that is not a vote of a `ranks`-rank communicator with ranges inside
// [0, total_chunks).
std::optional<HoleVote> decode_vote(std::span<const std::byte> payload, int ranks, std::uint64_t total_chunks);

}  // namespace optireduce
