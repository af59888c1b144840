// SPDX-License-Identifier: BSD-3-Clause
// The kernel UDP channel as the engine would open it here: the interfaces it would publish with
// their MTU, and which offloads the kernel grants a socket (the same calls the channel makes).
#include "probes.hpp"
#include "transport/udp/udp_address.hpp"
#include "transport/udp/udp_socket_options.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace optireduce::info {

KernelChannelFacts probe_kernel_channel(const Config &config) {
    KernelChannelFacts k;
    std::string error;
    const auto local = udp::local_addresses(config.iface, &error);
    if (local.empty()) {
        k.error = error;
        return k;
    }
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        k.error = std::string("socket: ") + std::strerror(errno);
        return k;
    }
    for (const auto &a : local) {
        ifreq req{};
        std::strncpy(req.ifr_name, a.iface.c_str(), IFNAMSIZ - 1);
        const std::size_t mtu = ioctl(fd, SIOCGIFMTU, &req) == 0 ? static_cast<std::size_t>(req.ifr_mtu) : 0;
        char buf[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &a.addr, buf, sizeof buf);
        k.interfaces.push_back({a.iface, buf, mtu, udp::datagram_for_mtu(mtu, config.mtu)});
    }
    const udp::Offloads o = udp::enable_offloads(fd, config.udp_gso(), config.udp_gro());
    k.gso = o.gso_note;
    k.gro = o.gro_note;
    k.rcvbuf = udp::size_buffers(fd).receive;
    ::close(fd);
    return k;
}

}  // namespace optireduce::info
