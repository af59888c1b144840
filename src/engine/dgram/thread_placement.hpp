// SPDX-License-Identifier: BSD-3-Clause
// Where the library's own threads run (the datagram drainer, the nonblocking executors): off the
// cores the rank computes on, near the NIC where there is a choice. (A nonblocking executor with
// no spare core on the node stays on its rank's cores instead: comm_executor.cpp.)
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace optireduce {

// Cores near the first network device (its NUMA node's cpuset; the whole machine if hwloc sees
// none), minus the cores this process is bound to, for the calling thread. When nothing is left
// (an unbound rank, or a rank bound to every core) the thread stays unbound and the scheduler
// places it. Returns where it went, for the log ("cores 2-3 (near eth0)", "unbound: ...").
std::string place_current_thread();

// Starts `body` on a new thread that first places itself; returns once it has, with where in
// *placement (written before `body` runs, so the caller may log it at once).
std::thread start_placed_thread(std::string *placement, std::function<void()> body);

}  // namespace optireduce
