// SPDX-License-Identifier: BSD-3-Clause
#include "transport/fabric/provider_choice.hpp"

#include "transport/fabric/fabric.hpp"
#include "transport/fabric/hints.hpp"

namespace optireduce {

const std::string &hardware_dgram_provider() {
    // fi_getinfo walks every provider (tens of milliseconds on some hosts): once is enough, the
    // hardware does not change under a running job.
    static const std::string found = [] {
        for (const char *name : {"efa", "verbs"}) {
            FiInfoPtr hints = engine_hints(FI_EP_DGRAM, FI_MSG | FI_SEND | FI_RECV, name);
            if (!hints) continue;
            fi_info *info = nullptr;
            const int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &info);
            FiInfoPtr owned(info);
            if (rc == 0 && owned) return std::string(name);
        }
        return std::string();
    }();
    return found;
}

}  // namespace optireduce
