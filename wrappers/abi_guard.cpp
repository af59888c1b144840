// SPDX-License-Identifier: BSD-3-Clause
#include "abi_guard.hpp"

#include <mpi.h>

#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace optireduce {
namespace {

#if defined(OPTIREDUCE_ABI_MPICH)
constexpr const char *kMine = "MPICH", *kOther = "Open MPI";
constexpr const char *kOtherLibrary = "libopen-pal";  // every Open MPI process has it
constexpr const char *kUseInstead = "liboptireduce.so";
#else
constexpr const char *kMine = "Open MPI", *kOther = "MPICH";
constexpr const char *kOtherLibrary = "libmpich";
constexpr const char *kUseInstead = "liboptireduce-mpich.so";
#endif

int find_other(dl_phdr_info *info, std::size_t, void *found) {
    if (info->dlpi_name && std::strstr(info->dlpi_name, kOtherLibrary)) {
        *static_cast<const char **>(found) = info->dlpi_name;
        return 1;
    }
    return 0;
}

// At load time: the program's own MPI is loaded by then if it links it.
__attribute__((constructor)) void check_at_load() { check_mpi_abi(); }

}  // namespace

void check_mpi_abi() {
    const char *other = nullptr;
    dl_iterate_phdr(&find_other, &other);
    if (!other) return;
    char text[1024];
    const int n = std::snprintf(text, sizeof text,
                                "optireduce error: this library is built for %s, but the program runs on %s (%s is "
                                "loaded). Preload %s instead, or start the job with optireduce-run, which picks the "
                                "build that matches the launcher.\n",
                                kMine, kOther, other, kUseInstead);
    // write(2): no stdio state is needed this early, and nothing of MPI may run.
    if (n > 0) {
        const ssize_t ignored =
            write(STDERR_FILENO, text, static_cast<std::size_t>(n) < sizeof text ? n : sizeof text - 1);
        (void)ignored;
    }
    _exit(1);
}

}  // namespace optireduce
