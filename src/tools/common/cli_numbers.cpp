// SPDX-License-Identifier: BSD-3-Clause
#include "common/cli_numbers.hpp"

#include <charconv>

namespace optireduce::tools {

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
    std::uint64_t value = 0;
    const char *end = text.data() + text.size();
    // from_chars alone would accept a leading '-' for nothing and stop at the first non-digit.
    if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
    const auto [stop, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || stop != end) return std::nullopt;
    return value;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
    int shift = 0;
    if (!text.empty()) {
        switch (text.back()) {
            case 'k':
            case 'K': shift = 10; break;
            case 'm':
            case 'M': shift = 20; break;
            case 'g':
            case 'G': shift = 30; break;
            default: break;
        }
    }
    if (shift) text.remove_suffix(1);
    const auto value = parse_unsigned(text);
    if (!value || *value > (UINT64_MAX >> shift)) return std::nullopt;
    return *value << shift;
}

}  // namespace optireduce::tools
