#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""docs/results.md, its plots and README.md's results table, generated from the raw outputs of
the last full training benchmark (scripts/train/bench-training.sh), kept in docs/results/page/.

usage: scripts/results-page.py [--check] [--readme FILE] [--readme-optional]
       scripts/results-page.py --import OUTDIR --command 'DATE COMMIT COMMAND...'

Reads docs/results/page/: setup.txt and results.txt (one "condition RESULT {...}" or
"condition FAILED label seed exit=N" line per run), <condition>/<backend>-s<seed>.csv (per
iteration), tail/<backend>-s<seed>.events (the cuts applied), tail/schedule-s<seed>.txt and
tail/check.txt, and command.txt, one line: the date the run started (YYYY-MM-DD, as in
setup.txt), the commit it ran at (or -), and the command. The per-run files are parsed by
scripts/train/summarize-training.py (read_csv, read_cuts, row_stats, cut_table,
cotenant_table), loaded by path, so this page and training.md report the same numbers.
Writes docs/results.md, the SVG plots in docs/img/results/ (written here, no plotting library:
the same input gives the same bytes), and the text between the lines
<!-- results-table:begin --> and <!-- results-table:end --> of README.md. Without those markers
it refuses (exit 2) before writing anything, unless --readme-optional, which then leaves
README.md alone and says so.

--check     regenerate into a temporary directory and compare byte for byte with the committed
            docs/results.md, docs/img/results/*.svg and README.md's block; exit 1 naming each
            difference and the command that regenerates them.
--readme F  the README to fill or check (default README.md; a scratch copy for trying it).
--import OUTDIR --command '...'
            replace docs/results/page/ with the files of a bench-training.sh output directory
            that the page reads (no logs, .net or .clock files), write command.txt, remake
            test/mutations/results_page.patch for the new page, and regenerate.
Standard library only.
"""
import argparse
import difflib
import glob
import importlib.util
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PAGE = "docs/results/page"
MD = "docs/results.md"
IMG = "docs/img/results"
MUTATION = "test/mutations/results_page.patch"
BEGIN, END = "<!-- results-table:begin -->", "<!-- results-table:end -->"
REGENERATE = "/usr/bin/python3 scripts/results-page.py"

# Every condition bench-training.sh knows, in its order: one the run lacks is shown as such.
CONDITIONS = ["clean", "loss", "tail", "cotenant"]
SHORT = {"clean": "clean", "loss": "1% loss", "tail": "tail", "cotenant": "co-tenant"}
# The back-ends the page compares bounded with; others in the run (exact, baseline) get rows too.
OTHERS = [("native", "native"), ("gloo", "Gloo")]
COLORS = {"native": "#1f77b4", "bounded": "#d62728", "bounded-bf16": "#e377c2",
          "bounded-int8": "#8c564b", "exact": "#2ca02c", "gloo": "#ff7f0e", "gloo-fp16": "#bcbd22",
          "baseline": "#9467bd"}


def _summarize():
    # summarize-training.py has a dash in its name, so it is loaded by path; it imports
    # matplotlib only inside plot(), which is not used here. No __pycache__ left in scripts/.
    sys.dont_write_bytecode = True
    path = os.path.join(HERE, "train", "summarize-training.py")
    spec = importlib.util.spec_from_file_location("summarize_training", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


S = _summarize()
fmt = S.fmt  # "–" for a missing value, the same cell as training.md's


class PageError(Exception):
    pass


# --- reading -------------------------------------------------------------------------------

def load_runs(page):
    """{condition: {label: [run]}} from results.txt, each run its RESULT dict with 'rows' (its
    CSV) and 'cuts' (its tail events), as summarize-training.py's load_runs gives from logs."""
    path = os.path.join(page, "results.txt")
    if not os.path.exists(path):
        raise PageError("%s is missing" % path)
    runs = {}
    mtu = S.read_mtu(os.path.join(page, "setup.txt"))
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3 and parts[1] == "RESULT":
                run = json.loads(parts[2])
            elif len(parts) == 3 and parts[1] == "FAILED":
                label, seed = parts[2].split()[:2]
                run = {"label": label, "seed": int(seed), "failed": True}
            else:
                raise PageError("%s:%d: neither a RESULT nor a FAILED line" % (path, n))
            cond = parts[0]
            # bench-training.sh trains a co-tenant job with its seed + 100 but files it under the
            # measured job's seed (<backend>-cotenant-s<seed>), which is the seed its FAILED
            # line gives.
            cotenant = run["label"].endswith("-cotenant")
            seed = run["seed"] - 100 if cotenant and not run.get("failed") else run["seed"]
            base = os.path.join(page, cond, "%s-s%d" % (run["label"], seed))
            if os.path.exists(base + ".csv"):
                run["rows"] = S.read_csv(base + ".csv")
            elif run.get("failed"):
                run["rows"] = []
            else:
                raise PageError("%s names a run whose %s.csv is missing" % (path, base))
            run["cuts"] = S.read_cuts(base + ".events") if os.path.exists(base + ".events") else []
            run["wire_bytes_per_entry"] = S.wire_bytes_per_entry(S.read_stats(base + ".stats"), mtu)
            runs.setdefault(cond, {}).setdefault(run["label"], []).append(run)
    for by_label in runs.values():
        for label in by_label:
            by_label[label].sort(key=lambda r: r["seed"])
    return runs


def read_setup(page):
    path = os.path.join(page, "setup.txt")
    if not os.path.exists(path):
        raise PageError("%s is missing" % path)
    with open(path) as f:
        lines = f.read().rstrip("\n").split("\n")
    m = re.match(r"started (\S+) on (.+?), (\d+) cores", lines[0])
    if not m:
        raise PageError("%s: first line is not bench-training.sh's 'started DATE on HOST, N cores'"
                        % path)
    return {"lines": lines, "started": m.group(1), "host": m.group(2), "cores": int(m.group(3))}


def read_command(page, setup):
    path = os.path.join(page, "command.txt")
    if not os.path.exists(path):
        raise PageError("%s is missing: one line, 'DATE COMMIT COMMAND...'" % path)
    with open(path) as f:
        text = f.read().strip()
    parts = text.split(None, 2)
    if len(parts) != 3 or not re.match(r"\d{4}-\d\d-\d\d$", parts[0]):
        raise PageError("%s: expected one line 'YYYY-MM-DD COMMIT COMMAND...'" % path)
    if not setup["started"].startswith(parts[0]):
        raise PageError("%s says %s but setup.txt's run started %s: command.txt is another run's"
                        % (path, parts[0], setup["started"]))
    return {"date": parts[0], "commit": parts[1], "command": parts[2]}


# --- numbers -------------------------------------------------------------------------------

def ordered(by_label):
    """The measured back-ends first, in summarize-training.py's order, then co-tenant jobs."""
    main = [b for b in S.ordered(by_label) if not b.endswith("-cotenant")]
    co = [b + "-cotenant" for b in main if b + "-cotenant" in by_label]
    return main + co + sorted(set(by_label) - set(main) - set(co))


def stats_of(runs, cond, label):
    by_label = runs.get(cond, {})
    if label not in by_label:
        return None
    s = S.row_stats(by_label[label])
    ok = [r for r in by_label[label] if not r.get("failed")]
    s["iters_to_target"] = S.mean_or_none([r.get("iters_to_target") for r in ok])
    spreads = [r.get("checksum_spread") for r in ok]
    s["identical"] = None if not ok or None in spreads else all(x == 0 for x in spreads)
    return s


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def lost_pct(frac):
    if frac is None:
        return "–"
    return "0%" if frac == 0 else "%.2g%%" % (100 * frac)


def backend_cell(label, s):
    name = label.replace("-cotenant", " (co-tenant job)")
    if s["failed"]:
        name += " (%d of %d runs failed)" % (s["failed"], s["seeds"])
    return name


def ttt_cell(s):
    cell = fmt(s["ttt_mean"], "%.1f")
    if s["reached"] < s["seeds"] - s["failed"]:
        cell += " (%d of %d reached it)" % (s["reached"], s["seeds"] - s["failed"])
    return cell


def condition_table(runs, cond, reduced=False):
    """reduced: the run has reduced-precision back-ends; adds the wire bytes per entry."""
    lines = ["| back-end | time to target (s) | iterations to target | iteration P50 (ms) "
             "| P99/P50 | machine CPU (s/step) | entries lost | replicas identical |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    if reduced:
        lines[0] += " wire bytes per entry (≤) |"
        lines[1] += "---:|"
    for label in ordered(runs[cond]):
        s = stats_of(runs, cond, label)
        if s["identical"] is None:
            same = "–"
        elif s["identical"]:
            same = "yes"
        else:
            same = "no (checksum spread %.3g)" % s["spread"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            backend_cell(label, s), ttt_cell(s), fmt(s["iters_to_target"], "%.0f"),
            fmt(s["p50"], "%.0f"), fmt(s["ratio"], "%.2f"), fmt(s["machine"], "%.3f"),
            lost_pct(s["lost"]), same))
        if reduced:
            lines[-1] += " %s |" % fmt(s["wire"], "%.2f")
    return lines


def has_reduced(runs):
    return S.has_reduced(runs)


def ratios_table(runs):
    """Every measured back-end but native and Gloo against them, and the codec rows against
    gloo-fp16 as well: time and machine CPU, this back-end's divided by the other's."""
    peers = ["native", "gloo", "gloo-fp16"]
    lines = ["| condition | back-end | time / native | time / Gloo | time / Gloo fp16 "
             "| CPU / native | CPU / Gloo | CPU / Gloo fp16 |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for cond in CONDITIONS + sorted(set(runs) - set(CONDITIONS)):
        if cond not in runs:
            continue
        base = {p: stats_of(runs, cond, p) for p in peers}
        for label in ordered(runs[cond]):
            if label in ("native", "gloo") or label.endswith("-cotenant"):
                continue
            s = stats_of(runs, cond, label)
            cells = []
            for key in ("ttt_mean", "machine"):
                for p in peers:
                    if base[p] is None or p == label or (p == "gloo-fp16" and label not in S.CODECS):
                        cells.append("–")
                    else:
                        cells.append(fmt(ratio(s[key], base[p][key]), "%.2f"))
            lines.append("| %s | %s | %s |" % (SHORT.get(cond, cond), label, " | ".join(cells)))
    return lines


def summary_rows(runs):
    """Per condition: bounded's time and CPU, the others', and bounded's ratios to them."""
    rows = []
    for cond in CONDITIONS:
        row = {"cond": cond, "present": cond in runs}
        if row["present"]:
            for label in ["bounded"] + [b for b, _ in OTHERS]:
                s = stats_of(runs, cond, label)
                row[label] = (s["ttt_mean"], s["machine"]) if s else (None, None)
        rows.append(row)
    return rows


def summary_table(rows):
    lines = ["| condition | bounded / native time | bounded / Gloo time | bounded / native CPU "
             "| bounded / Gloo CPU |",
             "|---|---:|---:|---:|---:|"]
    for row in rows:
        if not row["present"]:
            lines.append("| %s | not in this run | not in this run | not in this run "
                         "| not in this run |" % SHORT[row["cond"]])
            continue
        b = row["bounded"]
        # time against native, against Gloo, then CPU against native, against Gloo
        cells = [fmt(ratio(b[i], row[o][i]), "%.2f") for i in (0, 1) for o, _ in OTHERS]
        lines.append("| %s | %s |" % (SHORT[row["cond"]], " | ".join(cells)))
    return lines


def readme_block(runs, setup, command, rows):
    model = first_run(runs)
    lines = [
        "<!-- generated by scripts/results-page.py from docs/results/page/; do not edit by hand -->",
        "Data-parallel training to %.2f test accuracy, %.1f M parameters on %d ranks, emulated "
        "cloud of %d hosts at 1 Gbit/s on one machine (%s, %d cores). Run %s at `%s`:"
        % (model["target_acc"], model["params"] / 1e6, model["world"], model["world"],
           setup["host"], setup["cores"], command["date"], command["commit"]),
        "`%s`. Time ratio: bounded's time divided by the other's; below 1 is faster (CPU ratio "
        "likewise: below 1 is less CPU). Every table and plot: [docs/results.md](docs/results.md)."
        % command["command"],
        "",
        "| condition | time to target, s: bounded / native / Gloo | time ratio: vs native / "
        "vs Gloo | machine CPU, s/step: bounded / native / Gloo | CPU ratio: vs native / vs Gloo |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        if not row["present"]:
            lines.append("| %s | not in this run | | | |" % SHORT[row["cond"]])
            continue
        # A run with the int8 codec gets a second line per condition, read the same way.
        codec = stats_of(runs, row["cond"], "bounded-int8")
        subjects = [(SHORT[row["cond"]], row["bounded"])]
        if codec:
            subjects.append((SHORT[row["cond"]] + ", int8 codec", (codec["ttt_mean"], codec["machine"])))
        for name, b in subjects:
            times = " / ".join(fmt(x[0], "%.1f") for x in (b, row["native"], row["gloo"]))
            cpus = " / ".join(fmt(x[1], "%.3f") for x in (b, row["native"], row["gloo"]))
            tr = " / ".join(fmt(ratio(b[0], row[o][0]), "%.2f") for o, _ in OTHERS)
            cr = " / ".join(fmt(ratio(b[1], row[o][1]), "%.2f") for o, _ in OTHERS)
            lines.append("| %s | %s | %s | %s | %s |" % (name, times, tr, cpus, cr))
    return "\n".join(lines) + "\n"


def first_run(runs):
    for cond in CONDITIONS + sorted(runs):
        for label in ordered(runs.get(cond, {})):
            for r in runs[cond][label]:
                if not r.get("failed"):
                    return r
    raise PageError("no successful run in results.txt")


# --- plots ---------------------------------------------------------------------------------

def svg_open(w, h, title):
    return ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">' % (w, h, w, h),
            '<title>%s</title>' % escape(title),
            '<rect width="%d" height="%d" fill="white"/>' % (w, h),
            '<text x="%d" y="20" text-anchor="middle" font-size="14">%s</text>'
            % (w // 2, escape(title))]


def text(x, y, s, anchor="middle", extra=""):
    return '<text x="%.1f" y="%.1f" text-anchor="%s"%s>%s</text>' % (x, y, anchor, extra, escape(s))


def legend(x, y, labels, dashed=()):
    out = []
    for i, label in enumerate(labels):
        yy = y + 16 * i
        dash = ' stroke-dasharray="5,3"' if label in dashed else ""
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"%s/>'
                   % (x, yy - 4, x + 18, yy - 4, color(label), dash))
        out.append(text(x + 24, yy, label, "start"))
    return out


def color(label):
    return COLORS.get(label.replace("-cotenant", ""), "#555555")


def nice_step(top, ticks=5):
    """A 1-2-2.5-5 step that divides 0..top into about `ticks` intervals."""
    import math
    raw = top / ticks
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def bar_chart(title, ylabel, runs, key, spec, labels):
    """Grouped bars: one group per condition (every condition, a missing one said so), one bar
    per back-end; key picks the value from stats_of."""
    w, h = 760, 340
    left, right, top, bottom = 70, 130, 40, 50
    pw, ph = w - left - right, h - top - bottom
    values = {(c, b): (stats_of(runs, c, b) or {}).get(key) for c in CONDITIONS for b in labels}
    vmax = max([v for v in values.values() if v is not None] + [0])
    step = nice_step(vmax) if vmax > 0 else 1
    ymax = step * (int(vmax / step) + 1)
    out = svg_open(w, h, title)
    y = lambda v: top + ph - ph * v / ymax
    k = 0
    while k * step <= ymax + 1e-9:
        v = k * step
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>'
                   % (left, y(v), left + pw, y(v)))
        out.append(text(left - 6, y(v) + 4, ("%g" % round(v, 6)), "end"))
        k += 1
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top + ph, left + pw, top + ph))
    out.append(text(16, top + ph / 2, ylabel, "middle", ' transform="rotate(-90 16 %.1f)"' % (top + ph / 2)))
    gw = pw / len(CONDITIONS)
    bw = gw * 0.8 / max(len(labels), 1)
    for i, c in enumerate(CONDITIONS):
        gx = left + gw * i
        out.append(text(gx + gw / 2, top + ph + 18, SHORT[c]))
        if c not in runs:
            out.append(text(gx + gw / 2, top + ph / 2, "not in this run", "middle", ' fill="#888888"'))
            continue
        for j, b in enumerate(labels):
            x = gx + gw * 0.1 + bw * j
            v = values[(c, b)]
            if v is None:
                out.append(text(x + bw / 2, top + ph - 4, "–"))
                continue
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x + 1, y(v), bw - 2, top + ph - y(v), color(b)))
            out.append(text(x + bw / 2, y(v) - 4, spec % v, "middle", ' font-size="10"'))
    out += legend(left + pw + 16, top + 14, labels)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def log_ticks(lo, hi):
    """1-2-5 values: the axis's ends (one at or below lo, one at or above hi) and those between."""
    vals = [m * 10 ** e for e in range(-1, 7) for m in (1, 2, 5)]
    a = max(v for v in vals if v <= lo)
    b = min(v for v in vals if v >= hi)
    return [v for v in vals if a <= v <= b]


def cdf_chart(runs, cond):
    import math
    w, h = 760, 360
    left, right, top, bottom = 60, 190, 40, 50
    pw, ph = w - left - right, h - top - bottom
    labels = ordered(runs[cond])
    series = {b: sorted(t for r in runs[cond][b] if not r.get("failed") for t in S.iter_times(r))
              for b in labels}
    series = {b: v for b, v in series.items() if v}
    title = "Iteration times (CDF): %s" % S.CONDITIONS.get(cond, cond)
    out = svg_open(w, h, title)
    if not series:
        out.append(text(w / 2, h / 2, "no iterations recorded"))
        return "\n".join(out + ["</svg>"]) + "\n"
    ticks = log_ticks(min(v[0] for v in series.values()), max(v[-1] for v in series.values()))
    l0, l1 = math.log10(ticks[0]), math.log10(ticks[-1])
    x = lambda v: left + pw * (math.log10(v) - l0) / (l1 - l0)
    y = lambda f: top + ph - ph * f
    for t in ticks:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>' % (x(t), top, x(t), top + ph))
        out.append(text(x(t), top + ph + 16, "%g" % t))
    for f in (0, 0.25, 0.5, 0.75, 1):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>' % (left, y(f), left + pw, y(f)))
        out.append(text(left - 6, y(f) + 4, "%g" % f, "end"))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (left, top, pw, ph))
    out.append(text(left + pw / 2, h - 10, "iteration time (ms, log scale), each run's first 5 left out"))
    out.append(text(14, top + ph / 2, "fraction of iterations", "middle",
                    ' transform="rotate(-90 14 %.1f)"' % (top + ph / 2)))
    dashed = [b for b in series if b.endswith("-cotenant")]
    for b, v in series.items():
        n = len(v)
        pts = ["%.1f,%.1f" % (x(v[0]), y(0))]
        for i, t in enumerate(v):
            pts.append("%.1f,%.1f" % (x(t), y(i / n)))
            pts.append("%.1f,%.1f" % (x(t), y((i + 1) / n)))
        dash = ' stroke-dasharray="5,3"' if b in dashed else ""
        out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                   % (color(b), dash, " ".join(pts)))
    out += legend(left + pw + 16, top + 14, list(series), dashed)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plots(runs):
    """{file name: SVG text}."""
    labels = sorted({b for c in runs for b in runs[c] if not b.endswith("-cotenant")},
                    key=lambda b: (S.BACKENDS.index(b) if b in S.BACKENDS else len(S.BACKENDS), b))
    out = {
        "time-to-target.svg": bar_chart("Time to target accuracy (training time, mean over seeds)",
                                        "seconds", runs, "ttt_mean", "%.1f", labels),
        "cpu-per-step.svg": bar_chart("Machine CPU per training step (every core, busy time)",
                                      "CPU seconds per step", runs, "machine", "%.2f", labels),
    }
    for cond in CONDITIONS:
        if cond in runs:
            out["iter-cdf-%s.svg" % cond] = cdf_chart(runs, cond)
    return out


# --- the page ------------------------------------------------------------------------------

def page(runs, setup, command, rows, svgs, page_dir):
    model = first_run(runs)
    rel = "results/page"
    seeds = sorted({r["seed"] for c in runs for b in runs[c] for r in runs[c][b] if not b.endswith("-cotenant")})
    md = [
        "# Results",
        "",
        "<!-- generated by scripts/results-page.py from docs/results/page/; do not edit by hand: "
        "%s regenerates it, ctest -L docs checks it -->" % REGENERATE,
        "",
        "Data-parallel training, time to accuracy, for bounded mode (`liboptireduce.so` "
        "preloaded, `OPTIREDUCE_MODE=bounded`) against native Open MPI and Gloo, from the last "
        "full run of `scripts/train/bench-training.sh`. Everything below is generated from that "
        "run's raw files in [%s/](%s/). Earlier measurements and their analysis are "
        "dated notes, listed in [notes/](notes/README.md)." % (rel, rel),
        "",
        "**Time ratio: bounded's time divided by the other's; below 1 is faster.** CPU ratios "
        "are read the same way: bounded's CPU per step divided by the other's, below 1 is less "
        "CPU. Every ratio on this page is one of these.",
        "",
    ]
    reduced = has_reduced(runs)
    if reduced:
        md += [
            "This run also has reduced-precision back-ends: `bounded-bf16` and `bounded-int8` "
            "(bounded mode with `OPTIREDUCE_CODEC=bf16` / `int8`: the gradients travel as "
            "bfloat16, or as int8 levels with a scale per datagram) and `gloo-fp16` (Gloo with "
            "each gradient bucket cast to float16 around its all_reduce, as PyTorch's "
            "`fp16_compress_hook` does), the codecs' fair peer. Their ratios, in the second "
            "table of the summary, are read the same way: the row's back-end divided by the "
            "other.",
            "",
        ]
    md += [
        "## What was run",
        "",
        "- **Date**: %s (setup.txt: started %s), at commit `%s`."
        % (command["date"], setup["started"], command["commit"]),
        "- **Command**: `%s`" % command["command"],
        "- **Machine**: `%s`, %d cores; the emulated cloud (`scripts/cloud/`) puts %d hosts, one "
        "rank each, on it, with 1 Gbit/s links, so the ranks, the network's kernel work and the "
        "shapers share those cores." % (setup["host"], setup["cores"], model["world"]),
        "- **Job**: %s. Seeds: %s." % (S.hyper_parameters(runs), ", ".join(map(str, seeds))),
        "- **Conditions**:",
    ]
    for cond in CONDITIONS:
        md.append("  - `%s`: %s%s" % (cond, S.CONDITIONS[cond],
                                      "" if cond in runs else " — **not in this run**"))
    for cond in sorted(set(runs) - set(CONDITIONS)):
        md.append("  - `%s`" % cond)
    schedules = sorted(glob.glob(os.path.join(page_dir, "tail", "schedule-s*.txt")))
    if "tail" in runs:
        md.append("- **The seeded tail**: one schedule of link cuts per seed, drawn from the seed "
                  "alone (`scripts/train/tail.py draw`) before any run, and followed on each "
                  "run's training clock, so every back-end of a seed meets the same cuts at the "
                  "same training time (%s; its parameters are setup.txt's tail line below)." % (
                      ", ".join("[tail/%s](%s/tail/%s)" % (os.path.basename(p), rel, os.path.basename(p))
                                for p in schedules) or "schedule files not kept"))
    md += ["", "setup.txt, as the script wrote it:", "", "```"] + setup["lines"] + ["```", ""]
    md += [
        "**Columns.** Time to target: training time (evaluations and drift measurements left "
        "out) until the first evaluation at or above the target, mean over the seeds that reached "
        "it. Iteration P50 and P99/P50: over every iteration of every seed, less each run's "
        "first 5. Machine CPU: the whole machine's busy CPU time (/proc/stat user, nice, system, "
        "irq and softirq, every core) over the training time, divided by the steps: the ranks, "
        "their threads and the emulated network's kernel work together (RESULT field "
        "`machine_cpu_s_per_step`). Entries lost: the share of gradient entries the library "
        "gave up on (– for back-ends on a reliable transport). Replicas identical: the parameter "
        "checksums of all ranks equal at the end (`checksum_spread` 0).",
        "",
    ]
    if reduced:
        md += [
            "Wire bytes per entry (≤): the bytes each rank sent per gradient entry it reduced, "
            "from the library's counters in the run's `.stats` (`datagrams_sent` × MTU / "
            "(`engine_bytes` / 4)): an upper bound, within about 2% (every datagram but each "
            "stream's last is filled to the MTU less the headers, down to whole 16-float lines). "
            "– for back-ends the library did not carry over datagrams (native, Gloo, exact).",
            "",
        ]
    md += [
        "## Summary",
        "",
    ] + summary_table(rows) + [
        "",
    ]
    if reduced:
        md += ["Every back-end against native and Gloo, and the codec back-ends against "
               "gloo-fp16 as well (– where the other is not in the run):", ""] + ratios_table(runs) + [""]
    md += [
        "![time to target](img/results/time-to-target.svg)",
        "",
        "![machine CPU per step](img/results/cpu-per-step.svg)",
        "",
    ]
    for cond in CONDITIONS:
        md += ["## %s" % S.CONDITIONS[cond][0].upper() + S.CONDITIONS[cond][1:], ""]
        if cond not in runs:
            md += ["Not in this run.", ""]
            continue
        md += condition_table(runs, cond, reduced) + [""]
        if cond == "tail":
            md += ["The iterations that ended during a cut (or within 0.5 s after it), against "
                   "the rest, every seed pooled:", ""] + S.cut_table(runs[cond]) + [""]
            check = os.path.join(page_dir, "tail", "check.txt")
            if os.path.exists(check):
                with open(check) as f:
                    md += ["tail/check.txt:", "", "```"] + f.read().rstrip("\n").split("\n") + ["```", ""]
        if cond == "cotenant":
            md += ["Each job's allreduce times against the same back-end alone on the clean "
                   "network:", ""] + S.cotenant_table(runs[cond], runs.get("clean", {})) + [""]
        name = "iter-cdf-%s.svg" % cond
        md += ["![iteration times, %s](img/results/%s)" % (SHORT[cond], name), ""]
    md += [
        "## How to regenerate",
        "",
        "After a new full run (`sudo scripts/train/bench-training.sh OUT build --seeds N "
        "--conditions clean,loss,tail,cotenant --backends native,bounded,gloo`):",
        "",
        "```sh",
        "/usr/bin/python3 scripts/results-page.py --import OUT --command 'DATE COMMIT COMMAND'",
        "```",
        "",
        "copies the files this page reads into `docs/results/page/` (results.txt, setup.txt, the "
        "per-run CSVs and stats, the tail's schedules and events; no logs), writes "
        "`command.txt`, and regenerates this page, its plots in `docs/img/results/` and "
        "README.md's results table. On the committed files, `%s` alone rewrites the same bytes, "
        "and `%s --check` (the test `docs.results_page`, `ctest -L docs`) fails if any of them "
        "was edited by hand." % (REGENERATE, REGENERATE),
        "",
    ]
    return "\n".join(md)


def generate(page_dir):
    """{relative path: text} of the page and its plots, and README.md's block."""
    runs = load_runs(page_dir)
    setup = read_setup(page_dir)
    command = read_command(page_dir, setup)
    rows = summary_rows(runs)
    svgs = plots(runs)
    files = {MD: page(runs, setup, command, rows, svgs, page_dir)}
    for name, svg in svgs.items():
        files["%s/%s" % (IMG, name)] = svg
    return files, readme_block(runs, setup, command, rows)


# --- README block ----------------------------------------------------------------------------

def split_readme(text, path):
    """(before, block, after) around the markers; None when they are missing."""
    lines = text.split("\n")
    b = [i for i, l in enumerate(lines) if l.strip() == BEGIN]
    e = [i for i, l in enumerate(lines) if l.strip() == END]
    if not b and not e:
        return None
    if len(b) != 1 or len(e) != 1 or e[0] < b[0]:
        raise PageError("%s: expected one %s line followed by one %s line" % (path, BEGIN, END))
    before = "\n".join(lines[:b[0] + 1]) + "\n"
    block = "\n".join(lines[b[0] + 1:e[0]]) + ("\n" if e[0] > b[0] + 1 else "")
    after = "\n".join(lines[e[0]:])
    return before, block, after


def no_markers(path):
    return ("%s has no results-table markers: put the lines\n  %s\n  %s\nwhere the table goes "
            "(or pass --readme-optional to leave README.md alone)" % (path, BEGIN, END))


# --- modes ---------------------------------------------------------------------------------

def owned_svgs(root):
    return sorted("%s/%s" % (IMG, os.path.basename(p))
                  for p in glob.glob(os.path.join(root, IMG, "*.svg")))


def write(args):
    files, block = generate(os.path.join(ROOT, PAGE))
    readme = read(args.readme)
    parts = split_readme(readme, args.readme) if readme is not None else None
    if parts is None and not args.readme_optional:
        raise PageError(no_markers(args.readme))  # before anything is written
    os.makedirs(os.path.join(ROOT, IMG), exist_ok=True)
    for rel in owned_svgs(ROOT):
        if rel not in files:
            os.remove(os.path.join(ROOT, rel))
            print("removed %s" % rel)
    for rel, content in files.items():
        with open(os.path.join(ROOT, rel), "w") as f:
            f.write(content)
        print("wrote %s" % rel)
    if parts is None:
        print("%s left alone: no results-table markers" % args.readme)
    else:
        with open(args.readme, "w") as f:
            f.write(parts[0] + block + parts[2])
        print("wrote the results table of %s" % args.readme)


def read(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def check(args):
    with tempfile.TemporaryDirectory() as tmp:
        files, block = generate(os.path.join(ROOT, PAGE))
        for rel, content in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(content)
        problems = []
        for rel in sorted(files):
            with open(os.path.join(tmp, rel), "rb") as f:
                want = f.read()
            have = read_bytes(os.path.join(ROOT, rel))
            if have is None:
                problems.append("%s is missing" % rel)
            elif have != want:
                problems.append("%s differs from what the raw files give%s" % (rel, first_diff(have, want)))
        for rel in owned_svgs(ROOT):
            if rel not in files:
                problems.append("%s is not generated from the raw files (left over?)" % rel)
    readme = read(args.readme)
    parts = split_readme(readme, args.readme) if readme is not None else None
    if parts is None:
        if not args.readme_optional:
            problems.append(no_markers(args.readme))
        else:
            print("note: %s has no results-table markers; its table not checked" % args.readme)
    elif parts[1] != block:
        problems.append("%s's results table differs from what the raw files give%s"
                        % (args.readme, first_diff(parts[1].encode(), block.encode())))
    if problems:
        for p in problems:
            print("FAIL %s" % p)
        print("regenerate with: %s (from docs/results/page/; edit the raw files or the script, "
              "never the output)" % REGENERATE)
        return 1
    print("PASS %s, %d plots and the README table match docs/results/page/" % (MD, len(files) - 1))
    return 0


def read_bytes(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def first_diff(have, want):
    a = have.decode(errors="replace").split("\n")
    b = want.decode(errors="replace").split("\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return ": line %d is\n    %s\n  where the raw files give\n    %s" % (i + 1, x[:200], y[:200])
    return ": line %d on, the lengths differ (%d lines against %d)" % (min(len(a), len(b)) + 1, len(a), len(b))


# What --import copies from a bench-training.sh output directory: what the page reads, and the
# library's stats summaries beside them; not the logs, the cloud counters or the clock files.
IMPORT = ["results.txt", "setup.txt", "*/*.csv", "*/*.stats", "tail/schedule-s*.txt",
          "tail/*.events", "tail/check.txt"]


def import_run(args):
    src = args.import_dir
    if not os.path.exists(os.path.join(src, "results.txt")):
        raise PageError("%s has no results.txt: not a bench-training.sh output directory" % src)
    setup = read_setup(src)
    dst = os.path.join(ROOT, PAGE)
    tmp = dst + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    for pattern in IMPORT:
        for path in sorted(glob.glob(os.path.join(src, pattern))):
            rel = os.path.relpath(path, src)
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            shutil.copyfile(path, os.path.join(tmp, rel))
    with open(os.path.join(tmp, "command.txt"), "w") as f:
        f.write(args.command.strip() + "\n")
    try:
        read_command(tmp, setup)
        load_runs(tmp)  # every RESULT has its CSV
    except PageError:
        shutil.rmtree(tmp)
        raise
    shutil.rmtree(dst, ignore_errors=True)
    os.rename(tmp, dst)
    print("copied %s into %s" % (src, PAGE))
    write(args)
    remake_mutation()


def remake_mutation():
    """test/mutations/results_page.patch against the new page: one figure of the summary table
    changed by hand, which docs.results_page must catch."""
    with open(os.path.join(ROOT, MD)) as f:
        old = f.read().split("\n")
    new = list(old)
    summary = old.index("## Summary")
    i = next(i for i in range(summary, len(old)) if re.match(r"\| .* \| \d+\.\d+ \|", old[i]))
    new[i] = re.sub(r"\| (\d)", lambda m: "| %d" % ((int(m.group(1)) + 1) % 10), old[i], count=1)
    diff = difflib.unified_diff([l + "\n" for l in old], [l + "\n" for l in new],
                                "a/" + MD, "b/" + MD, n=3)
    header = [
        "# feature: docs/results.md is generated from docs/results/page/ (scripts/results-page.py)\n",
        "# mutation: docs/results.md: a figure of the summary table edited by hand (remade by "
        "scripts/results-page.py --import)\n",
        "# tests: ^docs\\.results_page$\n",
        "# expect: FAIL docs/results.md differs\n",
        "diff --git a/%s b/%s\n" % (MD, MD),
    ]
    with open(os.path.join(ROOT, MUTATION), "w") as f:
        f.writelines(header + list(diff))
    print("wrote %s" % MUTATION)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--readme-optional", action="store_true")
    ap.add_argument("--import", dest="import_dir", metavar="OUTDIR")
    ap.add_argument("--command")
    args = ap.parse_args()
    if bool(args.import_dir) != bool(args.command):
        ap.error("--import and --command go together")
    try:
        if args.check:
            return check(args)
        if args.import_dir:
            import_run(args)
        else:
            write(args)
    except PageError as e:
        print("results-page.py: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
