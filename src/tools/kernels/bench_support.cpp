// SPDX-License-Identifier: BSD-3-Clause
#include "bench_support.hpp"

#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace optireduce::kernel_bench {

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

void fill_random(Buffer &b, std::uint64_t seed) {
    float *x = b.data();
    for (std::size_t i = 0; i < b.size(); ++i) {
        std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
        z = (z ^ (z >> 29)) * 0xc4ceb9fe1a85ec53ull;
        x[i] = static_cast<float>(static_cast<std::int64_t>(z) >> 40) * 0x1p-23f;
    }
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double gbps(double bytes, double seconds) { return bytes / seconds / 1e9; }

namespace {

double rel_error(const float *got, const float *want, std::size_t n) {
    double e = 0, w = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(got[i]) - want[i];
        e += d * d;
        w += static_cast<double>(want[i]) * want[i];
    }
    return std::sqrt(w > 0 ? e / w : e);
}

}  // namespace

void check_round_trip(const char *what, const float *got, const float *want, std::size_t n) {
    const double e = rel_error(got, want, n);
    if (!(e <= kRoundTripTol)) fail("%s: relative error %.3g of the round trip exceeds %.0e", what, e, kRoundTripTol);
}

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

std::size_t hot_floats(int arrays) {
    const std::size_t n = l2_bytes() / 2 / static_cast<std::size_t>(arrays) / sizeof(float);
    return std::max<std::size_t>(n / 64 * 64, 64);
}

}  // namespace optireduce::kernel_bench
