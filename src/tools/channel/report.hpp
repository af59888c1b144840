// SPDX-License-Identifier: BSD-3-Clause
// The table and the JSON lines: what a row's raw counts and times mean per datagram and per GiB.
#pragma once

#include "measure.hpp"

#include <cstdio>
#include <string>

namespace optireduce::channel_bench {

// The stream's CPU cost is counted per this many bytes, the payload of one datagram at the
// usual 1500-byte MTU, so its row compares with the datagram channels'.
inline constexpr double kStreamUnitBytes = 1472;

void print_header(std::FILE *out, const Settings &settings, const std::string &where);
void print_row(std::FILE *out, const Row &row);
// One JSON object on one line, the newline included.
std::string to_json(const Row &row);

}  // namespace optireduce::channel_bench
