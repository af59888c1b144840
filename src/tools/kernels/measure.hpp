// SPDX-License-Identifier: BSD-3-Clause
// One function per kernel family; each times every instruction set in r.isas, checks every result
// and appends its rows to `r`. A wrong result ends the process through fail().
#pragma once

#include "results.hpp"

namespace optireduce::kernel_bench {

// memcpy of `bytes`, repeated to `total` bytes per timed run so a small buffer is copied often
// enough to time.
CopyRow measure_copy(const Settings &s, std::size_t bytes, std::size_t total);
// The better of two measurements: others sharing the machine can only slow a copy down.
CopyRow better(const CopyRow &a, const CopyRow &b);

void measure_fwht(const Settings &s, Results &r);
void measure_sign(const Settings &s, Results &r);
void measure_sum(const Settings &s, Results &r);
void measure_codec(const Settings &s, Results &r);
void measure_wire(const Settings &s, Results &r);

}  // namespace optireduce::kernel_bench
