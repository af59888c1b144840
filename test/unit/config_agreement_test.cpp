// SPDX-License-Identifier: BSD-3-Clause
// Ranks compare agreement_hashes() at communicator setup and fall back when they differ. A
// must-agree knob missing from the hash lets ranks disagree on eligibility (deadlock); a
// rank-local knob inside it makes jobs fall back for nothing (e.g. OPTIREDUCE_LOG on one rank).
#include "config/config.hpp"
#include "fake_env.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace optireduce {
namespace {

using testing_support::FakeEnv;
using testing_support::parsed;

std::vector<std::uint64_t> hashes(const FakeEnv &env) { return parsed(env).agreement_hashes(); }

// A second valid value per knob, different from its default.
const std::map<std::string, std::string> kOtherValue{
    {"OPTIREDUCE_MODE", "exact"},
    {"OPTIREDUCE_MIN_BYTES", "4096"},
    {"OPTIREDUCE_DEVICE", "passthrough"},
    {"OPTIREDUCE_CODEC", "int8"},
    {"OPTIREDUCE_PROVIDER", "tcp"},
    {"OPTIREDUCE_SEGMENT_BYTES", "1M"},
    {"OPTIREDUCE_LOG", "debug"},
    {"OPTIREDUCE_LOG_LIMIT", "0"},
    {"OPTIREDUCE_STATS", "1"},
    {"OPTIREDUCE_STATS_FILE", "/tmp/s.json"},
    {"OPTIREDUCE_DGRAM_PROVIDER", "efa"},
    {"OPTIREDUCE_TARGET_LOSS", "0.01"},
    {"OPTIREDUCE_TIMEOUT_MIN_MS", "2"},
    {"OPTIREDUCE_TIMEOUT_MAX_MS", "500"},
    {"OPTIREDUCE_TIMEOUT_MS", "20"},
    {"OPTIREDUCE_STRAGGLER_MAX_MS", "250"},
    {"OPTIREDUCE_VOTE_TIMEOUT_MS", "5000"},
    {"OPTIREDUCE_FAULT_DROP", "0.05"},
    {"OPTIREDUCE_FAULT_DUPLICATE", "0.1"},
    {"OPTIREDUCE_FAULT_DELAY_RANK", "1"},
    {"OPTIREDUCE_FAULT_DELAY_MS", "100"},
    {"OPTIREDUCE_FAULT_DELAY_PROB", "0.2"},
    {"OPTIREDUCE_FAULT_VOTE_DELAY_MS", "300"},
    {"OPTIREDUCE_FAULT_SEED", "7"},
    {"OPTIREDUCE_HADAMARD", "off"},
    {"OPTIREDUCE_FAULT_ALLOC_RANK", "1"},
    {"OPTIREDUCE_FAULT_ALLOC_NTH", "3"},
    {"OPTIREDUCE_FAULT_SEND_RANK", "1"},
    {"OPTIREDUCE_FAULT_SEND_PROB", "0.5"},
    {"OPTIREDUCE_FAULT_EXIT_RANK", "1"},
    {"OPTIREDUCE_HADAMARD_BLOCK", "1024"},
    {"OPTIREDUCE_MAX_LOSS", "0.2"},
    {"OPTIREDUCE_IDENTICAL_REPLICAS", "0"},
    {"OPTIREDUCE_CARRY", "1"},
    {"OPTIREDUCE_CARRY_MAX_MB", "64"},
    {"OPTIREDUCE_CARRY_IDLE_CALLS", "10"},
    {"OPTIREDUCE_SCATTER_REPAIR", "0"},
    {"OPTIREDUCE_ON_EXCESS_LOSS", "exact"},
    {"OPTIREDUCE_IFACE", "eth0"},
    {"OPTIREDUCE_MTU", "1500"},
    {"OPTIREDUCE_UDP_OFFLOAD", "off"},
};

TEST(Agreement, ExactlyTheCrossRankKnobsMustAgree) {
    std::vector<std::string> names;
    for (const char *n : Config::agreement_names()) names.emplace_back(n);
    EXPECT_EQ(names, (std::vector<std::string>{"OPTIREDUCE_MODE", "OPTIREDUCE_MIN_BYTES", "OPTIREDUCE_DEVICE",
                                               "OPTIREDUCE_PROVIDER", "OPTIREDUCE_SEGMENT_BYTES",
                                               "OPTIREDUCE_DGRAM_PROVIDER", "OPTIREDUCE_HADAMARD",
                                               "OPTIREDUCE_HADAMARD_BLOCK", "OPTIREDUCE_IDENTICAL_REPLICAS",
                                               "OPTIREDUCE_CARRY", "OPTIREDUCE_CODEC", "OPTIREDUCE_ON_EXCESS_LOSS"}));
    EXPECT_EQ(parsed(FakeEnv{}).agreement_hashes().size(), names.size());
}

TEST(Agreement, EveryKnobHasAnAlternativeValueInThisTest) {
    for (const auto &k : knob_table()) EXPECT_TRUE(kOtherValue.count(k.name)) << k.name;
}

// Hashes differ iff a must-agree value differs, and the differing slot names the knob.
TEST(Agreement, HashesDifferExactlyWhenAMustAgreeValueDiffers) {
    const auto base = hashes(FakeEnv{});
    const auto names = Config::agreement_names();
    for (const auto &k : knob_table()) {
        SCOPED_TRACE(k.name);
        const auto changed = hashes(FakeEnv{{k.name, kOtherValue.at(k.name)}});
        ASSERT_EQ(changed.size(), base.size());
        for (std::size_t i = 0; i < base.size(); ++i) {
            const bool this_knob = std::string(names[i]) == k.name;
            if (this_knob) {
                EXPECT_NE(changed[i], base[i]);
            } else {
                EXPECT_EQ(changed[i], base[i]) << "slot " << names[i] << " moved";
            }
        }
    }
}

TEST(Agreement, HashesAreDeterministic) {
    const FakeEnv env{{"OPTIREDUCE_MODE", "exact"}, {"OPTIREDUCE_MIN_BYTES", "0"}};
    EXPECT_EQ(hashes(env), hashes(env));
}

// Ranks that wrote the same value differently (defaults spelled out, suffixes, case) must
// agree, or a job falls back because one launcher script wrote 64K and another 65536.
TEST(Agreement, SpellingsOfTheSameValueAgree) {
    const auto base = hashes(FakeEnv{});
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "64K"}}), base);
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "65536"}}), base);
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_MODE", "BOUNDED"}}), base);
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_SEGMENT_BYTES", "4M"}}), base);
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_PROVIDER", "auto"}}), base);
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_DGRAM_PROVIDER", "AUTO"}}), base);
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_DGRAM_PROVIDER", "UDP"}}),
              hashes(FakeEnv{{"OPTIREDUCE_DGRAM_PROVIDER", "udp"}}));
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "1M"}}), hashes(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "1048576"}}));
}

// Config.provider is lower-cased, so two ranks asking for TCP and tcp mean the same provider.
TEST(Agreement, ProviderSpellingsThatMeanTheSameProviderAgree) {
    EXPECT_EQ(hashes(FakeEnv{{"OPTIREDUCE_PROVIDER", "TCP"}}), hashes(FakeEnv{{"OPTIREDUCE_PROVIDER", "tcp"}}));
}

TEST(Agreement, DifferentMustAgreeValuesDiffer) {
    EXPECT_NE(hashes(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "0"}}), hashes(FakeEnv{{"OPTIREDUCE_MIN_BYTES", "4096"}}));
    EXPECT_NE(hashes(FakeEnv{{"OPTIREDUCE_MODE", "exact"}}), hashes(FakeEnv{{"OPTIREDUCE_MODE", "off"}}));
    EXPECT_NE(hashes(FakeEnv{{"OPTIREDUCE_PROVIDER", "shm"}}), hashes(FakeEnv{{"OPTIREDUCE_PROVIDER", "tcp"}}));
}

// A '|' inside a Markdown table cell must be escaped, or it splits the cell.
TEST(ConfigDocs, TableCellsEscapeTheBar) {
    EXPECT_EQ(markdown_cell("bounded|exact|off"), "bounded\\|exact\\|off");
    EXPECT_EQ(markdown_cell("||"), "\\|\\|");
    EXPECT_EQ(markdown_cell("no bar"), "no bar");
}

// docs/configuration.md is generated from this text: every knob, default and range must be in it.
TEST(ConfigDocs, MarkdownListsEveryKnob) {
    const std::string md = configuration_markdown();
    for (const auto &k : knob_table()) {
        EXPECT_NE(md.find(std::string("`") + k.name + "`"), std::string::npos) << k.name;
        EXPECT_NE(md.find(markdown_cell(k.allowed)), std::string::npos) << k.name;
        if (*k.default_value) {
            EXPECT_NE(md.find(std::string("`") + k.default_value + "`"), std::string::npos) << k.name;
        }
    }
}

TEST(ConfigDocs, EveryKnobIsDocumented) {
    for (const auto &k : knob_table()) {
        EXPECT_TRUE(std::string(k.name).starts_with("OPTIREDUCE_")) << k.name;
        EXPECT_GT(std::string(k.doc).size(), 20u) << k.name << " has no real description";
    }
}

}  // namespace
}  // namespace optireduce
