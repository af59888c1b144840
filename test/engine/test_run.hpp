// SPDX-License-Identifier: BSD-3-Clause
// A run of datagrams as the engine builds it, for the kernel UDP channel's tests.
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/wire_header.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace optireduce {

// A run as the engine builds it: header i names datagram i, payload byte k of datagram i is
// (i * 7 + k) mod 251, the last datagram shorter.
struct TestRun {
    std::vector<std::byte> headers, payload;
    std::size_t segment, count;
    TestRun(std::size_t n, std::size_t seg, std::size_t last)
        : headers(n * wire::kHeaderBytes), payload((n - 1) * seg + last), segment(seg), count(n) {
        for (std::size_t i = 0; i < count; ++i) {
            wire::Header h;
            h.chunk = static_cast<std::uint32_t>(i);
            h.payload_len = static_cast<std::uint16_t>(i + 1 < count ? segment : last);
            wire::encode(h, std::span<std::byte, wire::kHeaderBytes>(headers.data() + i * wire::kHeaderBytes,
                                                                     wire::kHeaderBytes));
        }
        for (std::size_t k = 0; k < payload.size(); ++k)
            payload[k] = static_cast<std::byte>(((k / segment) * 7 + k % segment) % 251);
    }
    DgramRun to(fi_addr_t dest) const { return {dest, headers, wire::kHeaderBytes, payload, segment, count}; }
};

}  // namespace optireduce
