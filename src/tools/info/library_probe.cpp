// SPDX-License-Identifier: BSD-3-Clause
// Which liboptireduce this tool is running against, and whether its MPICH twin is beside it.
#include <dlfcn.h>

#include <filesystem>

#include "codec/simd.hpp"
#include "optireduce/optireduce.h"
#include "probes.hpp"

namespace optireduce::info {
namespace {

namespace fs = std::filesystem;

// The loader decides which liboptireduce.so.0 we got (RPATH, LD_LIBRARY_PATH, ld.so.cache), so
// ask the loader rather than guessing from our own install prefix.
std::string loaded_path() {
    Dl_info where{};
    if (dladdr(reinterpret_cast<void *>(&optireduce_version), &where) == 0 || where.dli_fname == nullptr)
        return "(unknown)";
    // Canonical directory, but keep the file name: liboptireduce.so.0 is what the loader
    // resolved, and it says more than the liboptireduce.so.0.1.0 the symlink points to.
    fs::path p(where.dli_fname);
    std::error_code ec;
    fs::path dir = fs::weakly_canonical(p.parent_path(), ec);
    return ec ? p.string() : (dir / p.filename()).string();
}

std::optional<std::string> mpich_twin(const std::string &library_path) {
    fs::path dir = fs::path(library_path).parent_path();
    for (const char *name : {"liboptireduce-mpich.so", "liboptireduce-mpich.so.0"}) {
        std::error_code ec;
        if (fs::exists(dir / name, ec)) return (dir / name).string();
    }
    return std::nullopt;
}

}  // namespace

LibraryFacts probe_library() {
    LibraryFacts f;
    f.version = optireduce_version();
    f.mpi_abi = optireduce_mpi_abi();
    f.path = loaded_path();
    f.mpich_path = mpich_twin(f.path);
    // The same choice the engine makes (codec/simd.hpp): this process runs on the same CPU.
    f.codec_kernels = to_string(best_isa());
    return f;
}

}  // namespace optireduce::info
