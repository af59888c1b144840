#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints the tables of the "line-rate datagram channel" figures from a run of
scripts/bench-line-rate.sh, and whether each target was hit.

usage: scripts/summarize-line-rate.py OUTDIR

Reads OUTDIR/<cond>-bench.csv (optireduce-bench: per size, the library's calls and native Open
MPI's from the same job), OUTDIR/<cond>-stats.*.json (the job summary each bench job's rank 0
wrote to OPTIREDUCE_STATS_FILE, docs/configuration.md), OUTDIR/<cond>-osu.txt (scripts/osu-compare.sh: OSU averages, native and library in two jobs)
and OUTDIR/run-info.txt, for cond in clean and loss1. Percentiles are those of
scripts/plot-cloud.py (nearest rank), whose load() and pct() are used here, so both scripts
report the same P50 and P99 for the same CSV. Standard library only.
"""
import glob
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _plot_cloud():
    # plot-cloud.py has a dash in its name, so it is loaded by path. It imports matplotlib only
    # inside plot(), which is not used here. No __pycache__ left in scripts/.
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("plot_cloud", os.path.join(HERE, "plot-cloud.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_pc = _plot_cloud()
load, pct, human = _pc.load, _pc.pct, _pc.human

# Targets of the issue.
CLEAN_P50_RATIO_MAX = 1.0       # library/native P50, every size
OSU_RATIO_MAX = 1.0             # library/native OSU average, every size
BUSBW_SIZE = 16 << 20           # bus bandwidth as % of native, at this size
BUSBW_MIN_PCT = 90.0
LOSS_P99_RATIO_MAX = 0.3        # library/native P99 under 1% loss, every size
LOSS_P99_OVER_CLEAN_MAX = 1.3   # library P99 under loss / library P50 clean, every size
CLEAN_LOST_MAX_PCT = 0.05       # entries lost, clean network


def ms(us):
    return "%.2f" % (us / 1000.0) if us == us else "-"


def ratio(a, b):
    return a / b if b and a == a and b == b else float("nan")


def fmt(x, spec="%.2f"):
    return spec % x if x == x else "-"


def mark(ok):
    return "-" if ok is None else ("hit" if ok else "**miss**")


def read_info(outdir):
    info = {}
    path = os.path.join(outdir, "run-info.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.rstrip("\n").partition("=")
                if sep:
                    info[key] = value
    return info


def read_osu(path):
    """{size: (native_us, library_us)} from the final table of osu-compare.sh."""
    rows = {}
    if not os.path.exists(path):
        return rows
    in_table = False
    with open(path) as f:
        for line in f:
            if line.startswith("=== Average latency"):
                in_table = True
                continue
            fields = line.split()
            if not in_table or len(fields) < 3 or not fields[0].isdigit():
                continue
            try:
                rows[int(fields[0])] = (float(fields[1]), float(fields[2]))
            except ValueError:  # "-": the library run printed no row for this size
                rows[int(fields[0])] = (float(fields[1]), float("nan"))
    return rows


def read_stats(outdir, cond):
    """The counters summed over every bench job of the condition (it runs one or two), and each
    job's lost percentages (reduce-scatter, all-gather), from their OPTIREDUCE_STATS_FILE JSON."""
    totals, per_job = {}, []
    for path in sorted(glob.glob(os.path.join(outdir, "%s-stats.*.json" % cond))):
        with open(path) as f:
            job = json.load(f)["totals"]
        for key, value in job.items():
            if isinstance(value, int):
                totals[key] = totals.get(key, 0) + value
        per_job.append((share(job, "entries_lost_rs", "entries_expected_rs"),
                        share(job, "entries_lost_ag", "entries_expected_ag")))
    return totals, per_job


def share(counters, part, whole):
    return 100.0 * counters.get(part, 0) / counters[whole] if counters.get(whole) else 0.0


def lost_pct(totals):
    expected = totals.get("entries_expected_rs", 0) + totals.get("entries_expected_ag", 0)
    lost = totals.get("entries_lost_rs", 0) + totals.get("entries_lost_ag", 0)
    return 100.0 * lost / expected if expected else float("nan")


def describe_stats(cond, totals, lines):
    if not totals:
        return "%s: no %s-stats.*.json (OPTIREDUCE_STATS_FILE not set, or the jobs failed)" % (cond, cond)
    per_job = "; ".join("%.4f%% / %.4f%%" % pair for pair in lines) or "none printed"
    return ("%s: entries lost %s%% of %d (reduce-scatter %d of %d, all-gather %d of %d); "
            "per job (reduce-scatter / all-gather): %s; bounded calls %d of %d engine calls"
            % (cond, fmt(lost_pct(totals), "%.4f"),
               totals.get("entries_expected_rs", 0) + totals.get("entries_expected_ag", 0),
               totals.get("entries_lost_rs", 0), totals.get("entries_expected_rs", 0),
               totals.get("entries_lost_ag", 0), totals.get("entries_expected_ag", 0),
               per_job, totals.get("bounded_calls", 0), totals.get("engine_calls", 0)))


def all_ok(values, test):
    """True/False over the values that exist; None when there are none."""
    values = [v for v in values if v == v]
    return None if not values else all(test(v) for v in values)


def worst(values, pick=max):
    values = [v for v in values if v == v]
    return pick(values) if values else float("nan")


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    outdir = sys.argv[1]
    info = read_info(outdir)
    bench, osu, stats = {}, {}, {}
    for cond in ("clean", "loss1"):
        path = os.path.join(outdir, "%s-bench.csv" % cond)
        bench[cond] = load(path) if os.path.exists(path) else {}
        osu[cond] = read_osu(os.path.join(outdir, "%s-osu.txt" % cond))
        stats[cond] = read_stats(outdir, cond)
    if not any(bench.values()) and not any(osu.values()):
        sys.exit("summarize-line-rate.py: no results in %s (run scripts/bench-line-rate.sh first)" % outdir)

    print("## Line-rate datagram channel: library defaults vs native Open MPI\n")
    print("4 emulated hosts, rate %s, MTU %s%s; %s; commit %s; load average %s at the start, %s at the end.\n"
          "optireduce-bench jobs (sizes, iterations): %s; OSU %s. Times in ms; ratios < 1 favour the library.\n"
          % (info.get("rate", "?"), info.get("mtu", "?"), ", **quick run**" if info.get("quick") == "1" else "",
             info.get("date", "?"), info.get("commit", "?"), info.get("loadavg_start", "?"),
             info.get("loadavg_end", "?"), info.get("bench_jobs", "?"), info.get("osu", "?")))

    # Clean network.
    clean, clean_osu = bench["clean"], osu["clean"]
    clean_p50 = {}
    p50_ratios, osu_ratios, busbw = {}, {}, {}
    print("### Clean network\n")
    print("| Size | n | native P50 | library P50 | library/native P50 | OSU avg native | OSU avg library "
          "| OSU library/native | bus bandwidth, % of native |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sorted(set(clean) | set(clean_osu)):
        nat = clean.get(size, {}).get("native", [])
        lib = clean.get(size, {}).get("optireduce", [])
        n50, l50 = pct(nat, 50), pct(lib, 50)
        clean_p50[size] = l50
        p50_ratios[size] = ratio(l50, n50)
        busbw[size] = 100.0 * ratio(n50, l50)
        o_nat, o_lib = clean_osu.get(size, (float("nan"), float("nan")))
        osu_ratios[size] = ratio(o_lib, o_nat)
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            human(size), min(len(nat), len(lib)) if nat or lib else "-", ms(n50), ms(l50),
            fmt(p50_ratios[size]), ms(o_nat), ms(o_lib), fmt(osu_ratios[size], "%.3f"),
            fmt(busbw[size], "%.0f%%")))
    print()

    # 1% loss.
    loss = bench["loss1"]
    p99_ratios, p99_over_clean = {}, {}
    print("### 1% packet loss\n")
    print("| Size | n | native P99 | library P99 | library/native P99 | library P99 / library clean P50 "
          "| OSU avg native | OSU avg library | OSU library/native |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sorted(set(loss) | set(osu["loss1"])):
        nat = loss.get(size, {}).get("native", [])
        lib = loss.get(size, {}).get("optireduce", [])
        n99, l99 = pct(nat, 99), pct(lib, 99)
        p99_ratios[size] = ratio(l99, n99)
        p99_over_clean[size] = ratio(l99, clean_p50.get(size, float("nan")))
        o_nat, o_lib = osu["loss1"].get(size, (float("nan"), float("nan")))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            human(size), min(len(nat), len(lib)) if nat or lib else "-", ms(n99), ms(l99),
            fmt(p99_ratios[size]), fmt(p99_over_clean[size]), ms(o_nat), ms(o_lib),
            fmt(ratio(o_lib, o_nat), "%.3f")))
    print()
    print("P99 is the nearest-rank percentile of scripts/plot-cloud.py: with n calls per size it is "
          "the call ranked round(0.99 (n - 1)) + 1 (the maximum when n <= 51).\n")

    print("### Entries lost (OPTIREDUCE_STATS_FILE, all calls of the bench jobs, warm-up included)\n")
    for cond in ("clean", "loss1"):
        print("- " + describe_stats(cond, *stats[cond]))
    print()

    # Targets.
    clean_lost = lost_pct(stats["clean"][0])
    bb = busbw.get(BUSBW_SIZE, float("nan"))
    targets = [
        ("clean P50 library/native <= %.1f at every size" % CLEAN_P50_RATIO_MAX,
         "worst %s" % fmt(worst(p50_ratios.values())),
         all_ok(p50_ratios.values(), lambda r: r <= CLEAN_P50_RATIO_MAX)),
        ("clean OSU average library/native <= %.1f at every size" % OSU_RATIO_MAX,
         "worst %s" % fmt(worst(osu_ratios.values()), "%.3f"),
         all_ok(osu_ratios.values(), lambda r: r <= OSU_RATIO_MAX)),
        ("bus bandwidth at %s >= %.0f%% of native" % (human(BUSBW_SIZE), BUSBW_MIN_PCT),
         fmt(bb, "%.0f%%") if bb == bb else "not measured",
         None if bb != bb else bb >= BUSBW_MIN_PCT),
        ("1%% loss: P99 library/native <= %.1f at every size" % LOSS_P99_RATIO_MAX,
         "worst %s" % fmt(worst(p99_ratios.values())),
         all_ok(p99_ratios.values(), lambda r: r <= LOSS_P99_RATIO_MAX)),
        ("1%% loss: library P99 <= %.1f x its clean P50 at every size" % LOSS_P99_OVER_CLEAN_MAX,
         "worst %s" % fmt(worst(p99_over_clean.values())),
         all_ok(p99_over_clean.values(), lambda r: r <= LOSS_P99_OVER_CLEAN_MAX)),
        ("clean: entries lost < %.2f%%" % CLEAN_LOST_MAX_PCT,
         fmt(clean_lost, "%.4f%%") if clean_lost == clean_lost else "no stats",
         None if clean_lost != clean_lost else clean_lost < CLEAN_LOST_MAX_PCT),
    ]
    print("### Targets\n")
    print("| Target | Measured | Result |")
    print("|---|---:|---|")
    for name, measured, ok in targets:
        print("| %s | %s | %s |" % (name, measured, mark(ok) if ok is not None else "not measured"))
    if info.get("quick") == "1":
        print("\n(quick run: few iterations and sizes up to 4 MiB; not a measurement of the targets)")


if __name__ == "__main__":
    main()
