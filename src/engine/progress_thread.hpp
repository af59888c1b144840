// The thread that drains the datagram endpoint while the application computes
// (docs/architecture.md, "Threads, and which may call MPI"): a peer's datagrams are taken out of
// the kernel socket buffer, which holds only so many, whether or not this rank is inside MPI. It
// blocks in the endpoint's wait (DgramEndpoint::wait: poll(2) on the socket and an eventfd for the
// kernel channel, the completion queue's wait fd for libfabric's) when nothing arrives, so an idle
// rank costs no CPU.
// Placed with hwloc near the NIC and away from the cores the rank itself is bound to.
#pragma once

#include "engine/dgram_router.hpp"
#include "transport/dgram_endpoint.hpp"

#include <atomic>
#include <string>
#include <thread>

namespace optireduce {

class ProgressThread {
public:
    ProgressThread(DgramEndpoint &ep, DgramRouter &router);
    ~ProgressThread();  // stops and joins
    ProgressThread(const ProgressThread &) = delete;
    ProgressThread &operator=(const ProgressThread &) = delete;

    // Where it was placed, for the log ("cores 2-3 (near eth0)", "unbound: ...").
    const std::string &placement() const { return placement_; }

private:
    void run();

    DgramEndpoint &ep_;
    DgramRouter &router_;
    std::atomic<bool> stop_{false};
    std::string placement_;
    std::thread thread_;
};

}  // namespace optireduce
