// SPDX-License-Identifier: BSD-3-Clause
// The thread that drains the datagram endpoint while the application computes
// (docs/architecture.md, "Threads, and which may call MPI"): a peer's datagrams are taken out of
// the kernel socket buffer, which holds only so many, whether or not this rank is inside MPI. It
// blocks in the endpoint's wait (DgramEndpoint::wait: poll(2) on the socket and an eventfd for the
// kernel channel, the completion queue's wait fd for libfabric's) when nothing arrives, so an idle
// rank costs no CPU.
// Placed with hwloc near the NIC and away from the cores the rank itself is bound to.
//
// While an operation's thread waits in a phase it drains the endpoint itself, and the progress
// thread stands aside (Aside): two threads woken by every datagram would each take their share
// of a core the ranks and the kernel need, for datagrams only one of them can have.
#pragma once

#include "engine/dgram/dgram_router.hpp"
#include "transport/dgram_endpoint.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
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

    // While one lives the progress thread does not drain: the thread that holds it does. Nests
    // (operations of several communicators may wait at once); null: there is no progress thread.
    class Aside {
    public:
        explicit Aside(ProgressThread *p) : p_(p) {
            if (p_) p_->hold(+1);
        }
        ~Aside() {
            if (p_) p_->hold(-1);
        }
        Aside(const Aside &) = delete;
        Aside &operator=(const Aside &) = delete;

    private:
        ProgressThread *p_;
    };

private:
    void run();
    void hold(int delta);
    void wait_while_held();

    DgramEndpoint &ep_;
    DgramRouter &router_;
    std::atomic<bool> stop_{false};
    std::mutex held_mutex_;
    std::condition_variable released_;
    int held_ = 0;  // under held_mutex_: Asides alive
    std::string placement_;
    std::thread thread_;
};

}  // namespace optireduce
