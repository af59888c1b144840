#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks one run of scripts/train/train.py for test/train/train_smoke.sh.

usage: check_run.py LOG CSV MIN_ACC ITERS [--exact] [--engine]
  LOG      the run's stdout and stderr: exactly one `RESULT {json}` line
  CSV      the run's per-iteration CSV: train.py's columns, ITERS rows
  --exact  replicas must be bit-identical (checksum spread 0, drift 0)
  --engine optireduce must have run the gradient allreduces (engine_calls > 0)
  --identical-unless-ag-loss  replicas must be bit-identical unless an all-gather datagram was
           lost for good (bounded mode: nothing else can make them differ)
Prints what it checked; exits 1 with every failure listed.
"""
import csv
import json
import sys

COLUMNS = ["iter", "wall_s", "iter_ms", "comm_ms", "compute_ms", "train_loss", "test_acc",
           "entries_lost", "entries_expected", "drift"]


def check(log, csv_path, min_acc, iters, exact, engine, identical_unless_ag_loss=False):
    failures = []
    results = [line for line in open(log) if line.startswith("RESULT ")]
    if len(results) != 1:
        return ["%d RESULT lines in %s, want 1" % (len(results), log)]
    r = json.loads(results[0][len("RESULT "):])
    if r["final_acc"] is None or r["final_acc"] <= min_acc:
        failures.append("final_acc %s <= %s" % (r["final_acc"], min_acc))
    if r["iters"] != iters:
        failures.append("iters %s, want %d" % (r["iters"], iters))
    if exact and (r["checksum_spread"] != 0.0 or r["final_drift"] != 0.0):
        failures.append("replicas differ: checksum spread %r, drift %r"
                        % (r["checksum_spread"], r["final_drift"]))
    if identical_unless_ag_loss and r.get("entries_lost_ag") == 0 and r["checksum_spread"] != 0.0:
        failures.append("replicas differ (checksum spread %r) though no all-gather entry was lost"
                        % r["checksum_spread"])
    if engine and not (r["library"] and r["engine_calls"]):
        failures.append("the library did not run the allreduces (library %r, engine_calls %r)"
                        % (r["library"], r["engine_calls"]))
    # CPU per step: the ranks' own, and the whole machine's with its softirqs (the emulated
    # network's work): each measured, the softirqs a part of the machine's busy time.
    cpu, machine, softirq = (r.get(k) for k in ("cpu_s_per_step", "machine_cpu_s_per_step",
                                                "softirq_s_per_step"))
    if not (cpu and cpu > 0 and machine and machine > 0 and softirq is not None
            and 0 <= softirq <= machine):
        failures.append("CPU per step not measured: ranks %r, machine %r, softirq %r"
                        % (cpu, machine, softirq))
    with open(csv_path) as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    if reader.fieldnames != COLUMNS:
        failures.append("CSV columns %s, want %s" % (reader.fieldnames, COLUMNS))
    elif len(rows) != iters or not rows[-1]["test_acc"] or not rows[-1]["drift"]:
        failures.append("CSV: %d rows, want %d with test_acc and drift in the last"
                        % (len(rows), iters))
    print("%s: final_acc %.4f, iters %d, checksum spread %.3g, drift %.3g, entries lost %s "
          "(all-gather %s), stragglers written off %s, repairs %s/%s"
          % (r["label"], r["final_acc"] or 0, r["iters"], r["checksum_spread"], r["final_drift"],
             r["entries_lost_frac"], r.get("entries_lost_ag"), r.get("stragglers_written_off"),
             r.get("repair_chunks_sent"), r.get("repair_chunks_requested")))
    return failures


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 4:
        sys.exit(__doc__)
    failures = check(args[0], args[1], float(args[2]), int(args[3]),
                     "--exact" in sys.argv, "--engine" in sys.argv,
                     "--identical-unless-ag-loss" in sys.argv)
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
