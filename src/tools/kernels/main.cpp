// SPDX-License-Identifier: BSD-3-Clause
// optireduce-kernel-bench: how fast the codec kernels run on one core, next to how fast this
// machine copies memory, measured in the same run. A kernel that streams its data from memory
// cannot beat a copy of it, so the copy bandwidth is the physical limit and the ratio to it says
// how much of that limit a kernel reaches. Pure math: no MPI, no libfabric.
//
// Every timed result is also checked (the round trip returns the input, or stays within the
// codec's error for the lossy wire codecs; every instruction set gives the scalar path's bits): a
// fast kernel that computes the wrong thing must not pass. One file per kernel family (copy,
// fwht, sign_flip, scaled_sum, encode_decode, wire_codec); this one is the command line and the
// order of the run.
#include "common/version.hpp"
#include "measure.hpp"
#include "render.hpp"

#include <sched.h>

#include <cstdio>
#include <cstring>

namespace {

using namespace optireduce;
using namespace optireduce::kernel_bench;

constexpr const char *kUsage =
    "usage: optireduce-kernel-bench [--quick] [--json] [--help] [--version]\n"
    "\n"
    "Single-core throughput of the codec kernels (Hadamard transform, sign flip, scaled sum,\n"
    "whole-vector encode/decode, the int8 and bf16 wire codecs) for every instruction set this\n"
    "CPU supports, next to the memory copy bandwidth measured in the same run. Results are\n"
    "checked while timing; a wrong result fails the run.\n"
    "\n"
    "  --quick    small vectors, in cache (a few seconds; checks every path, numbers not meaningful)\n"
    "  --json     one JSON object on stdout; the text table goes to stderr\n"
    "  --help     this text\n"
    "  --version  the tool's version, one line\n"
    "\n"
    "Exit status:\n"
    "  0  every kernel ran and every check held (or --help, --version)\n"
    "  1  a correctness check failed (a FAIL line says which), or a buffer could not be allocated\n"
    "  2  bad usage (an unknown argument)\n";

// Exits on --help, on --version and on bad usage.
Settings parse_args(int argc, char **argv) {
    Settings s;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            s.quick = true;
        } else if (std::strcmp(argv[i], "--json") == 0) {
            s.json = true;
        } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (std::strcmp(argv[i], "--version") == 0) {
            tools::print_version("optireduce-kernel-bench");
            std::exit(0);
        } else {
            std::fprintf(stderr, "optireduce-kernel-bench: unknown argument '%s'\n\n%s", argv[i], kUsage);
            std::exit(2);
        }
    }
    if (s.quick) {
        // Still every block size, layout and instruction set, so the smoke test checks every path.
        s.copy_bytes = std::size_t{16} << 20;
        s.vec_floats = s.codec_floats = std::size_t{1} << 20;
        s.hot_work = std::size_t{1} << 18;
    }
    return s;
}

// One core, and always the same one: a migration mid-run would leave the data's cache behind.
int pin_to_current_cpu() {
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0) CPU_SET(cpu, &set);
    if (cpu < 0 || sched_setaffinity(0, sizeof set, &set) != 0) cpu = -1;
    return cpu;
}

}  // namespace

int main(int argc, char **argv) {
    const Settings s = parse_args(argc, argv);
    Results r;
    r.cpu = pin_to_current_cpu();
    for (const Isa isa : kAllIsas)
        if (isa_supported(isa)) r.isas.push_back(isa);

    const auto wall0 = Clock::now();
    const double cpu0 = cpu_seconds();
    const std::size_t l2_copy = hot_floats(2) * sizeof(float);
    r.copy_mem = measure_copy(s, s.copy_bytes, s.copy_bytes);
    r.copy_l2 = measure_copy(s, l2_copy, s.copy_bytes / 4);
    measure_fwht(s, r);
    measure_sign(s, r);
    measure_sum(s, r);
    measure_codec(s, r);
    measure_wire(s, r);
    r.copy_mem = better(r.copy_mem, measure_copy(s, s.copy_bytes, s.copy_bytes));
    r.copy_l2 = better(r.copy_l2, measure_copy(s, l2_copy, s.copy_bytes / 4));
    r.cpu_share = (cpu_seconds() - cpu0) / seconds_since(wall0);

    std::FILE *out = s.json ? stderr : stdout;
    render_text(out, s, r);
    std::fprintf(out, "\nPASS optireduce-kernel-bench: all correctness checks passed\n");
    std::fflush(out);
    if (s.json) std::fputs(render_json(s, r).c_str(), stdout);
    return 0;
}
