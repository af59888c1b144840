/* SPDX-License-Identifier: BSD-3-Clause */
/* One checked allreduce: the call exactly as an application makes it, the same call through
 * PMPI as the reference, and the bookkeeping of what optireduce should have done with it.
 *
 * The reference mirrors the call's form (blocking or not, in place or not, large-count or not)
 * because MPI's own algorithms differ between those forms; only then is "bit-identical to native
 * MPI" a fair demand on the calls the library passes through. */
#ifndef OPTIREDUCE_TEST_CHECK_CALLS_H
#define OPTIREDUCE_TEST_CHECK_CALLS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* What the test expects of the library for the whole run (read once from the environment). */
typedef struct check_env {
    int expect_engine;   /* CHECK_EXPECT_ENGINE: 1 = eligible calls run on the engine */
    uint64_t min_bytes;  /* OPTIREDUCE_MIN_BYTES as the library reads it */
    int have_library;    /* optireduce_get_stats was found in the process */
} check_env_t;

/* Calls made through the intercepted entry points, as the library should count them. */
typedef struct check_tally {
    uint64_t engine_calls, engine_bytes, passthrough_calls, fallback_calls;
} check_tally_t;

extern check_env_t g_env;
extern check_tally_t g_case_tally; /* reset by the case runner before every case */
extern check_tally_t g_run_tally;  /* the whole run, for the finalize summary checks */

typedef enum { ELEM_FLOAT, ELEM_DOUBLE, ELEM_INT } elem_kind_t;

/* FORM_LARGE_COUNT: MPI_Allreduce_c; FORM_NONBLOCKING_LARGE_COUNT: MPI_Iallreduce_c (MPI 4). */
typedef enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_LARGE_COUNT, FORM_NONBLOCKING_LARGE_COUNT } call_form_t;

typedef struct checked_call {
    const char *what;
    MPI_Comm comm;
    MPI_Datatype type;
    MPI_Op op;
    elem_kind_t kind;
    size_t count;
    int in_place;
    call_form_t form;
    int on_engine; /* decided like the library's policy */
    size_t bytes;
    void *orig, *send, *recv, *ref;
    float *abs_sum; /* per element, sum over ranks of |x|: the error scale of engine results */
    MPI_Request req;
} checked_call_t;

/* Allocates buffers, fills rank-specific data from `seed` and computes the reference.
 * Collective over `comm`. */
void call_prepare(checked_call_t *c, const char *what, MPI_Comm comm, elem_kind_t kind,
                  MPI_Datatype type, MPI_Op op, size_t count, int in_place, call_form_t form,
                  uint64_t seed);
/* Issues the call under test and records the expectation (nonblocking: MPI_Iallreduce). */
void call_start(checked_call_t *c);
/* Completes a nonblocking call (no-op for the others). */
void call_wait(checked_call_t *c);
/* Compares with the reference; records a failure message on mismatch. Frees the buffers. */
void call_verify(checked_call_t *c);

/* prepare + start + wait + verify. */
void check_allreduce(const char *what, MPI_Comm comm, elem_kind_t kind, MPI_Datatype type,
                     MPI_Op op, size_t count, int in_place, uint64_t seed);

/* Records the first failure of the current case (printf-style); later ones are only counted. */
void check_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int check_failures(void);
const char *check_first_failure(void);
void check_reset_failures(void);

/* Whether the library should run a float SUM of `count` elements on `comm` on its engine. */
int engine_expected(MPI_Comm comm, size_t count);
/* Records one blocking MPI_Allreduce made outside checked_call_t. */
void tally_call(MPI_Comm comm, MPI_Datatype type, MPI_Op op, size_t count);

/* A reproducible value for element i of rank `rank`'s contribution to call `seed`: mixed signs
 * and magnitudes so that summation order matters, as it does for gradients. */
float check_value(uint64_t seed, int rank, size_t i);

#endif
