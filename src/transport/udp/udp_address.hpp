// SPDX-License-Identifier: BSD-3-Clause
// Addresses of the kernel UDP channel: which local interfaces a rank offers its peers, the name
// it publishes (exchanged through MPI like a libfabric address), which of a peer's addresses to
// send to, and the path MTU towards it. The choice follows Open MPI's TCP transport: every
// non-loopback IPv4 interface unless the user names some (OPTIREDUCE_IFACE, like
// btl_tcp_if_include); per peer, an address on a subnet this host is attached to; loopback
// between ranks that share a network namespace.
#pragma once

#include <netinet/in.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace optireduce::udp {

struct LocalAddress {
    std::string iface;
    in_addr addr{};
    in_addr netmask{};
};

// The IPv4 addresses of the interfaces that are up and running. `iface_list` (comma-separated names) keeps
// only those; empty keeps every non-loopback one, or loopback alone on a host without any.
// On a bad list returns nothing and says why in *error (naming the interfaces that exist).
std::vector<LocalAddress> local_addresses(const std::string &iface_list, std::string *error);

// What ranks publish: up to kMaxAddresses IPv4 addresses, one port, and an id of the network
// namespace (boot id and namespace inode), so ranks that share one talk over loopback.
struct Name {
    static constexpr std::size_t kMaxAddresses = 8;
    std::uint64_t netns_id = 0;
    std::uint16_t port = 0;  // host order
    std::vector<in_addr> addresses;
};
inline constexpr std::size_t kNameBytes = 64;
void encode_name(const Name &n, std::span<std::byte, kNameBytes> out);
std::optional<Name> decode_name(std::span<const std::byte> slot);

// This process's network namespace, as comparable across hosts as it needs to be: two hosts
// never share a boot id.
std::uint64_t netns_id();

// Where to send to `peer` from a host with `mine` (same namespace: loopback; else an address of
// the peer's on one of our subnets; else its first).
sockaddr_in choose_destination(const Name &peer, std::uint64_t my_netns, const std::vector<LocalAddress> &mine);

// The largest datagram for a path of `mtu` bytes (0: unknown, taken as Ethernet's 1500) under
// an OPTIREDUCE_MTU cap (0: none): the MTU less the IPv4 and UDP headers, and never more than a
// 9000-byte jumbo frame carries. Loopback's 64 KiB MTU would allow more, but one lost datagram
// would then cost 16K entries at once.
inline constexpr std::size_t kIpUdpHeaders = 28;
inline constexpr std::size_t kMaxDatagram = 9000 - kIpUdpHeaders;
std::size_t datagram_for_mtu(std::size_t mtu, std::size_t mtu_cap);

// The path MTU the kernel knows towards `dest` (the route's interface MTU), or 0 if it cannot
// tell.
std::size_t path_mtu(const sockaddr_in &dest);

// "10.77.0.11:40211".
std::string to_string(const sockaddr_in &a);

}  // namespace optireduce::udp
