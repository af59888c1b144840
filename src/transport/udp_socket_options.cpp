#include "transport/udp_offload.hpp"

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

}  // namespace optireduce::udp
