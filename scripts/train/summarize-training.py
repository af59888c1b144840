#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables and plots of a scripts/train/bench-training.sh run.

usage: scripts/train/summarize-training.py OUTDIR

Reads OUTDIR/<condition>/<backend>-s<seed>.log (the RESULT line) and .csv (per iteration), and
writes OUTDIR/training.md: per condition, one row per back-end with time to the target accuracy
(mean over the seeds that reached it, and each seed's), the speed-up of that mean against native
Open MPI and against Gloo, final accuracy, iteration time P50 / P99 and their ratio (over every
iteration of every seed, less the first --skip-iters of each), the fraction of gradient entries
the library lost (and the all-gather's share: the only loss that makes replicas differ), the
peers written off as stragglers, the final replica drift and the parameter-checksum spread across ranks. Plots
(matplotlib, Agg): OUTDIR/accuracy-<condition>.png, test accuracy against training time, and
OUTDIR/iter-cdf-<condition>.png, the CDF of iteration times.

When the run has a reduced-precision back-end (bounded-bf16, bounded-int8: bounded mode with
OPTIREDUCE_CODEC; gloo-fp16: Gloo on float16 buckets), the tables gain two columns: the codec
rows' speed-up against gloo-fp16, their fair peer, and the bytes each rank put on the wire per
gradient entry, from the library's counters in <backend>-s<seed>.stats (wire_bytes_per_entry;
library rows only). A run without those back-ends gives the same tables as before they existed.
"""
import csv
import glob
import json
import os
import re
import statistics
import sys

# baseline: --baseline-build
BACKENDS = ["native", "bounded", "bounded-bf16", "bounded-int8", "exact", "gloo", "gloo-fp16",
            "baseline"]
# Bounded mode with a reduced-precision wire codec, and the peer they are judged against: Gloo
# with the gradients cast to float16 around its all_reduce (fp16_compress_hook's way).
CODECS = ["bounded-bf16", "bounded-int8", "bounded-bf16-carry", "bounded-int8-carry"]
REDUCED = CODECS + ["gloo-fp16"]
CONDITIONS = {
    "clean": "clean network (4 hosts, 1 Gbit/s)",
    "loss": "1% packet loss on arrival at every host",
    "tail": "tail: one random host's link slowed at random moments (see setup.txt)",
    "cotenant": "co-tenant: a second job of the same back-end on the same hosts, no loss",
}
COLORS = {"native": "tab:blue", "bounded": "tab:red", "bounded-bf16": "tab:pink",
          "bounded-int8": "tab:brown", "exact": "tab:green", "gloo": "tab:orange",
          "gloo-fp16": "tab:olive", "baseline": "tab:purple", "bounded-carry": "tab:cyan",
          "bounded-int8-carry": "tab:gray"}


def load_runs(outdir):
    """{condition: {backend: [run]}}; a run is the RESULT dict plus 'rows' (its CSV rows)."""
    runs = {}
    mtu = read_mtu(os.path.join(outdir, "setup.txt"))
    for log in sorted(glob.glob(os.path.join(outdir, "*", "*-s*.log"))):
        cond = os.path.basename(os.path.dirname(log))
        # Greedy: back-end names have dashes of their own (bounded-int8-cotenant-s1.log).
        m = re.match(r"(.+)-s(\d+)\.log$", os.path.basename(log))
        backend, seed = m.group(1), int(m.group(2))
        result = read_result(log)
        if result is None:
            result = {"label": backend, "seed": seed, "failed": True}
        path = log[:-len(".log")] + ".csv"
        result["rows"] = read_csv(path) if os.path.exists(path) else []
        events = log[:-len(".log")] + ".events"
        result["cuts"] = read_cuts(events) if os.path.exists(events) else []
        result["wire_bytes_per_entry"] = wire_bytes_per_entry(
            read_stats(log[:-len(".log")] + ".stats"), mtu)
        runs.setdefault(cond, {}).setdefault(backend, []).append(result)
    return runs


def read_mtu(setup_path):
    """The cloud's MTU from bench-training.sh's setup.txt; 1500 for a setup.txt from before
    --mtu (its links had the default), None without one."""
    if not os.path.exists(setup_path):
        return None
    with open(setup_path) as f:
        m = re.search(r"\bMTU (\d+)", f.read())
    return int(m.group(1)) if m else 1500


def read_stats(path):
    """The counters of the library's OPTIREDUCE_STATS summary (summed over the ranks) as
    {name: number}; None without the file or the line (a run without the library)."""
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("optireduce[0] stats: ranks="):
                pairs = (w.split("=", 1) for w in line.split()[2:] if "=" in w)
                return {k: float(v) for k, v in pairs if re.match(r"-?[0-9.e+]+$", v)}
    return None


def wire_bytes_per_entry(counters, mtu):
    """Bytes each rank put on the wire per gradient entry it reduced: datagrams_sent (data and
    repairs, every rank) times the MTU, over the entries of the engine's calls (engine_bytes:
    the float32 gradients, 4 bytes each, every rank). An upper bound on the IP bytes: the
    engine fills each datagram to the path MTU less the headers and down to whole 16-float
    lines, so at MTU 1500 a full datagram is 1476-1496 bytes (1.6% or less below the bound),
    and only each stream's last one is short. None where it means nothing: no datagrams
    (exact mode, no library), or calls moved to the reliable path (OPTIREDUCE_ON_EXCESS_LOSS
    =exact), whose bytes the counters do not see."""
    if not counters or not mtu:
        return None
    sent, payload = counters.get("datagrams_sent"), counters.get("engine_bytes")
    if not sent or not payload or counters.get("reliable_calls"):
        return None
    return sent * mtu / (payload / 4.0)


def read_result(log):
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("RESULT "):
                return json.loads(line[len("RESULT "):])
    return None


def read_cuts(path):
    """The tail's cuts as applied: (on_s, off_s) on the training clock (tail.py's events file)."""
    cuts = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if line.startswith("#") or len(fields) < 6:
                continue
            cuts.append((float(fields[4]), float(fields[5])))
    return cuts


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def pct(values, q):
    s = sorted(values)
    if not s:
        return None
    k = q / 100.0 * (len(s) - 1)  # linear interpolation, as numpy's default
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def comm_times(run):
    return per_iteration(run, "comm_ms")


def cotenant_table(by_backend, solo):
    """Each job of the co-tenant condition against the same back-end alone on the clean network
    (`solo`: the clean condition's runs, when this output has them): its allreduce times and the
    iterations whose allreduce took more than twice the solo P99."""
    lines = ["| job | allreduce P50 (ms) | P99 (ms) | max (ms) | solo P99 (ms) | over 2× solo P99 "
             "| entries lost |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for b in ordered(by_backend):
        ok = [r for r in by_backend[b] if not r.get("failed")]
        times = [t for r in ok for t in comm_times(r)]
        alone = [t for r in solo.get(b.replace("-cotenant", ""), []) if not r.get("failed")
                 for t in comm_times(r)]
        p99_alone = pct(alone, 99)
        over = None if p99_alone is None else sum(t > 2 * p99_alone for t in times)
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            b, fmt(pct(times, 50), "%.0f"), fmt(pct(times, 99), "%.0f"), fmt(max(times, default=None), "%.0f"),
            fmt(p99_alone, "%.0f"), "–" if over is None else "%d of %d" % (over, len(times)),
            fmt(mean_or_none([r.get("entries_lost_frac") for r in ok]), "%.2e")))
    return lines


def cut_table(by_backend):
    """The tail condition split at its cuts: the iterations that ended while a host's link was
    slow (or within 0.5 s after, while its queues drain) against the rest, pooled over seeds:
    how many, their total and mean time, and the entries they lost."""
    lines = ["| back-end | iterations in cuts | their time (s) | mean (ms) | lost in cuts "
             "| iterations outside | mean (ms) | lost outside |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for b in ordered(by_backend):
        acc = {True: [0, 0.0, 0.0, 0.0], False: [0, 0.0, 0.0, 0.0]}  # count, ms, lost, expected
        for r in by_backend[b]:
            if r.get("failed"):
                continue
            lost_before = expected_before = 0.0
            for row in r["rows"]:
                t = float(row["wall_s"])
                inside = any(on <= t <= off + 0.5 for on, off in r["cuts"])
                lost = float(row["entries_lost"] or 0)
                expected = float(row["entries_expected"] or 0)
                a = acc[inside]
                a[0] += 1
                a[1] += float(row["iter_ms"])
                a[2] += lost - lost_before
                a[3] += expected - expected_before
                lost_before, expected_before = lost, expected

        def loss(a):
            return "–" if a[3] == 0 else "%.1f%%" % (100 * a[2] / a[3])

        cut, out = acc[True], acc[False]
        lines.append("| %s | %d | %.1f | %s | %s | %d | %s | %s |" % (
            b, cut[0], cut[1] / 1000, fmt(cut[1] / cut[0] if cut[0] else None, "%.0f"), loss(cut),
            out[0], fmt(out[1] / out[0] if out[0] else None, "%.0f"), loss(out)))
    return lines


def per_iteration(run, column):
    skip = 5  # train.py's --skip-iters default: the first iterations set things up
    return [float(r[column]) for r in run["rows"][skip:]]


def iter_times(run):
    return per_iteration(run, "iter_ms")


def fmt(v, spec):
    return "–" if v is None else spec % v


def mean_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def max_or_none(values):
    return max((v for v in values if v is not None), default=None)


def row_stats(runs):
    """The numbers of one table row (one back-end under one condition)."""
    ok = [r for r in runs if not r.get("failed")]
    ttt = [r.get("time_to_target_s") for r in sorted(ok, key=lambda r: r["seed"])]
    times = [t for r in ok for t in iter_times(r)]
    p50, p99 = pct(times, 50), pct(times, 99)
    lost = [r.get("entries_lost_frac") for r in ok]
    # Both phases carry the same number of entries: half of entries_expected is the all-gather's.
    lost_ag = [r["entries_lost_ag"] / (r["entries_expected"] / 2)
               for r in ok if r.get("entries_lost_ag") is not None and r.get("entries_expected")]
    # Entries a rank's input carried into the next step, per entry of its all-gather (OPTIREDUCE_CARRY).
    carried = [r["entries_carried"] / (r["entries_expected"] / 2)
               for r in ok if r.get("entries_carried") is not None and r.get("entries_expected")]
    return {
        "carried": mean_or_none(carried),
        "carry_dropped": sum(r.get("carry_dropped_entries") or 0 for r in ok),
        "seeds": len(runs), "failed": len(runs) - len(ok),
        "reached": sum(t is not None for t in ttt), "ttt_mean": mean_or_none(ttt), "ttt": ttt,
        "acc": mean_or_none([r.get("final_acc") for r in ok]),
        "p50": p50, "p99": p99, "ratio": p99 / p50 if p50 else None,
        "lost": mean_or_none(lost), "lost_ag": mean_or_none(lost_ag),
        "written_off": sum(r.get("stragglers_written_off") or 0 for r in ok)
        if any(r.get("stragglers_written_off") is not None for r in ok) else None,
        "drift": max_or_none([r.get("final_drift") for r in ok]),
        "spread": max_or_none([r.get("checksum_spread") for r in ok]),
        # CPU seconds per training step, summed over the ranks (every thread, evaluations out).
        "cpu": mean_or_none([r.get("cpu_s_per_step") for r in ok]),
        # The whole machine's busy CPU per step, and its softirqs (train.py's Clock: the emulated
        # network's work lands on whichever task a softirq interrupts).
        "machine": mean_or_none([r.get("machine_cpu_s_per_step") for r in ok]),
        "softirq": mean_or_none([r.get("softirq_s_per_step") for r in ok]),
        "wire": mean_or_none([r.get("wire_bytes_per_entry") for r in ok]),
    }


def has_reduced(runs):
    """Whether the run ({condition: {backend: [run]}}) has a reduced-precision back-end: only
    then do the tables carry the columns about them."""
    return any(b.replace("-cotenant", "") in REDUCED for by_backend in runs.values()
               for b in by_backend)


def speedup(base, this):
    if base is None or this is None or this == 0:
        return "–"
    return "%.2f×" % (base / this)


def table(cond, by_backend, reduced=False):
    """reduced: the run has reduced-precision back-ends; adds the speed-up against gloo-fp16
    (codec rows) and the wire bytes per entry. A run with a -carry back-end adds the entries
    carried into the next step and those dropped for good."""
    stats = {b: row_stats(by_backend[b]) for b in ordered(by_backend)}
    native = stats.get("native", {}).get("ttt_mean")
    gloo = stats.get("gloo", {}).get("ttt_mean")
    gloo16 = stats.get("gloo-fp16", {}).get("ttt_mean")
    lines = [
        "| Back-end | time to target, mean (s) | per seed (s) | vs native | vs Gloo | final acc "
        "| iter P50 (ms) | iter P99 (ms) | P99/P50 | entries lost | of which all-gather "
        "| stragglers written off | final drift | checksum spread | CPU s/step (all ranks) "
        "| machine CPU s/step | of which softirq |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    if reduced:
        lines[0] = lines[0].replace("| vs Gloo |", "| vs Gloo | vs Gloo fp16 |") + \
            " wire bytes/entry (≤) |"
        lines[1] += "---:|---:|"
    carry = any(b.endswith("-carry") for b in stats)
    if carry:
        lines[0] += " entries carried | residual entries dropped |"
        lines[1] += "---:|---:|"
    for b, s in stats.items():
        per_seed = ", ".join(fmt(t, "%.1f") for t in s["ttt"]) or "–"
        if s["failed"]:
            per_seed += " (%d failed)" % s["failed"]
        mean = fmt(s["ttt_mean"], "%.1f")
        if s["reached"] < s["seeds"]:
            mean += " (%d/%d reached)" % (s["reached"], s["seeds"])
        cells = [b, mean, per_seed, speedup(native, s["ttt_mean"]), speedup(gloo, s["ttt_mean"]),
                 fmt(s["acc"], "%.4f"), fmt(s["p50"], "%.0f"), fmt(s["p99"], "%.0f"),
                 fmt(s["ratio"], "%.2f"), fmt(s["lost"], "%.2e"), fmt(s["lost_ag"], "%.2e"),
                 fmt(s["written_off"], "%d"), fmt(s["drift"], "%.2e"),
                 fmt(s["spread"], "%.3g"), fmt(s["cpu"], "%.3f"), fmt(s["machine"], "%.3f"),
                 fmt(s["softirq"], "%.3f")]
        if reduced:
            codec = b.replace("-cotenant", "") in CODECS
            cells.insert(5, speedup(gloo16, s["ttt_mean"]) if codec else "–")
            cells.append(fmt(s["wire"], "%.2f"))
        if carry:
            cells += [fmt(s["carried"], "%.2e"), fmt(s["carry_dropped"], "%d")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ordered(by_backend):
    return [b for b in BACKENDS if b in by_backend] + sorted(set(by_backend) - set(BACKENDS))


def hyper_parameters(by_cond):
    for by_backend in by_cond.values():
        for runs in by_backend.values():
            for r in runs:
                if not r.get("failed"):
                    return ("%d ranks, %.1f M parameters in %d buckets, global batch %d, lr %g, "
                            "target test accuracy %.2f" % (
                                r["world"], r["params"] / 1e6, r["buckets"], r["batch"], r["lr"],
                                r["target_acc"]))
    return "no successful run"


def plot(outdir, cond, by_backend):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    title = CONDITIONS.get(cond, cond)
    files = []

    fig, ax = plt.subplots(figsize=(8, 5))
    for b in ordered(by_backend):
        for i, r in enumerate(sorted(by_backend[b], key=lambda r: r.get("seed", 0))):
            pts = [(float(x["wall_s"]), float(x["test_acc"])) for x in r["rows"] if x["test_acc"]]
            if pts:
                ax.plot(*zip(*pts), color=COLORS.get(b), alpha=0.8, linewidth=1.2,
                        label=b if i == 0 else None)
    target = next((r["target_acc"] for rs in by_backend.values() for r in rs if "target_acc" in r),
                  None)
    if target:
        ax.axhline(target, color="gray", linestyle=":", linewidth=1)
    ax.set(xlabel="training time (s)", ylabel="test accuracy", title=title, ylim=(0.5, 1.0))
    ax.grid(alpha=0.3)
    ax.legend()
    files.append(save(fig, outdir, "accuracy-%s.png" % cond))

    fig, ax = plt.subplots(figsize=(8, 5))
    for b in ordered(by_backend):
        times = sorted(t for r in by_backend[b] for t in iter_times(r))
        if times:
            ax.plot(times, [(i + 1) / len(times) for i in range(len(times))],
                    color=COLORS.get(b), label=b, drawstyle="steps-post")
    ax.set(xlabel="iteration time (ms)", ylabel="fraction of iterations", title=title)
    ax.set_xscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    files.append(save(fig, outdir, "iter-cdf-%s.png" % cond))
    return files


def save(fig, outdir, name):
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name), dpi=110)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return name


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    runs = load_runs(outdir)
    if not runs:
        sys.exit("no runs (<condition>/<backend>-s<seed>.log) under %s" % outdir)
    conds = [c for c in CONDITIONS if c in runs] + sorted(set(runs) - set(CONDITIONS))
    md = ["# Training time to accuracy", "",
          "scripts/train/bench-training.sh: %s. Time to target is training time (evaluation and "
          "drift measurements excluded) until the first evaluation at or above the target; "
          "speed-ups compare the means. Iteration times pool every seed, less each run's first 5 "
          "iterations." % hyper_parameters(runs), ""]
    setup = os.path.join(outdir, "setup.txt")
    if os.path.exists(setup):
        md += ["```"] + open(setup).read().rstrip("\n").split("\n") + ["```", ""]
    reduced = has_reduced(runs)
    if reduced:
        md += ["vs Gloo fp16: the codec back-ends (bounded-bf16, bounded-int8) against gloo-fp16, "
               "Gloo with its buckets cast to float16 around the all_reduce. Wire bytes/entry "
               "(≤): bytes each rank sent per gradient entry, from the library's counters "
               "(datagrams_sent × MTU / (engine_bytes / 4)), an upper bound within about 2%; "
               "– where the library sent no datagrams (native, Gloo, exact).", ""]
    for cond in conds:
        md += ["## %s" % CONDITIONS.get(cond, cond), ""] + table(cond, runs[cond], reduced) + [""]
        if cond == "cotenant":
            md += cotenant_table(runs[cond], runs.get("clean", {})) + [""]
        if cond == "tail":
            md += cut_table(runs[cond]) + [""]
        try:
            for name in plot(outdir, cond, runs[cond]):
                md += ["![%s](%s)" % (name, name)]
        except ImportError:
            md += ["(no plots: matplotlib is missing)"]
        md.append("")
    with open(os.path.join(outdir, "training.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
