#include "engine/comm_executor.hpp"

#include "engine/thread_placement.hpp"

#include <pthread.h>
#include <sched.h>

namespace optireduce {

CommExecutor::CommExecutor() {
    thread_ = start_placed_thread(&placement_, [this] {
        // SCHED_BATCH: a woken executor does not preempt the thread that woke it. Without it, on
        // a core with nothing idle, MPI_Iallreduce handed the core to the operation it had just
        // queued and returned only when the scheduler gave it back: 60-280 us inside the call at
        // 64 KiB - 1 MiB on 2 local ranks, against 4 us with it (docs/benchmarks.md 12.6). The
        // operation still gets its share of the core while the application computes.
        sched_param param{};
        pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
        run();
    });
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
