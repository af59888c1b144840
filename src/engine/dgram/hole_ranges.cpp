// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/hole_ranges.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace optireduce {
namespace {

template <class T>
void put(std::vector<std::byte> &out, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

template <class T>
bool get(std::span<const std::byte> in, std::size_t &at, T &v) {
    if (at > in.size() || in.size() - at < sizeof(T)) return false;
    v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(in[at + i]) << (8 * i));
    at += sizeof(T);
    return true;
}

std::uint64_t end_of(const ChunkRange &r) { return std::uint64_t{r.first} + r.count; }

}  // namespace

std::vector<ChunkRange> merge_ranges(std::vector<ChunkRange> ranges) {
    std::erase_if(ranges, [](const ChunkRange &r) { return r.count == 0; });
    std::sort(ranges.begin(), ranges.end(), [](const ChunkRange &a, const ChunkRange &b) { return a.first < b.first; });
    std::vector<ChunkRange> out;
    for (const ChunkRange &r : ranges) {
        if (!out.empty() && r.first <= end_of(out.back())) {
            const std::uint64_t end = std::max(end_of(out.back()), end_of(r));
            out.back().count = static_cast<std::uint32_t>(end - out.back().first);
        } else {
            out.push_back(r);
        }
    }
    return out;
}

std::vector<ChunkRange> coarsen_ranges(std::vector<ChunkRange> ranges, std::size_t max_ranges) {
    ranges = merge_ranges(std::move(ranges));
    if (ranges.size() <= max_ranges) return ranges;
    if (max_ranges == 0) return {};
    // Keep the max_ranges - 1 widest gaps open; close the others.
    std::vector<std::size_t> gaps(ranges.size() - 1);
    std::iota(gaps.begin(), gaps.end(), std::size_t{0});
    auto gap = [&](std::size_t i) { return ranges[i + 1].first - end_of(ranges[i]); };
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(max_ranges - 1), gaps.end(),
                     [&](std::size_t a, std::size_t b) { return gap(a) > gap(b); });
    std::vector<std::uint8_t> open(ranges.size() - 1, 0);
    for (std::size_t k = 0; k + 1 < max_ranges; ++k) open[gaps[k]] = 1;
    std::vector<ChunkRange> out{ranges[0]};
    for (std::size_t i = 1; i < ranges.size(); ++i) {
        if (open[i - 1])
            out.push_back(ranges[i]);
        else
            out.back().count = static_cast<std::uint32_t>(end_of(ranges[i]) - out.back().first);
    }
    return out;
}

namespace {
constexpr std::size_t kRangeBytes = 2 * sizeof(std::uint32_t);
std::size_t vote_fixed_bytes(std::size_t have_bytes) {
    return sizeof(std::uint16_t) + 1 + sizeof(std::uint16_t) + have_bytes + sizeof(std::uint32_t);
}
}  // namespace

std::size_t vote_max_ranges(int ranks, std::size_t max_payload) {
    const std::size_t fixed = vote_fixed_bytes((static_cast<std::size_t>(ranks) + 7) / 8);
    return max_payload < fixed ? 0 : (max_payload - fixed) / kRangeBytes;
}

std::vector<std::byte> encode_vote(const HoleVote &v, std::size_t max_payload) {
    const std::size_t have_bytes = (v.have.size() + 7) / 8;
    const std::size_t fixed = vote_fixed_bytes(have_bytes);
    if (have_bytes > 0xffff || max_payload < fixed + kRangeBytes) return {};
    const std::vector<ChunkRange> holes =
        coarsen_ranges(v.holes, vote_max_ranges(static_cast<int>(v.have.size()), max_payload));
    std::vector<std::byte> out;
    out.reserve(fixed + holes.size() * kRangeBytes);
    put(out, static_cast<std::uint16_t>(have_bytes));
    put(out, static_cast<std::uint8_t>(v.final ? 1 : 0));
    put(out, std::uint16_t{0});  // reserved
    for (std::size_t b = 0; b < have_bytes; ++b) {
        unsigned byte = 0;
        for (std::size_t i = 0; i < 8 && 8 * b + i < v.have.size(); ++i) byte |= (v.have[8 * b + i] ? 1u : 0u) << i;
        out.push_back(static_cast<std::byte>(byte));
    }
    put(out, static_cast<std::uint32_t>(holes.size()));
    for (const ChunkRange &r : holes) {
        put(out, r.first);
        put(out, r.count);
    }
    return out;
}

std::optional<HoleVote> decode_vote(std::span<const std::byte> payload, int ranks, std::uint64_t total_chunks) {
    std::size_t at = 0;
    std::uint16_t have_bytes = 0;
    std::uint8_t final = 0;
    if (!get(payload, at, have_bytes) || have_bytes != (static_cast<std::size_t>(ranks) + 7) / 8 ||
        !get(payload, at, final) || final > 1)
        return std::nullopt;
    HoleVote v;
    std::uint16_t reserved = 0;  // ignored (once a lesson of late votes)
    if (!get(payload, at, reserved) || payload.size() - at < have_bytes) return std::nullopt;
    v.final = final == 1;
    v.have.resize(static_cast<std::size_t>(ranks));
    for (std::size_t i = 0; i < v.have.size(); ++i)
        v.have[i] = (static_cast<unsigned>(payload[at + i / 8]) >> (i % 8)) & 1u;
    at += have_bytes;
    std::uint32_t n = 0;
    if (!get(payload, at, n) || (payload.size() - at) != std::uint64_t{n} * 2 * sizeof(std::uint32_t))
        return std::nullopt;
    v.holes.resize(n);
    for (ChunkRange &r : v.holes) {
        get(payload, at, r.first);
        get(payload, at, r.count);
        if (r.count == 0 || end_of(r) > total_chunks) return std::nullopt;
    }
    return v;
}

}  // namespace optireduce
