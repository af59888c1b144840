// SPDX-License-Identifier: BSD-3-Clause
// The kernel UDP channel ("kernel"): bounded mode's datagrams over one Linux UDP socket per
// process, at the rate the host's network stack allows rather than one system call per
// datagram (libfabric's udp provider, by its own manual a development provider).
//
// It composes two parts: the socket with its capabilities and batched system calls
// (udp_batch_io.hpp: segmentation offload on send, coalescing on receive, sendmmsg/recvmmsg),
// which keeps no peer state, and the peer table (udp_peer_table.hpp: handles, addresses, path
// MTU). Datagrams never exceed the path MTU of the route to any peer (1472 bytes at 1500, 8972
// at 9000) and never fragment (IP_PMTUDISC_DO).
//
// Threading as the interface says: sends from any thread (the socket serialises them), one
// drainer at a time (poll() serialises itself); the peer table has its own lock.
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/fd.hpp"
#include "transport/udp/udp_address.hpp"
#include "transport/udp/udp_batch_io.hpp"
#include "transport/udp/udp_peer_table.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace optireduce {

class UdpSocketEndpoint final : public DgramEndpoint {
public:
    static std::unique_ptr<UdpSocketEndpoint> open(const DgramOptions &options, std::string *error);
    ~UdpSocketEndpoint() override = default;

    std::string describe() const override;
    bool resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out, std::string *error) override;
    std::size_t max_datagram(std::span<const fi_addr_t> peers) const override;
    std::size_t run_datagrams(std::size_t datagram_bytes) const override;
    int send(fi_addr_t dest, std::span<const std::byte> header, std::span<const std::byte> payload) override;
    int send_runs(std::span<const DgramRun> runs, std::span<std::size_t> sent) override;
    int poll(const Sink &sink) override;
    void wait(std::chrono::microseconds timeout) override;
    void wake() override;
    void wait_for_send_space(std::chrono::microseconds max) override;
    std::int64_t queued_bytes() const override;

    // What optireduce-info and the log report: whether each offload is in use, and if not why.
    bool gso() const { return io_.gso(); }
    bool gro() const { return io_.gro(); }
    const std::string &gso_note() const { return io_.gso_note(); }
    const std::string &gro_note() const { return io_.gro_note(); }
    // Datagrams that arrived coalesced with others in one receive (GRO at work).
    std::uint64_t coalesced() const { return io_.coalesced(); }
    std::uint16_t port() const { return io_.port(); }
    // The socket buffers the kernel granted (wait_for_send_space's rule depends on the receive one).
    const udp::Buffers &buffers() const { return io_.buffers(); }
    const std::vector<udp::LocalAddress> &addresses() const { return peers_.local(); }

private:
    UdpSocketEndpoint(std::vector<udp::LocalAddress> local, std::size_t mtu_cap)
        : DgramEndpoint(kKernelDgram), peers_(udp::netns_id(), std::move(local), mtu_cap) {}

    udp::BatchIo io_;
    udp::PeerTable peers_;
    Fd wake_;  // an eventfd that ends wait()
};

}  // namespace optireduce
