#!/usr/bin/env python3
"""Fill the tables, numbers, code and plots in README.md and docs/*.md.

    python3 docs/generate.py           # rewrite the generated blocks (and plots, with matplotlib)
    python3 docs/generate.py --check   # exit 1 if any block differs from what would be written

Nobody types a measured number or copies code by hand: prose holds markers whose
bodies this script writes from docs/runs/results/*.json (one file per GPU model, written
by the tour), from docs/runs/evidence/ and from the chapter sources. docs/runs/ holds what
runs wrote (docs/runs/README.md); this script only reads it, and writes the marked blocks of
the pages and the measured plots in docs/plots/.

    <!-- results: chapter=05 -->...<!-- end results -->          a table of records
    <!-- value: chapter=06 variant=cub field=gbps --><!-- end value -->   one number
    <!-- value: device=copy_gbps --><!-- end value -->            a figure of the device (results meta)
    <!-- value: expr="a.ms_median * 1000" a.chapter=06 a.variant=cub fmt=.1f --><!-- end value -->
    <!-- plot: chapter=06 role=sweep x=extra.blocks_per_sm file=06_blocks.png --><!-- end plot -->
    <!-- device: keys=sm_count,max_threads_per_sm --><!-- end device -->   a table, one column per GPU
    <!-- code: file=chapters/03_reduce_shared/03_reduce_shared.cu names=reduce_sequential --><!-- end code -->
    <!-- code: file=chapters/00_first_program/first_program.cu whole=1 --><!-- end code -->
    <!-- quote: file=docs/runs/evidence/11_transpose_padded_sass.txt --><!-- end quote -->
    <!-- value: chapter=04 variant=dynamic-shared field=gbps as=dyn --><!-- end value -->   a figure named dyn
    <!-- word: expr="dyn < stat" words="faster|slower" --><!-- end word -->    a word the figures choose
    <!-- runs: gpus=all --><!-- end runs -->      every run behind the tables, and what changed since
    <!-- build-times: file=docs/runs/results/build-times.json --><!-- end build-times -->   the measured builds
    <!-- build-time: file=docs/runs/results/build-times.json cores=2 field=cold_s --><!-- end build-time -->
                      one figure of one measured build (a duration: 8 min 19 s)
    <!-- skipped: file=docs/runs/test-logs/nvidia-h200-emulate-t4-skipped.txt --><!-- end skipped -->   a mode's skipped steps
    <!-- class: dirs=docs/runs/labs/nvidia-h200 --><!-- end class -->   the graded classes (.ci/gpu-run class)

GPUs. Each docs/runs/results/<gpu>.json is one GPU model. Markers read the primary GPU
(PRIMARY below, else the newest file) unless they say gpu=<file name, or its
start: gpu=nvidia-h100 finds nvidia-h100-80gb-hbm3.json>. A results
table shows the primary GPU's table and every other GPU's table in a collapsed
<details> block (gpu=<name> shows that one only); per_gpu=gbps,pct_of_copy lays
the GPUs side by side instead, with those columns repeated per GPU (with best=1, a GPU's
cells read "·" where it measured the row but another was its fastest). A cell without its
figure reads "—", no such figure (docs/measuring.md); a record without a note (the
default input) has an empty input cell.

Filters: chapter or chapters (05, 02-06, 07,08), role, problem, variant, note, n
(comma lists), extra.<key>=<value> (extra.<key>= with nothing keeps the records
without that key, as note= keeps those without a note); best=1 keeps the fastest
record per chapter, problem and input. Tables: cols=chapter,variant,note,n,ms_median,
ms_min,us_median,gbps,pct_of_copy,vs_prev,vs_cpu,vs_vendor,ok,extra.<key>; or
pivot=variant rows=n value=us_median (one row per n, one column per variant;
value=variant,gbps gives each column a cell per field). A record without vs_vendor
gets it from the library's record (a variant its chapter reports with role vendor)
of the same role, problem, input, n and extra.p, where there is one. Values:
field=gbps|ms_median|...|extra.<key>; agg=min|max takes that over every matching
record instead of requiring exactly one.
Expressions (expr=): records a., b., c. chosen by prefixed filters, device
figures by name (copy_gbps, sm_count, ...), evidence figures by
ev(file, metric, name=, section=, index=); fmt= is a Python format spec.
Plots: kind=line (x=, y=gbps, series=variant, logx=1, logy=1, gpus=all) or
kind=bar; lines=copy,vendor draws the measured copy ceiling and the library;
hlines=<variant> draws that record (any role) as a horizontal line, from the plot's chapter,
problem and input unless hlines.<filter>= says otherwise (hlines=peer-copy hlines.problem=p2p
hlines.note=one-way: a ceiling measured as another problem); ylines=95:label a
reference level; norm=first divides each line by its value at the smallest x (a speedup),
ideal=1 draws y = x beside it. Each variant keeps one colour and marker in every plot of its chapter, and
each GPU one line style; the legend names each series and each GPU once. A series that is not a
variant (series=note) takes the colours in the order of the plot. An x that is text (x=variant)
puts the records in the order of the results file, one tick each. A bar's label leaves out the
chapter and the input where every bar shares them. logx=1 labels
x as 2^k for n and as plain numbers otherwise; logx=2 as 2^k always; logy=1 labels 1, 2 and 5 of each
decade where the axis spans fewer than four. legend=right
puts the legend beside the axes, off the data, for plots with many lines. kind=timeline draws chapter 12's
end-to-end rows to scale. kind=roofline gpu=<name> draws one GPU's roofline: each chapter with
floating-point work (ROOFLINE_PROBLEMS) at its arithmetic intensity (flops / bytes) and GFLOP/s,
under the copy bandwidth times x and the compute ceilings of the same results file
(chapters=... narrows the chapters drawn).

Comparatives. A word that compares measured figures (faster, inside a predicted range,
met, largest, the prediction held) is a word marker: words="a|b|c" and an expr whose value
picks one (False/True pick the first/second; band(x, lo, hi) gives 0/1/2 for below/inside/
above; near(x, y, tol) the same around y; argmax(...)/argmin(...) an index; missing="..."
the text while its data is missing, for a value too). Its expr sees
the figures that value markers of the same file named with as= (in any order) and records
a.-f. as value expressions do. `--lint` runs docs/lint_docs.py over the rendered pages: it
fails on a hand-written comparative or measured-looking number in a sentence that holds a
generated figure, a prediction judged on one GPU's figures where the other GPU's verdict
differs, an argmax word that names one cause where the runner-up is about as large, and a
"—" explained as anything but "no such figure" (docs/lint_docs.py defines each kind);
`--lint-selftest` plants a wrong and a right example of each kind and requires the lint to
catch the one and pass the other.

Provenance. Each chapter's rows come from the run that measured that chapter last
(meta.runs[chapter]). "% of copy" divides by that run's copy ceiling (value markers:
device=copy_gbps run=06 gives it, an expression a.copy_gbps or run_copy('06')), and a
table's or plot's source line names every run its rows came from, with a note from
docs/run_notes.json (written by hand) where a run is on an older commit than the newest run.
`--runs` lists the runs and what needs a note.

Missing data never crashes the docs: a value whose record (or GPU file, or
evidence file) does not exist yet renders as "—", a table or plot as "not
measured yet", and every such marker is listed in a warning. A code marker whose
file or function does not exist is an error: the docs-tables-current test fails
(except in a student copy of one track, which leaves out the other tracks' files).

Plots. docs/plots/ is generated, not run output: this script draws the measured plots from
docs/runs/results (where matplotlib is installed), and docs/diagrams.py,
docs/diagrams_ring.py and docs/diagrams_scan.py draw the explanatory diagrams from code. Every file there must be
named by a plot marker or by a diagram script; a run over all the docs fails on any other.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import shlex
import statistics
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)
RUNS = os.path.join(DOCS, "runs")  # what runs wrote: nobody edits it by hand (docs/runs/README.md)
RESULTS = os.path.join(RUNS, "results")
EVIDENCE = os.path.join(RUNS, "evidence")  # what docs/evidence/*.sh and other captured runs wrote
PLOTS = os.path.join(DOCS, "plots")
RUN_NOTES = os.path.join(DOCS, "run_notes.json")  # written by hand: what changed in the code since a run
PRIMARY = "nvidia-h200"  # the GPU the prose is written against; markers may name another with gpu=
KINDS = "results|value|plot|device|code|quote|word|runs|build-times|build-time|skipped|stability|class"
MARKER = re.compile(r"<!-- (" + KINDS + r"): (.*?) -->(.*?)<!-- end \1 -->", re.S)
DEFAULT_ROLES = ("ceiling", "cpu", "vendor", "step", "anti-example")
ALL_ROLES = DEFAULT_ROLES + ("sweep", "lesson")
MISSING = "—"  # no such figure: not measured (yet), or a figure the row has none of (docs/measuring.md)
NOT_FASTEST = "·"  # a best=1 table laid out per GPU: this GPU measured the row, and another was its fastest
HEADERS = {"chapter": "ch", "variant": "variant", "role": "role", "note": "input", "n": "n",
           "problem": "problem", "bytes": "MB moved", "ms_median": "median ms", "ms_min": "min ms",
           "us_median": "median µs", "gbps": "GB/s", "pct_of_copy": "% of copy", "vs_prev": "vs prev",
           "vs_cpu": "vs CPU", "vs_vendor": "vs library", "vs_first": "vs first step", "ok": "check", "extra.gvalues_s": "G values/s",
           "tflops": "TFLOP/s", "clock_mhz": "SM MHz", "extra.sm_clock_mhz": "SM MHz at launch",
           "extra.power_w": "W"}
# Rows of the device table: label and how to format. Keys are looked up in the
# results meta (or its "device" record); the last ones are derived.
DEVICE_ROWS = {
    "gpu": ("GPU", str),
    "cc": ("compute capability", str),
    "sm_count": ("SMs", "{:,}"),
    "sm_clock_mhz": ("SM clock (MHz)", "{:,.0f}"),
    "warp_size": ("threads per warp", "{:,}"),
    "max_threads_per_block": ("threads per block, at most", "{:,}"),
    "max_threads_per_sm": ("threads per SM, at most", "{:,}"),
    "max_warps_per_sm": ("warps per SM, at most", "{:,.0f}"),
    "max_blocks_per_sm": ("blocks per SM, at most", "{:,}"),
    "regs_per_sm": ("32-bit registers per SM", "{:,}"),
    "regs_per_block": ("32-bit registers per block, at most", "{:,}"),
    "regs_per_thread_full": ("registers per thread at full occupancy", "{:,.0f}"),
    "smem_per_sm_kib": ("shared memory per SM (KiB)", "{:,.0f}"),
    "smem_per_block_kib": ("shared memory per block, default limit (KiB)", "{:,.0f}"),
    "smem_per_block_optin_kib": ("shared memory per block, opt-in limit (KiB)", "{:,.0f}"),
    "l2_mb": ("L2 cache (MB)", "{:,.1f}"),
    "memory_gb": ("device memory (GB)", "{:,.0f}"),
    "mem_bus_bits": ("memory bus width (bits)", "{:,}"),
    "mem_clock_mhz": ("memory clock (MHz)", "{:,.0f}"),
    "theoretical_gbps": ("theoretical DRAM bandwidth (GB/s)", "{:,.0f}"),
    "copy_gbps": ("measured device-to-device copy (GB/s)", "{:,.0f}"),
    "copy_gbps_per_sm": ("measured copy per SM (GB/s)", "{:,.1f}"),
    "inflight_kib_per_sm": ("bytes in flight per SM for the copy rate (KiB, at latency_ns)", "{:,.1f}"),
    "runtime_cuda": ("CUDA runtime", str),
    "driver_cuda": ("CUDA driver", str),
    "host_cpu": ("host CPU", str),
    "host_cores": ("host CPU cores (chapter 01)", "{:,}"),
}


class Failure(Exception):
    """An authoring error: the docs test must fail."""


class Missing(Exception):
    """Data that a later GPU run will provide: render a placeholder and warn."""


WARNINGS = []


def warn(doc, text):
    WARNINGS.append(f"{os.path.relpath(doc, ROOT)}: {text}")


# --- results files ---------------------------------------------------------------------

def load_results():
    files = {}
    for path in sorted(glob.glob(os.path.join(RESULTS, "*.json"))):
        if path == RUN_NOTES:
            continue
        with open(path) as f:
            data = json.load(f)
        if "records" in data:  # a GPU's results (build-times.json, for one, is not)
            files[os.path.splitext(os.path.basename(path))[0]] = data
    return files


def gpu_order(results):
    """The primary GPU first, then the others by name."""
    names = sorted(results)
    primary = PRIMARY if PRIMARY in results else (
        max(names, key=lambda k: results[k]["meta"].get("date", "")) if names else None)
    return ([primary] if primary else []) + [n for n in names if n != primary]


def resolve_gpu(name, results):
    """A results file by name, or by the start of its name: gpu=nvidia-h100 finds
    nvidia-h100-80gb-hbm3.json. None when there is no such file (yet)."""
    if name in results:
        return name
    matches = [k for k in results if k.startswith(name)]
    if len(matches) > 1:
        raise Failure(f"gpu={name} matches {len(matches)} results files: {matches}")
    return matches[0] if matches else None


def short_gpu(data):
    name = data["meta"].get("gpu", "?")
    m = re.search(r"\b([A-Z]+\d+[A-Za-z]*)\b", name.replace("NVIDIA", ""))
    return m.group(1) if m else name


def meta_get(data, key):
    """A device figure: from the meta, its device record, or derived from them."""
    m = data["meta"]
    dev = m.get("device", {}) if isinstance(m.get("device"), dict) else {}

    def raw(k):
        if k in m and m[k] is not None:
            return m[k]
        if k in dev and dev[k] is not None:
            return dev[k]
        raise Missing(f"device figure {k!r} is not in the results meta of {m.get('gpu', '?')}")

    derived = {
        "max_warps_per_sm": lambda: raw("max_threads_per_sm") / raw("warp_size"),
        "regs_per_thread_full": lambda: raw("regs_per_sm") / raw("max_threads_per_sm"),
        "smem_per_sm_kib": lambda: raw("smem_per_sm_bytes") / 1024,
        "smem_per_block_kib": lambda: raw("smem_per_block_bytes") / 1024,
        "smem_per_block_optin_kib": lambda: raw("smem_per_block_optin_bytes") / 1024,
        "copy_gbps_per_sm": lambda: raw("copy_gbps") / raw("sm_count"),
    }
    aliases = {"name": "gpu", "runtime": "runtime_cuda", "driver": "driver_cuda"}
    key = aliases.get(key, key)
    if key in derived:
        return derived[key]()
    return raw(key)


def inflight_kib(data, latency_ns, chapter=None):
    """Little's law: the bytes each SM must keep in flight to sustain the copy rate (of the run
    that measured `chapter`, where given)."""
    copy = run_copy(data, chapter) if chapter else meta_get(data, "copy_gbps")
    return copy * 1e9 * latency_ns * 1e-9 / meta_get(data, "sm_count") / 1024


# --- selecting records -----------------------------------------------------------------

def parse_attrs(text):
    attrs = {}
    for token in shlex.split(text):
        if "=" not in token:
            raise Failure(f"marker attribute without '=': {token!r}")
        k, v = token.split("=", 1)
        attrs[k] = v
    return attrs


def chapter_set(spec):
    out = set()
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out |= {f"{c:02d}" for c in range(int(a), int(b) + 1)}
        else:
            out.add(part.zfill(2))
    return out


# The record filters of select(), by which an expression's a., b., ... records are chosen.
RECORD_FILTERS = ("chapter", "chapters", "role", "problem", "variant", "note", "n", "best")


def select(records, attrs, default_roles=DEFAULT_ROLES):
    chapters = chapter_set(attrs.get("chapter", attrs.get("chapters", ""))) if (
        "chapter" in attrs or "chapters" in attrs) else None
    roles = attrs["role"].split(",") if "role" in attrs else default_roles
    extras = {k[6:]: v.split(",") for k, v in attrs.items() if k.startswith("extra.")}
    out = []
    for r in records:
        if chapters is not None and r["chapter"] not in chapters:
            continue
        if r["role"] not in roles:
            continue
        if "problem" in attrs and r["problem"] not in attrs["problem"].split(","):
            continue
        if "variant" in attrs and r["variant"] not in attrs["variant"].split(","):
            continue
        if "note" in attrs and r.get("note", "") not in attrs["note"].split(","):
            continue
        if "n" in attrs and str(r["n"]) not in attrs["n"].split(","):
            continue
        if any(not same_value(r.get("extra", {}).get(k), v) for k, v in extras.items()):
            continue
        out.append(r)
    if attrs.get("best") == "1":
        best = {}
        for r in out:
            k = (r["chapter"], r["problem"], r.get("note", ""))
            if k not in best or (r.get("gbps") or 0) > (best[k].get("gbps") or 0):
                best[k] = r
        out = [r for r in out if best.get((r["chapter"], r["problem"], r.get("note", ""))) is r]
    return out


def same_value(have, wanted):
    """extra.<key>=1,2,4 matches 1, 1.0 and "1"; extra.<key>= matches a missing key."""
    for w in wanted:
        if w == "" and have is None:
            return True
        try:
            if have is not None and float(have) == float(w):
                return True
        except (TypeError, ValueError):
            if str(have) == w:
                return True
    return False


def cpu_sizes(data):
    """problem -> the sizes its CPU baselines ran at."""
    sizes = {}
    for r in data["records"]:
        if r["role"] == "cpu":
            sizes.setdefault(r["problem"], set()).add(r["n"])
    return sizes


def library_record(record, data):
    """The library's record to compare `record` with: a variant that the chapter
    reports with role vendor, measured in the same role, problem, input, size and
    fraction p (a sweep's parameter)."""
    libs = {r["variant"] for r in data["records"] if r["chapter"] == record["chapter"] and r["role"] == "vendor"}
    for r in data["records"]:
        if (r["variant"] in libs and r["chapter"] == record["chapter"] and r["role"] == record["role"]
                and r["problem"] == record["problem"] and r.get("note", "") == record.get("note", "")
                and r["n"] == record["n"] and r.get("extra", {}).get("p") == record.get("extra", {}).get("p")):
            return r
    return None


def get(record, field, data=None):
    if field == "vs_vendor" and record.get("vs_vendor") is None and data is not None:
        lib = library_record(record, data)
        if lib is None or lib is record or not lib.get("gbps") or record.get("gbps") is None:
            return None
        return record["gbps"] / lib["gbps"]
    if field == "pct_of_copy" and data is not None:
        # against the copy ceiling of the run that measured the row (its source line names it)
        g = record.get("gbps")
        return None if g is None or record.get("pct_of_copy") is None else 100 * g / run_copy(data, record["chapter"])
    if field.startswith("extra."):
        return record.get("extra", {}).get(field[6:])
    if field == "clock_mhz":  # as the program's table prints it (common/report.cpp's clock_cell)
        extra = record.get("extra", {})
        return extra.get("power_clock_mhz", extra.get("sm_clock_mhz"))
    if field == "us_median":
        v = record.get("ms_median")
        return None if v is None else v * 1000
    if field == "vs_cpu" and data is not None:
        # A throughput ratio only means something at the same size: a launch-bound
        # 2^20 row divided by a 2^28 CPU rate does not.
        sizes = cpu_sizes(data).get(record["problem"])
        if sizes is not None and record["n"] not in sizes:
            return None
    return record.get(field)


def fmt(field, v):
    if field == "note" and not v:
        return ""
    if v is None or v == "":
        return MISSING
    if field == "ok":
        return "ok" if v else "FAILED"
    if field == "n":
        return f"2^{v.bit_length() - 1}" if v >= 1024 and v & (v - 1) == 0 else f"{v:,}"
    if field == "bytes":
        return f"{v / 1e6:,.0f}"
    if field in ("gbps", "copy_gbps", "theoretical_gbps"):
        return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"
    if field in ("ms_median", "ms_min"):
        return f"{v:.4g}"
    if field == "us_median":
        return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"
    if field == "pct_of_copy":
        return f"{v:.1f}%"
    if field.startswith("vs_"):
        return f"{v:.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x" if v >= 0.1 else f"{v:.2g}x"
    if field == "tflops":
        return f"{v:.1f}" if v >= 10 else f"{v:.2f}"
    if field in ("clock_mhz", "extra.sm_clock_mhz", "extra.power_clock_mhz", "extra.power_w"):
        return f"{v:,.0f}"
    if field == "extra.value":
        return f"{v:,.2f}"
    if field == "extra.gvalues_s":
        return fmt("gbps", v)
    if field == "extra.bins":
        return f"{v:,}"
    if field in ("sm_count", "l2_mb", "memory_gb"):
        return f"{v:,.1f}" if isinstance(v, float) and not v.is_integer() else f"{int(v):,}"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def run_of(data, chapter):
    """The run that measured `chapter`: its entry in meta["runs"] over the meta of the file."""
    m = data["meta"]
    run = {k: m.get(k) for k in ("date", "commit", "copy_gbps", "runtime_cuda", "gpu_count")}
    run.update(m.get("runs", {}).get(chapter, {}))
    return run


def run_copy(data, chapter):
    """The copy ceiling of the run that measured `chapter`: what its rows' "% of copy" divide by."""
    copy = run_of(data, chapter).get("copy_gbps")
    if not copy:
        raise Missing(f"no copy ceiling for chapter {chapter} in {data['meta'].get('gpu', '?')}")
    return copy


def chapter_span(chapters):
    """["01", "02", "03", "05"] -> "chapters 01-03 and 05"."""
    nums = sorted(int(c) for c in chapters)
    parts, start = [], None
    for i, c in enumerate(nums):
        start = c if start is None else start
        if i + 1 == len(nums) or nums[i + 1] != c + 1:
            parts.append(f"{start:02d}" if start == c else f"{start:02d}-{c:02d}")
            start = None
    word = "chapter" if len(nums) == 1 else "chapters"
    return f"{word} " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


def run_groups(data, chapters):
    """[(chapters, run)]: the chapters grouped by the run that measured them, oldest run first."""
    groups = {}
    for ch in sorted(chapters):
        run = run_of(data, ch)
        key = (run.get("date"), run.get("commit"), run.get("copy_gbps"), run.get("gpu_count"))
        groups.setdefault(key, ([], run))[0].append(ch)
    return sorted(groups.values(), key=lambda g: (g[1].get("date") or "", g[0]))


def newest_run(results):
    """The run with the latest date in any results file: its commit is the code the others are compared with."""
    runs = [run_of(d, ch) for d in results.values() for ch in d["meta"].get("runs", {})]
    return max(runs, key=lambda r: r.get("date") or "") if runs else None


def load_run_notes():
    """docs/run_notes.json: what changed in the chapters' code after the commit a run measured."""
    if not os.path.exists(RUN_NOTES):
        return []
    with open(RUN_NOTES) as f:
        return json.load(f)["notes"]


RUNS_ANCHOR = "measuring.md#the-runs-behind-the-tables"


def find_note(gpu_file, chapters, run):
    found = [n for n in load_run_notes() if n["commit"] == run["commit"] and set(chapters) <= set(n["chapters"])
             and n.get("gpu", gpu_file) == gpu_file]
    return found[0] if found else None


def is_older(run, current):
    return current is not None and bool(run.get("commit")) and run["commit"] != current.get("commit")


def older_note(gpu_file, chapters, run, current, doc_path):
    """The footnote's sentence for a run on older code than the newest run, naming the change since."""
    if not is_older(run, current):
        return ""
    note = find_note(gpu_file, chapters, run)
    link = os.path.relpath(os.path.join(DOCS, RUNS_ANCHOR), os.path.dirname(doc_path))
    if note is None:
        warn(doc_path, f"{gpu_file}: {chapter_span(chapters)} ran commit {run['commit']}, older than "
                       f"{current['commit']}, and docs/run_notes.json does not say what changed since")
        since = "what changed since is not recorded yet"
    else:
        since = note["short"]
    return (f" {chapter_span(chapters).capitalize()} ran on an older commit than the newest run "
            f"({current['commit']}): {since} ([the runs]({link})).")


def runs_block(attrs, results, order, doc_path):
    """Every run behind the tables: per GPU, the chapters it measured, when, on which commit, its
    copy ceiling, and what changed in their code since (docs/run_notes.json)."""
    current = newest_run(results)
    lines = ["| GPU | chapters | date | commit | GPUs | copy ceiling (GB/s) | code since |",
             "|---|---|---|---|---:|---:|---|"]
    for name in order:
        data = results[name]
        for chs, run in run_groups(data, data["meta"].get("runs", {})):
            if not is_older(run, current):
                since = "the newest run"
            else:
                note = find_note(name, chs, run)
                since = ("not recorded yet" if note is None else
                         note["text"].rstrip(".") + f" (changes recorded up to commit {note['upto']}).")
            lines.append(f"| {short_gpu(data)} | {chapter_span(chs).split(' ', 1)[1]} | {run.get('date')} | "
                         f"{run.get('commit')} | {run.get('gpu_count') or 1} | {fmt('gbps', run.get('copy_gbps'))} | "
                         f"{since} |")
    if len(lines) == 2:
        raise Missing("no results files")
    return "\n" + "\n".join(lines) + "\n"


def source_line(name, data, doc_path, rows=(), results=None):
    """The table's source: the GPU, and each run its rows came from (date, commit, copy ceiling, GPUs)."""
    m = data["meta"]
    chapters = {r["chapter"] for r in rows} or set(m.get("runs", {})) or {"00"}
    groups = run_groups(data, chapters)
    current = newest_run(results) if results else None

    def one(run):
        gpus = f", {run['gpu_count']} GPUs" if (run.get("gpu_count") or 1) > 1 else ""
        return (f"{run.get('date')}, commit {run.get('commit') or 'unknown'}{gpus}, measured copy ceiling "
                f"{fmt('gbps', run.get('copy_gbps'))} GB/s")

    if len(groups) == 1:
        runs = one(groups[0][1])
    else:
        runs = f"in {len(groups)} runs: " + "; ".join(f"{chapter_span(chs)} on {one(run)}" for chs, run in groups)
    notes = "".join(older_note(name, chs, run, current, doc_path) for chs, run in groups)
    link = os.path.relpath(os.path.join(RESULTS, name + ".json"), os.path.dirname(doc_path))
    return (f"*Measured on {m['gpu']} ({m['sm_count']} SMs), CUDA {m['runtime_cuda']}, {runs}.{notes} "
            f"Source: [{link}]({link}).*")


# --- results tables --------------------------------------------------------------------

def default_cols(rows, attrs):
    cols = []
    if len({r["chapter"] for r in rows}) > 1:
        cols.append("chapter")
    cols.append("variant")
    if any(r.get("note") for r in rows):
        cols.append("note")
    extras = sorted({k for r in rows for k in r.get("extra", {})}) if "role" in attrs else []
    cols += ["n", "ms_median", "gbps", "pct_of_copy"] + [f"extra.{k}" for k in extras]
    cols += [c for c in ("vs_prev", "vs_cpu", "vs_vendor") if any(c in r for r in rows)]
    cols.append("ok")
    return cols


def align(c):
    return "---" if c in ("chapter", "variant", "note", "role", "problem") else "---:"


def one_table(rows, cols, data):
    """cols=...,vs_first: each step's GB/s over the first step's, the cumulative speed-up of
    Harris's tables."""
    head = [HEADERS.get(c, c.removeprefix("extra.")) for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align(c) for c in cols) + "|"]
    steps = [r for r in rows if r["role"] == "step"]
    first = steps[0].get("gbps") if steps else None

    def cell(r, c):
        if c == "vs_first":
            ok = first and r.get("gbps") is not None and r["role"] in ("step", "anti-example")
            return fmt(c, r["gbps"] / first if ok else None)
        return fmt(c, get(r, c, data))

    for r in rows:
        lines.append("| " + " | ".join(cell(r, c) for c in cols) + " |")
    return "\n".join(lines)


def pivot_table(rows, attrs, data):
    """rows=<field> down, pivot=<field> across, value=<field> in the cells
    (value=<field>,<field>: a column per field under each heading)."""
    down, across = attrs.get("rows", "n"), attrs["pivot"]
    fields = attrs.get("value", "gbps").split(",")
    label = lambda c: HEADERS.get(c, c.removeprefix("extra."))  # noqa: E731
    keys = list(dict.fromkeys(get(r, down) for r in rows))
    heads = list(dict.fromkeys(str(get(r, across)) for r in rows))
    cells = {(get(r, down), str(get(r, across)), c): get(r, c, data) for r in rows for c in fields}
    cols = [(h, c) for h in heads for c in fields]
    names = [h if len(fields) == 1 else f"{h} {label(c)}" for h, c in cols]
    lines = ["| " + " | ".join([label(down)] + names) + " |",
             "|" + "|".join([align(down)] + [align(c) for _, c in cols]) + "|"]
    for k in keys:
        lines.append("| " + " | ".join([fmt(down, k)] + [fmt(c, cells.get((k, h, c))) for h, c in cols]) + " |")
    if len(fields) > 1:
        return "\n".join(lines)
    return "\n".join(lines) + f"\n\n*Cells: {label(fields[0])}.*"


def results_block(attrs, results, order, doc_path):
    if "per_gpu" in attrs:
        return side_by_side(attrs, results, order, doc_path)
    names = [resolve_gpu(attrs["gpu"], results)] if "gpu" in attrs else order
    parts, shown = [], 0
    for name in names:
        if name not in results:
            continue
        data = results[name]
        rows = select(data["records"], attrs)
        if not rows:
            continue
        if "pivot" in attrs:
            body = pivot_table(rows, attrs, data) + "\n\n" + source_line(name, data, doc_path, rows, results)
        else:
            cols = attrs["cols"].split(",") if "cols" in attrs else default_cols(rows, attrs)
            body = one_table(rows, cols, data) + "\n\n" + source_line(name, data, doc_path, rows, results)
        if shown == 0:
            parts.append("\n" + body + "\n")
        else:
            parts.append(f"\n<details><summary>The same on the {data['meta']['gpu']}</summary>\n\n"
                         + body + "\n\n</details>\n")
        shown += 1
    if not shown:
        raise Missing("no records match")
    return "".join(parts)


def side_by_side(attrs, results, order, doc_path):
    names = [n for n in order if n in results]
    fixed = attrs.get("cols", "chapter,variant,note,n").split(",")
    per = attrs["per_gpu"].split(",")
    key = lambda r: (r["chapter"], r["problem"], r["variant"], r.get("note", ""), r["n"])  # noqa: E731
    keys, by_gpu, measured = [], {}, {}
    for name in names:
        recs = select(results[name]["records"], attrs)
        by_gpu[name] = {key(r): r for r in recs}
        every = select(results[name]["records"], {k: v for k, v in attrs.items() if k != "best"})
        measured[name] = {key(r) for r in every}  # best=1 left out: each row this GPU measured
        for r in recs:
            if key(r) not in keys:
                keys.append(key(r))
    if not keys:
        raise Missing("no records match")
    keys.sort(key=lambda k: k[0])  # by chapter, stable: each file's order within a chapter
    head = [HEADERS.get(c, c) for c in fixed]
    cols = list(fixed)
    for name in names:
        label = short_gpu(results[name])
        for c in per:
            head.append(f"{label} {HEADERS.get(c, c)}")
            cols.append(c)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align(c) for c in cols) + "|"]
    for k in keys:
        first = next(by_gpu[n][k] for n in names if k in by_gpu[n])
        cells = [fmt(c, get(first, c)) for c in fixed]
        for name in names:
            r = by_gpu[name].get(k)
            if r is None and k in measured[name]:  # measured there, but not that GPU's fastest
                cells += [NOT_FASTEST] * len(per)
                continue
            cells += [fmt(c, get(r, c, results[name]) if r else None) for c in per]
        lines.append("| " + " | ".join(cells) + " |")
    sources = "\n".join(source_line(n, results[n], doc_path, list(by_gpu[n].values()), results)
                        for n in names if by_gpu[n])
    return "\n" + "\n".join(lines) + "\n\n" + sources + "\n"


# --- values ----------------------------------------------------------------------------

class Rec:
    """A record in an expression: a.gbps, a.extra_key (from extra), a.n; a.pct_of_copy and
    a.copy_gbps against the copy ceiling of the run that measured it."""

    def __init__(self, record, label, data=None):
        self._r, self._label, self._data = record, label, data

    def __getattr__(self, k):
        if k.startswith("_"):
            raise AttributeError(k)
        if self._data is not None and k in ("pct_of_copy", "vs_vendor", "us_median"):
            v = get(self._r, k, self._data)
        elif self._data is not None and k == "copy_gbps":
            v = run_copy(self._data, self._r["chapter"])
        else:
            v = self._r.get(k, self._r.get("extra", {}).get(k))
        if v is None:
            raise Missing(f"record {self._label} has no {k!r}")
        return v


def pick_one(data, attrs, label):
    rows = select(data["records"], attrs, default_roles=ALL_ROLES)
    if len(rows) > 1:
        raise Failure(f"{label} {attrs} matches {len(rows)} records, not 1")
    if not rows:
        raise Missing(f"no record {attrs}")
    return rows[0]


def band(x, lo, hi):
    """0 below [lo, hi], 1 inside it, 2 above it: a word marker's index for a predicted range."""
    return 0 if x < lo else 1 if x <= hi else 2


def near(x, y, tol):
    """0 when x is below y by more than the fraction tol, 1 within it, 2 above it."""
    return 0 if x < y * (1 - tol) else 1 if x <= y * (1 + tol) else 2


def argmax(*xs):
    return max(range(len(xs)), key=lambda i: xs[i])


def argmin(*xs):
    return min(range(len(xs)), key=lambda i: xs[i])


def fastest(data, spec, field="us_median", by=None):
    """The variant of the records matching `spec` (marker filters, one string) with the least
    `field` (a time) or, for gbps, the most; with by="n", one "2^k: variant" per value of n."""
    attrs = parse_attrs(spec)
    rows = [r for r in select(data["records"], attrs, default_roles=ALL_ROLES) if get(r, field, data) is not None]
    if not rows:
        raise Missing(f"no record {spec} has {field}")
    pick = max if field in ("gbps", "pct_of_copy") else min
    if by is None:
        return pick(rows, key=lambda r: get(r, field, data))["variant"]
    groups = {}
    for r in rows:
        groups.setdefault(get(r, by), []).append(r)
    return ", ".join(f"{fmt(by, k)}: {pick(g, key=lambda r: get(r, field, data))['variant']}"
                     for k, g in sorted(groups.items()))


def pairs(data, spec_a, spec_b, by, field="gbps"):
    """[(key, a, b)]: the `field` of the records matching spec_a and spec_b at each value of `by`
    that both have (pairs('variant=per-warp-vec16 ...', 'variant=spread16-vec16 ...', 'extra.p'))."""
    def index(spec):
        rows = select(data["records"], parse_attrs(spec), default_roles=ALL_ROLES)
        return {get(r, by): get(r, field, data) for r in rows if get(r, field, data) is not None}
    a, b = index(spec_a), index(spec_b)
    keys = sorted(k for k in a if k in b)
    if not keys:
        raise Missing(f"no common {by} of {spec_a!r} and {spec_b!r}")
    return [(k, a[k], b[k]) for k in keys]


def group_by(data, spec, by, field):
    """{value of `by`: [records matching spec that have `field`]}."""
    groups = {}
    for r in select(data["records"], parse_attrs(spec), default_roles=ALL_ROLES):
        if get(r, field, data) is not None:
            groups.setdefault(get(r, by), []).append(r)
    if not groups:
        raise Missing(f"no record {spec} has {field}")
    return groups


def evaluate(attrs, data, named=None):
    names = {}
    for p in ("a", "b", "c", "d", "e", "f"):
        sub = {k[len(p) + 1:]: v for k, v in attrs.items() if k.startswith(p + ".")}
        unknown = [k for k in sub if k not in RECORD_FILTERS and not k.startswith("extra.")]
        if unknown:  # select() would pass over them: a.gpu= once chose the primary GPU's record unseen
            raise Failure(f"record {p}. has no filter {unknown[0]!r} (filters: {', '.join(RECORD_FILTERS)}, "
                          "extra.*; one GPU per marker: gpu=)")
        if sub:
            names[p] = Rec(pick_one(data, sub, f"record {p}."), p, data)

    class Env(dict):
        def __missing__(self, k):
            if named is not None and k in named:
                if named[k] is None:
                    raise Missing(f"the figure named {k!r} is missing")
                return named[k]
            return meta_get(data, k)

    env = Env(names)
    helpers = dict(ev=evidence_value, ev_date=evidence_date, ev_sum=evidence_sum, ev_all=evidence_all, log2=math.log2, sqrt=math.sqrt, ceil=math.ceil, min=min, max=max, abs=abs,
               round=round, inflight_kib=lambda ns, ch=None: inflight_kib(data, ns, ch), band=band, near=near, argmax=argmax,
               argmin=argmin, run_copy=lambda ch: run_copy(data, ch),
               fastest=lambda spec, field="us_median", by=None: fastest(data, spec, field, by),
               pairs=lambda a, b, by, field="gbps": pairs(data, a, b, by, field),
               best_by=lambda spec, by, field="gbps": {k: max(rs, key=lambda r: get(r, field, data))
                                                        for k, rs in group_by(data, spec, by, field).items()},
               all=all, any=any, len=len, sum=sum, str=str, sorted=sorted, zip=zip, fmt=fmt,
               get=lambda r, field: get(r, field, data))
    env.update(helpers)
    # a comprehension's body sees the globals only: the helpers, the records and the named figures
    scope = {"__builtins__": {}, **helpers, **names, **{k: v for k, v in (named or {}).items() if v is not None}}
    try:
        return eval(attrs["expr"], scope, env)  # our own docs' expressions
    except (Missing, Failure):
        raise
    except ZeroDivisionError:
        raise Missing(f"division by zero in {attrs['expr']!r}")
    except Exception as e:  # a typo in an expression is an authoring error
        raise Failure(f"expression {attrs['expr']!r}: {e}")


def value(attrs, data, named=None):
    """The figure's text and its number (for as=)."""
    if "device" in attrs:
        k = attrs["device"]
        v = run_of(data, attrs["run"].zfill(2))[k] if "run" in attrs else meta_get(data, k)
        if v is None:
            raise Missing(f"no {k!r} for run {attrs.get('run')}")
        spec = DEVICE_ROWS.get({"name": "gpu", "runtime": "runtime_cuda", "driver": "driver_cuda"}.get(k, k))
        if k in ("copy_gbps", "theoretical_gbps", "sm_count", "l2_mb", "memory_gb") or spec is None:
            return fmt(k, v), v
        return (spec[1](v) if spec[1] is str else spec[1].format(v)), v
    if "expr" in attrs:
        v = evaluate(attrs, data, named)
        return (format(v, attrs["fmt"]) if "fmt" in attrs else fmt("", v)), v
    field = attrs.get("field", "gbps")
    if "agg" in attrs:
        if attrs["agg"] not in ("min", "max"):
            raise Failure(f"agg={attrs['agg']}: min or max")
        rows = select(data["records"], attrs, default_roles=ALL_ROLES)
        vals = [v for v in (get(r, field, data) for r in rows) if v is not None]
        if not vals:
            raise Missing(f"no record {attrs} has {field}")
        v = min(vals) if attrs["agg"] == "min" else max(vals)
        return fmt(field, v), v
    r = pick_one(data, attrs, "value marker")
    v = get(r, field, data)
    if v is None:
        raise Missing(f"record {attrs} has no {field}")
    return fmt(field, v), v


def word(attrs, data, named):
    """A comparative word chosen by the figures: words="slower|faster" expr="a.gbps > b.gbps"
    (False picks the first, True the second), or an index: words="below|inside|above"
    expr="band(x, 1000, 1400)"."""
    words = attrs["words"].split("|")
    v = evaluate(attrs, data, named)
    if isinstance(v, bool):
        v = int(v)
    if not isinstance(v, int) or not 0 <= v < len(words):
        raise Failure(f"expression {attrs['expr']!r} gave {v!r}, not an index into {len(words)} words")
    return words[v]


# --- the device table ------------------------------------------------------------------

def device_block(attrs, results, order, doc_path):
    keys = attrs.get("keys", "gpu,sm_count,copy_gbps").split(",")
    latency = float(attrs.get("latency_ns", "700"))
    names = [n for n in order if n in results]
    if not names:
        raise Missing("no results files")
    lines = ["| | " + " | ".join(short_gpu(results[n]) for n in names) + " |",
             "|---|" + "|".join("---:" for _ in names) + "|"]
    for k in keys:
        label, form = DEVICE_ROWS.get(k, (k, "{}"))
        if k == "inflight_kib_per_sm":
            label = label.replace("latency_ns", f"{latency:.0f} ns")
        cells = []
        for n in names:
            try:
                v = inflight_kib(results[n], latency) if k == "inflight_kib_per_sm" else meta_get(results[n], k)
                cells.append(str(v) if form is str else form.format(v))
            except Missing:
                cells.append(MISSING)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    links = ", ".join(f"[{n}.json]({os.path.relpath(os.path.join(RESULTS, n + '.json'), os.path.dirname(doc_path))})"
                      f" (the copy and host of its last full run, {results[n]['meta'].get('date')}, commit "
                      f"{results[n]['meta'].get('commit')})" for n in names)
    return "\n" + "\n".join(lines) + f"\n\n*From the results files: {links}.*\n"


# --- evidence files --------------------------------------------------------------------

_EVIDENCE = {}


def parse_evidence(file):
    """Rows of an evidence file: dicts with section, name, index and metric values.

    Two layouts: tables whose header starts 'variant |' (under '== ...' sections), and
    Nsight Compute's default output, whose blocks start at a '## name' heading or at a
    kernel line ('  void ns::kernel<...>(...) (grid)x(block), ...'; an anonymous namespace
    prints as 'unnamed>::').
    """
    if file in _EVIDENCE:
        return _EVIDENCE[file]
    path = os.path.join(EVIDENCE, file)
    if not os.path.exists(path):
        raise Missing(f"evidence file docs/runs/evidence/{file} does not exist yet")
    rows, section, header, cur, heading, count = [], "", None, None, None, {}
    with open(path) as f:
        for line in f:
            s = line.rstrip("\n")
            if s.startswith("== ") or (s.startswith("# ") and not s.startswith("# $")):
                section, header, cur, heading = s.lstrip("=# ").strip(), None, None, None
                continue
            if s.startswith("## "):
                heading = s[3:].strip()
                cur = None
                continue
            if s.startswith("variant |"):
                header = [h.strip() for h in s.split("|")]
                continue
            if header and " | " in s and not s.startswith(" "):
                cells = [c.strip() for c in s.split("|")]
                if len(cells) == len(header):
                    row = {"section": section, "name": cells[0]}
                    row.update({h: c for h, c in zip(header[1:], cells[1:])})
                    rows.append(row)
                continue
            m = re.match(r"^\s+(?:void )?(?:(?:\w+|<?unnamed>)::)*(\w+)(?:<.*?>)?\(.*\) \(\d+, \d+, \d+\)x\(", s)
            if m:
                name = heading or m.group(1)
                idx = count.get((section, name), 0)
                count[(section, name)] = idx + 1
                cur = {"section": section, "name": name, "kernel": m.group(1), "index": idx}
                rows.append(cur)
                continue
            m = re.match(r"^\s+([a-z][\w.]+__[\w.]+)\s+(?:\S+\s+)?([\d,.]+)\s*$", s)
            if m and cur is not None:
                cur[m.group(1)] = m.group(2)
    _EVIDENCE[file] = rows
    return rows


def evidence_date(file):
    """The date in an evidence file's header ("# NVIDIA H200, 580.159.04, 2026-11-23"), as text."""
    path = os.path.join(EVIDENCE, file)
    if not os.path.exists(path):
        raise Missing(f"evidence file docs/runs/evidence/{file} does not exist yet")
    with open(path) as f:
        for line in f:
            m = re.match(r"#.*\b(\d{4}-\d\d-\d\d)\b", line)
            if m:
                return m.group(1)
            if not line.startswith("#"):
                break
    raise Missing(f"docs/runs/evidence/{file} names no date in its header")


def evidence_all(file, pattern):
    """Every number that `pattern`'s first group matches in an evidence file, in order
    (max(ev_all(...)): the best row of a sweep)."""
    path = os.path.join(EVIDENCE, file)
    if not os.path.exists(path):
        raise Missing(f"evidence file docs/runs/evidence/{file} does not exist yet")
    with open(path) as f:
        found = [float(m.group(1).replace(",", "")) for m in re.finditer(pattern, f.read())]
    if not found:
        raise Missing(f"docs/runs/evidence/{file} has no {pattern!r}")
    return found


def evidence_sum(file, pattern):
    """The sum of the numbers that `pattern`'s first group matches in an evidence file
    (ev_sum('06_racecheck.txt', r'(\\d+) hazards displayed'): the hazards of every run)."""
    return sum(evidence_all(file, pattern))


def evidence_value(file, metric, name=None, section=None, index=None, kernel=None):
    rows = [r for r in parse_evidence(file)
            if (name is None or r["name"] == name) and (section is None or section in r["section"])
            and (kernel is None or r.get("kernel") == kernel) and (index is None or r.get("index") == index)]
    rows = [r for r in rows if metric in r]
    if len(rows) != 1:
        what = f"ev({file!r}, {metric!r}, name={name!r}, section={section!r}, index={index!r})"
        if not rows:
            raise Missing(f"{what}: no such figure in the evidence file")
        raise Failure(f"{what}: {len(rows)} figures match")
    return float(rows[0][metric].replace(",", ""))


# --- code and quotes -------------------------------------------------------------------

def strip_comments_and_strings(line):
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def extract(path, name):
    """Every top-level definition of function or struct `name` in `path` (or a table
    `name = {...}`), verbatim, with its template and __global__ lines and the comment
    right above it."""
    with open(path) as f:
        lines = f.read().split("\n")
    code = [strip_comments_and_strings(t) for t in lines]
    sig = re.compile(r"(?:\b(?:struct|class)\s+" + re.escape(name) + r"\b|(?:^|[\w>*&\s)])\s*\b"
                     + re.escape(name) + r"\s*\(|\b" + re.escape(name) + r"\s*=\s*\{)")  # or a braced table
    out, i = [], 0
    while i < len(lines):
        # a definition starts at column 0, or continues a column-0 line that is not
        # a statement (`__global__ void __launch_bounds__(256)` then the name)
        head = i > 0 and code[i - 1][:1] not in ("", " ", "\t", "#") and code[i - 1].rstrip()[-1:] not in ";{}"
        if not code[i] or not sig.search(code[i]) or (code[i][0] in " \t#" and not head):
            i += 1
            continue
        j, paren, kind = i, 0, None  # a '{' at parenthesis depth 0 makes it a definition
        while j < len(lines) and kind is None:
            for ch in code[j]:
                paren += (ch == "(") - (ch == ")")
                if paren == 0 and ch in "{;":
                    kind = ch
                    break
            if kind is None:
                j += 1
        if kind != "{":
            i = j + 1
            continue
        depth, k, started = 0, j, False
        while k < len(lines):
            for ch in code[k]:
                if ch == "{":
                    depth, started = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if started and depth == 0:
                break
            k += 1
        start = i - 1 if code[i][0] in " \t" else i
        while start > 0 and re.match(r"^(template\s*<|__global__|__device__|__host__|//)", lines[start - 1]):
            start -= 1
        out.append("\n".join(lines[start:k + 1]))
        i = k + 1
    return out


STUDENT_COPY = os.path.join(ROOT, "chapters", "labs", "track.txt")  # only a student copy has it


def code_block(attrs, doc_path):
    rel = attrs["file"]
    path = os.path.join(ROOT, rel)
    if not os.path.exists(path):
        if os.path.exists(STUDENT_COPY):  # a copy of one track holds only that track's chapters
            raise Missing(f"{rel} is not part of this copy")
        raise Failure(f"code marker: no file {rel}")
    if attrs.get("whole") == "1":  # the whole file, as it is
        with open(path) as f:
            text = f.read().rstrip("\n")
        link = os.path.relpath(path, os.path.dirname(doc_path))
        return (f"\n```{attrs.get('lang', 'cuda')}\n{text}\n```\n\n"
                f"*The whole of [`{rel}`]({link}), copied by `docs/generate.py`.*\n")
    pieces = []
    for name in attrs["names"].split(","):
        found = extract(path, name)
        if not found and os.path.exists(STUDENT_COPY):  # a later step that holds a lab task's answer
            raise Missing(f"{name} is a later step, left out of this copy")
        if not found:
            raise Failure(f"code marker: no function or struct {name!r} in {rel}")
        pieces += found
    link = os.path.relpath(path, os.path.dirname(doc_path))
    lang = attrs.get("lang", "cuda")
    names = ", ".join(f"`{n}`" for n in attrs["names"].split(","))
    return (f"\n```{lang}\n" + "\n\n".join(pieces) + "\n```\n\n"
            f"*{names}, copied from [`{rel}`]({link}) by `docs/generate.py`.*\n")


def marker_file(attrs):
    """(file= as written, its path, its text) of a marker that quotes a file; Missing if absent."""
    rel = attrs["file"]
    path = os.path.join(ROOT, rel)
    if not os.path.exists(path):
        raise Missing(f"{rel} does not exist yet")
    with open(path) as f:
        return rel, path, f.read()


def quote_block(attrs, doc_path):
    rel, path, text = marker_file(attrs)
    text = text.rstrip("\n").split("\n")
    if "grep" in attrs:
        keep = re.compile(attrs["grep"])
        text = [t for t in text if keep.search(t) or t.startswith("#")]
    limit = int(attrs.get("max_lines", "60"))
    cut = len(text) - limit
    text = text[:limit] + ([f"... ({cut} more lines in the file)"] if cut > 0 else [])
    link = os.path.relpath(path, os.path.dirname(doc_path))
    return f"\n```text\n" + "\n".join(text) + f"\n```\n\n*From [`{rel}`]({link}).*\n"


def build_times_block(attrs, doc_path):
    """The measured builds (.ci/build-times): one row per machine and gpu_arch."""
    rel, path, text = marker_file(attrs)
    runs = json.loads(text)["runs"]
    if not runs:
        raise Missing(f"{rel} holds no run yet")
    lines = ["| machine | cores | `gpu_arch` | architectures built | clean build | rebuild after one edit | "
             "quiet | nvcc | commit, date |", "|---|---:|---|---|---:|---:|---|---|---|"]
    for r in runs:
        archs = r.get("archs", "").split(": ", 1)[-1]
        lines.append(f"| {r['label']} | {r['cores']} | `{r['gpu_arch']}` | {archs} | {r['clean_build_s']:.0f} s | "
                     f"{r['rebuild_s']:.1f} s | {'yes' if r.get('quiet') else 'no: shared with other work'} | "
                     f"{r.get('nvcc', '')} | {r.get('commit', '')}, {r.get('date', '')} |")
    link = os.path.relpath(path, os.path.dirname(doc_path))
    return "\n" + "\n".join(lines) + f"\n\n*From [`{rel}`]({link}); the rebuild touches `{runs[0]['touched']}`.*\n"


BUILD_FIELDS = ("setup_s", "clean_build_s", "rebuild_s", "cold_s")


def build_time_value(attrs):
    """One duration of one measured build, inline: the run whose keys match every attribute
    but file= and field= (cores=2 gpu_arch=portable, label=...); field= setup_s, clean_build_s,
    rebuild_s, or cold_s (meson setup and the clean build: a fresh clone's wait before either
    README command does anything else)."""
    rel, path, text = marker_file(attrs)
    field = attrs.get("field", "cold_s")
    if field not in BUILD_FIELDS:
        raise Failure(f"field={field}: one of {', '.join(BUILD_FIELDS)}")
    wanted = {k: v for k, v in attrs.items() if k not in ("file", "field")}
    runs = [r for r in json.loads(text)["runs"] if all(str(r.get(k)) == v for k, v in wanted.items())]
    if len(runs) > 1:
        raise Failure(f"{rel}: {len(runs)} runs match {wanted}")
    if not runs:
        raise Missing(f"{rel} holds no run with {wanted}")
    r = runs[0]
    seconds = r["setup_s"] + r["clean_build_s"] if field == "cold_s" else r[field]
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 20 else f"{seconds:.0f} s"
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s"


def skipped_block(attrs, doc_path):
    """The steps a build mode's GPU tests skipped (.ci/gpu-run writes <gpu>-<mode>-skipped.txt):
    one row per step that a chapter's program skipped, with its reason. Whole tests that
    skipped (the format checks without clang-format 14) are not a chapter's steps."""
    rel, path, text = marker_file(attrs)
    emulated = next((l[len("# emulated: "):] for l in text.split("\n") if l.startswith("# emulated: ")), "")
    rows = []
    for line in text.split("\n"):
        m = re.match(r"ch\d+\S* - [^:]+:(\S+): SKIP ([^:]+): (.*)$", line)
        if m:
            rows.append(f"| `{m.group(1)}` | `{m.group(2)}` | {m.group(3)} |")
    link = os.path.relpath(path, os.path.dirname(doc_path))
    head = f"\nEmulated: {emulated}.\n\n" if emulated else "\n"
    if not rows:
        return head + f"No step skipped. *From [`{rel}`]({link}).*\n"
    return (head + "| program | step | reason |\n|---|---|---|\n" + "\n".join(rows) +
            f"\n\n*From [`{rel}`]({link}).*\n")


STABILITY_LIMIT = 1.02  # the grader's goal: a speed ratio that varies by at most 2% (max/min) over the grades


def stability_block(attrs, doc_path):
    """The stability runs of the lab grader (lab.py selftest TRACK --stability N) in the folders
    dirs= (comma-separated, each docs/runs/labs/<gpu>): per track and task, the grades, their
    statuses, the speed bands the reports gave and the spread of the speed ratio, read from each
    <track>-stability/grades.csv, and the commit graded, from its tree.txt ("not recorded" for
    the runs made before .ci/gpu-run wrote that file)."""
    lines = ["| GPU | track | tree | task | grades | statuses | speed bands | speed ratio min | median | max | "
             "max/min | inside 2% |", "|---|---|---|---|---:|---|---|---:|---:|---:|---:|---|"]
    sources = []
    for rel_dir in attrs["dirs"].split(","):
        folders = sorted(glob.glob(os.path.join(ROOT, rel_dir, "*-stability", "grades.csv")))
        if not folders:
            raise Missing(f"no {rel_dir}/*-stability/grades.csv yet")
        for sheet in folders:
            with open(sheet) as f:
                rows = list(csv.DictReader(f))
            track = os.path.basename(os.path.dirname(sheet))[:-len("-stability")]
            gpu = next((r["gpu"] for r in rows if r.get("gpu")), os.path.basename(rel_dir))
            tree_file = os.path.join(os.path.dirname(sheet), "tree.txt")  # written by .ci/gpu-run stability
            tree = "not recorded"
            if os.path.exists(tree_file):
                with open(tree_file) as f:
                    tree = f"`{f.read().strip()}`"
            for task in dict.fromkeys(r["task"] for r in rows):
                mine = [r for r in rows if r["task"] == task]
                ratios = [float(r["speed_ratio"]) for r in mine if r.get("speed_ratio")]
                statuses = ", ".join(sorted({r["status"] for r in mine}))
                bands = ", ".join(sorted({r["speed_band"] for r in mine if r.get("speed_band")})) or "not recorded"
                if not ratios:
                    lines.append(f"| {gpu} | `{track}` | {tree} | `{task}` | {len(mine)} | {statuses} | {bands} | | | | | |")
                    continue
                spread = max(ratios) / min(ratios)
                lines.append(f"| {gpu} | `{track}` | {tree} | `{task}` | {len(mine)} | {statuses} | {bands} | {min(ratios):.3f} | "
                             f"{statistics.median(ratios):.3f} | {max(ratios):.3f} | {spread:.4f} | "
                             f"{'yes' if spread <= STABILITY_LIMIT else 'no'} |")
            link = os.path.relpath(os.path.dirname(sheet), os.path.dirname(doc_path))
            sources.append(f"[`{track}` on {gpu}]({link}/stability.md)")
    text = "\n" + "\n".join(lines) + f"\n\n*From the grade sheets of {', '.join(sources)}.*\n"
    if "probe" in attrs:
        text += noise_probe_table(attrs["probe"], doc_path)
    return text


def class_block(attrs, doc_path):
    """The generated classes graded on GPUs (.ci/gpu-run class: lab.py class, grade --part i/k
    on k GPUs side by side, --merge) in the folders dirs= (comma-separated, each
    docs/runs/labs/<gpu>): per class, its students and tasks, each part's wall seconds, the
    students per GPU-hour (students over the parts' summed hours), the grader's settings and
    the grades that differ from the expected ones, read from each <track>-class/class.json."""
    lines = ["| GPU | track | students | tasks | GPUs (parts) | wall s per part | students per GPU-hour | "
             "sanitizers | timing rounds | unexpected grades |", "|---|---|---:|---:|---:|---|---:|---|---:|---:|"]
    sources, gpus = [], {}
    for rel_dir in attrs["dirs"].split(","):
        for path in sorted(glob.glob(os.path.join(ROOT, rel_dir, "*-class", "class.json"))):
            with open(path) as f:
                c = json.load(f)
            if "parts" not in c:  # generated, never graded
                continue
            walls = ", ".join(f"{part['wall_s']:.0f}" for part in c["parts"])
            rate = (f"{c['students_per_gpu_hour']:.0f}" if c.get("complete") else
                    f"not complete: {c.get('students_graded', 0)} of {c['students']} graded")
            lines.append(f"| {c.get('gpu') or os.path.basename(rel_dir)} | `{c['track']}` | {c['students']} | "
                         f"{c['tasks']} | {c['gpus']} ({len(c['parts'])}) | {walls} | "
                         f"{rate} | {'yes' if c['sanitizer'] else 'no'} | {c['timing_rounds'] or 'none'} | "
                         f"{'' if c.get('unexpected') is None else c['unexpected']} |")
            link = os.path.relpath(os.path.dirname(path), os.path.dirname(doc_path))
            sources.append(f"[`{c['track']}` on {c.get('gpu') or os.path.basename(rel_dir)}]({link}/class.json)")
            if c.get("complete"):
                gpus.setdefault(c.get("gpu") or os.path.basename(rel_dir), set()).add(c["track"])
    if not sources:
        raise Missing(f"no graded class in {attrs['dirs']} yet")
    text = "\n" + "\n".join(lines) + f"\n\n*From {', '.join(sources)}.*\n"
    for gpu, graded in gpus.items():  # the tracks a GPU has no class of yet
        missing = [f"`{t}`" for t in lab_tracks() if t not in graded]
        if missing:
            text += f"\nNo class graded on {gpu} yet: {', '.join(missing)}.\n"
    return text


def lab_tracks():
    """The lab tracks students grade (chapters/labs/tasks.py's TRACKS, without the CPU stand-in)."""
    sys.path.insert(0, os.path.join(ROOT, "chapters", "labs"))
    try:
        import tasks
    finally:
        sys.path.pop(0)
    return [t for t in tasks.TRACKS if t != "standin"]


def noise_probe_table(rel, doc_path):
    """The same program timed in several processes (lines 'diag reps R PROGRAM ms_median ms_min
    gbps'): per program and reps, how far the processes' medians and minimums spread (max/min)."""
    path = os.path.join(ROOT, rel)
    if not os.path.exists(path):
        raise Missing(f"{rel} does not exist yet")
    runs = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 7 and p[0] == "diag" and p[1] == "reps":
                runs.setdefault((p[3], int(p[2])), []).append((float(p[4]), float(p[5])))
    lines = ["| program | timed calls per process | processes | median ms, lowest | highest | max/min | "
             "minimum ms, lowest | highest | max/min |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (prog, reps), ms in runs.items():
        med, low = [m for m, _ in ms], [m for _, m in ms]
        lines.append(f"| `{prog}` | {reps} | {len(ms)} | {min(med):.4f} | {max(med):.4f} | {max(med) / min(med):.3f} | "
                     f"{min(low):.4f} | {max(low):.4f} | {max(low) / min(low):.3f} |")
    link = os.path.relpath(path, os.path.dirname(doc_path))
    return "\n" + "\n".join(lines) + f"\n\n*From [`{rel}`]({link}).*\n"


# --- plots -----------------------------------------------------------------------------

def plot_block(attrs, results, order, doc_path, draw):
    if attrs.get("kind") == "roofline":
        return roofline_block(attrs, results, order, doc_path, draw)
    file = attrs["file"]
    title = attrs.get("title", "")
    rel = os.path.relpath(os.path.join(PLOTS, file), os.path.dirname(doc_path))
    if attrs.get("gpus") == "all":
        names = [n for n in order if n in results]
    else:
        names = [resolve_gpu(attrs["gpu"], results) if "gpu" in attrs else (order[0] if order else None)]
    series = [(n, select(results[n]["records"], attrs)) for n in names if n in results]
    series = [(n, rows) for n, rows in series if rows]
    if not series:
        raise Missing("no records match")
    if draw:
        draw_plot(attrs, series, results, os.path.join(PLOTS, file), title)
    sources = "\n".join(source_line(n, results[n], doc_path, rows, results) for n, rows in series)
    return f"\n![{title or file}]({rel})\n\n" + sources + "\n"


# One colour and marker per variant, the same in every plot of a chapter and on every GPU (a GPU
# is told apart by its line style): the variant's place in the order its chapter reports steps.
# No gray among them: gray is the copy ceiling, black the reference lines.
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#01665e", "#393b79", "#ad494a", "#637939", "#e7969c", "#6b6ecf", "#8c6d31", "#843c39", "#7b4173"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "8"]
GPU_STYLES = ["-", "--", ":", "-."]


def base_variant(name):
    """two-pass-sweep and two-pass are one variant in the plots: the sweep of a step is the step."""
    return name.removesuffix("-sweep")


def variant_style(results, chapters, variant):
    """(colour, marker) of a variant: its place among the variants of its chapters, in the order
    the results files (the primary GPU's first) list them."""
    order = []
    for name in gpu_order(results):
        for r in results[name]["records"]:
            if r["chapter"] in chapters and base_variant(r["variant"]) not in order:
                order.append(base_variant(r["variant"]))
    i = order.index(base_variant(variant)) if base_variant(variant) in order else len(order)
    return PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]


# --- the roofline ----------------------------------------------------------------------
#
# kind=roofline gpu=<name>: every chapter that does floating-point work, on one picture per GPU.
# x is the arithmetic intensity, the FLOPs a row must do per byte it must move (its "flops" and
# "bytes" fields); y the GFLOP/s it attained. The roof is the measured copy bandwidth times x,
# capped by the compute ceilings measured on the same GPU.

# The problems drawn: FLOPs per unit of the record's n (used only where a record has no "flops"
# field) and which inputs (notes) count. The others (histograms, transposes, top-2, compaction,
# sorting) do no floating-point arithmetic; chapter 14's sums run on several GPUs.
ROOFLINE_PROBLEMS = {
    "sum": (1, lambda note: note == ""),                # one fp32 add per 4-byte element: 0.25 FLOP/B
    "dot": (2, lambda note: note == ""),                # a multiply and an add per 8 bytes: 0.25 FLOP/B
    "scan": (1, lambda note: note == "f32 inclusive"),  # one fp32 add per 8 bytes (read, written): 0.125
    "sgemm": (2, lambda note: "alpha=" not in note),   # n = m n k multiply-adds: 2mnk / (4(mk + kn + mn))
    "gemm": (2, lambda note: re.search(r"\bbf16\b", note) and "alpha=" not in note),  # 2mnk / (2(mk + kn) + 4mn)
}
FP32_LANES_PER_SM = {"7.5": 64, "8.0": 64, "8.6": 128, "8.9": 128, "9.0": 128}  # FMA lanes, by compute capability


def roofline_flops(r):
    return r.get("flops") or ROOFLINE_PROBLEMS[r["problem"]][0] * r["n"]


def roofline_gflops(r):
    return roofline_flops(r) / (r["ms_median"] * 1e-3) / 1e9


def roofline_points(records):
    """[(record, "step" or "vendor")]: per chapter and problem, at the chapter's largest size of the
    input drawn, its fastest step; and each library once per problem (from the last chapter that
    measured it)."""
    points, vendors = [], {}
    groups = {}
    for r in records:
        spec = ROOFLINE_PROBLEMS.get(r["problem"])
        if (spec and r["role"] in ("step", "vendor") and spec[1](r.get("note") or "") and r.get("bytes")
                and r.get("ms_median") and r.get("ok", True)):
            groups.setdefault((r["chapter"], r["problem"]), []).append(r)
    for (chapter, problem), rows in sorted(groups.items()):
        steps = [r for r in rows if r["role"] == "step"]
        if not steps:
            continue
        n = max(r["n"] for r in steps)
        points.append((max((r for r in steps if r["n"] == n), key=roofline_gflops), "step"))
        for r in rows:
            if r["role"] == "vendor" and r["n"] == n:
                vendors[(problem, r["variant"])] = r  # the later chapter's replaces the earlier's
    return points + [(r, "vendor") for r in vendors.values()]


def roofline_ceilings(data, points):
    """[(GFLOP/s, label, line style, record or None)]: chapter 20's mma-roof (bf16); chapter 19's
    library row, or where it is missing the fp32 FMA peak derived from the SM count and clock."""
    out = []
    roofs = [r for r in data["records"] if r["chapter"] == "20" and r["variant"] == "mma-roof"
             and r["role"] == "ceiling" and re.search(r"\bbf16\b", r.get("note") or "") and r.get("tflops")]
    if roofs:
        out.append((roofs[0]["tflops"] * 1000, "tensor cores, bf16 mma.sync: chapter 20's mma-roof (measured)",
                    "-", roofs[0]))
    sgemm = [r for r, kind in points if kind == "vendor" and r["problem"] == "sgemm"]
    if sgemm:
        out.append((roofline_gflops(sgemm[0]), f"fp32 CUDA cores: chapter 19's {sgemm[0]['variant']} SGEMM "
                    "(measured, a vendor kernel, not the peak)", "--", sgemm[0]))
    else:
        m = data["meta"]
        lanes = FP32_LANES_PER_SM.get(m.get("cc"))
        if lanes and m.get("sm_count") and m.get("sm_clock_mhz"):
            out.append((2 * m["sm_count"] * lanes * m["sm_clock_mhz"] * 1e6 / 1e9,
                        f"fp32 FMA peak, 2 x {m['sm_count']} SMs x {lanes} lanes x {m['sm_clock_mhz']:,.0f} MHz: "
                        "derived from the SM count and clock (not measured)", ":", None))
    return out


def roofline_block(attrs, results, order, doc_path, draw):
    wanted = attrs.get("gpu", order[0] if order else None)
    name = resolve_gpu(wanted, results) if wanted else None
    if name not in results:
        raise Missing(f"no results file docs/runs/results/{wanted}*.json")
    data = results[name]
    points = roofline_points(select(data["records"], attrs))
    if not points:
        raise Missing("no record of a problem with floating-point work")
    ceilings = roofline_ceilings(data, points)
    file, title = attrs["file"], attrs.get("title", "")
    if draw:
        draw_roofline(data, points, ceilings, os.path.join(PLOTS, file), title)
    drawn = {r["chapter"] for r, _ in points}
    left = sorted({r["chapter"] for r in data["records"] if r["role"] == "step"} - drawn)
    derived = [label for _, label, _, rec in ceilings if rec is None]
    caption = ("*x: the FLOPs a row must do per byte it must move (sums 1 add per 4-byte element, the dot "
               "product 2 FLOPs per 8 bytes, the fp32 scan 1 add per 8 bytes, GEMM 2mnk over its operands "
               "moved once); y: FLOPs over the median time. Filled: each chapter's fastest step at its "
               "largest size; hollow: the library, once per problem. The slanted roof is the measured "
               "device-to-device copy times x; the flat ones are the compute ceilings measured on this GPU"
               + (" and " + "; ".join(derived) if derived else "") + ". "
               + (f"Not drawn: {chapter_span(left)}, which count no floating-point operations (histograms, "
                  "transposes, top-2, compaction, sorting) or run on several GPUs (14)." if left else "") + "*")
    rel = os.path.relpath(os.path.join(PLOTS, file), os.path.dirname(doc_path))
    rows = [r for r, _ in points] + [rec for _, _, _, rec in ceilings if rec is not None]
    return (f"\n![{title or file}]({rel})\n\n{caption}\n\n"
            + source_line(name, data, doc_path, rows, results) + "\n")


def draw_roofline(data, points, ceilings, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    copy = meta_get(data, "copy_gbps")
    xy = [(roofline_flops(r) / r["bytes"], roofline_gflops(r), r, kind) for r, kind in points]
    top = max([c for c, *_ in ceilings] + [y for _, y, _, _ in xy])
    x_lo = min(x for x, *_ in xy) / 12
    x_hi = max([x for x, *_ in xy] + [c / copy for c, *_ in ceilings]) * 8
    fig, ax = plt.subplots(figsize=(10, 7.4), dpi=110)
    ridge = top / copy
    ax.plot([x_lo, ridge], [copy * x_lo, top], color="#4477aa", lw=2, zorder=2)
    handles = [Line2D([], [], color="#4477aa", lw=2, label=f"memory: measured copy {copy:,.0f} GB/s x FLOP/B")]
    for level, label, ls, _ in ceilings:
        ax.plot([level / copy, x_hi], [level, level], color="black", ls=ls, lw=1.6, zorder=2)
        handles.append(Line2D([], [], color="black", ls=ls, lw=1.6,
                              label=f"{level / 1000:,.1f} TFLOP/s, {label}; ridge at {level / copy:.3g} FLOP/B"))
    chapters = sorted({r["chapter"] for _, _, r, _ in xy})
    for x, y, r, kind in xy:
        color = PALETTE[chapters.index(r["chapter"]) % len(PALETTE)]
        ax.plot([x], [y], marker="o" if kind == "step" else "D", ms=8 if kind == "step" else 9, ls="none",
                color=color, mfc=color if kind == "step" else "none", mew=1.6, zorder=4)
    handles += [Line2D([], [], marker="o", ls="none", color="gray", label="a chapter's fastest step (GFLOP/s)"),
                Line2D([], [], marker="D", ls="none", color="gray", mfc="none", mew=1.6,
                       label="the library (GFLOP/s)")]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(min(y for _, y, _, _ in xy) / 4, top * 3)
    fmt_num = FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    ax.xaxis.set_major_formatter(fmt_num)
    ax.yaxis.set_major_formatter(fmt_num)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of DRAM traffic that must move)")
    ax.set_ylabel("attained GFLOP/s")
    ax.set_title(f"{title}\n{data['meta']['gpu']}", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)
    fig.tight_layout()
    label_columns(ax, fig, xy, {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(chapters)})
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def label_columns(ax, fig, xy, colors):
    """A label per point ("06 two-pass: 765"), stacked without overlap beside each column of points
    that share an x, in its chapter's colour: to the right where the next column (or the plot's edge) is a factor 30
    away, else to the left; a thin line joins a label that had to move to its point. Run after the layout."""
    line_pt, pt_per_px = 10.5, 72 / fig.dpi
    columns = []
    for p in sorted(xy, key=lambda p: (p[0], -p[1])):
        if columns and abs(columns[-1][0][0] / p[0] - 1) < 0.01:
            columns[-1].append(p)
        else:
            columns.append([p])
    for i, col in enumerate(columns):
        room = columns[i + 1][0][0] if i + 1 < len(columns) else ax.get_xlim()[1]
        right = room / col[0][0] > 30
        placed = None
        for x, y, r, kind in sorted(col, key=lambda p: -p[1]):  # the highest first: each label at its point or below the last one
            at = ax.transData.transform((x, y))[1] * pt_per_px
            placed = at if placed is None else min(at, placed - line_pt)
            text = f"{r['chapter']} {r['variant']}" + (" (library)" if kind == "vendor" else "") + f": {y:,.0f}"
            moved = abs(placed - at) > 1
            ax.annotate(text, (x, y), (12 if right else -12, placed - at), textcoords="offset points",
                        ha="left" if right else "right", va="center", fontsize=7, zorder=5, color=colors[r["chapter"]],
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
                        arrowprops={"arrowstyle": "-", "color": "gray", "lw": 0.5, "shrinkA": 0, "shrinkB": 4}
                        if moved else None)


def draw_timeline(attrs, series, results, path, title):
    """kind=timeline: the end-to-end dot product of chapter 12 to scale, from its records' split
    (copy_ms, kernel_ms, ms_median): the pinned call (two copies, then the kernels) above the
    overlapped one (chunks on the copy engine, each chunk's first pass on the SMs)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name, rows = series[0]
    by = {r["variant"]: r for r in rows}
    pin, ovl = by.get("e2e-pinned"), by.get("e2e-overlap")
    if pin is None or ovl is None:
        raise Missing("a timeline needs the e2e-pinned and e2e-overlap rows")
    chunks, streams = int(attrs.get("chunks", "16")), int(attrs.get("streams", "4"))
    colors = ["#4477aa", "#ee6677", "#228833", "#ccbb44"]
    pc, pk, pt = (get(pin, f) for f in ("extra.copy_ms", "extra.kernel_ms", "ms_median"))
    oc, ok, ot = (get(ovl, f) for f in ("extra.copy_ms", "extra.kernel_ms", "ms_median"))
    fig, axes = plt.subplots(2, 1, figsize=(12, 4.8), sharex=True)
    ax = axes[0]
    ax.set_title(f"e2e-pinned: the two copies, then the kernels; the call takes {pt:.4g} ms", fontsize=9, loc="left")
    for k, label in enumerate(("copy of x", "copy of y")):
        ax.barh(1, pc / 2, left=k * pc / 2, color="#4477aa", height=0.6, edgecolor="white")
        ax.text((k + 0.5) * pc / 2, 1, label, ha="center", va="center", fontsize=7, color="white")
    ax.barh(0, pk, left=pc, color="#ee6677", height=0.6)
    ax.annotate(f"kernels: {pk:.3g} ms", (pc + pk, 0), (pc * 0.75, -0.15), fontsize=7,
                arrowprops={"arrowstyle": "->", "lw": 0.6})
    ax = axes[1]
    ax.set_title(f"e2e-overlap: {chunks} chunks, chunk k on stream k % {streams}; the call takes {ot:.4g} ms",
                 fontsize=9, loc="left")
    per_copy, per_kernel = oc / chunks, pk / chunks  # each chunk's first pass: the pinned kernels' time / chunks
    t_sm = 0.0
    for k in range(chunks):
        ax.barh(1, per_copy, left=k * per_copy, color=colors[k % len(colors)], height=0.6, edgecolor="white",
                linewidth=0.3)
        ax.text((k + 0.5) * per_copy, 1, str(k), ha="center", va="center", fontsize=6, color="white")
        start = max((k + 1) * per_copy, t_sm)
        ax.barh(0, per_kernel, left=start, color=colors[k % len(colors)], height=0.6,
                edgecolor=colors[k % len(colors)], linewidth=0.8)  # at least a line wide: to scale, a sliver
        t_sm = start + per_kernel
    ax.barh(0, ok, left=oc, color="black", height=0.6)
    ax.annotate(f"compute after the last chunk: {ok:.3g} ms", (oc + ok, 0), (oc * 0.6, -0.15), fontsize=7,
                arrowprops={"arrowstyle": "->", "lw": 0.6})
    for ax in axes:
        ax.set_yticks([0, 1], ["SMs (kernels)", "copy engine (H2D)"], fontsize=8)
        ax.set_ylim(-0.6, 1.5)
        for s in ("top", "right"):
            ax.spines[s].set_visible(False)
    axes[1].set_xlabel("ms, to scale (each chunk's kernel drawn as the pinned call's kernels / "
                       f"{chunks}: its measured share is not split per chunk)", fontsize=8)
    fig.suptitle(f"{title}\n{results[name]['meta']['gpu']}", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def draw_plot(attrs, series, results, path, title):
    if attrs.get("kind") == "timeline":
        return draw_timeline(attrs, series, results, path, title)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    y = attrs.get("y", "gbps")
    multi = len(series) > 1
    bar = attrs.get("kind", "line") == "bar"
    outside = attrs.get("legend") == "right"
    fig, ax = plt.subplots(figsize=(9.5 if outside else 8, 4.5), dpi=110)
    tops = []  # every value drawn, so that no line is cut off at the top
    every = [r for _, rows in series for r in rows]
    if not bar:
        x = attrs["x"]
        key_field = attrs.get("series", "variant")
        keys = list(dict.fromkeys(str(get(r, key_field)) for r in every))  # a series not a variant: its place here
        numeric = all(isinstance(get(r, x), (int, float)) for r in every)
        cats = None if numeric else list(dict.fromkeys(str(get(r, x)) for r in every))  # x=variant: in the file's order
        at = (lambda r: get(r, x)) if numeric else (lambda r: cats.index(str(get(r, x))))
    for gi, (name, rows) in enumerate(series):
        data = results[name]
        # a line plot's legend names each series once and each GPU once (its line style); a bar plot's bars are the GPUs
        tag = f" ({short_gpu(data)})" if multi and bar else ""
        ls = GPU_STYLES[gi % len(GPU_STYLES)]
        chapters = {r["chapter"] for r in rows}
        if bar:
            # the chapter and the input in each label only where the bars differ in them
            one_chapter = len({r["chapter"] for r in every}) == 1
            one_note = len({r.get("note", "") for r in every}) == 1
            labels = [("" if one_chapter else f"{r['chapter']} ") + r["variant"]
                      + (f"\n{r['note']}" if r.get("note") and not one_note else "") for r in rows]
            width = 0.8 / len(series)
            xs = [i + gi * width for i in range(len(rows))]
            heights = [get(r, y, data) or 0 for r in rows]
            tops += heights
            ax.bar(xs, heights, width=width, label=short_gpu(data) if multi else None, zorder=2)
            ax.set_xticks(range(len(rows)), labels, rotation=35, ha="right", fontsize=8)
        else:
            for key in dict.fromkeys(str(get(r, key_field)) for r in rows):
                pts = sorted((at(r), get(r, y, data)) for r in rows
                             if str(get(r, key_field)) == key and get(r, y, data) is not None)
                if attrs.get("norm") == "first" and pts and pts[0][1]:
                    pts = [(px, py / pts[0][1]) for px, py in pts]  # against the smallest x: a speedup
                color, marker = (variant_style(results, chapters, key) if key_field == "variant" else
                                 (PALETTE[keys.index(key) % len(PALETTE)], MARKERS[keys.index(key) % len(MARKERS)]))
                tops += [p[1] for p in pts]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ms=5, color=color, ls=ls,
                        label=key + tag)
            ax.set_xlabel(x.removeprefix("extra.").replace("_", " "))
            if cats is not None:
                ax.set_xticks(range(len(cats)), cats, rotation=25, ha="right", fontsize=8)
            elif attrs.get("logx") in ("1", "2"):
                ax.set_xscale("log", base=2)
                if x != "n" and attrs["logx"] == "1":  # plain numbers for small counts; 2^k for sizes
                    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        lines = attrs.get("lines", "").split(",")
        if "copy" in lines:
            # the copy ceiling of each run the plotted rows came from
            groups = run_groups(data, chapters)
            for chs, run in groups:
                level = run["copy_gbps"] if y == "gbps" else 100.0 if y == "pct_of_copy" else None
                if level is None:
                    continue
                where = f", {chapter_span(chs)}" if len(groups) > 1 else ""
                tops.append(level)
                ax.axhline(level, color="gray", ls=ls, lw=1.2, zorder=3, label="device-to-device copy" + where + tag)
        if "vendor" in lines:
            scope = {k: v for k, v in attrs.items() if k in ("chapter", "chapters", "problem", "n")}
            libs = {}  # one line per library and input: the latest chapter's measurement
            for r in select(data["records"], {**scope, "role": "vendor"}):
                if "note" not in attrs or r.get("note", "") == attrs["note"]:
                    libs[(r["variant"], r.get("note", ""))] = r
            for (variant, note), r in libs.items():
                level = get(r, y, data)
                tops.append(level)
                ax.axhline(level, color="#cc3311", ls=ls, lw=1.2, zorder=3, label=f"{variant} {note}".strip() + tag)
        for variant in filter(None, attrs.get("hlines", "").split(",")):
            scope = {k: v for k, v in attrs.items() if k in ("chapter", "chapters", "problem", "note")}
            scope.update({k[7:]: v for k, v in attrs.items() if k.startswith("hlines.")})  # hlines.problem=p2p
            for r in select(data["records"], {**scope, "variant": variant}, default_roles=ALL_ROLES)[:1]:
                other = r.get("note") and r.get("note") != attrs.get("note")  # a record of another input names it
                tops.append(get(r, y, data))
                ax.axhline(get(r, y, data), color="black", ls=ls, lw=0.8, zorder=3,
                           label=variant + (f" {r['note']}" if other else "") + tag)
    if attrs.get("ideal") == "1":  # y = x: K GPUs K times as fast as one
        xs = sorted({get(r, attrs["x"]) for _, rows in series for r in rows})
        ax.plot(xs, xs, color="gray", ls=(0, (4, 3)), lw=1, zorder=1, label="ideal: x times the first")
        tops.append(max(xs))
    for spec in filter(None, attrs.get("ylines", "").split(",")):
        level, _, label = spec.partition(":")  # ylines=95:the knee's 95 %
        ax.axhline(float(level), color="black", ls=(0, (1, 2)), lw=1, zorder=3, label=label or level)
        tops.append(float(level))
    if attrs.get("logy") == "1":
        from matplotlib.ticker import LogLocator
        ax.set_yscale("log")
        if tops:
            ax.set_ylim(top=max(tops) * 1.5)
        low, high = ax.get_ylim()
        if high / low < 1e4:  # a few decades: 1, 2 and 5 of each labelled, so that a value can be read off
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    else:
        ax.set_ylim(bottom=0, top=max(tops) * 1.08 if tops else None)
    ax.set_ylabel("speedup over the first point" if attrs.get("norm") == "first"
                  else HEADERS.get(y, y.removeprefix("extra.")))
    gpus = ", ".join(results[n]["meta"]["gpu"] for n, _ in series)
    ax.set_title(f"{title}\n{gpus}", fontsize=10)
    ax.grid(alpha=0.3)
    handles = {}
    for h, label in zip(*ax.get_legend_handles_labels()):
        handles.setdefault(label, h)  # a series or a ceiling once, drawn as on the first GPU
    if multi and not bar:
        from matplotlib.lines import Line2D
        for gi, (name, _) in enumerate(series):
            style = GPU_STYLES[gi % len(GPU_STYLES)]
            handles[short_gpu(results[name])] = Line2D([], [], color="black", lw=1.2, ls=style)
    if outside:
        ax.legend(handles.values(), handles.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1),
                  borderaxespad=0)
    else:
        ax.legend(handles.values(), handles.keys(), fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


# --- rendering -------------------------------------------------------------------------

def placeholder(kind, why):
    if kind in ("value", "word", "build-time"):
        return MISSING
    if kind == "quote":
        return "\n*Not captured yet: a GPU run writes this file.*\n"
    if kind == "class":
        return ("\n*Not measured yet: no class has been graded on a GPU here; `.ci/gpu-run class` grades one "
                "and writes `docs/runs/labs/<gpu>/<track>-class/class.json`.*\n")
    if kind == "code":
        return ("\n*This listing is not part of this copy: its file belongs to another track, or it "
                "shows a later step that holds a lab task's answer.*\n")
    return "\n*Not measured yet: a GPU run of the tour fills this in (see README.md).*\n"


def render(text, results, doc_path, draw, figures=None):
    """Every marker's body, from the data. Values first, in the order of the text (a value named
    with as= can be used by a later value and by any word marker), then the word markers.
    figures, a dict, receives the named figures (name -> number, None where missing): the lint
    reads them."""
    order = gpu_order(results)
    named, errors = {}, []

    def data_of(attrs):
        wanted = attrs.pop("gpu", order[0] if order else None)
        name = resolve_gpu(wanted, results) if wanted else None
        if name not in results:
            raise Missing(f"no results file docs/runs/results/{wanted}*.json")
        return results[name]

    def one(m, words):
        kind, spec = m.group(1), m.group(2)
        if (kind == "word") != words:
            return m.group(0)
        try:
            attrs = parse_attrs(spec)
        except (Failure, ValueError) as e:
            errors.append(f"{os.path.relpath(doc_path, ROOT)}: {kind} marker [{spec[:120]}]: {e}")
            return m.group(0)
        head, tail = f"<!-- {kind}: {spec} -->", f"<!-- end {kind} -->"
        label = attrs.pop("as", None)
        instead = attrs.pop("missing", None)  # a value or word: the text while its data is missing
        if label is not None and (kind != "value" or not label.isidentifier()):
            errors.append(f"{os.path.relpath(doc_path, ROOT)}: {kind} marker [{spec}]: as= names a value marker's "
                          f"figure with an identifier")
            return m.group(0)
        if label is not None and label in named:
            errors.append(f"{os.path.relpath(doc_path, ROOT)}: two figures named {label!r}")
            return m.group(0)
        try:
            if kind == "code":
                body = code_block(attrs, doc_path)
            elif kind == "quote":
                body = quote_block(attrs, doc_path)
            elif kind == "device":
                body = device_block(attrs, results, order, doc_path)
            elif kind == "results":
                body = results_block(attrs, results, order, doc_path)
            elif kind == "runs":
                body = runs_block(attrs, results, order, doc_path)
            elif kind == "build-times":
                body = build_times_block(attrs, doc_path)
            elif kind == "build-time":
                body = build_time_value(attrs)
            elif kind == "skipped":
                body = skipped_block(attrs, doc_path)
            elif kind == "stability":
                body = stability_block(attrs, doc_path)
            elif kind == "class":
                body = class_block(attrs, doc_path)
            elif kind == "plot":
                body = plot_block(attrs, results, order, doc_path, draw)
            elif kind == "word":
                body = word(attrs, data_of(attrs), named)
            else:
                body, raw = value(attrs, data_of(attrs), {**collected, **named})
                if label is not None:
                    named[label] = raw
        except Missing as e:
            warn(doc_path, f"{kind} marker [{spec}] waits for data: {e}")
            body = instead if instead is not None and kind in ("value", "word") else placeholder(kind, e)
            if label is not None:
                named[label] = None
        except (Failure, KeyError, ValueError) as e:
            errors.append(f"{os.path.relpath(doc_path, ROOT)}: {kind} marker [{spec}]: {e}")
            return m.group(0)  # left as it was; the run fails
        return head + body + tail

    # the named figures first, twice, so that a value may use a name defined further down
    for _ in range(2):
        for m in MARKER.finditer(text):
            if m.group(1) != "value" or " as=" not in " " + m.group(2):
                continue
            try:
                attrs = parse_attrs(m.group(2))
                label = attrs.pop("as")
                attrs.pop("missing", None)
                named[label] = value(attrs, data_of(attrs), named)[1]
            except Exception:  # noqa: BLE001 - reported by the pass below
                pass
    collected = dict(named)
    named.clear()

    def first(m):
        body = one(m, False)
        return body

    text = MARKER.sub(first, text)
    for k, v in collected.items():
        named.setdefault(k, v)
    text = MARKER.sub(lambda m: one(m, True), text)
    if figures is not None:
        figures.update(named)
    return text, errors


def runs_report(results):
    """Every run, whether it is on an older commit than the newest run, its note, and (with
    git) the commits since the note's horizon (or since the run) that touched its chapters:
    what a note still has to say."""
    import subprocess
    current = newest_run(results)
    print(f"newest run: {current.get('date')}, commit {current.get('commit')}")
    for name in gpu_order(results):
        for chs, run in run_groups(results[name], results[name]["meta"].get("runs", {})):
            older = is_older(run, current)
            note = find_note(name, chs, run) if older else None
            state = "current" if not older else "NO NOTE" if note is None else f"noted up to {note['upto']}"
            print(f"{name}: {chapter_span(chs)}: {run.get('date')}, commit {run.get('commit')}: {state}")
            if not older:
                continue
            since = note["upto"] if note else run["commit"]
            paths = sorted({p for ch in chs for p in glob.glob(os.path.join(ROOT, "chapters", ch + "_*"))})
            r = subprocess.run(["git", "-C", ROOT, "log", "--oneline", f"{since}..HEAD", "--"]
                               + paths + [os.path.join(ROOT, "common")], capture_output=True, text=True)
            lines = r.stdout.strip().splitlines() if r.returncode == 0 else ["(git log unavailable)"]
            for line in lines:
                print(f"    not in the note yet: {line}")


def unowned_plots(texts):
    """The files in docs/plots that nothing draws: every one must be named by a plot marker
    (docs/generate.py draws it from the results) or by a diagram script (docs/diagrams*.py
    draws it from code, no measured data). A picture made by hand has no place there."""
    if not os.path.isdir(PLOTS):
        return []
    owned = {parse_attrs(m.group(2)).get("file") for text in texts for m in MARKER.finditer(text)
             if m.group(1) == "plot"}
    for script in glob.glob(os.path.join(DOCS, "diagrams*.py")):
        with open(script) as f:
            owned |= set(re.findall(r"[\"']([\w.-]+\.(?:png|svg))[\"']", f.read()))
    return [f"docs/plots/{name}: no plot marker names it and no docs/diagrams*.py draws it"
            for name in sorted(os.listdir(PLOTS)) if name not in owned]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 on any difference")
    ap.add_argument("--lint", action="store_true",
                    help="only lint the rendered pages (docs/lint_docs.py): exit 1 on a hand-written comparative or "
                         "number beside generated figures, a prediction judged on one GPU where the other differs, "
                         "one cause named where the data show several, or a \"—\" explained otherwise")
    ap.add_argument("--lint-selftest", action="store_true",
                    help="the lint must catch each planted wrong example and pass each right one")
    ap.add_argument("--runs", action="store_true", help="list the runs behind the docs and what changed since")
    ap.add_argument("--no-plots", action="store_true", help="do not redraw the plots")
    ap.add_argument("--quiet", action="store_true", help="do not list the markers that wait for data")
    ap.add_argument("files", nargs="*", help="only these markdown files (default: README.md and docs/*.md)")
    args = ap.parse_args()

    if args.lint or args.lint_selftest:
        import lint_docs  # docs/lint_docs.py, beside this file
    if args.lint_selftest:
        return lint_docs.lint_selftest(sys.modules[__name__])
    results = load_results()
    if args.runs:
        runs_report(results)
        return 0
    draw = not args.check and not args.lint and not args.no_plots
    if draw:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("matplotlib not installed: tables only (python3 -m pip install matplotlib for plots)")
            draw = False
    docs = [os.path.abspath(f) for f in args.files] or (
        [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(DOCS, "*.md"))) + sorted(glob.glob(os.path.join(DOCS, "labs", "*.md"))))
    stale, errors, problems, texts = [], [], [], []
    for path in docs:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            old = f.read()
        texts.append(old)
        new, failed = render(old, results, path, draw)
        errors += failed
        if args.lint:
            rel = os.path.relpath(path, ROOT)
            if args.files or not rel.startswith(lint_docs.LINT_PENDING):
                problems += lint_docs.lint(new, rel, sys.modules[__name__], results, path)
            continue
        if new != old:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                with open(path, "w") as f:
                    f.write(new)
    if not args.files:
        errors += unowned_plots(texts)
    if WARNINGS and not args.quiet and not args.lint:
        print(f"warning: {len(WARNINGS)} markers wait for data that no results or evidence file holds yet:")
        for w in WARNINGS:
            print("  ", w)
    for e in errors:
        print("error:", e)
    if args.lint:
        for p in problems:
            print(p)
        print(f"{len(docs)} files linted, {len(problems)} problems (each kind and its fix: docs/lint_docs.py), "
              f"{len(errors)} errors")
        return 1 if problems or errors else 0
    if args.check:
        for s in stale:
            print(f"stale: {s} differs from what docs/generate.py writes from docs/runs/")
        print(f"{len(docs)} files checked, {len(stale)} stale, {len(errors)} errors")
        return 1 if stale or errors else 0
    for s in stale:
        print("updated", s)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
