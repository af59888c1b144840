// SPDX-License-Identifier: BSD-3-Clause
#include "config/info_hints.hpp"

#include <cstdlib>
#include <sstream>
#include <string_view>

namespace optireduce {
namespace {

// The switch has no variable: OPTIREDUCE_MODE=off is its process-wide counterpart.
constexpr KnobSpec kSwitchKnob{"optireduce",
                               KnobType::enumeration,
                               "on",
                               "on|off",
                               0,
                               0,
                               true,
                               "off: every float SUM call on the communicator goes to the underlying MPI"};

// Rows found by the Config field their variable sets (kKnobs is constant-initialised, so this
// initialisation can read it).
const std::array<HintSpec, CommHints::kCount> kHints{{
    {"optireduce", nullptr},
    {"optireduce_min_bytes", find_knob(&Config::min_bytes)},
    {"optireduce_timeout_ms", find_knob(&Config::timeout_ms)},
    {"optireduce_target_loss", find_knob(&Config::target_loss)},
    {"optireduce_max_loss", find_knob(&Config::max_loss)},
    {"optireduce_codec", find_knob(&Config::codec)},
    {"optireduce_carry", find_knob(&Config::carry)},
}};

std::optional<double> number(const std::string &text) {
    if (text.empty()) return std::nullopt;
    return std::strtod(text.c_str(), nullptr);
}

}  // namespace

std::span<const HintSpec> hint_table() { return kHints; }

const KnobSpec &hint_knob(const HintSpec &h) { return h.knob ? *h.knob : kSwitchKnob; }

std::optional<std::uint64_t> CommHints::min_bytes() const {
    if (text_[kMinBytes].empty()) return std::nullopt;
    return std::strtoull(text_[kMinBytes].c_str(), nullptr, 10);
}
std::optional<double> CommHints::timeout_ms() const { return number(text_[kTimeoutMs]); }
std::optional<double> CommHints::target_loss() const { return number(text_[kTargetLoss]); }
std::optional<double> CommHints::max_loss() const { return number(text_[kMaxLoss]); }
std::optional<Codec> CommHints::codec() const {
    if (text_[kCodec].empty()) return std::nullopt;
    return codec_named(text_[kCodec]);
}

std::optional<bool> CommHints::carry() const {
    if (text_[kCarry].empty()) return std::nullopt;
    return text_[kCarry] == "1";
}

std::vector<std::uint64_t> CommHints::agreement_hashes() const {
    std::vector<std::uint64_t> out;
    // "on" and unset mean the same: a rank that said on explicitly agrees with one that did not.
    for (std::size_t i = 0; i < kCount; ++i) out.push_back(value_hash(i == kSwitch && enabled() ? "" : text_[i]));
    return out;
}

std::string CommHints::describe() const {
    std::string out;
    for (std::size_t i = 0; i < kCount; ++i)
        if (!text_[i].empty()) out += (out.empty() ? "" : " ") + std::string(kHints[i].key) + "=" + text_[i];
    return out.empty() ? "none" : out;
}

HintParse parse_hints(const InfoLookup &lookup, CommHints base) {
    HintParse result{std::move(base), std::nullopt};
    for (std::size_t i = 0; i < kHints.size(); ++i) {
        const std::optional<std::string> raw = lookup(kHints[i].key);
        if (!raw) continue;
        const KnobSpec &k = hint_knob(kHints[i]);
        KnobCheck checked = check_knob(k, *raw);
        if (checked.why) {
            std::ostringstream os;
            os << "MPI_Info hint " << kHints[i].key << "='" << *raw << "' is invalid: " << checked.why
               << "; allowed: " << k.allowed;
            if (kHints[i].knob) os << " (as " << kHints[i].knob->name << ")";
            result.error = ConfigError{os.str()};
            return result;
        }
        result.hints.set_text(i, std::move(checked.text));
    }
    return result;
}

bool is_unknown_hint(std::string_view key) {
    if (key.rfind("optireduce", 0) != 0) return false;
    for (const auto &h : kHints)
        if (key == h.key) return false;
    return true;
}

}  // namespace optireduce
