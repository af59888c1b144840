// SPDX-License-Identifier: BSD-3-Clause
// splitmix64's finaliser: a bijection of 64-bit words whose every output bit depends on every
// input bit. The codec's counter-based randomness (the transform's signs, int8's rounding keys)
// and the engine's per-chunk seeds all hash with it.
#pragma once

#include <cstdint>

namespace optireduce {

constexpr std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

}  // namespace optireduce
