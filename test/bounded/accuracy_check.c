/* SPDX-License-Identifier: BSD-3-Clause */
/* Accuracy under loss, end to end: real ranks, the library preloaded, datagrams dropped by the
 * test-only OPTIREDUCE_FAULT_DROP. Usage `accuracy_check CASE`:
 *
 *   unbiased  K operations, each rank's input a fixed mean of its own plus fresh noise per
 *             operation: the mean over K of (result - exact sum) is zero per coordinate of the
 *             rank's own shard (the phase-1 estimate, never replaced by a phase-2 fill), checked
 *             as z-scores (mean of z^2 near 1, no |z| beyond 6); the library's error estimate is
 *             compared with the measured error over the whole vector and printed. Different
 *             means per rank are what makes a biased rescaling fail: with one common mean,
 *             scaling everything that arrived by N / contributors would pass too.
 *   drift     how far the ranks' results differ (max over coordinates of max - min across
 *             ranks, over the rms of the result): with OPTIREDUCE_IDENTICAL_REPLICAS (the
 *             default) exactly 0 in every operation, loss or not, with every hole vote in and,
 *             under loss, entries zeroed because a peer missed them; with it 0, exactly 0 in
 *             every operation without loss in the all-gather (and then no drift estimate), and
 *             with loss > 0 and reported by the library's drift estimate. No error estimate
 *             where nothing was lost.
 *   excess    loss above OPTIREDUCE_MAX_LOSS, with the action of OPTIREDUCE_ON_EXCESS_LOSS:
 *             warn returns success, error returns the library's MPI error (its text names the
 *             knob), exact switches the following operations to the underlying MPI (exact
 *             results, the same path on every rank) and probes bounded mode again. Also checks
 *             optireduce_last_op().
 *   codec     OPTIREDUCE_CODEC (bf16, int8) without loss: the codec's own error. K operations of
 *             inputs with a mean of each rank's own: per coordinate the mean over K of
 *             (result - exact sum) is zero (z-scores, as in unbiased: int8's stochastic rounding is
 *             unbiased, a truncating one is not); every operation's NMSE at most CHECK_MAX_NMSE;
 *             every rank's result bit-identical (the all-gather's owner codes its shard once);
 *             no entry lost.
 *   carry     OPTIREDUCE_CARRY under loss: K operations on one buffer (half of them through
 *             MPI_Iallreduce), the same input on every rank (so the reduce-scatter's estimates
 *             are exact and what is lost is what the all-gather dropped), then more until no
 *             residual is pending; each result compared with the exact sum. With carry what one
 *             operation drops comes back in the next, so the sum of all the results is the exact
 *             sum to rounding (counted from the last spell or capped residual, whose error does
 *             not come back); with CHECK_CARRY_OFF=1 (carry off) the check is that the errors
 *             do not cancel. Replicas bit-identical in every operation; entries carried and
 *             carried in (CHECK_CARRY_HINT=1: on a communicator whose optireduce_carry hint asks
 *             for it; CHECK_CARRY_SPELL=1: some calls lost more than a quarter of the vector, and
 *             were counted as spells, not carried). With OPTIREDUCE_CARRY_IDLE_CALLS set, the
 *             calls on another buffer that follow drop the first buffer's residual, counted.
 *             CHECK_FLOATS and CHECK_OPS size it; with CHECK_CARRY_MEASURE=1 only replicas are
 *             checked, and rank 0 prints, for scripts/bench-accuracy.sh --carry,
 *               carry-measure <on|off> <floats> <ops> <NMSE of the sum over the ops>
 *                             <NMSE per op> <error of that sum / rms error per op> <ops with error>
 *   measure   not a check: for each size in CHECK_SIZES (floats, comma separated) runs CHECK_OPS
 *             allreduces of gradient-like inputs and rank 0 prints one line
 *               measure <floats> <ops> <p50 ms> <nmse> <max |error| / rms> <mean estimate> <loss>
 *             with NMSE = ||result - exact||^2 / ||exact||^2 averaged over the operations, for
 *             scripts/bench-accuracy.sh.
 *
 * Prints "FAIL ..." for every violated check and "PASS <case>" at the end. */
#include "check_util.h"

#include <stddef.h>
#include <stdint.h>

typedef int (*last_op_fn)(int, optireduce_op_report_t *);

static optireduce_op_report_t last_op(MPI_Comm comm, int *rc) {
    static last_op_fn fn;
    if (!fn) *(void **)&fn = dlsym(RTLD_DEFAULT, "optireduce_last_op");
    optireduce_op_report_t r;
    memset(&r, 0, sizeof r);
    if (!fn) CHECK(0, "optireduce_last_op not found: is the library preloaded?");
    *rc = fn ? fn(MPI_Comm_c2f(comm), &r) : -1;
    return r;
}

typedef int (*last_op_sized_fn)(int, optireduce_op_report_t *, size_t);

/* optireduce_last_op_sized writes exactly the prefix it is given: a short struct (as a program
 * built against an older header has) gets the same bytes as the full report and nothing past
 * them; the size query and a full-size call return the library's size. */
static void check_last_op_sized(MPI_Comm comm, const optireduce_op_report_t *full) {
    static last_op_sized_fn fn;
    if (!fn) *(void **)&fn = dlsym(RTLD_DEFAULT, "optireduce_last_op_sized");
    if (!fn) {
        CHECK(0, "optireduce_last_op_sized not found: is the library preloaded?");
        return;
    }
    const int have = (int)sizeof(optireduce_op_report_t);
    CHECK(fn(MPI_Comm_c2f(comm), NULL, 0) == have, "optireduce_last_op_sized(h, NULL, 0) is not %d", have);
    unsigned char buf[sizeof(optireduce_op_report_t) + 8];
    const size_t shorter = offsetof(optireduce_op_report_t, hadamard);
    memset(buf, 0xab, sizeof buf);
    int rc = fn(MPI_Comm_c2f(comm), (optireduce_op_report_t *)(void *)buf, shorter);
    CHECK(rc == have, "optireduce_last_op_sized(short) returned %d, want %d", rc, have);
    CHECK(memcmp(buf, full, shorter) == 0, "optireduce_last_op_sized(short): the prefix differs from the report");
    int untouched = 1;
    for (size_t i = shorter; i < sizeof buf; ++i) untouched &= buf[i] == 0xab;
    CHECK(untouched, "optireduce_last_op_sized wrote past the %zu bytes it was given", shorter);
    rc = fn(MPI_Comm_c2f(comm), (optireduce_op_report_t *)(void *)buf, sizeof(optireduce_op_report_t));
    /* Up to the last field: a struct copied by value need not keep its tail padding. */
    const size_t fields = offsetof(optireduce_op_report_t, path) + sizeof full->path;
    CHECK(rc == have && memcmp(buf, full, fields) == 0, "optireduce_last_op_sized(full) returned %d or "
          "differs from optireduce_last_op", rc);
}

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) from a hash: every rank can compute every rank's input. */
static double unit(uint64_t a, uint64_t b, uint64_t c) {
    return (double)(mix(mix(mix(a) ^ b) ^ c) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* A gradient: a fixed per-coordinate mean (scale 1, hashed from the key `mean`) plus per-rank,
 * per-operation noise of standard deviation 1. */
static float grad_with_mean(uint64_t mean, int rank, int op, size_t i) {
    return (float)(unit(mean, 0, i) + 1.7320508 * unit(11 + (uint64_t)rank, (uint64_t)op, i));
}
static float grad(int rank, int op, size_t i) { return grad_with_mean(7, rank, op, i); }
/* The same with a mean of each rank's own, as large as the noise. */
static float grad_own_mean(int rank, int op, size_t i) { return grad_with_mean(7 + (uint64_t)rank, rank, op, i); }

/* The exact sum over ranks of grad_own_mean. */
static double sum_own_mean(int op, size_t i) {
    double truth = 0;
    for (int k = 0; k < g_size; ++k) truth += grad_own_mean(k, op, i);
    return truth;
}

/* Per coordinate j, the z-score of the mean error over K operations from its sum s[j] and sum of
 * squares s2[j]: their mean square and the largest magnitude. */
static void z_scores(const double *s, const double *s2, size_t d, int K, double *chi, double *zmax) {
    *chi = *zmax = 0;
    for (size_t j = 0; j < d; ++j) {
        const double mean = s[j] / K, var = (s2[j] - s[j] * s[j] / K) / (K - 1);
        const double z = var > 0 ? mean / sqrt(var / K) : 0;
        *chi += z * z;
        *zmax = fmax(*zmax, fabs(z));
    }
    *chi /= (double)d;
}

/* ---- unbiased -------------------------------------------------------------------------------- */
static void case_unbiased(void) {
    /* With 4 ranks, 2^16 floats make 32 transform blocks of 2^11, 8 per rank: rank r's shard is
     * coordinates [r n/4, (r+1) n/4) with the transform on or off (the plain layout cuts the
     * same way). */
    const size_t n = 1 << 16, stride = 2;
    CHECK(g_size == 4, "the unbiased case needs 4 ranks (its shard arithmetic), got %d", g_size);
    const size_t lo = (size_t)g_rank * (n / 4), d = n / 4 / stride;
    const int K = (int)env_num("CHECK_OPS", 200);
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *s = calloc(d, sizeof *s), *s2 = calloc(d, sizeof *s2);
    double est_sum = 0, actual_sum = 0;
    int lossy = 0;
    optireduce_stats_t before = stats();
    for (int op = 0; op < K; ++op) {
        for (size_t i = 0; i < n; ++i) in[i] = grad_own_mean(g_rank, op, i);
        MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        int rc = 0;
        const optireduce_op_report_t r = last_op(MPI_COMM_WORLD, &rc);
        CHECK(rc == 0 && r.count == n, "optireduce_last_op returned %d, count %llu", rc, (unsigned long long)r.count);
        double err2 = 0, norm2 = 0;
        for (size_t i = 0; i < n; ++i) {
            const double truth = sum_own_mean(op, i);
            const double e = out[i] - truth;
            err2 += e * e;
            norm2 += (double)out[i] * out[i];
            if (i >= lo && i < lo + n / 4 && (i - lo) % stride == 0) {
                s[(i - lo) / stride] += e;
                s2[(i - lo) / stride] += e * e;
            }
        }
        if (r.error_estimate > 0) {
            ++lossy;
            est_sum += r.error_estimate;
            actual_sum += sqrt(err2 / norm2);
        }
    }
    optireduce_stats_t after = stats();
    double chi = 0, zmax = 0;
    z_scores(s, s2, d, K, &chi, &zmax);
    const double lost = (double)((after.entries_lost_rs - before.entries_lost_rs) + (after.entries_lost_ag - before.entries_lost_ag));
    const double expected = (double)((after.entries_expected_rs - before.entries_expected_rs) +
                                     (after.entries_expected_ag - before.entries_expected_ag));
    const double ratio = actual_sum > 0 ? est_sum / actual_sum : 0;
    printf("unbiased rank %d: %d ops, loss %.4f, mean z^2 %.3f over %zu coordinates, max |z| %.2f; "
           "error estimate / measured error %.2f (mean estimate %.4f) over %d lossy ops; transform in %llu ops\n",
           g_rank, K, lost / expected, chi, d, zmax, ratio, lossy ? est_sum / lossy : 0, lossy,
           (unsigned long long)(after.hadamard_calls - before.hadamard_calls));
    /* z is Student-t with K-1 dof: E[z^2] = (K-1)/(K-3). Coordinates are not independent (one
     * lost datagram's error is spread over a shard), so the band is wide; a biased estimator
     * (no rescaling: the lost share of the mean is missing in every operation) lands far out. */
    CHECK(chi > 0.7 && chi < 1.4, "mean z^2 %.3f outside [0.7, 1.4]: the estimates are biased", chi);
    CHECK(zmax < 6.0, "max |z| %.2f: some coordinate is biased", zmax);
    CHECK(lost > 0, "nothing was lost: the check saw no estimate");
    CHECK(lossy > 0 && ratio > 0.5 && ratio < 2.0, "error estimate / measured %.2f outside [0.5, 2]", ratio);
    free(in);
    free(out);
    free(s);
    free(s2);
}

/* The largest difference between this rank's result and any other's (0: identical). */
static double spread_across_ranks(const float *out, size_t n, double *hi, double *lo) {
    for (size_t i = 0; i < n; ++i) hi[i] = lo[i] = out[i];
    MPI_Allreduce(MPI_IN_PLACE, hi, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, lo, (int)n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    double worst = 0;
    for (size_t i = 0; i < n; ++i) worst = fmax(worst, hi[i] - lo[i]);
    return worst;
}

/* ---- carry ----------------------------------------------------------------------------------- */
/* One allreduce of `in` into `out`, blocking or not; the spread of the result across ranks. */
static double carry_op(MPI_Comm comm, const float *in, float *out, size_t n, int nonblocking, double *hi,
                       double *lo) {
    if (nonblocking) {
        MPI_Request req;
        MPI_Iallreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, comm);
    }
    return spread_across_ranks(out, n, hi, lo);
}

static void case_carry(void) {
    const size_t n = (size_t)env_num("CHECK_FLOATS", 1 << 16);
    const int ops = (int)env_num("CHECK_OPS", 20);
    /* scripts/bench-accuracy.sh --carry: print the figures, check nothing but replicas. */
    const int measure_only = env_num("CHECK_CARRY_MEASURE", 0) != 0;
    const int off = env_num("CHECK_CARRY_OFF", 0) != 0;
    const int idle = (int)env_num("OPTIREDUCE_CARRY_IDLE_CALLS", 0);
    /* CHECK_CARRY_HINT=1: carry asked for by the communicator's optireduce_carry hint alone. */
    MPI_Comm comm = MPI_COMM_WORLD;
    if (env_num("CHECK_CARRY_HINT", 0) != 0) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "optireduce_carry", "1");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
    }
    const optireduce_stats_t first = stats();
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *cum = calloc(n, sizeof *cum), *hi = malloc(n * sizeof *hi), *lo = malloc(n * sizeof *lo);
    double *exact_sum = calloc(n, sizeof *exact_sum);
    double err2_sum = 0, norm2_sum = 0, worst_err2 = 0, cum2_at_ops = 0;
    int lossy = 0, flushes = 0, restarts = 0;
    for (int op = 0;; ++op) {
        if (op == ops) {
            for (size_t i = 0; i < n; ++i) cum2_at_ops += cum[i] * cum[i];
        }
        if (op >= ops) {
            /* Then more calls of the same kind until no residual is pending, so that the sum over
             * all of them is complete (the benchmark's figure, measure-only, is over `ops`). */
            const optireduce_stats_t now = stats();
            unsigned long long pending = now.entries_carried - now.entries_carried_in;
            MPI_Allreduce(MPI_IN_PLACE, &pending, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            if (off || measure_only || pending == 0 || flushes == 30) break;
            ++flushes;
        }
        /* Every rank the same input: the reduce-scatter's estimate of a missing contribution
         * (the arrived ones scaled up) is then exact, so what the results lack is only what the
         * all-gather dropped, the part carry carries (the estimate is never carried). */
        for (size_t i = 0; i < n; ++i) in[i] = grad(0, op, i);
        const optireduce_stats_t before = stats();
        const double spread = carry_op(comm, in, out, n, op % 2, hi, lo);
        CHECK(spread == 0, "op %d: results differ across ranks by up to %.3g", op, spread);
        double err2 = 0, norm2 = 0;
        for (size_t i = 0; i < n; ++i) {
            const double exact = (double)g_size * grad(0, op, i);
            const double e = (double)out[i] - exact;
            cum[i] += e;
            if (op < ops) exact_sum[i] += exact;
            err2 += e * e;
            norm2 += exact * exact;
        }
        /* A spell (more than a quarter lost: on a loaded host a late stream can do it) is
         * rescaled and not carried, and a capped residual is added only in part: neither error
         * comes back, so the sum starts over after it (every rank has the same holes, so the
         * same spells and caps). */
        const optireduce_stats_t after = stats();
        if (after.carry_spell_calls != before.carry_spell_calls ||
            after.carry_capped_calls != before.carry_capped_calls) {
            memset(cum, 0, n * sizeof *cum);
            ++restarts;
        }
        err2_sum += err2;
        norm2_sum += norm2;
        worst_err2 = fmax(worst_err2, err2);
        lossy += err2 > 1e-6 * norm2;
    }
    double cum2 = 0, exact2 = 0;
    for (size_t i = 0; i < n; ++i) {
        cum2 += cum[i] * cum[i];
        exact2 += exact_sum[i] * exact_sum[i];
    }
    const int calls = ops + flushes;
    const double rms_op = sqrt(err2_sum / calls), ratio = rms_op > 0 ? sqrt(cum2_at_ops) / rms_op : 0;
    const optireduce_stats_t mid = stats();
    const unsigned long long carried = mid.entries_carried - first.entries_carried,
                             carried_in = mid.entries_carried_in - first.entries_carried_in;
    printf("carry rank %d: carry %s, %d of %d ops with error (and %d more until nothing was pending, %d spells or "
           "caps); error of the sum over the first %d / rms error per op %.3f (sqrt(K) = %.2f); error of the sum over "
           "all %d / worst op's %.3g; rms error per op / rms sum %.3g; entries carried %llu, carried in %llu\n",
           g_rank, off ? "off" : "on", lossy, calls, flushes, restarts, ops, ratio, sqrt((double)ops), calls,
           worst_err2 > 0 ? sqrt(cum2 / worst_err2) : 0, sqrt(err2_sum / norm2_sum), carried, carried_in);
    if (g_rank == 0)
        printf("carry-measure %s %zu %d %.4g %.4g %.3f %d\n", off ? "off" : "on", n, ops,
               exact2 > 0 ? cum2_at_ops / exact2 : 0, norm2_sum > 0 ? err2_sum / norm2_sum : 0, ratio, lossy);
    if (env_num("CHECK_CARRY_SPELL", 0) != 0) {
        /* Holes beyond a quarter of the vector: those operations are rescaled, not carried. */
        const unsigned long long spells = mid.carry_spell_calls - first.carry_spell_calls;
        printf("carry rank %d: %llu calls with more than a quarter of the vector in holes\n", g_rank, spells);
        CHECK(spells > 0, "no call counted as a spell at this loss (carry_spell_calls)");
        if (spells == (unsigned long long)calls)
            CHECK(carried == 0, "%llu entries carried though every call was a spell", carried);
    }
    if (measure_only) {
        /* only the replicas were checked */
    } else if (lossy < 1) {
        CHECK(0, "no op lost anything: nothing to carry");
    } else if (off) {
        CHECK(carried == 0 && carried_in == 0, "carry off, yet %llu entries carried, %llu carried in", carried,
              carried_in);
        /* Without carry the ops' errors never cancel: the sum keeps at least most of the worst. */
        CHECK(cum2 >= 0.5 * worst_err2, "carry off, yet the error of the sum is only %.3g of the worst op's",
              sqrt(cum2 / worst_err2));
    } else {
        CHECK(carried > 0 && carried_in > 0, "carry on, yet %llu entries carried, %llu carried in", carried, carried_in);
        CHECK(flushes < 30, "a residual still pending after 30 more calls");
        /* Everything dropped came back: the sum of the results is the exact sum, to rounding. */
        CHECK(cum2 <= 1e-8 * (norm2_sum / calls),
              "the sum of %d results is off the exact sum by %.3g of one sum's norm: what an op dropped did not reach "
              "the next",
              calls, sqrt(cum2 / (norm2_sum / calls)));
    }
    if (idle > 0 && !off && !measure_only) {
        /* A residual pending on the first buffer (more calls on it until one is: every rank
         * sees the same holes, so they agree), then idle + 1 calls on another buffer: it is
         * dropped, and counted. */
        unsigned long long pending = 0;
        for (int extra = 0; extra < 40; ++extra) {
            const optireduce_stats_t now = stats();
            pending = now.entries_carried - now.entries_carried_in;
            MPI_Allreduce(MPI_IN_PLACE, &pending, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            if (pending > 0) break;
            carry_op(comm, in, out, n, 0, hi, lo);
        }
        CHECK(pending > 0, "no residual pending after 60 calls at this loss");
        const optireduce_stats_t before = stats();
        float *other = malloc(n * sizeof *other);
        for (int k = 0; k <= idle; ++k) carry_op(comm, in, other, n, 0, hi, lo);
        const optireduce_stats_t last = stats();
        unsigned long long dropped = last.carry_dropped_entries - before.carry_dropped_entries;
        MPI_Allreduce(MPI_IN_PLACE, &dropped, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        printf("carry rank %d: after %d calls on another buffer, residual entries dropped (all ranks) %llu of %llu "
               "pending; bytes held %llu\n",
               g_rank, idle + 1, dropped, pending, (unsigned long long)last.carry_bytes);
        CHECK(dropped == pending,
              "%llu residual entries dropped after %d calls on another buffer (OPTIREDUCE_CARRY_IDLE_CALLS=%d), "
              "%llu were pending",
              dropped, idle + 1, idle, pending);
        free(other);
    }
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    free(cum);
    free(exact_sum);
    free(hi);
    free(lo);
}

/* ---- drift ----------------------------------------------------------------------------------- */
static void case_drift(void) {
    const size_t n = 1 << 16;
    const int ops = 40;
    const double p = env_num("OPTIREDUCE_FAULT_DROP", 0);
    const int identical = env_num("OPTIREDUCE_IDENTICAL_REPLICAS", 1) != 0;
    const optireduce_stats_t first = stats();
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *hi = malloc(n * sizeof *hi), *lo = malloc(n * sizeof *lo);
    double worst = 0, worst_rms = 0, worst_est = 0;
    int drifted = 0, reported = 0, zero_but_reported = 0;
    int clean_ops = 0;
    /* A late hole vote (OPTIREDUCE_FAULT_VOTE_DELAY_MS on OPTIREDUCE_FAULT_DELAY_RANK), far past
     * every budget: the peers wait for it, so no operation may differ. The delayed rank counts
     * the calls it slept in, so that the check knows late votes were there to be caught. */
    const double vote_delay_ms = env_num("OPTIREDUCE_FAULT_VOTE_DELAY_MS", 0);
    const int delayed_rank = vote_delay_ms > 0 && (int)env_num("OPTIREDUCE_FAULT_DELAY_RANK", -1) == g_rank;
    int delayed_calls = 0;
    for (int op = 0; op < ops; ++op) {
        for (size_t i = 0; i < n; ++i) in[i] = grad(g_rank, op, i);
        const optireduce_stats_t b = stats();
        const double t0 = MPI_Wtime();
        MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        delayed_calls += delayed_rank && (MPI_Wtime() - t0) * 1e3 >= vote_delay_ms;
        const optireduce_stats_t a = stats();
        int rc = 0;
        const optireduce_op_report_t r = last_op(MPI_COMM_WORLD, &rc);
        /* Loss in the all-gather anywhere: the only way results can differ across ranks. Even
         * without injected drops this host may lose a datagram to a full socket buffer or a
         * deadline, so the checks key on what was lost, not on what was injected. */
        unsigned long long lost_ag = a.entries_lost_ag - b.entries_lost_ag, lost_any = r.entries_lost;
        MPI_Allreduce(MPI_IN_PLACE, &lost_ag, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &lost_any, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        double est = r.drift_estimate;
        MPI_Allreduce(MPI_IN_PLACE, &est, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double norm2 = 0;
        for (size_t i = 0; i < n; ++i) {
            hi[i] = lo[i] = out[i];
            norm2 += (double)out[i] * out[i];
        }
        /* MPI_DOUBLE is not the engine's: these go to the underlying MPI, exact. */
        MPI_Allreduce(MPI_IN_PLACE, hi, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, lo, (int)n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        double spread = 0, spread2 = 0;
        for (size_t i = 0; i < n; ++i) {
            if (hi[i] - lo[i] > spread) spread = hi[i] - lo[i];
            spread2 += (hi[i] - lo[i]) * (hi[i] - lo[i]);
        }
        const double drift = spread / sqrt(norm2 / (double)n);
        /* The estimate's own measure: the rms of the difference, relative to the rms. */
        const double drift_rms = sqrt(spread2 / norm2);
        if (drift_rms > worst_rms) worst_rms = drift_rms;
        if (drift > worst) worst = drift;
        if (est > worst_est) worst_est = est;
        drifted += drift > 0;
        reported += est > 0;
        zero_but_reported += drift == 0 && est > 0;
        if (identical) {
            CHECK(drift == 0, "op %d: results differ across ranks (max spread %.3g of rms) with identical replicas",
                  op, drift);
            CHECK(est == 0, "op %d: drift estimate %.3g with identical replicas", op, est);
        }
        if (identical && (drift > 0 || est > 0))
            printf("drift rank %d: op %d differs across ranks (max spread %.3g of rms, estimate %.3g)\n", g_rank, op,
                   drift, est);
        if (lost_ag == 0) {
            CHECK(drift == 0, "op %d: results differ across ranks (max spread %.3g of rms) without all-gather loss", op, drift);
            CHECK(est == 0, "op %d: drift estimate %.3g without all-gather loss", op, est);
        }
        if (lost_any == 0) {
            ++clean_ops;
            CHECK(r.error_estimate == 0, "op %d: error estimate %.3g though nothing was lost", op, r.error_estimate);
        }
    }
    /* Without injected drops the host still loses a few datagrams: phases that close early
     * (every tail in, then a quiet spell that a CPU-starved rank's late datagrams outlast) lost
     * 4 - 20 of 40 operations here. A quarter of them clean is enough for the checks above to
     * have looked at lossless operations. */
    if (p == 0) CHECK(clean_ops >= ops / 4, "only %d of %d ops without any loss", clean_ops, ops);
    printf("drift rank %d: loss %.3f, %d of %d ops differ across ranks, worst max-spread/rms %.4f, "
           "worst rms-spread/rms %.4f; drift estimate > 0 in %d ops, worst %.4f\n",
           g_rank, p, drifted, ops, worst, worst_rms, reported, worst_est);
    if (p > 0)
        CHECK(reported >= drifted, "%d ops drifted but only %d reported a drift estimate", drifted, reported);
    /* Phase-2 repair: holes in the all-gather are asked for again, so ranks differ in far fewer
     * operations than the injected loss alone would make them (every one of these 40, at 5%). */
    if (p > 0) CHECK(drifted <= ops / 2, "%d of %d ops differ across ranks at loss %.3f", drifted, ops, p);
    const optireduce_stats_t last = stats();
    unsigned long long zeroed = last.entries_zeroed_for_peers - first.entries_zeroed_for_peers;
    const unsigned long long votes_missing = last.hole_votes_missing - first.hole_votes_missing;
    const unsigned long long votes_late = last.hole_votes_late - first.hole_votes_late;
    MPI_Allreduce(MPI_IN_PLACE, &zeroed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    printf("drift rank %d: identical replicas %d, entries zeroed for peers (all ranks) %llu, "
           "calls without every hole vote %llu, calls that waited for an overdue vote %llu\n", g_rank, identical,
           zeroed, votes_missing, votes_late);
    if (identical) {
        CHECK(votes_missing == 0, "%llu calls ended without every peer's hole vote", votes_missing);
        /* An op differs when its results do, or when a rank reports a drift estimate. */
        const int differing = drifted + zero_but_reported;
        CHECK(differing == 0, "%d of %d ops differ across ranks with identical replicas", differing, ops);
    }
    if (delayed_rank) {
        printf("drift rank %d: slept %.0f ms before the hole vote in %d of %d calls\n", g_rank, vote_delay_ms,
               delayed_calls, ops);
        CHECK(delayed_calls >= 3, "the vote was delayed in only %d calls: no late vote to wait for", delayed_calls);
    }
    /* Under loss the agreement must have had something to agree on: holes one rank had and
     * another filled. Without the exchange every such op shows up as drift above instead. */
    if (identical && p > 0) CHECK(zeroed > 0, "no entry zeroed for a peer at loss %.3f", p);
    if (!identical) CHECK(zeroed == 0, "%llu entries zeroed for peers with identical replicas off", zeroed);
    CHECK(zero_but_reported == 0, "drift reported in %d operations where the ranks agreed", zero_but_reported);
    free(in);
    free(out);
    free(hi);
    free(lo);
}

/* ---- excess ---------------------------------------------------------------------------------- */
/* 1 if every rank holds the same n values (n <= 64). */
static int same_on_all_ranks(const int *v, int n) {
    int lo[64], hi[64], same = 1;
    MPI_Allreduce(v, lo, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(v, hi, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) same = same && lo[i] == hi[i];
    return same;
}

/* Every rank over the budget warns once, at its first such operation (then every 100th, beyond
 * this test's 30), naming it by its number on the communicator, counted from 1 as
 * optireduce_last_op's ops is: `over[op]` says which operations were over the budget here. */
static void check_excess_warning(int fd, const int *over, int first_over) {
    char text[1 << 14];
    const ssize_t got = pread(fd, text, sizeof text - 1, 0);
    text[got > 0 ? got : 0] = 0;
    fputs(text, stderr);
    int warnings = 0;
    for (const char *p = text; (p = strstr(p, "warn: allreduce ")) != NULL; ++p) {
        unsigned long long named = 0;
        double pct = -1;
        ++warnings;
        if (sscanf(p, "warn: allreduce %llu of %*u floats lost %lf%%", &named, &pct) != 2) {
            CHECK(0, "cannot read the excess-loss warning: %.80s", p);
            continue;
        }
        CHECK(first_over >= 0 && named == (unsigned long long)first_over + 1,
              "the excess-loss warning names allreduce %llu, but the first over the budget here was %d", named,
              first_over + 1);
        CHECK(named >= 1 && named <= 64 && over[named - 1], "the warning names allreduce %llu, not over the budget",
              named);
        CHECK(pct >= 0 && pct <= 100, "the warning says %.2f%% of the entries were lost", pct);
    }
    CHECK(warnings == (first_over >= 0 ? 1 : 0), "%d excess-loss warnings, expected %d", warnings,
          first_over >= 0 ? 1 : 0);
}

static void case_excess(void) {
    const size_t n = 1 << 16;
    const int ops = 30;
    const double max_loss = env_num("OPTIREDUCE_MAX_LOSS", 0.1);
    const char *action = getenv("OPTIREDUCE_ON_EXCESS_LOSS");
    action = action ? action : "warn";
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    int paths[64], failed[64], flagged[64];
    int excess = 0, others_only = 0, errors = 0, wrong_errors = 0, inexact_reliable = 0, bad_text = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* No operation yet on a fresh communicator: nothing to report. */
    MPI_Comm fresh;
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    int rc = 0;
    last_op(fresh, &rc);
    CHECK(rc == -1, "optireduce_last_op on a communicator without operations returned %d", rc);
    MPI_Comm_free(&fresh);

    /* The library's excess-loss warning goes to stderr: kept in a file to check which operation it
     * names, then copied to stderr. */
    char log_path[] = "/tmp/optireduce-excess-XXXXXX";
    const int log_fd = mkstemp(log_path);
    CHECK(log_fd >= 0, "mkstemp failed");
    fflush(stderr);
    const int saved_stderr = dup(2);
    dup2(log_fd, 2);
    int over[64], first_over = -1;
    double most_lost = 0;
    optireduce_stats_t before = stats();
    for (int op = 0; op < ops; ++op) {
        for (size_t i = 0; i < n; ++i) in[i] = grad(g_rank, op, i);
        const int ret = MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        const optireduce_op_report_t r = last_op(MPI_COMM_WORLD, &rc);
        CHECK(rc == 0 && r.ops == (uint64_t)op + 1, "op %d: report rc %d ops %llu", op, rc, (unsigned long long)r.ops);
        CHECK(r.loss >= 0 && r.loss <= 1, "op %d: loss %.4f is not a fraction of the entries", op, r.loss);
        over[op] = r.path == 0 && r.loss > max_loss;
        most_lost = r.loss > most_lost ? r.loss : most_lost;
        if (over[op] && first_over < 0) first_over = op;
        if (op == 0) check_last_op_sized(MPI_COMM_WORLD, &r);
        paths[op] = r.path;
        failed[op] = ret != MPI_SUCCESS;
        flagged[op] = r.excess;
        excess += r.excess;
        others_only += r.excess && r.loss <= max_loss; /* over the budget on another rank only */
        if (ret != MPI_SUCCESS) {
            ++errors;
            if (!r.excess) ++wrong_errors;
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(ret, text, &len);
            if (!strstr(text, "OPTIREDUCE_MAX_LOSS")) {
                ++bad_text;
                printf("error text: %s\n", text);
            }
        } else if (r.excess && strcmp(action, "error") == 0) {
            ++wrong_errors;
        }
        if (r.path == 1) {
            for (size_t i = 0; i < n; ++i) {
                double truth = 0;
                for (int k = 0; k < g_size; ++k) truth += grad(k, op, i);
                if (fabs(out[i] - truth) > 1e-4 * (fabs(truth) + 1)) {
                    ++inexact_reliable;
                    break;
                }
            }
        }
    }
    optireduce_stats_t after = stats();
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    check_excess_warning(log_fd, over, first_over);
    close(log_fd);
    unlink(log_path);
    int reliable = 0, bounded = 0;
    for (int op = 0; op < ops; ++op) {
        reliable += paths[op] == 1;
        bounded += paths[op] == 0;
    }
    /* With error and exact the ranks agree on the excess, so they must return the same code and
     * report the same flag for every operation (a user who skips a step on error must not leave
     * the others in a collective); with warn each rank judges its own loss. */
    const int same_rc = same_on_all_ranks(failed, ops), same_flag = same_on_all_ranks(flagged, ops);
    const int same = same_on_all_ranks(paths, ops);
    int others_total = 0;
    MPI_Allreduce(&others_only, &others_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("excess rank %d (%s): %d of %d ops over the budget (%d of them on other ranks only), %d errors "
           "returned, %d bounded, %d reliable; at most %.1f%% lost in one\n",
           g_rank, action, excess, ops, others_only, errors, bounded, reliable, 100 * most_lost);
    CHECK(after.excess_loss_calls - before.excess_loss_calls == (uint64_t)excess, "stats count %llu excess ops, reports %d",
          (unsigned long long)(after.excess_loss_calls - before.excess_loss_calls), excess);
    CHECK(excess > 0, "no operation exceeded OPTIREDUCE_MAX_LOSS");
    CHECK(same, "ranks took different paths for the same operation");
    if (strcmp(action, "warn") == 0) {
        CHECK(errors == 0 && reliable == 0, "warn: %d errors, %d reliable ops", errors, reliable);
    } else if (strcmp(action, "error") == 0) {
        CHECK(errors == excess && wrong_errors == 0, "error: %d errors for %d excess ops (%d mismatched)", errors,
              excess, wrong_errors);
        CHECK(bad_text == 0, "%d error strings do not name OPTIREDUCE_MAX_LOSS", bad_text);
        CHECK(same_rc && same_flag, "error: ranks returned different codes (%s) or flags (%s) for one operation",
              same_rc ? "same" : "differ", same_flag ? "same" : "differ");
        /* OPTIREDUCE_MAX_LOSS near the drop rate: some ranks are over and others not. */
        if (max_loss >= 0.2)
            CHECK(others_total > 0, "error: no operation was over the budget on some ranks only (agreement untested)");
    } else {
        CHECK(same_flag, "exact: ranks reported different excess flags for one operation");
        CHECK(errors == 0, "exact: %d errors returned", errors);
        CHECK(reliable > 0 && inexact_reliable == 0, "exact: %d reliable ops, %d of them inexact", reliable,
              inexact_reliable);
        CHECK(after.reliable_calls - before.reliable_calls == (uint64_t)reliable, "stats count %llu reliable ops",
              (unsigned long long)(after.reliable_calls - before.reliable_calls));
        CHECK(bounded >= 2, "exact: bounded mode was never probed again (%d bounded ops)", bounded);
    }
    free(in);
    free(out);
}

/* ---- measure (no checks) -------------------------------------------------------------------- */
static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void case_measure(void) {
    const char *sizes = getenv("CHECK_SIZES");
    const int ops = (int)env_num("CHECK_OPS", 20);
    char list[512];
    snprintf(list, sizeof list, "%s", sizes ? sizes : "262144,1048576");
    double *times = malloc((size_t)ops * sizeof *times);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        const size_t n = (size_t)atol(tok);
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
        double nmse = 0, worst = 0, est = 0;
        optireduce_stats_t before = stats();
        for (int op = 0; op < ops; ++op) {
            for (size_t i = 0; i < n; ++i) in[i] = grad(g_rank, op, i);
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = now_ms();
            MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            times[op] = now_ms() - t0;
            int rc = 0;
            est += last_op(MPI_COMM_WORLD, &rc).error_estimate / ops;
            double e2 = 0, t2 = 0, emax = 0;
            for (size_t i = 0; i < n; ++i) {
                double truth = 0;
                for (int k = 0; k < g_size; ++k) truth += grad(k, op, i);
                const double e = out[i] - truth;
                e2 += e * e;
                t2 += truth * truth;
                if (fabs(e) > emax) emax = fabs(e);
            }
            nmse += e2 / t2 / ops;
            if (emax / sqrt(t2 / (double)n) > worst) worst = emax / sqrt(t2 / (double)n);
        }
        optireduce_stats_t after = stats();
        /* Every rank's view: the mean over ranks of NMSE and loss, the worst error, rank 0's times. */
        double v[3] = {nmse / g_size, est / g_size, 0};
        const double lost = (double)((after.entries_lost_rs - before.entries_lost_rs) + (after.entries_lost_ag - before.entries_lost_ag));
        const double expected = (double)((after.entries_expected_rs - before.entries_expected_rs) +
                                         (after.entries_expected_ag - before.entries_expected_ag));
        v[2] = (expected > 0 ? lost / expected : 0) / g_size;
        MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        qsort(times, (size_t)ops, sizeof *times, cmp_double);
        if (g_rank == 0)
            printf("measure %zu %d %.3f %.6g %.4g %.4g %.5f\n", n, ops, times[ops / 2], v[0], worst, v[1], v[2]);
        fflush(stdout);
        free(in);
        free(out);
    }
    free(times);
}

/* ---- codec ----------------------------------------------------------------------------------- */

static void case_codec(void) {
    const size_t n = 1 << 16, stride = 4;
    const int K = (int)env_num("CHECK_OPS", 100);
    const double max_nmse = env_num("CHECK_MAX_NMSE", 5e-4);
    const size_t d = n / stride;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *s = calloc(d, sizeof *s), *s2 = calloc(d, sizeof *s2);
    double *hi = malloc(n * sizeof *hi), *lo = malloc(n * sizeof *lo);
    double worst_nmse = 0, sum_nmse = 0, worst_spread = 0;
    const optireduce_stats_t before = stats();
    for (int op = 0; op < K; ++op) {
        for (size_t i = 0; i < n; ++i) in[i] = grad_own_mean(g_rank, op, i);
        MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double err2 = 0, norm2 = 0;
        for (size_t i = 0; i < n; ++i) {
            const double truth = sum_own_mean(op, i);
            const double e = out[i] - truth;
            err2 += e * e;
            norm2 += truth * truth;
            if (i % stride == 0) {
                s[i / stride] += e;
                s2[i / stride] += e * e;
            }
        }
        worst_nmse = fmax(worst_nmse, err2 / norm2);
        sum_nmse += err2 / norm2;
        worst_spread = fmax(worst_spread, spread_across_ranks(out, n, hi, lo));
    }
    const optireduce_stats_t after = stats();
    double chi = 0, zmax = 0;
    z_scores(s, s2, d, K, &chi, &zmax);
    const unsigned long long lost = (after.entries_lost_rs - before.entries_lost_rs) +
                                    (after.entries_lost_ag - before.entries_lost_ag);
    printf("codec rank %d: %d ops, NMSE mean %.3g max %.3g, mean z^2 %.3f, max |z| %.2f, spread %g, lost %llu\n",
           g_rank, K, sum_nmse / K, worst_nmse, chi, zmax, worst_spread, lost);
    CHECK(after.bounded_calls - before.bounded_calls == (uint64_t)K, "%llu of %d calls were bounded",
          (unsigned long long)(after.bounded_calls - before.bounded_calls), K);
    CHECK(lost == 0, "%llu entries lost: this case measures the codec alone", lost);
    CHECK(worst_nmse > 0, "every result exact: the codec did not act (is OPTIREDUCE_CODEC set?)");
    CHECK(worst_nmse <= max_nmse, "an operation's NMSE %.3g is above %.3g", worst_nmse, max_nmse);
    CHECK(worst_spread == 0, "replicas differ by up to %g", worst_spread);
    /* As in unbiased: z is Student-t, coordinates of one block are correlated by the transform. */
    CHECK(chi > 0.7 && chi < 1.4, "mean z^2 %.3f outside [0.7, 1.4]: the codec is biased", chi);
    CHECK(zmax < 6.0, "max |z| %.2f: some coordinate is biased", zmax);
    free(in), free(out), free(s), free(s2), free(hi), free(lo);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "unbiased") == 0) case_unbiased();
    else if (strcmp(which, "drift") == 0) case_drift();
    else if (strcmp(which, "carry") == 0) case_carry();
    else if (strcmp(which, "excess") == 0) case_excess();
    else if (strcmp(which, "measure") == 0) case_measure();
    else if (strcmp(which, "codec") == 0) case_codec();
    else CHECK(0, "unknown case '%s' (unbiased, drift, excess, codec, measure)", which);
    int failed = g_failed;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && !failed) printf("PASS %s\n", which);
    MPI_Finalize();
    return failed;
}
