// SPDX-License-Identifier: BSD-3-Clause
// How a vector of n elements is cut into one shard per rank and each shard into segments
// (messages): docs/architecture.md, "Sharding and the transform" and "Exact mode". Pure
// arithmetic, identical on every rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace optireduce {

struct Range {
    std::size_t offset = 0;
    std::size_t count = 0;
    constexpr bool operator==(const Range &) const = default;
};

// Contiguous shards; the remainder n % parts goes one element each to the first shards, so
// shard sizes differ by at most one and their offsets ascend with the index.
constexpr Range shard_of(std::size_t n, int parts, int index) {
    const std::size_t p = static_cast<std::size_t>(parts);
    const std::size_t i = static_cast<std::size_t>(index);
    const std::size_t base = n / p, extra = n % p;
    const std::size_t count = base + (i < extra ? 1 : 0);
    const std::size_t offset = i * base + std::min(i, extra);
    return {offset, count};
}

// Number of segments of at most seg_elems elements that cover count elements (0 for count 0).
constexpr std::size_t segment_count(std::size_t count, std::size_t seg_elems) {
    return (count + seg_elems - 1) / seg_elems;
}

// Segment s of a shard, relative to the shard's start.
constexpr Range segment_of(std::size_t count, std::size_t seg_elems, std::size_t s) {
    const std::size_t off = s * seg_elems;
    return {off, std::min(seg_elems, count - off)};
}

// The k-th peer (k = 1..parts-1) this rank sends to: rank+1, rank+2, ... so that at any moment
// the ranks target different receivers instead of all hitting rank 0 first (incast).
constexpr int staggered_peer(int rank, int parts, int k) { return (rank + k) % parts; }

}  // namespace optireduce
