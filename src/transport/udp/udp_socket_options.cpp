// SPDX-License-Identifier: BSD-3-Clause
#include "transport/udp/udp_socket_options.hpp"

#include <netinet/udp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace optireduce::udp {

Offloads enable_offloads(int fd, bool want_gso, bool want_gro) {
    Offloads o;
    if (!want_gso) {
        o.gso_note = "off (OPTIREDUCE_UDP_OFFLOAD)";
    } else {
        // Setting a segment size on the socket is how a kernel without UDP GSO says so; the
        // channel gives the size with each send, so the socket's goes back to none.
        int seg = 1000;
        if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, sizeof seg) == 0) {
            seg = 0;
            setsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, sizeof seg);
            o.gso = true;
            o.gso_note = "on";
        } else {
            o.gso_note = std::string("off: the kernel refused UDP_SEGMENT (") + std::strerror(errno) + ")";
        }
    }
    if (!want_gro) {
        o.gro_note = "off (OPTIREDUCE_UDP_OFFLOAD)";
    } else {
        const int on = 1;
        if (setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof on) == 0) {
            o.gro = true;
            o.gro_note = "on";
        } else {
            o.gro_note = std::string("off: the kernel refused UDP_GRO (") + std::strerror(errno) + ")";
        }
    }
    return o;
}

Buffers size_buffers(int fd) {
    // SO_*BUFFORCE passes the rmem_max / wmem_max caps with CAP_NET_ADMIN; otherwise the capped
    // request.
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kWantReceiveBuffer, sizeof kWantReceiveBuffer) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kWantReceiveBuffer, sizeof kWantReceiveBuffer);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &kWantSendBuffer, sizeof kWantSendBuffer) != 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kWantSendBuffer, sizeof kWantSendBuffer);
    Buffers b;
    socklen_t len = sizeof b.receive;
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b.receive, &len);
    len = sizeof b.send;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b.send, &len);
    // The kernel reports twice what it grants (its bookkeeping overhead).
    b.receive /= 2;
    b.send /= 2;
    return b;
}

}  // namespace optireduce::udp
