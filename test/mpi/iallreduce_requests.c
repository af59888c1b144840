/* SPDX-License-Identifier: BSD-3-Clause */
/* Nonblocking allreduce requests in every completion call an application may use, at every
 * thread level.
 *
 *   iallreduce_requests LEVEL [COUNT]
 *
 * LEVEL is single, funneled, serialized or multiple (MPI_Init_thread's request). Every case
 * issues eligible float SUM MPI_Iallreduce calls, alone or in arrays with ordinary requests
 * (point-to-point, a native integer Iallreduce, MPI_REQUEST_NULL), completes them with one member
 * of the completion family, and checks each result against the exact sum (the data are small
 * integers, so any summation order gives the same bits; bounded mode, CHECK_EXACT=0, is checked
 * against what loss can do to these data and the error the library estimated: check_sum()). The
 * statuses of engine requests are compared with those MPI gives its own Iallreduce. With the
 * library preloaded and CHECK_EXPECT_ENGINE=1, the library's counters must show every eligible
 * call on the engine. Prints "PASS name" / "FAIL name: why"
 * per case; exits non-zero on any failure. */
#define _GNU_SOURCE
#include "optireduce/optireduce.h"

#include <mpi.h>

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size, g_exact = 1, g_failures, g_case_failed;
static size_t g_count = 65536;
static const char *g_case = "";
static pthread_mutex_t g_fail_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The worst of a case's results by some relative error, and why, kept for run() to judge. */
typedef struct {
    int seen;
    double rel;
    char why[256];
} worst_t;
/* Bounded mode: the worst result of the case off by more than rounding (its relative error
 * ||out - exact|| / ||out||, as the library estimates it), and the worst beyond what estimates of
 * lost contributions can do (check_sum()). */
static worst_t g_mismatch, g_beyond;

/* Keeps `rel` and its description if it is the case's worst so far (caller holds g_fail_mutex). */
static void keep_worst(worst_t *w, double rel, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void keep_worst(worst_t *w, double rel, const char *fmt, ...) {
    if (w->seen && !(rel > w->rel)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
    w->rel = rel;
    w->seen = 1;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
    pthread_mutex_lock(&g_fail_mutex);
    if (!g_case_failed) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        printf("FAIL %s: rank %d: %s\n", g_case, g_rank, msg);
        fflush(stdout);
    }
    g_case_failed = 1;
    pthread_mutex_unlock(&g_fail_mutex);
}

/* How far the library's error estimate may undershoot on these data. It assumes the ranks' terms
 * of a coordinate scatter at random and samples their spread from the terms that arrived; here
 * rank r's term is exactly the same plus r, and an owner that heard from one neighbour only (rank
 * 1 from rank 0: 1 + 3 * 0 for a sum of 0 + 1 + 2 + 3 = 6, two terms with a sample variance of
 * 1/2) is off by 5 where the estimate says sqrt(3 * 2 * 1/2) = 1.7: (N(N-1)/2 - 1) /
 * sqrt((N-1)(N-2)/2), 2.9 at 4 ranks, the worst over which peers arrive (and over fills, 1.3).
 * A quarter more for the transform's coordinates, which the sample weighs slightly differently
 * from the lost ones; at least 3, the estimate's design being within a factor of 2. */
static double estimate_factor(int size) {
    if (size < 3) return 3;
    const double worst = (size * (size - 1) / 2.0 - 1) / sqrt((size - 1) * (size - 2) / 2.0);
    return fmax(3.0, 1.25 * worst);
}

/* One result against its exact sum `want` (n elements, over `size` ranks whose inputs differ by
 * their rank only: x_r = x_0 + r, as in both of this program's allreduces). Exact mode: bit for
 * bit. Bounded mode:
 *
 * - every element finite;
 * - ||got - want|| <= (size - 1)^2 sqrt(n) where only estimates were made (judged in run(): a
 *   case in which no all-gather entry was lost or zeroed). Rank r's input is x_0 + r * 1, so in any
 *   orthonormal transform of it (the library's Hadamard transform, or none) each coordinate's
 *   terms spread over at most (size - 1) |h_j|, h the transform of the all-ones vector, ||h|| =
 *   sqrt(n). Every estimate the library makes of a coordinate's sum (its own term plus (size - 1)
 *   times the mean of the peers' terms that arrived, or size times its own term where a reduced
 *   shard did not arrive) is off by at most size - 1 such spreads. With 4 ranks and these data
 *   that is under 0.08 ||want|| (the elements' spread, i % 97, alone makes ||want|| > 4 * 28
 *   sqrt(n)): a zero-filled buffer is off by ||want||, an in-place buffer left as this rank's
 *   input by about 0.75 ||want||, a non-finite element fails the first rule, and a single element
 *   left at a sentinel like -12345 among 65536 is over 0.14 ||want|| with a bound under 0.03.
 *   A chunk of the all-gather that any rank missed is set to zero on every rank (identical
 *   replicas): off by its whole value, which no bound on estimates covers. An owner descheduled
 *   past its peers' all-gather deadline (8 ranks on 2 cores) loses its whole shard this way, so
 *   where the case lost all-gather entries only the next rule, the library's estimate, judges;
 * - an element off by more than float rounding: recorded (the worst relative error of the case)
 *   and judged in run(): a failure if no rank lost an entry during the case, or if it exceeds
 *   estimate_factor() times the error this rank's library estimated for the case's operations
 *   (the sum of their error estimates, which bounds each one's). */
static void check_sum(const char *what, const float *got, const double *want, size_t n, int size) {
    double err2 = 0, norm2 = 0, got2 = 0;
    size_t off = n; /* first element off by more than rounding */
    for (size_t i = 0; i < n; ++i) {
        const double tol = g_exact ? 0.0 : 1e-3 * (fabs(want[i]) + size * 60.0);
        if (!isfinite(got[i]) || !(fabs(got[i] - want[i]) <= tol)) {
            if (g_exact || !isfinite(got[i])) {
                fail("%s: element %zu is %g, expected %g", what, i, got[i], want[i]);
                return;
            }
            if (off == n) off = i;
        }
        err2 += (got[i] - want[i]) * (got[i] - want[i]);
        norm2 += want[i] * want[i];
        got2 += (double)got[i] * got[i];
    }
    if (g_exact || off == n) return;
    const double rel = sqrt(err2 / norm2), spread = (double)(size - 1) * (size - 1) * sqrt((double)n);
    const double rel_max = spread / sqrt(norm2) + 1e-4;
    /* What the library estimates: ||got - want|| / ||got|| (infinite for an all-zero result). */
    const double rel_got = sqrt(err2 / got2);
    pthread_mutex_lock(&g_fail_mutex);
    if (!(rel <= rel_max))
        keep_worst(&g_beyond, rel,
                   "%s: relative error %.3g (element %zu is %g, expected %g), beyond %.3g, what any estimate of lost "
                   "contributions can do to these data",
                   what, rel, off, got[off], want[off], rel_max);
    keep_worst(&g_mismatch, rel_got, "%s: relative error %.3g of the result (element %zu is %g, expected %g)", what,
               rel_got, off, got[off], want[off]);
    pthread_mutex_unlock(&g_fail_mutex);
}

/* One float allreduce under test: rank r contributes (i % 97) - 40 + r + seed. */
typedef struct {
    float *send, *recv;
    size_t n;
    int seed, in_place;
    MPI_Request req;
} fcall_t;

static float contribution(int rank, size_t i, int seed) { return (float)((int)(i % 97) - 40 + rank + seed); }

static void fcall_start(fcall_t *c, MPI_Comm comm, size_t n, int seed, int in_place) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    c->n = n;
    c->seed = seed;
    c->in_place = in_place;
    c->send = malloc(n * sizeof(float));
    c->recv = malloc(n * sizeof(float));
    float *mine = in_place ? c->recv : c->send;
    for (size_t i = 0; i < n; ++i) mine[i] = contribution(rank, i, seed);
    if (!in_place) memset(c->recv, 0xff, n * sizeof(float));
    int rc = MPI_Iallreduce(in_place ? MPI_IN_PLACE : c->send, c->recv, (int)n, MPI_FLOAT, MPI_SUM, comm, &c->req);
    if (rc != MPI_SUCCESS) fail("MPI_Iallreduce returned %d", rc);
    if (c->req == MPI_REQUEST_NULL) fail("MPI_Iallreduce returned MPI_REQUEST_NULL");
}

/* Checks and frees. */
static void fcall_verify(fcall_t *c, MPI_Comm comm, const char *what) {
    int size;
    MPI_Comm_size(comm, &size);
    double *want = malloc(c->n * sizeof *want);
    for (size_t i = 0; i < c->n; ++i) {
        want[i] = 0;
        for (int r = 0; r < size; ++r) want[i] += contribution(r, i, c->seed);
    }
    check_sum(what, c->recv, want, c->n, size);
    free(want);
    free(c->send);
    free(c->recv);
}

/* What MPI's own Iallreduce reports in its status: the reference for engine requests. */
static MPI_Status g_native_status;
static int g_native_count;

static void reference_status(void) {
    int v = 1, r = 0;
    MPI_Request req;
    PMPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    PMPI_Wait(&req, &g_native_status);
    PMPI_Get_count(&g_native_status, MPI_BYTE, &g_native_count);
}

static void check_status(const MPI_Status *st, const char *what) {
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    if (st->MPI_SOURCE != g_native_status.MPI_SOURCE || st->MPI_TAG != g_native_status.MPI_TAG)
        fail("%s: status source/tag %d/%d, MPI's own Iallreduce gives %d/%d", what, st->MPI_SOURCE, st->MPI_TAG,
             g_native_status.MPI_SOURCE, g_native_status.MPI_TAG);
    /* MPI leaves a collective's count undefined: Open MPI says 0, MPICH whatever its last
     * internal message carried (4 bytes for the probe's one int), so only 0 is compared. */
    if (g_native_count == 0 && count != 0) fail("%s: status count %d bytes, MPI's own gives %d", what, count, g_native_count);
    if (cancelled) fail("%s: status says cancelled", what);
}

/* Ordinary requests to mix in: a ring exchange and a native integer Iallreduce. */
typedef struct {
    int out, in, isum_in, isum_out;
    MPI_Request req[3];
} ordinary_t;

static void ordinary_start(ordinary_t *o, MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    o->out = 1000 + rank;
    o->in = -1;
    o->isum_in = rank;
    MPI_Irecv(&o->in, 1, MPI_INT, (rank + size - 1) % size, 7, comm, &o->req[0]);
    MPI_Isend(&o->out, 1, MPI_INT, (rank + 1) % size, 7, comm, &o->req[1]);
    MPI_Iallreduce(&o->isum_in, &o->isum_out, 1, MPI_INT, MPI_SUM, comm, &o->req[2]);
}

static void ordinary_verify(const ordinary_t *o, MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (o->in != 1000 + (rank + size - 1) % size) fail("ring receive got %d", o->in);
    if (o->isum_out != size * (size - 1) / 2) fail("integer Iallreduce gave %d", o->isum_out);
}

/* ---- cases ----------------------------------------------------------------------------------- */

static void case_wait(void) {
    for (int in_place = 0; in_place < 2; ++in_place) {
        fcall_t c;
        MPI_Status st;
        fcall_start(&c, MPI_COMM_WORLD, g_count, 1 + in_place, in_place);
        int rc = MPI_Wait(&c.req, &st);
        if (rc != MPI_SUCCESS) fail("MPI_Wait returned %d", rc);
        if (c.req != MPI_REQUEST_NULL) fail("MPI_Wait left the request active");
        check_status(&st, "MPI_Wait");
        fcall_verify(&c, MPI_COMM_WORLD, in_place ? "in place" : "out of place");
    }
}

static void case_test(void) {
    fcall_t c;
    MPI_Status st;
    fcall_start(&c, MPI_COMM_WORLD, g_count, 3, 0);
    int flag = 0;
    long polls = 0;
    while (!flag) {
        if (MPI_Test(&c.req, &flag, &st) != MPI_SUCCESS) fail("MPI_Test failed");
        ++polls;
    }
    if (c.req != MPI_REQUEST_NULL) fail("MPI_Test left a complete request active");
    check_status(&st, "MPI_Test");
    /* osu_iallreduce tests a request that may already be MPI_REQUEST_NULL. */
    flag = 0;
    MPI_Test(&c.req, &flag, MPI_STATUS_IGNORE);
    if (!flag) fail("MPI_Test on MPI_REQUEST_NULL gave flag 0");
    fcall_verify(&c, MPI_COMM_WORLD, "MPI_Test");
}

static void case_waitall(void) {
    fcall_t a, b;
    ordinary_t o;
    MPI_Request reqs[6];
    MPI_Status st[6];
    fcall_start(&a, MPI_COMM_WORLD, g_count, 4, 0);
    ordinary_start(&o, MPI_COMM_WORLD);
    fcall_start(&b, MPI_COMM_WORLD, g_count / 2 + 3, 5, 1);
    reqs[0] = o.req[0];
    reqs[1] = a.req;
    reqs[2] = MPI_REQUEST_NULL;
    reqs[3] = o.req[1];
    reqs[4] = b.req;
    reqs[5] = o.req[2];
    if (MPI_Waitall(6, reqs, st) != MPI_SUCCESS) fail("MPI_Waitall failed");
    for (int i = 0; i < 6; ++i)
        if (reqs[i] != MPI_REQUEST_NULL) fail("MPI_Waitall left request %d active", i);
    check_status(&st[1], "MPI_Waitall");
    check_status(&st[4], "MPI_Waitall");
    if (st[0].MPI_TAG != 7) fail("MPI_Waitall: the receive's status has tag %d", st[0].MPI_TAG);
    fcall_verify(&a, MPI_COMM_WORLD, "Waitall first");
    fcall_verify(&b, MPI_COMM_WORLD, "Waitall second");
    ordinary_verify(&o, MPI_COMM_WORLD);
}

static void case_testall(void) {
    fcall_t a;
    ordinary_t o;
    MPI_Request reqs[4];
    fcall_start(&a, MPI_COMM_WORLD, g_count, 6, 0);
    ordinary_start(&o, MPI_COMM_WORLD);
    memcpy(reqs, o.req, sizeof o.req);
    reqs[3] = a.req;
    MPI_Status st[4];
    int flag = 0;
    while (!flag)
        if (MPI_Testall(4, reqs, &flag, st) != MPI_SUCCESS) fail("MPI_Testall failed");
    for (int i = 0; i < 4; ++i)
        if (reqs[i] != MPI_REQUEST_NULL) fail("MPI_Testall left request %d active", i);
    fcall_verify(&a, MPI_COMM_WORLD, "Testall");
    ordinary_verify(&o, MPI_COMM_WORLD);
}

/* Waitany / Testany / Waitsome / Testsome over [ordinary x3, engine x2]: every request must be
 * reported exactly once, then MPI_UNDEFINED. */
static void any_some(int which) {
    fcall_t a, b;
    ordinary_t o;
    MPI_Request reqs[5];
    int seen[5] = {0};
    fcall_start(&a, MPI_COMM_WORLD, g_count, 7, 0);
    ordinary_start(&o, MPI_COMM_WORLD);
    fcall_start(&b, MPI_COMM_WORLD, g_count + 1, 8, 1);
    memcpy(reqs, o.req, sizeof o.req);
    reqs[3] = a.req;
    reqs[4] = b.req;
    for (int guard = 0; guard < 100000000; ++guard) {
        int idx[5], n = 0;
        MPI_Status st[5];
        if (which == 0) {
            if (MPI_Waitany(5, reqs, &idx[0], &st[0]) != MPI_SUCCESS) fail("MPI_Waitany failed");
            n = idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
        } else if (which == 1) {
            int flag = 0;
            if (MPI_Testany(5, reqs, &idx[0], &flag, &st[0]) != MPI_SUCCESS) fail("MPI_Testany failed");
            n = !flag ? 0 : idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
        } else if (which == 2) {
            if (MPI_Waitsome(5, reqs, &n, idx, st) != MPI_SUCCESS) fail("MPI_Waitsome failed");
            if (n == 0) fail("MPI_Waitsome returned nothing");
        } else {
            if (MPI_Testsome(5, reqs, &n, idx, st) != MPI_SUCCESS) fail("MPI_Testsome failed");
        }
        if (n == MPI_UNDEFINED) break;
        for (int k = 0; k < n; ++k) {
            if (idx[k] < 0 || idx[k] >= 5 || seen[idx[k]]++) fail("index %d reported twice or out of range", idx[k]);
            else if (idx[k] >= 3) check_status(&st[k], "any/some");
        }
    }
    for (int i = 0; i < 5; ++i)
        if (seen[i] != 1) fail("request %d reported %d times", i, seen[i]);
    fcall_verify(&a, MPI_COMM_WORLD, "first");
    fcall_verify(&b, MPI_COMM_WORLD, "second");
    ordinary_verify(&o, MPI_COMM_WORLD);
}
static void case_waitany(void) { any_some(0); }
static void case_testany(void) { any_some(1); }
static void case_waitsome(void) { any_some(2); }
static void case_testsome(void) { any_some(3); }

static void case_get_status(void) {
    fcall_t c;
    MPI_Status st;
    fcall_start(&c, MPI_COMM_WORLD, g_count, 9, 0);
    int flag = 0;
    while (!flag) MPI_Request_get_status(c.req, &flag, &st);
    check_status(&st, "MPI_Request_get_status");
    if (c.req == MPI_REQUEST_NULL) fail("MPI_Request_get_status freed the request");
    if (MPI_Wait(&c.req, MPI_STATUS_IGNORE) != MPI_SUCCESS) fail("MPI_Wait after get_status failed");
    fcall_verify(&c, MPI_COMM_WORLD, "get_status");
}

/* Freed before completion: the operation still runs to its end, and a later blocking allreduce
 * on the communicator comes after it (the library runs a communicator's operations in call
 * order), so the buffer is final when that returns. */
/* The eligible calls return the library's requests (not MPI's own, which Open MPI cannot free
 * or outlive their communicator). */
static int g_engine_requests;

static void case_free(void) {
    if (!g_engine_requests) {
        /* Open MPI 4.1 refuses MPI_Request_free on its own nonblocking collective requests
         * (MPI_ERR_REQUEST), so only the library's requests are checked here. */
        if (g_rank == 0) printf("# request_free: checked only on the library's requests\n");
        return;
    }
    fcall_t c;
    fcall_start(&c, MPI_COMM_WORLD, g_count, 10, 0);
    if (MPI_Request_free(&c.req) != MPI_SUCCESS) fail("MPI_Request_free failed");
    if (c.req != MPI_REQUEST_NULL) fail("MPI_Request_free did not set MPI_REQUEST_NULL");
    fcall_t d;
    fcall_start(&d, MPI_COMM_WORLD, 1000, 11, 0);
    MPI_Wait(&d.req, MPI_STATUS_IGNORE);
    float x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    fcall_verify(&c, MPI_COMM_WORLD, "freed request");
    fcall_verify(&d, MPI_COMM_WORLD, "after the freed one");
}

/* MPI_Wait on an engine request must let MPI progress the program's other requests, as MPI's own
 * wait does: rank 1 joins the allreduce only after it received a message large enough to need
 * rank 0 inside MPI (a rendezvous), which rank 0 enters only to wait for the allreduce. */
static void case_progress(void) {
    const int big = 4 << 20;
    char *msg = malloc((size_t)big);
    memset(msg, g_rank, (size_t)big);
    MPI_Request send = MPI_REQUEST_NULL;
    if (g_rank == 0) MPI_Isend(msg, big, MPI_CHAR, 1, 9, MPI_COMM_WORLD, &send);
    if (g_rank == 1) MPI_Recv(msg, big, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fcall_t c;
    fcall_start(&c, MPI_COMM_WORLD, g_count, 12, 0);
    MPI_Wait(&c.req, MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    if (g_rank == 1 && (msg[0] != 0 || msg[big - 1] != 0)) fail("the message arrived wrong");
    free(msg);
    fcall_verify(&c, MPI_COMM_WORLD, "with a rendezvous send outstanding");
}

/* Several in flight on one communicator and on two, completed in reverse order. */
static void case_many(void) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    fcall_t w[4], d[2];
    for (int i = 0; i < 4; ++i) {
        fcall_start(&w[i], MPI_COMM_WORLD, g_count / (size_t)(i + 1) + (size_t)i, 20 + i, i & 1);
        if (i < 2) fcall_start(&d[i], dup, g_count / 3 + (size_t)i, 30 + i, i & 1);
    }
    for (int i = 1; i >= 0; --i) MPI_Wait(&d[i].req, MPI_STATUS_IGNORE);
    for (int i = 3; i >= 0; --i) MPI_Wait(&w[i].req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; ++i) fcall_verify(&w[i], MPI_COMM_WORLD, "world");
    for (int i = 0; i < 2; ++i) fcall_verify(&d[i], dup, "dup");
    MPI_Comm_free(&dup);
}

/* Freeing a communicator with an operation in flight, then completing the request. */
static void case_comm_free(void) {
    if (!g_engine_requests) {
        /* Legal MPI, but Open MPI 4.1's own Iallreduce crashes in MPI_Wait after it. */
        if (g_rank == 0) printf("# comm_free_in_flight: checked only on the library's requests\n");
        return;
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    fcall_t c;
    fcall_start(&c, dup, g_count, 40, 0);
    MPI_Comm_free(&dup);
    MPI_Wait(&c.req, MPI_STATUS_IGNORE);
    fcall_verify(&c, MPI_COMM_WORLD, "after MPI_Comm_free");
}

/* MPI_THREAD_MULTIPLE: two threads, each on its own communicator, mixing blocking and nonblocking
 * eligible calls with ordinary ones; SERIALIZED: a second thread starts the operation the main
 * thread completes. */
typedef struct {
    MPI_Comm comm;
    int id;
} worker_t;

static void *worker(void *arg) {
    worker_t *w = arg;
    for (int it = 0; it < 12; ++it) {
        fcall_t a, b;
        fcall_start(&a, w->comm, g_count / 2 + (size_t)it, 50 + 10 * w->id + it, it & 1);
        fcall_start(&b, w->comm, 5000 + (size_t)it, 51 + 10 * w->id + it, 0);
        float x[300];
        double want[300];
        for (int i = 0; i < 300; ++i) {
            x[i] = (float)(i + g_rank);
            want[i] = g_size * i + g_size * (g_size - 1) / 2;
        }
        MPI_Allreduce(MPI_IN_PLACE, x, 300, MPI_FLOAT, MPI_SUM, w->comm);
        char what[64];
        snprintf(what, sizeof what, "thread %d: blocking allreduce", w->id);
        check_sum(what, x, want, 300, g_size);
        MPI_Request r[2] = {b.req, a.req};
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC misreads Open MPI's definition of it */
        if (it % 3 == 0) MPI_Waitall(2, r, st);
        else if (it % 3 == 1) {
            int flag = 0;
            while (!flag) MPI_Testall(2, r, &flag, st);
        } else {
            int idx;
            MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
            MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
        }
        fcall_verify(&a, w->comm, "thread");
        fcall_verify(&b, w->comm, "thread, second");
    }
    return NULL;
}

static void *start_only(void *arg) {
    fcall_t *c = arg;
    fcall_start(c, MPI_COMM_WORLD, g_count, 60, 0);
    return NULL;
}

static void case_threads(int provided) {
    if (provided == MPI_THREAD_MULTIPLE) {
        worker_t w[2];
        pthread_t t[2];
        for (int i = 0; i < 2; ++i) {
            MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
            w[i].id = i;
        }
        for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, worker, &w[i]);
        for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
        for (int i = 0; i < 2; ++i) MPI_Comm_free(&w[i].comm);
    } else if (provided == MPI_THREAD_SERIALIZED) {
        fcall_t c;
        pthread_t t;
        pthread_create(&t, NULL, start_only, &c);
        pthread_join(t, NULL);
        MPI_Wait(&c.req, MPI_STATUS_IGNORE);
        fcall_verify(&c, MPI_COMM_WORLD, "started by another thread");
    } else {
        worker_t w = {MPI_COMM_WORLD, 0};
        worker(&w);
    }
}

typedef int (*get_stats_fn)(optireduce_stats_t *);

static optireduce_stats_t g_before, g_after;
static uint64_t g_stats_threads;
static int g_expect_engine;

/* Every fcall_start is an eligible call: 2 + 1 + 2 + 1 + 4 * 2 + 1 + 2 + 1 + 6 + 1 = 25, plus
 * the threads case's. */
static void case_stats(void) {
    const uint64_t nb = g_after.nonblocking_calls - g_before.nonblocking_calls;
    const uint64_t want = g_expect_engine ? 25 + g_stats_threads : 0;
    if (nb != want)
        fail("%llu nonblocking calls on the engine, expected %llu", (unsigned long long)nb, (unsigned long long)want);
}

static const char *g_only; /* argv[3]: run only this case */
static get_stats_fn g_get_stats;

static void run(const char *name, void (*body)(void)) {
    if (g_only && strcmp(g_only, name) != 0) return;
    g_case = name;
    g_case_failed = 0;
    g_mismatch.seen = g_beyond.seen = 0;
    optireduce_stats_t s0 = {0}, s1 = {0};
    if (g_get_stats) g_get_stats(&s0);
    body();
    if (g_get_stats) g_get_stats(&s1);
    /* Entries lost over all ranks: both phases, and the all-gather's alone. */
    long long lost[2] = {(long long)(s1.entries_lost_rs - s0.entries_lost_rs + s1.entries_lost_ag - s0.entries_lost_ag),
                         (long long)(s1.entries_lost_ag - s0.entries_lost_ag)};
    MPI_Allreduce(MPI_IN_PLACE, lost, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* Bounded mode's inexact results (check_sum): every operation's error estimate is >= 0, so
     * their sum over the case bounds the estimate of each; 1e-4 is float rounding. */
    const double estimate = s1.error_estimate_sum - s0.error_estimate_sum, factor = estimate_factor(g_size);
    if (g_mismatch.seen && lost[0] == 0) fail("%s, and no rank lost an entry", g_mismatch.why);
    else if (g_beyond.seen && lost[1] == 0) fail("%s, and no rank lost an all-gather entry", g_beyond.why);
    else if (g_mismatch.seen && !(g_mismatch.rel <= factor * estimate + 1e-4))
        fail("%s, over %.2g times the error the library estimated for this case's operations (%.3g; %lld entries "
             "lost over all ranks)",
             g_mismatch.why, factor, estimate, lost[0]);
    else if (g_mismatch.seen)
        printf("TOLERATED %s: rank %d: %s, within %.2g times the library's estimate %.3g (%lld entries lost over "
               "all ranks)\n",
               name, g_rank, g_mismatch.why, factor, estimate, lost[0]);
    int failed = g_case_failed;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed) ++g_failures;
    if (g_rank == 0) printf("%s %s\n", failed ? "FAILED" : "PASS", name);
    fflush(stdout);
}

static int g_provided;
static void case_threads_body(void) { case_threads(g_provided); }

int main(int argc, char **argv) {
    const char *level = argc > 1 ? argv[1] : "single";
    if (argc > 2) g_count = (size_t)atol(argv[2]);
    if (argc > 3) g_only = argv[3];
    const int required = !strcmp(level, "multiple")     ? MPI_THREAD_MULTIPLE
                         : !strcmp(level, "serialized") ? MPI_THREAD_SERIALIZED
                         : !strcmp(level, "funneled")   ? MPI_THREAD_FUNNELED
                                                        : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, required, &g_provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *exact = getenv("CHECK_EXACT");
    g_exact = !exact || atoi(exact) != 0;
    if (g_provided < required) {
        if (g_rank == 0) printf("FAIL setup: MPI provides thread level %d, %s asked\n", g_provided, level);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    get_stats_fn get_stats = (get_stats_fn)dlsym(RTLD_DEFAULT, "optireduce_get_stats");
    g_get_stats = get_stats;
    const char *expect = getenv("CHECK_EXPECT_ENGINE");
    const int expect_engine = expect && atoi(expect) != 0;
    g_engine_requests = expect_engine;
    if (expect_engine && !get_stats) {
        if (g_rank == 0) printf("FAIL setup: CHECK_EXPECT_ENGINE=1 but the library is not loaded\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (get_stats) get_stats(&g_before);
    reference_status();

    run("wait", case_wait);
    run("test", case_test);
    run("waitall_mixed", case_waitall);
    run("testall_mixed", case_testall);
    run("waitany_mixed", case_waitany);
    run("testany_mixed", case_testany);
    run("waitsome_mixed", case_waitsome);
    run("testsome_mixed", case_testsome);
    run("request_get_status", case_get_status);
    run("request_free", case_free);
    run("progress_while_waiting", case_progress);
    run("many_in_flight", case_many);
    run("comm_free_in_flight", case_comm_free);
    run("threads", case_threads_body);

    if (get_stats && !g_only) {
        get_stats(&g_after);
        g_stats_threads = g_provided == MPI_THREAD_MULTIPLE ? 48 : g_provided == MPI_THREAD_SERIALIZED ? 1 : 24;
        g_expect_engine = expect_engine;
        run("stats", case_stats);
    }
    MPI_Finalize();
    return g_failures ? 1 : 0;
}
