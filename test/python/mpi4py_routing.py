#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py routing check: one MPI job (mpirun -np N, N >= 2), optireduce preloaded or not.

usage: mpirun -np 4 [-x LD_PRELOAD=liboptireduce.so -x OPTIREDUCE_MIN_BYTES=0 ...]
           python3 mpi4py_routing.py GROUP... [--expect-library [--expect-bounded] |
           --expect-native]

Groups:
  allreduce   comm.Allreduce on numpy float32 arrays, in place (MPI.IN_PLACE) and not, on
              COMM_WORLD, a Dup and a Split of it, explicit [buf, count, MPI.FLOAT] specs and a
              reused fusion-style buffer; then the calls the engine must not take: float64,
              int32, MPI.MAX on float32, float32 on COMM_SELF (one rank: a fallback), and the
              lower-case comm.allreduce of pickled Python objects (numpy arrays included).
  iallreduce  comm.Iallreduce on float32, completed with req.Wait(), req.Test() loops,
              MPI.Request.Waitall over a list that mixes it with Isend/Irecv requests, Waitany,
              Testall; four in flight at once completed in reverse order; one in flight across a
              blocking Allreduce on the same communicator; two communicators at once; then
              ineligible Iallreduces (float64, int32, MAX).

Every result is compared with the exact sum: the data are small integers, so any summation
order gives the same float32 bits. OPTIREDUCE_MODE=exact (and a native run) must match bit for
bit. Bounded mode (the default) must match within float tolerance (its randomized Hadamard
transform rounds) unless entries were lost, and then only as far as the library said: every
entry finite, and the relative error ||result - exact|| / ||result|| within ESTIMATE_FACTOR times
the error estimates the library reported for the calls (see check_result; calls of fewer than
TINY floats, whose estimate rests on a sample of a few values, need only some rank to have lost
entries). A buffer the call never wrote therefore fails: NaN and zeros always, the input left in
place (TINY floats or more) unless the library itself estimated that call's result a third or more
wrong. Tolerated results are reported as such.

With the library (--expect-library), every call's optireduce_get_stats() delta is checked:
eligible float32 SUM calls must add exactly their number to engine_calls and nothing to
passthrough_calls/fallback_calls; ineligible ones must add to passthrough_calls only (and to
fallback_calls for a float SUM the engine does not take); blocking engine calls must also show in
optireduce_last_op() of their communicator. --expect-bounded: every engine call of this rank ran
bounded (with deadlines: bounded_calls), as over the kernel UDP channel. Each failure prints a line starting "FAIL "; the job
exits nonzero if any rank failed.
"""
import os
import sys
import time

import numpy as np
from mpi4py import MPI

from optireduce_ctypes import Library, delta, lost

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
MODE = os.environ.get("OPTIREDUCE_MODE", "bounded")
lib = Library()
LIB = lib.present()
BIT_EXACT = (not LIB) or MODE in ("exact", "off")
POLL_LIMIT_S = 60.0

failures = []
# Bounded mode: results of fewer than TINY floats off by more than the library estimated
# (acceptable only if some rank lost entries, judged at the end).
suspects = []
checks = {"results": 0, "stats": 0}
engine_calls_seen = [0]
loss_seen = [0]
totals = {"bounded_calls": 0, "hadamard_calls": 0, "nonblocking_calls": 0}


def fail(msg):
    failures.append(msg)
    print("FAIL rank %d: %s" % (rank, msg), flush=True)


# --- the library's error estimates ---------------------------------------------------------
# error_estimate_sum (a double, which Library.read() leaves out; read_all() has it): the sum of
# the error estimates of every bounded operation this rank ran. Each estimate is >= 0, so the
# growth since a mark bounds the estimate of every call made since then.
estimate_mark = [0.0]  # set when each Counters block begins


def estimate_sum():
    s = lib.read_all()
    return 0.0 if s is None else s["error_estimate_sum"]


# The error estimate is designed to be within a factor of 2 of the actual error (optireduce.h):
# 3 leaves room. A buffer the call never wrote is off by ||result - exact|| / ||result|| = infinity
# (zero-filled) or about sqrt(N - 1) (in place, left as this rank's input: 1.7 at 4 ranks, 1 for
# the two-rank halves), so the latter passes only where the library itself estimated its result a
# third or more wrong (at 4 ranks: over half wrong).
ESTIMATE_FACTOR = 3.0
ROUNDING_REL = 1e-5
TINY = 64  # floats: below this the estimate rests on a sample of a few values


# --- data ------------------------------------------------------------------------------------
def data(n, seed, r, dtype=np.float32):
    """Rank r's contribution: integers in [-8, 8], different per rank, size and seed."""
    i = np.arange(n, dtype=np.int64)
    return (((i * (2 * r + 3) + seed * 7 + r * 5) % 17) - 8).astype(dtype)


def exact_sum(n, seed, ranks, dtype=np.float32):
    """The exact sum over `ranks` (world ranks): small integers, so exact in float32 too."""
    total = np.zeros(n, dtype=np.int64)
    for r in ranks:
        total += data(n, seed, r, np.int64)
    return total.astype(dtype)


def check_result(what, got, want):
    checks["results"] += 1
    if got.dtype != want.dtype or got.shape != want.shape:
        fail("%s: result %s%s, want %s%s" % (what, got.dtype, got.shape, want.dtype, want.shape))
        return
    if got.dtype != np.float32 or BIT_EXACT:
        if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
            bad = np.flatnonzero(got != want)
            fail("%s: %d of %d entries differ from the exact sum (first at %s: %r, want %r)"
                 % (what, len(bad), got.size, bad[0] if len(bad) else "-0?",
                    got[bad[0]] if len(bad) else got[0], want[bad[0]] if len(bad) else want[0]))
        return
    # Bounded mode: the Hadamard transform rounds; nothing else may differ without a loss, and
    # then only as far as the library's own error estimate for the call says.
    if not np.all(np.isfinite(got)):
        fail("%s: non-finite entries in the result" % what)
        return
    err = np.abs(got.astype(np.float64) - want)
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    norm = float(np.linalg.norm(want.astype(np.float64))) or 1.0
    rel = float(np.linalg.norm(err)) / norm
    if err.max() <= 1e-4 * scale and rel <= ROUNDING_REL:
        return
    # The library's estimate is of ||result - exact|| / ||result|| (a zero result: infinite), for
    # every call since the current Counters block began, this one included.
    got_norm = float(np.linalg.norm(got.astype(np.float64)))
    rel_got = float(np.linalg.norm(err)) / got_norm if got_norm > 0 else float("inf")
    estimate = estimate_sum() - estimate_mark[0]
    allowed = ESTIMATE_FACTOR * estimate + ROUNDING_REL
    msg = ("%s: max abs error %.3g (scale %g), relative error %.3g (%.3g of the result); the "
           "library's error estimate %.3g" % (what, err.max(), scale, rel, rel_got, estimate))
    if rel_got <= allowed:
        print("TOLERATED rank %d: %s, within %g times it" % (rank, msg, ESTIMATE_FACTOR),
              flush=True)
    elif got.size < TINY and rel_got < float("inf"):
        # A few floats: the library's estimate rests on a sample of the ranks' spread over those
        # few (all alike, it is 0 for a sum that lost a term). Loss somewhere must explain it
        # (main()); a zero result never.
        suspects.append(msg)
    else:
        fail("%s: over %g times it" % (msg, ESTIMATE_FACTOR))


# --- counters --------------------------------------------------------------------------------
class Counters:
    """Delta of this process's optireduce counters over a with-block."""

    def __init__(self, what, engine=0, passthrough=0, fallback=0, nonblocking=0):
        self.what, self.want = what, (engine, passthrough, fallback)
        self.nonblocking = nonblocking  # of engine: Iallreduces (nonblocking_calls)

    def __enter__(self):
        self.before = lib.read()
        estimate_mark[0] = estimate_sum()
        return self

    def __exit__(self, *exc):
        if exc[0] is not None or not LIB:
            return False
        d = delta(lib.read(), self.before)
        self.d = d
        loss_seen[0] += lost(d)
        engine_calls_seen[0] += d["engine_calls"]
        for k in totals:
            totals[k] += d[k]
        got = (d["engine_calls"], d["passthrough_calls"], d["fallback_calls"])
        checks["stats"] += 1
        if got != self.want:
            fail("%s: counters engine_calls +%d, passthrough_calls +%d, fallback_calls +%d; want "
                 "+%d, +%d, +%d" % ((self.what,) + got + self.want))
        elif d["nonblocking_calls"] != self.nonblocking:
            fail("%s: counters nonblocking_calls +%d, want +%d"
                 % (self.what, d["nonblocking_calls"], self.nonblocking))
        return False


def check_last_op(what, c, before, n):
    """After one blocking engine call of n floats on communicator c."""
    if not LIB:
        return
    after = lib.last_op(c)
    checks["stats"] += 1
    ops_before = before.ops if before else 0
    if after is None or after.ops != ops_before + 1 or after.count != n:
        fail("%s: optireduce_last_op: %s, want ops %d and count %d"
             % (what, "none" if after is None else "ops %d count %d" % (after.ops, after.count),
                ops_before + 1, n))


def poll(what, done):
    """Calls done() until it returns True; a hang is a failure of the whole job."""
    t0 = time.monotonic()
    polls = 0
    while not done():
        polls += 1
        if time.monotonic() - t0 > POLL_LIMIT_S:
            fail("%s: not complete after %.0f s (%d polls)" % (what, POLL_LIMIT_S, polls))
            sys.stdout.flush()
            comm.Abort(1)
    return polls


# --- groups ----------------------------------------------------------------------------------
SIZES = [1, 3, 1000, 65539, 262147]
WORLD = list(range(size))


def group_allreduce():
    seed = 0
    # COMM_WORLD, out of place and in place, every size.
    for n in SIZES:
        for in_place in (False, True):
            seed += 1
            what = "Allreduce(%s, n=%d)" % ("IN_PLACE" if in_place else "out of place", n)
            want = exact_sum(n, seed, WORLD)
            before = lib.last_op(comm)
            with Counters(what, engine=1):
                if in_place:
                    got = data(n, seed, rank)
                    comm.Allreduce(MPI.IN_PLACE, got)
                else:
                    send = data(n, seed, rank)
                    got = np.full(n, np.nan, dtype=np.float32)
                    comm.Allreduce(send, got)
            check_result(what, got, want)
            if not in_place and not np.array_equal(send, data(n, seed, rank)):
                fail("%s: the send buffer changed" % what)
            check_last_op(what, comm, before, n)

    # Explicit buffer specs: [buf, MPI.FLOAT] and a prefix [buf, count, MPI.FLOAT].
    seed += 1
    n, m = 5000, 3001
    send = data(n, seed, rank)
    got = np.zeros(n, dtype=np.float32)
    with Counters("Allreduce([buf, count, MPI.FLOAT])", engine=2):
        comm.Allreduce([send, MPI.FLOAT], [got, MPI.FLOAT])
        check_result("Allreduce([buf, MPI.FLOAT])", got, exact_sum(n, seed, WORLD))
        part = np.zeros(n, dtype=np.float32)
        comm.Allreduce([send, m, MPI.FLOAT], [part, m, MPI.FLOAT])
    check_result("Allreduce([buf, %d, MPI.FLOAT]) prefix" % m, part[:m], exact_sum(m, seed, WORLD))
    if np.any(part[m:] != 0):
        fail("Allreduce([buf, %d, MPI.FLOAT]) wrote past its count" % m)

    # A fusion buffer reused call after call, as Horovod and DDP do.
    fusion = np.empty(4096 + 17, dtype=np.float32)
    reps = 20
    with Counters("Allreduce(IN_PLACE) x%d on a reused buffer" % reps, engine=reps):
        for k in range(reps):
            fusion[:] = data(fusion.size, 100 + k, rank)
            comm.Allreduce(MPI.IN_PLACE, fusion)
            check_result("reused buffer, call %d" % k, fusion.copy(),
                         exact_sum(fusion.size, 100 + k, WORLD))

    # Other communicators: a duplicate of COMM_WORLD and the even/odd halves of it.
    dup = comm.Dup()
    half = comm.Split(rank % 2, rank)
    for c, name, members in ((dup, "Dup", WORLD),
                             (half, "Split(rank % 2)", [r for r in WORLD if r % 2 == rank % 2])):
        seed += 1
        n = 10007
        what = "Allreduce(IN_PLACE, n=%d) on %s" % (n, name)
        if len(members) < 2:  # a one-rank half (np 3 and the like): the engine steps aside
            with Counters(what, passthrough=1, fallback=1):
                got = data(n, seed, rank)
                c.Allreduce(MPI.IN_PLACE, got)
            check_result(what, got, exact_sum(n, seed, members))
            continue
        before = lib.last_op(c)
        with Counters(what, engine=1):
            got = data(n, seed, rank)
            c.Allreduce(MPI.IN_PLACE, got)
        check_result(what, got, exact_sum(n, seed, members))
        check_last_op(what, c, before, n)

    # Calls the engine must not take. Each goes to the underlying MPI untouched.
    seed += 1
    n = 4099
    for dtype, name in ((np.float64, "float64"), (np.int32, "int32")):
        what = "Allreduce(%s, SUM)" % name
        with Counters(what, passthrough=1):
            got = np.zeros(n, dtype=dtype)
            comm.Allreduce(data(n, seed, rank, dtype), got)
        check_result(what, got, exact_sum(n, seed, WORLD, dtype))
        what = "Allreduce(IN_PLACE, %s, SUM)" % name
        with Counters(what, passthrough=1):
            got = data(n, seed, rank, dtype)
            comm.Allreduce(MPI.IN_PLACE, got)
        check_result(what, got, exact_sum(n, seed, WORLD, dtype))
    for op, name, fn in ((MPI.MAX, "MAX", np.maximum), (MPI.MIN, "MIN", np.minimum),
                         (MPI.PROD, "PROD", None)):
        what = "Allreduce(float32, %s)" % name
        if fn is None:  # products of small integers overflow nothing at 4 ranks: use +-1, 2
            mine = np.where(data(n, seed, rank) > 0, 2.0, -1.0).astype(np.float32)
            want = np.ones(n, dtype=np.float32)
            for r in WORLD:
                want *= np.where(data(n, seed, r) > 0, 2.0, -1.0).astype(np.float32)
        else:
            mine = data(n, seed, rank)
            want = data(n, seed, 0)
            for r in WORLD[1:]:
                want = fn(want, data(n, seed, r))
        with Counters(what, passthrough=1):
            got = np.zeros(n, dtype=np.float32)
            comm.Allreduce(mine, got, op=op)
        if not np.array_equal(got, want):
            fail("%s: wrong result" % what)
        checks["results"] += 1
    # One rank: a float SUM the engine does not take (counted as a fallback).
    what = "Allreduce(float32, SUM) on COMM_SELF"
    with Counters(what, passthrough=1, fallback=1):
        got = data(n, seed, rank)
        MPI.COMM_SELF.Allreduce(MPI.IN_PLACE, got)
    check_result(what, got, data(n, seed, rank))
    # Lower-case allreduce pickles Python objects and reduces them with point-to-point messages:
    # no MPI_Allreduce of floats at all, whatever the objects are.
    with Counters("comm.allreduce(python objects)", passthrough=0):
        s = comm.allreduce(rank + 1)
        arr = comm.allreduce(data(n, seed, rank))  # numpy float32, pickled: SUM is np.add
        mx = comm.allreduce(float(rank), op=MPI.MAX)
        lst = comm.allreduce([rank])
    checks["results"] += 1
    if s != size * (size + 1) // 2 or mx != size - 1 or lst != WORLD or arr.dtype != np.float32 \
            or not np.array_equal(arr, exact_sum(n, seed, WORLD)):
        fail("comm.allreduce(python objects): wrong results (%r, %r, %r)" % (s, mx, lst))

    dup.Free()
    half.Free()


def ring_requests(n, seed):
    """Isend to the next rank, Irecv from the previous one (float32): (requests, recv buffer,
    what it must receive)."""
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    sendbuf = data(n, seed, rank)
    recvbuf = np.zeros(n, dtype=np.float32)
    rs = comm.Isend(sendbuf, dest=nxt, tag=seed)
    rr = comm.Irecv(recvbuf, source=prv, tag=seed)
    return rs, rr, recvbuf, data(n, seed, prv), sendbuf


def group_iallreduce():
    seed = 1000
    # req.Wait(), out of place and in place.
    for n in (3, 65539):
        for in_place in (False, True):
            seed += 1
            what = "Iallreduce(%s, n=%d) + Wait" % ("IN_PLACE" if in_place else "out of place", n)
            with Counters(what, engine=1, nonblocking=1):
                if in_place:
                    got = data(n, seed, rank)
                    req = comm.Iallreduce(MPI.IN_PLACE, got)
                else:
                    send = data(n, seed, rank)
                    got = np.full(n, np.nan, dtype=np.float32)
                    req = comm.Iallreduce(send, got)
                req.Wait()
            check_result(what, got, exact_sum(n, seed, WORLD))
            if req != MPI.REQUEST_NULL:
                fail("%s: request not MPI.REQUEST_NULL after Wait" % what)

    # req.Test() loops, with and without a status.
    for n in (1000, 262147):
        for in_place in (False, True):
            seed += 1
            what = "Iallreduce(%s, n=%d) + Test loop" % ("IN_PLACE" if in_place else "out of place",
                                                         n)
            with Counters(what, engine=1, nonblocking=1):
                send = data(n, seed, rank)
                if in_place:
                    got = send
                    req = comm.Iallreduce(MPI.IN_PLACE, got)
                else:
                    got = np.zeros(n, dtype=np.float32)
                    req = comm.Iallreduce(send, got)
                st = MPI.Status()
                poll(what, lambda: req.Test(st))
            check_result(what, got, exact_sum(n, seed, WORLD))
            if st.Get_error() != MPI.SUCCESS:
                fail("%s: status error %d" % (what, st.Get_error()))

    # MPI.Request.Waitall over a list mixing it with point-to-point requests.
    seed += 1
    n = 20011
    what = "Waitall([Isend, Iallreduce, Irecv])"
    with Counters(what, engine=1, nonblocking=1):
        rs, rr, recvbuf, want_recv, _ = ring_requests(n, seed)
        got = data(n, seed + 1, rank)
        ria = comm.Iallreduce(MPI.IN_PLACE, got)
        reqs = [rs, ria, rr]
        statuses = [MPI.Status() for _ in reqs]
        MPI.Request.Waitall(reqs, statuses)
    check_result(what, got, exact_sum(n, seed + 1, WORLD))
    check_result(what + " (the Irecv)", recvbuf, want_recv)
    if any(r != MPI.REQUEST_NULL for r in reqs):
        fail("%s: requests left active" % what)
    if statuses[2].Get_source() != (rank - 1) % size:
        fail("%s: Irecv status source %d" % (what, statuses[2].Get_source()))

    # Waitany until every request is done.
    seed += 2
    what = "Waitany([Irecv, Iallreduce, Isend])"
    with Counters(what, engine=1, nonblocking=1):
        rs, rr, recvbuf, want_recv, _ = ring_requests(n, seed)
        send = data(n, seed + 1, rank)
        got = np.zeros(n, dtype=np.float32)
        ria = comm.Iallreduce(send, got)
        reqs = [rr, ria, rs]
        order = []
        while True:
            i = MPI.Request.Waitany(reqs)
            if i == MPI.UNDEFINED:
                break
            order.append(i)
    check_result(what, got, exact_sum(n, seed + 1, WORLD))
    check_result(what + " (the Irecv)", recvbuf, want_recv)
    if sorted(order) != [0, 1, 2]:
        fail("%s: Waitany returned indices %s" % (what, order))

    # Testall until true.
    seed += 2
    what = "Testall([Iallreduce, Isend, Irecv]) loop"
    with Counters(what, engine=1, nonblocking=1):
        rs, rr, recvbuf, want_recv, _ = ring_requests(n, seed)
        got = data(n, seed + 1, rank)
        ria = comm.Iallreduce(MPI.IN_PLACE, got)
        reqs = [ria, rs, rr]
        poll(what, lambda: MPI.Request.Testall(reqs))
    check_result(what, got, exact_sum(n, seed + 1, WORLD))
    check_result(what + " (the Irecv)", recvbuf, want_recv)

    # Four in flight at once (sizes and in-place-ness mixed), completed in reverse order.
    seed += 2
    what = "4 Iallreduces in flight, waited in reverse order"
    sizes = [70001, 5, 4096, 262147]
    with Counters(what, engine=len(sizes), nonblocking=len(sizes)):
        bufs, sends, reqs = [], [], []  # a send buffer must live until its request completes
        for k, m in enumerate(sizes):
            if k % 2:
                b = data(m, seed + k, rank)
                reqs.append(comm.Iallreduce(MPI.IN_PLACE, b))
            else:
                b = np.zeros(m, dtype=np.float32)
                sends.append(data(m, seed + k, rank))
                reqs.append(comm.Iallreduce(sends[-1], b))
            bufs.append(b)
        for k in reversed(range(len(reqs))):
            reqs[k].Wait()
    for k, m in enumerate(sizes):
        check_result("%s: #%d (n=%d)" % (what, k, m), bufs[k], exact_sum(m, seed + k, WORLD))

    # One in flight across a blocking Allreduce on the same communicator (MPICH's iallred.c).
    seed += len(sizes)
    what = "Iallreduce, then Allreduce, then Wait"
    with Counters(what, engine=2, nonblocking=1):
        a = data(30011, seed, rank)
        req = comm.Iallreduce(MPI.IN_PLACE, a)
        b = data(1000, seed + 1, rank)
        comm.Allreduce(MPI.IN_PLACE, b)
        req.Wait()
    check_result(what + " (the Iallreduce)", a, exact_sum(30011, seed, WORLD))
    check_result(what + " (the Allreduce)", b, exact_sum(1000, seed + 1, WORLD))

    # Two communicators at once.
    seed += 2
    dup = comm.Dup()
    what = "Iallreduce on COMM_WORLD and a Dup, Waitall"
    with Counters(what, engine=2, nonblocking=2):
        a = data(9000, seed, rank)
        b = data(9000, seed + 1, rank)
        reqs = [dup.Iallreduce(MPI.IN_PLACE, b), comm.Iallreduce(MPI.IN_PLACE, a)]
        MPI.Request.Waitall(reqs)
    check_result(what + " (COMM_WORLD)", a, exact_sum(9000, seed, WORLD))
    check_result(what + " (Dup)", b, exact_sum(9000, seed + 1, WORLD))
    dup.Free()

    # Ineligible nonblocking calls: to the underlying MPI, untouched.
    seed += 2
    n = 4099
    for dtype, name in ((np.float64, "float64"), (np.int32, "int32")):
        what = "Iallreduce(%s, SUM) + Wait" % name
        with Counters(what, passthrough=1):
            got = data(n, seed, rank, dtype)
            comm.Iallreduce(MPI.IN_PLACE, got).Wait()
        check_result(what, got, exact_sum(n, seed, WORLD, dtype))
    what = "Iallreduce(float32, MAX) + Wait"
    with Counters(what, passthrough=1):
        got = np.zeros(n, dtype=np.float32)
        send = data(n, seed, rank)
        comm.Iallreduce(send, got, op=MPI.MAX).Wait()
    want = data(n, seed, 0)
    for r in WORLD[1:]:
        want = np.maximum(want, data(n, seed, r))
    checks["results"] += 1
    if not np.array_equal(got, want):
        fail("%s: wrong result" % what)


GROUPS = {"allreduce": group_allreduce, "iallreduce": group_iallreduce}


def main():
    args = sys.argv[1:]
    groups = [a for a in args if not a.startswith("--")]
    if not groups or any(g not in GROUPS for g in groups):
        sys.exit(__doc__)
    if "--expect-library" in args and not LIB:
        fail("the library is not preloaded (no optireduce_get_stats in the process)")
    if "--expect-native" in args and LIB:
        fail("the library is preloaded, but this run should be native")
    if size < 2:
        fail("run this with at least 2 ranks")
    if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        print("rank %d: note: thread level %d" % (rank, MPI.Query_thread()), flush=True)
    t0 = time.monotonic()
    for g in groups:
        GROUPS[g]()
    secs = time.monotonic() - t0

    # Verdicts (lower-case collectives: point-to-point, not counted by the library).
    total_loss = comm.allreduce(loss_seen[0])
    for s in suspects:
        if total_loss:
            print("TOLERATED rank %d (%d entries lost in the job): %s (a few floats)"
                  % (rank, total_loss, s), flush=True)
        else:
            fail("%s, and no rank lost anything" % s)
    if "--expect-bounded" in args and totals["bounded_calls"] != engine_calls_seen[0]:
        fail("bounded_calls +%d, want every engine call (+%d) to have run with deadlines"
             % (totals["bounded_calls"], engine_calls_seen[0]))
    n_fail = comm.allreduce(len(failures))
    n_checks = comm.allreduce(checks["results"] + checks["stats"])
    engine = comm.allreduce(engine_calls_seen[0])
    kinds = {k: comm.allreduce(v) for k, v in sorted(totals.items())}
    if rank == 0:
        print("mpi4py_routing %s: %d ranks, library %s, mode %s, %d checks (%d on results, %d on "
              "counters, rank 0), engine calls %d (all ranks; %s), entries lost %d, %.1f s: %s"
              % (" ".join(groups), size, "preloaded" if LIB else "absent",
                 MODE if LIB else "-", n_checks, checks["results"], checks["stats"], engine,
                 ", ".join("%s %d" % kv for kv in kinds.items()), total_loss, secs,
                 "%d failures" % n_fail if n_fail else "OK"), flush=True)
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
