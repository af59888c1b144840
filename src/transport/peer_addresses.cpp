// SPDX-License-Identifier: BSD-3-Clause
#include "transport/peer_addresses.hpp"

#include "transport/fabric/fabric.hpp"

#include <rdma/fi_errno.h>

namespace optireduce {

bool PeerAddresses::resolve(fid_av *av, const std::string &provider, std::span<const std::byte> names, int count,
                            std::vector<fi_addr_t> &out, std::string *error) {
    out.assign(static_cast<std::size_t>(count), FI_ADDR_NOTAVAIL);
    for (int i = 0; i < count; ++i) {
        const std::byte *slot = names.data() + static_cast<std::size_t>(i) * kAddressSlot;
        std::string key(reinterpret_cast<const char *>(slot), kAddressSlot);
        auto it = known_.find(key);
        if (it != known_.end()) {
            out[static_cast<std::size_t>(i)] = it->second;
            continue;
        }
        fi_addr_t addr = FI_ADDR_NOTAVAIL;
        const int rc = fi_av_insert(av, slot, 1, &addr, 0, nullptr);
        if (rc != 1 || addr == FI_ADDR_NOTAVAIL) {
            *error = "provider '" + provider +
                     "': " + fi_error_text("fi_av_insert of a peer address failed", rc < 0 ? rc : -FI_EINVAL);
            return false;
        }
        known_.emplace(std::move(key), addr);
        out[static_cast<std::size_t>(i)] = addr;
    }
    return true;
}

}  // namespace optireduce
