// SPDX-License-Identifier: BSD-3-Clause
#include "codec/simd.hpp"

namespace optireduce {

bool isa_supported(Isa isa) {
    switch (isa) {
        case Isa::scalar: return true;
#if defined(__x86_64__)
        case Isa::avx2: return __builtin_cpu_supports("avx2");
        // F for the arithmetic, BW/DQ/VL for nothing here, so only F is asked for.
        case Isa::avx512: return __builtin_cpu_supports("avx512f");
#else
        case Isa::avx2:
        case Isa::avx512: return false;
#endif
    }
    return false;
}

Isa best_isa() {
    static const Isa isa = isa_supported(Isa::avx512) ? Isa::avx512
                           : isa_supported(Isa::avx2) ? Isa::avx2
                                                      : Isa::scalar;
    return isa;
}

Isa usable_isa(Isa isa) {
    if (isa == Isa::avx512 && !isa_supported(Isa::avx512)) isa = Isa::avx2;
    if (isa == Isa::avx2 && !isa_supported(Isa::avx2)) isa = Isa::scalar;
    return isa;
}

const char *to_string(Isa isa) {
    switch (isa) {
        case Isa::scalar: return "scalar";
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
    }
    return "?";
}

}  // namespace optireduce
