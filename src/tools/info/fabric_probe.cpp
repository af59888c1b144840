// SPDX-License-Identifier: BSD-3-Clause
// Which libfabric providers this host offers for the engine's two channel kinds, and whether
// the provider the engine would pick is among them.
#include <rdma/fabric.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "probes.hpp"
#include "transport/dgram_endpoint.hpp"
#include "transport/fabric/fabric.hpp"
#include "transport/fabric/hints.hpp"
#include "transport/fabric/provider_choice.hpp"

namespace optireduce::info {
namespace {

struct Query {
    fi_ep_type ep_type;
    std::uint64_t caps;
    const char *label;
};
// Reliable tagged messaging for the exact path, datagrams for the bounded path (docs/protocol.md).
constexpr Query kRdm{FI_EP_RDM, FI_TAGGED, "RDM"};
constexpr Query kDgram{FI_EP_DGRAM, FI_MSG, "DGRAM"};

std::string version_text(std::uint32_t v) { return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v)); }

// The hints the engine gives (transport/fabric/hints.hpp), so "usable" means usable by optireduce, not merely present:
// a provider that insists on a memory-registration mode the engine does not implement (FI_MR_ENDPOINT) is left out.
// Datagram providers may also ask for a message prefix (efa does), which the bounded transport accepts. fi_getinfo
// returns -FI_ENODATA for "nothing matches": that is an answer, not an error.
int get_info(const Query &q, const char *provider, FiInfoPtr &out) {
    FiInfoPtr hints = engine_hints(q.ep_type, q.caps, provider);
    if (!hints) return -FI_ENOMEM;
    fi_info *raw = nullptr;
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &raw);
    out.reset(raw);
    return rc == -FI_ENODATA ? 0 : rc;
}

void add_rows(const Query &q, FabricFacts &f) {
    FiInfoPtr list;
    if (int rc = get_info(q, nullptr, list); rc != 0) {
        f.error = fi_error_text((std::string("fi_getinfo(") + q.label + ")").c_str(), rc);
        return;
    }
    // One line per provider: fi_getinfo repeats each one for every interface and address family.
    for (const fi_info *i = list.get(); i != nullptr; i = i->next) {
        std::string name = i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "?";
        bool seen = std::any_of(f.providers.begin(), f.providers.end(),
                                [&](const auto &r) { return r.name == name && r.ep_type == q.label; });
        if (!seen) f.providers.push_back({name, q.label, i->ep_attr->max_msg_size});
    }
}

bool usable(const Query &q, const std::string &provider) {
    FiInfoPtr list;
    return get_info(q, provider.c_str(), list) == 0 && list != nullptr;
}

}  // namespace

FabricFacts probe_fabric(const std::string &provider_knob, const std::string &dgram_knob) {
    FabricFacts f;
    f.runtime_version = version_text(fi_version());
    f.header_version = version_text(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION));
    if (const char *p = std::getenv("FI_PROVIDER"); p != nullptr && *p != '\0') f.fi_provider = p;
    add_rows(kRdm, f);
    add_rows(kDgram, f);

    f.knob = provider_knob;
    for (bool one_node : {true, false}) {
        std::string prov = rdm_provider_for(provider_knob, one_node);
        f.choices.push_back(
            {one_node ? "all ranks on one node" : "ranks on several nodes", prov, usable(kRdm, prov), ""});
    }
    // Bounded mode: a datagram provider, or exact mode's reliable channel where auto says so.
    f.dgram_knob = dgram_knob;
    const std::string &hardware = hardware_dgram_provider();
    const bool automatic = dgram_knob == "auto" || dgram_knob.empty();
    for (bool one_node : {true, false}) {
        const std::string dgram = dgram_provider_for(dgram_knob, one_node, hardware);
        const char *when = one_node ? "all ranks on one node" : "ranks on several nodes";
        if (dgram.empty()) {
            const std::string rdm = rdm_provider_for(provider_knob, one_node);
            f.bounded_choices.push_back(
                {when, rdm + " (reliable, no deadline)", usable(kRdm, rdm), "no network between the ranks"});
        } else if (dgram == kKernelDgram) {
            // Usable when the kernel channel opens: probe_kernel_channel says.
            f.bounded_choices.push_back(
                {when, dgram, true,
                 automatic ? "no kernel-bypass datagram provider (efa, verbs) here" : "OPTIREDUCE_DGRAM_PROVIDER"});
        } else {
            f.bounded_choices.push_back(
                {when, dgram, usable(kDgram, dgram), automatic ? "kernel bypass found" : "OPTIREDUCE_DGRAM_PROVIDER"});
        }
    }
    return f;
}

}  // namespace optireduce::info
