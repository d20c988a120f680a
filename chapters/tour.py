#!/usr/bin/env python3
"""The tour: run every chapter in order at its default size and print one table.

    meson compile -C build tour                            # every chapter
    python3 chapters/tour.py --build-dir build --only 05,06  # some chapters

It asks meson which chapter programs exist (no list to keep here), runs each
with --json, says where it is ("[3/13] 03_reduce_shared (elapsed 41s, est.
remaining 2m10s)": the estimate adds up what this GPU model's last run recorded for
each chapter still to come, and is left out where any of them has no recorded time,
as without a GPU or on a GPU model not measured before), and prints chapter, variant, role, time, GB/s, % of the
measured copy bandwidth, the speedup over the previous stage, over the CPU (all
cores, same problem and size) and over the library, and the parameters that tell
each row apart (block=256 blocks/SM=16 n=2^20, the rules of common/report.cpp).

Run by hand, it first builds the chapter programs (ninja), so that the commit it
records (STEPWISE_COMMIT, else git's HEAD, "+dirty" when the code has
uncommitted changes) is the code that ran. On a GPU it writes
docs/runs/results/<gpu>.json and .csv, <gpu> being the slug of the
GPU's name ("NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3), one file per GPU
model. The meta holds the device record of common/device_query (per-SM limits
included), the host CPU and its core count, driver, CUDA version, commit and
date. The results are written after each chapter, so a run that is stopped (a
time limit, Ctrl-C) keeps the chapters it finished. A run with --only replaces
just the chapters that ran (a skipped chapter keeps its old records) and keeps
the meta of the last full run: what describes
each chapter's own run (date, commit, copy bandwidth, GPUs visible, host) is in
meta["runs"][chapter]. So `--only 14` on a machine with four of the same GPU
adds chapter 14 to the same file. Without a GPU it runs the CPU chapter, says
which chapters it skipped and why, and writes nothing under docs/.
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
import time

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(SOURCE_DIR, "docs", "runs", "results")
SKIP = 77
TABLE_ROLES = ("ceiling", "cpu", "lesson", "vendor", "step", "anti-example")
CHAPTER_TIMEOUT_S = 900

# The meta: what the GPU model is (the same on every machine with this GPU) and
# what one run had (kept per chapter in meta["runs"]). Key names are shared with
# docs/generate.py; device_query --json prints the device ones.
DEVICE_KEYS = ("cc", "sm_count", "memory_gb", "l2_mb", "theoretical_gbps", "warp_size",
               "max_threads_per_sm", "max_threads_per_block", "max_blocks_per_sm", "regs_per_sm",
               "regs_per_block", "smem_per_sm_bytes", "smem_per_block_bytes", "smem_per_block_optin_bytes",
               "mem_bus_bits", "mem_clock_mhz", "sm_clock_mhz")
RUN_KEYS = ("copy_gbps", "driver_cuda", "runtime_cuda", "gpu_count", "topology", "host_cpu", "host_cores", "commit",
            "date")

# The parameters column: the same rules as Report::params in common/report.cpp.
MEASUREMENT_KEYS = ("value", "error", "bound")
MEASUREMENT_PREFIXES = ("graded_",)  # --graded-timing's figures
MEASUREMENT_SUFFIXES = ("_error", "_bound", "_ms", "_s", "_gbps", "_mhz", "_w")
PARAM_ORDER = ("threads", "block", "blocks_per_sm", "blocks", "unroll", "vec", "copies", "p", "launches")
PARAM_LABELS = {"blocks_per_sm": "blocks/SM"}


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


def format_count(v):
    """2^20 for powers of two from 1024, 1e8 for one digit and six or more zeros."""
    if v >= 1024 and v & (v - 1) == 0:
        return f"2^{v.bit_length() - 1}"
    m = re.fullmatch(r"([1-9])(0{6,})", str(v))
    return f"{m.group(1)}e{len(m.group(2))}" if m else str(v)


def is_measurement(key):
    return key in MEASUREMENT_KEYS or key.startswith(MEASUREMENT_PREFIXES) or key.endswith(MEASUREMENT_SUFFIXES)


def param_value(v):
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def params(rec, usual_n=None):
    """What tells a row apart: the note, the settings in extra, n when unusual."""
    note, extra = rec.get("note", ""), rec.get("extra", {})
    parts = [note] if note else []

    def add(text):
        if text not in note:
            parts.append(text)

    shape = "rows" in extra and "cols" in extra
    if shape:
        add(f"{param_value(extra['rows'])}x{param_value(extra['cols'])}")
    keys = [k for k in PARAM_ORDER if k in extra] + sorted(k for k in extra if k not in PARAM_ORDER)
    for k in keys:
        if is_measurement(k) or (shape and k in ("rows", "cols")):
            continue
        add(f"{PARAM_LABELS.get(k, k)}={param_value(extra[k])}")
    if usual_n is not None and rec["n"] != usual_n and "n=" not in note:
        parts.append(f"n={format_count(rec['n'])}")
    return " ".join(parts)


def usual_sizes(records):
    """(chapter, problem) -> the n of its first record: the chapter's default size."""
    usual = {}
    for r in records:
        usual.setdefault((r["chapter"], r["problem"]), r["n"])
    return usual


def duration(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def run_chapter(name, exe):
    """Runs one chapter with --json; returns (records, status text)."""
    if not os.path.exists(exe):
        return [], f"skipped: {exe} is not built"
    try:
        p = subprocess.run([exe, "--json"], capture_output=True, text=True, timeout=CHAPTER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [], f"FAILED (not finished after {CHAPTER_TIMEOUT_S} s)"
    records, notes = [], []
    for line in p.stdout.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("record") == "result":
            records.append(rec)
            mark = "" if rec["ok"] else "   CHECK FAILED"
            usual = usual_sizes(records)[(rec["chapter"], rec["problem"])]
            rate = (f"{rec['tflops']:>9.2f} TFLOP/s" if rec.get("tflops") is not None
                    else f"{rec['gbps'] or 0:>9.1f} GB/s")  # a compute-bound row: its TFLOP/s
            print(f"   {rec['variant']:<34} {rec['ms_median']:>10.4f} ms {rate}  "
                  f"{params(rec, usual)}{mark}", flush=True)
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
    chapter, problem, size and input; vs_cpu with the best CPU baseline (role
    "cpu": all cores) of the same problem and size, and is left out where the CPU
    baseline ran at another n (a launch-bound 2^20 rate over a 2^28 CPU rate means
    nothing).
    """
    cpu_best, vendor = {}, {}
    for r in records:
        g = r.get("gbps") or 0
        if r["role"] == "cpu":
            k = (r["problem"], r["n"])
            cpu_best[k] = max(cpu_best.get(k, 0), g)
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
        cpu = cpu_best.get((r["problem"], r["n"]))
        if r["role"] in ("step", "vendor", "anti-example", "ceiling") and cpu:
            r["vs_cpu"] = round(g / cpu, 4)
    return records


def ratio(v):
    return f"{v:.2f}x" if v else "-"


def print_table(records, device):
    copy = device["copy_gbps"] if device else 0
    rows = [r for r in records if r["role"] in TABLE_ROLES]
    usual = usual_sizes(records)
    print()
    print(f"{'ch':<3} {'variant':<34} {'role':<12} {'ms':>10} {'GB/s':>9} {'%copy':>7} "
          f"{'vs prev':>8} {'vs CPU':>8} {'vs lib':>7} {'check':<6}  parameters")
    for r in rows:
        pct = f"{100 * r['gbps'] / copy:.1f}%" if copy and r.get("gbps") else "-"
        line = (f"{r['chapter']:<3} {r['variant']:<34} {r['role']:<12} "
                f"{r['ms_median']:>10.4f} {r['gbps'] or 0:>9.1f} {pct:>7} {ratio(r.get('vs_prev')):>8} "
                f"{ratio(r.get('vs_cpu')):>8} {ratio(r.get('vs_vendor')):>7} {'ok' if r['ok'] else 'FAILED':<6}  "
                f"{params(r, usual[(r['chapter'], r['problem'])])}")
        print(line.rstrip())


def slug(name):
    """The results file's name for a GPU: "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown-gpu"


def host_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_cores():
    """Logical CPUs: what std::thread::hardware_concurrency (chapter 01's all-cores rows) sees."""
    return os.cpu_count() or 1


CODE_PATHS = ("chapters", "common", "meson.build", "meson.options")  # what the programs are built from


def git_commit():
    """The commit the programs were built from: STEPWISE_COMMIT where set (a GPU machine's
    copy may lack .git or hold a stale one), else HEAD's short hash, with "+dirty" when the
    code has uncommitted changes (then no commit holds what ran)."""
    if os.environ.get("STEPWISE_COMMIT"):
        return os.environ["STEPWISE_COMMIT"]
    p = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if p.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "-C", SOURCE_DIR, "status", "--porcelain", "--untracked-files=no", "--"]
                           + list(CODE_PATHS), capture_output=True, text=True).stdout.strip()
    return p.stdout.strip() + ("+dirty" if dirty else "")


def build(build_dir, programs):
    """Builds the chapter programs first, so that the results come from the tree whose commit
    they record. Under `meson compile tour` meson has built them already (and holds the build
    directory's lock), so this runs only when the tour is started by hand."""
    if "MESONINTROSPECT" in os.environ or not programs:
        return
    targets = [os.path.relpath(exe, build_dir) for _, exe in programs] + [os.path.join("common", "device_query")]
    print(f"building {len(targets)} chapter programs (ninja -C {build_dir})", flush=True)
    p = subprocess.run(["ninja", "-C", build_dir] + targets, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-4000:] + p.stderr[-2000:])
        sys.exit(f"error: the chapter programs do not build in {build_dir}: no results written")


def gpu_topology(gpu_count):
    """How the GPUs are linked, as `nvidia-smi topo -m` prints it (its matrix rows, the legend
    left out), on a machine with more than one GPU; None otherwise or without nvidia-smi."""
    if (gpu_count or 0) < 2:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    rows = [line.rstrip() for line in out.splitlines() if line.startswith(("\t", "GPU", "\x1b[4m"))]
    return [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in rows] or None


def run_meta(device):
    """This run's meta: the device record's figures, then the run's own."""
    meta = {"gpu": device["name"]}
    meta.update({k: device.get(k) for k in DEVICE_KEYS})
    meta.update({
        "copy_gbps": device["copy_gbps"], "driver_cuda": device["driver"], "runtime_cuda": device["runtime"],
        "gpu_count": device.get("gpu_count"), "topology": gpu_topology(device.get("gpu_count")),
        "host_cpu": host_cpu(), "host_cores": host_cores(),
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    })
    return meta


def write_results(device, records, replaced, seconds, partial):
    """Merges this run into docs/runs/results/<gpu>.json and .csv.

    replaced: the chapters whose old records this run replaces (those that wrote
    records); seconds: each chapter's wall time; partial: run with --only.
    """
    os.makedirs(RESULTS_DIR, exist_ok=True)
    base = os.path.join(RESULTS_DIR, slug(device["name"]))
    old, old_meta = [], {}
    now = run_meta(device)
    if os.path.exists(base + ".json"):
        with open(base + ".json") as f:
            data = json.load(f)
        old_meta = data.get("meta", {})
        # A chapter measured on more GPUs than this machine has (chapter 14 on a
        # two-GPU machine) keeps that run: this one measured less of it.
        for ch in sorted(replaced):
            before = old_meta.get("runs", {}).get(ch, {}).get("gpu_count") or 0
            if before > (now.get("gpu_count") or 0):
                print(f"chapter {ch}: the results hold its run on {before} GPUs; kept (this machine has "
                      f"{now.get('gpu_count')})")
                replaced = replaced - {ch}
                records = [r for r in records if r["chapter"] != ch]
        old = [r for r in data["records"] if r["chapter"] not in replaced]
    merged = add_ratios(sorted(old + records, key=lambda r: r["chapter"]))  # stable: keeps run order
    if partial and old_meta:
        # Keep the full run's meta; the GPU model's figures are the same, so fill in any it lacks.
        meta = dict(old_meta)
        for k in ("gpu",) + DEVICE_KEYS:
            if meta.get(k) is None:
                meta[k] = now[k]
    else:
        meta = now
    runs = {ch: run for ch, run in old_meta.get("runs", {}).items() if ch not in replaced}
    for ch in sorted(replaced):
        runs[ch] = {k: now[k] for k in RUN_KEYS}
        runs[ch]["seconds"] = round(seconds.get(ch, 0), 1)
    meta.pop("runs", None)
    meta["runs"] = dict(sorted(runs.items()))
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "records": merged}, f, indent=1)
        f.write("\n")
    fields = ["chapter", "problem", "variant", "role", "note", "n", "bytes", "ms_median", "ms_min", "reps",
              "gbps", "pct_of_copy", "vs_prev", "vs_cpu", "vs_vendor", "ok", "extra",
              "tflops"]  # last: empty for memory-bound rows; the columns before it keep their places
    with open(base + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"# {k}={json.dumps(v, sort_keys=True) if isinstance(v, dict) or v is None else v}"
                    for k, v in meta.items()])
        w.writerow(fields)
        for r in merged:
            w.writerow([json.dumps(r["extra"], sort_keys=True) if k == "extra" and k in r else r.get(k, "")
                        for k in fields])
    return base


def previous_seconds(device):
    """Each chapter's wall time in this GPU's last results, for the estimate of what is left."""
    if not device:
        return {}
    try:
        with open(os.path.join(RESULTS_DIR, slug(device["name"]) + ".json")) as f:
            runs = json.load(f)["meta"].get("runs", {})
        return {ch: run["seconds"] for ch, run in runs.items() if run.get("seconds")}
    except (OSError, ValueError, KeyError):
        return {}


def estimate_left(programs, k, before):
    """Seconds left before the program programs[k] starts: the sum of the wall times that this
    GPU model's last results record for the chapters still to run, or None where any of them
    has none (no GPU, a GPU model not measured before, a chapter never measured on it). No
    guess from the chapters run so far: they say nothing of the rest (without a GPU, chapter
    01 runs for a while and every later chapter skips at once)."""
    left = 0.0
    for name, _ in programs[k:]:
        t = before.get(name[:2])
        if t is None:
            return None
        left += t
    return left


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--only", default="", help="comma list of chapter numbers, e.g. 05,06")
    args = ap.parse_args()
    if "STEPWISE_L2_AHEAD_KIB" in os.environ:  # a sweep's knob: the results hold the code's distance
        print("error: STEPWISE_L2_AHEAD_KIB is set: the tour records the L2 prefetch distance of the "
              "code (kL2AheadBytes); unset it, or change the constant and rebuild")
        return 2

    only = {c.strip().zfill(2) for c in args.only.split(",") if c.strip()}
    programs = [(n, e) for n, e in introspect(args.build_dir) if not only or n[:2] in only]
    build(args.build_dir, programs)
    commit = git_commit()
    if commit == "unknown":
        print("warning: no commit to record (no git here): set STEPWISE_COMMIT=<hash of the tree built>")
    device, why = device_query(args.build_dir)
    if device:
        count = device.get("gpu_count") or 1
        print(f"GPU {device['name']} (sm_{device['cc'].replace('.', '')}), {device['sm_count']} SMs, "
              f"{device['memory_gb']:.1f} GB, L2 {device['l2_mb']:.1f} MB, driver CUDA {device['driver']}"
              + (f"; {count} GPUs visible, chapters run on device 0 unless they use more" if count > 1 else ""))
        print(f"DRAM bandwidth: {device['theoretical_gbps']:.0f} GB/s theoretical, "
              f"{device['copy_gbps']:.0f} GB/s measured device-to-device copy (the 100% of %copy)")
    else:
        print(f"no GPU: {why.removeprefix('skipped: ')}")

    records, status, seconds = [], {}, {}
    before, start = previous_seconds(device), time.monotonic()
    for k, (name, exe) in enumerate(programs):
        left = estimate_left(programs, k, before)
        print(f"[{k + 1}/{len(programs)}] {name} (elapsed {duration(time.monotonic() - start)}"
              + (f", est. remaining {duration(left)})" if left is not None else ")"), flush=True)
        t0 = time.monotonic()
        recs, status[name] = run_chapter(name, exe)
        seconds[name[:2]] = time.monotonic() - t0
        records += recs
        if status[name] != "ok":
            print(f"   {status[name]}")
        if device and recs:  # saved after each chapter: a run stopped later keeps what it measured
            write_results(device, records, {r["chapter"] for r in records}, seconds, partial=True)
    print(f"done in {duration(time.monotonic() - start)}")
    add_ratios(records)
    print_table(records, device)
    print()
    for name, s in status.items():
        if s != "ok":
            print(f"{name}: {s}")
    if device and records:
        replaced = {r["chapter"] for r in records}  # a skipped chapter keeps its old records
        base = write_results(device, records, replaced, seconds, partial=bool(only))
        print(f"results: {os.path.relpath(base, SOURCE_DIR)}.json and .csv "
              f"(python3 docs/generate.py updates the docs from them)")
    elif not device:
        print("nothing written under docs/runs/results: only a GPU run writes results")
    failed = [n for n, s in status.items() if s.startswith("FAILED")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
