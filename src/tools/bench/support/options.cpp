// SPDX-License-Identifier: BSD-3-Clause
#include "bench/support/options.hpp"

#include "common/cli_numbers.hpp"

#include <getopt.h>
#include <climits>

#include <cstdlib>
#include <string_view>
#include <vector>

namespace optireduce::bench {
namespace {

// --threads: more would only measure the scheduler.
constexpr long max_threads = 64;

// MPI_Allreduce takes an int count of floats.
constexpr std::size_t max_message_bytes = std::size_t{INT_MAX} * sizeof(float);

// Counts end up as MPI int counts (the cross-rank reduction of per-iteration timings).
std::optional<long> parse_count(std::string_view text, long minimum) {
    const auto value = tools::parse_unsigned(text);
    if (!value || *value < static_cast<std::uint64_t>(minimum) || *value > INT_MAX) return std::nullopt;
    return static_cast<long>(*value);
}

// OSU's forms: "MIN:MAX", "MAX", "MIN:".
std::string parse_range(std::string_view text, Options &out) {
    auto colon = text.find(':');
    std::string_view lo = colon == std::string_view::npos ? std::string_view{} : text.substr(0, colon);
    std::string_view hi = colon == std::string_view::npos ? text : text.substr(colon + 1);
    if (!lo.empty()) {
        auto v = tools::parse_size(lo);
        if (!v) return "bad minimum size '" + std::string(lo) + "'";
        out.min_bytes = *v;
    }
    if (!hi.empty()) {
        auto v = tools::parse_size(hi);
        if (!v) return "bad maximum size '" + std::string(hi) + "'";
        out.max_bytes = *v;
    }
    if (lo.empty() && hi.empty()) return "empty size range";
    if (out.max_bytes < sizeof(float)) return "maximum size is below one float (4 bytes)";
    if (out.min_bytes > out.max_bytes) return "minimum size is above the maximum";
    if (out.max_bytes > max_message_bytes)
        return "maximum size is above " + std::to_string(max_message_bytes) + " bytes";
    return {};
}

// "--compute-ms" and "--skew-ms": milliseconds of a rank's work.
std::string parse_ms(const char *name, const char *text, double &ms) {
    char *end = nullptr;
    ms = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(ms >= 0 && ms <= 60000))
        return std::string(name) + ": expected milliseconds from 0 to 60000, got '" + text + "'";
    return {};
}

std::string count_error(const char *name, const char *range, const char *text) {
    return std::string(name) + ": expected an integer from " + range + ", got '" + text + "'";
}

template <bool Options::*flag>
std::string set(const char *, Options &out) {
    out.*flag = true;
    return {};
}

// One row per option: its names and what it does to Options; a non-empty result is the error.
struct OptionRow {
    const char *name;
    char short_name;  // 0: long form only
    bool takes_value;
    std::string (*apply)(const char *value, Options &out);
};

constexpr OptionRow option_rows[] = {
    {"message-size", 'm', true,
     [](const char *v, Options &o) {
         auto err = parse_range(v, o);
         return err.empty() ? err : "-m: " + err;
     }},
    {"iterations", 'i', true,
     [](const char *v, Options &o) {
         o.iterations = parse_count(v, 1);
         return o.iterations ? std::string() : count_error("-i", "1 to 2^31-1", v);
     }},
    {"warmup", 'x', true,
     [](const char *v, Options &o) {
         o.warmup = parse_count(v, 0);
         return o.warmup ? std::string() : count_error("-x", "0 to 2^31-1", v);
     }},
    {"validate", 'c', false, &set<&Options::validate>},
    {"in-place", 0, false, &set<&Options::in_place>},
    {"compute-ms", 0, true, [](const char *v, Options &o) { return parse_ms("--compute-ms", v, o.compute_ms); }},
    {"skew-ms", 0, true, [](const char *v, Options &o) { return parse_ms("--skew-ms", v, o.skew_ms); }},
    {"compute-sleep", 0, false, &set<&Options::compute_sleep>},
    {"csv", 0, true,
     [](const char *v, Options &o) {
         o.csv_path = v;
         return std::string();
     }},
    {"progress", 0, false, &set<&Options::progress>},
    {"passthrough-overhead", 0, false, &set<&Options::passthrough_overhead>},
    {"completion-overhead", 0, false, &set<&Options::completion_overhead>},
    {"nonblocking", 0, false, &set<&Options::nonblocking>},
    {"threads", 0, true,
     [](const char *v, Options &o) {
         auto threads = parse_count(v, 2);
         if (!threads || *threads > max_threads)
             return count_error("--threads", ("2 to " + std::to_string(max_threads)).c_str(), v);
         o.threads = *threads;
         return std::string();
     }},
    {"help", 'h', false, &set<&Options::help>},
    {"version", 0, false, &set<&Options::version>},
};
constexpr std::size_t option_count = sizeof option_rows / sizeof option_rows[0];

// getopt_long returns a row's short name, or 256 + its index for a long-only one.
constexpr int long_only_base = 256;

int option_code(std::size_t index) {
    return option_rows[index].short_name ? option_rows[index].short_name : long_only_base + static_cast<int>(index);
}

const OptionRow *row_for(int code) {
    for (std::size_t i = 0; i < option_count; ++i)
        if (option_code(i) == code) return &option_rows[i];
    return nullptr;
}

// Each of these is a run of its own; silently preferring one would time what was not asked.
std::string check_combination(const Options &out) {
    if (int(out.passthrough_overhead) + int(out.completion_overhead) > 1)
        return "--passthrough-overhead and --completion-overhead exclude each other";
    if (out.nonblocking && out.threads == 0)
        return "--nonblocking needs --threads (for MPI_Iallreduce overlap, run scripts/osu-iallreduce.sh)";
    if (out.threads > 0) {
        if (out.passthrough_overhead || out.completion_overhead)
            return "--threads excludes --passthrough-overhead and --completion-overhead";
        // The threads' calls run back to back: their aggregate bandwidth is the point.
        if (out.compute_ms > 0 || out.skew_ms > 0 || out.compute_sleep)
            return "--threads times calls back to back: --compute-ms, --skew-ms and --compute-sleep do not apply";
    }
    return {};
}

}  // namespace

std::string parse_options(int argc, char **argv, Options &out) {
    std::vector<option> long_options;
    std::string short_options = "+:";
    for (std::size_t i = 0; i < option_count; ++i) {
        const OptionRow &row = option_rows[i];
        long_options.push_back({row.name, row.takes_value ? required_argument : no_argument, nullptr, option_code(i)});
        if (row.short_name) short_options += std::string(1, row.short_name) + (row.takes_value ? ":" : "");
    }
    long_options.push_back({nullptr, 0, nullptr, 0});
    opterr = 0;  // every rank parses; the caller reports once, from rank 0
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, short_options.c_str(), long_options.data(), nullptr)) != -1) {
        if (c == ':') return std::string("option needs a value: ") + argv[optind - 1];
        const OptionRow *row = row_for(c);
        if (!row) return std::string("unknown option: ") + argv[optind - 1];
        if (auto err = row->apply(optarg, out); !err.empty()) return err;
    }
    if (optind < argc) return std::string("unexpected argument: ") + argv[optind];
    return check_combination(out);
}

namespace {

// How this binary's MPI launcher preloads the library built for the same MPI.
#if defined(OPTIREDUCE_ABI_MPICH)
constexpr const char *launcher_usage = "mpiexec -n N [-genv LD_PRELOAD /path/liboptireduce-mpich.so]";
constexpr const char *launcher_example = "mpiexec -n 4 -genv LD_PRELOAD /path/liboptireduce-mpich.so";
constexpr const char *launcher_optireduce_run = "optireduce-run mpiexec.mpich -n 4";
#else
constexpr const char *launcher_usage = "mpirun -np N [-x LD_PRELOAD=/path/liboptireduce.so]";
constexpr const char *launcher_example = "mpirun -np 4 -x LD_PRELOAD=/path/liboptireduce.so";
constexpr const char *launcher_optireduce_run = "optireduce-run mpirun -np 4";
#endif

}  // namespace

void print_usage(std::FILE *to, const char *argv0) {
    std::fprintf(to,
                 "usage: %s %s [options]\n"
                 "       %s --help | --version\n"
                 "\n"
                 "e.g.   %s %s -m 4:64M\n"
                 "       %s %s -m 4:64M   (the same, library found for you)\n"
                 "\n",
                 launcher_usage, argv0, kToolName, launcher_example, kToolName, launcher_optireduce_run, kToolName);
    std::fprintf(
        to,
        "Times MPI_FLOAT MPI_SUM allreduce two ways in one run, alternating per size:\n"
        "  optireduce  MPI_Allreduce  (the optireduce engine when the library is preloaded)\n"
        "  native      PMPI_Allreduce (always the underlying MPI)\n"
        "\n"
        "  -m, --message-size MIN:MAX  bytes per rank, doubling from MIN (default 4:64M;\n"
        "                              also MAX or MIN:; suffixes k, M, G are powers of 1024)\n"
        "  -i, --iterations N          timed calls per size and mode (default: 1000 up to 1 MiB,\n"
        "                              then 20 x 64 MiB / size, at least 20)\n"
        "  -x, --warmup N              untimed calls before them (default: a tenth, at least 2)\n"
        "  -c, --validate              compare every result (both modes, so both see the same untimed\n"
        "                              work between calls) with PMPI_Allreduce of the same data:\n"
        "                              PASS if max |error| <= 1e-6 * sum over ranks of max|x|\n"
        "      --in-place              use MPI_IN_PLACE (the buffer is refilled before each call)\n"
        "      --compute-ms MS         before each call every rank computes (spins) for MS ms,\n"
        "                              +-25%% drawn per rank and call, as a training step does: ranks\n"
        "                              reach each allreduce at different times; only the call is timed\n"
        "      --skew-ms MS            plus up to MS ms more, uniform per rank and call (a slower rank)\n"
        "      --compute-sleep         the compute sleeps instead of spinning (a GPU job's host cores)\n"
        "      --csv FILE              rank 0 writes size,mode,iteration,latency_us per timed call\n"
        "      --progress              show a progress line (on stdout) although rank 0 sees no\n"
        "                              terminal, as under mpirun and mpiexec; without it, one shows on\n"
        "                              stderr only when that is a terminal\n"
        "      --threads N             N threads per rank (2..64; MPI_THREAD_MULTIPLE), each calling on its own\n"
        "                              MPI_Comm_dup at once, back to back: per call per thread and\n"
        "                              aggregate bandwidth of optireduce and native on N threads, then of\n"
        "                              both on one thread\n"
        "      --nonblocking           with --threads: each call is MPI_Iallreduce then at once MPI_Wait\n"
        "                              (overlap with compute: scripts/osu-iallreduce.sh runs OSU's\n"
        "                              osu_iallreduce)\n"
        "      --passthrough-overhead  instead: time N (-i, default 1000000) 1-element MPI_INT\n"
        "                              allreduces via MPI_Allreduce vs PMPI_Allreduce, in ns per call\n"
        "      --completion-overhead   instead: time N (-i, default 200000) completion calls on ordinary\n"
        "                              requests (MPI_Test, MPI_Wait, MPI_Testall, MPI_Waitall on completed\n"
        "                              or null requests; Isend/Irecv to self + MPI_Wait) via MPI_* vs\n"
        "                              PMPI_*, in ns per call\n"
        "  -h, --help                  this text\n"
        "      --version               the tool's version, one line (without starting MPI)\n"
        "\n"
        "Exit status (each rank's; mpirun and mpiexec return a non-zero one):\n"
        "  0  the run finished, with -c every result passed (or --help, --version)\n"
        "  1  -c found a wrong result, the --csv file could not be written, or --threads got no\n"
        "     MPI_THREAD_MULTIPLE\n"
        "  2  bad usage (an unknown option, a bad value, options that exclude each other)\n"
        "  other: an MPI error aborted the job and the launcher returned its own status\n");
}

}  // namespace optireduce::bench
