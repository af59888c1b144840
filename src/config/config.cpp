// SPDX-License-Identifier: BSD-3-Clause
#include "config/config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>

extern char **environ;

namespace optireduce {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB, TiB = 1024 * GiB;

// The spellings of each enumeration knob: what parse_config() accepts and stores, what the
// table's allowed text says (kAllowed, built from them) and what to_string() prints.
template <class E>
struct Spelling {
    const char *text;
    E value;
};
template <class E, std::size_t N>
using Spellings = std::array<Spelling<E>, N>;

constexpr Spellings<Mode, 3> kModes{{{"bounded", Mode::bounded}, {"exact", Mode::exact}, {"off", Mode::off}}};
constexpr Spellings<UdpOffload, 4> kUdpOffloads{
    {{"auto", UdpOffload::automatic}, {"gso", UdpOffload::gso}, {"gro", UdpOffload::gro}, {"off", UdpOffload::off}}};
constexpr Spellings<Hadamard, 3> kHadamards{
    {{"on", Hadamard::on}, {"off", Hadamard::off}, {"auto", Hadamard::automatic}}};
constexpr Spellings<ExcessLoss, 3> kExcessLosses{
    {{"warn", ExcessLoss::warn}, {"error", ExcessLoss::error}, {"exact", ExcessLoss::exact}}};
constexpr Spellings<DeviceMemory, 2> kDeviceMemories{
    {{"stage", DeviceMemory::stage}, {"passthrough", DeviceMemory::passthrough}}};
constexpr Spellings<Codec, 3> kCodecs{{{"fp32", Codec::fp32}, {"bf16", Codec::bf16}, {"int8", Codec::int8}}};
constexpr Spellings<LogLevel, 4> kLogLevels{
    {{"error", LogLevel::error}, {"warn", LogLevel::warn}, {"info", LogLevel::info}, {"debug", LogLevel::debug}}};

// An enumeration's spellings, found by its type.
constexpr const auto &spellings(Mode) { return kModes; }
constexpr const auto &spellings(UdpOffload) { return kUdpOffloads; }
constexpr const auto &spellings(Hadamard) { return kHadamards; }
constexpr const auto &spellings(ExcessLoss) { return kExcessLosses; }
constexpr const auto &spellings(LogLevel) { return kLogLevels; }
constexpr const auto &spellings(DeviceMemory) { return kDeviceMemories; }
constexpr const auto &spellings(Codec) { return kCodecs; }

// "a|b|c", NUL-terminated: the spellings of E joined as an enumeration row's allowed text.
template <class E>
constexpr auto joined_spellings() {
    constexpr std::size_t size = [] {
        std::size_t n = 0;
        for (const auto &s : spellings(E{})) n += std::char_traits<char>::length(s.text) + 1;
        return n;
    }();
    std::array<char, size> out{};
    std::size_t at = 0;
    for (const auto &s : spellings(E{})) {
        if (at != 0) out[at++] = '|';
        for (const char *c = s.text; *c != '\0'; ++c) out[at++] = *c;
    }
    return out;
}
template <class E>
constexpr auto kAllowedText = joined_spellings<E>();
template <class E>
constexpr const char *kAllowed = kAllowedText<E>.data();

template <class E>
E spelled(std::string_view text) {
    for (const auto &s : spellings(E{}))
        if (text == s.text) return s.value;
    return spellings(E{})[0].value;  // not reached: check_knob() let only spellings through
}

template <class E>
const char *spelling_of(E value) {
    for (const auto &s : spellings(E{}))
        if (s.value == value) return s.text;
    return "?";
}

// The table. Defaults are justified in docs/configuration.md's notes and the dated notes under docs/notes/.
constexpr std::array kKnobs{
    KnobSpec{"OPTIREDUCE_MODE", KnobType::enumeration, "bounded", kAllowed<Mode>, 0, 0, true,
             "bounded: Transpose AllReduce over unreliable datagrams with a deadline per phase; "
             "what misses it is estimated without bias. exact: the same schedule over a reliable "
             "channel, no deadline. off: every call goes to the underlying MPI",
             &Config::mode},
    KnobSpec{"OPTIREDUCE_MIN_BYTES", KnobType::bytes, "65536", "0..1T", 0, TiB, true,
             "float SUM calls smaller than this (count*4 bytes) go to the underlying MPI, whose "
             "latency-optimised algorithms win for small messages",
             &Config::min_bytes},
    KnobSpec{"OPTIREDUCE_DEVICE", KnobType::enumeration, "stage", kAllowed<DeviceMemory>, 0, 0, true,
             "float SUM calls whose buffers are in GPU memory (found only where the application has "
             "loaded the CUDA driver): stage copies them into pinned host memory on a stream of the "
             "library's own, runs the engine, and copies the result back; passthrough hands them to "
             "the underlying MPI, which must then be CUDA-aware. Agreed per call where any rank had "
             "CUDA loaded when the communicator was set up (one small allreduce per call there)",
             &Config::device},
    KnobSpec{"OPTIREDUCE_PROVIDER", KnobType::identifier, "auto", "auto or a libfabric provider", 0, 0, true,
             "reliable libfabric provider of exact mode: auto picks shm when all ranks of a communicator "
             "share a node, tcp;ofi_rxm otherwise; 'tcp' means tcp;ofi_rxm. Independent of "
             "FI_PROVIDER, which also filters Open MPI's own libfabric use",
             &Config::provider},
    KnobSpec{"OPTIREDUCE_SEGMENT_BYTES", KnobType::bytes, "4194304", "4K..64M", 4 * KiB, 64 * MiB, true,
             "exact mode: largest message the engine sends; shards are split into segments of this size so "
             "reduction and the all-gather start before a whole shard has arrived. The default "
             "is large because each message costs a handshake on shm",
             &Config::segment_bytes},
    KnobSpec{"OPTIREDUCE_DGRAM_PROVIDER", KnobType::identifier, "auto",
             "auto, kernel, or a libfabric provider with FI_EP_DGRAM", 0, 0, true,
             "datagram channel of bounded mode. auto: when a communicator spans nodes, a "
             "kernel-bypass datagram provider where libfabric finds one (efa, verbs), else kernel; "
             "on one node, where no network can lose or delay data, the reliable shm channel of "
             "exact mode instead. kernel: our own UDP sockets with segmentation offload and "
             "batched system calls. A libfabric name (udp, efa, ...) uses that provider; udp is "
             "libfabric's development provider, one system call per datagram, kept for "
             "comparison. One that cannot open makes the communicator fall back to the "
             "underlying MPI",
             &Config::dgram_provider},
    KnobSpec{"OPTIREDUCE_IFACE", KnobType::string, "", "interface names, comma-separated", 0, 0, false,
             "kernel datagram channel: the network interfaces whose IPv4 addresses peers may send "
             "to (like Open MPI's btl_tcp_if_include); empty: every interface that is up except "
             "loopback. Each peer is reached at an address on a subnet both share, over loopback "
             "when it shares this network namespace",
             &Config::iface},
    KnobSpec{"OPTIREDUCE_MTU", KnobType::bytes, "0", "0, or 576..9000", 0, 9000, false,
             "kernel datagram channel: 0 sizes datagrams to the path MTU of the route to the "
             "peers (1472 bytes at 1500, 8972 at 9000, never more), agreed across the ranks of a "
             "communicator; a value caps the MTU below that",
             &Config::mtu},
    KnobSpec{"OPTIREDUCE_UDP_OFFLOAD", KnobType::enumeration, "auto", kAllowed<UdpOffload>, 0, 0, false,
             "kernel datagram channel: auto uses UDP segmentation offload on send (UDP_SEGMENT) "
             "and coalescing on receive (UDP_GRO) where the kernel has them; gso or gro only one "
             "of them; off neither (sendmmsg/recvmmsg of single datagrams). optireduce-info says "
             "which the kernel offers",
             &Config::udp_offload},
    KnobSpec{"OPTIREDUCE_TARGET_LOSS", KnobType::number, "0.001", "0..0.5", 0, 0.5, false,
             "bounded mode: fraction of gradient entries per operation that may miss the "
             "deadline; the adaptive deadline widens when partially delivered streams lose more "
             "than this and tightens when they lose less (docs/configuration.md explains the "
             "default)",
             &Config::target_loss},
    KnobSpec{"OPTIREDUCE_TIMEOUT_MIN_MS", KnobType::number, "0.5", "0.01..60000", 0.01, 60000, false,
             "bounded mode: the adaptive deadline of a phase never goes below this", &Config::timeout_min_ms},
    KnobSpec{"OPTIREDUCE_TIMEOUT_MAX_MS", KnobType::number, "1000", "0.01..600000", 0.01, 600000, false,
             "bounded mode: the adaptive deadline of a phase never goes above this, except for "
             "messages whose data alone take longer to arrive (then twice their measured "
             "completion time); also the deadline of the first operations of each size, which "
             "calibrate it (more where a smaller calibrated size, scaled up, needs more)",
             &Config::timeout_max_ms},
    KnobSpec{"OPTIREDUCE_TIMEOUT_MS", KnobType::number, "0", "0..600000", 0, 600000, false,
             "bounded mode: 0 adapts the deadline to the job; a positive value pins every "
             "phase's deadline to this many milliseconds",
             &Config::timeout_ms},
    KnobSpec{"OPTIREDUCE_STRAGGLER_MAX_MS", KnobType::number, "10000", "0..600000", 0, 600000, false,
             "bounded mode: the longest a rank waits for a peer that has not started an "
             "operation (still computing: ranks of a training job reach each allreduce at "
             "different times) before it writes that peer's contribution off. The wait adapts "
             "to the skew the job shows and is this maximum only for the first operations; a "
             "peer that has started gets the phase deadline from its first datagram. 0: never "
             "wait longer than the deadline",
             &Config::straggler_max_ms},
    KnobSpec{"OPTIREDUCE_HADAMARD", KnobType::enumeration, "auto", kAllowed<Hadamard>, 0, 0, true,
             "bounded mode: randomized Hadamard transform of the vector before it travels, so a "
             "lost datagram becomes small noise spread over many coordinates instead of a hole "
             "(docs/architecture.md). auto: on wherever the datagram channel "
             "runs, which is the only place data can be lost; the reliable channel never "
             "transforms, so on is the same as auto",
             &Config::hadamard},
    KnobSpec{"OPTIREDUCE_HADAMARD_BLOCK", KnobType::bytes, "4096", "256..1M, a power of two", 256, 1048576, true,
             "bounded mode: elements (floats, not bytes) per transform block; smaller vectors use "
             "smaller blocks (down to 256) so every rank's shard holds up to 8 blocks; a vector "
             "of fewer than 256 x ranks elements is not transformed",
             &Config::hadamard_block},
    KnobSpec{"OPTIREDUCE_IDENTICAL_REPLICAS", KnobType::boolean, "1", "0|1", 0, 0, true,
             "bounded mode: 1 keeps every rank's result bit-identical: after the all-gather the ranks "
             "exchange which chunks each is missing (one small datagram per peer) and all fill the "
             "union of those holes with zeros, so a chunk one rank lost is dropped on every rank. "
             "0: each rank fills only its own holes, with its own contribution times the rank "
             "count; less data is dropped, but the ranks' results differ wherever one lost "
             "something, and replicas of a model drift apart",
             &Config::identical_replicas},
    KnobSpec{"OPTIREDUCE_VOTE_TIMEOUT_MS", KnobType::number, "60000", "100..3600000", 100, 3600000, false,
             "bounded mode with OPTIREDUCE_IDENTICAL_REPLICAS=1: the longest a rank waits for a peer's "
             "hole vote (normally a few milliseconds after its own all-gather; longer while the peer is "
             "descheduled or stopped). No rank finishes an operation without every vote, so replicas "
             "never differ; a vote still missing after this long means the peer is stopped, dead or "
             "cut off, and the job is aborted with that reason",
             &Config::vote_timeout_ms},
    KnobSpec{"OPTIREDUCE_CARRY", KnobType::boolean, "0", "0|1", 0, 0, true,
             "bounded mode, with OPTIREDUCE_IDENTICAL_REPLICAS=1: 1 says the sums are gradients "
             "(error feedback): what an operation drops (the chunks some rank missed, on every rank) "
             "each rank keeps as its own residual and adds to its input of the next call on the "
             "same receive buffer and count, so that over two calls the sum is complete. Wrong for a "
             "sum that is not a gradient, or a buffer reused for different tensors of one size "
             "(docs/usage.md). The communicator's optireduce_carry hint overrides it",
             &Config::carry},
    KnobSpec{"OPTIREDUCE_CARRY_MAX_MB", KnobType::number, "1024", "1..1048576", 1, 1048576, false,
             "bounded mode with carry on: the most memory a rank's residuals take, per communicator "
             "(each the size of its call's buffer, one per receive buffer and count); a residual that "
             "would go beyond it is dropped and counted (carry_dropped_entries)",
             &Config::carry_max_mb},
    KnobSpec{"OPTIREDUCE_CARRY_IDLE_CALLS", KnobType::number, "1000", "1..1000000000", 1, 1e9, false,
             "bounded mode with carry on: a residual whose buffer and count no call on its "
             "communicator has used for this many calls is dropped and counted "
             "(carry_dropped_entries): the tensor it belonged to is gone",
             &Config::carry_idle_calls},
    KnobSpec{"OPTIREDUCE_SCATTER_REPAIR", KnobType::boolean, "1", "0|1", 0, 0, false,
             "bounded mode: 1 asks a peer to send again the chunks of its reduce-scatter "
             "contribution that did not arrive although the rest of its stream did (a full socket "
             "buffer, a queue overflow, a lost datagram), while the phase has time; it answers "
             "while its operation runs. 0: such chunks are estimated from the other contributions "
             "(the all-gather is repaired either way)",
             &Config::scatter_repair},
    KnobSpec{"OPTIREDUCE_MAX_LOSS", KnobType::number, "0.1", "0..1", 0, 1, false,
             "bounded mode: fraction of the entries this rank received in one operation that may "
             "be lost before OPTIREDUCE_ON_EXCESS_LOSS acts; the result is returned either way",
             &Config::max_loss},
    KnobSpec{"OPTIREDUCE_CODEC", KnobType::enumeration, "fp32", kAllowed<Codec>, 0, 0, true,
             "bounded mode over datagrams: how each entry travels after the transform. fp32: as is "
             "(4 bytes). bf16: rounded to the nearest bfloat16 (2 bytes, relative error at most "
             "2^-8). int8: 8-bit levels with a scale per datagram and stochastic rounding (1 byte "
             "and 4 per datagram; unbiased, error per operation about 2e-4 of the sum's energy). "
             "Only for sums that are gradients: the result is an estimate",
             &Config::codec},
    KnobSpec{"OPTIREDUCE_ON_EXCESS_LOSS", KnobType::enumeration, "warn", kAllowed<ExcessLoss>, 0, 0, true,
             "bounded mode, when an operation lost more than OPTIREDUCE_MAX_LOSS: warn logs it "
             "(each rank judges its own loss); error also returns an MPI error, on every rank, "
             "through the communicator's error handler; exact widens the deadline and runs the "
             "next operations through the underlying MPI (reliable) until a bounded one is back "
             "under the budget on every rank. error and exact cost one small extra allreduce per "
             "bounded operation to agree whether any rank was over the budget",
             &Config::on_excess_loss},
    KnobSpec{"OPTIREDUCE_LOG", KnobType::enumeration, "warn", kAllowed<LogLevel>, 0, 0, false,
             "messages to stderr, prefixed optireduce[rank]", &Config::log},
    KnobSpec{"OPTIREDUCE_LOG_LIMIT", KnobType::number, "200", "0..1000000000", 0, 1e9, false,
             "messages per process after which the log stops, with one line saying so (debug logs "
             "several lines per operation); 0: no limit",
             &Config::log_limit},
    KnobSpec{"OPTIREDUCE_STATS", KnobType::boolean, "0", "0|1", 0, 0, false,
             "1: rank 0 prints a job summary to stderr at MPI_Finalize", &Config::stats},
    KnobSpec{"OPTIREDUCE_STATS_FILE", KnobType::string, "", "a file path", 0, 0, false,
             "rank 0 writes the job summary as JSON to this path at MPI_Finalize", &Config::stats_file},
    KnobSpec{"OPTIREDUCE_FAULT_DROP", KnobType::number, "0", "0..1", 0, 1, false,
             "TEST ONLY: probability that a received datagram is discarded, as if lost", &Config::fault_drop},
    KnobSpec{"OPTIREDUCE_FAULT_DUPLICATE", KnobType::number, "0", "0..1", 0, 1, false,
             "TEST ONLY: probability that a datagram is sent twice", &Config::fault_duplicate},
    KnobSpec{"OPTIREDUCE_FAULT_DELAY_RANK", KnobType::number, "-1", "-1..1000000", -1, 1000000, false,
             "TEST ONLY: world rank that sleeps OPTIREDUCE_FAULT_DELAY_MS before engine "
             "operations (-1: none)",
             &Config::fault_delay_rank},
    KnobSpec{"OPTIREDUCE_FAULT_DELAY_MS", KnobType::number, "0", "0..600000", 0, 600000, false,
             "TEST ONLY: how long the delayed rank sleeps", &Config::fault_delay_ms},
    KnobSpec{"OPTIREDUCE_FAULT_DELAY_PROB", KnobType::number, "1", "0..1", 0, 1, false,
             "TEST ONLY: probability that the delayed rank sleeps before a given operation", &Config::fault_delay_prob},
    KnobSpec{"OPTIREDUCE_FAULT_VOTE_DELAY_MS", KnobType::number, "0", "0..600000", 0, 600000, false,
             "TEST ONLY: how long the delayed rank sleeps before it sends its hole vote (identical "
             "replicas), with OPTIREDUCE_FAULT_DELAY_PROB per operation: a vote that comes late",
             &Config::fault_vote_delay_ms},
    KnobSpec{"OPTIREDUCE_FAULT_ALLOC_RANK", KnobType::number, "-1", "-1..1000000", -1, 1000000, false,
             "TEST ONLY: world rank whose staging allocation fails once, at its "
             "OPTIREDUCE_FAULT_ALLOC_NTH growth (-1: none)",
             &Config::fault_alloc_rank},
    KnobSpec{"OPTIREDUCE_FAULT_ALLOC_NTH", KnobType::number, "1", "1..1000000", 1, 1000000, false,
             "TEST ONLY: which growth of the engine's staging memory fails on that rank (1: the first)",
             &Config::fault_alloc_nth},
    KnobSpec{"OPTIREDUCE_FAULT_SEND_RANK", KnobType::number, "-1", "-1..1000000", -1, 1000000, false,
             "TEST ONLY: world rank whose sends fail (-FI_EIO) with probability "
             "OPTIREDUCE_FAULT_SEND_PROB: each round of datagrams in bounded mode, each transfer in "
             "exact mode (-1: none)",
             &Config::fault_send_rank},
    KnobSpec{"OPTIREDUCE_FAULT_SEND_PROB", KnobType::number, "1", "0..1", 0, 1, false,
             "TEST ONLY: probability that a send (a round of datagrams, or a transfer) fails on that rank",
             &Config::fault_send_prob},
    KnobSpec{"OPTIREDUCE_FAULT_EXIT_RANK", KnobType::number, "-1", "-1..1000000", -1, 1000000, false,
             "TEST ONLY: world rank that aborts (SIGABRT) when its process exits, after MPI_Finalize "
             "returned and its checks were printed (-1: none); shows that a test fails on any "
             "rank's exit status, whatever it printed",
             &Config::fault_exit_rank},
    KnobSpec{"OPTIREDUCE_FAULT_SEED", KnobType::bytes, "1", "0..1T", 0, TiB, false,
             "TEST ONLY: seed of the fault decisions (with the rank), so a failing run repeats", &Config::fault_seed},
};

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;  // Clang 14 deduces no aggregates

// A row's field holds what its type parses to: an enumeration its own spellings (its allowed text
// is theirs, its default one of them), bytes an unsigned count, a number a double or an integer,
// text a string.
constexpr bool field_fits(const KnobSpec &k) {
    const KnobType t = k.type;
    return std::visit(
        overloaded{
            [](std::monostate) {
        return false; },
            [t](bool Config::*) {
        return t == KnobType::boolean; },
            [t](int Config::*) {
        return t == KnobType::number; },
            [t](double Config::*) {
        return t == KnobType::number; },
            [t](std::uint64_t Config::*) {
        return t == KnobType::bytes || t == KnobType::number; },
            [t](std::string Config::*) {
        return t == KnobType::string || t == KnobType::identifier; },
            [&k]<class E>(E Config::*) requires std::is_enum_v<E> {
                bool default_spelled = false;
                for (const auto &s : spellings(E{}))
                    default_spelled |= std::string_view(k.default_value) == s.text;
                return k.type == KnobType::enumeration && std::string_view(k.allowed) == kAllowed<E> &&
                       default_spelled;
}
,
}  // namespace
,
        k.field);
}  // namespace optireduce

constexpr bool table_is_consistent() {
    for (std::size_t i = 0; i < kKnobs.size(); ++i) {
        if (!field_fits(kKnobs[i])) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (kKnobs[j].field == kKnobs[i].field || std::string_view(kKnobs[j].name) == kKnobs[i].name) return false;
    }
    return true;
}
static_assert(table_is_consistent(),
              "a knob row's field does not fit its type or default, or two rows share a field or name");

// "OPTIREDUCE_MTU=100": a knob as set, for the validators' messages.
std::string setting(const Config &c, const KnobField &field) {
    const KnobValue &v = c.value_of(field);
    return std::string(v.spec->name) + "=" + v.text;
}

// The validators: checks that no single row's range can state, run in kValidators order once
// every knob is parsed; the first error stops the job. Each names the variables as set and says
// what to set instead.
std::optional<ConfigError> mtu_zero_or_ipv4(const Config &c) {
    constexpr std::uint64_t kIpv4MinMtu = 576;
    if (c.mtu == 0 || c.mtu >= kIpv4MinMtu) return std::nullopt;
    return ConfigError{setting(c, &Config::mtu) + " is below " + std::to_string(kIpv4MinMtu) +
                       ", the smallest MTU IPv4 allows. Allowed: " + c.value_of(&Config::mtu).spec->allowed +
                       " (0: the path MTU)."};
}

std::optional<ConfigError> timeout_min_not_above_max(const Config &c) {
    if (c.timeout_min_ms <= c.timeout_max_ms) return std::nullopt;
    return ConfigError{setting(c, &Config::timeout_min_ms) + " is above " + setting(c, &Config::timeout_max_ms) +
                       ". Set the minimum at or below the maximum."};
}

std::optional<ConfigError> hadamard_block_power_of_two(const Config &c) {
    if ((c.hadamard_block & (c.hadamard_block - 1)) == 0) return std::nullopt;
    const KnobSpec &k = *c.value_of(&Config::hadamard_block).spec;
    const auto lo = static_cast<std::uint64_t>(k.min), hi = static_cast<std::uint64_t>(k.max);
    return ConfigError{setting(c, &Config::hadamard_block) + " is not a power of two. Use one of " +
                       std::to_string(lo) + ", " + std::to_string(2 * lo) + ", ... " + std::to_string(hi) +
                       " (elements)."};
}

std::optional<ConfigError> carry_needs_identical_replicas(const Config &c) {
    if (!c.carry || c.identical_replicas) return std::nullopt;
    return ConfigError{setting(c, &Config::carry) + " needs " + c.value_of(&Config::identical_replicas).spec->name +
                       "=1: a residual is what every rank dropped alike, which only the agreed holes are. "
                       "Set OPTIREDUCE_IDENTICAL_REPLICAS=1, or OPTIREDUCE_CARRY=0."};
}

constexpr std::array kValidators{mtu_zero_or_ipv4, timeout_min_not_above_max, hadamard_block_power_of_two,
                                 carry_needs_identical_replicas};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string trim(std::string s) {
    auto not_space = [](unsigned char c) { return !std::isspace(c); };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
    s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
    return s;
}

// "65536", "64K", "64KiB", "1M", "1g", "1T": binary multiples, as MPI and libfabric users write them.
std::optional<std::uint64_t> parse_bytes(const std::string &text) {
    std::uint64_t v = 0;
    const char *b = text.data(), *e = text.data() + text.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p == b) return std::nullopt;
    std::string suffix = lower(std::string(p, e));
    std::uint64_t mult = 1;
    if (suffix.empty() || suffix == "b")
        mult = 1;
    else if (suffix == "k" || suffix == "kib" || suffix == "kb")
        mult = KiB;
    else if (suffix == "m" || suffix == "mib" || suffix == "mb")
        mult = MiB;
    else if (suffix == "g" || suffix == "gib" || suffix == "gb")
        mult = GiB;
    else if (suffix == "t" || suffix == "tib" || suffix == "tb")
        mult = TiB;
    else
        return std::nullopt;
    if (v > UINT64_MAX / mult) return std::nullopt;
    return v * mult;
}

bool enum_allows(const KnobSpec &k, const std::string &v) {
    std::string allowed = k.allowed;
    std::size_t start = 0;
    while (start <= allowed.size()) {
        std::size_t bar = allowed.find('|', start);
        if (bar == std::string::npos) bar = allowed.size();
        if (allowed.compare(start, bar - start, v) == 0) return true;
        start = bar + 1;
    }
    return false;
}

// FNV-1a: stable across processes and builds, which std::hash is not required to be.
std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

ConfigError invalid(const KnobSpec &k, const std::string &raw, const char *why) {
    std::ostringstream os;
    os << k.name << "='" << raw << "' is invalid: " << why << "; allowed: " << k.allowed << " (default "
       << (*k.default_value ? k.default_value : "empty") << "). Fix or unset the variable.";
    return {os.str()};
}

// Puts a checked, normalised value into the Config field its row names.
void store(Config &cfg, const KnobSpec &k, const std::string &text) {
    const auto number = [&text] { return std::strtod(text.c_str(), nullptr); };
    std::visit(overloaded{
                   [](std::monostate) {},
                   [&](bool Config::*f) {
        cfg.*f = text == "1"; },
                   [&](int Config::*f) {
        cfg.*f = static_cast<int>(number()); },
                   [&](double Config::*f) {
        cfg.*f = number(); },
                   [&](std::uint64_t Config::*f) {
        cfg.*f = k.type == KnobType::bytes ? std::stoull(text) : static_cast<std::uint64_t>(number());
                   },
                   // A blank identifier (a provider name of spaces) means the default, auto.
                   [&](std::string Config::*f) {
        cfg.*f = text.empty() && k.type == KnobType::identifier ? k.default_value : text;
                   },
                   [&]<class E>(E Config::*f) requires std::is_enum_v<E> { cfg.*f = spelled<E>(text);
}
,
},
               k.field);
}

// OPTIREDUCE_* names that are no knob: most likely typos, which the caller warns about.
std::vector<std::string> unknown_names(const std::vector<std::string> &env_names) {
    std::vector<std::string> out;
    for (const auto &name : env_names) {
        if (name.rfind("OPTIREDUCE_", 0) != 0) continue;
        // The launcher's variable is documented with the launcher, not a knob.
        if (name == "OPTIREDUCE_LIB") continue;
        if (find_knob(name) == nullptr) out.push_back(name);
    }
    return out;
}

}  // namespace

std::span<const KnobSpec> knob_table() { return kKnobs; }

const char *to_string(Mode m) { return spelling_of(m); }

const char *to_string(LogLevel l) { return spelling_of(l); }

const char *to_string(Codec c) { return spelling_of(c); }

Codec codec_named(std::string_view text) { return spelled<Codec>(text); }

std::vector<std::uint64_t> Config::agreement_hashes() const {
    std::vector<std::uint64_t> out;
    for (const auto &v : values)
        if (v.spec->must_agree) out.push_back(fnv1a(v.text));
    return out;
}

std::vector<const char *> Config::agreement_names() {
    std::vector<const char *> out;
    for (const auto &k : kKnobs)
        if (k.must_agree) out.push_back(k.name);
    return out;
}

KnobCheck check_knob(const KnobSpec &k, std::string_view raw) {
    std::string text = trim(std::string(raw));
    switch (k.type) {
        case KnobType::enumeration:
            text = lower(text);
            if (!enum_allows(k, text)) return {{}, "not one of the allowed values"};
            break;
        case KnobType::boolean:
            text = lower(text);
            if (text == "1" || text == "yes" || text == "true" || text == "on")
                text = "1";
            else if (text == "0" || text == "no" || text == "false" || text == "off")
                text = "0";
            else
                return {{}, "not a boolean"};
            break;
        case KnobType::bytes: {
            auto v = parse_bytes(text);
            if (!v) return {{}, "not a byte count (e.g. 65536, 64K, 1M)"};
            if (static_cast<double>(*v) < k.min || static_cast<double>(*v) > k.max) return {{}, "out of range"};
            text = std::to_string(*v);
            break;
        }
        case KnobType::identifier: text = lower(text); break;
        case KnobType::number: {
            char *end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
                return {{}, "not a number (e.g. 0.01, 250)"};
            if (v < k.min || v > k.max) return {{}, "out of range"};
            // Canonical text, so 0.10 and 0.1 hash alike.
            std::ostringstream canon;
            canon << v;
            text = canon.str();
            break;
        }
        case KnobType::string: break;
    }
    return {text, nullptr};
}

const KnobSpec *find_knob(std::string_view name) {
    for (const auto &k : kKnobs)
        if (name == k.name) return &k;
    return nullptr;
}

const KnobSpec *find_knob(const KnobField &field) {
    for (const auto &k : kKnobs)
        if (k.field == field) return &k;
    return nullptr;
}

const KnobValue &Config::value_of(const KnobField &field) const {
    const KnobSpec *k = find_knob(field);
    if (k == nullptr) throw std::out_of_range("no OPTIREDUCE_* knob stores into this Config field");
    return values.at(static_cast<std::size_t>(k - kKnobs.data()));
}

std::uint64_t value_hash(std::string_view text) { return fnv1a(text); }

ParseResult parse_config(const EnvLookup &lookup, const std::vector<std::string> &env_names) {
    ParseResult result;
    Config cfg;
    for (const auto &k : kKnobs) {
        const char *raw_c = lookup(k.name);
        const bool from_env = raw_c != nullptr && *raw_c != '\0';
        const std::string raw = from_env ? std::string(raw_c) : std::string(k.default_value);
        KnobCheck checked = check_knob(k, raw);
        if (checked.why) {
            result.error = invalid(k, raw, checked.why);
            return result;
        }
        store(cfg, k, checked.text);
        cfg.values.push_back({&k, std::move(checked.text), from_env ? Source::environment : Source::default_value});
    }
    for (const auto &validate : kValidators) {
        if (auto error = validate(cfg)) {
            result.error = std::move(error);
            return result;
        }
    }
    result.unknown = unknown_names(env_names);
    result.config = std::move(cfg);
    return result;
}

ParseResult parse_environment() {
    // Names only: parse_config() looks values up itself and only needs the names to find
    // OPTIREDUCE_* variables that match no knob.
    std::vector<std::string> names;
    for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        if (entry.rfind("OPTIREDUCE_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
    }
    return parse_config([](const char *name) { return std::getenv(name); }, names);
}

// Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict) about string::insert here.
std::string markdown_cell(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

std::string configuration_markdown() {
    std::ostringstream os;
    os << "| Variable | Default | Allowed | Same on all ranks | Meaning |\n"
       << "|---|---|---|---|---|\n";
    for (const auto &k : kKnobs) {
        os << "| `" << k.name << "` | `" << (*k.default_value ? k.default_value : "(empty)") << "` | "
           << markdown_cell(k.allowed) << " | " << (k.must_agree ? "yes" : "no") << " | " << markdown_cell(k.doc)
           << " |\n";
    }
    return os.str();
}

}  // namespace optireduce
