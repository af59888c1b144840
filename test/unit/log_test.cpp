// SPDX-License-Identifier: BSD-3-Clause
// OPTIREDUCE_LOG_LIMIT: the log stops after the limit with one line saying so, and 0 lifts it.
#include "telemetry/log.hpp"
#include "config/config.hpp"
#include "fake_env.hpp"

#include <gtest/gtest.h>

#include <string>

namespace optireduce {
namespace {

int lines(const std::string &s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

TEST(Log, StopsAtTheLimitWithOneLineThatNamesTheKnob) {
    log_configure(LogLevel::debug, 3, 2);
    testing::internal::CaptureStderr();
    for (int i = 0; i < 5; ++i) log_message(LogLevel::debug, "message %d", i);
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              "optireduce[3] debug: message 0\n"
              "optireduce[3] debug: message 1\n"
              "optireduce[3] debug: further messages suppressed (limit 2: OPTIREDUCE_LOG_LIMIT)\n");
}

TEST(Log, ZeroMeansNoLimitAndTheDefaultIsTheKnobs) {
    log_configure(LogLevel::debug, 0, 0);
    testing::internal::CaptureStderr();
    for (int i = 0; i < 1000; ++i) log_message(LogLevel::debug, "message %d", i);
    EXPECT_EQ(lines(testing::internal::GetCapturedStderr()), 1000);

    log_configure(LogLevel::debug, 0, testing_support::parsed(testing_support::FakeEnv{}).log_limit);
    testing::internal::CaptureStderr();
    for (int i = 0; i < 1000; ++i) log_message(LogLevel::debug, "message %d", i);
    EXPECT_EQ(lines(testing::internal::GetCapturedStderr()), 201);  // 200 and the line saying so
}

}  // namespace
}  // namespace optireduce
