#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Data-parallel training of an MLP on sklearn's digits, one process per rank under mpirun.

The gradients are averaged the way PyTorch's DistributedDataParallel does it: packed into fixed
buckets (--bucket-mb, 25 MB like DDP), one allreduce per bucket, divided by the world size. What
carries the allreduce is the point of the exercise (--backend):

  mpi   mpi4py comm.Allreduce(MPI.IN_PLACE, bucket) on float32 numpy views of the buckets: native
        Open MPI as it is, or optireduce when liboptireduce.so is preloaded (OPTIREDUCE_MODE
        bounded or exact), which takes large float SUM allreduces;
  gloo  torch.distributed's gloo all_reduce on the same buckets (rank and size from Open MPI's
        OMPI_COMM_WORLD_* variables, rendezvous at --master-addr:--master-port). With
        --wire-dtype fp16 each bucket is cast to float16 for the all_reduce and back to float32
        after, as PyTorch's fp16_compress_hook does: half the bytes on the wire, the fair peer
        of optireduce's bf16 and int8 codecs (OPTIREDUCE_CODEC), which the mpi backend takes
        from the library instead.

Rank 0 writes one CSV row per iteration (--csv) and prints one line `RESULT {json}` at the end.

Defaults. A 64-3200-3200-10 MLP: 10.5 M parameters, 42 MB of gradients in 3 buckets (the
3200x3200 weight alone is over 25 MB and gets one of its own, as in DDP). The global batch of 32
(8 per rank) keeps compute small against communication: on the emulated cloud (4 hosts at
1 Gbit/s, 2 cores) about 0.6 s of compute and 1.2 s of Open MPI allreduce per iteration. SGD with
lr 0.01 and momentum 0.9 reaches 0.95 test accuracy in 50-90 iterations depending on the seed.

Timing. wall_s is training time since a barrier after warm-up (one allreduce of each bucket, so
connection and engine setup are not training time). Evaluation (split over the ranks) and the
replica drift measurement (84 MB of float64 allreduces at the default size) pause that clock:
they are measurements, not training, and would otherwise tax the backends unequally. comm_ms is
the time inside the gradient allreduces (plus the division); compute_ms the rest of the
iteration (forward, backward, optimizer step). Unlike DDP, the allreduces do not overlap the
backward pass: every backend waits for its whole allreduce. --clock-file makes rank 0 log that
clock as it goes (start, every pause and resume, end; see Clock), so that another process can
follow the training time live: scripts/train/tail.py applies a link-cut schedule on it.

usage: mpirun -np 4 python3 train.py --backend mpi --csv run.csv [--label native] ...
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import digits_mlp  # beside this file: Python puts a script's directory on sys.path



def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("mpi", "gloo"), default="mpi")
    p.add_argument("--wire-dtype", choices=("fp32", "fp16"), default="fp32",
                   help="gloo only: the dtype the gradient buckets travel in (fp16: cast before "
                        "the all_reduce and back after, as fp16_compress_hook)")
    p.add_argument("--label", default=None, help="name in the RESULT line (default: the backend)")
    p.add_argument("--seed", type=int, default=1, help="model init and data order")
    p.add_argument("--hidden", default="3200,3200",
                   help="hidden layer widths, comma-separated (default 64-3200-3200-10: 10.5 M "
                        "parameters)")
    p.add_argument("--batch", type=int, default=32, help="global batch (split over the ranks)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--bucket-mb", type=float, default=25.0, help="gradient bucket size (MB)")
    p.add_argument("--max-iters", type=int, default=200)
    p.add_argument("--max-time", type=float, default=0.0,
                   help="stop after this much training time (s; checked at evaluations); 0: none")
    p.add_argument("--target-acc", type=float, default=0.95, help="test accuracy to reach")
    p.add_argument("--after-target-iters", type=int, default=0,
                   help="iterations to go on after the target is reached (0: stop there)")
    p.add_argument("--eval-every", type=int, default=5, help="evaluate every N iterations")
    p.add_argument("--drift-every", type=int, default=0,
                   help="measure replica drift every N iterations (0: only at the end)")
    p.add_argument("--skip-iters", type=int, default=5,
                   help="first iterations left out of the iteration-time percentiles")
    p.add_argument("--csv", default=None, help="per-iteration CSV (written by rank 0)")
    p.add_argument("--clock-file", default=None,
                   help="rank 0 logs the training clock here, line by line (see Clock)")
    p.add_argument("--master-addr", default=os.environ.get("MASTER_ADDR", "127.0.0.1"))
    p.add_argument("--master-port", type=int, default=int(os.environ.get("MASTER_PORT", 29500)))
    p.add_argument("--gloo-ifname", default=os.environ.get("GLOO_SOCKET_IFNAME", ""),
                   help="network interface for gloo (sets GLOO_SOCKET_IFNAME)")
    args = p.parse_args(argv)
    if args.backend == "mpi" and args.wire_dtype != "fp32":
        # The mpi backend's wire format is the preloaded library's business (OPTIREDUCE_CODEC);
        # casting here too would measure two codecs at once, and native MPI has none.
        p.error("--wire-dtype %s is for --backend gloo; with mpi, set OPTIREDUCE_CODEC for "
                "the preloaded library instead" % args.wire_dtype)
    args.hidden = [int(w) for w in args.hidden.split(",") if w]
    args.label = args.label or args.backend
    return args


# --- communication --------------------------------------------------------------------------------
class MpiComm:
    """Collectives through mpi4py. Float32 SUM is what optireduce takes when preloaded; everything
    else here (float64, MAX, pickled objects) always goes to native MPI."""

    def __init__(self):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()

    def allreduce_grad(self, bucket):  # float32 tensor, in place
        self.comm.Allreduce(self.MPI.IN_PLACE, bucket.numpy())

    def sum64(self, array):  # float64 numpy array, in place: never intercepted
        self.comm.Allreduce(self.MPI.IN_PLACE, array)

    def max64(self, values):
        out = np.array(values, dtype=np.float64)
        self.comm.Allreduce(self.MPI.IN_PLACE, out, op=self.MPI.MAX)
        return out

    def barrier(self):
        self.comm.Barrier()

    def finish(self):
        pass  # mpi4py finalizes MPI at exit (and the library prints its stats there)


class GlooComm:
    """Collectives through torch.distributed's gloo backend, started by mpirun."""

    def __init__(self, args):
        import torch.distributed as dist
        self.dist = dist
        self.rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        self.size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        if args.gloo_ifname:
            os.environ["GLOO_SOCKET_IFNAME"] = args.gloo_ifname
        self.wire_dtype = torch.float16 if args.wire_dtype == "fp16" else None
        self.wire_buffers = {}
        dist.init_process_group("gloo", rank=self.rank, world_size=self.size,
                                init_method="tcp://%s:%d" % (args.master_addr, args.master_port))

    def allreduce_grad(self, bucket):
        if self.wire_dtype is None:
            self.dist.all_reduce(bucket)
            return
        # One wire buffer per bucket, kept: the buckets are reused every step, and allocating
        # 20 MB each time would charge the fp16 run for the allocator rather than the cast.
        key = (bucket.data_ptr(), bucket.numel())
        wire = self.wire_buffers.get(key)
        if wire is None:
            wire = self.wire_buffers[key] = torch.empty(bucket.numel(), dtype=self.wire_dtype)
        wire.copy_(bucket)
        self.dist.all_reduce(wire)
        bucket.copy_(wire)

    def sum64(self, array):
        self.dist.all_reduce(torch.from_numpy(array))

    def max64(self, values):
        out = torch.tensor(values, dtype=torch.float64)
        self.dist.all_reduce(out, op=self.dist.ReduceOp.MAX)
        return out.numpy()

    def barrier(self):
        self.dist.barrier()

    def finish(self):
        self.dist.destroy_process_group()


# --- optireduce's counters (only when the library is preloaded) -----------------------------------
def optireduce_stats_struct(proc):
    """optireduce_stats_t as the preloaded library has it, built from the field names and types
    it reports (include/optireduce/stats_fields.h is the one list of them)."""
    count, name, ctype = (proc.optireduce_stats_field_count, proc.optireduce_stats_field_name,
                          proc.optireduce_stats_field_type)
    count.restype = ctypes.c_int
    for f in (name, ctype):
        f.argtypes = [ctypes.c_int]
        f.restype = ctypes.c_char_p
    types = {"uint64_t": ctypes.c_uint64, "double": ctypes.c_double}
    fields = [(name(i).decode(), types[ctype(i).decode()]) for i in range(count())]
    return type("OptireduceStats", (ctypes.Structure,), {"_fields_": fields})


class LibraryStats:
    """optireduce_get_stats_sized() of the preloaded library, looked up in the process's global
    symbols; present() is False when the library is not preloaded."""

    def __init__(self):
        self.fn = None
        proc = ctypes.CDLL(None)
        if not hasattr(proc, "optireduce_get_stats"):
            return  # not preloaded
        if not hasattr(proc, "optireduce_get_stats_sized"):
            sys.exit("train.py: the preloaded optireduce is older than this script (it has no "
                     "optireduce_get_stats_sized)")
        self.fn = proc.optireduce_get_stats_sized
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.fn.restype = ctypes.c_int
        self.stats = optireduce_stats_struct(proc)()

    def present(self):
        return self.fn is not None

    # What read() returns, in order (library_totals sums them over the ranks).
    FIELDS = ("engine_calls", "entries_lost", "entries_expected", "entries_lost_ag",
              "stragglers_written_off", "repair_chunks_requested", "repair_chunks_sent",
              "scatter_repair_chunks_requested", "scatter_repair_chunks_sent", "entries_carried",
              "carry_dropped_entries")

    def read(self):
        """This process's counters, in FIELDS' order, or None."""
        if not self.present() or self.fn(ctypes.byref(self.stats), ctypes.sizeof(self.stats)) < 0:
            return None
        s = self.stats
        return (s.engine_calls, s.entries_lost_rs + s.entries_lost_ag,
                s.entries_expected_rs + s.entries_expected_ag, s.entries_lost_ag,
                s.stragglers_written_off, s.repair_chunks_requested, s.repair_chunks_sent,
                # 0 from a library older than reduce-scatter repair (a baseline build)
                getattr(s, "scatter_repair_chunks_requested", 0), getattr(s, "scatter_repair_chunks_sent", 0),
                # 0 from a library older than OPTIREDUCE_CARRY
                getattr(s, "entries_carried", 0), getattr(s, "carry_dropped_entries", 0))


# --- gradient buckets -----------------------------------------------------------------------------
def make_buckets(model, bucket_bytes):
    """Flat float32 buckets holding every parameter's gradient, filled in reverse parameter order
    (the order backward produces them, as DDP does), each at most bucket_bytes unless a single
    parameter is larger. Each .grad becomes a view into its bucket, so backward writes the
    gradients in place and the buckets are reused every step without copies."""
    params = [p for p in model.parameters() if p.requires_grad][::-1]
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
    buckets = []
    for group in groups:
        flat = torch.zeros(sum(p.numel() for p in group), dtype=torch.float32)
        offset = 0
        for p in group:
            p.grad = flat[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
        buckets.append(flat)
    return buckets


def check_grads_are_views(model, buckets):
    """Backward must have accumulated into the bucket views, not replaced .grad."""
    spans = [(b.data_ptr(), b.data_ptr() + b.numel() * 4) for b in buckets]
    for p in model.parameters():
        a = p.grad.data_ptr()
        if not any(lo <= a < hi for lo, hi in spans):
            sys.exit("train.py: a gradient is no longer a view of its bucket (torch %s)"
                     % torch.__version__)


def average_gradients(comm, buckets):
    """One allreduce per bucket, then the mean; returns the milliseconds it took. The division
    is in float32 after the allreduce whatever the wire dtype, so that runs differ only in how
    the sum travelled (fp16_compress_hook divides before; with 4 ranks the float16 sum of
    gradients this small is far from overflowing)."""
    t = time.perf_counter()
    for b in buckets:
        comm.allreduce_grad(b)
        b.div_(comm.size)
    return (time.perf_counter() - t) * 1000.0


# --- measurements ---------------------------------------------------------------------------------
def flat_params64(model):
    return torch.cat([p.detach().reshape(-1).double() for p in model.parameters()]).numpy()


def replica_drift(comm, model):
    """max over ranks of ||p_r - mean(p)|| / ||mean(p)|| (= rms(p_r - mean) / rms(mean)) over all
    parameters, with float64 collectives (exact: optireduce never takes float64)."""
    mine = flat_params64(model)
    mean = mine.copy()
    comm.sum64(mean)
    mean /= comm.size
    drift = np.linalg.norm(mine - mean) / max(np.linalg.norm(mean), 1e-300)
    return float(comm.max64([drift])[0])


def checksum_spread(comm, model):
    """max - min over ranks of the float64 sum of all parameters: 0 when replicas are identical."""
    s = float(flat_params64(model).sum())
    hi, neg_lo = comm.max64([s, -s])
    return float(hi + neg_lo), s


def evaluate(comm, model, x, y, time_up):
    """Test accuracy, and whether any rank's clock ran out. Each rank scores its own slice of the
    test set (the forward pass of 360 samples takes seconds on one core) and the counts are
    summed: the accuracy of the replicas, which are identical or nearly so (see drift). The
    same collective gives every rank the same verdict on when to stop."""
    with torch.no_grad():
        xs, ys = x[comm.rank::comm.size], y[comm.rank::comm.size]
        correct = float((model(xs).argmax(dim=1) == ys).sum())
    v = np.array([correct, len(ys), float(time_up)])
    comm.sum64(v)
    return v[0] / v[1], v[2] > 0


def percentile(values, q):
    return float(np.percentile(values, q)) if len(values) else None


def library_totals(comm, lib):
    """The library's counters summed over the ranks (float64 collective: never intercepted).
    Every rank takes part, preloaded or not, so that the collectives match."""
    stats = lib.read()
    v = np.array(stats if stats else (0,) * len(LibraryStats.FIELDS), dtype=np.float64)
    comm.sum64(v)
    totals = {name: (int(x) if lib.present() else None) for name, x in zip(LibraryStats.FIELDS, v)}
    totals["entries_lost_frac"] = (float(v[1] / v[2]) if v[2] else 0.0) if lib.present() else None
    return totals


def machine_cpu():
    """(busy, softirq) CPU seconds of the whole machine since boot, every CPU (/proc/stat: user,
    nice, system, irq and softirq are busy; idle, iowait and steal, the hypervisor's time for
    other guests, are not)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, _steal = v
    return ((user + nice + system + irq + softirq) / hz, softirq / hz)


class Clock:
    """Training time: wall time since start(), less the intervals spent in pause()/resume().

    With a log path, every change is written to it at once, one line each, as
      start <perf_counter> <unix time>
      pause <perf_counter>
      resume <perf_counter>
      end <perf_counter>
    perf_counter is CLOCK_MONOTONIC on Linux, the same in every process of the machine (network
    namespaces share it), so a reader computes the training time now() would return:
    monotonic now (or the pending pause's value, or end's) - start - the sum of resume - pause.
    The file is created by start(), so its existence means that training has begun.
    Alongside, cpu() is the CPU time of this process (every thread, user and system) over the
    same intervals: what the training steps cost, evaluations and drift measurements left out.
    machine() is the whole machine's busy CPU time over those intervals, and softirq() the part
    of it spent in softirqs (/proc/stat). The kernel charges a softirq to whatever task it
    interrupts: on the emulated cloud, where every host and the switch share this kernel, the
    network's receive and queueing work lands on the ranks when the cores are busy and on the
    idle task when they are not, so cpu() alone can differ between back-ends by work that is
    not theirs; the machine's totals count it once for all."""

    def __init__(self, log_path=None):
        self.t0 = self.paused_at = None
        self.paused = 0.0
        self.cpu0 = self.cpu_paused_at = None
        self.cpu_paused = 0.0
        self.stat0 = self.stat_paused_at = None
        self.stat_paused = (0.0, 0.0)
        self.start_unix = None
        self.log_path, self.log = log_path, None

    def _mark(self, line):
        if self.log:
            self.log.write(line + "\n")  # line-buffered: one write(2) per line

    def start(self):
        if self.log_path:
            self.log = open(self.log_path, "w", buffering=1)
        self.t0 = time.perf_counter()
        self.cpu0 = time.process_time()
        self.stat0 = machine_cpu()
        self.start_unix = time.time()
        self._mark("start %.6f %.6f" % (self.t0, self.start_unix))

    def now(self):
        return time.perf_counter() - self.t0 - self.paused

    def cpu(self):
        end = self.cpu_paused_at if self.cpu_paused_at is not None else time.process_time()
        return end - self.cpu0 - self.cpu_paused

    def _machine(self):
        end = self.stat_paused_at if self.stat_paused_at is not None else machine_cpu()
        return tuple(e - s0 - p for e, s0, p in zip(end, self.stat0, self.stat_paused))

    def machine(self):
        return self._machine()[0]

    def softirq(self):
        return self._machine()[1]

    def pause(self):
        self.cpu_paused_at = time.process_time()
        self.stat_paused_at = machine_cpu()
        self.paused_at = time.perf_counter()
        self._mark("pause %.6f" % self.paused_at)

    def resume(self):
        t = time.perf_counter()
        self._mark("resume %.6f" % t)
        self.paused += t - self.paused_at
        self.cpu_paused += time.process_time() - self.cpu_paused_at
        self.cpu_paused_at = None
        self.stat_paused = tuple(p + n - a for p, n, a in zip(self.stat_paused, machine_cpu(), self.stat_paused_at))
        self.stat_paused_at = None

    def stop(self):
        """Training is over: logs the end (now() and cpu() keep their meaning)."""
        self.cpu_paused_at = time.process_time()
        self.stat_paused_at = machine_cpu()
        self._mark("end %.6f" % time.perf_counter())
        if self.log:
            self.log.close()
            self.log = None


CSV_COLUMNS = ["iter", "wall_s", "iter_ms", "comm_ms", "compute_ms", "train_loss", "test_acc",
               "entries_lost", "entries_expected", "drift"]


def fmt(v, spec):
    return "" if v is None else spec % v


class IterationLog:
    """Rank 0's per-iteration CSV (entries_lost/expected: this process's cumulative counters from
    the library, empty without it), and every rank's iteration times for the percentiles."""

    def __init__(self, path, lib):
        self.lib = lib
        self.iter_ms, self.comm_ms = [], []
        self.out = open(path, "w", buffering=1) if path else None  # line by line: readable mid-run
        if self.out:
            self.out.write(",".join(CSV_COLUMNS) + "\n")

    def add(self, it, wall, iter_ms, comm_ms, loss, acc, drift):
        self.iter_ms.append(iter_ms)
        self.comm_ms.append(comm_ms)
        if not self.out:
            return
        stats = self.lib.read()
        lost, expected = (stats[1], stats[2]) if stats else (None, None)
        self.out.write(",".join([
            str(it), fmt(wall, "%.4f"), fmt(iter_ms, "%.3f"), fmt(comm_ms, "%.3f"),
            fmt(iter_ms - comm_ms, "%.3f"), fmt(loss, "%.5f"), fmt(acc, "%.4f"), fmt(lost, "%d"),
            fmt(expected, "%d"), fmt(drift, "%.3e")]) + "\n")

    def close(self):
        if self.out:
            self.out.close()


# --- training -------------------------------------------------------------------------------------
class Run:
    """One rank's replica, its data and its communication."""

    def __init__(self, args, comm):
        if args.batch % comm.size:
            sys.exit("train.py: --batch %d is not a multiple of the %d ranks"
                     % (args.batch, comm.size))
        self.args, self.comm = args, comm
        self.x_tr, self.y_tr, self.x_te, self.y_te = digits_mlp.load_tensors()
        self.model = digits_mlp.make_model(args.hidden, args.seed)
        self.buckets = make_buckets(self.model, int(args.bucket_mb * 1e6))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=args.lr, momentum=args.momentum)
        self.data = digits_mlp.batches(len(self.x_tr), args.batch, comm.rank, comm.size, args.seed)
        self.lib = LibraryStats()

    def warm_up(self):
        """Connections and the library's engine setup, before the clock starts. The buckets are
        zero, so the model is unchanged."""
        for b in self.buckets:
            self.comm.allreduce_grad(b)
        self.comm.barrier()

    def step(self):
        """One iteration: forward and backward on this rank's shard of the next global batch,
        the gradient average, the optimizer step. Returns (loss, ms in the allreduces)."""
        idx = next(self.data)
        for b in self.buckets:
            b.zero_()
        loss = F.cross_entropy(self.model(self.x_tr[idx]), self.y_tr[idx])
        loss.backward()
        comm_ms = average_gradients(self.comm, self.buckets)
        self.opt.step()
        return float(loss), comm_ms

    def evaluate(self, time_up):
        return evaluate(self.comm, self.model, self.x_te, self.y_te, time_up)


def train(args, comm):
    run = Run(args, comm)
    run.warm_up()
    log = IterationLog(args.csv if comm.rank == 0 else None, run.lib)
    clock = Clock(args.clock_file if comm.rank == 0 else None)
    reached = None  # (training time, iteration) of the first evaluation at the target
    acc = drift = None
    stop_at = args.max_iters
    it = 0
    clock.start()
    while it < stop_at:
        t_start = clock.now()
        loss, comm_ms = run.step()
        if it == 0:
            check_grads_are_views(run.model, run.buckets)
        it += 1
        wall = clock.now()
        clock.pause()  # measurements from here on are not training time
        row_acc = row_drift = None
        if it % args.eval_every == 0 or it == stop_at:
            acc, time_up = run.evaluate(args.max_time > 0 and wall >= args.max_time)
            row_acc = acc
            if reached is None and acc >= args.target_acc:
                reached = (wall, it)
                stop_at = min(stop_at, it + args.after_target_iters)
            if time_up:
                stop_at = it
        if (args.drift_every and it % args.drift_every == 0) or it == stop_at:
            drift = row_drift = replica_drift(comm, run.model)
        log.add(it, wall, (wall - t_start) * 1000.0, comm_ms, loss, row_acc, row_drift)
        clock.resume()
    clock.stop()
    log.close()
    report(args, run, log, clock, reached, acc, drift, it)


def report(args, run, log, clock, reached, acc, drift, iters):
    """Rank 0 prints the RESULT line; every rank takes part in its collectives."""
    spread, my_sum = checksum_spread(run.comm, run.model)
    totals = library_totals(run.comm, run.lib)
    cpu = np.array([clock.cpu()], dtype=np.float64)
    run.comm.sum64(cpu)  # every rank's CPU while training ran
    if run.comm.rank != 0:
        return
    skip = args.skip_iters if len(log.iter_ms) > args.skip_iters else 0
    p50, p99 = percentile(log.iter_ms[skip:], 50), percentile(log.iter_ms[skip:], 99)
    result = {
        "label": args.label, "backend": args.backend, "wire_dtype": args.wire_dtype,
        # The preloaded library's codec as its environment asks (None: not preloaded; its
        # stats summary names the codec each communicator actually ran with).
        "codec": (os.environ.get("OPTIREDUCE_CODEC") or "fp32") if run.lib.present() else None,
        "seed": args.seed, "world": run.comm.size,
        "params": sum(p.numel() for p in run.model.parameters()), "buckets": len(run.buckets),
        "batch": args.batch, "lr": args.lr, "target_acc": args.target_acc,
        "time_to_target_s": reached[0] if reached else None,
        "iters_to_target": reached[1] if reached else None,
        "final_acc": acc, "iters": iters, "train_time_s": clock.now(),
        "start_unix": clock.start_unix,
        "iter_ms_p50": p50, "iter_ms_p99": p99, "iter_p99_over_p50": p99 / p50 if p50 else None,
        "comm_ms_p50": percentile(log.comm_ms[skip:], 50),
        "final_drift": drift, "checksum_spread": spread, "checksum": my_sum,
        "cpu_s_per_step": float(cpu[0]) / iters if iters else None,
        # Rank 0's view of the whole machine (every rank runs on it): see Clock.
        "machine_cpu_s_per_step": clock.machine() / iters if iters else None,
        "softirq_s_per_step": clock.softirq() / iters if iters else None,
        "library": run.lib.present(),
    }
    result.update(totals)
    print("RESULT " + json.dumps(result), flush=True)


def main():
    args = parse_args()
    torch.set_num_threads(1)  # several ranks share each core
    torch.set_num_interop_threads(1)
    comm = MpiComm() if args.backend == "mpi" else GlooComm(args)
    train(args, comm)
    comm.finish()


if __name__ == "__main__":
    main()
