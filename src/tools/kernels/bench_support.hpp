// SPDX-License-Identifier: BSD-3-Clause
// What every kernel measurement shares: the run's settings, aligned buffers, the timing loop and
// the correctness checks that fail the run.
#pragma once

#include "codec/hadamard.hpp"
#include "codec/simd.hpp"
#include "common/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace optireduce::kernel_bench {

using Clock = std::chrono::steady_clock;

constexpr int kRanks = 4;  // the scaled sum's ranks and the layout's parts
constexpr std::size_t kMinLog = 10, kMaxLog = 16;
constexpr double kRoundTripTol = 1e-4;          // relative 2-norm error of a round trip
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
    std::size_t hot_work = std::size_t{4} << 20;  // floats per timed run of a cache-resident loop
    int warmup = 1;
    int reps = 5;
};

[[noreturn]] __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...);

// Page-aligned and written once before any timing, so neither misalignment nor first-touch page
// faults end up in a measurement.
class Buffer {
public:
    explicit Buffer(std::size_t floats) : n_(floats) {
        const std::size_t bytes = std::max<std::size_t>((floats * sizeof(float) + 4095) / 4096 * 4096, 4096);
        p_ = static_cast<float *>(std::aligned_alloc(4096, bytes));
        if (!p_) {
            std::fprintf(stderr, "optireduce-kernel-bench: cannot allocate %zu bytes\n", bytes);
            std::exit(1);  // 2 is bad usage
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
void fill_random(Buffer &b, std::uint64_t seed);

// The compiler must assume the buffer is read, so it cannot drop the work that wrote it.
inline void keep(const void *p) { asm volatile("" : : "r"(p) : "memory"); }

double seconds_since(Clock::time_point t0);
double cpu_seconds();
double gbps(double bytes, double seconds);

struct Timing {
    double median = 0, best = 0;
};

// s.reps timed runs after s.warmup untimed ones: their median and their best.
template <class F>
Timing time_runs(const Settings &s, F &&run) {
    for (int i = 0; i < s.warmup; ++i) run();
    std::vector<double> t;
    for (int i = 0; i < s.reps; ++i) {
        const auto t0 = Clock::now();
        run();
        t.push_back(seconds_since(t0));
    }
    return {tools::median(t), *std::min_element(t.begin(), t.end())};
}

void check_round_trip(const char *what, const float *got, const float *want, std::size_t n);
// Scalar is always measured first, so `want` holds its output.
void check_same_bits(const char *what, const float *got, const float *want, std::size_t n);

std::size_t l2_bytes();

// Floats per array for a loop over `arrays` arrays that together fill half of L2, leaving the
// other half for the rest of what the loop touches: hot, but not L1-only.
std::size_t hot_floats(int arrays);

}  // namespace optireduce::kernel_bench
