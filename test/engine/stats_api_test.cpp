// SPDX-License-Identifier: BSD-3-Clause
// The public stats calls against the process counters (no MPI call is made):
// optireduce_get_stats_sized writes no byte past the size it is given, so a program built
// against an older, shorter optireduce_stats_t keeps working; the old optireduce_get_stats
// writes the whole struct as before; the field names and types the library reports describe
// optireduce_stats_t exactly, as a ctypes reader builds it from them; and the header is plain C
// (stats_header_c99.c, compiled as strict C99, sees the same struct).
#include "optireduce/optireduce.h"
#include "telemetry/stats.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <vector>

extern "C" size_t optireduce_test_c_stats_size(void);
extern "C" size_t optireduce_test_c_offset_of_last(void);
extern "C" int optireduce_test_c_read(optireduce_stats_t *out);

namespace optireduce {
namespace {

constexpr unsigned char kSentinel = 0xAB;

// Sets every counter to a distinct non-zero value, so that a copy that skips one shows.
void fill_counters() {
    auto &s = process_stats();
    std::uint64_t v = 1000;
#define SET_U64(name, doc) s.name.store(v++);
#define SET_F64(name, doc) s.name.store(static_cast<double>(v++) + 0.5);
    OPTIREDUCE_STATS_FIELDS(SET_U64, SET_F64)
#undef SET_U64
#undef SET_F64
}

TEST(StatsApi, SizedCallWritesNothingPastAShortStruct) {
    fill_counters();
    optireduce_stats_t full{};
    ASSERT_EQ(optireduce_get_stats(&full), 0);
    // A program compiled when the struct ended at datagrams_fault_dropped (before the Accuracy
    // fields): its struct is that long, what follows in memory is someone else's.
    const std::size_t old_size = offsetof(optireduce_stats_t, hadamard_calls);
    std::vector<unsigned char> buf(sizeof(optireduce_stats_t) + 64, kSentinel);
    const int have = optireduce_get_stats_sized(reinterpret_cast<optireduce_stats_t *>(buf.data()), old_size);
    EXPECT_EQ(have, static_cast<int>(sizeof(optireduce_stats_t)));
    EXPECT_EQ(std::memcmp(buf.data(), &full, old_size), 0) << "the fields it knows are filled";
    for (std::size_t i = old_size; i < buf.size(); ++i)
        ASSERT_EQ(buf[i], kSentinel) << "byte " << i << " written past the caller's " << old_size;
}

TEST(StatsApi, SizedCallCopiesOddSizesExactly) {
    fill_counters();
    optireduce_stats_t full{};
    ASSERT_EQ(optireduce_get_stats(&full), 0);
    for (std::size_t size : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, sizeof full - 1}) {
        std::vector<unsigned char> buf(sizeof full + 8, kSentinel);
        EXPECT_EQ(optireduce_get_stats_sized(reinterpret_cast<optireduce_stats_t *>(buf.data()), size),
                  static_cast<int>(sizeof full));
        EXPECT_EQ(std::memcmp(buf.data(), &full, size), 0) << "size " << size;
        for (std::size_t i = size; i < buf.size(); ++i)
            ASSERT_EQ(buf[i], kSentinel) << "size " << size << " byte " << i;
    }
}

TEST(StatsApi, SizedCallFillsTheLibrarysStructAndNoMore) {
    fill_counters();
    optireduce_stats_t full{};
    ASSERT_EQ(optireduce_get_stats(&full), 0);
    EXPECT_EQ(full.engine_calls, 1000u);
    EXPECT_EQ(full.completion_errors, process_stats().completion_errors.load());
    EXPECT_EQ(full.error_estimate_max, process_stats().error_estimate_max.load());
    // A caller with a newer, longer struct: the library's part is filled, the rest untouched.
    std::vector<unsigned char> buf(sizeof full + 64, kSentinel);
    EXPECT_EQ(optireduce_get_stats_sized(reinterpret_cast<optireduce_stats_t *>(buf.data()), buf.size()),
              static_cast<int>(sizeof full));
    EXPECT_EQ(std::memcmp(buf.data(), &full, sizeof full), 0);
    for (std::size_t i = sizeof full; i < buf.size(); ++i) ASSERT_EQ(buf[i], kSentinel) << "byte " << i;
}

TEST(StatsApi, SizeQueryAndErrors) {
    EXPECT_EQ(optireduce_get_stats_sized(nullptr, 0), static_cast<int>(sizeof(optireduce_stats_t)));
    EXPECT_EQ(optireduce_get_stats_sized(nullptr, sizeof(optireduce_stats_t)), -1);
    EXPECT_EQ(optireduce_get_stats(nullptr), -1);
}

TEST(StatsApi, FieldNamesDescribeTheStruct) {
    const int n = optireduce_stats_field_count();
    // Every field is 8 bytes and the struct has no padding: field i sits at offset 8 * i, which is
    // all a ctypes reader needs besides the names and types.
    ASSERT_EQ(static_cast<std::size_t>(n) * 8, sizeof(optireduce_stats_t));
    std::vector<std::string> names;
#define NAME_OF(name, doc) names.push_back(#name);
    OPTIREDUCE_STATS_FIELDS(NAME_OF, NAME_OF)
#undef NAME_OF
    ASSERT_EQ(names.size(), static_cast<std::size_t>(n));
    std::set<std::string> seen;
    for (int i = 0; i < n; ++i) {
        ASSERT_NE(optireduce_stats_field_name(i), nullptr);
        EXPECT_EQ(optireduce_stats_field_name(i), names[static_cast<std::size_t>(i)]);
        EXPECT_TRUE(seen.insert(optireduce_stats_field_name(i)).second)
            << "duplicate " << names[static_cast<std::size_t>(i)];
    }
    EXPECT_STREQ(optireduce_stats_field_type(0), "uint64_t");
    EXPECT_STREQ(optireduce_stats_field_name(0), "engine_calls");
    const int est = static_cast<int>(offsetof(optireduce_stats_t, error_estimate_sum) / 8);
    EXPECT_STREQ(optireduce_stats_field_name(est), "error_estimate_sum");
    EXPECT_STREQ(optireduce_stats_field_type(est), "double");
    EXPECT_STREQ(optireduce_stats_field_name(n - 1), "carry_spell_calls");  // the newest, appended last
    EXPECT_EQ(optireduce_stats_field_name(-1), nullptr);
    EXPECT_EQ(optireduce_stats_field_name(n), nullptr);
    EXPECT_EQ(optireduce_stats_field_type(n), nullptr);
}

TEST(StatsApi, CSeesTheSameStruct) {
    EXPECT_EQ(optireduce_test_c_stats_size(), sizeof(optireduce_stats_t));
    EXPECT_EQ(optireduce_test_c_offset_of_last(), offsetof(optireduce_stats_t, datagrams_given_up));
    fill_counters();
    optireduce_stats_t from_c{}, full{};
    EXPECT_EQ(optireduce_test_c_read(&from_c), static_cast<int>(sizeof full));
    ASSERT_EQ(optireduce_get_stats(&full), 0);
    EXPECT_EQ(std::memcmp(&from_c, &full, sizeof full), 0);
}

}  // namespace
}  // namespace optireduce
