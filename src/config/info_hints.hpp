// SPDX-License-Identifier: BSD-3-Clause
// Per-communicator hints: the MPI_Info keys an application may attach to a communicator with
// MPI_Comm_set_info or MPI_Comm_dup_with_info (docs/configuration.md, "Per-communicator hints").
// Each key but the on/off switch stands in for one OPTIREDUCE_* variable on that communicator and
// is checked by that variable's own row of the knob table (check_knob), so a hint accepts exactly
// what its variable does. No MPI here: engine/setup/comm_hints.hpp reads the info object, agrees the
// hints across ranks and applies them.
#pragma once

#include "config/config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace optireduce {

struct HintSpec {
    const char *key;       // the MPI_Info key
    const KnobSpec *knob;  // the table row of the variable it stands in for; nullptr: the on/off switch
};

// Every key, in documentation order; CommHints indexes its values the same way.
std::span<const HintSpec> hint_table();

// The table row whose rules, range and documentation a hint takes: its variable's, or the
// switch's own row ("optireduce", on|off).
const KnobSpec &hint_knob(const HintSpec &h);

// A communicator's hints: the normalised text of each key (as check_knob gives it), empty where
// the key was never given, so that the variable's value applies.
class CommHints {
public:
    static constexpr std::size_t kSwitch = 0, kMinBytes = 1, kTimeoutMs = 2, kTargetLoss = 3, kMaxLoss = 4, kCodec = 5,
                                 kCarry = 6;
    static constexpr std::size_t kCount = 7;

    // "optireduce": off sends every call on the communicator to the underlying MPI.
    bool enabled() const { return text_[kSwitch] != "off"; }
    void set_enabled(bool on) { text_[kSwitch] = on ? "on" : "off"; }
    std::optional<std::uint64_t> min_bytes() const;
    std::optional<double> timeout_ms() const;
    std::optional<double> target_loss() const;
    std::optional<double> max_loss() const;
    std::optional<Codec> codec() const;
    std::optional<bool> carry() const;

    const std::string &text(std::size_t i) const { return text_[i]; }
    void set_text(std::size_t i, std::string t) { text_[i] = std::move(t); }
    // One hash per key (of "" when unset), in hint_table() order: compared MIN/MAX across ranks.
    std::vector<std::uint64_t> agreement_hashes() const;
    // "optireduce_min_bytes=1048576 optireduce_timeout_ms=5": the keys that are set, for logs.
    std::string describe() const;

private:
    std::array<std::string, kCount> text_;
};

// The value of `key` in an info object, or nullopt when the key is absent.
using InfoLookup = std::function<std::optional<std::string>(const char *key)>;

struct HintParse {
    CommHints hints;                   // base with every key lookup found replaced
    std::optional<ConfigError> error;  // names the first invalid hint, its value and allowed range
};

// MPI_Comm_set_info semantics: keys the info object does not hold keep their value in `base`.
HintParse parse_hints(const InfoLookup &lookup, CommHints base);

// Whether `key` looks like one of ours but is not (a misspelt hint, worth a warning): it starts
// with "optireduce" and is not in hint_table().
bool is_unknown_hint(std::string_view key);

}  // namespace optireduce
