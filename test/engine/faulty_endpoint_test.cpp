// SPDX-License-Identifier: BSD-3-Clause
// The datagram fault decorator against a scripted channel: without a fault the channel is not
// wrapped; drops happen before the sink at the asked rate and are counted; copies go only for
// datagrams the channel took, byte for byte, and never change what send_runs reports.
#include "scripted_endpoint.hpp"
#include "telemetry/stats.hpp"
#include "transport/faulty_dgram_endpoint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace optireduce {
namespace {

using test::ScriptedEndpoint;

TEST(FaultyEndpoint, NoFaultLeavesTheChannelUnwrapped) {
    auto inner = std::make_unique<ScriptedEndpoint>();
    DgramEndpoint *raw = inner.get();
    EXPECT_EQ(with_faults(std::move(inner), DgramFaults{0, 0, 5}).get(), raw);
}

TEST(FaultyEndpoint, DropsBeforeTheSinkAtTheRateAndCountsEach) {
    auto inner = std::make_unique<ScriptedEndpoint>();
    inner->arrivals = 200;
    ScriptedEndpoint &script = *inner;
    auto ep = with_faults(std::move(inner), DgramFaults{0.25, 0, 11});
    const std::uint64_t before = process_stats().datagrams_fault_dropped.load();
    std::size_t seen = 0, handed = 0;
    for (int round = 0; round < 50; ++round) {
        handed += static_cast<std::size_t>(ep->poll([&](std::span<const std::byte>, fi_addr_t src) {
            EXPECT_EQ(src, 7u);
            ++seen;
        }));
    }
    const std::size_t n = 50 * script.arrivals;
    EXPECT_EQ(handed, n);  // poll reports what arrived, dropped or not
    const std::uint64_t dropped = process_stats().datagrams_fault_dropped.load() - before;
    EXPECT_EQ(seen + dropped, n);
    const double sigma = std::sqrt(n * 0.25 * 0.75);
    EXPECT_NEAR(static_cast<double>(dropped), 0.25 * n, 5 * sigma);
}

TEST(FaultyEndpoint, CopiesOnlyWhatWentOutAndReportsTheOriginals) {
    auto inner = std::make_unique<ScriptedEndpoint>();
    inner->accept = 3;  // of a run of 5: the queue filled after 3
    ScriptedEndpoint &script = *inner;
    auto ep = with_faults(std::move(inner), DgramFaults{0, 1, 11});
    std::vector<std::byte> headers(5 * 2), payload(5 * 4 - 1);
    for (std::size_t i = 0; i < headers.size(); ++i) headers[i] = static_cast<std::byte>(i);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(100 + i);
    const DgramRun run{4, headers, 2, payload, 4, 5};
    std::size_t sent = 0;
    ASSERT_EQ(ep->send_runs(std::span(&run, 1), std::span(&sent, 1)), 0);
    EXPECT_EQ(sent, 3u);
    ASSERT_EQ(script.sent.size(), 6u);  // 3 originals, then a copy of each
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(script.sent[3 + i].dest, 4u);
        EXPECT_EQ(script.sent[3 + i].bytes, script.sent[i].bytes);
    }
    ASSERT_EQ(ep->send(4, std::span(headers).first(2), std::span(payload).first(4)), 0);
    EXPECT_EQ(script.sent.size(), 8u);
}

TEST(FaultyEndpoint, OneSeedOneSequence) {
    auto decisions = [](std::uint64_t seed) {
        auto inner = std::make_unique<ScriptedEndpoint>();
        inner->arrivals = 64;
        auto ep = with_faults(std::move(inner), DgramFaults{0.5, 0, seed});
        std::vector<int> kept;
        ep->poll([&](std::span<const std::byte> d, fi_addr_t) { kept.push_back(static_cast<int>(d[0])); });
        return kept;
    };
    EXPECT_EQ(decisions(3), decisions(3));
    EXPECT_NE(decisions(3), decisions(4));
}

}  // namespace
}  // namespace optireduce
