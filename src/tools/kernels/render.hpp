// SPDX-License-Identifier: BSD-3-Clause
// The two renderings of a run's results: the table a person reads and one JSON object.
#pragma once

#include "results.hpp"

#include <cstdio>
#include <string>

namespace optireduce::kernel_bench {

void render_text(std::FILE *out, const Settings &s, const Results &r);
// One JSON object on one line, the newline included.
std::string render_json(const Settings &s, const Results &r);

}  // namespace optireduce::kernel_bench
