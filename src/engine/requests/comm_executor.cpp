// SPDX-License-Identifier: BSD-3-Clause
#include "engine/requests/comm_executor.hpp"

#include "engine/dgram/thread_placement.hpp"

#include <pthread.h>
#include <sched.h>

namespace optireduce {

CommExecutor::CommExecutor(bool on_rank_cores) {
    auto body = [this] {
        // SCHED_BATCH: a woken executor does not preempt the thread that woke it. Without it, on
        // a core with nothing idle, MPI_Iallreduce handed the core to the operation it had just
        // queued and returned only when the scheduler gave it back: 60-280 us inside the call at
        // 64 KiB - 1 MiB on 2 local ranks, against 4 us with it (docs/notes/2026-12-03-iallreduce.md). The
        // operation still gets its share of the core while the application computes.
        sched_param param{};
        pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
        pthread_setname_np(pthread_self(), "optireduce-exec");  // for top -H, perf and the tests
        run();
    };
    if (!on_rank_cores) {
        thread_ = start_placed_thread(&placement_, std::move(body));
        return;
    }
    // With a rank on every core, a core off ours is another rank's: the executor placed there
    // ran when that rank left its core, and our rank's wake-ups in MPI_Wait (kPokeEvery,
    // async_request.hpp) took the core from that rank's executor. On our own cores it runs when
    // our rank waits in MPI_Wait, or a tick into a long computation. On 2 local ranks,
    // MPI_Iallreduce then MPI_Wait took 0.57-0.99x native Open MPI's time from 1 to 16 MiB,
    // against 1.15-1.65x placed off the rank's core (docs/notes/2026-12-07-executor-on-own-core.md).
    placement_ = "the rank's own cores (a rank on every core of the node)";
    thread_ = std::thread(std::move(body));
}

CommExecutor::~CommExecutor() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void CommExecutor::submit(std::function<void()> job) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(job));
    }
    wake_.notify_one();
}

void CommExecutor::wait_idle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

bool CommExecutor::wait_idle_for(std::chrono::microseconds limit) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, limit, [this] { return queue_.empty() && running_ == 0; });
}

void CommExecutor::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        // Stop only with nothing queued: an operation already handed to us has a request the
        // application will wait on.
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        std::function<void()> job = std::move(queue_.front());
        queue_.pop_front();
        running_ = 1;
        lock.unlock();
        job();
        lock.lock();
        running_ = 0;
        if (queue_.empty()) idle_.notify_all();
    }
}

}  // namespace optireduce
