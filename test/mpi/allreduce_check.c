/* SPDX-License-Identifier: BSD-3-Clause */
/* Correctness of MPI_Allreduce with optireduce preloaded (or natively, as a self-check of this
 * program): usage `allreduce_check GROUP...` with groups sizes, large, comms, mixed, iallreduce,
 * stress, or all. Environment: CHECK_EXPECT_ENGINE=0|1 (default: 1 when the library is present),
 * OPTIREDUCE_MIN_BYTES (read to know which calls are eligible), CHECK_CASE_TIMEOUT (s).
 *
 * Engine results must be within 1e-6 * sum over ranks of |x| per element; every call the library
 * must pass through must be bit-identical to the same call made through PMPI. Each case also
 * checks that optireduce_get_stats counted exactly the calls it should have. */
#include "check_calls.h"
#include "check_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size;

/* ---- sizes: one communicator, every awkward count ------------------------------------------ */

static const size_t kCounts[] = {0, 1, 2, 3, 7, 997, 1000003};
static size_t g_count;
static int g_in_place;

static void body_world_count(void) {
    check_allreduce("MPI_COMM_WORLD", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, g_count,
                    g_in_place, 1000 + g_count);
}

static int group_sizes(void) {
    int failed = 0;
    char name[64];
    for (size_t k = 0; k < sizeof kCounts / sizeof kCounts[0]; ++k) {
        for (g_in_place = 0; g_in_place <= 1; ++g_in_place) {
            g_count = kCounts[k];
            snprintf(name, sizeof name, "world.count=%zu%s", g_count, g_in_place ? ".in_place" : "");
            failed |= run_case(name, body_world_count);
        }
    }
    return failed;
}

/* 64 MiB: the size where staging buffers, segmenting and memory registration get stressed. */
static int group_large(void) {
    int failed = 0;
    g_count = 16u << 20;
    g_in_place = 0;
    failed |= run_case("world.64MiB", body_world_count);
    g_in_place = 1;
    failed |= run_case("world.64MiB.in_place", body_world_count);
    return failed;
}

/* ---- comms: per-communicator state is created, found and freed correctly --------------------- */

static void body_dup(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    check_allreduce("dup 1000003", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 1000003, 0, 2001);
    check_allreduce("dup 997 in place", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 997, 1, 2002);
    /* WORLD after the dup: the two communicators' states must not be confused. */
    check_allreduce("world after dup", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 4099, 0, 2003);
    check_allreduce("dup again", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 4099, 0, 2004);
    MPI_Comm_free(&c);
}

/* With an odd number of ranks the odd half has a single rank: never eligible. */
static void body_split_even_odd(void) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &c);
    check_allreduce("even/odd 100000", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100000, 0, 3001);
    check_allreduce("even/odd 4099 in place", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 4099, 1, 3002);
    check_allreduce("world between", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 3, 0, 3003);
    check_allreduce("even/odd 7", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 7, 0, 3004);
    MPI_Comm_free(&c);
}

static void body_split_self(void) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank, 0, &c);
    check_allreduce("size-1 100000", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100000, 0, 4001);
    check_allreduce("size-1 in place", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100000, 1, 4002);
    MPI_Comm_free(&c);
}

/* Ranks in reverse order: comm rank and world rank differ on every process but (maybe) one. */
static void body_split_reversed(void) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &c);
    check_allreduce("reversed 100003", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100003, 0, 5001);
    check_allreduce("reversed 5 in place", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 5, 1, 5002);
    MPI_Comm_free(&c);
}

/* Allreduce on an intercommunicator is legal MPI, and never the engine's. */
static void body_intercomm(void) {
    if (g_size < 2) return;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g_rank % 2 ? 0 : 1, 77, &inter);
    check_allreduce("intercomm 100000", inter, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100000, 0, 6001);
    check_allreduce("intercomm int", inter, ELEM_INT, MPI_INT, MPI_SUM, 1000, 0, 6002);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

enum { kManyComms = 16 };

static void body_many_comms(void) {
    MPI_Comm comms[kManyComms];
    char what[kManyComms][32];
    for (int k = 0; k < kManyComms; ++k) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[k]);
        snprintf(what[k], sizeof what[k], "comm %d", k);
    }
    for (int round = 0; round < 3; ++round)
        for (int k = 0; k < kManyComms; ++k)
            check_allreduce(what[k], comms[k], ELEM_FLOAT, MPI_FLOAT, MPI_SUM,
                            (size_t)(1000 + 37 * k + round), round == 2, 7000 + 100 * round + k);
    for (int k = 0; k < kManyComms; ++k) MPI_Comm_free(&comms[k]);
}

/* A freed communicator's handle is often reused for the next one: stale state must not be. */
static void body_free_and_recreate(void) {
    for (int k = 0; k < 8; ++k) {
        MPI_Comm c;
        if (k % 2) MPI_Comm_split(MPI_COMM_WORLD, 0, g_rank, &c);
        else MPI_Comm_dup(MPI_COMM_WORLD, &c);
        check_allreduce("recreated comm", c, ELEM_FLOAT, MPI_FLOAT, MPI_SUM,
                        (size_t)(50000 + k), k == 3, 8000 + k);
        MPI_Comm_free(&c);
    }
}

static int group_comms(void) {
    int failed = 0;
    failed |= run_case("comm.dup", body_dup);
    failed |= run_case("comm.split_even_odd", body_split_even_odd);
    failed |= run_case("comm.split_size1", body_split_self);
    failed |= run_case("comm.split_reversed", body_split_reversed);
    failed |= run_case("comm.intercomm", body_intercomm);
    failed |= run_case("comm.16_round_robin", body_many_comms);
    failed |= run_case("comm.free_and_recreate", body_free_and_recreate);
    return failed;
}

/* ---- mixed: eligible and ineligible calls interleaved on one communicator --------------------- */

static void user_float_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    for (int i = 0; i < *len; ++i) ((float *)inout)[i] += ((float *)in)[i];
}

static void body_interleaved(void) {
    MPI_Datatype one_float;
    MPI_Type_contiguous(1, MPI_FLOAT, &one_float);
    MPI_Type_commit(&one_float);
    MPI_Op my_sum;
    MPI_Op_create(user_float_sum, 1, &my_sum);
    const uint64_t min = g_env.min_bytes;
    /* The largest count below the threshold, and the smallest at it (eligible). */
    const size_t below = min >= 4 ? (size_t)((min - 1) / 4) : 1;
    const size_t at = (size_t)((min + 3) / 4);
    for (int round = 0; round < 10; ++round) {
        const uint64_t s = 9000 + 100 * (uint64_t)round;
        MPI_Comm w = MPI_COMM_WORLD;
        check_allreduce("int SUM", w, ELEM_INT, MPI_INT, MPI_SUM, 5000, round % 2, s + 1);
        check_allreduce("float SUM", w, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 20000, 0, s + 2);
        check_allreduce("double SUM", w, ELEM_DOUBLE, MPI_DOUBLE, MPI_SUM, 5000, 0, s + 3);
        check_allreduce("float MAX", w, ELEM_FLOAT, MPI_FLOAT, MPI_MAX, 20000, round % 2, s + 4);
        check_allreduce("float below MIN_BYTES", w, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, below, 0, s + 5);
        check_allreduce("float at MIN_BYTES", w, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, at, 1, s + 6);
        check_allreduce("float PROD", w, ELEM_FLOAT, MPI_FLOAT, MPI_PROD, 1000, 0, s + 7);
        /* Predefined ops are undefined on derived types, so this one needs the user op. */
        check_allreduce("contiguous(1,float) user-op sum", w, ELEM_FLOAT, one_float, my_sum,
                        20000, 0, s + 8);
        check_allreduce("float user-op sum", w, ELEM_FLOAT, MPI_FLOAT, my_sum, 20000, 0, s + 9);
        check_allreduce("float SUM in place", w, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 30011, 1, s + 10);
    }
    MPI_Op_free(&my_sum);
    MPI_Type_free(&one_float);
}

#if MPI_VERSION >= 4
/* MPI 4 large-count entry points (mpi4py >= 4 uses them whenever they exist). */
static void body_large_count(void) {
    checked_call_t c;
    call_prepare(&c, "Allreduce_c float", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100000,
                 0, FORM_LARGE_COUNT, 9901);
    call_start(&c);
    call_verify(&c);
    call_prepare(&c, "Allreduce_c float in place", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM,
                 4099, 1, FORM_LARGE_COUNT, 9902);
    call_start(&c);
    call_verify(&c);
    call_prepare(&c, "Allreduce_c int", MPI_COMM_WORLD, ELEM_INT, MPI_INT, MPI_SUM, 4099, 0,
                 FORM_LARGE_COUNT, 9903);
    call_start(&c);
    call_verify(&c);
    call_prepare(&c, "Iallreduce_c float", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 100000,
                 0, FORM_NONBLOCKING_LARGE_COUNT, 9904);
    call_start(&c);
    call_wait(&c);
    call_verify(&c);
    call_prepare(&c, "Iallreduce_c float in place", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM,
                 4099, 1, FORM_NONBLOCKING_LARGE_COUNT, 9905);
    call_start(&c);
    call_wait(&c);
    call_verify(&c);
}
#endif

static int group_mixed(void) {
    int failed = run_case("mixed.interleaved", body_interleaved);
#if MPI_VERSION >= 4
    failed |= run_case("mixed.large_count_c", body_large_count);
#endif
    return failed;
}

/* ---- iallreduce: a nonblocking operation in flight while a blocking one runs ------------------ */

static void overlap(const char *a_what, elem_kind_t a_kind, MPI_Datatype a_type, size_t a_count,
                    int a_in_place, int b_nonblocking, int wait_b_first) {
    checked_call_t a, b;
    call_prepare(&a, a_what, MPI_COMM_WORLD, a_kind, a_type, MPI_SUM, a_count, a_in_place,
                 FORM_NONBLOCKING, 11001 + a_count);
    call_prepare(&b, b_nonblocking ? "second Iallreduce" : "blocking Allreduce during it",
                 MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, 50000, 0,
                 b_nonblocking ? FORM_NONBLOCKING : FORM_BLOCKING, 11002 + a_count);
    call_start(&a);
    call_start(&b);
    if (wait_b_first) call_wait(&b);
    call_wait(&a);
    call_wait(&b);
    call_verify(&a);
    call_verify(&b);
}

static void body_iallreduce_overlap(void) {
    overlap("Iallreduce float", ELEM_FLOAT, MPI_FLOAT, 100000, 0, 0, 0);
}
static void body_iallreduce_in_place(void) {
    overlap("Iallreduce float in place", ELEM_FLOAT, MPI_FLOAT, 100003, 1, 0, 0);
}
static void body_iallreduce_two(void) {
    overlap("first Iallreduce", ELEM_FLOAT, MPI_FLOAT, 70001, 0, 1, 1);
}
static void body_iallreduce_ineligible(void) {
    overlap("Iallreduce int", ELEM_INT, MPI_INT, 100000, 0, 0, 0);
}

static int group_iallreduce(void) {
    int failed = 0;
    failed |= run_case("iallreduce.overlap_blocking", body_iallreduce_overlap);
    failed |= run_case("iallreduce.in_place_overlap_blocking", body_iallreduce_in_place);
    failed |= run_case("iallreduce.two_outstanding", body_iallreduce_two);
    failed |= run_case("iallreduce.int_overlap_blocking", body_iallreduce_ineligible);
    return failed;
}

/* ---- stress: many small back-to-back operations (sequence numbers, buffer reuse) ------------- */

enum { kStressCalls = 10000, kStressCount = 1024 };

/* Small integers: every summation order gives the exact result, so no reference call is
 * needed per iteration and the whole run reduces to one checksum. */
static float stress_value(int rank, int it, int i) {
    return (float)((rank + 1) * (it % 5 + 1) + i % 17 - 8);
}

static float stress_expected(int it, int i) {
    return (float)(g_size * (g_size + 1) / 2 * (it % 5 + 1) + g_size * (i % 17 - 8));
}

static void body_stress(void) {
    static float send[kStressCount], recv[kStressCount];
    double checksum = 0.0, expected_sum = 0.0;
    int bad_iterations = 0, first_bad = -1;
    for (int it = 0; it < kStressCalls; ++it) {
        const int in_place = it % 2;
        for (int i = 0; i < kStressCount; ++i) {
            send[i] = stress_value(g_rank, it, i);
            recv[i] = in_place ? send[i] : -1.0f;
        }
        tally_call(MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, kStressCount);
        MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, kStressCount, MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
        int bad = 0;
        for (int i = 0; i < kStressCount; ++i) {
            checksum += recv[i];
            expected_sum += stress_expected(it, i);
            bad |= recv[i] != stress_expected(it, i);
        }
        if (bad && bad_iterations++ == 0) first_bad = it;
    }
    if (bad_iterations)
        check_fail("%d of %d iterations wrong (first: %d)", bad_iterations, kStressCalls, first_bad);
    if (checksum != expected_sum)
        check_fail("checksum of all results %.17g, expected %.17g", checksum, expected_sum);
    /* And the last call once more against PMPI, with the general tolerance check. */
    check_allreduce("after stress", MPI_COMM_WORLD, ELEM_FLOAT, MPI_FLOAT, MPI_SUM, kStressCount,
                    0, 12001);
}

static int group_stress(void) { return run_case("stress.10000x1024", body_stress); }

/* ---- main ----------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int (*run)(void);
} group_t;

static const group_t kGroups[] = {
    {"sizes", group_sizes},          {"comms", group_comms},   {"mixed", group_mixed},
    {"iallreduce", group_iallreduce}, {"stress", group_stress}, {"large", group_large},
};
enum { kGroupCount = sizeof kGroups / sizeof kGroups[0] };

static const group_t *find_group(const char *name) {
    for (int g = 0; g < kGroupCount; ++g)
        if (strcmp(kGroups[g].name, name) == 0) return &kGroups[g];
    return NULL;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g_size);

    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "all") != 0 && !find_group(argv[a])) {
            if (g_rank == 0)
                fprintf(stderr, "usage: %s GROUP... (sizes comms mixed iallreduce stress large "
                                "all); unknown group '%s'\n", argv[0], argv[a]);
            MPI_Finalize();
            return 2;
        }
    }
    /* Later groups still run after a failing one: one run should show every broken case. */
    const int setup_failed = runner_init();
    int failed = setup_failed;
    for (int a = 1; a < argc && !setup_failed; ++a) {
        if (strcmp(argv[a], "all") == 0) {
            for (int g = 0; g < kGroupCount; ++g) failed |= kGroups[g].run();
        } else {
            failed |= find_group(argv[a])->run();
        }
    }
    runner_summary();
    if (g_rank == 0) {
        printf("%s\n", failed ? "allreduce_check: FAILED" : "allreduce_check: all cases passed");
        fflush(stdout);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
