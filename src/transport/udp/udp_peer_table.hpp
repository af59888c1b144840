// SPDX-License-Identifier: BSD-3-Clause
// The peers of the kernel UDP channel: the handle (fi_addr_t) the engine names each by, the
// address we send to, the addresses its datagrams may come from, and the largest datagram that
// reaches it whole (the path MTU under OPTIREDUCE_MTU). The socket keeps no peer state; this
// table is all of it.
//
// Peers resolved later (a new communicator) are added under a lock that senders and the drainer
// share for reading (Reader), for as long as they use the addresses it hands out.
#pragma once

#include "transport/dgram_endpoint.hpp"
#include "transport/udp/udp_address.hpp"

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace optireduce::udp {

class PeerTable {
public:
    // This host's side: its network namespace, the addresses it offers, the OPTIREDUCE_MTU cap
    // (0: none).
    PeerTable(std::uint64_t netns, std::vector<LocalAddress> local, std::size_t mtu_cap)
        : netns_(netns), local_(std::move(local)), mtu_cap_(mtu_cap) {}

    std::uint64_t netns() const { return netns_; }
    const std::vector<LocalAddress> &local() const { return local_; }
    std::size_t mtu_cap() const { return mtu_cap_; }

    // As DgramEndpoint::resolve: `count` published names of slot_bytes each, in rank order;
    // names seen before get their handle again.
    bool resolve(std::span<const std::byte> names, std::size_t slot_bytes, int count, std::vector<fi_addr_t> &out,
                 std::string *error);
    // Largest datagram (header + payload) that reaches every one of `peers` in one piece.
    std::size_t max_datagram(std::span<const fi_addr_t> peers) const;

    // Lookups under the shared lock, held while the Reader lives.
    class Reader {
    public:
        explicit Reader(const PeerTable &t) : t_(t), lock_(t.mutex_) {}
        // Where to send to `handle`; nullptr if no peer has it.
        const sockaddr_in *destination(fi_addr_t handle) const {
            return handle < t_.peers_.size() ? &t_.peers_[handle].addr : nullptr;
        }
        // The handle of the peer that sends from `from`, or DgramEndpoint::kUnknownSource.
        fi_addr_t source(const sockaddr_in &from) const;

    private:
        const PeerTable &t_;
        std::shared_lock<std::shared_mutex> lock_;
    };
    Reader read() const { return Reader(*this); }

private:
    struct Peer {
        sockaddr_in addr{};
        std::size_t mtu = 0;  // of the path; 0: unknown
    };
    fi_addr_t add(std::string key, const Name &name);

    const std::uint64_t netns_;
    const std::vector<LocalAddress> local_;
    const std::size_t mtu_cap_;

    mutable std::shared_mutex mutex_;
    std::deque<Peer> peers_;                                  // by handle
    std::map<std::string, fi_addr_t> known_;                  // by published name
    std::unordered_map<std::uint64_t, fi_addr_t> by_source_;  // (address, port) -> handle
};

}  // namespace optireduce::udp
