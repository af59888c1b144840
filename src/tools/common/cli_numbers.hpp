// SPDX-License-Identifier: BSD-3-Clause
// Numbers as users type them on the tools' command lines. Range checks stay with each option:
// only the option knows its limits and how to word them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace optireduce::tools {

// A whole decimal number, digits only; empty on anything else or on overflow.
std::optional<std::uint64_t> parse_unsigned(std::string_view text);

// "64", "64k", "64M", "1G": binary multiples, as sizes are typed for OSU-style sweeps; empty
// when it is not such a size or does not fit in 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace optireduce::tools
