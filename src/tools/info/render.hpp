// SPDX-License-Identifier: BSD-3-Clause
// Two views of one Report: a table for people, JSON for scripts (benchmark records, bug reports).
#pragma once

#include <ostream>

#include "report.hpp"

namespace optireduce::info {

void render_text(const Report &r, std::ostream &os);
void render_json(const Report &r, std::ostream &os);

}  // namespace optireduce::info
