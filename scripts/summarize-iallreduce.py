#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Medians over runs of optireduce-bench --nonblocking or --threads outputs (docs/notes/2026-12-03-iallreduce.md).

usage: scripts/summarize-iallreduce.py FILE...   (all of one kind: the first file's header decides)

--nonblocking: per size, medians over the files of Pure Comm., Overall and Overlap(%) of the
library and of native, and the library/native ratio of the Pure Comm. medians.
--threads: per size, medians of the per-call-per-thread mean and of the aggregate bandwidth for
the library and native on N threads and on one, and BW-Ratio, Lib-Scale, Nat-Scale computed from
those medians.
"""
import statistics
import sys


def rows(path):
    header, out = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("# Size"):
                header = line[1:].replace("Avg Latency(us)", "AvgLatency").replace("Pure Comm.(us)", "PureComm").split()
                continue
            fields = line.split()
            if header and fields and fields[0].isdigit() and len(fields) >= len(header) - 2:
                out.append(dict(zip(header, fields)))
    return header, out


def med(values):
    return statistics.median(values) if values else float("nan")


def main(paths):
    by_size, kind = {}, None
    for path in paths:
        header, found = rows(path)
        if header is None:
            print(f"# {path}: no table (failed run?)")
            continue
        kind = kind or ("threads" if "AggBW(GB/s)" in header else "nonblocking")
        for row in found:
            by_size.setdefault(int(row["Size"]), []).append(row)
    if kind == "nonblocking":
        print(f"{'# Size':<10}{'runs':>5}{'Lib-Comm':>11}{'Nat-Comm':>11}{'Comm-Ratio':>11}{'Lib-Overall':>12}"
              f"{'Nat-Overall':>12}{'Lib-Ovl%':>9}{'Nat-Ovl%':>9}  (us; medians over runs)")
        for size, rs in sorted(by_size.items()):
            g = lambda k: med([float(r[k]) for r in rs])
            lc, nc = g("PureComm"), g("Nat-Comm")
            print(f"{size:<10}{len(rs):>5}{lc:>11.0f}{nc:>11.0f}{lc / nc:>11.2f}{g('Overall(us)'):>12.0f}"
                  f"{g('Nat-Overall'):>12.0f}{g('Overlap(%)'):>9.1f}{g('Nat-Overlap'):>9.1f}")
    elif kind == "threads":
        print(f"{'# Size':<10}{'runs':>5}{'Lib-Avg':>10}{'Nat-Avg':>10}{'Lib1-Avg':>10}{'Nat1-Avg':>10}"
              f"{'Lib-BW':>9}{'Nat-BW':>9}{'Lib1-BW':>9}{'Nat1-BW':>9}{'BW-Ratio':>9}{'Lib-Scale':>10}{'Nat-Scale':>10}"
              "  (us per call per thread, GB/s aggregate; medians over runs)")
        for size, rs in sorted(by_size.items()):
            g = lambda k: med([float(r[k]) for r in rs])
            bw, nbw, bw1, nbw1 = g("AggBW(GB/s)"), g("Nat-AggBW"), g("Lib1-AggBW"), g("Nat1-AggBW")
            print(f"{size:<10}{len(rs):>5}{g('AvgLatency'):>10.0f}{g('Nat-Avg(us)'):>10.0f}{g('Lib1-Avg(us)'):>10.0f}"
                  f"{g('Nat1-Avg(us)'):>10.0f}{bw:>9.3f}{nbw:>9.3f}{bw1:>9.3f}{nbw1:>9.3f}{bw / nbw:>9.2f}"
                  f"{bw / bw1:>10.2f}{nbw / nbw1:>10.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
