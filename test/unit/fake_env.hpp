// SPDX-License-Identifier: BSD-3-Clause
// A stand-in for the process environment, so config tests never depend on (or change) the
// variables of the shell that runs them.
#pragma once

#include "config/config.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace optireduce::testing_support {

class FakeEnv {
public:
    FakeEnv() = default;
    FakeEnv(std::initializer_list<std::pair<const std::string, std::string>> vars) : vars_(vars) {}

    FakeEnv &set(const std::string &name, const std::string &value) {
        vars_[name] = value;
        return *this;
    }

    EnvLookup lookup() const {
        return [this](const char *name) -> const char * {
            auto it = vars_.find(name);
            return it == vars_.end() ? nullptr : it->second.c_str();
        };
    }

    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto &kv : vars_) out.push_back(kv.first);
        return out;
    }

    ParseResult parse() const { return parse_config(lookup(), names()); }

private:
    std::map<std::string, std::string> vars_;
};

// The parsed Config of an environment the test expects to be valid.
inline Config parsed(const FakeEnv &env) {
    ParseResult r = env.parse();
    if (r.error) throw std::runtime_error("unexpected config error: " + r.error->message);
    return *r.config;
}

}  // namespace optireduce::testing_support
