// SPDX-License-Identifier: BSD-3-Clause
#include "bench/support/library_probe.hpp"

#include <mpi.h>

#include <dlfcn.h>

namespace optireduce::bench {
namespace {

template <typename Fn>
Fn lookup(const char *name) {
    return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// What this binary was compiled against, named as optireduce_mpi_abi() names it.
#if defined(OPEN_MPI)
constexpr const char *own_abi = "Open MPI";
#elif defined(MPICH)
constexpr const char *own_abi = "MPICH";
#else
#error "optireduce-bench knows the Open MPI and MPICH ABIs only"
#endif

}  // namespace

LibraryProbe::LibraryProbe()
    : version_(lookup<const char *(*)()>("optireduce_version")),
      mpi_abi_(lookup<const char *(*)()>("optireduce_mpi_abi")),
      get_stats_(lookup<int (*)(optireduce_stats_t *)>("optireduce_get_stats")) {}

std::string LibraryProbe::describe() const {
    if (!loaded()) return "not loaded (both modes run the underlying MPI)";
    std::string text = std::string("loaded, optireduce ") + version_();
    if (mpi_abi_) text += std::string(" (") + mpi_abi_() + " ABI)";
    return text;
}

std::optional<std::string> LibraryProbe::abi_mismatch() const {
    if (!mpi_abi_ || std::string(mpi_abi_()) == own_abi) return std::nullopt;
    return std::string("the preloaded library is built for ") + mpi_abi_() + " but this bench for " + own_abi;
}

std::optional<optireduce_stats_t> LibraryProbe::stats() const {
    optireduce_stats_t out{};
    if (!get_stats_ || get_stats_(&out) != 0) return std::nullopt;
    return out;
}

std::optional<double> engine_percent(const std::optional<optireduce_stats_t> &before,
                                     const std::optional<optireduce_stats_t> &after, double calls) {
    if (!before || !after || calls <= 0) return std::nullopt;
    return 100.0 * static_cast<double>(after->engine_calls - before->engine_calls) / calls;
}

}  // namespace optireduce::bench
