// SPDX-License-Identifier: BSD-3-Clause
// The one table of OPTIREDUCE_* knobs and the parsed values (docs/architecture.md, "Layers";
// docs/configuration.md is generated from the table).
// Parsed once per process; every other layer reads the Config value, never the environment.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace optireduce {

enum class Mode { bounded, exact, off };
// OPTIREDUCE_HADAMARD and what OPTIREDUCE_ON_EXCESS_LOSS does.
enum class Hadamard { on, off, automatic };
enum class ExcessLoss { warn, error, exact };
enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };
// OPTIREDUCE_UDP_OFFLOAD: which offloads the kernel datagram channel may use.
enum class UdpOffload { automatic, gso, gro, off };
// OPTIREDUCE_DEVICE: what the engine does with a call whose buffers are in GPU memory.
enum class DeviceMemory { stage, passthrough };
// OPTIREDUCE_CODEC: how bounded mode's datagrams carry their entries (codec/wire_codec.hpp).
// Its values are also the codec bits of a datagram's header (wire::codec_flags): never renumber.
enum class Codec : std::uint8_t { fp32 = 0, bf16 = 1, int8 = 2 };

struct Config;
// Where a knob's value goes: the Config field its table row stores into. The field also names the
// knob in code (config.value_of(&Config::fault_seed)), so its variable's name is written once, in
// the table. monostate: no field (the hint switch of config/info_hints.hpp, which is no variable).
using KnobField =
    std::variant<std::monostate, Mode Config::*, Hadamard Config::*, ExcessLoss Config::*, LogLevel Config::*,
                 UdpOffload Config::*, DeviceMemory Config::*, Codec Config::*, bool Config::*, int Config::*,
                 std::uint64_t Config::*, double Config::*, std::string Config::*>;

// identifier: free text compared case-insensitively (stored lower case), e.g. a provider name.
// number: a decimal (fraction, milliseconds) within [min, max].
enum class KnobType { enumeration, bytes, boolean, string, identifier, number };

struct KnobSpec {
    const char *name;
    KnobType type;
    const char *default_value;
    const char *allowed;  // enumeration: "a|b|c"; bytes, number: "lo..hi"; free text otherwise
    double min;           // bytes and number only (bytes up to 1T are exact in a double)
    double max;           // bytes and number only
    bool must_agree;      // part of the cross-rank fingerprint checked at communicator setup
    const char *doc;
    KnobField field{};  // where parse_config() stores the value (its type fits `type`)
};

// The codec a knob or hint text names (check_knob() let only its spellings through).
Codec codec_named(std::string_view text);

// Every knob, in documentation order.
std::span<const KnobSpec> knob_table();

enum class Source { default_value, environment };

struct KnobValue {
    const KnobSpec *spec;
    std::string text;  // normalised value (lower case for enumerations)
    Source source;
};

struct Config {
    Mode mode = Mode::bounded;
    std::uint64_t min_bytes = 0;
    std::string provider;  // "auto" or a libfabric provider name
    std::uint64_t segment_bytes = 0;
    LogLevel log = LogLevel::warn;
    int log_limit = 0;  // messages per process before the log stops (0: no limit)
    bool stats = false;
    std::string stats_file;
    // Bounded mode: the datagram channel and the deadlines.
    std::string dgram_provider;
    std::string iface;                               // kernel channel: interfaces to publish ("" = all but loopback)
    std::uint64_t mtu = 0;                           // kernel channel: cap on the path MTU (0: none)
    UdpOffload udp_offload = UdpOffload::automatic;  // kernel channel: offloads allowed
    double target_loss = 0;                          // fraction of entries lost per operation the deadline aims at
    double timeout_min_ms = 0;                       // clamps of the adaptive deadline
    double timeout_max_ms = 0;
    double timeout_ms = 0;        // > 0: a fixed deadline per phase instead of the adaptive one
    double straggler_max_ms = 0;  // the longest wait for a peer that has not started an operation
    // Accuracy under loss: the transform and the loss budget.
    Hadamard hadamard = Hadamard::automatic;
    std::uint64_t hadamard_block = 0;  // elements per transform block, a power of two
    bool identical_replicas = true;    // every rank fills the union of the all-gather's holes alike
    double vote_timeout_ms = 0;        // the longest wait for a peer's hole vote before the job ends
    bool carry = false;                // what an operation drops goes into the next one (error feedback)
    double carry_max_mb = 0;           // per communicator: the most the residuals take
    double carry_idle_calls = 0;       // calls after which an unclaimed residual is dropped
    bool scatter_repair = true;        // receivers ask for reduce-scatter chunks they missed
    double max_loss = 0;               // fraction of entries lost in one operation
    ExcessLoss on_excess_loss = ExcessLoss::warn;
    Codec codec = Codec::fp32;                  // bounded mode's wire format
    DeviceMemory device = DeviceMemory::stage;  // GPU buffers: staged through host memory, or to the MPI
    // Test-only fault injection (OPTIREDUCE_FAULT_*): never set in production.
    double fault_drop = 0;       // probability a received datagram is discarded
    double fault_duplicate = 0;  // probability a sent datagram is sent twice
    int fault_delay_rank = -1;   // world rank that sleeps before each engine operation
    double fault_delay_ms = 0;
    double fault_delay_prob = 1;     // probability the delayed rank sleeps before a given operation
    double fault_vote_delay_ms = 0;  // the delayed rank sleeps this long before its hole vote
    std::uint64_t fault_seed = 0;
    int fault_alloc_rank = -1;          // world rank whose staging allocation fails once
    std::uint64_t fault_alloc_nth = 1;  // at its nth growth of staging memory
    int fault_send_rank = -1;           // world rank whose sends fail
    double fault_send_prob = 1;         // per round of datagrams (bounded), per transfer (exact)
    int fault_exit_rank = -1;           // world rank that aborts at exit, after MPI_Finalize

    std::vector<KnobValue> values;  // one per knob_table() row, same order

    // The value (normalised text, source) of the knob whose row stores into `field`, e.g.
    // value_of(&Config::fault_seed).source. Throws std::out_of_range for a field no row has.
    const KnobValue &value_of(const KnobField &field) const;
    bool udp_gso() const { return udp_offload == UdpOffload::automatic || udp_offload == UdpOffload::gso; }
    bool udp_gro() const { return udp_offload == UdpOffload::automatic || udp_offload == UdpOffload::gro; }

    // One hash per must_agree knob, in knob_table() order: compared MIN/MAX across ranks.
    std::vector<std::uint64_t> agreement_hashes() const;
    // Names of the must_agree knobs, parallel to agreement_hashes().
    static std::vector<const char *> agreement_names();
};

struct ConfigError {
    std::string message;  // names the variable, the value and the allowed range
};

using EnvLookup = std::function<const char *(const char *)>;

// Parses every knob through `lookup` (getenv in production, a map in tests). Unknown
// OPTIREDUCE_* variables are reported in `unknown` so the caller can warn about typos.
struct ParseResult {
    std::optional<Config> config;
    std::optional<ConfigError> error;
    std::vector<std::string> unknown;
};
ParseResult parse_config(const EnvLookup &lookup, const std::vector<std::string> &env_names = {});

// One value checked and normalised by its table row's rules: what parse_config() does for each
// variable, and what per-communicator hints (config/info_hints.hpp) reuse so that a hint accepts
// exactly what its variable does. `why` is nullptr when the value is valid, else the reason
// (the caller names the variable or hint, and k.allowed, in its message).
struct KnobCheck {
    std::string text;  // normalised, as KnobValue::text
    const char *why = nullptr;
};
KnobCheck check_knob(const KnobSpec &k, std::string_view raw);

// The table row of the variable `name`, or nullptr.
const KnobSpec *find_knob(std::string_view name);
// The table row that stores into `field`, or nullptr.
const KnobSpec *find_knob(const KnobField &field);

// The hash agreement_hashes() gives a normalised value: stable across processes and builds.
std::uint64_t value_hash(std::string_view text);

// parse_config() over this process's environment: what the library and optireduce-info use.
ParseResult parse_environment();

const char *to_string(Mode m);
const char *to_string(LogLevel l);
const char *to_string(Codec c);

// Markdown reference of the table; docs/configuration.md is checked against it by a test.
std::string configuration_markdown();
// text as one Markdown table cell: a literal '|' would end the cell ("bounded|exact|off"), so it
// is escaped.
std::string markdown_cell(std::string_view text);

}  // namespace optireduce
