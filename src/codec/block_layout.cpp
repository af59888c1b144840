#include "codec/block_layout.hpp"

#include "codec/transpose.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace optireduce {
namespace {

// Blocks transformed together before the interleaving transpose: 16 floats of a wire row are
// one 64-byte cache line, written whole. Fewer for blocks above 4096 elements, so the per-thread
// scratch stays at 256 KiB (in L2) whatever OPTIREDUCE_HADAMARD_BLOCK says, or one block.
constexpr std::size_t kGroup = 16;
constexpr std::size_t kScratchFloats = std::size_t{64} << 10;

std::size_t group_of(std::size_t block) { return std::clamp<std::size_t>(kScratchFloats / block, 1, kGroup); }

// Rows of the scratch are one block plus a cache line apart: with a power-of-two stride the
// transpose's 8 (16) rows would all map to the same L1 set and evict each other.
std::size_t row_of(std::size_t block) { return block + 16; }

std::vector<float> &scratch(std::size_t floats) {
    thread_local std::vector<float> s;
    if (s.size() < floats) s.resize(floats);
    return s;
}

struct ShardBlocks {
    std::size_t first = 0;  // global index of the shard's first block
    std::size_t m = 0;      // its full blocks
    bool has_tail = false;
    std::size_t offset = 0;  // wire offset of the shard
};

ShardBlocks blocks_of_shard(const BlockLayout &l, int j) {
    const Range r = l.shard_blocks(j);
    ShardBlocks s;
    s.first = r.offset;
    s.has_tail = l.tail && r.count && r.offset + r.count == l.blocks();
    s.m = r.count - (s.has_tail ? 1 : 0);
    // Block k starts at k * block, except past the tail (empty shards after it: the end).
    s.offset = r.offset <= l.full ? r.offset * l.block : l.padded;
    return s;
}

}  // namespace

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

void encode(const BlockLayout &l, const float *in, float *wire, const hadamard::SignKey &key, Isa isa) {
    if (!l.transform) {
        std::memcpy(wire, in, l.n * sizeof(float));
        return;
    }
    const std::size_t B = l.block;
    for (int j = 0; j < l.parts; ++j) {
        const ShardBlocks s = blocks_of_shard(l, j);
        float *w = wire + s.offset;
        if (!l.interleave || s.m == 1) {
            for (std::size_t g = 0; g < s.m; ++g) {
                const std::size_t b = s.first + g;
                hadamard::signed_copy(w + g * B, in + b * B, B, key, b, isa);
                hadamard::fwht(w + g * B, B, isa);
            }
        } else {
            const std::size_t R = row_of(B);
            std::vector<float> &tmp = scratch(group_of(B) * R);
            for (std::size_t g0 = 0; g0 < s.m; g0 += group_of(B)) {
                const std::size_t G = std::min(group_of(B), s.m - g0);
                for (std::size_t g = 0; g < G; ++g) {
                    const std::size_t b = s.first + g0 + g;
                    hadamard::signed_copy(tmp.data() + g * R, in + b * B, B, key, b, isa);
                    hadamard::fwht(tmp.data() + g * R, B, isa);
                }
                transpose(tmp.data(), R, w + g0, s.m, G, B, isa);  // w[i * m + g0 + g] = tmp[g * R + i]
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
}

void decode(const BlockLayout &l, const float *wire, float *out, const hadamard::SignKey &key, Isa isa) {
    if (!l.transform) {
        if (out != wire) std::memcpy(out, wire, l.n * sizeof(float));
        return;
    }
    const std::size_t B = l.block;
    const std::size_t R = row_of(B);
    std::vector<float> &tmp = scratch(group_of(B) * R);
    for (int j = 0; j < l.parts; ++j) {
        const ShardBlocks s = blocks_of_shard(l, j);
        const float *w = wire + s.offset;
        const bool transposed = l.interleave && s.m > 1;
        for (std::size_t g0 = 0; g0 < s.m; g0 += group_of(B)) {
            const std::size_t G = std::min(group_of(B), s.m - g0);
            if (transposed) {
                transpose(w + g0, s.m, tmp.data(), R, B, G, isa);  // tmp[g * R + i] = w[i * m + g0 + g]
            } else {
                for (std::size_t g = 0; g < G; ++g)
                    std::memcpy(tmp.data() + g * R, w + (g0 + g) * B, B * sizeof(float));
            }
            for (std::size_t g = 0; g < G; ++g) {
                const std::size_t b = s.first + g0 + g;
                hadamard::fwht(tmp.data() + g * R, B, isa);
                hadamard::signed_copy(out + b * B, tmp.data() + g * R, B, key, b, isa);
            }
        }
        if (s.has_tail) {
            const std::size_t b = l.full, r = l.n - l.full * B;
            std::memcpy(tmp.data(), w + s.m * B, l.tail * sizeof(float));
            hadamard::fwht(tmp.data(), l.tail, isa);
            hadamard::signed_copy(out + b * B, tmp.data(), r, key, b, isa);
        }
    }
}

}  // namespace optireduce
