#!/usr/bin/env python3
"""Fill the tables, numbers and plots in README.md and docs/*.md from docs/results/.

    python3 docs/generate.py           # rewrite the generated blocks (and plots, with matplotlib)
    python3 docs/generate.py --check   # exit 1 if any block differs from what would be written

Nobody types a measured number: prose and tables hold markers whose bodies this
script writes from the results files that GPU runs of the tour produced.

    <!-- results: chapter=05 -->                      a table of records
    <!-- end results -->
    <!-- value: chapter=06 variant=cub field=gbps --><!-- end value -->   one number
    <!-- value: device=copy_gbps --><!-- end value -->                    a device figure
    <!-- plot: chapter=06 role=sweep x=extra.blocks_per_sm file=06_blocks.png --><!-- end plot -->

Filters: chapter or chapters (05, 02-06, 07,08), role, problem, variant, note, n
(comma lists); gpu=<results file name> picks a results file (default: the newest).
Tables: cols=chapter,variant,note,n,ms_median,ms_min,gbps,pct_of_copy,vs_prev,vs_cpu,
vs_vendor,ok,extra.<key>; best=1 keeps the fastest record per chapter and input.
Values: field=gbps|ms_median|ms_min|pct_of_copy|vs_prev|vs_cpu|vs_vendor|n|extra.<key>.
Plots: kind=line (x=, y=gbps, series=variant) or kind=bar (one bar per record);
lines=copy,vendor draws the measured copy ceiling and the library's result.
"""
import argparse
import glob
import json
import os
import re
import shlex
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)
RESULTS = os.path.join(DOCS, "results")
PLOTS = os.path.join(DOCS, "plots")
MARKER = re.compile(r"<!-- (results|value|plot): (.*?) -->(.*?)<!-- end \1 -->", re.S)
DEFAULT_ROLES = ("ceiling", "cpu", "vendor", "step", "anti-example")
HEADERS = {"chapter": "ch", "variant": "variant", "role": "role", "note": "input", "n": "n",
           "problem": "problem", "bytes": "MB moved", "ms_median": "median ms", "ms_min": "min ms",
           "gbps": "GB/s", "pct_of_copy": "% of copy", "vs_prev": "vs prev stage", "vs_cpu": "vs CPU",
           "vs_vendor": "vs library", "ok": "check"}


class Failure(Exception):
    pass


def load_results():
    files = {}
    for path in sorted(glob.glob(os.path.join(RESULTS, "*.json"))):
        with open(path) as f:
            files[os.path.splitext(os.path.basename(path))[0]] = json.load(f)
    return files


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


def select(records, attrs, default_roles=DEFAULT_ROLES):
    chapters = chapter_set(attrs.get("chapter", attrs.get("chapters", ""))) if (
        "chapter" in attrs or "chapters" in attrs) else None
    roles = attrs["role"].split(",") if "role" in attrs else default_roles
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
        out.append(r)
    if attrs.get("best") == "1":
        best = {}
        for r in out:
            k = (r["chapter"], r["problem"], r.get("note", ""))
            if k not in best or (r.get("gbps") or 0) > (best[k].get("gbps") or 0):
                best[k] = r
        out = [r for r in out if best.get((r["chapter"], r["problem"], r.get("note", ""))) is r]
    return out


def get(record, field):
    if field.startswith("extra."):
        return record.get("extra", {}).get(field[6:])
    return record.get(field)


def fmt(field, v):
    if v is None or v == "":
        return "-"
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
    if field == "pct_of_copy":
        return f"{v:.1f}%"
    if field.startswith("vs_"):
        return f"{v:.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x" if v >= 0.1 else f"{v:.2g}x"
    if field == "extra.value":
        return f"{v:,.2f}"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def source_line(name, data, doc_path):
    m = data["meta"]
    link = os.path.relpath(os.path.join(RESULTS, name + ".json"), os.path.dirname(doc_path))
    return (f"*Measured on {m['gpu']} ({m['sm_count']} SMs), CUDA {m['runtime_cuda']}, {m['date']}; "
            f"measured copy ceiling {fmt('gbps', m['copy_gbps'])} GB/s. Source: [{link}]({link}).*")


def table(attrs, name, data, doc_path):
    rows = select(data["records"], attrs)
    if not rows:
        raise Failure(f"no records match {attrs}")
    if "cols" in attrs:
        cols = attrs["cols"].split(",")
    else:
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
    head = [HEADERS.get(c, c.removeprefix("extra.")) for c in cols]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if c in ("chapter", "variant", "note", "role", "problem") else "---:"
                            for c in cols) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(fmt(c, get(r, c)) for c in cols) + " |")
    return "\n" + "\n".join(lines) + "\n\n" + source_line(name, data, doc_path) + "\n"


def value(attrs, data):
    if "device" in attrs:
        key = {"name": "gpu", "copy_gbps": "copy_gbps", "theoretical_gbps": "theoretical_gbps",
               "sm_count": "sm_count", "l2_mb": "l2_mb", "memory_gb": "memory_gb",
               "date": "date", "runtime": "runtime_cuda", "driver": "driver_cuda",
               "host_cpu": "host_cpu"}[attrs["device"]]
        return fmt(attrs["device"], data["meta"][key])
    field = attrs.get("field", "gbps")
    rows = select(data["records"], attrs, default_roles=DEFAULT_ROLES + ("sweep", "lesson"))
    if len(rows) != 1:
        raise Failure(f"value marker {attrs} matches {len(rows)} records, not 1")
    return fmt(field, get(rows[0], field))


def plot(attrs, name, data, doc_path, draw):
    file = attrs["file"]
    title = attrs.get("title", "")
    rel = os.path.relpath(os.path.join(PLOTS, file), os.path.dirname(doc_path))
    rows = select(data["records"], attrs)
    if not rows:
        raise Failure(f"no records match {attrs}")
    if draw:
        draw_plot(attrs, rows, data, os.path.join(PLOTS, file), title)
    return f"\n![{title or file}]({rel})\n\n" + source_line(name, data, doc_path) + "\n"


def draw_plot(attrs, rows, data, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = attrs.get("y", "gbps")
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    if attrs.get("kind", "line") == "bar":
        labels = [f"{r['chapter']} {r['variant']}" + (f"\n{r['note']}" if r.get("note") else "") for r in rows]
        ax.bar(range(len(rows)), [get(r, y) or 0 for r in rows], color="#4477aa")
        ax.set_xticks(range(len(rows)), labels, rotation=35, ha="right", fontsize=8)
    else:
        x = attrs["x"]
        series = attrs.get("series", "variant")
        for key in dict.fromkeys(str(get(r, series)) for r in rows):
            pts = sorted((get(r, x), get(r, y)) for r in rows if str(get(r, series)) == key)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=key)
        ax.set_xlabel(x.removeprefix("extra."))
        if attrs.get("logx") == "1":
            ax.set_xscale("log", base=2)
    lines = attrs.get("lines", "").split(",")
    if "copy" in lines:
        ax.axhline(data["meta"]["copy_gbps"], color="gray", ls="--", label="device-to-device copy")
    if "vendor" in lines:
        scope = {k: v for k, v in attrs.items() if k in ("chapter", "chapters", "problem", "n")}
        libs = {}  # one line per library and input: the latest chapter's measurement
        for r in select(data["records"], {**scope, "role": "vendor"}):
            if "note" not in attrs or r.get("note", "") == attrs["note"]:
                libs[(r["variant"], r.get("note", ""))] = r
        for (variant, note), r in libs.items():
            ax.axhline(r["gbps"], color="#cc3311", ls=":", label=f"{variant} {note}".strip())
    ax.set_ylim(bottom=0)
    ax.set_ylabel(HEADERS.get(y, y))
    ax.set_title(f"{title}\n{data['meta']['gpu']}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def render(text, results, doc_path, draw):
    newest = max(results, key=lambda k: results[k]["meta"]["date"]) if results else None

    def one(m):
        kind, attrs = m.group(1), parse_attrs(m.group(2))
        name = attrs.pop("gpu", newest)
        if name is None:
            body = "(no results yet: run the tour on a GPU)" if kind == "value" else \
                "\n*No results yet: run the tour on a GPU (see README.md).*\n"
        else:
            if name not in results:
                raise Failure(f"no results file docs/results/{name}.json")
            data = results[name]
            wanted = attrs.get("chapter", attrs.get("chapters"))
            if wanted and not chapter_set(wanted) & {r["chapter"] for r in data["records"]}:
                return f"<!-- {kind}: {m.group(2)} -->" + (
                    "(not measured yet)" if kind == "value" else
                    "\n*Not measured yet: run the tour on a GPU (see README.md).*\n") + f"<!-- end {kind} -->"
            if kind == "results":
                body = table(attrs, name, data, doc_path)
            elif kind == "value":
                body = value(attrs, data)
            else:
                body = plot(attrs, name, data, doc_path, draw)
        return f"<!-- {kind}: {m.group(2)} -->{body}<!-- end {kind} -->"

    return MARKER.sub(one, text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 on any difference")
    ap.add_argument("--no-plots", action="store_true", help="do not redraw the plots")
    ap.add_argument("files", nargs="*", help="only these markdown files (default: README.md and docs/*.md)")
    args = ap.parse_args()

    results = load_results()
    draw = not args.check and not args.no_plots
    if draw:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("matplotlib not installed: tables only (python3 -m pip install matplotlib for plots)")
            draw = False
    docs = [os.path.abspath(f) for f in args.files] or (
        [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(DOCS, "*.md"))))
    stale, errors = [], []
    for path in docs:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            old = f.read()
        try:
            new = render(old, results, path, draw)
        except (Failure, KeyError, ValueError) as e:
            errors.append(f"{os.path.relpath(path, ROOT)}: {e}")
            continue
        if new != old:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                with open(path, "w") as f:
                    f.write(new)
    for e in errors:
        print("error:", e)
    if args.check:
        for s in stale:
            print(f"stale: {s} differs from what docs/generate.py writes from docs/results/")
        print(f"{len(docs)} files checked, {len(stale)} stale, {len(errors)} errors")
        return 1 if stale or errors else 0
    for s in stale:
        print("updated", s)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
