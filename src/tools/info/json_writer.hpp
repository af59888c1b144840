// Just enough JSON for optireduce-info: objects, arrays, strings, numbers, booleans, with the
// commas and escaping handled in one place.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string_view>
#include <vector>

namespace optireduce::info {

class JsonWriter {
public:
    explicit JsonWriter(std::ostream &os) : os_(os) {}

    // Pass a key inside objects, none inside arrays or at the top level.
    void begin_object(std::string_view key = {}) { open(key, '{'); }
    void end_object() { close('}'); }
    void begin_array(std::string_view key) { open(key, '['); }
    void end_array() { close(']'); }

    void field(std::string_view key, std::string_view v) { prefix(key); quoted(v); }
    void field(std::string_view key, const char *v) { field(key, std::string_view(v)); }
    void field(std::string_view key, std::uint64_t v) { prefix(key); os_ << v; }
    void field(std::string_view key, int v) { prefix(key); os_ << v; }
    void field(std::string_view key, bool v) { prefix(key); os_ << (v ? "true" : "false"); }
    void null_field(std::string_view key) { prefix(key); os_ << "null"; }
    void value(std::string_view v) { prefix({}); quoted(v); }

private:
    void open(std::string_view key, char bracket) {
        prefix(key);
        os_ << bracket;
        first_.push_back(true);
    }
    void close(char bracket) {
        first_.pop_back();
        os_ << bracket;
        if (first_.empty()) os_ << '\n';
    }
    void prefix(std::string_view key) {
        if (first_.empty()) return;
        if (!first_.back()) os_ << ',';
        first_.back() = false;
        if (!key.empty()) {
            quoted(key);
            os_ << ':';
        }
    }
    void quoted(std::string_view s) {
        os_ << '"';
        for (unsigned char c : s) {
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

    std::ostream &os_;
    std::vector<bool> first_;  // per open container: nothing written into it yet
};

}  // namespace optireduce::info
