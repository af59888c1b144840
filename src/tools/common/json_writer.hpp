// SPDX-License-Identifier: BSD-3-Clause
// Just enough JSON for the tools: objects, arrays, strings, numbers, booleans and null, with the
// commas and the escaping handled in one place. A top-level value ends with a newline.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace optireduce::tools {

class JsonWriter {
public:
    explicit JsonWriter(std::ostream &os) : os_(os) {}

    // Pass a key inside objects, none inside arrays or at the top level.
    void begin_object(std::string_view key = {}) { open(key, '{'); }
    void end_object() { close('}'); }
    void begin_array(std::string_view key) { open(key, '['); }
    void end_array() { close(']'); }

    void field(std::string_view key, std::string_view v);
    void field(std::string_view key, const char *v) { field(key, std::string_view(v)); }
    void field(std::string_view key, std::uint64_t v);
    void field(std::string_view key, int v);
    void field(std::string_view key, bool v);
    // printf's `format` for one double; JSON has no NaN or infinity, so those are written as null.
    void field(std::string_view key, double v, const char *format = "%.6g");
    void null_field(std::string_view key);
    void value(std::string_view v);

private:
    void open(std::string_view key, char bracket);
    void close(char bracket);
    void prefix(std::string_view key);
    void quoted(std::string_view s);

    std::ostream &os_;
    std::vector<bool> first_;  // per open container: nothing written into it yet
};

}  // namespace optireduce::tools
