// SPDX-License-Identifier: BSD-3-Clause
// The lower median of a set of values (of an even count, the smaller middle one): a value some
// member actually has, never an average, and one that a single outlier on either side cannot
// move. The job's deadline (deadline_controller.cpp) and the typical path's rate
// (typical_paths.cpp) both take it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace optireduce {

// `values` must not be empty; reordered in place.
inline double lower_median(std::vector<double> &values) {
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

}  // namespace optireduce
