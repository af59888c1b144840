#include "codec/estimators.hpp"

namespace optireduce {

void rescale_partial_sum(float *sum, std::size_t n, int contributors, int ranks) {
    if (contributors == ranks || contributors <= 0) return;
    const float scale = static_cast<float>(ranks) / static_cast<float>(contributors);
    for (std::size_t i = 0; i < n; ++i) sum[i] *= scale;
}

void fill_from_own(const float *own, float *dst, std::size_t n, int ranks) {
    const auto scale = static_cast<float>(ranks);
    for (std::size_t i = 0; i < n; ++i) dst[i] = own[i] * scale;
}

}  // namespace optireduce
