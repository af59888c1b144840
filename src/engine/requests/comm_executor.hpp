// SPDX-License-Identifier: BSD-3-Clause
// The thread that runs a communicator's nonblocking engine operations (MPI_Iallreduce) while the
// application computes: real overlap, deadlines included, at every MPI thread level, because
// the operations themselves call no MPI (only libfabric and the kernel's sockets). One per
// communicator, started by its first nonblocking call, so that two communicators' operations
// run side by side and one communicator's run one after another, in the order they were
// called: every rank numbers a communicator's operations alike, and a rank that ran them out of
// order would wait for a peer that is still in the previous one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace optireduce {

class CommExecutor {
public:
    // `on_rank_cores`: this job has a rank on every core of the node (ProcessContext::
    // no_spare_core), so the thread stays on the rank's own cores instead of going near the NIC.
    explicit CommExecutor(bool on_rank_cores);
    ~CommExecutor();  // runs what is queued, then joins
    CommExecutor(const CommExecutor &) = delete;
    CommExecutor &operator=(const CommExecutor &) = delete;

    // Queues one operation; it runs after every one queued before it.
    void submit(std::function<void()> job);
    // Returns once everything submitted so far has run: a blocking call on the communicator
    // waits here, so that it follows the nonblocking ones called before it.
    void wait_idle();
    // The same for at most `limit`; true if idle.
    bool wait_idle_for(std::chrono::microseconds limit);

    const std::string &placement() const { return placement_; }

private:
    void run();

    std::mutex mutex_;
    std::condition_variable wake_;  // a job was queued, or stop
    std::condition_variable idle_;  // the queue ran empty
    std::deque<std::function<void()>> queue_;
    std::size_t running_ = 0;  // 1 while a job runs outside the lock
    bool stop_ = false;
    std::string placement_;
    std::thread thread_;
};

}  // namespace optireduce
