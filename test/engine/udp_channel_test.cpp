// SPDX-License-Identifier: BSD-3-Clause
// The kernel UDP channel over real loopback sockets: runs leave in segmented sends and arrive
// whole, in order and with the right sender, with every combination of offloads (what a kernel
// without GSO or GRO gets); names round-trip, the MTU rule holds, strangers are named as such,
// and a bad interface list is refused with a message that helps. No MPI call is made.
#include "test_run.hpp"
#include "transport/udp/udp_address.hpp"
#include "transport/udp/udp_socket_endpoint.hpp"
#include "transport/wire_header.hpp"
#include "udp_pair.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

namespace optireduce {
namespace {

struct Received {
    std::vector<std::vector<std::byte>> datagrams;
    std::vector<fi_addr_t> sources;
};

// Drains `ep` until `want` datagrams arrived or two seconds passed.
Received receive(DgramEndpoint &ep, std::size_t want) {
    Received r;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (r.datagrams.size() < want && std::chrono::steady_clock::now() < until) {
        const int n = ep.poll([&](std::span<const std::byte> d, fi_addr_t src) {
            r.datagrams.emplace_back(d.begin(), d.end());
            r.sources.push_back(src);
        });
        if (n == 0) ep.wait(std::chrono::milliseconds(10));
    }
    return r;
}

// Sends `run` completely (a full socket is drained by the receiver between tries).
void send_all(DgramEndpoint &from, DgramEndpoint &to, const TestRun &run, fi_addr_t dest, Received &got) {
    std::size_t done = 0;
    for (int attempt = 0; done < run.count && attempt < 1000; ++attempt) {
        DgramRun rest = run.to(dest);
        rest.headers = rest.headers.subspan(done * wire::kHeaderBytes);
        rest.payload = rest.payload.subspan(done * run.segment);
        rest.count -= done;
        std::size_t sent = 0;
        ASSERT_EQ(from.send_runs(std::span(&rest, 1), std::span(&sent, 1)), 0);
        done += sent;
        to.poll([&](std::span<const std::byte> d, fi_addr_t src) {
            got.datagrams.emplace_back(d.begin(), d.end());
            got.sources.push_back(src);
        });
    }
    ASSERT_EQ(done, run.count);
}

void check_run(const TestRun &run, const Received &got, fi_addr_t expected_source) {
    ASSERT_EQ(got.datagrams.size(), run.count);
    for (std::size_t i = 0; i < run.count; ++i) {
        const auto &d = got.datagrams[i];
        const wire::Decoded dec = wire::decode(d);
        ASSERT_TRUE(dec.header) << "datagram " << i << ": " << wire::to_string(dec.error);
        EXPECT_EQ(dec.header->chunk, i) << "loopback keeps order";
        const std::size_t len = dec.header->payload_len;
        ASSERT_EQ(d.size(), wire::kHeaderBytes + len);
        EXPECT_EQ(0, std::memcmp(d.data() + wire::kHeaderBytes, run.payload.data() + i * run.segment, len))
            << "payload of datagram " << i;
        EXPECT_EQ(got.sources[i], expected_source);
    }
}

class Offloads : public ::testing::TestWithParam<std::pair<bool, bool>> {};

TEST_P(Offloads, RunsArriveWholeInOrderFromTheirSender) {
    const auto [gso, gro] = GetParam();
    test::UdpPair p = test::open_udp_pair(DgramOptions{"", 1500, gso, gro});
    ASSERT_TRUE(p.a && p.b);
    EXPECT_EQ(p.a->gso(), gso);
    EXPECT_EQ(p.b->gro(), gro);
    // 1472-byte datagrams: 44 to a segmented send, the run needs several; the last is short.
    const std::size_t datagram = p.a->max_datagram(p.at_a);
    ASSERT_EQ(datagram, 1472u);
    const TestRun run(300, datagram - wire::kHeaderBytes, 100);
    Received got;
    send_all(*p.a, *p.b, run, p.at_a[1], got);
    Received rest = receive(*p.b, run.count - got.datagrams.size());
    got.datagrams.insert(got.datagrams.end(), rest.datagrams.begin(), rest.datagrams.end());
    got.sources.insert(got.sources.end(), rest.sources.begin(), rest.sources.end());
    check_run(run, got, p.at_b[0]);
    // Loopback never segments a segmented send: with GRO the receiver gets it whole and splits.
    if (gso && gro) {
        EXPECT_GT(p.b->coalesced(), 0u);
    }
    if (!gro) {
        EXPECT_EQ(p.b->coalesced(), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(GsoGro, Offloads,
                         ::testing::Values(std::pair{true, true}, std::pair{true, false}, std::pair{false, true},
                                           std::pair{false, false}));

TEST(UdpChannel, OneCallServesSeveralPeers) {
    std::string error;
    auto a = UdpSocketEndpoint::open(DgramOptions{}, &error);
    auto b = UdpSocketEndpoint::open(DgramOptions{}, &error);
    auto c = UdpSocketEndpoint::open(DgramOptions{}, &error);
    ASSERT_TRUE(a && b && c) << error;
    std::vector<std::byte> names(3 * DgramEndpoint::kNameSlot);
    std::memcpy(names.data(), a->name().data(), DgramEndpoint::kNameSlot);
    std::memcpy(names.data() + DgramEndpoint::kNameSlot, b->name().data(), DgramEndpoint::kNameSlot);
    std::memcpy(names.data() + 2 * DgramEndpoint::kNameSlot, c->name().data(), DgramEndpoint::kNameSlot);
    std::vector<fi_addr_t> at_a, at_b, at_c;
    ASSERT_TRUE(a->resolve(names, 3, at_a, &error) && b->resolve(names, 3, at_b, &error) &&
                c->resolve(names, 3, at_c, &error))
        << error;
    // Loopback's MTU is 64 KiB: the datagram is a jumbo frame's at most.
    const std::size_t datagram = a->max_datagram(at_a);
    EXPECT_EQ(datagram, udp::kMaxDatagram);
    const TestRun to_b(20, datagram - wire::kHeaderBytes, 8), to_c(3, datagram - wire::kHeaderBytes, 4);
    const DgramRun runs[2] = {to_b.to(at_a[1]), to_c.to(at_a[2])};
    std::size_t sent[2] = {0, 0};
    ASSERT_EQ(a->send_runs(runs, sent), 0);
    ASSERT_EQ(sent[0], 20u);
    ASSERT_EQ(sent[1], 3u);
    check_run(to_b, receive(*b, 20), at_b[0]);
    check_run(to_c, receive(*c, 3), at_c[0]);
}

TEST(UdpChannel, DatagramsFromStrangersAreNamedSo) {
    std::string error;
    test::UdpPair p = test::open_udp_pair(DgramOptions{});
    ASSERT_TRUE(p.a && p.b);
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(p.b->port());
    const char junk[] = "not a datagram of ours";
    ASSERT_EQ(::sendto(fd, junk, sizeof junk, 0, reinterpret_cast<sockaddr *>(&to), sizeof to),
              static_cast<ssize_t>(sizeof junk));
    ::close(fd);
    const Received got = receive(*p.b, 1);
    ASSERT_EQ(got.datagrams.size(), 1u);
    EXPECT_EQ(got.sources[0], DgramEndpoint::kUnknownSource);
}

TEST(UdpChannel, BadInterfaceListIsRefusedWithTheInterfacesThatExist) {
    std::string error;
    auto ep = UdpSocketEndpoint::open(DgramOptions{"nosuchif0", 0, true, true}, &error);
    EXPECT_FALSE(ep);
    EXPECT_NE(error.find("OPTIREDUCE_IFACE=nosuchif0"), std::string::npos) << error;
    EXPECT_NE(error.find("lo"), std::string::npos) << error;
}

TEST(UdpChannel, LoopbackByNameWhenAsked) {
    std::string error;
    auto ep = UdpSocketEndpoint::open(DgramOptions{"lo", 0, true, true}, &error);
    ASSERT_TRUE(ep) << error;
    ASSERT_EQ(ep->addresses().size(), 1u);
    EXPECT_EQ(ep->addresses()[0].iface, "lo");
}

TEST(UdpAddress, NameRoundTripsAndForeignNamesAreRefused) {
    udp::Name n;
    n.netns_id = 0x0123456789abcdefull;
    n.port = 40211;
    n.addresses.resize(3);
    inet_pton(AF_INET, "10.77.0.11", &n.addresses[0]);
    inet_pton(AF_INET, "192.168.1.5", &n.addresses[1]);
    inet_pton(AF_INET, "127.0.0.1", &n.addresses[2]);
    std::array<std::byte, udp::kNameBytes> slot{};
    udp::encode_name(n, slot);
    const auto back = udp::decode_name(slot);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->netns_id, n.netns_id);
    EXPECT_EQ(back->port, n.port);
    ASSERT_EQ(back->addresses.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(back->addresses[i].s_addr, n.addresses[i].s_addr);

    auto bad = slot;
    bad[0] = std::byte{'X'};  // another channel's name (a libfabric address)
    EXPECT_FALSE(udp::decode_name(bad));
    bad = slot;
    bad[4] = std::byte{0};  // no address
    EXPECT_FALSE(udp::decode_name(bad));
    bad[4] = std::byte{9};  // more than fit
    EXPECT_FALSE(udp::decode_name(bad));
}

TEST(UdpAddress, DestinationIsLoopbackInOurNamespaceElseOnASharedSubnet) {
    udp::Name peer;
    peer.netns_id = 2;
    peer.port = 5000;
    peer.addresses.resize(2);
    inet_pton(AF_INET, "192.168.9.9", &peer.addresses[0]);
    inet_pton(AF_INET, "10.77.0.12", &peer.addresses[1]);
    std::vector<udp::LocalAddress> mine(1);
    mine[0].iface = "eth0";
    inet_pton(AF_INET, "10.77.0.11", &mine[0].addr);
    inet_pton(AF_INET, "255.255.255.0", &mine[0].netmask);
    char text[INET_ADDRSTRLEN];

    sockaddr_in d = udp::choose_destination(peer, 1, mine);
    inet_ntop(AF_INET, &d.sin_addr, text, sizeof text);
    EXPECT_STREQ(text, "10.77.0.12");
    EXPECT_EQ(ntohs(d.sin_port), 5000);

    d = udp::choose_destination(peer, 2, mine);
    inet_ntop(AF_INET, &d.sin_addr, text, sizeof text);
    EXPECT_STREQ(text, "127.0.0.1");

    inet_pton(AF_INET, "172.16.0.1", &mine[0].addr);  // no subnet in common: the first address
    d = udp::choose_destination(peer, 1, mine);
    inet_ntop(AF_INET, &d.sin_addr, text, sizeof text);
    EXPECT_STREQ(text, "192.168.9.9");
}

TEST(UdpAddress, DatagramFollowsTheMtuUpToAJumboFrame) {
    EXPECT_EQ(udp::datagram_for_mtu(1500, 0), 1472u);
    EXPECT_EQ(udp::datagram_for_mtu(9000, 0), 8972u);
    EXPECT_EQ(udp::datagram_for_mtu(9001, 0), 8972u);   // AWS's 9001 carries a jumbo frame's
    EXPECT_EQ(udp::datagram_for_mtu(65536, 0), 8972u);  // loopback
    EXPECT_EQ(udp::datagram_for_mtu(65536, 1500), 1472u);
    EXPECT_EQ(udp::datagram_for_mtu(1400, 1500), 1372u);
    EXPECT_EQ(udp::datagram_for_mtu(0, 0), 1472u);  // unknown: Ethernet's
}

}  // namespace
}  // namespace optireduce
