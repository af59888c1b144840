// SPDX-License-Identifier: BSD-3-Clause
#include "transport/udp/udp_peer_table.hpp"

#include "telemetry/log.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

namespace optireduce::udp {
namespace {

std::uint64_t source_key(const sockaddr_in &a) {
    return static_cast<std::uint64_t>(a.sin_addr.s_addr) << 16 | a.sin_port;
}

}  // namespace

bool PeerTable::resolve(std::span<const std::byte> names, std::size_t slot_bytes, int count,
                        std::vector<fi_addr_t> &out, std::string *error) {
    std::unique_lock lock(mutex_);
    out.assign(static_cast<std::size_t>(count), FI_ADDR_NOTAVAIL);
    for (int i = 0; i < count; ++i) {
        const auto slot = names.subspan(static_cast<std::size_t>(i) * slot_bytes, slot_bytes);
        std::string key(reinterpret_cast<const char *>(slot.data()), slot_bytes);
        if (auto it = known_.find(key); it != known_.end()) {
            out[static_cast<std::size_t>(i)] = it->second;
            continue;
        }
        const std::optional<Name> name = decode_name(slot);
        if (!name) {
            *error = "kernel UDP channel: rank " + std::to_string(i) +
                     " sent no kernel-channel address (a different OPTIREDUCE_DGRAM_PROVIDER or release?)";
            return false;
        }
        const fi_addr_t handle = add(std::move(key), *name);
        out[static_cast<std::size_t>(i)] = handle;
        OPTIREDUCE_LOG(debug, "kernel UDP peer %d at %s, path MTU %zu", i, to_string(peers_[handle].addr).c_str(),
                       peers_[handle].mtu);
    }
    return true;
}

// Needs the lock held exclusively.
fi_addr_t PeerTable::add(std::string key, const Name &name) {
    Peer p;
    p.addr = choose_destination(name, netns_, local_);
    p.mtu = path_mtu(p.addr);
    const auto handle = static_cast<fi_addr_t>(peers_.size());
    peers_.push_back(p);
    known_.emplace(std::move(key), handle);
    // Datagrams from this peer may come from any address it published, or from loopback.
    by_source_[source_key(p.addr)] = handle;
    for (const in_addr &a : name.addresses) {
        sockaddr_in s = p.addr;
        s.sin_addr = a;
        by_source_.emplace(source_key(s), handle);
    }
    return handle;
}

std::size_t PeerTable::max_datagram(std::span<const fi_addr_t> peers) const {
    std::shared_lock lock(mutex_);
    std::size_t d = kMaxDatagram;
    for (fi_addr_t h : peers)
        if (h < peers_.size()) d = std::min(d, datagram_for_mtu(peers_[h].mtu, mtu_cap_));
    return d;
}

fi_addr_t PeerTable::Reader::source(const sockaddr_in &from) const {
    const auto found = t_.by_source_.find(source_key(from));
    return found != t_.by_source_.end() ? found->second : DgramEndpoint::kUnknownSource;
}

}  // namespace optireduce::udp
