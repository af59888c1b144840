/* SPDX-License-Identifier: BSD-3-Clause */
/* Ranks that die or stall in bounded mode: the others never wait longer than the straggler bound
 * plus the deadlines, and a stalled rank recovers. Run with the library preloaded (see
 * CMakeLists.txt); the bound and deadline come from the environment (OPTIREDUCE_TIMEOUT_MS,
 * OPTIREDUCE_STRAGGLER_MAX_MS), and each case allows every call 2 deadlines + the bound + 1 s of
 * slack for a loaded machine.
 *
 *   killed   the last rank SIGKILLs itself CHECK_KILL_AFTER_MS into an allreduce of 16 MiB (or,
 *            with a negative value, just before it): each survivor returns from that call and from one
 *            more within the allowance, prints "PASS killed" and leaves with _exit (what MPI does
 *            with a dead rank afterwards is MPI's business; mpirun runs with orte_enable_recovery
 *            so it does not kill the survivors first).
 *   stalls   rank 1 is stopped (SIGSTOP, its progress thread too) for CHECK_STALL_MS, three times,
 *            while the others keep calling: they keep within the allowance; once it is resumed it
 *            catches up, and afterwards every rank's results are within the loss budget again. */
#define _GNU_SOURCE
#include "check_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

static const size_t kFloats = 262144; /* 1 MiB */

static double allowance_ms(void) {
    const double deadline = env_num("OPTIREDUCE_TIMEOUT_MS", 0), bound = env_num("OPTIREDUCE_STRAGGLER_MAX_MS", 0);
    if (deadline <= 0 || bound <= 0) {
        CHECK(0, "set OPTIREDUCE_TIMEOUT_MS and OPTIREDUCE_STRAGGLER_MAX_MS: the allowance is derived from them");
        return 0;
    }
    return 2 * deadline + bound + slack_ms(1000);
}

/* Rank r contributes r + 1 + (i % 7): the exact sum is known everywhere. */
static void fill(float *in, size_t n) {
    for (size_t i = 0; i < n; ++i) in[i] = (float)(g_rank + 1 + (int)(i % 7));
}

/* Relative L2 error of out against the sum of every rank's contribution. */
static double rel_error(const float *out, size_t n) {
    double err = 0, norm = 0;
    for (size_t i = 0; i < n; ++i) {
        const double exact = (double)g_size * (g_size + 1) / 2 + (double)g_size * (double)(i % 7);
        err += (out[i] - exact) * (out[i] - exact);
        norm += exact * exact;
    }
    return sqrt(err / norm);
}

static double timed_allreduce(const float *in, float *out, size_t n) {
    const double t0 = now_ms();
    MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return now_ms() - t0;
}

/* ---- killed ---------------------------------------------------------------------------------- */
static double g_kill_after_ms;
static volatile int g_armed;

static void *killer(void *arg) {
    (void)arg;
    while (!g_armed) usleep(100);
    usleep((useconds_t)(g_kill_after_ms * 1000));
    kill(getpid(), SIGKILL);
    return NULL;
}

static void case_killed(void) {
    const double allowed = allowance_ms();
    g_kill_after_ms = env_num("CHECK_KILL_AFTER_MS", 3);
    const int victim = g_size - 1, warmup = 10;
    /* Large enough that the kill lands inside the victim's call (its transform and sends take
     * tens of milliseconds here), not after it. */
    const size_t n = 4 * kFloats;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    fill(in, n);
    for (int op = 0; op < warmup; ++op) timed_allreduce(in, out, n);
    CHECK(rel_error(out, n) < 1e-6, "warm-up result wrong before any fault (relative error %g)", rel_error(out, n));
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == victim) {
        if (g_kill_after_ms < 0) kill(getpid(), SIGKILL); /* dies before the call: a silent peer */
        pthread_t t;
        pthread_create(&t, NULL, killer, NULL);
        g_armed = 1;
        timed_allreduce(in, out, n);
        for (;;) pause(); /* the call may finish before the kill lands: die here then */
    }
    /* Survivors: the call the victim died in, and one after it (the victim is then silent from
     * the start, waited for up to the bound). */
    const double first = timed_allreduce(in, out, n);
    const double second = timed_allreduce(in, out, n);
    const optireduce_stats_t s = stats();
    printf("killed rank %d: the call the victim died in returned after %.1f ms, the next after %.1f ms (allowed "
           "%.0f ms each); %llu peers written off\n",
           g_rank, first, second, allowed, (unsigned long long)s.stragglers_written_off);
    CHECK(first <= allowed, "the call the victim died in took %.1f ms (allowed %.0f)", first, allowed);
    CHECK(second <= allowed, "the call after it took %.1f ms (allowed %.0f)", second, allowed);
    CHECK(s.stragglers_written_off > 0, "the dead rank was never written off");
    if (!g_failed) printf("PASS killed\n");
    fflush(stdout);
    _exit(g_failed); /* no MPI_Finalize: a collective with a dead member is MPI's to resolve */
}

/* ---- stalls ---------------------------------------------------------------------------------- */
/* Stops this process (every thread) for ms: a child resumes it. */
static void stall_self(double ms) {
    const pid_t me = getpid();
    const pid_t child = fork();
    if (child == 0) {
        usleep((useconds_t)(ms * 1000));
        kill(me, SIGCONT);
        _exit(0);
    }
    kill(me, SIGSTOP);
    waitpid(child, NULL, 0);
}

static void case_stalls(void) {
    const double allowed = allowance_ms(), stall_ms = env_num("CHECK_STALL_MS", 2000);
    const int stalled = 1, rounds = 3, calls_per_round = 12, recovery = 12, after = 20;
    float *in = malloc(kFloats * sizeof *in), *out = malloc(kFloats * sizeof *out);
    fill(in, kFloats);
    double slowest = 0;
    for (int round = 0; round < rounds; ++round) {
        for (int op = 0; op < calls_per_round; ++op) {
            /* The stalled rank stops in the middle of a round, inside its compute. The call after
             * the stop is not timed on it: that call measures the stop itself. */
            const int stops = g_rank == stalled && op == calls_per_round / 2;
            if (stops) stall_self(stall_ms);
            const double took = timed_allreduce(in, out, kFloats);
            if (!stops && took > slowest) slowest = took;
        }
    }
    /* Resumed: a few calls to catch up (the others may be operations ahead), then the budget. */
    for (int op = 0; op < recovery; ++op) {
        const double took = timed_allreduce(in, out, kFloats);
        if (took > slowest) slowest = took;
    }
    const optireduce_stats_t before = stats();
    double worst_error = 0;
    for (int op = 0; op < after; ++op) {
        const double took = timed_allreduce(in, out, kFloats);
        if (took > slowest) slowest = took;
        const double e = rel_error(out, kFloats);
        if (e > worst_error) worst_error = e;
    }
    const optireduce_stats_t end = stats();
    const double max_loss = env_num("OPTIREDUCE_MAX_LOSS", 0.1);
    const double lost = (double)(end.entries_lost_rs + end.entries_lost_ag - before.entries_lost_rs - before.entries_lost_ag) /
                        (double)(end.entries_expected_rs + end.entries_expected_ag - before.entries_expected_rs -
                                 before.entries_expected_ag);
    printf("stalls rank %d: %d stops of %.0f ms on rank %d; slowest call %.1f ms (allowed %.0f); after recovery: "
           "%.3f%% of entries lost, worst relative error %.2g, %llu calls over the budget; %llu peers written off\n",
           g_rank, rounds, stall_ms, stalled, slowest, allowed, 100 * lost, worst_error,
           (unsigned long long)(end.excess_loss_calls - before.excess_loss_calls),
           (unsigned long long)end.stragglers_written_off);
    CHECK(slowest <= allowed, "a call took %.1f ms (allowed %.0f)", slowest, allowed);
    CHECK(lost <= max_loss, "after recovery %.3f%% of entries were lost (budget %g)", 100 * lost, max_loss);
    CHECK(end.excess_loss_calls == before.excess_loss_calls, "calls over the loss budget after recovery");
    CHECK(worst_error <= max_loss, "after recovery a result was off by %.3g (relative)", worst_error);
    if (g_rank != stalled) CHECK(end.stragglers_written_off > 0, "the stalled rank was never written off");
    free(in);
    free(out);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "killed") == 0) case_killed();
    else if (strcmp(which, "stalls") == 0) case_stalls();
    else CHECK(0, "unknown case '%s' (killed, stalls)", which);
    int failed = 0;
    MPI_Allreduce(&g_failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && !failed) printf("PASS %s\n", which);
    MPI_Finalize();
    return failed;
}
