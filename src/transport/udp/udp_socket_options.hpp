// SPDX-License-Identifier: BSD-3-Clause
// The socket settings of the kernel UDP channel: segmentation offload (whether this kernel lets a
// socket send a run of datagrams in one call, UDP_SEGMENT, Linux 4.18, and receive coalesced
// ones, UDP_GRO, 5.0) and the socket buffers. Shared by the channel, which applies them to its
// socket, and optireduce-info, which asks on a socket of its own, so both report the same.
#pragma once

#include <string>

namespace optireduce::udp {

struct Offloads {
    bool gso = false, gro = false;
    std::string gso_note, gro_note;  // "on", or why not
};

// Enables on `fd` what is wanted and the kernel has; says why for each that stays off.
Offloads enable_offloads(int fd, bool want_gso, bool want_gro);

// Socket buffers. Receive: what arrives from every peer while this rank is descheduled for a
// few milliseconds at 10 Gbit/s; below kWarnReceiveBuffer the channel warns. Send: what the
// kernel holds for us until the device takes it. The queue in front of a device (a NIC's 1000
// packets, about 1.5 MB at MTU 1500) drops what does not fit, silently for UDP, and a segmented
// send is charged about its length (64 KiB per send, not the several KiB per packet of single
// datagrams): the kernel doubles this request, and 1 MiB in flight stays below that queue, so a
// full queue pushes back (EAGAIN) instead.
inline constexpr int kWantReceiveBuffer = 32 << 20, kWarnReceiveBuffer = 4 << 20;
inline constexpr int kWantSendBuffer = 512 << 10;

struct Buffers {
    int receive = 0, send = 0;  // bytes the kernel granted
};
// Asks for the buffers above on `fd` (past net.core.rmem_max / wmem_max where the process has
// CAP_NET_ADMIN) and returns what the kernel granted.
Buffers size_buffers(int fd);

}  // namespace optireduce::udp
