// SPDX-License-Identifier: BSD-3-Clause
// Which channel the engine asks for (OPTIREDUCE_PROVIDER, OPTIREDUCE_DGRAM_PROVIDER), shared by
// the engine and optireduce-info so both always name the same one.
#pragma once

#include <string>

namespace optireduce {

// The reliable (FI_EP_RDM) provider name for a knob value. "auto": shm when every rank of the
// communicator shares this node (the fastest path, no network stack), tcp;ofi_rxm otherwise (runs
// on any IP network). "tcp" is shorthand for tcp;ofi_rxm because plain tcp is MSG-only in
// libfabric 1.17. Anything else is passed to libfabric as given; an unknown name makes setup fail
// on every rank, and the communicator falls back to the underlying MPI.
inline std::string rdm_provider_for(const std::string &knob, bool all_ranks_on_one_node) {
    if (knob == "auto" || knob.empty()) return all_ranks_on_one_node ? "shm" : "tcp;ofi_rxm";
    if (knob == "tcp") return "tcp;ofi_rxm";
    if (knob == "udp") return "udp;ofi_rxd";
    return knob;
}

// The kernel-bypass datagram provider libfabric offers on this host for the engine's hints
// (efa, then verbs: UD queue pairs), or "" when there is none. Asked once per process.
const std::string &hardware_dgram_provider();

// The datagram channel of bounded mode for OPTIREDUCE_DGRAM_PROVIDER, or "" when the
// communicator should use the reliable channel instead. "auto" on one node: no network sits
// between the ranks (nothing to lose, no tail to bound) and shm moves data for a fraction of what
// datagrams through the kernel cost. "auto" across nodes: kernel bypass where the host has it
// (`hardware`, from hardware_dgram_provider()), else our kernel UDP channel ("kernel").
inline std::string dgram_provider_for(const std::string &knob, bool all_ranks_on_one_node,
                                      const std::string &hardware) {
    if (knob == "auto" || knob.empty()) {
        if (all_ranks_on_one_node) return "";
        return hardware.empty() ? "kernel" : hardware;
    }
    return knob;
}

}  // namespace optireduce
