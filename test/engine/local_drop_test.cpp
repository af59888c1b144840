// SPDX-License-Identifier: BSD-3-Clause
// Datagrams our own host's queue drops are sent again, not lost (IP_RECVERR, udp_batch_io.cpp).
// In a network namespace of its own the test gives loopback a tbf whose queue holds about two
// offloaded runs, sends a burst that overflows it, and checks that the queue did drop and that
// every datagram still arrived, whole and in order. Needs root (the namespace and the qdisc).
#include "test_run.hpp"
#include "transport/udp/udp_socket_endpoint.hpp"
#include "udp_pair.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace optireduce {
namespace {

// Packets loopback's qdisc dropped so far ("dropped N" in tc -s).
long qdisc_drops() {
    FILE *f = ::popen("tc -s qdisc show dev lo", "r");
    if (!f) return -1;
    long drops = -1;
    char line[512];
    while (std::fgets(line, sizeof line, f))
        if (const char *d = std::strstr(line, "dropped ")) drops = std::strtol(d + 8, nullptr, 10);
    ::pclose(f);
    return drops;
}

TEST(LocalDrops, AFullHostQueueDelaysDatagramsButLosesNone) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace and a qdisc of its own";
    ASSERT_EQ(::unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    // 400 Mbit/s; the bucket holds one 64 KiB offloaded send, the queue about two.
    ASSERT_EQ(std::system("ip link set lo up && tc qdisc add dev lo root tbf rate 400mbit burst 70000 limit 140000"), 0)
        << "ip and tc (iproute2) are needed";
    test::UdpPair pair = test::open_udp_pair(DgramOptions{"lo", 1500, true, true});
    ASSERT_TRUE(pair.ok());
    const auto &[a, b, at_a, at_b] = pair;

    // 3000 datagrams of 1472 bytes, 4.4 MB: the sender's 1 MiB socket buffer fills the queue
    // many times over. Whatever the queue refuses is sent again once there is room.
    const TestRun run(3000, 1472 - wire::kHeaderBytes, 100);
    std::vector<std::uint32_t> got;
    const auto take = [&](std::span<const std::byte> d, fi_addr_t) {
        const wire::Decoded dec = wire::decode(d);
        if (dec.header) got.push_back(dec.header->chunk);
    };
    std::size_t done = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (done < run.count && std::chrono::steady_clock::now() < until) {
        DgramRun rest = run.to(at_a[1]);
        rest.headers = rest.headers.subspan(done * wire::kHeaderBytes);
        rest.payload = rest.payload.subspan(done * run.segment);
        rest.count -= done;
        std::size_t sent = 0;
        ASSERT_EQ(a->send_runs(std::span(&rest, 1), std::span(&sent, 1)), 0);
        done += sent;
        b->poll(take);
        if (sent == 0) a->wait_for_send_space(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(done, run.count) << "the sender never got rid of its data";
    while (got.size() < run.count && std::chrono::steady_clock::now() < until)
        if (b->poll(take) == 0) b->wait(std::chrono::milliseconds(10));

    EXPECT_GT(qdisc_drops(), 0) << "the queue never overflowed: this run tested nothing";
    ASSERT_EQ(got.size(), run.count) << "datagrams the host's own queue dropped were counted as sent and lost";
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], i) << "out of order or duplicated";
}

}  // namespace
}  // namespace optireduce
