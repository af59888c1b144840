// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/shard_reducer.hpp"

#include "codec/estimators.hpp"
#include "codec/reduce.hpp"
#include "transport/wire_header.hpp"

#include <cmath>

namespace optireduce {

ShardReducer::ShardReducer(int rank, int ranks, Range own, std::size_t floats_per_datagram, Buffers buffers)
    : rank_(rank),
      ranks_(ranks),
      own_(own),
      F_(floats_per_datagram),
      buf_(buffers),
      reduced_(segment_count(own.count, floats_per_datagram), 0) {
    terms_.reserve(static_cast<std::size_t>(ranks));
    peers_.reserve(static_cast<std::size_t>(ranks));
}

void ShardReducer::terms_of(const ChunkBitmap *map, std::uint32_t c, const Range &g, std::vector<const float *> &terms,
                            std::vector<const float *> *peers) const {
    terms.clear();
    if (peers) peers->clear();
    for (int s = 0; s < ranks_; ++s) {
        const auto i = static_cast<std::size_t>(s);
        if (s == rank_) {
            terms.push_back(buf_.wire + own_.offset + g.offset);
        } else if (!map || map->test(i, c)) {
            terms.push_back(buf_.incoming + i * own_.count + g.offset);
            if (peers) peers->push_back(terms.back());
        }
    }
}

void ShardReducer::reduce_complete(std::uint32_t c) {
    const Range g = segment_of(own_.count, F_, c);
    terms_of(nullptr, c, g, terms_, nullptr);
    sum_in_order(terms_, buf_.result + own_.offset + g.offset, g.count);
    reduced_[c] = 1;
}

void ShardReducer::reduce_partial(const ChunkBitmap &map, std::uint32_t c) {
    const Range g = segment_of(own_.count, F_, c);
    terms_of(&map, c, g, terms_, &peers_);
    float *dst = buf_.result + own_.offset + g.offset;
    if (peers_.size() + 1 == static_cast<std::size_t>(ranks_)) {
        // Terms in rank order, our own at our rank: every rank's shard adds up the same way
        // (with the transform off, the same bits as exact mode).
        sum_in_order(terms_, dst, g.count);
    } else {
        estimate_partial_sum(buf_.wire + own_.offset + g.offset, peers_, ranks_, dst, g.count);
        lossy_.push_back({g.count, static_cast<int>(peers_.size())});
    }
    reduced_[c] = 1;
}

void ShardReducer::finish_error(const ChunkBitmap &map) {
    if (lossy_.empty()) return;
    const double s2 = sigma2(map);
    for (const LossyChunk &l : lossy_) error_sq_ += partial_sum_error_sq(l.len, ranks_, l.peers, s2);
    if (error_sq_ <= 0) return;  // e.g. every contribution equal: the estimate is exact
    const double norm2 = sum_squares(buf_.result + own_.offset, own_.count);
    // A zero shard with a nonzero error: the relative error is unbounded, sent as the largest.
    shard_error_ = wire::to_half(norm2 > 0 ? static_cast<float>(std::sqrt(error_sq_ / norm2)) : 65504.0f);
}

double ShardReducer::sigma2(const ChunkBitmap &map) {
    if (sigma2_ >= 0) return sigma2_;
    // Every 8th chunk is plenty for one number per operation, and costs an eighth of a pass.
    constexpr std::uint32_t kStride = 8;
    SpreadSample sample;
    for (std::uint32_t stride : {kStride, 1u}) {
        for (std::uint32_t c = 0; c < chunks(); c += stride) {
            const Range g = segment_of(own_.count, F_, c);
            terms_of(&map, c, g, terms_, nullptr);
            sample.add(terms_, g.count);
        }
        if (sample.coords > 0) break;  // else: nothing sampled had two terms; try every chunk
    }
    // Nothing to compare with at all (every peer lost, or our shard is empty): the mean square
    // of our own values stands in (of our shard, else of our whole input).
    const Range own = own_.count > 0 ? own_ : Range{0, buf_.padded};
    sigma2_ = sample.coords > 0 ? sample.sigma2()
              : own.count > 0   ? sum_squares(buf_.wire + own.offset, own.count) / static_cast<double>(own.count)
                                : 0;
    return sigma2_;
}

}  // namespace optireduce
