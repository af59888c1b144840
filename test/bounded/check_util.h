/* SPDX-License-Identifier: BSD-3-Clause */
/* What the bounded-mode check programs share: the CHECK macro, the library's counters through
 * dlsym (the programs are not linked against the library, it is preloaded), a clock. */
#ifndef OPTIREDUCE_TEST_CHECK_UTIL_H
#define OPTIREDUCE_TEST_CHECK_UTIL_H

#include "optireduce/optireduce.h"

#include <mpi.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank, g_size, g_failed;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            printf("FAIL [rank %d] ", g_rank);             \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
            fflush(stdout);                                \
            g_failed = 1;                                  \
        }                                                  \
    } while (0)

static inline optireduce_stats_t stats(void) {
    static int (*get)(optireduce_stats_t *);
    if (!get) *(void **)&get = dlsym(RTLD_DEFAULT, "optireduce_get_stats");
    optireduce_stats_t s;
    memset(&s, 0, sizeof s);
    if (get) get(&s);
    else CHECK(0, "optireduce_get_stats not found: is the library preloaded?");
    return s;
}

static inline double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Element i of operation op, the same on every rank: -7.8..7.8 in steps of 1/64, so the sum over
 * ranks is exact in float and any estimate the engine makes of it must be too. */
static inline float op_value(size_t i, int op) {
    return (float)((int)((i * 7 + (size_t)op * 13) % 1000) - 500) / 64.0f;
}

/* This process's resident memory (VmRSS), KiB; -1 if /proc cannot tell. */
static inline long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    if (f) fclose(f);
    return kib;
}

static inline double env_num(const char *name, double dflt) {
    const char *v = getenv(name);
    return v && *v ? atof(v) : dflt;
}

/* The slack a timing check allows on top of what the library promises (its deadlines and
 * straggler bound), for a loaded 2-core host: scaled by CHECK_SLACK_SCALE, which the sanitizer
 * runs raise for their slowdown (scripts/sanitize.sh). The promise itself is never scaled. */
static inline double slack_ms(double ms) { return ms * env_num("CHECK_SLACK_SCALE", 1); }

#endif
