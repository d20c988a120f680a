#!/usr/bin/env python3
"""The tour: run every chapter in order at its default size and print one table.

    meson compile -C build tour                            # every chapter
    python3 chapters/tour.py --build-dir build --only 05,06  # some chapters

It asks meson which chapter programs exist (no list to keep here), runs each
with --json, and prints chapter, variant, time, GB/s, % of the measured copy
bandwidth, the speedup over the previous stage and over the CPU.

On a GPU it writes docs/results/<gpu>.json and .csv with the GPU, driver, CUDA
version and date; a run with --only replaces just those chapters' records.
Without a GPU it runs the CPU chapter, says which chapters it skipped and why,
and writes nothing under docs/.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(SOURCE_DIR, "docs", "results")
SKIP = 77
TABLE_ROLES = ("ceiling", "cpu", "vendor", "step", "anti-example")
CHAPTER_TIMEOUT_S = 900


def introspect(build_dir):
    """The built chapter programs, in chapter order, from meson's own target list."""
    cmd = shlex.split(os.environ["MESONINTROSPECT"]) if "MESONINTROSPECT" in os.environ else ["meson", "introspect"]
    out = subprocess.run(cmd + ["--targets", build_dir], check=True, capture_output=True, text=True).stdout
    programs = []
    for t in json.loads(out):
        if t["type"] == "executable" and re.match(r"^\d\d_", t["name"]) and "chapters" in t["defined_in"]:
            programs.append((t["name"], t["filename"][0]))
    return sorted(programs)


def device_query(build_dir):
    """The device record, or (None, reason) without a usable GPU."""
    exe = os.path.join(build_dir, "common", "device_query")
    p = subprocess.run([exe, "--json"], capture_output=True, text=True)
    if p.returncode == 0:
        return json.loads(p.stdout.strip().splitlines()[-1]), None
    return None, (p.stderr.strip() or f"device_query exited {p.returncode}")


def run_chapter(name, exe):
    """Runs one chapter with --json; returns (records, status text)."""
    print(f"== {name}", flush=True)
    p = subprocess.run([exe, "--json"], capture_output=True, text=True, timeout=CHAPTER_TIMEOUT_S)
    records, notes = [], []
    for line in p.stdout.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("record") == "result":
            records.append(rec)
            mark = "" if rec["ok"] else "   CHECK FAILED"
            print(f"   {rec['variant']:<34} {rec.get('note', ''):<16} {rec['ms_median']:>10.4f} ms "
                  f"{rec['gbps'] or 0:>9.1f} GB/s{mark}", flush=True)
        elif rec.get("record") == "note":
            notes.append(rec["text"])
    if p.returncode == SKIP:
        why = (p.stderr.strip().splitlines() or ["no reason given"])[-1]
        return [], "skipped: " + why.removeprefix("skipped: ")
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        return records, f"FAILED (exit {p.returncode})"
    return records, "ok"


def add_ratios(records):
    """vs_vendor, vs_prev and vs_cpu, as throughput ratios (records in tour order).

    vs_prev compares a step with the step before it in the tutorial: the previous
    row of the same chapter, or the last step of an earlier chapter, for the same
    problem, size and input (note). vs_vendor compares with the library in the same
    chapter, problem, size and input; vs_cpu with the best CPU baseline.
    """
    cpu_best, vendor = {}, {}
    for r in records:
        g = r.get("gbps") or 0
        if r["role"] == "cpu":
            cpu_best[r["problem"]] = max(cpu_best.get(r["problem"], 0), g)
        elif r["role"] == "vendor":
            vendor[(r["chapter"], r["problem"], r["n"], r.get("note", ""))] = g
    last_step = {}  # (problem, n, note) -> GB/s of the latest step
    for r in records:
        g = r.get("gbps") or 0
        for name in ("vs_vendor", "vs_prev", "vs_cpu"):
            r.pop(name, None)
        lib = vendor.get((r["chapter"], r["problem"], r["n"], r.get("note", "")))
        if lib and r["role"] != "vendor":
            r["vs_vendor"] = round(g / lib, 4)
        k = (r["problem"], r["n"], r.get("note", ""))
        if r["role"] in ("step", "anti-example") and last_step.get(k):
            r["vs_prev"] = round(g / last_step[k], 4)
        if r["role"] == "step":
            last_step[k] = g
        if r["role"] in ("step", "vendor", "anti-example", "ceiling") and cpu_best.get(r["problem"]):
            r["vs_cpu"] = round(g / cpu_best[r["problem"]], 4)
    return records


def ratio(v):
    return f"{v:.2f}x" if v else "-"


def print_table(records, device):
    copy = device["copy_gbps"] if device else 0
    rows = [r for r in records if r["role"] in TABLE_ROLES]
    print()
    print(f"{'ch':<3} {'variant':<34} {'note':<16} {'role':<8} {'ms':>10} {'GB/s':>9} {'%copy':>7} "
          f"{'vs prev':>8} {'vs CPU':>8} {'vs lib':>7} check")
    for r in rows:
        pct = f"{100 * r['gbps'] / copy:.1f}%" if copy and r.get("gbps") else "-"
        print(f"{r['chapter']:<3} {r['variant']:<34} {r.get('note', '')[:16]:<16} {r['role'][:8]:<8} "
              f"{r['ms_median']:>10.4f} {r['gbps'] or 0:>9.1f} {pct:>7} {ratio(r.get('vs_prev')):>8} "
              f"{ratio(r.get('vs_cpu')):>8} {ratio(r.get('vs_vendor')):>7} {'ok' if r['ok'] else 'FAILED'}")


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def host_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit():
    p = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else "unknown"


def write_results(device, records, ran_chapters):
    os.makedirs(RESULTS_DIR, exist_ok=True)
    base = os.path.join(RESULTS_DIR, slug(device["name"]))
    old = []
    if os.path.exists(base + ".json"):
        with open(base + ".json") as f:
            old = [r for r in json.load(f)["records"] if r["chapter"] not in ran_chapters]
    merged = add_ratios(sorted(old + records, key=lambda r: r["chapter"]))  # stable: keeps run order
    meta = {
        "gpu": device["name"], "cc": device["cc"], "sm_count": device["sm_count"],
        "memory_gb": device["memory_gb"], "l2_mb": device["l2_mb"],
        "theoretical_gbps": device["theoretical_gbps"], "copy_gbps": device["copy_gbps"],
        "driver_cuda": device["driver"], "runtime_cuda": device["runtime"],
        "host_cpu": host_cpu(), "commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "records": merged}, f, indent=1)
        f.write("\n")
    fields = ["chapter", "problem", "variant", "role", "note", "n", "bytes", "ms_median", "ms_min", "reps",
              "gbps", "pct_of_copy", "vs_prev", "vs_cpu", "vs_vendor", "ok", "extra"]
    with open(base + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"# {k}={v}" for k, v in meta.items()])
        w.writerow(fields)
        for r in merged:
            w.writerow([json.dumps(r["extra"], sort_keys=True) if k == "extra" and k in r else r.get(k, "")
                        for k in fields])
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--only", default="", help="comma list of chapter numbers, e.g. 05,06")
    args = ap.parse_args()

    only = {c.strip().zfill(2) for c in args.only.split(",") if c.strip()}
    programs = [(n, e) for n, e in introspect(args.build_dir) if not only or n[:2] in only]
    device, why = device_query(args.build_dir)
    if device:
        print(f"GPU {device['name']} (sm_{device['cc'].replace('.', '')}), {device['sm_count']} SMs, "
              f"{device['memory_gb']:.1f} GB, L2 {device['l2_mb']:.1f} MB, driver CUDA {device['driver']}")
        print(f"DRAM bandwidth: {device['theoretical_gbps']:.0f} GB/s theoretical, "
              f"{device['copy_gbps']:.0f} GB/s measured device-to-device copy (the 100% of %copy)")
    else:
        print(f"no GPU: {why.removeprefix('skipped: ')}")

    records, status = [], {}
    for name, exe in programs:
        recs, status[name] = run_chapter(name, exe)
        records += recs
        if status[name] != "ok":
            print(f"   {status[name]}")
    add_ratios(records)
    print_table(records, device)
    print()
    for name, s in status.items():
        if s != "ok":
            print(f"{name}: {s}")
    if device and records:
        base = write_results(device, records, {n[:2] for n, _ in programs})
        print(f"results: {os.path.relpath(base, SOURCE_DIR)}.json and .csv "
              f"(python3 docs/generate.py updates the docs from them)")
    elif not device:
        print("nothing written under docs/results: only a GPU run writes results")
    failed = [n for n, s in status.items() if s.startswith("FAILED")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
