#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Launcher and judge of the test/python CTest tests (label python).

usage:
  drive.py routing --mpirun M --python P --lib L --mode MODE [--np N] GROUP...
      One mpi4py_routing.py job. MODE: native (no library), exact (OPTIREDUCE_MODE=exact), bounded
      (the default mode, over the kernel UDP channel on loopback, so deadlines and the Hadamard
      transform really run) or bounded-auto (the default mode and provider: one node, so the
      reliable shm channel). The library runs get OPTIREDUCE_MIN_BYTES=0.
  drive.py train --mpirun M --python P --lib L --run RUN --work DIR [--np N]
      One ddp_train.py job, judged against a native run of the same seed. RUN: native (the
      reference, written to DIR/native.json), exact, bounded (kernel UDP on loopback) or
      exact-iallreduce (the background thread uses Iallreduce + Wait). Library runs keep every
      other setting at its default (OPTIREDUCE_MIN_BYTES 64 KiB): a drop-in.

The Python packages the ranks need are imported here first; when one is missing the test exits 77
(CTest's SKIP_RETURN_CODE) after a line saying which. Every failed check prints a line starting
"FAIL "; the exit status is 1 if there was any.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_SCRIPTS = os.path.join(HERE, os.pardir, os.pardir, "scripts", "train")  # digits_mlp.py
NEEDS = {"routing": ("numpy", "mpi4py"), "train": ("numpy", "mpi4py", "torch", "sklearn")}
DEBIAN = {"numpy": "python3-numpy", "mpi4py": "python3-mpi4py", "torch": "python3-torch",
          "sklearn": "python3-sklearn"}
JOB_TIMEOUT_S = 200

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg, flush=True)


def skip_unless_importable(python, modules):
    """Exit 77 naming the packages the ranks' Python does not have. Looked up, not imported
    (importing torch costs seconds): a package that is there but broken fails the job instead."""
    probe = ("import importlib.util, sys\n"
             "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))")
    r = subprocess.run([python, "-c", probe] + list(modules), capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: %s does not run: %s" % (python, r.stderr.strip()[-300:]), flush=True)
        sys.exit(77)
    missing = r.stdout.split()
    if missing:
        print("SKIP: %s has no Python package %s (Debian: apt-get install %s)"
              % (python, ", ".join(missing), " ".join(DEBIAN[m] for m in missing)), flush=True)
        sys.exit(77)


def launch(args, env, program, prog_args, log_path=None):
    """Runs one job of args.np ranks; returns (exit status, output)."""
    cmd = [args.mpirun, "--oversubscribe", "-np", str(args.np)]
    for k, v in env:
        cmd += ["-x", "%s=%s" % (k, v)]
    cmd += [args.python, os.path.join(HERE, program)] + prog_args
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=JOB_TIMEOUT_S, cwd=HERE)
        status, out = r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        status = "timeout"
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    secs = time.monotonic() - t0
    if log_path:
        with open(log_path, "w") as f:
            f.write(out)
    print("   (job: %.1f s, exit %s)" % (secs, status), flush=True)
    return status, out


def library_env(args, mode):
    env = [("LD_PRELOAD", args.lib), ("OPTIREDUCE_STATS", "1")]
    if mode in ("exact",):
        env.append(("OPTIREDUCE_MODE", "exact"))
    if mode == "bounded":
        # The default mode; kernel UDP datagrams over loopback, as across nodes (on one node the
        # auto provider would pick the reliable shm channel, which has no deadlines).
        env.append(("OPTIREDUCE_DGRAM_PROVIDER", "kernel"))
    return env


# --- mpi4py routing --------------------------------------------------------------------------
def routing(args):
    skip_unless_importable(args.python, NEEDS["routing"])
    if args.mode == "native":
        env, flags = [], ["--expect-native"]
    else:
        env = library_env(args, "bounded" if args.mode == "bounded" else
                          "exact" if args.mode == "exact" else "auto")
        env.append(("OPTIREDUCE_MIN_BYTES", "0"))
        flags = ["--expect-library"] + (["--expect-bounded"] if args.mode == "bounded" else [])
    status, out = launch(args, env, "mpi4py_routing.py", args.groups + flags)
    for line in out.splitlines():
        # One copy of each rank's failures is enough; the summary and tolerated mismatches too.
        if line.startswith(("FAIL rank", "TOLERATED", "mpi4py_routing ", "optireduce[0] stats")):
            print(line)
    if status != 0:
        if not any(l.startswith("FAIL rank") for l in out.splitlines()):
            print(out[-4000:])
        fail("mpi4py_routing.py %s (%s): the job exited with %s"
             % (" ".join(args.groups), args.mode, status))
    elif "mpi4py_routing " not in out:
        fail("no summary line from rank 0")


# --- training --------------------------------------------------------------------------------
TRAIN_ARGS = ["--steps", "60", "--seed", "1", "--hidden", "256,256", "--batch", "128",
              "--lr", "0.05", "--bucket-kb", "128", "--cycle-ms", "2", "--eval-every", "10"]
MIN_ACC = 0.85         # every run must train
BOUNDED_ACC_TOL = 0.02  # bounded mode's final test accuracy within this of native's


def result_of(out, what):
    lines = [l for l in out.splitlines() if l.startswith("RESULT ")]
    if len(lines) != 1:
        fail("%s: %d RESULT lines, want 1" % (what, len(lines)))
        return None
    return json.loads(lines[0][len("RESULT "):])


def fingerprint(args):
    """What the native reference depends on: the program, its arguments, the ranks."""
    h = hashlib.sha256()
    for path in (os.path.join(HERE, "ddp_train.py"), os.path.join(TRAIN_SCRIPTS, "digits_mlp.py")):
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(json.dumps([TRAIN_ARGS, args.np, args.python]).encode())
    return h.hexdigest()


def train_job(args, run, data):
    flags = TRAIN_ARGS + ["--data", data, "--label", run]
    if run == "native":
        env = []
    else:
        env = library_env(args, "exact" if run.startswith("exact") else "bounded")
        if run.endswith("-iallreduce"):
            flags.append("--iallreduce")
    status, out = launch(args, env, "ddp_train.py", flags,
                         os.path.join(args.work, run + ".log"))
    for line in out.splitlines():
        if line.startswith("optireduce[0] stats"):
            print(line)
    if status != 0:
        print(out[-4000:])
        fail("%s: the training job exited with %s" % (run, status))
        return None
    return result_of(out, run)


def check_common(r, run):
    ranks = r["ranks"]
    if r["thread_level"] != 3:
        fail("%s: thread level %s, want MPI_THREAD_MULTIPLE (3)" % (run, r["thread_level"]))
    if len(r["bucket_floats"]) < 2:
        fail("%s: %d gradient buckets, want several" % (run, len(r["bucket_floats"])))
    if r["final_acc"] < MIN_ACC:
        fail("%s: final test accuracy %.4f < %.2f" % (run, r["final_acc"], MIN_ACC))
    want_calls = r["steps"] * len(r["bucket_floats"])
    for q in ranks:
        if q["bucket_calls"] != want_calls:
            fail("%s rank %d: %d bucket allreduces, want %d"
                 % (run, q["rank"], q["bucket_calls"], want_calls))
    if len({q["control_calls"] for q in ranks}) != 1:
        fail("%s: ranks made different numbers of control allreduces: %s"
             % (run, [q["control_calls"] for q in ranks]))
    if r["library"] != (run != "native"):
        fail("%s: library %s" % (run, "preloaded" if r["library"] else "absent"))


def check_counters(r, run):
    """Per rank: the gradient buckets (>= OPTIREDUCE_MIN_BYTES) through the engine, the small
    one a fallback, the int32 control calls passed through: exactly."""
    for q in r["ranks"]:
        c, e = q["counters"], q["expected"]
        for k in ("engine_calls", "nonblocking_calls", "fallback_calls", "passthrough_calls"):
            if c[k] != e[k]:
                fail("%s rank %d: %s +%d, want +%d (%d control calls, %d bucket calls)"
                     % (run, q["rank"], k, c[k], e[k], q["control_calls"], q["bucket_calls"]))
        if c["engine_calls"] <= 0:
            fail("%s rank %d: the engine took no gradient allreduce" % (run, q["rank"]))
        if run.startswith("bounded") and c["bounded_calls"] != c["engine_calls"]:
            fail("%s rank %d: bounded_calls +%d of engine_calls +%d: the deadline path did not "
                 "run every call" % (run, q["rank"], c["bounded_calls"], c["engine_calls"]))


def train(args):
    skip_unless_importable(args.python, NEEDS["train"])
    os.makedirs(args.work, exist_ok=True)
    sys.path.insert(0, TRAIN_SCRIPTS)
    data = os.path.join(args.work, "digits.npz")
    if not os.path.exists(data):
        import digits_mlp
        digits_mlp.save(data + ".tmp.npz")
        os.replace(data + ".tmp.npz", data)

    ref_path = os.path.join(args.work, "native.json")
    native = None
    if args.run != "native" and os.path.exists(ref_path):
        with open(ref_path) as f:
            saved = json.load(f)
        if saved.get("fingerprint") == fingerprint(args):
            native = saved["result"]
            print("native reference: %s (final accuracy %.4f)" % (ref_path, native["final_acc"]))
    if native is None:
        native = train_job(args, "native", data)
        if native is None:
            return
        check_common(native, "native")
        if len({q["hash"] for q in native["ranks"]}) != 1:
            fail("native: the replicas differ (parameter hashes %s)"
                 % [q["hash"] for q in native["ranks"]])
        with open(ref_path + ".tmp", "w") as f:
            json.dump({"fingerprint": fingerprint(args), "result": native}, f)
        os.replace(ref_path + ".tmp", ref_path)
        print("native: final accuracy %.4f, loss %.4f -> %.4f, %.1f s of training"
              % (native["final_acc"], native["losses"][0], native["losses"][-1],
                 native["train_s"]))
        if args.run == "native":
            return

    run = args.run
    r = train_job(args, run, data)
    if r is None:
        return
    check_common(r, run)
    check_counters(r, run)
    hashes = [q["hash"] for q in r["ranks"]]
    lost_ag = sum(q["counters"]["entries_lost_ag"] for q in r["ranks"])
    lost = lost_ag + sum(q["counters"]["entries_lost_rs"] for q in r["ranks"])
    dloss = max(abs(a - b) for a, b in zip(r["losses"], native["losses"]))
    if run.startswith("exact"):
        # Gradients on a 2^-16 grid sum exactly in any order: exact mode is native, bit for bit.
        if r["losses"] != native["losses"]:
            first = next(i for i, (a, b) in enumerate(zip(r["losses"], native["losses"])) if a != b)
            fail("%s: the loss curve differs from native's from step %d on (%r vs %r)"
                 % (run, first + 1, r["losses"][first], native["losses"][first]))
        if r["curve"] != native["curve"]:
            fail("%s: test accuracy curve %s, native %s" % (run, r["curve"], native["curve"]))
        if set(hashes) != {native["ranks"][0]["hash"]}:
            fail("%s: parameters %s, native's %s" % (run, hashes, native["ranks"][0]["hash"]))
    else:
        if abs(r["final_acc"] - native["final_acc"]) > BOUNDED_ACC_TOL:
            fail("%s: final test accuracy %.4f, native %.4f: more than %.2f apart"
                 % (run, r["final_acc"], native["final_acc"], BOUNDED_ACC_TOL))
        if len(set(hashes)) != 1 and lost_ag == 0:
            fail("%s: the replicas differ (parameter hashes %s) though no all-gather entry was "
                 "lost" % (run, hashes))
    print("%s: final accuracy %.4f (native %.4f), max |loss - native's| %.3g over %d steps, "
          "replicas %s, entries lost %d (all-gather %d), engine calls %s, control calls %d, "
          "%.1f s of training (native %.1f s)"
          % (run, r["final_acc"], native["final_acc"], dloss, len(r["losses"]),
             "identical" if len(set(hashes)) == 1 else "differ", lost, lost_ag,
             "/".join(str(q["counters"]["engine_calls"]) for q in r["ranks"]),
             r["ranks"][0]["control_calls"], r["train_s"], native["train_s"]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=("routing", "train"))
    p.add_argument("--mpirun", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--lib", required=True)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--mode", choices=("native", "exact", "bounded", "bounded-auto"))
    p.add_argument("--run", choices=("native", "exact", "bounded", "exact-iallreduce",
                                     "bounded-iallreduce"))
    p.add_argument("--work")
    p.add_argument("groups", nargs="*")
    args = p.parse_intermixed_args()
    t0 = time.monotonic()
    if args.what == "routing":
        if not args.mode or not args.groups:
            p.error("routing needs --mode and groups")
        routing(args)
    else:
        if not args.run or not args.work:
            p.error("train needs --run and --work")
        train(args)
    print("%s: %.1f s, %s" % (args.what, time.monotonic() - t0,
                              "%d failures" % len(failures) if failures else "passed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
