// SPDX-License-Identifier: BSD-3-Clause
// What the Open MPI Fortran wrappers share: finding Open MPI's own routine behind ours, telling
// Fortran's MPI_IN_PLACE / MPI_BOTTOM apart, and the list of names each routine goes by.
#pragma once

#include <mpi.h>

#include <dlfcn.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace optireduce {

// Open MPI's own implementation of `name`, found past this library in lookup order.
template <class Fn>
Fn next_symbol(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        std::fprintf(stderr, "optireduce error: %s not found in the MPI library: %s\n", name, dlerror());
        std::abort();
    }
    return reinterpret_cast<Fn>(f);
}

// Fortran passes MPI_IN_PLACE / MPI_BOTTOM as the address of a common-block variable. Open MPI
// checks several spellings of it; one global definition of each wins symbol resolution, so
// addresses looked up in the global scope match what Open MPI itself compares against. Looked
// up once: dlsym is far too slow for every call.
struct Sentinel {
    std::array<const void *, 4> addrs{};
    explicit Sentinel(const char *base) {
        const std::string b(base), upper = [&] {
            std::string u = b;
            for (char &c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            return u;
        }();
        const std::string names[4] = {b, b + "_", b + "__", upper};
        for (std::size_t i = 0; i < 4; ++i) addrs[i] = dlsym(RTLD_DEFAULT, names[i].c_str());
    }
    bool matches(const void *buf) const {
        for (const void *a : addrs)
            if (a && a == buf) return true;
        return false;
    }
};

}  // namespace optireduce

// mpif.h and `use mpi` (libmpi_mpifh): every mangling and alias Open MPI 4.1 exports.
#define OPTIREDUCE_FORTRAN_ALL(macro, lower, upper, mixed) \
    macro(lower) macro(lower##_) macro(lower##__) macro(upper) macro(mixed##_f) macro(mixed##_f08)
