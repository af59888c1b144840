// SPDX-License-Identifier: BSD-3-Clause
#include "transport/dgram_endpoint.hpp"

#include "transport/fabric/fabric_dgram_endpoint.hpp"
#include "transport/udp/udp_socket_endpoint.hpp"

namespace optireduce {

std::unique_ptr<DgramEndpoint> open_dgram_endpoint(const std::string &provider, const DgramOptions &options,
                                                   std::string *error) {
    if (provider == kKernelDgram) return UdpSocketEndpoint::open(options, error);
    return FabricDgramEndpoint::open(provider, error);
}

}  // namespace optireduce
