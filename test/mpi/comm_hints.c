/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-communicator control: MPI_Info hints (MPI_Comm_set_info, MPI_Comm_dup_with_info) and the
 * optireduce_comm_enable switch.
 *
 *   comm_hints CASE...
 *
 * Run with the library preloaded, OPTIREDUCE_MIN_BYTES=0 and, except for the deadline case,
 * OPTIREDUCE_MODE=exact, so that every result can be compared with the exact sum (the data are
 * small integers). Each allreduce is checked against the library's counters (found with dlsym):
 * one engine call, or one fallback call. Cases:
 *
 *   switch    the "optireduce" hint off then on again, blocking and nonblocking calls
 *   min_bytes optireduce_min_bytes=1M sends a 64 KiB call to MPI where a communicator without
 *             hints runs it on the engine; set before and after the engine state exists
 *   dup       MPI_Comm_dup and MPI_Comm_idup keep the hints, MPI_Comm_dup_with_info replaces them
 *   api       optireduce_comm_enable off and on, its return values
 *   mismatch  ranks give optireduce_min_bytes different values: fallback (the test harness
 *             counts the one warning), then identical values turn the engine back on
 *   invalid   optireduce_max_loss=2 on every rank: fallback with one error (counted by the
 *             harness), the job goes on, and a valid value turns the engine back on
 *   deadline  bounded mode with every received datagram dropped: optireduce_timeout_ms pins the
 *             deadline (an operation takes at least that long) and optireduce_max_loss sets the
 *             loss budget, against OPTIREDUCE_TIMEOUT_MS=10 and OPTIREDUCE_MAX_LOSS=1 on a
 *             communicator without hints
 *
 * Prints "PASS case" or "FAIL case: why" per case on rank 0; exits non-zero on any failure. */
#define _GNU_SOURCE
#include "optireduce/optireduce.h"

#include <mpi.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*get_stats_fn)(optireduce_stats_t *);
typedef int (*last_op_fn)(int, optireduce_op_report_t *);
typedef int (*comm_enable_fn)(int, int);

static get_stats_fn g_get_stats;
static last_op_fn g_last_op;
static comm_enable_fn g_comm_enable;
static int g_rank, g_size, g_case_failed, g_failures;
static const char *g_case = "";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
    if (g_case_failed) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("FAIL %s: rank %d: %s\n", g_case, g_rank, msg);
    fflush(stdout);
    g_case_failed = 1;
}

enum path { ENGINE, FALLBACK, ANY };
static const char *path_name(enum path p) { return p == ENGINE ? "the engine" : "a fallback to MPI"; }

static float contribution(int rank, size_t i) { return (float)((int)(i % 97) - 40 + rank); }

/* One float SUM allreduce of n floats on comm, blocking or not: checks the counters' deltas say
 * it took `want`, and (exact) its result. Returns the call's duration in seconds. */
static double call(MPI_Comm comm, size_t n, int nonblocking, enum path want, int exact, const char *what) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    float *buf = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) buf[i] = contribution(rank, i);
    optireduce_stats_t s0, s1;
    g_get_stats(&s0);
    const double t0 = MPI_Wtime();
    if (nonblocking) {
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, comm);
    }
    const double seconds = MPI_Wtime() - t0;
    g_get_stats(&s1);
    const uint64_t engine = s1.engine_calls - s0.engine_calls, fallback = s1.fallback_calls - s0.fallback_calls;
    if (want != ANY && (engine != (want == ENGINE) || fallback != (want == FALLBACK)))
        fail("%s: expected %s, counters moved by engine_calls +%llu fallback_calls +%llu", what, path_name(want),
             (unsigned long long)engine, (unsigned long long)fallback);
    for (size_t i = 0; exact && i < n; ++i) {
        double sum = 0;
        for (int r = 0; r < size; ++r) sum += contribution(r, i);
        if ((double)buf[i] != sum) {
            fail("%s: element %zu is %g, expected %g", what, i, (double)buf[i], sum);
            break;
        }
    }
    free(buf);
    return seconds;
}

static const size_t k64KiB = 16384; /* floats */

/* An info object holding key=value (NULL key: empty). */
static MPI_Info info_with(const char *key, const char *value) {
    MPI_Info info;
    MPI_Info_create(&info);
    if (key) MPI_Info_set(info, key, value);
    return info;
}

static void set_hint(MPI_Comm comm, const char *key, const char *value) {
    MPI_Info info = info_with(key, value);
    if (MPI_Comm_set_info(comm, info) != MPI_SUCCESS) fail("MPI_Comm_set_info(%s=%s) failed", key, value);
    MPI_Info_free(&info);
}

static MPI_Comm dup_with(MPI_Comm comm, const char *key, const char *value) {
    MPI_Info info = info_with(key, value);
    MPI_Comm out = MPI_COMM_NULL;
    if (MPI_Comm_dup_with_info(comm, info, &out) != MPI_SUCCESS) fail("MPI_Comm_dup_with_info failed");
    MPI_Info_free(&info);
    return out;
}

static void case_switch(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    set_hint(c, "optireduce", "off");
    call(c, k64KiB, 0, FALLBACK, 1, "off, blocking");
    call(c, k64KiB, 1, FALLBACK, 1, "off, nonblocking");
    set_hint(c, "optireduce", "on");
    call(c, k64KiB, 0, ENGINE, 1, "on again, blocking");
    call(c, k64KiB, 1, ENGINE, 1, "on again, nonblocking");
    /* Off after the engine state exists, and a set_info without our keys changes nothing. */
    set_hint(c, "optireduce", "off");
    set_hint(c, "some_other_key", "1");
    call(c, k64KiB, 0, FALLBACK, 1, "off after setup");
    MPI_Comm_free(&c);
}

static void case_min_bytes(void) {
    MPI_Comm hinted = dup_with(MPI_COMM_WORLD, "optireduce_min_bytes", "1M"), plain;
    MPI_Comm_dup(MPI_COMM_WORLD, &plain);
    call(hinted, k64KiB, 0, FALLBACK, 1, "64 KiB under optireduce_min_bytes=1M");
    call(hinted, 4 * k64KiB * 4, 0, ENGINE, 1, "1 MiB under optireduce_min_bytes=1M");
    call(plain, k64KiB, 0, ENGINE, 1, "64 KiB without hints");
    /* The engine state of `plain` exists now: the hint applies to it from the next call on. */
    set_hint(plain, "optireduce_min_bytes", "1M");
    call(plain, k64KiB, 0, FALLBACK, 1, "64 KiB after set_info optireduce_min_bytes=1M");
    set_hint(plain, "optireduce_min_bytes", "0");
    call(plain, k64KiB, 0, ENGINE, 1, "64 KiB after set_info optireduce_min_bytes=0");
    MPI_Comm_free(&hinted);
    MPI_Comm_free(&plain);
}

static void case_dup(void) {
    MPI_Comm off = dup_with(MPI_COMM_WORLD, "optireduce", "off"), copy, replaced;
    call(off, k64KiB, 0, FALLBACK, 1, "dup_with_info optireduce=off");
    MPI_Comm_dup(off, &copy);
    call(copy, k64KiB, 0, FALLBACK, 1, "MPI_Comm_dup of an off communicator");
    /* MPI_Comm_idup copies the attributes too, once the request completed. */
    MPI_Comm icopy;
    MPI_Request req;
    MPI_Comm_idup(off, &icopy, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    call(icopy, k64KiB, 0, FALLBACK, 1, "MPI_Comm_idup of an off communicator");
    replaced = dup_with(off, NULL, NULL);
    call(replaced, k64KiB, 0, ENGINE, 1, "dup_with_info (no hints) of an off communicator");
    MPI_Comm_free(&replaced);
    MPI_Comm_free(&icopy);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&off);
}

static void case_api(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    const int f = MPI_Comm_c2f(c);
    int rc = g_comm_enable(f, 0);
    if (rc != 1) fail("optireduce_comm_enable(off) returned %d, expected 1 (was on)", rc);
    call(c, k64KiB, 0, FALLBACK, 1, "after optireduce_comm_enable(off)");
    rc = g_comm_enable(f, 1);
    if (rc != 0) fail("optireduce_comm_enable(on) returned %d, expected 0 (was off)", rc);
    call(c, k64KiB, 0, ENGINE, 1, "after optireduce_comm_enable(on)");
    rc = g_comm_enable(f, 0);
    call(c, k64KiB, 1, FALLBACK, 1, "nonblocking after optireduce_comm_enable(off) on a set-up communicator");
    if (g_comm_enable(f, rc) != 0) fail("optireduce_comm_enable did not report the switch it left off");
    call(c, k64KiB, 0, ENGINE, 1, "after restoring the switch");
    rc = g_comm_enable(MPI_Comm_c2f(MPI_COMM_NULL), 1);
    if (rc != -1) fail("optireduce_comm_enable(MPI_COMM_NULL) returned %d, expected -1", rc);
    MPI_Comm_free(&c);
}

static void case_mismatch(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    set_hint(c, "optireduce_min_bytes", g_rank == 0 ? "0" : "4K");
    call(c, k64KiB, 0, FALLBACK, 1, "optireduce_min_bytes differing across ranks");
    set_hint(c, "optireduce_min_bytes", "4K");
    call(c, k64KiB, 0, ENGINE, 1, "optireduce_min_bytes made identical");
    MPI_Comm_free(&c);
}

static void case_invalid(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    set_hint(c, "optireduce_max_loss", "2");
    call(c, k64KiB, 0, FALLBACK, 1, "invalid optireduce_max_loss");
    set_hint(c, "optireduce_max_loss", "0.5");
    call(c, k64KiB, 0, ENGINE, 1, "optireduce_max_loss fixed");
    MPI_Comm_free(&c);
}

static void case_deadline(void) {
    if (!g_last_op) {
        fail("optireduce_last_op not found");
        return;
    }
    MPI_Comm hinted = dup_with(MPI_COMM_WORLD, "optireduce_timeout_ms", "400"), plain;
    set_hint(hinted, "optireduce_max_loss", "0.5");
    MPI_Comm_dup(MPI_COMM_WORLD, &plain);
    optireduce_op_report_t r;
    /* Nothing arrives, so each phase ends at its deadline: never before 400 ms with the hint. */
    const double slow = call(hinted, k64KiB, 0, ENGINE, 0, "bounded, optireduce_timeout_ms=400");
    if (slow < 0.4) fail("an operation under optireduce_timeout_ms=400 took %.3f s", slow);
    if (g_last_op(MPI_Comm_c2f(hinted), &r) != 0 || r.path != 0 || !r.excess)
        fail("optireduce_max_loss=0.5: last op path %d, loss %.3f, excess %d (expected bounded, excess)", r.path,
             r.loss, r.excess);
    const double fast = call(plain, k64KiB, 0, ENGINE, 0, "bounded, OPTIREDUCE_TIMEOUT_MS=10");
    if (fast >= slow / 2)
        fail("without hints (OPTIREDUCE_TIMEOUT_MS=10) an operation took %.3f s, with the hint %.3f s", fast, slow);
    if (g_last_op(MPI_Comm_c2f(plain), &r) != 0 || r.path != 0 || r.excess)
        fail("OPTIREDUCE_MAX_LOSS=1: last op path %d, loss %.3f, excess %d (expected bounded, no excess)", r.path,
             r.loss, r.excess);
    MPI_Comm_free(&hinted);
    MPI_Comm_free(&plain);
}

static void run(const char *name, void (*body)(void)) {
    g_case = name;
    g_case_failed = 0;
    body();
    int failed = g_case_failed;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed) ++g_failures;
    else if (g_rank == 0) printf("PASS %s\n", name);
    fflush(stdout);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_get_stats = (get_stats_fn)dlsym(RTLD_DEFAULT, "optireduce_get_stats");
    g_last_op = (last_op_fn)dlsym(RTLD_DEFAULT, "optireduce_last_op");
    g_comm_enable = (comm_enable_fn)dlsym(RTLD_DEFAULT, "optireduce_comm_enable");
    if (!g_get_stats || !g_comm_enable) {
        if (g_rank == 0) printf("FAIL setup: the library is not loaded\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const struct {
        const char *name;
        void (*body)(void);
    } cases[] = {{"switch", case_switch},     {"min_bytes", case_min_bytes}, {"dup", case_dup},
                 {"api", case_api},           {"mismatch", case_mismatch},   {"invalid", case_invalid},
                 {"deadline", case_deadline}};
    for (int a = 1; a < argc; ++a) {
        size_t i = 0;
        while (i < sizeof cases / sizeof cases[0] && strcmp(cases[i].name, argv[a]) != 0) ++i;
        if (i == sizeof cases / sizeof cases[0]) {
            if (g_rank == 0) printf("FAIL setup: unknown case %s\n", argv[a]);
            ++g_failures;
            continue;
        }
        run(cases[i].name, cases[i].body);
    }
    MPI_Finalize();
    return g_failures ? 1 : 0;
}
