// SPDX-License-Identifier: BSD-3-Clause
// The work that stands in for a training step's compute (--compute-ms, --skew-ms,
// --compute-sleep), before each call.
#pragma once

namespace optireduce::bench {

// How long `rank` computes at `iteration`, in ms: `ms`, give or take a quarter, plus
// a uniform extra of up to `skew_ms` (a rank whose batch or core is slower). Drawn from (rank,
// iteration), so each run repeats and ranks reach each call at different times, as they do after
// forward and backward passes of uneven length.
double compute_duration_ms(double ms, double skew_ms, int rank, long iteration);

// Spins for `ms` (the rank's core is busy, as with CPU training) or sleeps (it is free, as while
// a GPU computes).
void spend(double ms, bool sleep);

}  // namespace optireduce::bench
