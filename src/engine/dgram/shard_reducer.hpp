// SPDX-License-Identifier: BSD-3-Clause
// This rank's shard of a bounded operation (docs/architecture.md, "The life of one bounded
// operation"): the peers' contributions to each chunk, summed in rank order as soon as all are
// in (the all-gather sends each chunk on while the reduce-scatter still runs), and after the
// reduce-scatter closed the rest, estimated without bias where contributions are missing, with
// the error that estimate introduced. Also the between-rank spread of the contributions that the
// error estimates of both phases scale with.
#pragma once

#include "codec/sharding.hpp"
#include "engine/dgram/chunk_bitmap.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace optireduce {

class ShardReducer {
public:
    struct Buffers {
        const float *wire;      // our contribution, the whole vector in the wire layout
        const float *incoming;  // the peers' contributions to our shard: sender s's at s * own.count
        float *result;          // the reduced vector, our shard at own.offset
        std::size_t padded;     // floats of the wire layout
    };
    ShardReducer(int rank, int ranks, Range own, std::size_t floats_per_datagram, Buffers buffers);

    std::uint32_t chunks() const { return static_cast<std::uint32_t>(reduced_.size()); }
    // Chunk c's contributions are all in (the router counted them under its lock): sums them.
    void reduce_complete(std::uint32_t c);
    // After the reduce-scatter closed, with its final map: every chunk not reduced yet, summed or
    // estimated; `ready(c)` is called for each, in order.
    template <class Ready>
    void reduce_rest(const ChunkBitmap &map, Ready &&ready) {
        for (std::uint32_t c = 0; c < chunks(); ++c)
            if (!reduced_[c]) {
                reduce_partial(map, c);
                ready(c);
            }
        finish_error(map);
    }
    // The relative error of our reduced shard (binary16, as the all-gather's datagrams carry it):
    // 0 when every contribution arrived.
    std::uint16_t shard_error() const { return shard_error_; }
    double error_sq() const { return error_sq_; }  // absolute, squared, in the wire domain
    // The between-rank spread of our shard's contributions (sampled once, on first use).
    double sigma2(const ChunkBitmap &map);

private:
    // Chunk c's contributions that arrived, in rank order, ours at our rank; `peers`, where
    // given, gets the peers' alone. `all_in`: every peer's arrived, the map is not read.
    void terms_of(const ChunkBitmap *map, std::uint32_t c, const Range &g, std::vector<const float *> &terms,
                  std::vector<const float *> *peers) const;
    void reduce_partial(const ChunkBitmap &map, std::uint32_t c);
    void finish_error(const ChunkBitmap &map);

    int rank_, ranks_;
    Range own_;
    std::size_t F_;
    Buffers buf_;
    std::vector<std::uint8_t> reduced_;  // per chunk
    struct LossyChunk {
        std::size_t len;
        int peers;
    };
    std::vector<LossyChunk> lossy_;
    std::vector<const float *> terms_, peers_;
    double error_sq_ = 0;
    double sigma2_ = -1;  // < 0: not sampled yet
    std::uint16_t shard_error_ = 0;
};

}  // namespace optireduce
