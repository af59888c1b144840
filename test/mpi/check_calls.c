/* SPDX-License-Identifier: BSD-3-Clause */
/* See check_calls.h. Every reference and helper collective here goes through PMPI_, so the
 * library never sees (or counts) the test's own bookkeeping. */
#include "check_calls.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

check_env_t g_env;
check_tally_t g_case_tally;
check_tally_t g_run_tally;

static int g_failures;
static char g_first_failure[512];

void check_fail(const char *fmt, ...) {
    if (g_failures++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g_first_failure, sizeof g_first_failure, fmt, ap);
        va_end(ap);
    }
}

int check_failures(void) { return g_failures; }
const char *check_first_failure(void) { return g_first_failure; }
void check_reset_failures(void) {
    g_failures = 0;
    g_first_failure[0] = '\0';
}

static uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

float check_value(uint64_t seed, int rank, size_t i) {
    uint64_t h = splitmix64(seed * 0x100000001b3ull ^ ((uint64_t)rank << 48) ^ (uint64_t)i);
    /* 24 random mantissa bits in [-1, 1), scaled by 2^-4 .. 2^3 */
    float unit = (float)(int32_t)((h & 0xffffff) - 0x800000) / (float)0x800000;
    return ldexpf(unit, (int)((h >> 40) % 8) - 4);
}

int engine_expected(MPI_Comm comm, size_t count) {
    if (!g_env.expect_engine) return 0;
    int inter = 0, size = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) return 0;
    PMPI_Comm_size(comm, &size);
    return size >= 2 && (uint64_t)count * 4u >= g_env.min_bytes;
}

static void tally_add(check_tally_t *t, int engine, int fallback, uint64_t bytes) {
    if (engine) {
        t->engine_calls++;
        t->engine_bytes += bytes;
    } else {
        t->passthrough_calls++;
        if (fallback) t->fallback_calls++;
    }
}

/* Eligible MPI_Iallreduce calls run on the engine, except with OPTIREDUCE_ON_EXCESS_LOSS=error
 * or exact, whose per-operation agreement needs a collective that a nonblocking call has no place
 * for: then they are fallbacks. */
static int nonblocking_on_engine(void) {
    const char *excess = getenv("OPTIREDUCE_ON_EXCESS_LOSS");
    return !excess || !*excess || strcmp(excess, "warn") == 0;
}

static int float_sum(MPI_Datatype type, MPI_Op op) { return op == MPI_SUM && type == MPI_FLOAT; }

static int nonblocking(call_form_t form) { return form == FORM_NONBLOCKING || form == FORM_NONBLOCKING_LARGE_COUNT; }

static void tally_form(MPI_Comm comm, MPI_Datatype type, MPI_Op op, size_t count,
                       call_form_t form) {
    /* Only the predefined MPI_FLOAT with MPI_SUM is a candidate; the others are plain
     * pass-through, while a candidate the engine does not take is also a fallback. */
    int candidate = float_sum(type, op);
    int engine = candidate && engine_expected(comm, count) && (!nonblocking(form) || nonblocking_on_engine());
    tally_add(&g_case_tally, engine, candidate, (uint64_t)count * 4u);
    tally_add(&g_run_tally, engine, candidate, (uint64_t)count * 4u);
}

void tally_call(MPI_Comm comm, MPI_Datatype type, MPI_Op op, size_t count) {
    tally_form(comm, type, op, count, FORM_BLOCKING);
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "allreduce_check: out of memory (%zu bytes)\n", bytes);
        PMPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static void fill(checked_call_t *c, uint64_t seed, int rank) {
    for (size_t i = 0; i < c->count; ++i) {
        float v = check_value(seed, rank, i);
        switch (c->kind) {
            case ELEM_FLOAT: ((float *)c->orig)[i] = v; break;
            case ELEM_DOUBLE: ((double *)c->orig)[i] = (double)v * (1.0 + 1e-9 * (double)i); break;
            case ELEM_INT: ((int *)c->orig)[i] = (int)(v * 1000.0f); break;
        }
    }
}

/* The same call through PMPI, in the same form, into `buf` (which holds the input if in place). */
static void reference(checked_call_t *c, void *buf) {
    const void *send = c->in_place ? MPI_IN_PLACE : c->orig;
    if (c->in_place) memcpy(buf, c->orig, c->bytes);
    switch (c->form) {
        case FORM_BLOCKING:
            PMPI_Allreduce(send, buf, (int)c->count, c->type, c->op, c->comm);
            break;
        case FORM_NONBLOCKING: {
            MPI_Request r;
            PMPI_Iallreduce(send, buf, (int)c->count, c->type, c->op, c->comm, &r);
            PMPI_Wait(&r, MPI_STATUS_IGNORE);
            break;
        }
        case FORM_LARGE_COUNT:
        case FORM_NONBLOCKING_LARGE_COUNT:
#if MPI_VERSION >= 4
            PMPI_Allreduce_c(send, buf, (MPI_Count)c->count, c->type, c->op, c->comm);
#else
            check_fail("%s: large-count form needs MPI 4", c->what);
#endif
            break;
    }
}

void call_prepare(checked_call_t *c, const char *what, MPI_Comm comm, elem_kind_t kind,
                  MPI_Datatype type, MPI_Op op, size_t count, int in_place, call_form_t form,
                  uint64_t seed) {
    int rank, type_size;
    memset(c, 0, sizeof *c);
    c->what = what;
    c->comm = comm;
    c->type = type;
    c->op = op;
    c->kind = kind;
    c->count = count;
    c->in_place = in_place;
    c->form = form;
    c->req = MPI_REQUEST_NULL;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Type_size(type, &type_size);
    c->bytes = count * (size_t)type_size;
    c->on_engine = float_sum(type, op) && engine_expected(comm, count) &&
                   (!nonblocking(form) || nonblocking_on_engine());

    c->orig = xmalloc(c->bytes);
    fill(c, seed, rank);
    c->ref = xmalloc(c->bytes);
    reference(c, c->ref);
    if (c->on_engine) {
        c->abs_sum = xmalloc(c->bytes);
        for (size_t i = 0; i < count; ++i) c->abs_sum[i] = fabsf(((float *)c->orig)[i]);
        PMPI_Allreduce(MPI_IN_PLACE, c->abs_sum, (int)count, MPI_FLOAT, MPI_SUM, comm);
    }
    c->recv = xmalloc(c->bytes);
    if (in_place) {
        memcpy(c->recv, c->orig, c->bytes);
        c->send = MPI_IN_PLACE;
    } else {
        /* A pattern no reduction produces here, so elements never written show up. */
        memset(c->recv, 0xa5, c->bytes);
        c->send = xmalloc(c->bytes);
        memcpy(c->send, c->orig, c->bytes);
    }
}

void call_start(checked_call_t *c) {
    int rc = MPI_SUCCESS;
    tally_form(c->comm, c->type, c->op, c->count, c->form);
    switch (c->form) {
        case FORM_BLOCKING:
            rc = MPI_Allreduce(c->send, c->recv, (int)c->count, c->type, c->op, c->comm);
            break;
        case FORM_NONBLOCKING:
            rc = MPI_Iallreduce(c->send, c->recv, (int)c->count, c->type, c->op, c->comm, &c->req);
            break;
        case FORM_LARGE_COUNT:
#if MPI_VERSION >= 4
            rc = MPI_Allreduce_c(c->send, c->recv, (MPI_Count)c->count, c->type, c->op, c->comm);
#endif
            break;
        case FORM_NONBLOCKING_LARGE_COUNT:
#if MPI_VERSION >= 4
            rc = MPI_Iallreduce_c(c->send, c->recv, (MPI_Count)c->count, c->type, c->op, c->comm, &c->req);
#endif
            break;
    }
    if (rc != MPI_SUCCESS) check_fail("%s: returned error %d", c->what, rc);
}

void call_wait(checked_call_t *c) {
    if (!nonblocking(c->form)) return;
    int rc = MPI_Wait(&c->req, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) check_fail("%s: MPI_Wait returned error %d", c->what, rc);
    if (c->req != MPI_REQUEST_NULL) check_fail("%s: MPI_Wait left the request active", c->what);
}

static void describe_element(const checked_call_t *c, size_t i, char *out, size_t len) {
    switch (c->kind) {
        case ELEM_FLOAT:
            snprintf(out, len, "got %.9g want %.9g", ((float *)c->recv)[i], ((float *)c->ref)[i]);
            break;
        case ELEM_DOUBLE:
            snprintf(out, len, "got %.17g want %.17g", ((double *)c->recv)[i],
                     ((double *)c->ref)[i]);
            break;
        case ELEM_INT:
            snprintf(out, len, "got %d want %d", ((int *)c->recv)[i], ((int *)c->ref)[i]);
            break;
    }
}

static void verify_within_tolerance(const checked_call_t *c) {
    const float *got = c->recv, *want = c->ref;
    size_t bad = 0, first = 0;
    double worst = 0.0;
    for (size_t i = 0; i < c->count; ++i) {
        double err = fabs((double)got[i] - (double)want[i]);
        double tol = 1e-6 * (double)c->abs_sum[i];
        if (!(err <= tol)) { /* also catches NaN */
            if (bad++ == 0) first = i;
            if (tol > 0 && err / tol > worst) worst = err / tol;
        }
    }
    if (bad) {
        char detail[128];
        describe_element(c, first, detail, sizeof detail);
        check_fail("%s: %zu of %zu elements beyond 1e-6*sum|x| (first [%zu]: %s, scale %.3g; "
                   "worst %.3g x tolerance)",
                   c->what, bad, c->count, first, detail, (double)c->abs_sum[first], worst);
    }
}

static void verify_identical(const checked_call_t *c) {
    if (memcmp(c->recv, c->ref, c->bytes) == 0) return;
    size_t elem = c->count ? c->bytes / c->count : 1, bad = 0, first = 0;
    for (size_t i = 0; i < c->count; ++i)
        if (memcmp((char *)c->recv + i * elem, (char *)c->ref + i * elem, elem) != 0)
            if (bad++ == 0) first = i;
    char detail[128];
    describe_element(c, first, detail, sizeof detail);
    check_fail("%s: not bit-identical to PMPI: %zu of %zu elements differ (first [%zu]: %s)",
               c->what, bad, c->count, first, detail);
}

void call_verify(checked_call_t *c) {
    if (!c->in_place && memcmp(c->send, c->orig, c->bytes) != 0)
        check_fail("%s: the send buffer was modified", c->what);
    if (c->on_engine) verify_within_tolerance(c);
    else verify_identical(c);
    free(c->orig);
    free(c->ref);
    free(c->abs_sum);
    free(c->recv);
    if (!c->in_place) free(c->send);
    memset(c, 0, sizeof *c);
}

void check_allreduce(const char *what, MPI_Comm comm, elem_kind_t kind, MPI_Datatype type,
                     MPI_Op op, size_t count, int in_place, uint64_t seed) {
    checked_call_t c;
    call_prepare(&c, what, comm, kind, type, op, count, in_place, FORM_BLOCKING, seed);
    call_start(&c);
    call_verify(&c);
}
