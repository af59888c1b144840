// SPDX-License-Identifier: BSD-3-Clause
#include "transport/fabric/shm_leftovers.hpp"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>

namespace optireduce {
namespace {

// Every file this process has mapped, as /proc/self/maps names it (the path is the last field;
// it never holds a space for the names we look for).
std::set<std::string> mapped_files() {
    std::set<std::string> out;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        auto slash = line.find('/');
        if (slash != std::string::npos) out.insert(line.substr(slash));
    }
    return out;
}

}  // namespace

std::vector<std::string> remove_shm_leftovers_of_our_pid(const std::string &dir) {
    const std::string prefix = std::to_string(::getpid()) + ":";
    std::vector<std::string> candidates;
    {
        std::unique_ptr<DIR, int (*)(DIR *)> d(::opendir(dir.c_str()), ::closedir);
        if (!d) return {};
        while (const dirent *e = ::readdir(d.get())) {
            std::string name = e->d_name;
            if (name.compare(0, prefix.size(), prefix) == 0) candidates.push_back(std::move(name));
        }
    }
    // Read the mappings after the directory: a region created and mapped meanwhile by another
    // thread of ours is then seen as mapped, never removed. (Only a region caught between its
    // shm_open and its mmap could be taken for a leftover; the engine opens its shm endpoint
    // once per process, and MPI's own, if any, was opened in MPI_Init.)
    const std::set<std::string> mapped = mapped_files();
    std::vector<std::string> removed;
    for (const std::string &name : candidates) {
        std::string path = dir;
        path += '/';
        path += name;
        if (mapped.count(path) == 0 && ::unlink(path.c_str()) == 0) removed.push_back(name);
    }
    return removed;
}

}  // namespace optireduce
