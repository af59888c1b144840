/* SPDX-License-Identifier: BSD-3-Clause */
/* See check_runner.h. */
#define _GNU_SOURCE
#include "check_runner.h"

#include "check_calls.h"
#include "optireduce/optireduce.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*get_stats_fn)(optireduce_stats_t *);

static get_stats_fn g_get_stats;
static int g_rank, g_size;
static char g_watchdog_msg[256];
static size_t g_watchdog_len;
static unsigned g_case_timeout_s = 240;

/* A hung case is a finding, not just a CTest timeout: name it before dying. */
static void on_watchdog(int sig) {
    (void)sig;
    ssize_t ignored = write(STDOUT_FILENO, g_watchdog_msg, g_watchdog_len);
    (void)ignored;
    _exit(4);
}

/* The library's own parser is the authority; the plain and K/M/G-suffixed forms the tests use
 * are enough here. */
static uint64_t env_bytes(const char *name, uint64_t fallback) {
    const char *text = getenv(name);
    if (!text || !*text) return fallback;
    char *end = NULL;
    uint64_t v = strtoull(text, &end, 10);
    switch (*end) {
        case 'k': case 'K': v <<= 10; break;
        case 'm': case 'M': v <<= 20; break;
        case 'g': case 'G': v <<= 30; break;
        default: break;
    }
    return v;
}

int runner_init(void) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_get_stats = (get_stats_fn)dlsym(RTLD_DEFAULT, "optireduce_get_stats");
    g_env.have_library = g_get_stats != NULL;
    const char *expect = getenv("CHECK_EXPECT_ENGINE");
    g_env.expect_engine = expect && *expect ? atoi(expect) != 0 : g_env.have_library;
    g_env.min_bytes = env_bytes("OPTIREDUCE_MIN_BYTES", 65536);
    const char *timeout = getenv("CHECK_CASE_TIMEOUT");
    if (timeout && *timeout) g_case_timeout_s = (unsigned)atoi(timeout);
    signal(SIGALRM, on_watchdog);

    int missing = g_env.expect_engine && !g_env.have_library, any_missing = 0;
    PMPI_Allreduce(&missing, &any_missing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("allreduce_check: %d ranks, library %s, engine %s, min_bytes %" PRIu64 "\n",
               g_size, g_env.have_library ? "present" : "absent",
               g_env.expect_engine ? "expected" : "not expected", g_env.min_bytes);
        if (any_missing)
            printf("FAIL setup: CHECK_EXPECT_ENGINE=1 but optireduce_get_stats is not in the "
                   "process (LD_PRELOAD missing or the library failed to load)\n");
        fflush(stdout);
    }
    return any_missing;
}

static optireduce_stats_t snapshot(void) {
    optireduce_stats_t s;
    memset(&s, 0, sizeof s);
    if (g_get_stats && g_get_stats(&s) != 0) check_fail("optireduce_get_stats returned non-zero");
    return s;
}

static void check_delta(const char *what, uint64_t before, uint64_t after, uint64_t expected) {
    if (after - before != expected)
        check_fail("%s grew by %" PRIu64 ", expected %" PRIu64, what, after - before, expected);
}

static void check_stats(const optireduce_stats_t *b, const optireduce_stats_t *a) {
    const check_tally_t *t = &g_case_tally;
    check_delta("engine_calls", b->engine_calls, a->engine_calls, t->engine_calls);
    check_delta("engine_bytes", b->engine_bytes, a->engine_bytes, t->engine_bytes);
    check_delta("passthrough_calls", b->passthrough_calls, a->passthrough_calls,
                t->passthrough_calls);
    check_delta("fallback_calls", b->fallback_calls, a->fallback_calls, t->fallback_calls);
}

/* Rank 0 prints one line for the case, quoting the first failure of every failing rank. */
static int verdict(const char *name, double seconds) {
    enum { MSG = 384 };
    char mine[MSG];
    snprintf(mine, sizeof mine, "%s", check_failures() ? check_first_failure() : "");
    char *all = g_rank == 0 ? malloc((size_t)g_size * MSG) : NULL;
    PMPI_Gather(mine, MSG, MPI_CHAR, all, MSG, MPI_CHAR, 0, MPI_COMM_WORLD);
    int failed = check_failures() > 0, any_failed = 0;
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0) {
        if (!any_failed) {
            printf("PASS %s (%.2f s)\n", name, seconds);
        } else {
            /* Ranks usually fail the same way: each distinct message once, with its ranks. */
            printf("FAIL %s:", name);
            for (int r = 0; r < g_size; ++r) {
                const char *msg = all + (size_t)r * MSG;
                int seen = 0;
                for (int q = 0; q < r && !seen; ++q) seen = strcmp(all + (size_t)q * MSG, msg) == 0;
                if (!*msg || seen) continue;
                printf(" [rank %d", r);
                for (int q = r + 1; q < g_size; ++q)
                    if (strcmp(all + (size_t)q * MSG, msg) == 0) printf(",%d", q);
                printf("] %s;", msg);
            }
            printf("\n");
        }
        fflush(stdout);
    }
    free(all);
    return any_failed;
}

int run_case(const char *name, void (*body)(void)) {
    g_watchdog_len = (size_t)snprintf(g_watchdog_msg, sizeof g_watchdog_msg,
                                      "FAIL %s: rank %d made no progress for %u s (hang?)\n",
                                      name, g_rank, g_case_timeout_s);
    if (g_watchdog_len >= sizeof g_watchdog_msg) g_watchdog_len = sizeof g_watchdog_msg - 1;
    check_reset_failures();
    memset(&g_case_tally, 0, sizeof g_case_tally);
    PMPI_Barrier(MPI_COMM_WORLD);
    alarm(g_case_timeout_s);
    const double start = PMPI_Wtime();
    optireduce_stats_t before = snapshot();
    body();
    optireduce_stats_t after = snapshot();
    const double seconds = PMPI_Wtime() - start;
    alarm(0);
    if (g_get_stats) check_stats(&before, &after);
    return verdict(name, seconds);
}

void runner_summary(void) {
    uint64_t mine[4] = {g_run_tally.engine_calls, g_run_tally.passthrough_calls,
                        g_run_tally.fallback_calls, g_run_tally.engine_bytes};
    uint64_t *all = g_rank == 0 ? malloc(sizeof mine * (size_t)g_size) : NULL;
    PMPI_Gather(mine, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    optireduce_stats_t lib = snapshot();
    uint64_t lib_mine[6] = {lib.engine_calls,      lib.passthrough_calls, lib.fallback_calls,
                            lib.engine_bytes,      lib.comms_enabled,     lib.comms_fallback};
    uint64_t *lib_all = g_rank == 0 ? malloc(sizeof lib_mine * (size_t)g_size) : NULL;
    PMPI_Gather(lib_mine, 6, MPI_UINT64_T, lib_all, 6, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        uint64_t sum[4] = {0, 0, 0, 0};
        for (int r = 0; r < g_size; ++r) {
            const uint64_t *e = all + 4 * (size_t)r;
            for (int k = 0; k < 4; ++k) sum[k] += e[k];
            printf("EXPECTED_RANK rank=%d engine_calls=%" PRIu64 " passthrough_calls=%" PRIu64
                   " fallback_calls=%" PRIu64 " engine_bytes=%" PRIu64 "\n",
                   r, e[0], e[1], e[2], e[3]);
        }
        printf("EXPECTED_TOTALS ranks=%d engine_calls=%" PRIu64 " passthrough_calls=%" PRIu64
               " fallback_calls=%" PRIu64 " engine_bytes=%" PRIu64 "\n",
               g_size, sum[0], sum[1], sum[2], sum[3]);
        if (g_get_stats) {
            for (int r = 0; r < g_size; ++r) {
                const uint64_t *l = lib_all + 6 * (size_t)r;
                printf("LIBSTATS rank=%d engine_calls=%" PRIu64 " passthrough_calls=%" PRIu64
                       " fallback_calls=%" PRIu64 " engine_bytes=%" PRIu64
                       " comms_enabled=%" PRIu64 " comms_fallback=%" PRIu64 "\n",
                       r, l[0], l[1], l[2], l[3], l[4], l[5]);
            }
        }
        fflush(stdout);
    }
    free(all);
    free(lib_all);
}
