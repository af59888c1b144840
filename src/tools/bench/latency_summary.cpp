#include "latency_summary.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace optireduce::bench {
namespace {

double nearest_rank(const std::vector<double>& sorted, double percent)
{
    auto rank = static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

} // namespace

LatencySummary summarize(std::span<const double> latencies_us)
{
    if (latencies_us.empty())
        return {};
    std::vector<double> sorted(latencies_us.begin(), latencies_us.end());
    std::sort(sorted.begin(), sorted.end());
    LatencySummary s;
    s.avg = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
    s.min = sorted.front();
    s.p50 = nearest_rank(sorted, 50);
    s.p99 = nearest_rank(sorted, 99);
    s.max = sorted.back();
    return s;
}

} // namespace optireduce::bench
