#include "options.hpp"

#include "common/cli_numbers.hpp"

#include <climits>
#include <getopt.h>

#include <cstdlib>
#include <string_view>

namespace optireduce::bench {
namespace {

// --threads: more would only measure the scheduler.
constexpr long max_threads = 64;

// MPI_Allreduce takes an int count of floats.
constexpr std::size_t max_message_bytes = std::size_t{INT_MAX} * sizeof(float);

// Counts end up as MPI int counts (the cross-rank reduction of per-iteration timings).
std::optional<long> parse_count(std::string_view text, long minimum)
{
    const auto value = tools::parse_unsigned(text);
    if (!value || *value < static_cast<std::uint64_t>(minimum) || *value > INT_MAX)
        return std::nullopt;
    return static_cast<long>(*value);
}

// OSU's forms: "MIN:MAX", "MAX", "MIN:".
std::string parse_range(std::string_view text, Options& out)
{
    auto colon = text.find(':');
    std::string_view lo = colon == std::string_view::npos ? std::string_view{} : text.substr(0, colon);
    std::string_view hi = colon == std::string_view::npos ? text : text.substr(colon + 1);
    if (!lo.empty()) {
        auto v = tools::parse_size(lo);
        if (!v)
            return "bad minimum size '" + std::string(lo) + "'";
        out.min_bytes = *v;
    }
    if (!hi.empty()) {
        auto v = tools::parse_size(hi);
        if (!v)
            return "bad maximum size '" + std::string(hi) + "'";
        out.max_bytes = *v;
    }
    if (lo.empty() && hi.empty())
        return "empty size range";
    if (out.max_bytes < sizeof(float))
        return "maximum size is below one float (4 bytes)";
    if (out.min_bytes > out.max_bytes)
        return "minimum size is above the maximum";
    if (out.max_bytes > max_message_bytes)
        return "maximum size is above " + std::to_string(max_message_bytes) + " bytes";
    return {};
}

} // namespace

std::string parse_options(int argc, char** argv, Options& out)
{
    enum {
        opt_in_place = 256,
        opt_csv,
        opt_progress,
        opt_passthrough,
        opt_completion,
        opt_compute,
        opt_skew,
        opt_sleep,
        opt_nonblocking,
        opt_test_calls,
        opt_threads,
    };
    static const option long_options[] = {
        {"message-size", required_argument, nullptr, 'm'},
        {"iterations", required_argument, nullptr, 'i'},
        {"warmup", required_argument, nullptr, 'x'},
        {"validate", no_argument, nullptr, 'c'},
        {"in-place", no_argument, nullptr, opt_in_place},
        {"compute-ms", required_argument, nullptr, opt_compute},
        {"skew-ms", required_argument, nullptr, opt_skew},
        {"compute-sleep", no_argument, nullptr, opt_sleep},
        {"csv", required_argument, nullptr, opt_csv},
        {"progress", no_argument, nullptr, opt_progress},
        {"passthrough-overhead", no_argument, nullptr, opt_passthrough},
        {"completion-overhead", no_argument, nullptr, opt_completion},
        {"nonblocking", no_argument, nullptr, opt_nonblocking},
        {"test-calls", required_argument, nullptr, opt_test_calls},
        {"threads", required_argument, nullptr, opt_threads},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    opterr = 0; // every rank parses; the caller reports once, from rank 0
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+:m:i:x:ch", long_options, nullptr)) != -1) {
        switch (c) {
        case 'm':
            if (auto err = parse_range(optarg, out); !err.empty())
                return "-m: " + err;
            break;
        case 'i':
            out.iterations = parse_count(optarg, 1);
            if (!out.iterations)
                return "-i: expected an integer from 1 to 2^31-1, got '" + std::string(optarg) + "'";
            break;
        case 'x':
            out.warmup = parse_count(optarg, 0);
            if (!out.warmup)
                return "-x: expected an integer from 0 to 2^31-1, got '" + std::string(optarg) + "'";
            break;
        case 'c':
            out.validate = true;
            break;
        case opt_in_place:
            out.in_place = true;
            break;
        case opt_csv:
            out.csv_path = optarg;
            break;
        case opt_compute:
        case opt_skew: {
            const char* name = c == opt_compute ? "--compute-ms" : "--skew-ms";
            double& ms = c == opt_compute ? out.compute_ms : out.skew_ms;
            char* end = nullptr;
            ms = std::strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(ms >= 0 && ms <= 60000))
                return std::string(name) + ": expected milliseconds from 0 to 60000, got '" + optarg + "'";
            break;
        }
        case opt_sleep:
            out.compute_sleep = true;
            break;
        case opt_progress:
            out.progress = true;
            break;
        case opt_passthrough:
            out.passthrough_overhead = true;
            break;
        case opt_completion:
            out.completion_overhead = true;
            break;
        case opt_nonblocking:
            out.nonblocking = true;
            break;
        case opt_test_calls: {
            auto calls = parse_count(optarg, 0);
            if (!calls)
                return "--test-calls: expected an integer from 0 to 2^31-1, got '" + std::string(optarg) + "'";
            out.test_calls = *calls;
            break;
        }
        case opt_threads: {
            auto threads = parse_count(optarg, 2);
            if (!threads || *threads > max_threads)
                return "--threads: expected an integer from 2 to " + std::to_string(max_threads) + ", got '" +
                       std::string(optarg) + "'";
            out.threads = *threads;
            break;
        }
        case 'h':
            out.help = true;
            break;
        case ':':
            return std::string("option needs a value: ") + argv[optind - 1];
        default:
            return std::string("unknown option: ") + argv[optind - 1];
        }
    }
    if (optind < argc)
        return std::string("unexpected argument: ") + argv[optind];
    // Each of these is a run of its own; silently preferring one would time what was not asked.
    if (int(out.passthrough_overhead) + int(out.completion_overhead) + int(out.nonblocking) > 1)
        return "--passthrough-overhead, --completion-overhead and --nonblocking exclude each other";
    if (out.test_calls > 0 && !out.nonblocking)
        return "--test-calls needs --nonblocking";
    if (out.threads > 0) {
        if (out.passthrough_overhead || out.completion_overhead)
            return "--threads excludes --passthrough-overhead and --completion-overhead";
        // The threads' calls run back to back: their aggregate bandwidth is the point.
        if (out.compute_ms > 0 || out.skew_ms > 0 || out.compute_sleep || out.test_calls > 0)
            return "--threads times calls back to back: --compute-ms, --skew-ms, --compute-sleep and --test-calls "
                   "do not apply";
    }
    return {};
}

void print_usage(std::FILE* to, const char* argv0)
{
    std::fprintf(to,
        "usage: mpirun -np N [-x LD_PRELOAD=liboptireduce.so] %s [options]\n"
        "\n"
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
        "      --nonblocking           instead of MPI_Allreduce, time MPI_Iallreduce + compute + MPI_Wait\n"
        "                              (optireduce) vs PMPI_Iallreduce + compute + PMPI_Wait (native),\n"
        "                              as OSU's osu_iallreduce: first Iallreduce + Wait alone (Pure Comm.),\n"
        "                              then with the compute between them (Overall); Overlap(%%) =\n"
        "                              max(0, 100 - (Overall - Compute) / Pure Comm. * 100). The compute is\n"
        "                              --compute-ms (+-25%%, plus --skew-ms) or, without it, as OSU: the\n"
        "                              size's Pure Comm. time on every rank (plus --skew-ms)\n"
        "      --test-calls N          with --nonblocking: the compute in N slices, each followed by an\n"
        "                              MPI_Test (PMPI_Test) on the request (OSU's -t; default 0)\n"
        "      --threads N             N threads per rank (2..64; MPI_THREAD_MULTIPLE), each calling on its own\n"
        "                              MPI_Comm_dup at once, back to back (with --nonblocking: Iallreduce\n"
        "                              then Wait): per call per thread and aggregate bandwidth of optireduce\n"
        "                              and native on N threads, then of both on one thread\n"
        "      --passthrough-overhead  instead: time N (-i, default 1000000) 1-element MPI_INT\n"
        "                              allreduces via MPI_Allreduce vs PMPI_Allreduce, in ns per call\n"
        "      --completion-overhead   instead: time N (-i, default 200000) completion calls on ordinary\n"
        "                              requests (MPI_Test, MPI_Wait, MPI_Testall, MPI_Waitall on completed\n"
        "                              or null requests; Isend/Irecv to self + MPI_Wait) via MPI_* vs\n"
        "                              PMPI_*, in ns per call\n"
        "  -h, --help                  this text\n",
        argv0);
}

} // namespace optireduce::bench
