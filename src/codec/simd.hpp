// SPDX-License-Identifier: BSD-3-Clause
// Which vector instruction set the codec kernels run with. Chosen once at run time from what
// the CPU reports (never from the build machine: shipped builds are never -march=native), and
// selectable per call so tests and benchmarks can run every path on the same data. Every
// kernel's paths do the same floating-point operations in the same order, so they give the
// same bits (src/codec is compiled with -ffp-contract=off so no path fuses a multiply-add).
#pragma once

namespace optireduce {

enum class Isa { scalar, avx2, avx512 };

// The widest instruction set this CPU (and this build) supports.
Isa best_isa();
// `isa`, or the next narrower one this CPU has (every path gives the same bits).
Isa usable_isa(Isa isa);
bool isa_supported(Isa isa);
const char *to_string(Isa isa);

}  // namespace optireduce
