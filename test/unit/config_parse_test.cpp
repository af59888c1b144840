// SPDX-License-Identifier: BSD-3-Clause
// Valid OPTIREDUCE_* values: defaults, spellings users write, and the normalised form the rest
// of the library (and the cross-rank agreement) sees.
#include "config/config.hpp"
#include "fake_env.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace optireduce {
namespace {

using testing_support::FakeEnv;
using testing_support::parsed;

const KnobValue &value_of(const Config &c, std::string_view name) {
    for (const auto &v : c.values)
        if (name == v.spec->name) return v;
    throw std::runtime_error("no knob " + std::string(name));
}

TEST(ConfigDefaults, EmptyEnvironmentGivesDocumentedDefaults) {
    const Config c = parsed(FakeEnv{});
    EXPECT_EQ(c.mode, Mode::bounded);
    EXPECT_EQ(c.min_bytes, 65536u);
    EXPECT_EQ(c.provider, "auto");
    EXPECT_EQ(c.segment_bytes, 4194304u);
    EXPECT_EQ(c.log, LogLevel::warn);
    EXPECT_FALSE(c.stats);
    EXPECT_EQ(c.stats_file, "");
}

TEST(ConfigDefaults, OneValuePerKnobInTableOrder) {
    const Config c = parsed(FakeEnv{});
    const auto table = knob_table();
    ASSERT_EQ(c.values.size(), table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(c.values[i].spec, &table[i]);
        EXPECT_EQ(c.values[i].source, Source::default_value) << table[i].name;
    }
}

// Every default must itself pass the knob's own validation.
TEST(ConfigDefaults, TableDefaultsAreValidValues) {
    FakeEnv env;
    for (const auto &k : knob_table())
        if (*k.default_value) env.set(k.name, k.default_value);
    EXPECT_FALSE(env.parse().error.has_value());
}

// An empty variable means "unset", as for most MPI and libfabric variables.
TEST(ConfigDefaults, EmptyValueMeansDefault) {
    const Config c = parsed(FakeEnv{{"OPTIREDUCE_MODE", ""}, {"OPTIREDUCE_MIN_BYTES", ""}});
    EXPECT_EQ(c.mode, Mode::bounded);
    EXPECT_EQ(c.min_bytes, 65536u);
    EXPECT_EQ(value_of(c, "OPTIREDUCE_MODE").source, Source::default_value);
}

TEST(ConfigParse, Mode) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_MODE", "exact"}}).mode, Mode::exact);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_MODE", "off"}}).mode, Mode::off);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_MODE", "bounded"}}).mode, Mode::bounded);
    // Case and surrounding blanks are forgiven: they come from shell scripts and job files.
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_MODE", " EXACT "}}).mode, Mode::exact);
    const Config c = parsed(FakeEnv{{"OPTIREDUCE_MODE", "Off"}});
    EXPECT_EQ(value_of(c, "OPTIREDUCE_MODE").text, "off");
    EXPECT_EQ(value_of(c, "OPTIREDUCE_MODE").source, Source::environment);
}

TEST(ConfigParse, MinBytesPlainAndSuffixed) {
    auto min_bytes = [](const char *text) { return parsed(FakeEnv{{"OPTIREDUCE_MIN_BYTES", text}}).min_bytes; };
    EXPECT_EQ(min_bytes("0"), 0u);
    EXPECT_EQ(min_bytes("4096"), 4096u);
    EXPECT_EQ(min_bytes("64K"), 65536u);
    EXPECT_EQ(min_bytes("64k"), 65536u);
    EXPECT_EQ(min_bytes("64KiB"), 65536u);
    EXPECT_EQ(min_bytes("64KB"), 65536u);
    EXPECT_EQ(min_bytes("1M"), 1048576u);
    EXPECT_EQ(min_bytes("1MiB"), 1048576u);
    EXPECT_EQ(min_bytes("2g"), 2ull << 30);
    EXPECT_EQ(min_bytes("100b"), 100u);
    EXPECT_EQ(min_bytes(" 1M "), 1048576u);
}

// The normalised text is what the agreement hash sees, so spellings of one value must agree.
TEST(ConfigParse, ByteValuesAreNormalisedToPlainBytes) {
    const Config c = parsed(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "64K"}});
    EXPECT_EQ(value_of(c, "OPTIREDUCE_MIN_BYTES").text, "65536");
}

TEST(ConfigParse, SegmentBytesRangeEndsAreAccepted) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_SEGMENT_BYTES", "4K"}}).segment_bytes, 4096u);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_SEGMENT_BYTES", "64M"}}).segment_bytes, 64u << 20);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_SEGMENT_BYTES", "1M"}}).segment_bytes, 1u << 20);
}

TEST(ConfigParse, MinBytesUpperEndIsAccepted) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "1024G"}}).min_bytes, 1ull << 40);
}

TEST(ConfigParse, Provider) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", "tcp"}}).provider, "tcp");
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", "shm"}}).provider, "shm");
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", "TCP"}}).provider, "tcp");
    // Any libfabric name is accepted here; an unknown one fails later, at setup, collectively.
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", "doesnotexist"}}).provider, "doesnotexist");
}

TEST(ConfigParse, LogLevels) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_LOG", "error"}}).log, LogLevel::error);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_LOG", "warn"}}).log, LogLevel::warn);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_LOG", "info"}}).log, LogLevel::info);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_LOG", "DEBUG"}}).log, LogLevel::debug);
}

TEST(ConfigParse, StatsBooleanSpellings) {
    for (const char *yes : {"1", "yes", "true", "on", "TRUE"})
        EXPECT_TRUE(parsed(FakeEnv{{"OPTIREDUCE_STATS", yes}}).stats) << yes;
    for (const char *no : {"0", "no", "false", "off"})
        EXPECT_FALSE(parsed(FakeEnv{{"OPTIREDUCE_STATS", no}}).stats) << no;
}

TEST(ConfigParse, StatsFileIsKeptVerbatim) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_STATS_FILE", "/tmp/Run 1/stats.json"}}).stats_file, "/tmp/Run 1/stats.json");
}

TEST(ConfigParse, EnumNamesRoundTrip) {
    EXPECT_STREQ(to_string(Mode::bounded), "bounded");
    EXPECT_STREQ(to_string(Mode::exact), "exact");
    EXPECT_STREQ(to_string(Mode::off), "off");
    EXPECT_STREQ(to_string(LogLevel::error), "error");
    EXPECT_STREQ(to_string(LogLevel::warn), "warn");
    EXPECT_STREQ(to_string(LogLevel::info), "info");
    EXPECT_STREQ(to_string(LogLevel::debug), "debug");
}

// A typo must not be silently ignored: the library warns about every unknown OPTIREDUCE_ name.
TEST(ConfigUnknown, UnknownOptireduceVariablesAreReported) {
    FakeEnv env{{"OPTIREDUCE_MODEE", "exact"},
                {"OPTIREDUCE_MIN_BYTES", "0"},
                {"OPTIREDUCE_TIMEOUT", "5"},
                {"PATH", "/usr/bin"},
                {"OMPI_COMM_WORLD_RANK", "0"}};
    const ParseResult r = env.parse();
    ASSERT_TRUE(r.config.has_value());
    EXPECT_EQ(r.unknown, (std::vector<std::string>{"OPTIREDUCE_MODEE", "OPTIREDUCE_TIMEOUT"}));
}

// Fault-injection knobs are in the table (marked test only); the launcher's variable is not a
// knob but is not a typo either.
TEST(ConfigUnknown, TestAndLauncherVariablesAreNotReported) {
    FakeEnv env{{"OPTIREDUCE_FAULT_DROP", "0.1"}, {"OPTIREDUCE_LIB", "/x/liboptireduce.so"}};
    EXPECT_TRUE(env.parse().unknown.empty());
}

TEST(ConfigUnknown, EveryKnobNameIsKnown) {
    FakeEnv env;
    for (const auto &k : knob_table())
        if (*k.default_value) env.set(k.name, k.default_value);
    EXPECT_TRUE(env.parse().unknown.empty());
}

}  // namespace
}  // namespace optireduce

namespace optireduce {
namespace {
// The table advertises MIN_BYTES up to 1T, so the T suffix must parse and 1T must be in range.
TEST(ConfigParse, TebibyteSuffixParses) {
    const ParseResult r = testing_support::FakeEnv{{"OPTIREDUCE_MIN_BYTES", "1T"}}.parse();
    ASSERT_TRUE(r.config.has_value()) << (r.error ? r.error->message : "");
    EXPECT_EQ(r.config->min_bytes, 1024ull * 1024 * 1024 * 1024);
}
}  // namespace
}  // namespace optireduce

namespace optireduce {
namespace {
TEST(ConfigParse, NumbersParseAndSpellingsCanonicalise) {
    const ParseResult r = testing_support::FakeEnv{
        {"OPTIREDUCE_TARGET_LOSS", "0.010"},
        {"OPTIREDUCE_TIMEOUT_MS", "25"},
        {"OPTIREDUCE_FAULT_DELAY_RANK",
         "3"}}.parse();
    ASSERT_TRUE(r.config.has_value()) << (r.error ? r.error->message : "");
    EXPECT_DOUBLE_EQ(r.config->target_loss, 0.01);
    EXPECT_DOUBLE_EQ(r.config->timeout_ms, 25);
    EXPECT_EQ(r.config->fault_delay_rank, 3);
    EXPECT_EQ(r.config->fault_delay_prob, 1.0);
    for (const auto &v : r.config->values) {
        if (std::string(v.spec->name) == "OPTIREDUCE_TARGET_LOSS") {
            EXPECT_EQ(v.text, "0.01");
        }
    }
}

TEST(ConfigParse, NumbersOutOfRangeOrTrailingGarbageAreRejected) {
    for (const char *bad : {"0.6", "-0.1", "0.1x", "nan", "inf", ""}) {
        if (!*bad) continue;  // empty means "unset": the default
        const ParseResult r = testing_support::FakeEnv{{"OPTIREDUCE_TARGET_LOSS", bad}}.parse();
        ASSERT_TRUE(r.error.has_value()) << bad;
        EXPECT_NE(r.error->message.find("OPTIREDUCE_TARGET_LOSS"), std::string::npos);
    }
}

TEST(ConfigParse, TimeoutMinAboveMaxIsRejectedNamingBoth) {
    const ParseResult r =
        testing_support::FakeEnv{{"OPTIREDUCE_TIMEOUT_MIN_MS", "50"}, {"OPTIREDUCE_TIMEOUT_MAX_MS", "10"}}.parse();
    ASSERT_TRUE(r.error.has_value());
    EXPECT_NE(r.error->message.find("OPTIREDUCE_TIMEOUT_MIN_MS=50"), std::string::npos);
    EXPECT_NE(r.error->message.find("OPTIREDUCE_TIMEOUT_MAX_MS=10"), std::string::npos);
}
}  // namespace
}  // namespace optireduce

namespace optireduce {
namespace {

using testing_support::FakeEnv;
using testing_support::parsed;

TEST(ConfigParse, UdpOffloadSpellings) {
    struct Case {
        const char *text;
        bool gso, gro;
    };
    for (const Case &c :
         {Case{"auto", true, true}, Case{"GSO", true, false}, Case{"gro", false, true}, Case{"off", false, false}}) {
        SCOPED_TRACE(c.text);
        const Config cfg = parsed(FakeEnv{{"OPTIREDUCE_UDP_OFFLOAD", c.text}});
        EXPECT_EQ(cfg.udp_gso(), c.gso);
        EXPECT_EQ(cfg.udp_gro(), c.gro);
    }
}

// Every spelling of every enumeration reaches its own value.
TEST(ConfigParse, EverySpellingOfEveryEnumeration) {
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_HADAMARD", "on"}}).hadamard, Hadamard::on);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_HADAMARD", "off"}}).hadamard, Hadamard::off);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_HADAMARD", "auto"}}).hadamard, Hadamard::automatic);
    EXPECT_EQ(parsed(FakeEnv{}).hadamard, Hadamard::automatic);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_ON_EXCESS_LOSS", "warn"}}).on_excess_loss, ExcessLoss::warn);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_ON_EXCESS_LOSS", "error"}}).on_excess_loss, ExcessLoss::error);
    EXPECT_EQ(parsed(FakeEnv{{"OPTIREDUCE_ON_EXCESS_LOSS", "exact"}}).on_excess_loss, ExcessLoss::exact);
    EXPECT_EQ(parsed(FakeEnv{}).on_excess_loss, ExcessLoss::warn);
}

// Where each value lands, and the integer fields that numbers (not byte counts) fill.
TEST(ConfigParse, EveryKnobLandsInItsField) {
    const Config c = parsed(FakeEnv{{"OPTIREDUCE_IFACE", "eth0,eth1"},
                                    {"OPTIREDUCE_MTU", "1500"},
                                    {"OPTIREDUCE_TIMEOUT_MIN_MS", "2"},
                                    {"OPTIREDUCE_TIMEOUT_MAX_MS", "500"},
                                    {"OPTIREDUCE_STRAGGLER_MAX_MS", "250"},
                                    {"OPTIREDUCE_FAULT_DUPLICATE", "0.1"},
                                    {"OPTIREDUCE_FAULT_DELAY_MS", "100"},
                                    {"OPTIREDUCE_FAULT_SEED", "7K"},
                                    {"OPTIREDUCE_FAULT_ALLOC_RANK", "2"},
                                    {"OPTIREDUCE_FAULT_ALLOC_NTH", "3"},
                                    {"OPTIREDUCE_FAULT_SEND_RANK", "4"},
                                    {"OPTIREDUCE_FAULT_SEND_PROB", "0.5"},
                                    {"OPTIREDUCE_FAULT_EXIT_RANK", "5"},
                                    {"OPTIREDUCE_FAULT_DROP", "0.05"},
                                    {"OPTIREDUCE_DGRAM_PROVIDER", "EFA"},
                                    {"OPTIREDUCE_STATS", "yes"}});
    EXPECT_EQ(c.iface, "eth0,eth1");
    EXPECT_EQ(c.mtu, 1500u);
    EXPECT_DOUBLE_EQ(c.timeout_min_ms, 2);
    EXPECT_DOUBLE_EQ(c.timeout_max_ms, 500);
    EXPECT_DOUBLE_EQ(c.straggler_max_ms, 250);
    EXPECT_DOUBLE_EQ(c.fault_duplicate, 0.1);
    EXPECT_DOUBLE_EQ(c.fault_delay_ms, 100);
    EXPECT_EQ(c.fault_seed, 7168u);
    EXPECT_EQ(c.fault_alloc_rank, 2);
    EXPECT_EQ(c.fault_alloc_nth, 3u);
    EXPECT_EQ(c.fault_send_rank, 4);
    EXPECT_DOUBLE_EQ(c.fault_send_prob, 0.5);
    EXPECT_EQ(c.fault_exit_rank, 5);
    EXPECT_DOUBLE_EQ(c.fault_drop, 0.05);
    EXPECT_EQ(c.dgram_provider, "efa");
    EXPECT_TRUE(c.stats);
    const Config d = parsed(FakeEnv{});
    EXPECT_EQ(d.fault_alloc_rank, -1);
    EXPECT_EQ(d.fault_alloc_nth, 1u);
    EXPECT_EQ(d.fault_seed, 1u);
    EXPECT_EQ(d.mtu, 0u);
    EXPECT_EQ(d.dgram_provider, "auto");
}

// A blank (all spaces) provider is set, not unset: its text is empty, the provider the default.
TEST(ConfigParse, BlankProviderMeansAuto) {
    const Config c = parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", "  "}, {"OPTIREDUCE_DGRAM_PROVIDER", " "}});
    EXPECT_EQ(c.provider, "auto");
    EXPECT_EQ(c.dgram_provider, "auto");
    EXPECT_EQ(value_of(c, "OPTIREDUCE_PROVIDER").text, "");
    EXPECT_EQ(value_of(c, "OPTIREDUCE_PROVIDER").source, Source::environment);
}

}  // namespace
}  // namespace optireduce

namespace optireduce {
namespace {

// Code names a knob by the Config field its row stores into: each field finds its own row, and
// the parsed Config its value.
TEST(KnobTable, EachFieldFindsItsRow) {
    const Config c = testing_support::parsed(testing_support::FakeEnv{{"OPTIREDUCE_FAULT_SEED", "7"}});
    for (const auto &k : knob_table()) {
        SCOPED_TRACE(k.name);
        EXPECT_EQ(find_knob(k.field), &k);
        EXPECT_EQ(c.value_of(k.field).spec, &k);
    }
    EXPECT_EQ(c.value_of(&Config::fault_seed).source, Source::environment);
    EXPECT_EQ(c.value_of(&Config::fault_seed).text, "7");
    EXPECT_EQ(c.value_of(&Config::mode).source, Source::default_value);
    EXPECT_EQ(find_knob(KnobField{}), nullptr);
}

// The allowed text of an enumeration row is built from its spellings; these are what users read.
TEST(KnobTable, EnumerationsAllowTheirSpellings) {
    EXPECT_STREQ(find_knob(&Config::mode)->allowed, "bounded|exact|off");
    EXPECT_STREQ(find_knob(&Config::udp_offload)->allowed, "auto|gso|gro|off");
    EXPECT_STREQ(find_knob(&Config::hadamard)->allowed, "on|off|auto");
    EXPECT_STREQ(find_knob(&Config::on_excess_loss)->allowed, "warn|error|exact");
    EXPECT_STREQ(find_knob(&Config::log)->allowed, "error|warn|info|debug");
}

}  // namespace
}  // namespace optireduce
