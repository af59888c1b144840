// SPDX-License-Identifier: BSD-3-Clause
// Two kernel UDP channel endpoints that know each other, for the channel's tests on loopback.
#pragma once

#include "transport/udp/udp_socket_endpoint.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace optireduce::test {

struct UdpPair {
    std::unique_ptr<UdpSocketEndpoint> a, b;
    std::vector<fi_addr_t> at_a, at_b;  // [0] = a, [1] = b, as each resolved them
    bool ok() const { return a && b && at_a.size() == 2 && at_b.size() == 2; }
};

// Failures are reported as test failures; the caller checks ok().
inline UdpPair open_udp_pair(const DgramOptions &options) {
    UdpPair p;
    std::string error;
    p.a = UdpSocketEndpoint::open(options, &error);
    EXPECT_TRUE(p.a) << error;
    p.b = UdpSocketEndpoint::open(options, &error);
    EXPECT_TRUE(p.b) << error;
    if (!p.a || !p.b) return p;
    std::vector<std::byte> names(2 * DgramEndpoint::kNameSlot);
    std::memcpy(names.data(), p.a->name().data(), DgramEndpoint::kNameSlot);
    std::memcpy(names.data() + DgramEndpoint::kNameSlot, p.b->name().data(), DgramEndpoint::kNameSlot);
    EXPECT_TRUE(p.a->resolve(names, 2, p.at_a, &error)) << error;
    EXPECT_TRUE(p.b->resolve(names, 2, p.at_b, &error)) << error;
    return p;
}

}  // namespace optireduce::test
