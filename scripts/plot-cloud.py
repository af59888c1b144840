#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the per-iteration timings of scripts/bench-cloud.sh into the tables of a dated note (docs/notes/)
and one latency-CDF PNG per condition.

usage: scripts/plot-cloud.py RESULTS_DIR PNG_DIR

Each RESULTS_DIR/<condition>-<mode>.csv (mode exact or bounded) holds, per message size, the
library's iterations ("optireduce") and native Open MPI's ("native") from the same job. Ratios
are always taken within one job. Needs matplotlib (Debian: python3-matplotlib) for the plots;
the tables are printed without it.
"""
import collections
import csv
import os
import sys

CONDITIONS = [
    ("clean", "clean network"),
    ("loss1", "1% packet loss"),
    ("loss01", "0.1% packet loss, small messages"),
    ("straggler", "stragglers: a random rank paused 50 ms, p = 0.2 every 50 ms"),
]


def load(path):
    data = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        for row in csv.DictReader(f):
            data[int(row["size"])][row["mode"]].append(float(row["latency_us"]))
    return data


def pct(values, p):
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def human(size):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div:
            return "%d %s" % (size // div, unit)
    return "%d B" % size


def ms(us):
    return "%.2f" % (us / 1000.0)


def table(cond, runs):
    exact, bounded = runs.get("exact"), runs.get("bounded")
    if not exact or not bounded:
        return
    print("| Size | native P50 / P99 / max (ms) | exact P50 / P99 / max | exact/native P50 | "
          "bounded P50 / P99 / max | **bounded/native P50** | **bounded/native P99** |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sorted(bounded):
        nb = bounded[size]["native"]
        b = bounded[size]["optireduce"]
        ne = exact.get(size, {}).get("native", [])
        e = exact.get(size, {}).get("optireduce", [])
        if not b or not nb:
            continue
        print("| %s | %s / %s / %s | %s / %s / %s | %.2f | %s / %s / %s | **%.2f** | **%.2f** |" % (
            human(size), ms(pct(nb, 50)), ms(pct(nb, 99)), ms(max(nb)),
            ms(pct(e, 50)), ms(pct(e, 99)), ms(max(e) if e else float("nan")),
            pct(e, 50) / pct(ne, 50) if e and ne else float("nan"),
            ms(pct(b, 50)), ms(pct(b, 99)), ms(max(b)),
            pct(b, 50) / pct(nb, 50), pct(b, 99) / pct(nb, 99)))
    print()


def plot(cond, title, runs, png_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no plot for %s; apt-get install python3-matplotlib)" % cond, file=sys.stderr)
        return
    bounded = runs["bounded"]
    sizes = sorted(bounded)
    picks = sorted({sizes[0], sizes[len(sizes) // 2], sizes[-1]})
    fig, axes = plt.subplots(1, len(picks), figsize=(5 * len(picks), 4), squeeze=False)
    for ax, size in zip(axes[0], picks):
        series = [("native (TCP)", bounded[size]["native"]),
                  ("optireduce exact", runs["exact"].get(size, {}).get("optireduce", [])),
                  ("optireduce bounded", bounded[size]["optireduce"])]
        for label, values in series:
            if not values:
                continue
            s = sorted(v / 1000.0 for v in values)
            ax.step(s, [(i + 1) / len(s) for i in range(len(s))], where="post", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("allreduce latency (ms), slowest rank")
        ax.set_ylabel("fraction of iterations")
        ax.set_title(human(size))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle("4 hosts at 1 Gbit/s, " + title)
    fig.tight_layout()
    out = os.path.join(png_dir, "cloud-cdf-%s.png" % cond)
    fig.savefig(out, dpi=90)
    print("wrote %s" % out, file=sys.stderr)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    res, png_dir = sys.argv[1], sys.argv[2]
    os.makedirs(png_dir, exist_ok=True)
    for cond, title in CONDITIONS:
        runs = {}
        for mode in ("exact", "bounded"):
            path = os.path.join(res, "%s-%s.csv" % (cond, mode))
            if os.path.exists(path):
                runs[mode] = load(path)
        if len(runs) < 2:
            continue
        print("### %s\n" % title)
        table(cond, runs)
        plot(cond, title, runs, png_dir)


if __name__ == "__main__":
    main()
