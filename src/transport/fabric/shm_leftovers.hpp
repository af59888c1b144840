// SPDX-License-Identifier: BSD-3-Clause
// Regions that libfabric's shm provider left in /dev/shm for a process that has the same pid
// as this one.
//
// The shm provider (libfabric 1.17) names its region "<pid>:<domain>:<endpoint>" and creates it
// exclusively. A process killed before it closed its endpoint (a timeout, a dead-rank test, a
// crash) leaves the region behind, and a later process that is given the same pid fails
// fi_enable with EBUSY, so its communicator silently falls back to MPI. A region that carries
// our pid but that this process has not mapped can only be such a leftover: a live region is
// mapped for as long as its endpoint is open.
#pragma once

#include <string>
#include <vector>

namespace optireduce {

// Removes the leftovers described above; returns their names. Call it before opening an shm
// endpoint. Directory errors are not fatal: the caller's fi_enable reports what remains.
std::vector<std::string> remove_shm_leftovers_of_our_pid(const std::string &dir = "/dev/shm");

}  // namespace optireduce
