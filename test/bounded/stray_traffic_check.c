/* SPDX-License-Identifier: BSD-3-Clause */
/* The victim of test/bounded/stray_traffic_test.py: bounded allreduces, with the library
 * preloaded, while that script forges and replays datagrams at this job's sockets (and, in the
 * two-job case, forwards the other job's datagrams here). Usage `stray_traffic_check SECONDS`.
 *
 * Every rank contributes the same values, different for each operation, so every result must be
 * exactly size * value whatever the network lost (the estimators are exact for identical inputs):
 * a forged datagram that got in (the script's payloads are 1e30) or an old operation's replay
 * would show as a wrong element. Operations are paced (10 ms apart) for SECONDS, so the script
 * sees traffic to learn from and has operations to aim at; rank 0 decides when to stop. At the
 * end each rank prints its datagram counters on one line for the script to add up:
 *   counters rank R ops N invalid I late L duplicate D held_dropped H */
#include "check_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const double seconds = argc > 1 ? atof(argv[1]) : 10;
    const size_t n = 30000; /* 120 KB: several datagrams to each peer in both phases */
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    const optireduce_stats_t start = stats();
    const double t0 = now_ms();
    int op = 0, wrong = 0, more = 1;
    while (more) {
        for (size_t i = 0; i < n; ++i) in[i] = op_value(i, op);
        MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; ++i) {
            const double want = (double)g_size * op_value(i, op);
            if (!(fabs(out[i] - want) <= 1e-4 * (fabs(want) + 1.0))) bad = i;
        }
        if (bad != n) {
            if (wrong < 5)
                CHECK(0, "operation %d: element %zu is %g, expected %g: a stray datagram changed the result", op,
                      bad, (double)out[bad], (double)g_size * op_value(bad, op));
            ++wrong;
        }
        ++op;
        usleep(10000);
        more = g_rank != 0 || now_ms() - t0 < seconds * 1e3;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    const optireduce_stats_t end = stats();
    CHECK(end.bounded_calls - start.bounded_calls == (uint64_t)op, "only %llu of %d calls ran in bounded mode",
          (unsigned long long)(end.bounded_calls - start.bounded_calls), op);
    CHECK(wrong == 0, "%d of %d results were wrong", wrong, op);
    printf("counters rank %d ops %d invalid %llu late %llu duplicate %llu held_dropped %llu\n", g_rank, op,
           (unsigned long long)(end.datagrams_invalid - start.datagrams_invalid),
           (unsigned long long)(end.datagrams_late - start.datagrams_late),
           (unsigned long long)(end.datagrams_duplicate - start.datagrams_duplicate),
           (unsigned long long)(end.datagrams_held_dropped - start.datagrams_held_dropped));
    fflush(stdout);
    int failed = g_failed;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && !failed) printf("PASS stray\n");
    free(in);
    free(out);
    MPI_Finalize();
    return failed;
}
