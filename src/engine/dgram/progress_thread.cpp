// SPDX-License-Identifier: BSD-3-Clause
#include "engine/dgram/progress_thread.hpp"

#include "engine/dgram/thread_placement.hpp"

#include <chrono>
#include <memory>
#include <thread>

namespace optireduce {

ProgressThread::ProgressThread(DgramEndpoint &ep, DgramRouter &router) : ep_(ep), router_(router) {
    thread_ = start_placed_thread(&placement_, [this] { run(); });
}

ProgressThread::~ProgressThread() {
    {
        std::lock_guard lock(held_mutex_);
        stop_.store(true, std::memory_order_relaxed);
    }
    released_.notify_all();
    ep_.wake();
    thread_.join();
}

void ProgressThread::hold(int delta) {
    {
        std::lock_guard lock(held_mutex_);
        held_ += delta;
        if (held_ > 0) return;
    }
    released_.notify_all();
}

void ProgressThread::wait_while_held() {
    std::unique_lock lock(held_mutex_);
    released_.wait(lock, [this] { return held_ == 0 || stop_.load(std::memory_order_relaxed); });
}

void ProgressThread::run() {
    const DgramEndpoint::Sink sink = [this](std::span<const std::byte> d, fi_addr_t src) {
        router_.on_datagram(d, src);
    };
    while (!stop_.load(std::memory_order_relaxed)) {
        wait_while_held();
        const int got = ep_.poll(sink);
        router_.repair().serve(ep_);  // requests for a shard whose operation returned here
        router_.votes().serve(ep_);   // votes for an operation that returned here
        if (got > 0) continue;
        if (got < 0) {
            // An operation's thread is draining: the socket stays readable until it is done, so
            // waiting in it would return at once, again and again (a spinning core, on hosts
            // whose cores the ranks and the kernel need: 4 MiB on 4 local ranks took 4x as long).
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            continue;
        }
        // Nothing waiting: sleep in the kernel until a datagram comes (or wake() for shutdown).
        ep_.wait(DgramEndpoint::kForever);
    }
}

}  // namespace optireduce
