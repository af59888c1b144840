// SPDX-License-Identifier: BSD-3-Clause
#include "transport/udp/udp_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace optireduce::udp {
namespace {

// "ORK" and a version, so a name from another channel kind or release is refused, not misread.
constexpr std::byte kTag[4] = {std::byte{'O'}, std::byte{'R'}, std::byte{'K'}, std::byte{1}};

std::vector<std::string> split(const std::string &list) {
    std::vector<std::string> out;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

struct IfaddrsDeleter {
    void operator()(ifaddrs *p) const { freeifaddrs(p); }
};

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

}  // namespace

std::vector<LocalAddress> local_addresses(const std::string &iface_list, std::string *error) {
    ifaddrs *raw = nullptr;
    if (getifaddrs(&raw) != 0) {
        *error = std::string("getifaddrs failed: ") + std::strerror(errno);
        return {};
    }
    std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
    const std::vector<std::string> wanted = split(iface_list);
    std::vector<LocalAddress> all, picked, loopback;
    for (ifaddrs *i = raw; i; i = i->ifa_next) {
        // Up and running: an interface without carrier (a docker0 with no container) would be
        // published, and a peer with the same private subnet would send into its own bridge.
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            !(i->ifa_flags & IFF_RUNNING))
            continue;
        LocalAddress a{i->ifa_name, reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr, {}};
        if (i->ifa_netmask) a.netmask = reinterpret_cast<sockaddr_in *>(i->ifa_netmask)->sin_addr;
        all.push_back(a);
        if (!wanted.empty()) {
            for (const auto &w : wanted)
                if (a.iface == w) picked.push_back(a);
        } else {
            ((i->ifa_flags & IFF_LOOPBACK) ? loopback : picked).push_back(a);
        }
    }
    if (picked.size() > Name::kMaxAddresses) picked.resize(Name::kMaxAddresses);
    if (!picked.empty()) return picked;
    if (wanted.empty() && !loopback.empty()) return {loopback.front()};
    std::string have;
    for (const auto &a : all) have += (have.empty() ? "" : ", ") + a.iface;
    *error = wanted.empty()
                 ? "no network interface with an IPv4 address is up"
                 : "OPTIREDUCE_IFACE=" + iface_list + " names no interface that is up with an IPv4 address (up here: " +
                       (have.empty() ? "none" : have) + "). Name one of them, or unset it.";
    return {};
}

void encode_name(const Name &n, std::span<std::byte, kNameBytes> out) {
    std::memset(out.data(), 0, out.size());
    std::memcpy(out.data(), kTag, sizeof kTag);
    const std::size_t count = std::min(n.addresses.size(), Name::kMaxAddresses);
    out[4] = static_cast<std::byte>(count);
    // Network byte order throughout: the name is read on other hosts.
    const std::uint16_t port = htons(n.port);
    std::memcpy(out.data() + 6, &port, 2);
    for (int b = 0; b < 8; ++b) out[8 + b] = static_cast<std::byte>(n.netns_id >> (8 * b));
    for (std::size_t i = 0; i < count; ++i) std::memcpy(out.data() + 16 + 4 * i, &n.addresses[i], 4);
}

std::optional<Name> decode_name(std::span<const std::byte> slot) {
    if (slot.size() < kNameBytes || std::memcmp(slot.data(), kTag, sizeof kTag) != 0) return std::nullopt;
    const auto count = static_cast<std::size_t>(slot[4]);
    if (count == 0 || count > Name::kMaxAddresses) return std::nullopt;
    Name n;
    std::uint16_t port;
    std::memcpy(&port, slot.data() + 6, 2);
    n.port = ntohs(port);
    for (int b = 0; b < 8; ++b) n.netns_id |= static_cast<std::uint64_t>(slot[8 + b]) << (8 * b);
    n.addresses.resize(count);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(&n.addresses[i], slot.data() + 16 + 4 * i, 4);
    return n;
}

std::uint64_t netns_id() {
    std::string boot;
    std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
    struct stat st {};
    const std::uint64_t inode = stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
    return fnv1a(std::to_string(inode), fnv1a(boot));
}

sockaddr_in choose_destination(const Name &peer, std::uint64_t my_netns, const std::vector<LocalAddress> &mine) {
    sockaddr_in d{};
    d.sin_family = AF_INET;
    d.sin_port = htons(peer.port);
    if (peer.netns_id == my_netns) {
        d.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return d;
    }
    d.sin_addr = peer.addresses.front();
    for (const in_addr &a : peer.addresses)
        for (const LocalAddress &l : mine)
            if (l.netmask.s_addr != 0 && (a.s_addr & l.netmask.s_addr) == (l.addr.s_addr & l.netmask.s_addr)) {
                d.sin_addr = a;
                return d;
            }
    return d;
}

std::size_t datagram_for_mtu(std::size_t mtu, std::size_t mtu_cap) {
    if (mtu == 0) mtu = 1500;
    if (mtu_cap > 0) mtu = std::min(mtu, mtu_cap);
    return std::min(kMaxDatagram, mtu - kIpUdpHeaders);
}

std::size_t path_mtu(const sockaddr_in &dest) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int mtu = 0;
    socklen_t len = sizeof mtu;
    // A connected socket asks the routing table; nothing is sent.
    if (connect(fd, reinterpret_cast<const sockaddr *>(&dest), sizeof dest) != 0 ||
        getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len) != 0)
        mtu = 0;
    close(fd);
    return mtu > 0 ? static_cast<std::size_t>(mtu) : 0;
}

std::string to_string(const sockaddr_in &a) {
    char buf[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace optireduce::udp
