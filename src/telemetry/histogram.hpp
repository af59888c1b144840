// SPDX-License-Identifier: BSD-3-Clause
// Latency histogram with bounded memory and ~6% resolution: 16 linear sub-buckets per power of
// two of nanoseconds. Histograms of all ranks add bucket by bucket into the job summary.
#pragma once

#include <array>
#include <cstdint>

namespace optireduce {

class LatencyHistogram {
public:
    static constexpr int kSubBits = 4;
    static constexpr int kBuckets = 64 << kSubBits;

    void record(std::uint64_t ns);
    void merge(const LatencyHistogram &other);
    std::uint64_t count() const { return count_; }
    std::uint64_t max_ns() const { return max_ns_; }
    // Value (ns) below which a fraction p (0..1) of the samples lie; 0 when empty.
    double percentile_ns(double p) const;

    // Flat view for MPI reductions (buckets then count then max).
    std::array<std::uint64_t, kBuckets> &buckets() { return buckets_; }
    const std::array<std::uint64_t, kBuckets> &buckets() const { return buckets_; }
    void set_totals(std::uint64_t count, std::uint64_t max_ns) {
        count_ = count;
        max_ns_ = max_ns;
    }

    static int bucket_of(std::uint64_t ns);
    static double bucket_mid_ns(int bucket);

private:
    std::array<std::uint64_t, kBuckets> buckets_{};
    std::uint64_t count_ = 0;
    std::uint64_t max_ns_ = 0;
};

}  // namespace optireduce
