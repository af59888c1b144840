/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank whose datagram sends fail (OPTIREDUCE_FAULT_SEND_RANK, each round of sends with
 * OPTIREDUCE_FAULT_SEND_PROB): its datagrams are lost to the others, never an error of its own,
 * so every rank returns every call in step with the same code. CHECK_EXPECT says which:
 *   success  (OPTIREDUCE_ON_EXCESS_LOSS=warn) every call succeeds everywhere, and every result is
 *            exact (every rank contributes the same values: the estimators are exact for them);
 *   error    (OPTIREDUCE_ON_EXCESS_LOSS=error, every send failing) every call fails everywhere
 *            with the same error class, the excess-loss one.
 * Every call returns within 2 deadlines + the straggler bound + 1 s (OPTIREDUCE_TIMEOUT_MS and
 * OPTIREDUCE_STRAGGLER_MAX_MS must be set), and datagrams_send_failed grows on the faulty rank
 * only. With CHECK_NONBLOCKING=1 every call is MPI_Iallreduce + MPI_Wait. Prints "PASS send" on
 * rank 0. */
#include "check_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int faulty = (int)env_num("OPTIREDUCE_FAULT_SEND_RANK", -1);
    const char *expect = getenv("CHECK_EXPECT");
    const int want_success = expect && strcmp(expect, "success") == 0;
    CHECK(faulty >= 0 && faulty < g_size, "set OPTIREDUCE_FAULT_SEND_RANK to a rank of the job");
    CHECK(expect && (want_success || strcmp(expect, "error") == 0), "set CHECK_EXPECT to success or error");
    const double deadline = env_num("OPTIREDUCE_TIMEOUT_MS", 0), bound = env_num("OPTIREDUCE_STRAGGLER_MAX_MS", 0);
    CHECK(deadline > 0 && bound > 0, "set OPTIREDUCE_TIMEOUT_MS and OPTIREDUCE_STRAGGLER_MAX_MS");
    const double allowance_ms = 2 * deadline + bound + slack_ms(1000);
    const int nonblocking = env_num("CHECK_NONBLOCKING", 0) > 0;

    const size_t n = 262144; /* 1 MiB */
    const int ops = 20;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    const optireduce_stats_t before = stats();
    int mixed = 0, unexpected = 0, inexact = 0, slow = 0;
    double slowest = 0;
    for (int op = 0; op < ops; ++op) {
        for (size_t i = 0; i < n; ++i) in[i] = op_value(i, op);
        const double t0 = now_ms();
        int rc;
        if (nonblocking) {
            MPI_Request req;
            rc = MPI_Iallreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        const double ms = now_ms() - t0;
        if (ms > slowest) slowest = ms;
        slow += ms > allowance_ms;
        int cls = rc;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        int range[2] = {-cls, cls};
        MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        mixed += -range[0] != range[1];
        unexpected += want_success ? cls != MPI_SUCCESS : cls == MPI_SUCCESS;
        if (want_success && cls == MPI_SUCCESS)
            for (size_t i = 0; i < n; ++i) {
                const double want = (double)g_size * op_value(i, op);
                if (!(fabs(out[i] - want) <= 1e-4 * (fabs(want) + 1.0))) {
                    ++inexact;
                    break;
                }
            }
    }
    const optireduce_stats_t after = stats();
    const unsigned long long failed_sends = (unsigned long long)(after.datagrams_send_failed - before.datagrams_send_failed);
    CHECK(mixed == 0, "%d calls returned different error classes on different ranks", mixed);
    CHECK(unexpected == 0, "%d of %d calls did not return %s", unexpected, ops, expect);
    CHECK(inexact == 0, "%d results were wrong", inexact);
    CHECK(slow == 0, "%d calls took longer than %.0f ms (the slowest %.0f ms)", slow, allowance_ms, slowest);
    CHECK((failed_sends > 0) == (g_rank == faulty), "datagrams_send_failed +%llu on rank %d (the faulty rank is %d)",
          failed_sends, g_rank, faulty);
    CHECK(after.bounded_calls - before.bounded_calls + after.excess_loss_calls - before.excess_loss_calls > 0,
          "no call ran in bounded mode");
    printf("send rank %d: %d calls, %llu datagrams given up, slowest call %.0f ms, entries lost %.2f%%\n", g_rank, ops,
           failed_sends, slowest,
           100.0 * (double)(after.entries_lost_rs + after.entries_lost_ag - before.entries_lost_rs - before.entries_lost_ag) /
               (double)(after.entries_expected_rs + after.entries_expected_ag - before.entries_expected_rs -
                        before.entries_expected_ag + 1));
    fflush(stdout);
    int failed = 0;
    MPI_Allreduce(&g_failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && !failed) printf("PASS send\n");
    free(in);
    free(out);
    MPI_Finalize();
    return failed;
}
