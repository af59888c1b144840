// SPDX-License-Identifier: BSD-3-Clause
// How bounded mode lays a vector out for the wire (docs/architecture.md, "Sharding and the
// transform"). Without the transform the wire vector is the input itself, cut into one contiguous
// shard per rank (codec/sharding). With it:
//
// - The input is cut into power-of-two blocks of `block` elements; a last partial block of r
//   elements is padded with zeros to the next power of two (`tail`), so at most r - 1 padding
//   elements travel. Each block gets its random signs and an orthonormal Hadamard transform.
// - Shards are whole blocks (the owner of a shard then holds every coordinate of its blocks).
//   The block is halved for small vectors until every shard has at least kBlocksPerShard
//   blocks, so the shards stay within 1/kBlocksPerShard of each other in size, but not below
//   kMinBlock: below kBlocksPerShard * parts * kMinBlock elements the shards have fewer
//   blocks, and a vector of fewer than parts blocks of kMinBlock, which would leave a shard
//   with no block at all, is not transformed (transform comes back false).
// - Inside a shard, the full blocks are interleaved a cache line at a time: element i of the
//   shard's g-th block (of m full blocks) sits at (i / 16) * 16m + 16g + i % 16, so a wire row of
//   16m elements holds one 16-float line of every block. A datagram of consecutive wire elements
//   (hundreds of floats) then carries a line of each of a few dozen blocks, a lost run of
//   datagrams costs each block it touches a line or a few rather than wiping one block, and after
//   the inverse transform the error is spread over those blocks rather than one. Lines rather
//   than single floats, because encode and decode then move whole cache lines (codec/lines.hpp)
//   instead of transposing. A lost datagram's share is uneven across blocks (some lose a line,
//   most none), so whatever corrects for zeroed elements does it per block (`block_of`). The
//   padded tail block (only in the last shard) follows the interleaved part as is.
//
// Everything here is a function of (n, parts, block knob, transform on/off), which every rank
// agrees on, so every rank computes the same layout.
#pragma once

#include "codec/hadamard.hpp"
#include "codec/sharding.hpp"
#include "codec/simd.hpp"

#include <cstddef>

namespace optireduce {

struct BlockLayout {
    static constexpr std::size_t kBlocksPerShard = 8;
    static constexpr std::size_t kMinBlock = 256;

    bool transform = false;
    bool interleave = true;
    std::size_t n = 0;       // the caller's elements
    std::size_t block = 0;   // elements per full block (a power of two); 0 without the transform
    std::size_t full = 0;    // full blocks
    std::size_t tail = 0;    // elements of the padded last block (a power of two), 0 if none
    std::size_t padded = 0;  // elements on the wire: n, or full * block + tail
    int parts = 1;

    std::size_t blocks() const { return full + (tail ? 1 : 0); }
    // Blocks of shard j (transform only).
    Range shard_blocks(int j) const { return shard_of(blocks(), parts, j); }
    // Elements of shard j in the wire vector.
    Range shard(int j) const;
    // The largest shard, for staging.
    std::size_t max_shard() const;
};

// Shard j's blocks (transform only): global blocks first .. first + m - 1 are full, then the
// padded tail block if the shard has it; `offset` is where the shard starts on the wire;
// `interleaved`: its full blocks are interleaved line by line (the layout's interleave and more
// than one of them), else they follow each other whole.
struct ShardBlocks {
    std::size_t first = 0;
    std::size_t m = 0;
    bool has_tail = false;
    std::size_t offset = 0;
    bool interleaved = false;
};
ShardBlocks blocks_of_shard(const BlockLayout &layout, int j);

// The global index of the block that element x of shard j's wire belongs to (transform only).
// Every 16-element-aligned run of a shard [16k, 16k + 16) belongs to one block.
std::size_t block_of(const BlockLayout &layout, int j, std::size_t x);

// max_block: OPTIREDUCE_HADAMARD_BLOCK (a power of two).
BlockLayout plan_layout(std::size_t n, int parts, bool transform, std::size_t max_block);

// The wire vector of `in` (layout.n elements) into `wire` (layout.padded elements). Without the
// transform this is a copy; callers that can use `in` directly do so instead.
void encode(const BlockLayout &layout, const float *in, float *wire, const hadamard::SignKey &key,
            Isa isa = best_isa());
// The inverse: `wire` (layout.padded) back to `out` (layout.n), each element of out written once.
void decode(const BlockLayout &layout, const float *wire, float *out, const hadamard::SignKey &key,
            Isa isa = best_isa());

}  // namespace optireduce
