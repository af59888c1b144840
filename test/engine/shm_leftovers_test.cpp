// SPDX-License-Identifier: BSD-3-Clause
// A region of libfabric's shm provider left in /dev/shm by a killed process whose pid we now
// have: opening the shm endpoint removes it and succeeds (without that, fi_enable fails with
// EBUSY and the communicator falls back to MPI), while a region this process has mapped stays.
#include "transport/fabric/shm_leftovers.hpp"
#include "transport/fabric/rdm_endpoint.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace optireduce {
namespace {

std::string our_region(int domain, int endpoint) {
    return std::to_string(::getpid()) + ":" + std::to_string(domain) + ":" + std::to_string(endpoint);
}

bool exists(const std::string &name) { return ::access(("/dev/shm/" + name).c_str(), F_OK) == 0; }

void leave_region(const std::string &name) {
    int fd = ::shm_open(("/" + name).c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 4096), 0);
    ::close(fd);
}

TEST(ShmLeftovers, EndpointOpensOverALeftoverWithOurPid) {
    const std::string name = our_region(0, 0);
    leave_region(name);
    std::string error;
    auto ep = RdmEndpoint::open("shm", &error);
    ASSERT_NE(ep, nullptr) << error;
    EXPECT_TRUE(exists(name)) << "the endpoint's own region, created after the leftover went";
    ep.reset();
    ::shm_unlink(("/" + name).c_str());
}

TEST(ShmLeftovers, MappedRegionStaysAndOnlyOurPidIsTouched) {
    const std::string mapped = our_region(7, 7), stale = our_region(8, 8);
    const std::string other = std::to_string(::getpid() + 1) + ":0:0";  // not our pid's name
    leave_region(mapped);
    leave_region(stale);
    const bool other_existed = exists(other);
    if (!other_existed) leave_region(other);
    int fd = ::shm_open(("/" + mapped).c_str(), O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    void *map = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    ASSERT_NE(map, MAP_FAILED);

    const auto removed = remove_shm_leftovers_of_our_pid();
    EXPECT_NE(std::find(removed.begin(), removed.end(), stale), removed.end());
    EXPECT_EQ(std::find(removed.begin(), removed.end(), mapped), removed.end());
    EXPECT_FALSE(exists(stale));
    EXPECT_TRUE(exists(mapped));
    EXPECT_TRUE(exists(other));

    ::munmap(map, 4096);
    ::shm_unlink(("/" + mapped).c_str());
    if (!other_existed) ::shm_unlink(("/" + other).c_str());
}

}  // namespace
}  // namespace optireduce
