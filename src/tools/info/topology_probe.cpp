// SPDX-License-Identifier: BSD-3-Clause
// The hwloc view the engine's progress thread is placed with: sockets, cores, NUMA nodes, and
// where each network device sits relative to them.
#include <hwloc.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "probes.hpp"

namespace optireduce::info {
namespace {

struct TopologyDeleter {
    void operator()(hwloc_topology *t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// hwloc hands out malloc'ed strings.
std::string list_text(hwloc_const_bitmap_t set) {
    char *raw = nullptr;
    if (set == nullptr || hwloc_bitmap_list_asprintf(&raw, set) < 0) return "";
    std::unique_ptr<char, decltype(&std::free)> owned(raw, &std::free);
    return owned.get();
}

std::string pci_bus_id(hwloc_obj_t osdev) {
    for (hwloc_obj_t p = osdev->parent; p != nullptr; p = p->parent) {
        if (p->type != HWLOC_OBJ_PCI_DEVICE) continue;
        const auto &a = p->attr->pcidev;
        char text[32];
        std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", a.domain, a.bus, a.dev, a.func);
        return text;
    }
    return "";
}

NetDevice describe(hwloc_topology_t topo, hwloc_obj_t osdev) {
    NetDevice d;
    d.name = osdev->name ? osdev->name : "?";
    d.kind = osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics";
    d.pci = pci_bus_id(osdev);
    // I/O objects carry no cpuset; their locality is that of the first normal ancestor
    // (a package or NUMA-side group on multi-socket machines, the whole machine otherwise).
    if (hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, osdev); near != nullptr) {
        d.numa = list_text(near->nodeset);
        d.cpuset = list_text(near->cpuset);
    }
    return d;
}

}  // namespace

TopologyFacts probe_topology() {
    TopologyFacts f;
    // hwloc has no run-time query for its release, only for its API level; the soname pins the
    // release series, so the version of the headers is the useful one.
    f.hwloc_version = HWLOC_VERSION;

    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0) {
        f.error = "hwloc_topology_init failed";
        return f;
    }
    TopologyPtr topo(raw);
    // I/O discovery is off by default; "important" keeps PCI devices with OS devices such as
    // NICs and drops bridges and the rest.
    hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo.get()) != 0) {
        f.error = "hwloc_topology_load failed";
        return f;
    }
    f.packages = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_PACKAGE);
    f.cores = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_CORE);
    f.pus = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_PU);
    f.numa_nodes = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_NUMANODE);
    for (hwloc_obj_t o = hwloc_get_next_osdev(topo.get(), nullptr); o != nullptr;
         o = hwloc_get_next_osdev(topo.get(), o)) {
        auto type = o->attr->osdev.type;
        if (type == HWLOC_OBJ_OSDEV_NETWORK || type == HWLOC_OBJ_OSDEV_OPENFABRICS)
            f.net_devices.push_back(describe(topo.get(), o));
    }
    return f;
}

}  // namespace optireduce::info
