// Segmentation offload of the kernel UDP channel: whether this kernel lets a socket send a run of
// datagrams in one call (UDP_SEGMENT, Linux 4.18) and receive coalesced ones (UDP_GRO, 5.0).
// Shared by the channel, which turns them on for its socket, and optireduce-info, which asks on a
// socket of its own, so both report the same.
#pragma once

#include <string>

namespace optireduce::udp {

struct Offloads {
    bool gso = false, gro = false;
    std::string gso_note, gro_note;  // "on", or why not
};

// Enables on `fd` what is wanted and the kernel has; says why for each that stays off.
Offloads enable_offloads(int fd, bool want_gso, bool want_gro);

}  // namespace optireduce::udp
