// SPDX-License-Identifier: BSD-3-Clause
#include "common/json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace optireduce::tools {

void JsonWriter::field(std::string_view key, std::string_view v) {
    prefix(key);
    quoted(v);
}

void JsonWriter::field(std::string_view key, std::uint64_t v) {
    prefix(key);
    os_ << v;
}

void JsonWriter::field(std::string_view key, int v) {
    prefix(key);
    os_ << v;
}

void JsonWriter::field(std::string_view key, bool v) {
    prefix(key);
    os_ << (v ? "true" : "false");
}

void JsonWriter::field(std::string_view key, double v, const char *format) {
    prefix(key);
    if (!std::isfinite(v)) {
        os_ << "null";
        return;
    }
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    os_ << text;
}

void JsonWriter::null_field(std::string_view key) {
    prefix(key);
    os_ << "null";
}

void JsonWriter::value(std::string_view v) {
    prefix({});
    quoted(v);
}

void JsonWriter::open(std::string_view key, char bracket) {
    prefix(key);
    os_ << bracket;
    first_.push_back(true);
}

void JsonWriter::close(char bracket) {
    first_.pop_back();
    os_ << bracket;
    if (first_.empty()) os_ << '\n';
}

void JsonWriter::prefix(std::string_view key) {
    if (first_.empty()) return;
    if (!first_.back()) os_ << ',';
    first_.back() = false;
    if (!key.empty()) {
        quoted(key);
        os_ << ':';
    }
}

void JsonWriter::quoted(std::string_view s) {
    os_ << '"';
    for (const unsigned char c : s) {
        if (c == '"' || c == '\\') {
            os_ << '\\' << c;
        } else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            os_ << esc;
        } else {
            os_ << c;
        }
    }
    os_ << '"';
}

}  // namespace optireduce::tools
