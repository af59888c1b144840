// SPDX-License-Identifier: BSD-3-Clause
#include "codec/block_layout.hpp"

#include "codec/lines.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <vector>

namespace optireduce {
namespace {

// Encode streams its lines past the cache (codec/lines.hpp) when the wire vector is at least
// this large: a wire that big does not stay in the cache until the senders read it anyway, and a
// plain store would first read each line it overwrites.
constexpr std::size_t kStreamBytes = std::size_t{1} << 20;

// One block's worth of scratch, 64-byte aligned (the lines are copied whole), per thread.
float *scratch(std::size_t floats) {
    thread_local std::vector<float> s;
    if (s.size() < floats + kLineFloats) s.resize(floats + kLineFloats);
    void *p = s.data();
    std::size_t room = s.size() * sizeof(float);
    return static_cast<float *>(std::align(64, floats * sizeof(float), p, room));
}

}  // namespace

ShardBlocks blocks_of_shard(const BlockLayout &l, int j) {
    const Range r = l.shard_blocks(j);
    ShardBlocks s;
    s.first = r.offset;
    s.has_tail = l.tail && r.count && r.offset + r.count == l.blocks();
    s.m = r.count - (s.has_tail ? 1 : 0);
    s.interleaved = l.interleave && s.m > 1;
    // Block k starts at k * block, except past the tail (empty shards after it: the end).
    s.offset = r.offset <= l.full ? r.offset * l.block : l.padded;
    return s;
}

Range BlockLayout::shard(int j) const {
    if (!transform) return shard_of(n, parts, j);
    const ShardBlocks s = blocks_of_shard(*this, j);
    return {s.offset, s.m * block + (s.has_tail ? tail : 0)};
}

std::size_t BlockLayout::max_shard() const {
    std::size_t m = 0;
    for (int j = 0; j < parts; ++j) m = std::max(m, shard(j).count);
    return m;
}

BlockLayout plan_layout(std::size_t n, int parts, bool transform, std::size_t max_block) {
    BlockLayout l;
    l.n = n;
    l.parts = parts;
    l.padded = n;
    // Fewer blocks of kMinBlock than parts would leave some shard without a block (its owner
    // would then have nothing to estimate the spread from, and the others' shards would be
    // twice as large): such a small vector is sent as it is.
    const std::size_t min_blocks = (n + BlockLayout::kMinBlock - 1) / BlockLayout::kMinBlock;
    if (!transform || min_blocks < static_cast<std::size_t>(parts)) return l;
    l.transform = true;
    std::size_t b = std::bit_floor(std::max<std::size_t>(max_block, 1));
    const std::size_t want = BlockLayout::kBlocksPerShard * static_cast<std::size_t>(parts);
    while (b > BlockLayout::kMinBlock && (n + b - 1) / b < want) b /= 2;
    l.block = b;
    l.full = n / b;
    const std::size_t r = n % b;
    l.tail = r ? std::bit_ceil(r) : 0;
    l.padded = l.full * b + l.tail;
    return l;
}

std::size_t block_of(const BlockLayout &l, int j, std::size_t x) {
    const ShardBlocks s = blocks_of_shard(l, j);
    if (x >= s.m * l.block) return l.full;  // the padded tail block
    if (!s.interleaved) return s.first + x / l.block;
    return s.first + x % (s.m * kLineFloats) / kLineFloats;
}

void encode(const BlockLayout &l, const float *in, float *wire, const hadamard::SignKey &key, Isa isa) {
    if (!l.transform) {
        std::memcpy(wire, in, l.n * sizeof(float));
        return;
    }
    const std::size_t B = l.block;
    const bool stream = l.padded * sizeof(float) >= kStreamBytes;
    for (int j = 0; j < l.parts; ++j) {
        const ShardBlocks s = blocks_of_shard(l, j);
        float *w = wire + s.offset;
        if (!s.interleaved) {
            for (std::size_t g = 0; g < s.m; ++g) {
                const std::size_t b = s.first + g;
                hadamard::signed_copy(w + g * B, in + b * B, B, key, b, isa);
                hadamard::fwht(w + g * B, B, isa);
            }
        } else {
            // Each block is transformed in a scratch that stays in L1 and leaves it line by
            // line: line k of block g goes to wire line k * m + g (block_layout.hpp).
            float *tmp = scratch(B);
            for (std::size_t g = 0; g < s.m; ++g) {
                const std::size_t b = s.first + g;
                hadamard::signed_copy(tmp, in + b * B, B, key, b, isa);
                hadamard::fwht(tmp, B, isa);
                copy_lines(tmp, kLineFloats, w + g * kLineFloats, s.m * kLineFloats, B / kLineFloats, stream, isa);
            }
        }
        if (s.has_tail) {
            const std::size_t b = l.full, r = l.n - l.full * B;
            float *t = w + s.m * B;
            hadamard::signed_copy(t, in + b * B, r, key, b, isa);
            std::fill(t + r, t + l.tail, 0.0f);
            hadamard::fwht(t, l.tail, isa);
        }
    }
    // The senders, on other threads, read what was streamed.
    if (stream) lines_fence();
}

void decode(const BlockLayout &l, const float *wire, float *out, const hadamard::SignKey &key, Isa isa) {
    if (!l.transform) {
        if (out != wire) std::memcpy(out, wire, l.n * sizeof(float));
        return;
    }
    const std::size_t B = l.block;
    float *tmp = scratch(std::max(B, l.tail));
    for (int j = 0; j < l.parts; ++j) {
        const ShardBlocks s = blocks_of_shard(l, j);
        const float *w = wire + s.offset;
        for (std::size_t g = 0; g < s.m; ++g) {
            const std::size_t b = s.first + g;
            if (s.interleaved)
                copy_lines(w + g * kLineFloats, s.m * kLineFloats, tmp, kLineFloats, B / kLineFloats, false, isa);
            else
                std::memcpy(tmp, w + g * B, B * sizeof(float));
            hadamard::fwht(tmp, B, isa);
            hadamard::signed_copy(out + b * B, tmp, B, key, b, isa);
        }
        if (s.has_tail) {
            const std::size_t b = l.full, r = l.n - l.full * B;
            std::memcpy(tmp, w + s.m * B, l.tail * sizeof(float));
            hadamard::fwht(tmp, l.tail, isa);
            hadamard::signed_copy(out + b * B, tmp, r, key, b, isa);
        }
    }
}

}  // namespace optireduce
