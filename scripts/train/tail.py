#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tail condition of scripts/train/bench-training.sh: a schedule of link cuts, drawn once from
a seed, applied on train.py's training clock, and checked afterwards.

  draw   writes the schedule: every GAP ms one host's link drops to RATE Mbit/s for MS ms, each
         drawn uniformly (integers, bounds included) from the given ranges, in the order gap,
         host, rate, ms per cut; the next gap starts when the cut ends. The numbers come from
         splitmix64 seeded with --seed (implemented here, so the schedule depends on nothing but
         the arguments: not on the Python version, the shell, or the time). Cuts are drawn until
         one would start at or after --horizon-s.
  apply  follows a running train.py's --clock-file and applies the schedule with
         scripts/cloud/set.sh: cut k starts when the training time reaches its start_s and ends
         MS ms of training time later. The training time is train.py's own (Clock: monotonic
         time since the clock started after warm-up, less the evaluation and drift pauses), so
         every back-end meets the same cut at the same training time, whatever its setup took
         (Gloo's rendezvous, the library's engine) and however long its pauses were. While
         training is paused, the link stays as it is. Stops at the clock's end line (restoring a
         cut in progress) or on SIGTERM/SIGINT (ditto). Writes a copy of the schedule it read
         and an events file: one line per cut with the schedule's four columns, then when it
         was in place and when it was lifted (training time and unix time, when set.sh
         returned), and a closing "# end" or "# stopped" line.
  check  compares, for each seed, the schedule drawn for it with the copy every back-end's
         applier read, and every events file with the schedule (same cuts, in order, none
         skipped before the training ended); exits 1 with every difference listed.

usage: tail.py draw --seed S --hosts N --horizon-s T --rate-mbit MIN MAX --ms MIN MAX
                    --gap-ms MIN MAX [--out FILE]
       tail.py apply --schedule FILE --clock FILE --events FILE [--copy FILE]
                    [--set CMD] [--base-rate RATE] [--poll-ms MS]
       tail.py check DIR --seeds N --backends a,b,...
         (DIR holds schedule-s<seed>.txt and <backend>-s<seed>.{schedule,events})
"""
import argparse
import glob
import hashlib
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SET_SH = os.path.join(HERE, "..", "cloud", "set.sh")
COLUMNS = "start_s host rate_mbit ms"
EVENT_COLUMNS = COLUMNS + " on_s off_s on_unix off_unix"
# check: a cut due this long before the training ended must have been applied (the applier polls
# the clock file, and set.sh takes a while on a loaded machine).
MISS_TOLERANCE_S = 1.0

MASK64 = (1 << 64) - 1


class SplitMix64:
    """Steele, Lea and Flood's splitmix64: a tiny, fully specified generator."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def between(self, lo, hi):
        """Uniform integer in [lo, hi] (rejection sampling: no modulo bias)."""
        n = hi - lo + 1
        limit = (1 << 64) - (1 << 64) % n
        while True:
            x = self.next()
            if x < limit:
                return lo + x % n


def fmt_ms(ms):
    return "%d.%03d" % divmod(ms, 1000)


def draw(seed, hosts, horizon_s, rate, ms, gap):
    """[(start_ms, host, rate_mbit, ms)] in training-clock milliseconds."""
    # The seed is mixed with a constant so that this stream is not splitmix64's raw sequence of
    # small seeds (seed 1's draws would otherwise be seed 0's shifted by one).
    rng = SplitMix64(seed * 0x2545F4914F6CDD1D + 0x7461696C)  # "tail"
    cuts, t = [], 0
    while True:
        t += rng.between(*gap)
        if t >= horizon_s * 1000:
            return cuts
        cut = (t, rng.between(0, hosts - 1), rng.between(*rate), rng.between(*ms))
        cuts.append(cut)
        t += cut[3]


def schedule_text(args, cuts):
    lines = ["# tail schedule (scripts/train/tail.py draw): seed %d, %d hosts, %d-%d Mbit/s for "
             "%d-%d ms every %d-%d ms, horizon %d s" % (
                 args.seed, args.hosts, args.rate_mbit[0], args.rate_mbit[1], args.ms[0],
                 args.ms[1], args.gap_ms[0], args.gap_ms[1], args.horizon_s),
             "# start_s: training time (train.py's clock) at which the cut begins",
             "# " + COLUMNS]
    lines += ["%s %d %d %d" % (fmt_ms(t), h, r, d) for t, h, r, d in cuts]
    return "\n".join(lines) + "\n"


def cmd_draw(args):
    for name in ("rate_mbit", "ms", "gap_ms"):
        lo, hi = getattr(args, name)
        if not 0 <= lo <= hi:
            sys.exit("tail.py draw: --%s needs 0 <= MIN <= MAX" % name.replace("_", "-"))
    if args.rate_mbit[0] < 1 or args.ms[0] < 1 or args.gap_ms[0] < 1:
        sys.exit("tail.py draw: rates, durations and gaps must be at least 1")
    if args.hosts < 1 or args.horizon_s < 1:
        sys.exit("tail.py draw: --hosts and --horizon-s must be at least 1")
    text = schedule_text(args, draw(args.seed, args.hosts, args.horizon_s, args.rate_mbit,
                                    args.ms, args.gap_ms))
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def read_schedule(path):
    """The cuts of a schedule file as [(start_s text, host, rate, ms)] plus start in seconds."""
    cuts = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split()
            try:
                if len(fields) != 4:
                    raise ValueError
                start = float(fields[0])
                host, rate, ms = (int(x) for x in fields[1:])
            except ValueError:
                sys.exit("tail.py: %s:%d: want '%s', got %r" % (path, n, COLUMNS, line.rstrip()))
            cuts.append((fields[0], host, rate, ms, start))
    return cuts


class TrainingClock:
    """Follows train.py's --clock-file (see train.py's Clock) as it grows."""

    def __init__(self, path):
        self.path, self.f, self.partial = path, None, ""
        self.t0 = self.paused_at = self.end = None
        self.paused = 0.0

    def poll(self):
        """Reads what was appended since the last call."""
        if self.f is None:
            try:
                self.f = open(self.path)
            except FileNotFoundError:
                return
        data = self.f.read()
        if not data:
            return
        data = self.partial + data
        lines = data.split("\n")
        self.partial = lines.pop()  # "" after a complete line
        for line in lines:
            what, *values = line.split()
            t = float(values[0])
            if what == "start":
                self.t0 = t
            elif what == "pause":
                self.paused_at = t
            elif what == "resume":
                self.paused += t - self.paused_at
                self.paused_at = None
            elif what == "end":
                self.end = t

    def started(self):
        return self.t0 is not None

    def now(self):
        """Training time now: what train.py's Clock.now() returns (frozen while paused)."""
        t = self.end if self.end is not None else self.paused_at
        if t is None:
            t = time.perf_counter()  # CLOCK_MONOTONIC, as train.py's perf_counter
        return t - self.t0 - self.paused

    def running(self):
        return self.end is None and self.paused_at is None


def cmd_apply(args):
    cuts = read_schedule(args.schedule)
    with open(args.schedule, "rb") as f:
        raw = f.read()
    if args.copy:
        with open(args.copy, "wb") as f:
            f.write(raw)
    if os.path.exists(args.clock):
        sys.exit("tail.py apply: %s exists already (a previous run's?): remove it first"
                 % args.clock)
    stop = []

    def on_signal(signum, frame):
        stop.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    events = open(args.events, "w", buffering=1)
    events.write("# schedule %s sha256 %s\n" % (args.schedule, hashlib.sha256(raw).hexdigest()))
    events.write("# on/off: training time (train.py's clock) and unix time when set.sh "
                 "returned\n# %s\n" % EVENT_COLUMNS)
    clock = TrainingClock(args.clock)
    poll = args.poll_ms / 1000.0

    def set_rate(host, rate):
        cmd = [args.set, "--host", str(host), "--rate", rate]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            events.write("# FAILED: %s: exit %d: %s\n"
                         % (" ".join(cmd), r.returncode, r.stderr.strip()))
            print("tail.py apply: %s failed (exit %d): %s"
                  % (" ".join(cmd), r.returncode, r.stderr.strip()), file=sys.stderr)
            sys.exit(1)
        clock.poll()
        return clock.now(), time.time()

    k, active = 0, None  # next cut; (cut, on_s, on_unix) of the one in place

    def lift():
        off_s, off_unix = set_rate(active[0][1], args.base_rate)
        cut, on_s, on_unix = active
        events.write("%s %d %d %d %.3f %.3f %.3f %.3f\n"
                     % (cut[0], cut[1], cut[2], cut[3], on_s, off_s, on_unix, off_unix))

    while not stop:
        clock.poll()
        if not clock.started():
            time.sleep(poll)
            continue
        now = clock.now()
        if clock.end is not None:
            break
        if active and now >= active[0][4] + active[0][3] / 1000.0:
            lift()
            active = None
            continue
        if not active and k < len(cuts) and now >= cuts[k][4]:
            active = (cuts[k],) + set_rate(cuts[k][1], "%dmbit" % cuts[k][2])
            k += 1
            continue
        due = None
        if active:
            due = active[0][4] + active[0][3] / 1000.0
        elif k < len(cuts):
            due = cuts[k][4]
        wait = poll
        if due is not None and clock.running():
            wait = min(poll, max(due - now, 0.0))
        time.sleep(wait)
    if active:
        lift()
    if clock.started():
        why = "end" if clock.end is not None and not stop else "stopped"
        events.write("# %s at %.3f s of training: %d of %d cuts applied\n"
                     % (why, clock.now(), k, len(cuts)))
    else:
        events.write("# stopped before training started: 0 of %d cuts applied\n" % len(cuts))
    events.close()


def check(directory, seeds, backends):
    """Every difference between the schedules and what was applied, as strings."""
    problems, notes = [], []
    for seed in range(1, seeds + 1):
        drawn = os.path.join(directory, "schedule-s%d.txt" % seed)
        if not os.path.exists(drawn):
            problems.append("%s is missing" % drawn)
            continue
        with open(drawn, "rb") as f:
            raw = f.read()
        cuts = read_schedule(drawn)
        for b in backends:
            base = os.path.join(directory, "%s-s%d" % (b, seed))
            try:
                with open(base + ".schedule", "rb") as f:
                    if f.read() != raw:
                        problems.append("%s.schedule differs from %s" % (base, drawn))
            except FileNotFoundError:
                problems.append("%s.schedule is missing: was the tail applied?" % base)
            try:
                lines = open(base + ".events").read().split("\n")
            except FileNotFoundError:
                problems.append("%s.events is missing" % base)
                continue
            applied = [line.split() for line in lines if line and not line.startswith("#")]
            failed = [line for line in lines if line.startswith("# FAILED")]
            problems += ["%s.events: %s" % (base, line[2:]) for line in failed]
            for i, ev in enumerate(applied):
                if i >= len(cuts) or ev[:4] != [cuts[i][0]] + [str(x) for x in cuts[i][1:4]]:
                    problems.append("%s.events: cut %d is %s, the schedule's is %s" % (
                        base, i + 1, " ".join(ev[:4]),
                        " ".join(str(x) for x in cuts[i][:4]) if i < len(cuts) else "none"))
                    break
            end = [line for line in lines if line.startswith("# end at ")]
            if end:
                end_s = float(end[0].split()[3])
                due = sum(1 for c in cuts if c[4] < end_s - MISS_TOLERANCE_S)
                if len(applied) < due:
                    problems.append("%s.events: %d cuts applied, but %d were due before the "
                                    "training ended at %.1f s" % (base, len(applied), due, end_s))
            late = [float(ev[4]) - float(ev[0]) for ev in applied if len(ev) >= 6]
            late_off = [float(ev[5]) - float(ev[0]) - int(ev[3]) / 1000.0
                        for ev in applied if len(ev) >= 6]
            notes.append("%s-s%d: %d cuts%s%s" % (
                b, seed, len(applied),
                ", in place at most %.3f s and lifted at most %.3f s of training time late"
                % (max(late), max(late_off)) if late else "",
                "" if end else " (no end line: the run was stopped)"))
    return problems, notes


def cmd_check(args):
    backends = [b for b in args.backends.split(",") if b]
    problems, notes = check(args.dir, args.seeds, backends)
    for n in notes:
        print("tail check: " + n)
    if problems:
        print("tail check FAILED: the back-ends did not get the same tail schedule:",
              file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print("tail check: every back-end of each seed got the same schedule (%d seeds, %s)"
          % (args.seeds, ", ".join(backends)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("draw", help="draw a schedule from a seed")
    d.add_argument("--seed", type=int, required=True)
    d.add_argument("--hosts", type=int, required=True)
    d.add_argument("--horizon-s", type=int, required=True,
                   help="no cut starts at or after this training time")
    for name in ("--rate-mbit", "--ms", "--gap-ms"):
        d.add_argument(name, type=int, nargs=2, metavar=("MIN", "MAX"), required=True)
    d.add_argument("--out", help="write here (default: stdout)")
    a = sub.add_parser("apply", help="apply a schedule on a running train.py's clock")
    a.add_argument("--schedule", required=True)
    a.add_argument("--clock", required=True, help="train.py's --clock-file (must not exist yet)")
    a.add_argument("--events", required=True)
    a.add_argument("--copy", help="write a copy of the schedule as read here")
    a.add_argument("--set", default=SET_SH, metavar="CMD",
                   help="the program that sets a link, given --host I --rate R (default "
                        "scripts/cloud/set.sh)")
    a.add_argument("--base-rate", default="1gbit", help="the rate a cut returns to")
    a.add_argument("--poll-ms", type=float, default=10.0)
    c = sub.add_parser("check", help="compare the schedules every back-end got")
    c.add_argument("dir")
    c.add_argument("--seeds", type=int, required=True)
    c.add_argument("--backends", required=True)
    args = p.parse_args(argv)
    {"draw": cmd_draw, "apply": cmd_apply, "check": cmd_check}[args.cmd](args)


if __name__ == "__main__":
    main()
