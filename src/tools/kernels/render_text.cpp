// SPDX-License-Identifier: BSD-3-Clause
#include "render.hpp"

#include <bit>
#include <cstring>

namespace optireduce::kernel_bench {
namespace {

int log2_of(std::size_t b) { return std::countr_zero(b); }

std::size_t mib(std::size_t floats) { return floats * sizeof(float) >> 20; }

void preamble(std::FILE *out, const Settings &s, const Results &r) {
    std::fprintf(out, "optireduce-kernel-bench: codec kernels on one thread");
    if (r.cpu >= 0)
        std::fprintf(out, " pinned to cpu %d", r.cpu);
    else
        std::fprintf(out, " (not pinned)");
    std::fprintf(out, ", %s run, on the cpu %.1f%% of the time\n", s.quick ? "quick (numbers not meaningful)" : "full",
                 100 * r.cpu_share);
    if (r.cpu_share < kBusyShare)
        std::fprintf(out, "warning: other work shared this core, so the numbers below are too low\n");
    std::fprintf(out, "instruction sets:");
    for (const Isa isa : kAllIsas)
        std::fprintf(out, " %s%s", to_string(isa), isa_supported(isa) ? "" : " (not supported by this CPU, skipped)");
    std::fprintf(out,
                 "\n\n"
                 "GB/s is 1e9 bytes per second, the median of %d timed runs after %d warm-up (copy: the best).\n"
                 "  copy          bytes copied per second by memcpy (each byte read once and written once),\n"
                 "                best of runs before and after the kernels. The %zu MiB copy is the\n"
                 "                physical limit: every 'x copy' column divides by its best GB/s.\n"
                 "  FWHT, sign    bytes of the float vector per second (forward+inverse count as one pass).\n"
                 "  scaled sum    'out' counts the bytes of the output vector; 'traffic' counts what the\n"
                 "                kernel must move: 4 input vectors read + 1 output written = 5 x out. Its\n"
                 "                ratio divides by the copy's traffic, 2 x copy GB/s (read + write).\n"
                 "  encode+decode bytes of the input vector per second of encode plus decode.\n"
                 "  wire codec    bytes of the float vector per second, each way (4 per entry, also for\n"
                 "                decode, which writes them).\n"
                 "  in-L2         the same kernel looping on data that stays in L2 (%zu KiB): what it does\n"
                 "                when memory is not the limit. Far above the streaming figure: memory-bound.\n",
                 s.reps, s.warmup, s.copy_bytes >> 20, l2_bytes() >> 10);
}

void copy_table(std::FILE *out, const Results &r) {
    std::fprintf(out, "\n== memory copy (memcpy) ==\n%-8s %12s %10s %12s\n", "buffer", "bytes", "best GB/s",
                 "median GB/s");
    std::fprintf(out, "%-8s %12zu %10.2f %12.2f\n", "memory", r.copy_mem.bytes, r.copy_mem.gbps.best,
                 r.copy_mem.gbps.median);
    std::fprintf(out, "%-8s %12zu %10.2f %12.2f\n", "in L2", r.copy_l2.bytes, r.copy_l2.gbps.best,
                 r.copy_l2.gbps.median);
}

void fwht_and_sign_tables(std::FILE *out, const Settings &s, const Results &r) {
    std::fprintf(out, "\n== FWHT forward+inverse (two fwht calls per block), %zu MiB vector block by block ==\n",
                 mib(s.vec_floats));
    std::fprintf(out, "%-8s %-7s %9s %7s %11s\n", "block", "isa", "GB/s", "x copy", "in-L2 GB/s");
    for (const FwhtRow &f : r.fwht)
        std::fprintf(out, "2^%-6d %-7s %9.2f %7.2f %11.2f\n", log2_of(f.block), to_string(f.isa), f.gbps,
                     f.gbps / r.copy(), f.hot_gbps);

    std::fprintf(out, "\n== sign flip (signed_copy, out of place), %zu MiB vector ==\n", mib(s.vec_floats));
    std::fprintf(out, "%-7s %9s %7s %11s\n", "isa", "GB/s", "x copy", "in-L2 GB/s");
    for (const SignRow &g : r.sign)
        std::fprintf(out, "%-7s %9.2f %7.2f %11.2f\n", to_string(g.isa), g.gbps, g.gbps / r.copy(), g.hot_gbps);
}

void sum_table(std::FILE *out, const Settings &s, const Results &r) {
    std::fprintf(out, "\n== scaled sum (estimate_partial_sum: own + 3 peers, ranks=4, m=3), %zu MiB vectors ==\n",
                 mib(s.vec_floats));
    std::fprintf(out, "%-22s %-8s %9s %13s %13s %15s\n", "kernel", "isa", "out GB/s", "traffic GB/s", "x copy traf.",
                 "in-L2 out GB/s");
    for (const SumRow &u : r.sum)
        std::fprintf(out, "%-22s %-8s %9.2f %13.2f %13.2f %15.2f\n", u.kernel, u.isa, u.out_gbps, u.traffic_gbps,
                     u.traffic_gbps / (2 * r.copy()), u.hot_out_gbps);
}

void codec_table(std::FILE *out, const Settings &s, const Results &r) {
    std::fprintf(out, "\n== whole-vector encode+decode (block_layout, parts=%d, transform on), %zu MiB vector ==\n",
                 kRanks, mib(s.codec_floats));
    std::fprintf(out, "%-9s %-7s %-10s %-7s %9s %9s %13s %7s\n", "max block", "block", "interleave", "isa", "enc GB/s",
                 "dec GB/s", "enc+dec GB/s", "x copy");
    for (const CodecRow &c : r.codec)
        std::fprintf(out, "2^%-7d 2^%-5d %-10s %-7s %9.2f %9.2f %13.2f %7.2f\n", log2_of(c.max_block), log2_of(c.block),
                     c.interleave ? "on" : "off", to_string(c.isa), c.enc_gbps, c.dec_gbps, c.gbps, c.gbps / r.copy());
}

void wire_table(std::FILE *out, const Settings &s, const Results &r) {
    std::fprintf(out,
                 "\n== wire codec chunk by chunk (int8: stochastic rounding; bf16: to nearest), %zu MiB vector ==\n",
                 mib(s.vec_floats));
    std::fprintf(out, "%-6s %-8s %-6s %-7s %9s %9s %7s %7s %12s %12s\n", "codec", "payload", "chunk", "isa", "enc GB/s",
                 "dec GB/s", "enc x", "dec x", "in-L2 enc", "in-L2 dec");
    for (const WireRow &w : r.wire)
        std::fprintf(out, "%-6s %-8zu %-6zu %-7s %9.2f %9.2f %7.2f %7.2f %12.2f %12.2f\n", to_string(w.codec),
                     w.payload, w.chunk, to_string(w.isa), w.enc_gbps, w.dec_gbps, w.enc_gbps / r.copy(),
                     w.dec_gbps / r.copy(), w.hot_enc_gbps, w.hot_dec_gbps);
}

void summary(std::FILE *out, const Results &r) {
    std::fprintf(out, "\n== summary (ratios to the memory copy) ==\n");
    for (const Isa isa : r.isas) {
        const FwhtRow *best = nullptr;
        for (const FwhtRow &f : r.fwht)
            if (f.isa == isa && (!best || f.gbps > best->gbps)) best = &f;
        const SumRow *sum = nullptr;
        for (const SumRow &u : r.sum)
            if (std::strcmp(u.isa, to_string(isa)) == 0) sum = &u;
        if (best && sum)
            std::fprintf(out,
                         "%-7s FWHT fwd+inv best at block 2^%d: %.2f GB/s = %.2f x copy; "
                         "scaled sum traffic %.2f x\n",
                         to_string(isa), log2_of(best->block), best->gbps, best->gbps / r.copy(),
                         sum->traffic_gbps / (2 * r.copy()));
    }
}

}  // namespace

void render_text(std::FILE *out, const Settings &s, const Results &r) {
    preamble(out, s, r);
    copy_table(out, r);
    fwht_and_sign_tables(out, s, r);
    sum_table(out, s, r);
    codec_table(out, s, r);
    wire_table(out, s, r);
    summary(out, r);
}

}  // namespace optireduce::kernel_bench
