// SPDX-License-Identifier: BSD-3-Clause
// The all-gather's holes as ranges of chunk indices, and the vote that carries them (pure).
//
// Chunks are numbered across the whole result, shard by shard in rank order (shard s's chunk c
// is base(s) + c), so every rank names a chunk the same way. A vote is one datagram's payload:
//   uint16 have_bytes | uint8 final (1: the sender has closed this operation's exchange) |
//   uint16 lesson (the sender's lesson of late votes, engine/deadlines/vote_wait.hpp, in 0.1 ms) |
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
    // How long past its base the sender waits for a vote because a vote once came late to it
    // (VoteWait::lesson_100us: in 0.1 ms, rounded down, saturated): peers take the largest, so
    // that a vote late to one rank is waited for by all of them from then on, not only by each
    // after its own miss.
    std::uint16_t lesson_100us = 0;
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
