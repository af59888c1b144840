// SPDX-License-Identifier: BSD-3-Clause
// The capabilities the engine asks libfabric for, shared by the transport and optireduce-info
// so that "usable" in the tool means usable by the engine.
#pragma once

#include "transport/fabric/fabric.hpp"

#include <rdma/fabric.h>

#include <cstdint>
#include <cstring>

namespace optireduce {

// Everything but the endpoint type, capabilities and provider name.
inline void set_engine_hints(fi_info &hints) {
    // We provide an fi_context2 with every transfer, so any provider that wants one may have it.
    hints.mode = FI_CONTEXT | FI_CONTEXT2;
    // Datagram providers may need a prefix before the payload (efa); the datagram channel
    // reserves it.
    if (hints.ep_attr->type == FI_EP_DGRAM) hints.mode |= FI_MSG_PREFIX;
    // What we can honour: registering our own staging memory. We never use RMA, so the other
    // bits are free to accept. FI_MR_ENDPOINT (cxi) would need an MR bind we do not do.
    hints.domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    // Reliable endpoints: every call happens under the endpoint owner's mutex. The datagram
    // endpoint: the calling thread sends while the progress thread drains.
    hints.domain_attr->threading = hints.ep_attr->type == FI_EP_DGRAM ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
}

// The hints for an endpoint of `type` with `caps`, restricted to `provider` unless it is null.
// nullptr when fi_allocinfo fails.
inline FiInfoPtr engine_hints(fi_ep_type type, std::uint64_t caps, const char *provider) {
    FiInfoPtr hints(fi_allocinfo());
    if (!hints) return nullptr;
    hints->ep_attr->type = type;
    hints->caps = caps;
    set_engine_hints(*hints);
    if (provider) hints->fabric_attr->prov_name = strdup(provider);  // freed by fi_freeinfo
    return hints;
}

}  // namespace optireduce
