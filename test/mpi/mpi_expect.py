#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs one MPI job and asserts on what only the outside can see: exit status, stderr lines,
and the job summary optireduce writes at MPI_Finalize, compared with what the test program says
it did (its EXPECTED_* lines on stdout).

Every MPI test of the suite runs through it, so that none can pass on output alone. Whatever the
options, a job fails the test when
- the launcher's exit status is not the one expected (a rank that exits non-zero, crashes or is
  killed after printing its verdict makes mpirun/mpiexec exit non-zero);
- any rank printed a line starting with FAIL on stdout;
- a sanitizer reported anything (AddressSanitizer, ThreadSanitizer, UBSan, LeakSanitizer), even
  where its runtime was told not to halt;
- the job was expected to succeed and printed no line starting with "PASS" (or fewer than
  --pass asks for): a program that stopped early, or checked nothing, does not pass.

usage: mpi_expect.py [checks] -- LAUNCHER ARGS...

Python standard library only, so it runs on a bare Debian 12 with python3."""
import argparse
import json
import os
import re
import signal
import subprocess
import sys

COUNTERS = ("engine_calls", "passthrough_calls", "fallback_calls", "engine_bytes")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # any: the job's status is not the test's business (e.g. MPI's handling of a rank that died)
    p.add_argument("--expect-exit", choices=("zero", "nonzero", "any"), default="zero")
    p.add_argument("--timeout", type=float, default=280,
                   help="seconds; a job still running then is reported as hung")
    p.add_argument("--stderr-has", action="append", default=[], metavar="TEXT",
                   help="stderr must contain TEXT")
    p.add_argument("--stderr-line-has", action="append", default=[], metavar="TEXT",
                   help="one stderr line must contain every TEXT given (use repeatedly)")
    p.add_argument("--stderr-lines", action="append", default=[], metavar="REGEX=N",
                   help="exactly N stderr lines match REGEX")
    p.add_argument("--stdout-lines", action="append", default=[], metavar="REGEX=N",
                   help="exactly N stdout lines match REGEX")
    p.add_argument("--pass", dest="pass_lines", action="append", default=[], metavar="REGEX=N",
                   help="exactly N stdout lines match REGEX, which must start with ^PASS (the "
                        "default, for a job expected to exit 0, is at least one '^PASS' line)")
    p.add_argument("--stat", action="append", default=[], metavar="COUNTER=N",
                   help="the 'optireduce[0] stats:' line (OPTIREDUCE_STATS=1) shows COUNTER=N")
    p.add_argument("--stats-line", action="store_true",
                   help="the 'optireduce[0] stats:' line must match EXPECTED_TOTALS")
    p.add_argument("--stats-file", metavar="PATH",
                   help="the JSON summary at PATH must match EXPECTED_TOTALS / EXPECTED_RANK")
    p.add_argument("--stats-comm", action="append", default=[], metavar="KEY=VALUE,...",
                   help="the --stats-file JSON lists a communicator with these fields (e.g. "
                        "ranks=3,mode=exact,channel=shm,codec=fp32,engine=true)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        p.error("no command after --")
    return args


def fields(line):
    return {k: v for k, v in re.findall(r"(\w+)=(\S+)", line)}


def expected_from(stdout):
    totals, ranks = None, {}
    for line in stdout.splitlines():
        if line.startswith("EXPECTED_TOTALS "):
            totals = {k: int(v) for k, v in fields(line).items()}
        elif line.startswith("EXPECTED_RANK "):
            f = {k: int(v) for k, v in fields(line).items()}
            ranks[f["rank"]] = f
    return totals, ranks


# Checked where the program states them.
OPTIONAL_COUNTERS = ("nonblocking_calls",)


def check_counters(where, got, want, problems):
    for key in COUNTERS + tuple(k for k in OPTIONAL_COUNTERS if k in want):
        if key not in got:
            problems.append(f"{where}: no {key}")
        elif int(got[key]) != want[key]:
            problems.append(f"{where}: {key}={got[key]}, the program made {want[key]}")


def check_stats_line(stderr, totals, problems):
    # The counters line; human-readable lines with the same prefix follow it.
    lines = [l for l in stderr.splitlines() if re.search(r"optireduce\[0\] stats: ranks=", l)]
    if len(lines) != 1:
        problems.append(f"expected one 'optireduce[0] stats: ranks=' line on stderr, "
                        f"found {len(lines)}")
        return
    got = fields(lines[0])
    if int(got.get("ranks", -1)) != totals["ranks"]:
        problems.append(f"stats line: ranks={got.get('ranks')}, job has {totals['ranks']}")
    check_counters("stats line", got, totals, problems)


def check_stat_values(stderr, specs, problems):
    lines = [l for l in stderr.splitlines() if re.search(r"optireduce\[0\] stats: ranks=", l)]
    if len(lines) != 1:
        problems.append(f"--stat: expected one 'optireduce[0] stats: ranks=' line, found {len(lines)}")
        return
    got = fields(lines[0])
    for spec in specs:
        name, _, want = spec.partition("=")
        if got.get(name) != want:
            problems.append(f"stats line: {name}={got.get(name)}, expected {want}")


def check_stats_file(path, totals, ranks, problems):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"stats file {path}: {e}")
        return
    if doc.get("ranks") != totals["ranks"]:
        problems.append(f"stats file: ranks={doc.get('ranks')}, job has {totals['ranks']}")
    check_counters("stats file totals", doc.get("totals", {}), totals, problems)
    per_rank = doc.get("per_rank", [])
    if len(per_rank) != totals["ranks"]:
        problems.append(f"stats file: {len(per_rank)} per_rank entries for {totals['ranks']} ranks")
    for entry in per_rank:
        r = entry.get("rank")
        if r in ranks:
            check_counters(f"stats file per_rank[{r}]", entry, ranks[r], problems)
        else:
            problems.append(f"stats file: per_rank entry for unknown rank {r!r}")


def check_stats_comms(path, specs, problems):
    """Each spec names a communicator the JSON summary must list (values compared as JSON text)."""
    try:
        with open(path) as f:
            comms = json.load(f).get("communicators", [])
    except (OSError, ValueError) as e:
        problems.append(f"stats file {path}: {e}")
        return
    for spec in specs:
        want = dict(kv.split("=", 1) for kv in spec.split(","))
        if not any(all(json.dumps(c.get(k)).strip('"') == v for k, v in want.items()) for c in comms):
            problems.append(f"stats file lists no communicator with {spec}; it lists {comms}")


def count_matches(text, spec, stream, problems):
    regex, _, n = spec.rpartition("=")
    found = [l for l in text.splitlines() if re.search(regex, l)]
    if len(found) != int(n):
        problems.append(f"{stream}: {len(found)} lines match /{regex}/, expected {n}")


# What a sanitizer runtime prints when it reports, whether or not it then halts the process.
SANITIZER_REPORT = re.compile(r"(ERROR: (Address|Leak|Memory|Thread)Sanitizer|"
                              r"WARNING: ThreadSanitizer|runtime error: |"
                              r"SUMMARY: (Address|Thread|UndefinedBehavior|Leak)Sanitizer)")


def check_verdicts(args, run, problems):
    """The rules every job obeys (module docstring): FAIL lines, sanitizer reports, PASS lines."""
    fails = [l for l in run.stdout.splitlines() if l.startswith("FAIL")]
    if fails:
        problems.append(f"{len(fails)} stdout line(s) start with FAIL, first: {fails[0]!r}")
    for stream, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        report = next((l for l in text.splitlines() if SANITIZER_REPORT.search(l)), None)
        if report:
            problems.append(f"sanitizer report on {stream}: {report.strip()!r}")
    for spec in args.pass_lines:
        if not spec.startswith("^PASS"):
            problems.append(f"--pass {spec!r}: the pattern must start with ^PASS")
        count_matches(run.stdout, spec, "stdout", problems)
    if args.expect_exit == "zero" and not args.pass_lines and not any(
            l.startswith("PASS") for l in run.stdout.splitlines()):
        problems.append("no stdout line starts with PASS: the program did not report a verdict")


def main():
    args = parse_args()
    if args.stats_file and os.path.exists(args.stats_file):
        os.remove(args.stats_file)  # a stale file from an earlier run must not pass the test
    # Own process group, so a hung job is stopped with all its ranks, not just the launcher.
    job = subprocess.Popen(args.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGTERM)
        try:
            stdout, stderr = job.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            stdout, stderr = job.communicate()
        sys.stdout.write(stdout)
        sys.stderr.write(stderr)
        print(f"FAIL: job still running after {args.timeout:.0f} s (hang)")
        return 1
    run = subprocess.CompletedProcess(args.command, job.returncode, stdout, stderr)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    sys.stdout.flush()

    problems = []
    if args.expect_exit == "zero" and run.returncode != 0:
        problems.append(f"exit status {run.returncode}, expected 0")
    if args.expect_exit == "nonzero" and run.returncode == 0:
        problems.append("exit status 0, expected a failure")
    check_verdicts(args, run, problems)
    if args.stat:
        check_stat_values(run.stderr, args.stat, problems)
    for text in args.stderr_has:
        if text not in run.stderr:
            problems.append(f"stderr lacks {text!r}")
    if args.stderr_line_has and not any(all(t in l for t in args.stderr_line_has)
                                        for l in run.stderr.splitlines()):
        problems.append(f"no stderr line contains all of {args.stderr_line_has}")
    for spec in args.stderr_lines:
        count_matches(run.stderr, spec, "stderr", problems)
    for spec in args.stdout_lines:
        count_matches(run.stdout, spec, "stdout", problems)
    if args.stats_line or args.stats_file:
        totals, ranks = expected_from(run.stdout)
        if totals is None:
            problems.append("the program printed no EXPECTED_TOTALS line")
        else:
            if args.stats_line:
                check_stats_line(run.stderr, totals, problems)
            if args.stats_file:
                check_stats_file(args.stats_file, totals, ranks, problems)
    if args.stats_comm:
        if not args.stats_file:
            problems.append("--stats-comm needs --stats-file")
        else:
            check_stats_comms(args.stats_file, args.stats_comm, problems)

    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("mpi_expect: all checks passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
