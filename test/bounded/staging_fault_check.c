/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank whose engine staging memory cannot grow (OPTIREDUCE_FAULT_ALLOC_RANK, at its
 * OPTIREDUCE_FAULT_ALLOC_NTH growth): every rank fails that allreduce in step with MPI_ERR_NO_MEM
 * (none waits for the rank that failed), and the communicator then works: the same call again is
 * correct everywhere. Runs in exact and bounded mode (the mode comes from the environment).
 * Prints "PASS staging" on rank 0. */
#include "check_util.h"

static int error_class(int rc) {
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

/* Rank r contributes r + 1 + (i % 5): the exact sum is known everywhere. */
static double worst_relative_error(const float *out, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
        const double exact = (double)g_size * (g_size + 1) / 2 + (double)g_size * (double)(i % 5);
        const double e = fabs(out[i] - exact) / exact;
        if (e > worst) worst = e;
    }
    return worst;
}

static int allreduce(float *in, float *out, size_t n, double *ms) {
    for (size_t i = 0; i < n; ++i) in[i] = (float)(g_rank + 1 + (int)(i % 5));
    const double t0 = now_ms();
    const int rc = MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    *ms = now_ms() - t0;
    return rc;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int faulty = (int)env_num("OPTIREDUCE_FAULT_ALLOC_RANK", -1);
    CHECK(faulty >= 0 && faulty < g_size, "set OPTIREDUCE_FAULT_ALLOC_RANK to a rank of the job");
    /* The allocation that fails is the second growth: the first call sizes the staging for
     * 64 KiB, the second needs 1 MiB. */
    const size_t small = 16384, large = 262144;
    float *in = malloc(large * sizeof *in), *out = malloc(large * sizeof *out);
    double ms;
    const optireduce_stats_t before = stats();
    int rc = allreduce(in, out, small, &ms);
    CHECK(rc == MPI_SUCCESS, "the first call failed (code %d)", rc);
    CHECK(worst_relative_error(out, small) < 1e-5, "the first call's result is wrong");

    rc = allreduce(in, out, large, &ms);
    const int cls = error_class(rc);
    int lo = cls, hi = cls;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    printf("staging rank %d: the call whose staging failed on rank %d returned class %d after %.1f ms\n", g_rank,
           faulty, cls, ms);
    CHECK(cls == MPI_ERR_NO_MEM, "the failed call returned error class %d, not MPI_ERR_NO_MEM (%d)", cls,
          MPI_ERR_NO_MEM);
    CHECK(lo == hi, "ranks returned different error classes (%d..%d)", lo, hi);

    /* Afterwards: the same call (its staging grows now) and a few more, all correct. */
    for (int op = 0; op < 5; ++op) {
        rc = allreduce(in, out, large, &ms);
        CHECK(rc == MPI_SUCCESS, "call %d after the failure returned %d", op, rc);
        const double e = worst_relative_error(out, large);
        CHECK(e < 1e-5, "call %d after the failure: result off by %.3g (relative)", op, e);
    }
    const optireduce_stats_t after = stats();
    const unsigned long long failures = (unsigned long long)(after.staging_failures - before.staging_failures);
    CHECK(failures == (g_rank == faulty ? 1u : 0u), "staging_failures +%llu on rank %d (the faulty rank is %d)",
          failures, g_rank, faulty);
    /* With OPTIREDUCE_ON_EXCESS_LOSS=exact the failed call starts a run of reliable calls. */
    const unsigned long long taken = (unsigned long long)(after.engine_calls + after.reliable_calls -
                                                          before.engine_calls - before.reliable_calls);
    CHECK(taken >= 6, "the calls did not run on the engine (+%llu engine or reliable calls)", taken);

    int failed = 0;
    MPI_Allreduce(&g_failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && !failed) printf("PASS staging\n");
    free(in);
    free(out);
    MPI_Finalize();
    return failed;
}
