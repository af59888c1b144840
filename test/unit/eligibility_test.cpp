// SPDX-License-Identifier: BSD-3-Clause
// decide() must give the same answer on every rank for the same call, so each rule is pinned
// here on its own; a silent change of any of them is a cross-rank deadlock in production.
#include "policy/eligibility.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace optireduce {
namespace {

constexpr CallFacts float_sum(std::int64_t count) { return {true, true, count}; }

constexpr CommFacts ready_comm(int size = 4, std::uint64_t min_bytes = 0) { return {true, size, true, min_bytes}; }

// The pass-through test is used in constant expressions by the wrappers' fast path.
static_assert(is_float_sum(float_sum(1)));
static_assert(decide(float_sum(16), ready_comm()) == Route::engine);

TEST(Eligibility, FloatSumOnReadyCommRunsOnEngine) {
    EXPECT_EQ(decide(float_sum(1), ready_comm()), Route::engine);
    EXPECT_EQ(decide(float_sum(1'000'003), ready_comm(7)), Route::engine);
}

TEST(Eligibility, OtherOpsPassThrough) {
    CallFacts max_float{false, true, 1024};
    EXPECT_FALSE(is_float_sum(max_float));
    EXPECT_EQ(decide(max_float, ready_comm()), Route::passthrough);
}

TEST(Eligibility, OtherDatatypesPassThrough) {
    CallFacts double_sum{true, false, 1024};
    EXPECT_FALSE(is_float_sum(double_sum));
    EXPECT_EQ(decide(double_sum, ready_comm()), Route::passthrough);
    EXPECT_EQ(decide(CallFacts{false, false, 1024}, ready_comm()), Route::passthrough);
}

// Ineligible calls never count as fallbacks, whatever the communicator looks like.
TEST(Eligibility, NonFloatSumIsPassthroughEvenOnUnusableComm) {
    CommFacts inter{false, 2, false, 0};
    EXPECT_EQ(decide(CallFacts{true, false, 8}, inter), Route::passthrough);
}

// A negative count is an erroneous call: the underlying MPI must see it and raise the error.
TEST(Eligibility, NegativeCountPassesThrough) {
    EXPECT_EQ(decide(float_sum(-1), ready_comm()), Route::passthrough);
    EXPECT_EQ(decide(float_sum(std::numeric_limits<std::int64_t>::min()), ready_comm()), Route::passthrough);
}

TEST(Eligibility, IntercommFallsBack) {
    CommFacts inter = ready_comm();
    inter.intracomm = false;
    EXPECT_EQ(decide(float_sum(1024), inter), Route::fallback);
}

TEST(Eligibility, CommOfSizeBelowTwoFallsBack) {
    EXPECT_EQ(decide(float_sum(1024), ready_comm(1)), Route::fallback);
    EXPECT_EQ(decide(float_sum(1024), ready_comm(0)), Route::fallback);
    EXPECT_EQ(decide(float_sum(1024), ready_comm(2)), Route::engine);
}

TEST(Eligibility, DisabledEngineFallsBack) {
    CommFacts off = ready_comm();
    off.engine_enabled = false;
    EXPECT_EQ(decide(float_sum(1 << 20), off), Route::fallback);
}

// count*4 >= min_bytes: a call of exactly min_bytes is taken, one element less is not.
TEST(Eligibility, MinBytesBoundaryIsInclusive) {
    const CommFacts comm = ready_comm(4, 65536);
    EXPECT_EQ(decide(float_sum(16384), comm), Route::engine);
    EXPECT_EQ(decide(float_sum(16383), comm), Route::fallback);
    EXPECT_EQ(decide(float_sum(16385), comm), Route::engine);
}

// A threshold that is not a multiple of 4 rounds the element count up.
TEST(Eligibility, MinBytesNotMultipleOfElementSize) {
    const CommFacts comm = ready_comm(3, 4097);
    EXPECT_EQ(decide(float_sum(1024), comm), Route::fallback);  // 4096 bytes
    EXPECT_EQ(decide(float_sum(1025), comm), Route::engine);    // 4100 bytes
}

TEST(Eligibility, ZeroCountIsEligibleOnlyWithZeroThreshold) {
    EXPECT_EQ(decide(float_sum(0), ready_comm(2, 0)), Route::engine);
    EXPECT_EQ(decide(float_sum(0), ready_comm(2, 1)), Route::fallback);
}

// Large-count (MPI_Count) calls must not wrap around the 32-bit int range.
TEST(Eligibility, CountsBeyondIntRange) {
    const std::int64_t big = std::int64_t{1} << 33;
    EXPECT_EQ(decide(float_sum(big), ready_comm(2, 65536)), Route::engine);
    EXPECT_EQ(decide(float_sum(big), ready_comm(2, std::uint64_t{1} << 35)), Route::engine);
    EXPECT_EQ(decide(float_sum(big - 1), ready_comm(2, std::uint64_t{1} << 35)), Route::fallback);
}

// Beyond what the channel addresses (exact mode: 2^20 segments per shard), a call falls back,
// on every rank alike: the bound is computed from agreed settings. Exactly the bound is taken.
TEST(Eligibility, CountsBeyondTheChannelFallBack) {
    CommFacts comm = ready_comm(4, 0);
    const std::uint64_t segment_floats = 1024;  // OPTIREDUCE_SEGMENT_BYTES=4K, the smallest
    comm.max_count = 4 * (std::uint64_t{1} << 20) * segment_floats;
    const auto at = static_cast<std::int64_t>(comm.max_count);
    EXPECT_EQ(decide(float_sum(at), comm), Route::engine);
    EXPECT_EQ(decide(float_sum(at + 1), comm), Route::fallback);
    EXPECT_EQ(decide(CallFacts{false, true, at + 1}, comm), Route::passthrough);
}

// The checks are ordered: the cheap float-SUM test decides pass-through before any
// communicator fact is consulted, and the communicator rules come before the size threshold.
TEST(Eligibility, RulePrecedence) {
    CommFacts everything_wrong{false, 1, false, ~std::uint64_t{0}};
    EXPECT_EQ(decide(CallFacts{false, true, 4}, everything_wrong), Route::passthrough);
    EXPECT_EQ(decide(float_sum(4), everything_wrong), Route::fallback);
}

}  // namespace
}  // namespace optireduce
