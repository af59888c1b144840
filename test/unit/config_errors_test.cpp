// SPDX-License-Identifier: BSD-3-Clause
// An invalid value stops the job at MPI_Init, so the message is all the user gets: it must name
// the variable, repeat the value they wrote and say what is allowed.
#include "config/config.hpp"
#include "fake_env.hpp"

#include <gtest/gtest.h>

#include <string>

namespace optireduce {
namespace {

using testing_support::FakeEnv;

const KnobSpec &spec(const std::string &name) {
    for (const auto &k : knob_table())
        if (name == k.name) return k;
    throw std::runtime_error("no knob " + name);
}

// Parses one bad variable and checks the message names variable, value and allowed values.
void expect_rejected(const std::string &name, const std::string &value) {
    SCOPED_TRACE(name + "=" + value);
    const ParseResult r = FakeEnv{{name, value}}.parse();
    ASSERT_TRUE(r.error.has_value()) << "accepted";
    EXPECT_FALSE(r.config.has_value());
    const std::string &msg = r.error->message;
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    EXPECT_NE(msg.find(value), std::string::npos) << msg;
    EXPECT_NE(msg.find(spec(name).allowed), std::string::npos) << msg;
}

TEST(ConfigErrors, KernelChannelKnobs) {
    expect_rejected("OPTIREDUCE_MTU", "100");    // below IPv4's minimum
    expect_rejected("OPTIREDUCE_MTU", "10000");  // above a jumbo frame
    expect_rejected("OPTIREDUCE_MTU", "jumbo");
    expect_rejected("OPTIREDUCE_UDP_OFFLOAD", "on");
    EXPECT_FALSE((FakeEnv{{"OPTIREDUCE_MTU", "576"}}.parse().error));
    EXPECT_FALSE((FakeEnv{{"OPTIREDUCE_MTU", "0"}}.parse().error));
}

TEST(ConfigErrors, ModeNotInEnumeration) {
    expect_rejected("OPTIREDUCE_MODE", "fast");
    expect_rejected("OPTIREDUCE_MODE", "exactly");
    expect_rejected("OPTIREDUCE_MODE", "bounded|exact");
    const ParseResult r = FakeEnv{{"OPTIREDUCE_MODE", "fast"}}.parse();
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->message.find("bounded|exact|off"), std::string::npos);
}

TEST(ConfigErrors, LogNotInEnumeration) {
    expect_rejected("OPTIREDUCE_LOG", "verbose");
    expect_rejected("OPTIREDUCE_LOG", "3");
}

TEST(ConfigErrors, StatsNotABoolean) {
    expect_rejected("OPTIREDUCE_STATS", "2");
    expect_rejected("OPTIREDUCE_STATS", "maybe");
}

TEST(ConfigErrors, BytesNotANumber) {
    expect_rejected("OPTIREDUCE_MIN_BYTES", "abc");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "K");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "12X");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "1.5M");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "-1");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "64 K");
    expect_rejected("OPTIREDUCE_SEGMENT_BYTES", "big");
}

TEST(ConfigErrors, BytesOverflow) {
    expect_rejected("OPTIREDUCE_MIN_BYTES", "99999999999999999999");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "18446744073709551615G");
}

TEST(ConfigErrors, BytesOutOfRange) {
    expect_rejected("OPTIREDUCE_SEGMENT_BYTES", "4095");
    expect_rejected("OPTIREDUCE_SEGMENT_BYTES", "0");
    expect_rejected("OPTIREDUCE_SEGMENT_BYTES", "65537K");
    expect_rejected("OPTIREDUCE_SEGMENT_BYTES", "1G");
    expect_rejected("OPTIREDUCE_MIN_BYTES", "1025G");
}

TEST(ConfigErrors, HadamardBlockMustBeAPowerOfTwoInRange) {
    expect_rejected("OPTIREDUCE_HADAMARD_BLOCK", "128");
    expect_rejected("OPTIREDUCE_HADAMARD_BLOCK", "2M");
    const ParseResult r = FakeEnv{{"OPTIREDUCE_HADAMARD_BLOCK", "3000"}}.parse();
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->message.find("not a power of two"), std::string::npos) << r.error->message;
    const ParseResult ok = FakeEnv{
        {"OPTIREDUCE_HADAMARD_BLOCK", "8K"},
        {"OPTIREDUCE_HADAMARD", "ON"},
        {"OPTIREDUCE_ON_EXCESS_LOSS", "Exact"},
        {"OPTIREDUCE_MAX_LOSS",
         "0.25"}}.parse();
    ASSERT_TRUE(ok.config);
    EXPECT_EQ(ok.config->hadamard_block, 8192u);
    EXPECT_EQ(ok.config->hadamard, Hadamard::on);
    EXPECT_EQ(ok.config->on_excess_loss, ExcessLoss::exact);
    EXPECT_DOUBLE_EQ(ok.config->max_loss, 0.25);
    expect_rejected("OPTIREDUCE_MAX_LOSS", "1.5");
}

// The first bad knob is reported even when valid ones surround it.
TEST(ConfigErrors, ErrorWinsOverOtherValidKnobs) {
    const ParseResult r =
        FakeEnv{{"OPTIREDUCE_MODE", "exact"}, {"OPTIREDUCE_MIN_BYTES", "abc"}, {"OPTIREDUCE_LOG", "info"}}.parse();
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->message.find("OPTIREDUCE_MIN_BYTES"), std::string::npos);
}

// Every enumeration and boolean knob rejects a value, so no knob lacks an error path.
TEST(ConfigErrors, EveryValidatedKnobRejectsGarbage) {
    for (const auto &k : knob_table()) {
        // Free text (a path, a provider name) is checked where it is used, not parsed.
        if (k.type == KnobType::string || k.type == KnobType::identifier) continue;
        expect_rejected(k.name, "no-such-value");
    }
}

}  // namespace
}  // namespace optireduce

namespace optireduce {
namespace {

using testing_support::FakeEnv;

std::string error_of(const FakeEnv &env) {
    const ParseResult r = env.parse();
    return r.error ? r.error->message : "(accepted)";
}

// The checks beyond one row's range say what to set, in these words (users grep for them).
TEST(ConfigErrors, ChecksBeyondTheRangeKeepTheirMessages) {
    EXPECT_EQ(error_of(FakeEnv{{"OPTIREDUCE_MTU", "100"}}),
              "OPTIREDUCE_MTU=100 is below 576, the smallest MTU IPv4 allows. Allowed: 0, or 576..9000 "
              "(0: the path MTU).");
    EXPECT_EQ(error_of(FakeEnv{{"OPTIREDUCE_TIMEOUT_MIN_MS", "50"}, {"OPTIREDUCE_TIMEOUT_MAX_MS", "10"}}),
              "OPTIREDUCE_TIMEOUT_MIN_MS=50 is above OPTIREDUCE_TIMEOUT_MAX_MS=10. Set the minimum at or "
              "below the maximum.");
    EXPECT_EQ(error_of(FakeEnv{{"OPTIREDUCE_HADAMARD_BLOCK", "3000"}}),
              "OPTIREDUCE_HADAMARD_BLOCK=3000 is not a power of two. Use one of 256, 512, ... 1048576 "
              "(elements).");
    // Equal ends are allowed; the first failing check wins, in table order.
    EXPECT_EQ(error_of(FakeEnv{{"OPTIREDUCE_TIMEOUT_MIN_MS", "7"}, {"OPTIREDUCE_TIMEOUT_MAX_MS", "7"}}), "(accepted)");
    EXPECT_EQ(
        error_of(FakeEnv{{"OPTIREDUCE_MTU", "100"}, {"OPTIREDUCE_HADAMARD_BLOCK", "3000"}}).rfind("OPTIREDUCE_MTU=", 0),
        0u);
    EXPECT_EQ(error_of(FakeEnv{{"OPTIREDUCE_MODE", "fast"}, {"OPTIREDUCE_MTU", "100"}}),
              "OPTIREDUCE_MODE='fast' is invalid: not one of the allowed values; allowed: bounded|exact|off "
              "(default bounded). Fix or unset the variable.");
}

}  // namespace
}  // namespace optireduce
