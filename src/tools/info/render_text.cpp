// SPDX-License-Identifier: BSD-3-Clause
// The human-readable report: one titled block per probe, columns aligned.
#include <algorithm>
#include <cstdint>
#include <iomanip>

#include "render.hpp"
#include "transport/udp/udp_socket_options.hpp"

namespace optireduce::info {
namespace {

std::string size_text(std::uint64_t bytes) {
    // Reliable providers report SIZE_MAX or close to it: they segment internally.
    return bytes >= (std::uint64_t{1} << 62) ? "no limit" : std::to_string(bytes);
}

template <class Rows, class Key>
std::size_t width(const Rows &rows, Key key, std::size_t at_least) {
    std::size_t w = at_least;
    for (const auto &r : rows) w = std::max(w, std::string(key(r)).size());
    return w + 2;
}

void library(const LibraryFacts &l, std::ostream &os) {
    os << "optireduce " << l.version << "\n"
       << "  library       " << l.path << "\n"
       << "  built for     " << l.mpi_abi << "\n"
       << "  MPICH build   " << (l.mpich_path ? *l.mpich_path : std::string("not installed next to it")) << "\n"
       << "  kernels       " << l.codec_kernels << " (Hadamard transform and estimators, chosen for this CPU)\n";
}

void fabric(const FabricFacts &f, std::ostream &os) {
    os << "\nlibfabric " << f.runtime_version << " (built against " << f.header_version << ")\n";
    if (f.fi_provider)
        os << "  FI_PROVIDER=" << *f.fi_provider
           << " hides every other provider (from Open MPI too); optireduce uses "
              "OPTIREDUCE_PROVIDER\n";
    if (!f.error.empty()) os << "  error: " << f.error << "\n";
    if (f.providers.empty()) os << "  no provider offers FI_EP_RDM+FI_TAGGED or FI_EP_DGRAM\n";
    auto w = width(
        f.providers, [](const ProviderRow &r) { return r.name; }, 8);
    if (!f.providers.empty())
        os << "  " << std::left << std::setw(int(w)) << "provider" << std::setw(7) << "ep"
           << "max_msg_size\n";
    for (const auto &p : f.providers)
        os << "  " << std::left << std::setw(int(w)) << p.name << std::setw(7) << p.ep_type << size_text(p.max_msg_size)
           << "\n";

    auto choices = [&os](const std::string &title, const std::vector<ProviderChoice> &list) {
        os << "  engine's choice for " << title << ":\n";
        auto wc = width(
            list, [](const ProviderChoice &c) { return c.when; }, 0);
        auto wp = width(
            list, [](const ProviderChoice &c) { return c.provider; }, 0);
        for (const auto &c : list)
            os << "    " << std::left << std::setw(int(wc)) << c.when << std::setw(int(wp)) << c.provider
               << (c.usable ? "usable here" : "NOT usable here") << (c.why.empty() ? "" : " (" + c.why + ")") << "\n";
    };
    choices("exact mode (OPTIREDUCE_PROVIDER=" + f.knob + ")", f.choices);
    choices("bounded mode (OPTIREDUCE_DGRAM_PROVIDER=" + f.dgram_knob + ")", f.bounded_choices);
}

void kernel_channel(const KernelChannelFacts &k, std::ostream &os) {
    os << "\nkernel UDP channel (OPTIREDUCE_DGRAM_PROVIDER=kernel)\n";
    if (!k.error.empty()) {
        os << "  NOT usable here: " << k.error << "\n";
        return;
    }
    os << "  segmentation offload (UDP_SEGMENT)  " << k.gso << "\n"
       << "  receive coalescing (UDP_GRO)       " << k.gro << "\n"
       << "  receive buffer                     " << k.rcvbuf / 1024 << " KiB"
       << (k.rcvbuf < udp::kWarnReceiveBuffer ? " (small: raise net.core.rmem_max)" : "") << "\n";
    auto w = width(
        k.interfaces, [](const KernelInterface &i) { return i.name; }, 6);
    os << "  " << std::left << std::setw(int(w)) << "iface" << std::setw(17) << "address" << std::setw(7) << "mtu"
       << "datagram\n";
    for (const auto &i : k.interfaces)
        os << "  " << std::left << std::setw(int(w)) << i.name << std::setw(17) << i.address << std::setw(7)
           << (i.mtu ? std::to_string(i.mtu) : "?") << i.datagram << "\n";
}

void topology(const TopologyFacts &t, std::ostream &os) {
    os << "\nhwloc " << t.hwloc_version << "\n";
    if (!t.error.empty()) {
        os << "  error: " << t.error << "\n";
        return;
    }
    os << "  " << t.packages << " package(s), " << t.cores << " core(s), " << t.pus << " PU(s), " << t.numa_nodes
       << " NUMA node(s)\n";
    if (t.net_devices.empty()) {
        os << "  no network device found behind PCI (virtual interfaces are not listed)\n";
        return;
    }
    auto w = width(
        t.net_devices, [](const NetDevice &d) { return d.name; }, 6);
    os << "  " << std::left << std::setw(int(w)) << "device" << std::setw(13) << "kind" << std::setw(14) << "pci"
       << std::setw(6) << "numa"
       << "cpuset\n";
    for (const auto &d : t.net_devices)
        os << "  " << std::left << std::setw(int(w)) << d.name << std::setw(13) << d.kind << std::setw(14)
           << (d.pci.empty() ? "-" : d.pci) << std::setw(6) << (d.numa.empty() ? "-" : d.numa)
           << (d.cpuset.empty() ? "-" : d.cpuset) << "\n";
}

void configuration(const ConfigFacts &c, std::ostream &os) {
    os << "\nconfiguration\n";
    auto wn = width(
        c.values, [](const KnobValue &v) { return v.spec->name; }, 0);
    auto wv = width(
        c.values, [](const KnobValue &v) { return v.text; }, 7);
    for (const auto &v : c.values)
        os << "  " << std::left << std::setw(int(wn)) << v.spec->name << std::setw(int(wv))
           << (v.text.empty() ? "(empty)" : v.text) << (v.source == Source::environment ? "environment" : "default")
           << "\n";
}

}  // namespace

void render_text(const Report &r, std::ostream &os) {
    library(r.library, os);
    fabric(r.fabric, os);
    kernel_channel(r.kernel, os);
    topology(r.topology, os);
    configuration(r.config, os);
}

}  // namespace optireduce::info
