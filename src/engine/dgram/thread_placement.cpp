// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/thread_placement.hpp"

#include <hwloc.h>

#include <atomic>
#include <cstdlib>
#include <memory>

namespace optireduce {
namespace {

struct TopologyDeleter {
    void operator()(hwloc_topology *t) const { hwloc_topology_destroy(t); }
};
struct BitmapDeleter {
    void operator()(hwloc_bitmap_s *b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

std::string cpuset_text(hwloc_const_bitmap_t set) {
    char *s = nullptr;
    hwloc_bitmap_list_asprintf(&s, set);
    std::string out = s ? s : "?";
    std::free(s);
    return out;
}

}  // namespace

// Binding the thread off the rank's cores keeps it from taking compute time the rank counts on.
std::string place_current_thread() {
    hwloc_topology *raw = nullptr;
    if (hwloc_topology_init(&raw) != 0) return "unbound: hwloc_topology_init failed";
    std::unique_ptr<hwloc_topology, TopologyDeleter> topo(raw);
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(raw) != 0) return "unbound: hwloc_topology_load failed";

    Bitmap near(hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(raw)));
    std::string nic = "no network device seen";
    for (hwloc_obj_t os = hwloc_get_next_osdev(raw, nullptr); os; os = hwloc_get_next_osdev(raw, os)) {
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK && os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(raw, os);
        if (parent && parent->cpuset) hwloc_bitmap_copy(near.get(), parent->cpuset);
        nic = std::string("near ") + (os->name ? os->name : "a NIC");
        break;
    }
    Bitmap bound(hwloc_bitmap_alloc());
    if (hwloc_get_cpubind(raw, bound.get(), HWLOC_CPUBIND_PROCESS) != 0) hwloc_bitmap_copy(bound.get(), near.get());
    const bool rank_unbound = hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(raw), bound.get());
    if (rank_unbound) return "unbound: the rank itself is not bound (" + nic + ")";
    Bitmap target(hwloc_bitmap_alloc());
    hwloc_bitmap_andnot(target.get(), near.get(), bound.get());
    if (hwloc_bitmap_iszero(target.get())) {
        // Every core near the NIC is the rank's: anywhere else but the rank's own cores.
        hwloc_bitmap_andnot(target.get(), hwloc_topology_get_topology_cpuset(raw), bound.get());
        nic = "away from the rank; no free core " + nic;
    }
    if (hwloc_bitmap_iszero(target.get())) return "unbound: the rank is bound to every core";
    if (hwloc_set_cpubind(raw, target.get(), HWLOC_CPUBIND_THREAD) != 0) return "unbound: hwloc_set_cpubind failed";
    return "cores " + cpuset_text(target.get()) + " (" + nic + ")";
}

std::thread start_placed_thread(std::string *placement, std::function<void()> body) {
    std::atomic<bool> placed{false};
    std::thread t([placement, &placed, body = std::move(body)] {
        *placement = place_current_thread();
        placed.store(true, std::memory_order_release);
        placed.notify_one();
        body();
    });
    placed.wait(false, std::memory_order_acquire);
    return t;
}

}  // namespace optireduce
