// SPDX-License-Identifier: BSD-3-Clause
// Finds liboptireduce at run time. The bench never links it, so the same binary measures a
// preloaded library and, without LD_PRELOAD, the plain MPI.
#pragma once

#include <optireduce/optireduce.h>

#include <optional>
#include <string>

namespace optireduce::bench {

class LibraryProbe {
public:
    LibraryProbe();

    bool loaded() const { return version_ != nullptr; }
    // "not loaded", or e.g. "loaded, optireduce 0.1.0 (Open MPI ABI)"
    std::string describe() const;
    // Set when the library was built for another MPI ABI than this bench: its results mean nothing.
    std::optional<std::string> abi_mismatch() const;
    // Empty when the library is absent or too old to export the counters.
    std::optional<optireduce_stats_t> stats() const;

private:
    const char *(*version_)() = nullptr;
    const char *(*mpi_abi_)() = nullptr;
    int (*get_stats_)(optireduce_stats_t *) = nullptr;
};

// Percent of `calls` that the engine ran between two readings of the counters; empty when the
// library is not there to ask.
std::optional<double> engine_percent(const std::optional<optireduce_stats_t> &before,
                                     const std::optional<optireduce_stats_t> &after, double calls);

}  // namespace optireduce::bench
