// SPDX-License-Identifier: BSD-3-Clause
// A sender whose socket queue is full sleeps until the queue has room, not until the next
// datagram arrives (udp_socket_endpoint.cpp, wait_for_send_space): while peers send, datagrams
// arrive every few microseconds, and waking for each made a bounded operation's sender run a
// round of a few datagrams per wake-up. In a network namespace of its own the test shapes
// loopback with a slow tbf, fills one endpoint's send queue behind it while a datagram waits in
// its receive queue, and checks that the wait neither ends at once for that datagram nor
// outlasts the room that comes when the link speeds up. Needs root (the namespace and the qdisc).
#include "test_run.hpp"
#include "transport/udp/udp_socket_endpoint.hpp"
#include "udp_pair.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace optireduce {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

double ms_since(Steady::time_point t) { return std::chrono::duration<double, std::milli>(Steady::now() - t).count(); }

TEST(SendWait, AFullQueueWaitsForRoomNotForArrivals) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace and a qdisc of its own";
    ASSERT_EQ(::unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    // 8 Mbit/s, a queue deep enough for the whole send buffer: nothing is dropped, the sender's
    // buffer stays full for about a second.
    ASSERT_EQ(std::system("ip link set lo up && tc qdisc add dev lo root tbf rate 8mbit burst 70000 limit 8000000"), 0)
        << "ip and tc (iproute2) are needed";
    test::UdpPair pair = test::open_udp_pair(DgramOptions{"lo", 1500, true, true});
    ASSERT_TRUE(pair.ok());
    const auto &[a, b, at_a, at_b] = pair;
    ASSERT_GE(a->buffers().receive, 4 << 20) << "the rule under test applies with a full-size receive buffer";

    // A datagram for a, through the empty queue: it waits in a's receive queue, undrained.
    const TestRun one(1, 100, 100);
    DgramRun to_a = one.to(at_b[0]);
    std::size_t sent = 0;
    ASSERT_EQ(b->send_runs(std::span(&to_a, 1), std::span(&sent, 1)), 0);
    ASSERT_EQ(sent, 1u);
    std::this_thread::sleep_for(milliseconds(20));

    // a fills its send queue towards b.
    const TestRun run(44, 1472 - wire::kHeaderBytes, 100);
    std::size_t runs = 0;
    for (; runs < 10000; ++runs) {
        DgramRun to_b = run.to(at_a[1]);
        sent = 0;
        ASSERT_EQ(a->send_runs(std::span(&to_b, 1), std::span(&sent, 1)), 0);
        if (sent < run.count) break;
    }
    ASSERT_LT(runs, 10000u) << "the send queue never filled: this run tests nothing";

    // Full queue, a datagram waiting: the wait lasts its timeout (the queue drains far slower).
    Steady::time_point t = Steady::now();
    a->wait_for_send_space(milliseconds(200));
    EXPECT_GE(ms_since(t), 150) << "the wait ended for the waiting datagram, not for room in the queue";

    // The link speeds up: room comes long before the timeout, and the wait ends with it.
    ASSERT_EQ(std::system("tc qdisc change dev lo root tbf rate 10gbit burst 70000 limit 8000000"), 0);
    t = Steady::now();
    a->wait_for_send_space(milliseconds(3000));
    EXPECT_LT(ms_since(t), 1500) << "room in the queue did not end the wait";

    // The waiting datagram is still there for the next drain.
    int got = 0;
    const Steady::time_point until = Steady::now() + std::chrono::seconds(2);
    while (got == 0 && Steady::now() < until)
        if ((got = a->poll([](std::span<const std::byte>, fi_addr_t) {})) == 0) a->wait(milliseconds(10));
    EXPECT_EQ(got, 1);
}

}  // namespace
}  // namespace optireduce
