// optireduce-kernel-bench: how fast the codec kernels run on one core, next to how fast this
// machine copies memory, measured in the same run. A kernel that streams its data from memory
// cannot beat a copy of it, so the copy bandwidth is the physical limit and the ratio to it says
// how much of that limit a kernel reaches. Pure math: no MPI, no libfabric.
//
// Every timed result is also checked (the round trip returns the input, every instruction set
// gives the scalar path's bits): a fast kernel that computes the wrong thing must not pass.
#include "codec/block_layout.hpp"
#include "codec/estimators.hpp"
#include "codec/hadamard.hpp"
#include "codec/reduce.hpp"
#include "codec/simd.hpp"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace optireduce;
using Clock = std::chrono::steady_clock;

constexpr const char *kUsage =
    "usage: optireduce-kernel-bench [--quick] [--json] [--help]\n"
    "\n"
    "Single-core throughput of the codec kernels (Hadamard transform, sign flip, scaled sum,\n"
    "whole-vector encode/decode) for every instruction set this CPU supports, next to the memory\n"
    "copy bandwidth measured in the same run. Results are checked while timing; a wrong result\n"
    "fails the run.\n"
    "\n"
    "  --quick  small vectors, in cache (a few seconds; checks every path, numbers not meaningful)\n"
    "  --json   one JSON object on stdout; the text table goes to stderr\n"
    "  --help   this text\n"
    "\n"
    "Exit status: 0 ok, 1 a correctness check failed, 2 bad usage.\n";

constexpr int kRanks = 4;                 // the scaled sum's ranks and the layout's parts
constexpr std::size_t kMinLog = 10, kMaxLog = 16;
constexpr double kRoundTripTol = 1e-4;    // relative 2-norm error of a round trip
constexpr double kTrafficVectors = kRanks + 1;  // the scaled sum reads 4 vectors, writes 1
constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avx512};
// A run that got less of its core than this was slowed by other work (the process is single
// threaded and never sleeps, so it would be on the cpu all the time otherwise).
constexpr double kBusyShare = 0.95;
const hadamard::SignKey kKey{0x6b65726e656cull, 3, 17};

struct Settings {
    bool quick = false;
    bool json = false;
    std::size_t copy_bytes = std::size_t{256} << 20;  // far beyond the last-level cache a core uses
    std::size_t vec_floats = std::size_t{16} << 20;   // 64 MiB vectors: data comes from memory
    // Encode+decode is the slowest part (14 layouts per instruction set) and streams three
    // vectors (in, wire, out), so half the size keeps the run short and still far out of cache.
    std::size_t codec_floats = std::size_t{8} << 20;
    std::size_t hot_work = std::size_t{4} << 20;      // floats per timed run of a cache-resident loop
    int warmup = 1;
    int reps = 5;
};

[[noreturn]] __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...) {
    std::fflush(stdout);
    std::fputs("FAIL: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::exit(1);
}

// Page-aligned and written once before any timing, so neither misalignment nor first-touch page
// faults end up in a measurement.
class Buffer {
public:
    explicit Buffer(std::size_t floats) : n_(floats) {
        const std::size_t bytes = std::max<std::size_t>((floats * sizeof(float) + 4095) / 4096 * 4096, 4096);
        p_ = static_cast<float *>(std::aligned_alloc(4096, bytes));
        if (!p_) {
            std::fprintf(stderr, "optireduce-kernel-bench: cannot allocate %zu bytes\n", bytes);
            std::exit(2);
        }
        std::memset(p_, 0, bytes);
    }
    ~Buffer() { std::free(p_); }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    Buffer(Buffer &&o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
    float *data() { return p_; }
    const float *data() const { return p_; }
    std::size_t size() const { return n_; }
    std::size_t bytes() const { return n_ * sizeof(float); }

private:
    float *p_;
    std::size_t n_;
};

// Uniform in [-1, 1), from a counter hash: fast enough to fill hundreds of MiB, and the same on
// every run so failures reproduce.
void fill_random(Buffer &b, std::uint64_t seed) {
    float *x = b.data();
    for (std::size_t i = 0; i < b.size(); ++i) {
        std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
        z = (z ^ (z >> 29)) * 0xc4ceb9fe1a85ec53ull;
        x[i] = static_cast<float>(static_cast<std::int64_t>(z) >> 40) * 0x1p-23f;
    }
}

// The compiler must assume the buffer is read, so it cannot drop the work that wrote it.
inline void keep(const void *p) { asm volatile("" : : "r"(p) : "memory"); }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    const std::size_t k = t.size() / 2;
    return t.size() % 2 ? t[k] : (t[k - 1] + t[k]) / 2;
}

struct Timing {
    double median = 0, best = 0;
};

template <class F> Timing time_runs(const Settings &s, F &&run) {
    for (int i = 0; i < s.warmup; ++i) run();
    std::vector<double> t;
    for (int i = 0; i < s.reps; ++i) {
        const auto t0 = Clock::now();
        run();
        t.push_back(seconds_since(t0));
    }
    return {median(t), *std::min_element(t.begin(), t.end())};
}

double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double gbps(double bytes, double seconds) { return bytes / seconds / 1e9; }

double rel_error(const float *got, const float *want, std::size_t n) {
    double e = 0, w = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(got[i]) - want[i];
        e += d * d;
        w += static_cast<double>(want[i]) * want[i];
    }
    return std::sqrt(w > 0 ? e / w : e);
}

void check_round_trip(const char *what, const float *got, const float *want, std::size_t n) {
    const double e = rel_error(got, want, n);
    if (!(e <= kRoundTripTol)) fail("%s: relative error %.3g of the round trip exceeds %.0e", what, e, kRoundTripTol);
}

// Scalar is always measured first, so `want` holds its output.
void check_same_bits(const char *what, const float *got, const float *want, std::size_t n) {
    // Bits, not values: the paths must agree on NaN payloads and the sign of zero too.
    if (std::memcmp(got, want, n * sizeof(float)) == 0) return;  // NOLINT(bugprone-suspicious-memory-comparison)
    std::size_t i = 0;
    while (std::memcmp(got + i, want + i, sizeof(float)) == 0) ++i;  // NOLINT(bugprone-suspicious-memory-comparison)
    fail("%s: differs from the scalar path at element %zu (%.9g, scalar %.9g)", what, i, got[i], want[i]);
}

std::size_t l2_bytes() {
    const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? static_cast<std::size_t>(v) : std::size_t{256} << 10;  // the smallest L2 in use
}

// Floats per array for a loop over `arrays` arrays that together fill half of L2, leaving the
// other half for the rest of what the loop touches: hot, but not L1-only.
std::size_t hot_floats(int arrays) {
    const std::size_t n = l2_bytes() / 2 / static_cast<std::size_t>(arrays) / sizeof(float);
    return std::max<std::size_t>(n / 64 * 64, 64);
}

// ---- results ---------------------------------------------------------------------------------

struct CopyRow {
    std::size_t bytes = 0;
    Timing gbps;  // GB/s of the median and the best run
};
struct FwhtRow {
    Isa isa;
    std::size_t block;
    double gbps, hot_gbps;
};
struct SignRow {
    Isa isa;
    double gbps, hot_gbps;
};
struct SumRow {
    const char *kernel;
    const char *isa;
    double out_gbps, traffic_gbps, hot_out_gbps;
};
struct CodecRow {
    Isa isa;
    std::size_t max_block, block;
    bool interleave;
    double enc_gbps, dec_gbps, gbps;
};

struct Results {
    std::vector<Isa> isas;
    int cpu = -1;
    double cpu_share = 1;  // CPU time / wall time of the whole run
    CopyRow copy_mem, copy_l2;
    std::vector<FwhtRow> fwht;
    std::vector<SignRow> sign;
    std::vector<SumRow> sum;
    std::vector<CodecRow> codec;
    // What every ratio divides by: the best memory copy.
    double copy() const { return copy_mem.gbps.best; }
};

// ---- measurements ----------------------------------------------------------------------------

// `total` bytes per timed run, so a small buffer is copied often enough to time.
CopyRow measure_copy(const Settings &s, std::size_t bytes, std::size_t total) {
    Buffer src(bytes / sizeof(float)), dst(bytes / sizeof(float));
    fill_random(src, 1);
    const std::size_t times = std::max<std::size_t>(total / bytes, 1);
    const Timing t = time_runs(s, [&] {
        for (std::size_t i = 0; i < times; ++i) {
            std::memcpy(dst.data(), src.data(), bytes);
            keep(dst.data());
        }
    });
    if (std::memcmp(dst.data(), src.data(), bytes) != 0) fail("memcpy of %zu bytes differs from its source", bytes);
    const double moved = static_cast<double>(times * bytes);
    return {bytes, {gbps(moved, t.median), gbps(moved, t.best)}};
}

// The better of two measurements: others sharing the machine can only slow a copy down.
CopyRow better(const CopyRow &a, const CopyRow &b) { return a.gbps.best >= b.gbps.best ? a : b; }

void measure_fwht(const Settings &s, Results &r) {
    const std::size_t n = s.vec_floats;
    Buffer ref(n), x(n), want(n);
    fill_random(ref, 2);
    for (std::size_t k = kMinLog; k <= kMaxLog; ++k) {
        const std::size_t B = std::size_t{1} << k;
        Buffer hot(B), hot_want(B);
        for (const Isa isa : r.isas) {
            std::memcpy(x.data(), ref.data(), ref.bytes());
            const Timing t = time_runs(s, [&] {
                for (std::size_t b = 0; b < n; b += B) {
                    hadamard::fwht(x.data() + b, B, isa);
                    hadamard::fwht(x.data() + b, B, isa);
                }
                keep(x.data());
            });
            // One block again and again: what the kernel does when memory is not the limit.
            std::memcpy(hot.data(), ref.data(), hot.bytes());
            const std::size_t iters = std::max<std::size_t>(s.hot_work / B, 1);
            const Timing th = time_runs(s, [&] {
                for (std::size_t i = 0; i < iters; ++i) {
                    hadamard::fwht(hot.data(), B, isa);
                    hadamard::fwht(hot.data(), B, isa);
                }
                keep(hot.data());
            });
            char what[64];
            std::snprintf(what, sizeof what, "fwht %s block %zu", to_string(isa), B);
            // Every run applied forward+inverse once more; after a few the error is still tiny.
            // (Not so for the thousands of the in-L2 loop, so that one is only compared bitwise.)
            check_round_trip(what, x.data(), ref.data(), n);
            if (isa == Isa::scalar) {
                std::memcpy(want.data(), x.data(), x.bytes());
                std::memcpy(hot_want.data(), hot.data(), hot.bytes());
            } else {
                check_same_bits(what, x.data(), want.data(), n);
                check_same_bits(what, hot.data(), hot_want.data(), B);
            }
            r.fwht.push_back({isa, B, gbps(static_cast<double>(x.bytes()), t.median),
                              gbps(static_cast<double>(iters * hot.bytes()), th.median)});
        }
    }
}

void measure_sign(const Settings &s, Results &r) {
    const std::size_t n = s.vec_floats, hn = hot_floats(2);
    Buffer src(n), dst(n), want(n), hsrc(hn), hdst(hn), hwant(hn);
    fill_random(src, 3);
    std::memcpy(hsrc.data(), src.data(), hsrc.bytes());
    // The specification, independently of every path: element i flips iff its bit is set.
    const auto check_signs = [&](const float *got) {
        for (std::size_t i = 0; i < n; ++i) {
            std::uint32_t a, b;
            std::memcpy(&a, &src.data()[i], 4);
            std::memcpy(&b, &got[i], 4);
            const std::uint64_t bits = hadamard::sign_word(kKey, 0, i / 64);
            if ((a ^ b) != static_cast<std::uint32_t>((bits >> (i % 64)) & 1u) << 31)
                fail("signed_copy scalar: element %zu is not its source with the keyed sign", i);
        }
    };
    const std::size_t iters = std::max<std::size_t>(s.hot_work / hn, 1);
    for (const Isa isa : r.isas) {
        // The whole vector in one call: signs are hashed per 64 elements, so how the vector is
        // cut into blocks does not change the work.
        const Timing t = time_runs(s, [&] {
            hadamard::signed_copy(dst.data(), src.data(), n, kKey, 0, isa);
            keep(dst.data());
        });
        const Timing th = time_runs(s, [&] {
            for (std::size_t i = 0; i < iters; ++i) {
                hadamard::signed_copy(hdst.data(), hsrc.data(), hn, kKey, 0, isa);
                keep(hdst.data());
            }
        });
        char what[64];
        std::snprintf(what, sizeof what, "signed_copy %s", to_string(isa));
        if (isa == Isa::scalar) {
            check_signs(dst.data());
            std::memcpy(want.data(), dst.data(), dst.bytes());
            std::memcpy(hwant.data(), hdst.data(), hdst.bytes());
        } else {
            check_same_bits(what, dst.data(), want.data(), n);
            check_same_bits(what, hdst.data(), hwant.data(), hn);
        }
        r.sign.push_back({isa, gbps(static_cast<double>(dst.bytes()), t.median),
                          gbps(static_cast<double>(iters * hdst.bytes()), th.median)});
    }
}

void measure_sum(const Settings &s, Results &r) {
    const std::size_t n = s.vec_floats, hn = hot_floats(kRanks + 1);
    std::vector<Buffer> in, hin;
    for (int k = 0; k < kRanks; ++k) {
        in.emplace_back(n);
        fill_random(in.back(), 10 + static_cast<std::uint64_t>(k));
        hin.emplace_back(hn);
        std::memcpy(hin.back().data(), in.back().data(), hin.back().bytes());
    }
    Buffer dst(n), want(n), hdst(hn), hwant(hn);
    const std::array<const float *, kRanks - 1> peers{in[1].data(), in[2].data(), in[3].data()};
    const std::array<const float *, kRanks - 1> hpeers{hin[1].data(), hin[2].data(), hin[3].data()};
    const std::array<const float *, kRanks> all{in[0].data(), in[1].data(), in[2].data(), in[3].data()};
    const std::array<const float *, kRanks> hall{hin[0].data(), hin[1].data(), hin[2].data(), hin[3].data()};
    const double out_bytes = static_cast<double>(dst.bytes());
    const std::size_t iters = std::max<std::size_t>(s.hot_work / hn, 1);
    const auto add = [&](const char *kernel, const char *isa, Timing t, Timing th) {
        r.sum.push_back({kernel, isa, gbps(out_bytes, t.median), gbps(kTrafficVectors * out_bytes, t.median),
                         gbps(static_cast<double>(iters * hdst.bytes()), th.median)});
    };
    for (const Isa isa : r.isas) {
        const Timing t = time_runs(s, [&] {
            estimate_partial_sum(in[0].data(), peers, kRanks, dst.data(), n, isa);
            keep(dst.data());
        });
        const Timing th = time_runs(s, [&] {
            for (std::size_t i = 0; i < iters; ++i) {
                estimate_partial_sum(hin[0].data(), hpeers, kRanks, hdst.data(), hn, isa);
                keep(hdst.data());
            }
        });
        char what[64];
        std::snprintf(what, sizeof what, "estimate_partial_sum %s", to_string(isa));
        if (isa == Isa::scalar) {
            // The definition, own + (ranks - 1) / m * sum(peers), in the documented order; the
            // tolerance only allows for how the compiler may round this reference. The paths
            // themselves must agree exactly.
            const float scale = static_cast<float>(kRanks - 1) / static_cast<float>(peers.size());
            for (std::size_t i = 0; i < n; ++i) {
                const float e = in[0].data()[i] + ((peers[0][i] + peers[1][i]) + peers[2][i]) * scale;
                if (!(std::fabs(dst.data()[i] - e) <= 1e-6f * (1 + std::fabs(e))))
                    fail("%s: element %zu is %.9g, expected %.9g", what, i, dst.data()[i], e);
            }
            std::memcpy(want.data(), dst.data(), dst.bytes());
            std::memcpy(hwant.data(), hdst.data(), hdst.bytes());
        } else {
            check_same_bits(what, dst.data(), want.data(), n);
            check_same_bits(what, hdst.data(), hwant.data(), hn);
        }
        add("estimate_partial_sum", to_string(isa), t, th);
    }
    // The plain sum of the same four vectors, for comparison: what the scaled sum adds to it.
    const Timing t = time_runs(s, [&] {
        sum_in_order(all, dst.data(), n);
        keep(dst.data());
    });
    const Timing th = time_runs(s, [&] {
        for (std::size_t i = 0; i < iters; ++i) {
            sum_in_order(hall, hdst.data(), hn);
            keep(hdst.data());
        }
    });
    for (std::size_t i = 0; i < n; ++i) {
        const float e = ((all[0][i] + all[1][i]) + all[2][i]) + all[3][i];
        if (std::memcmp(&dst.data()[i], &e, sizeof e) != 0)  // NOLINT(bugprone-suspicious-memory-comparison): bits
            fail("sum_in_order: element %zu is %.9g, expected %.9g", i, dst.data()[i], e);
    }
    add("sum_in_order (4 srcs)", "baseline", t, th);
}

void measure_codec(const Settings &s, Results &r) {
    const std::size_t n = s.codec_floats;
    Buffer in(n), out(n), want_out(n);
    fill_random(in, 20);
    const double bytes = static_cast<double>(in.bytes());
    for (std::size_t k = kMinLog; k <= kMaxLog; ++k) {
        for (const bool interleave : {true, false}) {
            BlockLayout l = plan_layout(n, kRanks, true, std::size_t{1} << k);
            l.interleave = interleave;
            Buffer wire(l.padded), want_wire(l.padded);
            for (const Isa isa : r.isas) {
                std::vector<double> te, td, ts;
                for (int i = 0; i < s.warmup + s.reps; ++i) {
                    const auto t0 = Clock::now();
                    encode(l, in.data(), wire.data(), kKey, isa);
                    keep(wire.data());
                    const double e = seconds_since(t0);
                    const auto t1 = Clock::now();
                    decode(l, wire.data(), out.data(), kKey, isa);
                    keep(out.data());
                    const double d = seconds_since(t1);
                    if (i < s.warmup) continue;
                    te.push_back(e);
                    td.push_back(d);
                    ts.push_back(e + d);
                }
                char what[96];
                std::snprintf(what, sizeof what, "encode/decode %s block %zu interleave %s", to_string(isa), l.block,
                              interleave ? "on" : "off");
                check_round_trip(what, out.data(), in.data(), n);
                if (isa == Isa::scalar) {
                    std::memcpy(want_wire.data(), wire.data(), wire.bytes());
                    std::memcpy(want_out.data(), out.data(), out.bytes());
                } else {
                    check_same_bits(what, wire.data(), want_wire.data(), l.padded);
                    check_same_bits(what, out.data(), want_out.data(), n);
                }
                r.codec.push_back({isa, std::size_t{1} << k, l.block, interleave, gbps(bytes, median(te)),
                                   gbps(bytes, median(td)), gbps(bytes, median(ts))});
            }
        }
    }
}

// ---- output ----------------------------------------------------------------------------------

int log2_of(std::size_t b) { return std::countr_zero(b); }

void render_text(FILE *out, const Settings &s, const Results &r) {
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
                 "  in-L2         the same kernel looping on data that stays in L2 (%zu KiB): what it does\n"
                 "                when memory is not the limit. Far above the streaming figure: memory-bound.\n",
                 s.reps, s.warmup, s.copy_bytes >> 20, l2_bytes() >> 10);

    std::fprintf(out, "\n== memory copy (memcpy) ==\n%-8s %12s %10s %12s\n", "buffer", "bytes", "best GB/s",
                 "median GB/s");
    std::fprintf(out, "%-8s %12zu %10.2f %12.2f\n", "memory", r.copy_mem.bytes, r.copy_mem.gbps.best,
                 r.copy_mem.gbps.median);
    std::fprintf(out, "%-8s %12zu %10.2f %12.2f\n", "in L2", r.copy_l2.bytes, r.copy_l2.gbps.best,
                 r.copy_l2.gbps.median);

    std::fprintf(out, "\n== FWHT forward+inverse (two fwht calls per block), %zu MiB vector block by block ==\n",
                 s.vec_floats * sizeof(float) >> 20);
    std::fprintf(out, "%-8s %-7s %9s %7s %11s\n", "block", "isa", "GB/s", "x copy", "in-L2 GB/s");
    for (const FwhtRow &f : r.fwht)
        std::fprintf(out, "2^%-6d %-7s %9.2f %7.2f %11.2f\n", log2_of(f.block), to_string(f.isa), f.gbps,
                     f.gbps / r.copy(), f.hot_gbps);

    std::fprintf(out, "\n== sign flip (signed_copy, out of place), %zu MiB vector ==\n",
                 s.vec_floats * sizeof(float) >> 20);
    std::fprintf(out, "%-7s %9s %7s %11s\n", "isa", "GB/s", "x copy", "in-L2 GB/s");
    for (const SignRow &g : r.sign)
        std::fprintf(out, "%-7s %9.2f %7.2f %11.2f\n", to_string(g.isa), g.gbps, g.gbps / r.copy(), g.hot_gbps);

    std::fprintf(out, "\n== scaled sum (estimate_partial_sum: own + 3 peers, ranks=4, m=3), %zu MiB vectors ==\n",
                 s.vec_floats * sizeof(float) >> 20);
    std::fprintf(out, "%-22s %-8s %9s %13s %13s %15s\n", "kernel", "isa", "out GB/s", "traffic GB/s",
                 "x copy traf.", "in-L2 out GB/s");
    for (const SumRow &u : r.sum)
        std::fprintf(out, "%-22s %-8s %9.2f %13.2f %13.2f %15.2f\n", u.kernel, u.isa, u.out_gbps, u.traffic_gbps,
                     u.traffic_gbps / (2 * r.copy()), u.hot_out_gbps);

    std::fprintf(out, "\n== whole-vector encode+decode (block_layout, parts=%d, transform on), %zu MiB vector ==\n",
                 kRanks, s.codec_floats * sizeof(float) >> 20);
    std::fprintf(out, "%-9s %-7s %-10s %-7s %9s %9s %13s %7s\n", "max block", "block", "interleave", "isa",
                 "enc GB/s", "dec GB/s", "enc+dec GB/s", "x copy");
    for (const CodecRow &c : r.codec)
        std::fprintf(out, "2^%-7d 2^%-5d %-10s %-7s %9.2f %9.2f %13.2f %7.2f\n", log2_of(c.max_block),
                     log2_of(c.block), c.interleave ? "on" : "off", to_string(c.isa), c.enc_gbps, c.dec_gbps, c.gbps,
                     c.gbps / r.copy());

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

void append(std::string &j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void append(std::string &j, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    j += buf;
}

std::string render_json(const Settings &s, const Results &r) {
    std::string j = "{\"tool\":\"optireduce-kernel-bench\"";
    append(j, ",\"quick\":%s,\"cpu\":%d,\"cpu_share\":%.3f,\"warmup\":%d,\"reps\":%d,\"l2_bytes\":%zu",
           s.quick ? "true" : "false", r.cpu, r.cpu_share, s.warmup, s.reps, l2_bytes());
    j += ",\"isa_supported\":{";
    for (const Isa isa : kAllIsas)
        append(j, "%s\"%s\":%s", isa == Isa::scalar ? "" : ",", to_string(isa), isa_supported(isa) ? "true" : "false");
    j += "}";
    const auto copy = [&](const char *key, const CopyRow &c) {
        append(j, ",\"%s\":{\"bytes\":%zu,\"best_gbps\":%.3f,\"median_gbps\":%.3f}", key, c.bytes, c.gbps.best,
               c.gbps.median);
    };
    copy("copy_memory", r.copy_mem);
    copy("copy_l2", r.copy_l2);
    append(j, ",\"fwht\":{\"vector_bytes\":%zu,\"rows\":[", s.vec_floats * sizeof(float));
    for (std::size_t i = 0; i < r.fwht.size(); ++i) {
        const FwhtRow &f = r.fwht[i];
        append(j, "%s{\"isa\":\"%s\",\"block\":%zu,\"gbps\":%.3f,\"ratio_copy\":%.4f,\"l2_gbps\":%.3f}", i ? "," : "",
               to_string(f.isa), f.block, f.gbps, f.gbps / r.copy(), f.hot_gbps);
    }
    append(j, "]},\"sign_flip\":{\"vector_bytes\":%zu,\"rows\":[", s.vec_floats * sizeof(float));
    for (std::size_t i = 0; i < r.sign.size(); ++i) {
        const SignRow &g = r.sign[i];
        append(j, "%s{\"isa\":\"%s\",\"gbps\":%.3f,\"ratio_copy\":%.4f,\"l2_gbps\":%.3f}", i ? "," : "",
               to_string(g.isa), g.gbps, g.gbps / r.copy(), g.hot_gbps);
    }
    append(j, "]},\"scaled_sum\":{\"vector_bytes\":%zu,\"traffic_vectors\":%g,\"rows\":[",
           s.vec_floats * sizeof(float), kTrafficVectors);
    for (std::size_t i = 0; i < r.sum.size(); ++i) {
        const SumRow &u = r.sum[i];
        append(j,
               "%s{\"kernel\":\"%s\",\"isa\":\"%s\",\"out_gbps\":%.3f,\"traffic_gbps\":%.3f,"
               "\"ratio_copy_traffic\":%.4f,\"l2_out_gbps\":%.3f}",
               i ? "," : "", u.kernel, u.isa, u.out_gbps, u.traffic_gbps, u.traffic_gbps / (2 * r.copy()),
               u.hot_out_gbps);
    }
    append(j, "]},\"encode_decode\":{\"vector_bytes\":%zu,\"parts\":%d,\"rows\":[", s.codec_floats * sizeof(float),
           kRanks);
    for (std::size_t i = 0; i < r.codec.size(); ++i) {
        const CodecRow &c = r.codec[i];
        append(j,
               "%s{\"isa\":\"%s\",\"max_block\":%zu,\"block\":%zu,\"interleave\":%s,\"encode_gbps\":%.3f,"
               "\"decode_gbps\":%.3f,\"gbps\":%.3f,\"ratio_copy\":%.4f}",
               i ? "," : "", to_string(c.isa), c.max_block, c.block, c.interleave ? "true" : "false", c.enc_gbps,
               c.dec_gbps, c.gbps, c.gbps / r.copy());
    }
    j += "]},\"checks\":\"passed\"}";
    return j;
}

}  // namespace

int main(int argc, char **argv) {
    Settings s;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            s.quick = true;
        } else if (std::strcmp(argv[i], "--json") == 0) {
            s.json = true;
        } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(kUsage, stdout);
            return 0;
        } else {
            std::fprintf(stderr, "optireduce-kernel-bench: unknown argument '%s'\n\n%s", argv[i], kUsage);
            return 2;
        }
    }
    if (s.quick) {
        // Still every block size, layout and instruction set, so the smoke test checks every path.
        s.copy_bytes = std::size_t{16} << 20;
        s.vec_floats = s.codec_floats = std::size_t{1} << 20;
        s.hot_work = std::size_t{1} << 18;
    }

    Results r;
    // One core, and always the same one: a migration mid-run would leave the data's cache behind.
    r.cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (r.cpu >= 0) CPU_SET(r.cpu, &set);
    if (r.cpu < 0 || sched_setaffinity(0, sizeof set, &set) != 0) r.cpu = -1;
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
    r.copy_mem = better(r.copy_mem, measure_copy(s, s.copy_bytes, s.copy_bytes));
    r.copy_l2 = better(r.copy_l2, measure_copy(s, l2_copy, s.copy_bytes / 4));
    r.cpu_share = (cpu_seconds() - cpu0) / seconds_since(wall0);

    FILE *out = s.json ? stderr : stdout;
    render_text(out, s, r);
    std::fprintf(out, "\nPASS optireduce-kernel-bench: all correctness checks passed\n");
    std::fflush(out);
    if (s.json) std::printf("%s\n", render_json(s, r).c_str());
    return 0;
}
