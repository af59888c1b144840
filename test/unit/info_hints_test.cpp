// Per-communicator hints accept exactly what their variables accept, say what is wrong in the
// variable's terms, and compare equal across ranks whenever they mean the same.
#include "config/info_hints.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace optireduce {
namespace {

// An MPI_Info object as parse_hints sees it.
HintParse parse(const std::map<std::string, std::string> &info, CommHints base = {}) {
    return parse_hints(
        [&](const char *key) -> std::optional<std::string> {
            auto it = info.find(key);
            if (it == info.end()) return std::nullopt;
            return it->second;
        },
        std::move(base));
}

TEST(InfoHints, EveryHintStandsInForAKnob) {
    for (const HintSpec &h : hint_table()) {
        SCOPED_TRACE(h.key);
        if (h.knob) {
            EXPECT_NE(find_knob(h.knob), nullptr);
        }
        EXPECT_STREQ(hint_knob(h).name, h.knob ? h.knob : "optireduce");
    }
}

TEST(InfoHints, ValuesParseLikeTheirVariables) {
    const HintParse r = parse({{"optireduce_min_bytes", "1M"},
                               {"optireduce_timeout_ms", " 5 "},
                               {"optireduce_target_loss", "0.010"},
                               {"optireduce_max_loss", "0.5"},
                               {"optireduce", "OFF"}});
    ASSERT_FALSE(r.error) << r.error->message;
    EXPECT_EQ(r.hints.min_bytes(), 1048576u);
    EXPECT_EQ(r.hints.timeout_ms(), 5.0);
    EXPECT_EQ(r.hints.target_loss(), 0.01);
    EXPECT_EQ(r.hints.max_loss(), 0.5);
    EXPECT_FALSE(r.hints.enabled());
}

TEST(InfoHints, UnsetHintsLeaveTheVariables) {
    const HintParse r = parse({{"some_other_key", "x"}});
    ASSERT_FALSE(r.error);
    EXPECT_TRUE(r.hints.enabled());
    EXPECT_FALSE(r.hints.min_bytes());
    EXPECT_FALSE(r.hints.timeout_ms());
    EXPECT_FALSE(r.hints.target_loss());
    EXPECT_FALSE(r.hints.max_loss());
    EXPECT_EQ(r.hints.describe(), "none");
}

// MPI_Comm_set_info: keys the new info object lacks keep what the communicator had.
TEST(InfoHints, LaterHintsMergeOntoEarlierOnes) {
    const HintParse first = parse({{"optireduce_min_bytes", "4K"}, {"optireduce", "off"}});
    ASSERT_FALSE(first.error);
    const HintParse second = parse({{"optireduce", "on"}}, first.hints);
    ASSERT_FALSE(second.error);
    EXPECT_TRUE(second.hints.enabled());
    EXPECT_EQ(second.hints.min_bytes(), 4096u);
}

void expect_rejected(const std::string &key, const std::string &value, const std::string &allowed) {
    SCOPED_TRACE(key + "=" + value);
    const HintParse r = parse({{key, value}});
    ASSERT_TRUE(r.error) << "accepted";
    const std::string &msg = r.error->message;
    EXPECT_NE(msg.find(key), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + value + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(allowed), std::string::npos) << msg;
}

TEST(InfoHints, InvalidValuesNameTheHintAndTheRange) {
    expect_rejected("optireduce", "maybe", "on|off");
    expect_rejected("optireduce_min_bytes", "lots", "0..1T");
    expect_rejected("optireduce_min_bytes", "2T", "0..1T");
    expect_rejected("optireduce_timeout_ms", "-1", "0..600000");
    expect_rejected("optireduce_timeout_ms", "", "0..600000");
    expect_rejected("optireduce_target_loss", "0.9", "0..0.5");
    expect_rejected("optireduce_max_loss", "2", "0..1");
    EXPECT_NE(parse({{"optireduce_max_loss", "2"}}).error->message.find("OPTIREDUCE_MAX_LOSS"), std::string::npos);
}

TEST(InfoHints, AgreementComparesMeaningNotSpelling) {
    const auto hashes = [](const std::map<std::string, std::string> &info) {
        const HintParse r = parse(info);
        EXPECT_FALSE(r.error);
        return r.hints.agreement_hashes();
    };
    EXPECT_EQ(hashes({}), hashes({{"optireduce", "on"}}));
    EXPECT_EQ(hashes({{"optireduce_max_loss", "0.10"}}), hashes({{"optireduce_max_loss", "0.1"}}));
    EXPECT_EQ(hashes({{"optireduce_min_bytes", "64K"}}), hashes({{"optireduce_min_bytes", "65536"}}));
    EXPECT_NE(hashes({}), hashes({{"optireduce", "off"}}));
    EXPECT_NE(hashes({}), hashes({{"optireduce_min_bytes", "0"}}));
    // One hash per key, so that the differing hint can be named.
    const auto a = hashes({{"optireduce_timeout_ms", "5"}}), b = hashes({{"optireduce_timeout_ms", "6"}});
    ASSERT_EQ(a.size(), hint_table().size());
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(a[i] == b[i], std::string(hint_table()[i].key) != "optireduce_timeout_ms");
}

TEST(InfoHints, MisspeltHintsAreRecognised) {
    EXPECT_TRUE(is_unknown_hint("optireduce_timout_ms"));
    EXPECT_TRUE(is_unknown_hint("optireduce_mode"));
    EXPECT_FALSE(is_unknown_hint("optireduce_timeout_ms"));
    EXPECT_FALSE(is_unknown_hint("optireduce"));
    EXPECT_FALSE(is_unknown_hint("mpi_assert_no_any_tag"));
}

}  // namespace
}  // namespace optireduce
