// SPDX-License-Identifier: BSD-3-Clause
#include "telemetry/histogram.hpp"

#include <algorithm>
#include <bit>

namespace optireduce {

int LatencyHistogram::bucket_of(std::uint64_t ns) {
    constexpr std::uint64_t sub = 1u << kSubBits;
    if (ns < sub) return static_cast<int>(ns);
    const int exp = std::bit_width(ns) - 1;  // >= kSubBits
    const int shift = exp - kSubBits;
    const int mant = static_cast<int>((ns >> shift) & (sub - 1));
    return std::min(((shift + 1) << kSubBits) + mant, kBuckets - 1);
}

double LatencyHistogram::bucket_mid_ns(int bucket) {
    constexpr int sub = 1 << kSubBits;
    if (bucket < sub) return bucket;
    const int shift = (bucket >> kSubBits) - 1;
    const double lo = static_cast<double>((static_cast<std::uint64_t>(sub + (bucket & (sub - 1)))) << shift);
    return lo + static_cast<double>(std::uint64_t{1} << shift) / 2.0;
}

void LatencyHistogram::record(std::uint64_t ns) {
    ++buckets_[static_cast<std::size_t>(bucket_of(ns))];
    ++count_;
    max_ns_ = std::max(max_ns_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram &other) {
    for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
    count_ += other.count_;
    max_ns_ = std::max(max_ns_, other.max_ns_);
}

double LatencyHistogram::percentile_ns(double p) const {
    if (count_ == 0) return 0;
    const double target = p * static_cast<double>(count_);
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
        seen += buckets_[static_cast<std::size_t>(b)];
        if (static_cast<double>(seen) >= target && seen > 0)
            return std::min(bucket_mid_ns(b), static_cast<double>(max_ns_));
    }
    return static_cast<double>(max_ns_);
}

}  // namespace optireduce
