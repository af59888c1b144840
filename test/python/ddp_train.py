#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Data-parallel training with gradients averaged the way Horovod and PyTorch DDP do it, through
mpi4py, so that optireduce can be checked as a drop-in (test/python/drive.py runs and judges it).

usage: mpirun -np 4 python3 ddp_train.py [--iallreduce] [--steps N] [--seed S] ...

One process per rank, each with a replica of a 64-256-256-10 MLP on sklearn's digits
(torch.set_num_threads(1)). Per step:

- forward and backward on this rank's slice of the global batch. Gradient hooks (Tensor
  .register_hook, fired during backward in reverse parameter order) copy each gradient into one
  float32 numpy fusion buffer, allocated once and reused every step, at its bucket's place; when
  a bucket is complete its readiness goes to the background thread. Buckets are packed as DDP
  packs them (reverse order, whole parameters, up to --bucket-kb each): three here, the first
  (the last layer, 11 KB) below OPTIREDUCE_MIN_BYTES's default 64 KiB, the other two above.
- a background communication thread, the only thread calling MPI during training, on its own
  duplicate of COMM_WORLD (as Horovod does), runs a cycle every --cycle-ms: a small control
  allreduce (np.int32, MPI.SUM) of the per-bucket readiness and a stop flag, which every rank
  sees alike, then comm.Allreduce(MPI.IN_PLACE, bucket) on each bucket every rank has ready, in
  bucket order (or comm.Iallreduce on all of them and then Wait, with --iallreduce).
- the main thread waits for its buckets, takes the averages (sum / size) as .grad, and steps SGD.

Gradients are rounded to multiples of 2^-16 (|g| <= 32) before they go into the buffer, so a sum
of 4 of them is exact in float32 in any order: native MPI and optireduce's exact mode must then
produce bit-identical training. MPI is initialised by mpi4py with its default thread level,
MPI_THREAD_MULTIPLE (checked).

Rank 0 prints one line `RESULT {json}`: the loss curve (rank 0's batch loss per step), the test
accuracy every --eval-every steps and at the end (rank 0's replica on the whole test set), a hash
of every rank's parameters, and with the library preloaded the counter deltas of every rank over
the training (optireduce_get_stats) with what they should be: every gradient bucket of at least
OPTIREDUCE_MIN_BYTES through the engine (engine_calls; nonblocking_calls with --iallreduce), the
smaller one a fallback, and every int32 control allreduce passed through.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time

import numpy as np
import torch
import torch.nn.functional as F
from mpi4py import MPI

# The data and model code is scripts/train/train.py's, found from this file wherever the clone is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                "scripts", "train"))
import digits_mlp  # noqa: E402
from optireduce_ctypes import Library, delta

QUANT = 2.0 ** 16      # gradient grid: multiples of 1/QUANT
QUANT_MAX = 2.0 ** 21  # |g| * QUANT at most this: 4 ranks sum to < 2^24, exact in float32


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--hidden", default="256,256")
    p.add_argument("--batch", type=int, default=128, help="global batch")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--bucket-kb", type=float, default=128.0)
    p.add_argument("--cycle-ms", type=float, default=2.0, help="background thread's cycle")
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--iallreduce", action="store_true",
                   help="Iallreduce every agreed bucket, then Wait on each")
    p.add_argument("--label", default="run")
    p.add_argument("--data", default=None,
                   help="the split as an .npz from digits_mlp.save() (default: load sklearn's digits "
                        "in every rank, which costs each rank a second of sklearn import)")
    return p.parse_args()


class Buckets:
    """The fusion buffer and the buckets in it: bucket k is fusion[lo[k]:hi[k]]."""

    def __init__(self, model, bucket_bytes):
        params = [p for p in model.parameters()][::-1]  # the order backward produces them
        groups, cur, cur_bytes = [], [], 0
        for p in params:
            nbytes = p.numel() * 4
            if cur and cur_bytes + nbytes > bucket_bytes:
                groups.append(cur)
                cur, cur_bytes = [], 0
            cur.append(p)
            cur_bytes += nbytes
        if cur:
            groups.append(cur)
        self.fusion = np.zeros(sum(p.numel() for p in params), dtype=np.float32)
        self.place = {}  # id(param) -> (bucket, offset, n)
        self.lo, self.hi = [], []
        offset = 0
        for k, group in enumerate(groups):
            self.lo.append(offset)
            for p in group:
                self.place[id(p)] = (k, offset, p.numel())
                offset += p.numel()
            self.hi.append(offset)
        self.n_params = [len(g) for g in groups]
        self.count = len(groups)

    def view(self, k):
        return self.fusion[self.lo[k]:self.hi[k]]


class Communicator(threading.Thread):
    """The background thread: Horovod's cycle on a communicator of its own."""

    def __init__(self, comm, buckets, cycle_s, nonblocking):
        super().__init__(name="allreduce-bg", daemon=True)
        self.comm, self.b = comm, buckets
        self.cycle_s, self.nonblocking = cycle_s, nonblocking
        self.size = comm.Get_size()
        self.lock = threading.Lock()
        self.ready = [0] * buckets.count  # filled, not yet reduced
        self.done = [threading.Event() for _ in range(buckets.count)]
        self.stop_wanted = 0
        self.control = np.zeros(buckets.count + 1, dtype=np.int32)
        self.control_calls = self.bucket_calls = self.cycles = 0
        self.calls_by_bucket = [0] * buckets.count
        self.error = None

    def submit(self, k):
        self.done[k].clear()
        with self.lock:
            self.ready[k] = 1

    def request_stop(self):
        with self.lock:
            self.stop_wanted = 1

    def run(self):
        try:
            self.loop()
        except BaseException as e:  # the main thread reports it
            self.error = repr(e)
            for ev in self.done:
                ev.set()

    def loop(self):
        MPI_ = MPI
        while True:
            t0 = time.perf_counter()
            with self.lock:
                self.control[:-1] = self.ready
                self.control[-1] = self.stop_wanted
            self.comm.Allreduce(MPI_.IN_PLACE, self.control, op=MPI_.SUM)  # int32: not the engine
            self.control_calls += 1
            self.cycles += 1
            agreed = [k for k in range(self.b.count) if self.control[k] == self.size]
            if agreed:
                if self.nonblocking:
                    reqs = [self.comm.Iallreduce(MPI_.IN_PLACE, self.b.view(k)) for k in agreed]
                    for r in reqs:
                        r.Wait()
                else:
                    for k in agreed:
                        self.comm.Allreduce(MPI_.IN_PLACE, self.b.view(k))
                for k in agreed:
                    self.calls_by_bucket[k] += 1
                    self.bucket_calls += 1
                    with self.lock:
                        self.ready[k] = 0
                    self.done[k].set()
            if self.control[-1] == self.size:
                return
            if not agreed:
                rest = self.cycle_s - (time.perf_counter() - t0)
                if rest > 0:
                    time.sleep(rest)


def install_hooks(model, buckets, bg):
    """Per parameter: round the gradient onto the grid, copy it into its bucket's place in the
    fusion buffer, and hand the bucket over when its last parameter arrived."""
    pending = [0] * buckets.count
    hooks = []

    def reset():
        pending[:] = buckets.n_params

    def make(p):
        k, off, n = buckets.place[id(p)]

        def hook(grad):
            g = grad.detach().reshape(-1)
            q = torch.clamp(torch.round(g * QUANT), -QUANT_MAX, QUANT_MAX) / QUANT
            buckets.fusion[off:off + n] = q.numpy()
            pending[k] -= 1
            if pending[k] == 0:
                bg.submit(k)
            return None
        return hook

    for p in model.parameters():
        hooks.append(p.register_hook(make(p)))
    return reset


def params_hash(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()[:16]


def accuracy(model, x, y):
    with torch.no_grad():
        return float((model(x).argmax(dim=1) == y).float().mean())


def main():
    args = parse_args()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        sys.exit("ddp_train.py: MPI gave thread level %d, not MPI_THREAD_MULTIPLE"
                 % MPI.Query_thread())
    if args.batch % size:
        sys.exit("ddp_train.py: --batch %d is not a multiple of %d ranks" % (args.batch, size))
    lib = Library()
    x_tr, y_tr, x_te, y_te = digits_mlp.load_tensors(args.data)
    model = digits_mlp.make_model([int(w) for w in args.hidden.split(",")], args.seed)
    buckets = Buckets(model, int(args.bucket_kb * 1024))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    data = digits_mlp.batches(len(x_tr), args.batch, rank, size, args.seed)

    comm = world.Dup()  # the background thread's own communicator
    world.Barrier()
    before = lib.read()
    bg = Communicator(comm, buckets, args.cycle_ms / 1000.0, args.iallreduce)
    reset = install_hooks(model, buckets, bg)
    bg.start()

    losses, curve = [], []
    t_start = time.perf_counter()
    wait_s = 0.0
    for step in range(1, args.steps + 1):
        idx = next(data)
        opt.zero_grad(set_to_none=True)
        reset()
        loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
        loss.backward()  # the hooks hand the buckets over as they fill
        t_wait = time.perf_counter()
        for ev in bg.done:
            while not ev.wait(60.0):
                if not bg.is_alive():
                    break
                print("ddp_train.py rank %d: step %d still waiting for a bucket" % (rank, step),
                      file=sys.stderr, flush=True)
        wait_s += time.perf_counter() - t_wait
        if bg.error:
            sys.exit("ddp_train.py rank %d: background thread failed: %s" % (rank, bg.error))
        for p in model.parameters():
            _, off, n = buckets.place[id(p)]
            p.grad = torch.from_numpy(buckets.fusion[off:off + n]).view_as(p) / size
        opt.step()
        losses.append(float(loss))
        if step % args.eval_every == 0 or step == args.steps:
            curve.append([step, accuracy(model, x_te, y_te)])  # local: no MPI on this thread
    train_s = time.perf_counter() - t_start
    bg.request_stop()
    bg.join()
    if bg.error:
        sys.exit("ddp_train.py rank %d: background thread failed: %s" % (rank, bg.error))
    after = lib.read()

    # Every rank's view, to rank 0 (lower-case: pickled, point to point).
    mine = {"rank": rank, "hash": params_hash(model), "final_acc": accuracy(model, x_te, y_te),
            "control_calls": bg.control_calls, "bucket_calls": bg.bucket_calls,
            "calls_by_bucket": bg.calls_by_bucket, "wait_s": wait_s}
    if after is not None:
        d = delta(after, before)
        min_bytes = int(os.environ.get("OPTIREDUCE_MIN_BYTES", "65536"))
        big = [k for k in range(buckets.count) if (buckets.hi[k] - buckets.lo[k]) * 4 >= min_bytes]
        engine = sum(bg.calls_by_bucket[k] for k in big)
        small = bg.bucket_calls - engine
        mine["counters"] = {k: d[k] for k in (
            "engine_calls", "nonblocking_calls", "passthrough_calls", "fallback_calls",
            "bounded_calls", "entries_lost_rs", "entries_lost_ag", "entries_expected_rs",
            "entries_expected_ag")}
        mine["expected"] = {"engine_calls": engine,
                            "nonblocking_calls": engine if args.iallreduce else 0,
                            "fallback_calls": small,
                            "passthrough_calls": bg.control_calls + small}
        rep = lib.last_op(comm)
        mine["last_op_path"] = rep.path if rep else None
    everyone = world.gather(mine, root=0)
    comm.Free()
    if rank != 0:
        return
    result = {
        "label": args.label, "world": size, "seed": args.seed, "steps": args.steps,
        "iallreduce": args.iallreduce, "library": lib.present(),
        "mode": os.environ.get("OPTIREDUCE_MODE", "bounded") if lib.present() else None,
        "thread_level": MPI.Query_thread(),
        "params": sum(p.numel() for p in model.parameters()),
        "bucket_floats": [hi - lo for lo, hi in zip(buckets.lo, buckets.hi)],
        "losses": losses, "curve": curve, "final_acc": everyone[0]["final_acc"],
        "train_s": train_s, "ranks": everyone,
    }
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
