// SPDX-License-Identifier: BSD-3-Clause
// Peers' libfabric addresses, each inserted into an endpoint's address vector once: shared by
// the reliable and the datagram endpoint, so the table grows with distinct peers, not with
// communicators (a peer met again on a new communicator reuses its address).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace optireduce {

// Names are fixed-size slots, zero-padded (shm names vary in length), one per rank.
inline constexpr std::size_t kAddressSlot = 64;  // FI_NAME_MAX

class PeerAddresses {
public:
    // Fills `out` (rank order) from `count` name slots, inserting unknown names into `av`.
    // On failure returns false and a message naming `provider` in *error.
    bool resolve(fid_av *av, const std::string &provider, std::span<const std::byte> names, int count,
                 std::vector<fi_addr_t> &out, std::string *error);

private:
    std::map<std::string, fi_addr_t> known_;
};

}  // namespace optireduce
