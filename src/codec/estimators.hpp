// SPDX-License-Identifier: BSD-3-Clause
// What bounded mode puts where data missed the deadline, and how large the error it introduced
// is likely to be (docs/architecture.md, "Estimating what was lost"). Pure functions.
//
// "Unbiased" here means: averaged over the losses, the estimate equals the true sum. For phase 1
// that holds for the values at hand (fixed inputs) as long as which peers' datagrams are lost
// does not depend on what they carry and every peer is as likely to be lost as any other. The
// phase-2 fill is unbiased only in the sense that matters for training: a rank's gradient is an
// unbiased sample of the mean gradient, so N times it is an unbiased estimate of the sum.
#pragma once

#include "codec/simd.hpp"

#include <cstddef>
#include <span>

namespace optireduce {

// Phase 1, one chunk of this rank's shard: `own` always arrived (it never leaves the rank),
// `peers` are the m contributions of the ranks - 1 other ranks that did. The estimate is
//   own + (ranks - 1) / m * sum(peers)        (m >= 1)
//   ranks * own                               (m == 0: nothing else is known)
// Rescaling by ranks / (m + 1) instead, as if our own contribution could have been lost too,
// would weigh it by ranks * E[1 / (m + 1)] > 1 and bias the sum towards it (by 25% of its
// deviation with 4 ranks at 20% loss). peers are added in the order given, then scaled, then
// added to own: the same bits on every instruction set.
void estimate_partial_sum(const float *own, std::span<const float *const> peers, int ranks, float *dst, std::size_t n,
                          Isa isa = best_isa());

// Phase 2: a reduced chunk that never arrived is estimated by this rank's own contribution
// times N.
void fill_from_own(const float *own, float *dst, std::size_t n, int ranks, Isa isa = best_isa());

// ---- Error estimates (squared, absolute; from the loss map and one number about the data) ----
//
// sigma2: the between-rank variance per coordinate, sum_i (x_i - mean)^2 / (terms - 1), averaged
// over coordinates (SpreadSample). With it, for `len` coordinates of one chunk:
double partial_sum_error_sq(std::size_t len, int ranks, int received_peers, double sigma2);
double fill_error_sq(std::size_t len, int ranks, double sigma2);

// Accumulates sigma2 from chunks where at least two contributions arrived.
struct SpreadSample {
    double sum = 0;  // sum over sampled coordinates of their between-rank variance
    double coords = 0;
    void add(std::span<const float *const> terms, std::size_t n);
    double sigma2() const { return coords > 0 ? sum / coords : 0; }
};

// sum of x[i]^2 in double.
double sum_squares(const float *x, std::size_t n);

}  // namespace optireduce
