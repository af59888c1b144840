// SPDX-License-Identifier: BSD-3-Clause
// OPTIREDUCE_CARRY's residuals: one per receive buffer and count, added to that key's next input
// (scaled down where larger than it), dropped and counted when idle or beyond the memory cap.
#include "engine/setup/carry_store.hpp"

#include "telemetry/stats.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace optireduce {
namespace {

constexpr std::size_t kN = 8, kPadded = 16;

// Keeps `value` as the residual of the slot (every entry), as an operation that dropped
// `entries` would.
void keep(CarryStore &store, CarryStore::Slot &slot, float value, std::uint64_t entries) {
    const CarryStore::Target t = store.target(slot, kN, kPadded, entries);
    ASSERT_NE(t.residual, nullptr);
    ASSERT_NE(t.scratch, nullptr);
    for (std::size_t i = 0; i < kN; ++i) t.residual[i] = value;
}

TEST(CarryStore, TheResidualJoinsTheNextInputOfItsKeyOnly) {
    CarryStore store(1 << 20, 100);
    int a = 0, b = 0;
    const std::vector<float> in(kN, 2.0f);
    CarryStore::Slot &first = store.begin(&a, kN);
    EXPECT_EQ(store.input(first, in.data(), kN), in.data());  // nothing pending: the input as is
    keep(store, first, 0.5f, 3);
    // Another buffer, and the same buffer at another count, do not get it.
    CarryStore::Slot &other = store.begin(&b, kN);
    EXPECT_EQ(store.input(other, in.data(), kN), in.data());
    CarryStore::Slot &longer = store.begin(&a, 2 * kN);
    EXPECT_EQ(store.input(longer, in.data(), kN), in.data());
    CarryStore::Slot &again = store.begin(&a, kN);
    const std::uint64_t carried_in = process_stats().entries_carried_in.load();
    const float *x = store.input(again, in.data(), kN);
    ASSERT_NE(x, in.data());
    for (std::size_t i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(x[i], 2.5f);
    EXPECT_EQ(process_stats().entries_carried_in.load() - carried_in, 3u);
    EXPECT_EQ(store.input(again, in.data(), kN), in.data());  // added once
}

TEST(CarryStore, AResidualLargerThanItsInputIsScaledToItsNorm) {
    CarryStore store(1 << 20, 100);
    int a = 0;
    const std::vector<float> in(kN, 1.0f);
    CarryStore::Slot &slot = store.begin(&a, kN);
    keep(store, slot, 3.0f, kN);  // three times the input's norm
    const std::uint64_t capped = process_stats().carry_capped_calls.load();
    const float *x = store.input(store.begin(&a, kN), in.data(), kN);
    for (std::size_t i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(x[i], 1.0f + 1.0f);  // scaled to 1, then added
    EXPECT_EQ(process_stats().carry_capped_calls.load() - capped, 1u);
    keep(store, slot, 0.9f, kN);  // smaller: added whole
    x = store.input(store.begin(&a, kN), in.data(), kN);
    for (std::size_t i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(x[i], 1.9f);
    EXPECT_EQ(process_stats().carry_capped_calls.load() - capped, 1u);
}

TEST(CarryStore, AResidualIdleTooLongIsDroppedAndCounted) {
    CarryStore store(1 << 20, 2);
    int a = 0, b = 0;
    keep(store, store.begin(&a, kN), 1.0f, 5);
    const std::uint64_t dropped = process_stats().carry_dropped_entries.load();
    store.begin(&b, kN);
    store.begin(&b, kN);
    EXPECT_EQ(store.slots(), 2u);  // two calls since: kept
    store.begin(&b, kN);
    EXPECT_EQ(store.slots(), 1u);  // three: dropped
    EXPECT_EQ(process_stats().carry_dropped_entries.load() - dropped, 5u);
    const std::vector<float> in(kN, 1.0f);
    EXPECT_EQ(store.input(store.begin(&a, kN), in.data(), kN), in.data());  // nothing came back
}

TEST(CarryStore, BeyondTheMemoryCapNothingIsKeptAndTheEntriesAreCounted) {
    // Room for one residual and the scratch, not a second residual.
    CarryStore store((kN + kPadded) * sizeof(float), 100);
    int a = 0, b = 0;
    keep(store, store.begin(&a, kN), 1.0f, 4);
    const std::uint64_t dropped = process_stats().carry_dropped_entries.load();
    const std::uint64_t bytes = process_stats().carry_bytes.load();
    CarryStore::Slot &second = store.begin(&b, kN);
    EXPECT_EQ(store.target(second, kN, kPadded, 6).residual, nullptr);
    EXPECT_EQ(process_stats().carry_dropped_entries.load() - dropped, 6u);
    EXPECT_EQ(process_stats().carry_bytes.load(), bytes);
    EXPECT_EQ(store.bytes(), (kN + kPadded) * sizeof(float));
}

}  // namespace
}  // namespace optireduce
