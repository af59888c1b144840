#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns OUTDIR/accuracy.txt of scripts/bench-accuracy.sh into the tables of a dated note (docs/notes/)
(section 9) and one PNG: NMSE and largest error against packet loss, transform on and off.

usage: scripts/plot-accuracy.py RESULTS_DIR PNG_PATH

Lines look like "<experiment> <setting>-<on|off> measure <floats> <ops> <p50 ms> <nmse>
<max |error| / rms> <mean error estimate> <loss>". Needs matplotlib (Debian:
python3-matplotlib) for the plot; the tables are printed without it.
"""
import collections
import os
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 10 or p[2] != "measure":
                continue
            setting, ht = p[1].rsplit("-", 1)
            rows.append(dict(exp=p[0], setting=setting, ht=ht, floats=int(p[3]), ops=int(p[4]), p50=float(p[5]),
                             nmse=float(p[6]), maxerr=float(p[7]), estimate=float(p[8]), loss=float(p[9])))
    return rows


def mib(floats):
    b = floats * 4
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def cost_table(rows):
    by = collections.defaultdict(list)
    for r in rows:
        if r["exp"] == "cost":
            by[(r["floats"], r["ht"])].append(r["p50"])
    print("| Size | P50 on (runs) | P50 off (runs) | on / off (of the run medians) |")
    print("|---|---|---|---|")
    for floats in sorted({k[0] for k in by}):
        on, off = by.get((floats, "on"), []), by.get((floats, "off"), [])
        if not on or not off:
            continue
        med = lambda v: sorted(v)[len(v) // 2]
        ratio = sum(on) / len(on) / (sum(off) / len(off))
        print(f"| {mib(floats)} | {' / '.join(f'{v:.1f}' for v in on)} ms | {' / '.join(f'{v:.1f}' for v in off)} ms "
              f"| {ratio:.3f} |")


def accuracy_table(rows):
    acc = [r for r in rows if r["exp"] == "accuracy"]
    print()
    print("| Packet loss | Entries lost (on / off) | NMSE on | NMSE off | max error / rms on | max error / rms off "
          "| error estimate on (measured √NMSE) | P50 on / off |")
    print("|---|---|---|---|---|---|---|---|")
    settings = sorted({r["setting"] for r in acc}, key=lambda s: float(s.replace("loss", "")))
    for s in settings:
        on = next((r for r in acc if r["setting"] == s and r["ht"] == "on"), None)
        off = next((r for r in acc if r["setting"] == s and r["ht"] == "off"), None)
        if not on or not off:
            continue
        loss = float(s.replace("loss", ""))
        print(f"| {100 * loss:g}% | {100 * on['loss']:.2f}% / {100 * off['loss']:.2f}% | {on['nmse']:.3g} | "
              f"{off['nmse']:.3g} | {on['maxerr']:.3g} | {off['maxerr']:.3g} | {on['estimate']:.3g} "
              f"({on['nmse'] ** 0.5:.3g}) | {on['p50']:.1f} / {off['p50']:.1f} ms |")
    return acc, settings


def plot(acc, settings, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no plot)", file=sys.stderr)
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for ht, style in (("on", "o-"), ("off", "s--")):
        pts = [(float(s.replace("loss", "")) * 100, r) for s in settings for r in acc
               if r["setting"] == s and r["ht"] == ht]
        a.plot([x for x, _ in pts], [r["nmse"] for _, r in pts], style, label=f"transform {ht}")
        b.plot([x for x, _ in pts], [r["maxerr"] for _, r in pts], style, label=f"transform {ht}")
    for ax, title in ((a, "NMSE vs exact sum"), (b, "largest error / rms of the sum")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("packets dropped on arrival (%)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("bounded mode, 4 hosts at 1 Gbit/s, 4 MiB allreduce of gradient-like data")
    fig.tight_layout()
    os.makedirs(os.path.dirname(png) or ".", exist_ok=True)
    fig.savefig(png, dpi=110)
    print(f"wrote {png}", file=sys.stderr)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rows = load(os.path.join(sys.argv[1], "accuracy.txt"))
    cost_table(rows)
    acc, settings = accuracy_table(rows)
    plot(acc, settings, sys.argv[2])


if __name__ == "__main__":
    main()
