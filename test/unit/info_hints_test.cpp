// SPDX-License-Identifier: BSD-3-Clause
// Per-communicator hints accept exactly what their variables accept, say what is wrong in the
// variable's terms, and compare equal across ranks whenever they mean the same.
#include "config/info_hints.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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
            EXPECT_EQ(find_knob(h.knob->name), h.knob);
        }
        EXPECT_STREQ(hint_knob(h).name, h.knob ? h.knob->name : "optireduce");
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

// ---- docs/configuration.md, "Per-communicator hints": the table users read matches the code ----

#ifndef OPTIREDUCE_SOURCE_DIR
#error "OPTIREDUCE_SOURCE_DIR must name the source tree (test/unit/CMakeLists.txt sets it)"
#endif

constexpr const char *kDocPath = OPTIREDUCE_SOURCE_DIR "/docs/configuration.md";

std::string read_doc() {
    std::ifstream in(kDocPath);
    if (!in) throw std::runtime_error(std::string("cannot read ") + kDocPath);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

// The text of the "## Per-communicator hints" section, up to the next "## " heading.
std::string hints_section(const std::string &doc) {
    const std::string heading = "\n## Per-communicator hints\n";
    const std::size_t begin = doc.find(heading);
    if (begin == std::string::npos) throw std::runtime_error("no '## Per-communicator hints' section");
    const std::size_t end = doc.find("\n## ", begin + heading.size());
    return doc.substr(begin + 1, end == std::string::npos ? std::string::npos : end - begin - 1);
}

std::string trim(std::string s) {
    const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
    while (!s.empty() && space(s.back())) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && space(s[i])) ++i;
    return s.substr(i);
}

// The cells of a markdown table row, "\\|" kept as a literal bar, trimmed.
std::vector<std::string> cells(const std::string &row) {
    std::vector<std::string> out;
    std::string cell;
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
            cell += '|';
            ++i;
        } else if (row[i] == '|') {
            out.push_back(trim(cell));
            cell.clear();
        } else {
            cell += row[i];
        }
    }
    out.push_back(trim(cell));
    // A row starts and ends with a bar: drop the empty cells outside them.
    if (!out.empty() && out.front().empty()) out.erase(out.begin());
    if (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

std::string without(std::string s, const std::string &what) {
    for (std::size_t at; (at = s.find(what)) != std::string::npos;) s.erase(at, what.size());
    return s;
}

std::string without_space(std::string s) {
    std::erase_if(s, [](unsigned char c) { return std::isspace(c) != 0; });
    return s;
}

struct DocHint {
    std::string key, values, overrides;  // the cells as written (backticks and all)
};

// The rows of the table whose header starts "| Key | Values | Overrides |".
std::vector<DocHint> documented_hints(const std::string &section) {
    std::istringstream lines(section);
    std::string line;
    while (std::getline(lines, line) && line.rfind("| Key | Values | Overrides |", 0) != 0) {
    }
    if (!lines) throw std::runtime_error("no '| Key | Values | Overrides |' table in the hints section");
    std::getline(lines, line);  // |---|---|...
    std::vector<DocHint> out;
    while (std::getline(lines, line) && line.rfind("|", 0) == 0) {
        const std::vector<std::string> c = cells(line);
        if (c.size() < 3) throw std::runtime_error("short row in the hint table: " + line);
        out.push_back({c[0], c[1], c[2]});
    }
    return out;
}

std::string unquoted(const std::string &cell) { return without(cell, "`"); }

// The table is hand-written: install.config_doc checks only the generated block of knobs.
TEST(InfoHintsDoc, TableIsOutsideTheGeneratedBlock) {
    const std::string doc = read_doc();
    const std::size_t section = doc.find("\n## Per-communicator hints\n");
    const std::size_t begin = doc.find("<!-- BEGIN GENERATED -->"), end = doc.find("<!-- END GENERATED -->");
    ASSERT_NE(section, std::string::npos) << kDocPath;
    ASSERT_NE(begin, std::string::npos);
    ASSERT_NE(end, std::string::npos);
    EXPECT_TRUE(section < begin || section > end) << "the hints section moved into the generated block";
}

// Same keys, same order (hint_table() is "in documentation order").
TEST(InfoHintsDoc, DocumentedKeysAreExactlyTheCodesKeys) {
    std::vector<std::string> doc_keys, code_keys;
    for (const DocHint &d : documented_hints(hints_section(read_doc()))) doc_keys.push_back(unquoted(d.key));
    for (const HintSpec &h : hint_table()) code_keys.push_back(h.key);
    EXPECT_EQ(doc_keys, code_keys) << "docs/configuration.md, table of per-communicator hints, vs hint_table()";
}

// Each row names the variable the hint stands in for and that variable's allowed values (the
// switch: its own on|off, and which one is the default).
TEST(InfoHintsDoc, EachRowStatesTheCodesKnobAndRange) {
    for (const DocHint &d : documented_hints(hints_section(read_doc()))) {
        const std::string key = unquoted(d.key);
        SCOPED_TRACE("doc row " + d.key);
        const HintSpec *spec = nullptr;
        for (const HintSpec &h : hint_table())
            if (key == h.key) spec = &h;
        if (!spec) {
            ADD_FAILURE() << "documented hint '" << key << "' is not in hint_table()";
            continue;
        }
        const KnobSpec &k = hint_knob(*spec);
        if (spec->knob) {
            EXPECT_EQ(d.overrides, "`" + std::string(spec->knob->name) + "`") << "Overrides column";
        } else {
            EXPECT_EQ(find_knob(unquoted(d.overrides)), nullptr)
                << "the switch stands in for no variable, but its row names " << d.overrides;
        }
        EXPECT_EQ(without_space(without(unquoted(d.values), "(default)")), without_space(k.allowed))
            << "Values column '" << d.values << "' vs allowed '" << k.allowed << "'";
        // "`on` (default)": the value marked default is the code's default.
        const std::size_t mark = d.values.find("(default)");
        if (mark != std::string::npos) {
            const std::size_t close = d.values.rfind('`', mark);
            const std::size_t open =
                close == std::string::npos || close == 0 ? std::string::npos : d.values.rfind('`', close - 1);
            ASSERT_NE(open, std::string::npos) << "'(default)' follows no `value`";
            EXPECT_EQ(d.values.substr(open + 1, close - open - 1), k.default_value) << "default";
        }
    }
}

// Behaviour, not only the table: parse_hints reads every documented key (its default value is
// accepted and kept, a bogus value is rejected naming the key), and a key the doc does not list
// is not read.
TEST(InfoHintsDoc, CodeAcceptsEveryDocumentedKeyAndNoOther) {
    for (const DocHint &d : documented_hints(hints_section(read_doc()))) {
        const std::string key = unquoted(d.key);
        SCOPED_TRACE("doc row " + d.key);
        EXPECT_FALSE(is_unknown_hint(key)) << "the code calls it a misspelt hint";
        const HintSpec *spec = nullptr;
        for (const HintSpec &h : hint_table())
            if (key == h.key) spec = &h;
        const std::string value = spec ? hint_knob(*spec).default_value : "0";
        const HintParse good = parse({{key, value}});
        EXPECT_FALSE(good.error) << good.error->message;
        EXPECT_NE(good.hints.describe().find(key + "="), std::string::npos)
            << "parse_hints ignored " << key << "=" << value << ": " << good.hints.describe();
        const HintParse bad = parse({{key, "bogus!"}});
        ASSERT_TRUE(bad.error) << key << "=bogus! was not checked";
        EXPECT_NE(bad.error->message.find(key), std::string::npos) << bad.error->message;
    }
    // Close to a real key, and a variable's name in hint form: neither is a hint.
    for (const char *key : {"optireduce_mode", "optireduce_timeout", "OPTIREDUCE_TIMEOUT_MS"}) {
        SCOPED_TRACE(key);
        const HintParse r = parse({{key, "bogus!"}});
        EXPECT_FALSE(r.error) << r.error->message;
        EXPECT_EQ(r.hints.describe(), "none");
    }
    EXPECT_TRUE(is_unknown_hint("optireduce_mode"));
}

// The example and the messages quoted around the table name only real keys
// (optireduce_comm_enable(...) is a function, not a key).
TEST(InfoHintsDoc, ProseNamesOnlyRealKeys) {
    const std::string section = hints_section(read_doc());
    // Words optireduce_[a-z0-9_]+ not followed by "(". Scanned by hand: std::regex trips GCC 12's
    // -Wmaybe-uninitialized inside std::function under -fsanitize=address, and CI builds with
    // -Werror.
    const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::size_t seen = 0;
    for (std::size_t at = section.find("optireduce_"); at != std::string::npos;
         at = section.find("optireduce_", at + 1)) {
        if (at > 0 && word_char(section[at - 1])) continue;
        std::size_t end = at;
        while (end < section.size() && word_char(section[end])) ++end;
        if (end < section.size() && section[end] == '(') continue;
        const std::string key = section.substr(at, end - at);
        ++seen;
        EXPECT_FALSE(is_unknown_hint(key))
            << "docs/configuration.md names hint '" << key << "', which the code does not accept";
    }
    EXPECT_GE(seen, hint_table().size() - 1);  // the table alone names every key but the switch
}

}  // namespace
}  // namespace optireduce
