#!/usr/bin/env python3
"""Chapter 16's single-pass candidates side by side, in one short GPU session (issue 46).

usage: python3 chapters/16_scan/sweep.py BUILD_DIR [--reps N] [--repeat K] [--save FILE]
                                         [--dry-run]

Runs BUILD_DIR/chapters/16_scan once per candidate and size (2^28, then 2^20) with
--type all --json: u32 and f32 in one process, CUB measured in the same process, every
row checked by the program as in its default run. Prints one line per row: the
candidate (step and tile), type and mode, n, GB/s, % of the copy measured by that
process, the ratio to CUB's GB/s in the same process, the median time, the check.
CUB's rows are printed too (one per process: their spread is the run-to-run noise).
A step that is a goal step (lookback-vec, lookback-lean) also has an exclusive row.
Ends with the best candidate per type, mode and size. Exit 0 when every process
exited 0 and every row passed its check; 77 without a GPU; 1 otherwise.
--repeat runs the whole list K times; --save writes every JSON record, each with its
command, to FILE (JSON lines) for the results' evidence. --dry-run runs nothing: it has
the program parse each command (with --list, which needs no GPU) and prints it, PASS or
FAIL (the test 16_scan-sweep-plan: a renamed step or a tile it no longer takes fails).
"""
import argparse
import json
import os
import subprocess
import sys
import time

# (step, extra arguments, why it is here). Each step is the one before with one change
# (scan_latency.cu); the extra tiles separate lookback-lean's two changes.
CANDIDATES = [
    ("lookback-vec", [], "step 8 at its default tile, 4 rows x 256"),
    ("lookback-vec", ["--tile-rows", "8"], "step 8 at the H100 sweep's best tile, 8 x 256"),
    ("lookback-noticket", [], "+ blockIdx.x, no ticket (4 x 256)"),
    ("lookback-early", [], "+ the aggregate published first (4 x 256)"),
    ("lookback-backoff", [], "+ __nanosleep between polls (4 x 256)"),
    ("lookback-backoff", ["--tile-rows", "8"], "the same at 8 x 256"),
    ("lookback-lean", ["--tile-rows", "4", "--block", "256"], "+ launch bounds alone (4 x 256)"),
    ("lookback-lean", [], "+ launch bounds and CUB's tile, 6 x 128"),
    ("lookback-lean", ["--tile-rows", "4", "--block", "128"], "the same at 4 x 128"),
]
SIZES = ["2^28", "2^20"]
SKIP = 77
TIMEOUT_S = 120  # one process; 2^28 takes a few seconds


def tile_of(extra, step):
    """The tile a candidate runs at, as rows x block ("4x256"), from its arguments."""
    rows = extra[extra.index("--tile-rows") + 1] if "--tile-rows" in extra else None
    block = extra[extra.index("--block") + 1] if "--block" in extra else None
    own = ("6", "128") if step == "lookback-lean" else ("4", "256")
    return f"{rows or own[0]}x{block or own[1]}"


def run_one(exe, step, extra, size, reps):
    cmd = [exe, "--n", size, "--type", "all", "--variant", step, "--json"] + extra
    if reps:
        cmd += ["--reps", str(reps)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return cmd, None, [], f"no answer within {TIMEOUT_S} s"
    records = []
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            records.append(json.loads(line))
    return cmd, p.returncode, records, p.stderr.strip()


def fmt_row(name, tile, r, cub):
    vs = r["gbps"] / cub["gbps"] if cub and cub.get("gbps") else float("nan")
    pct = r.get("pct_of_copy")
    return (f"{name:<18} {tile:>6}  {r.get('note', ''):<14} n={r['n']:<10} "
            f"{r['gbps']:8.0f} GB/s  {pct if pct is not None else float('nan'):5.1f}% of copy  "
            f"{vs:5.2f}x CUB  {1000 * r['ms_median']:9.1f} us  {'ok' if r['ok'] else 'FAIL'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--reps", type=int, default=0, help="timed runs per row (the program's default)")
    ap.add_argument("--repeat", type=int, default=1, help="run the whole list this many times")
    ap.add_argument("--save", help="write every JSON record, with its command, to this file")
    ap.add_argument("--dry-run", action="store_true", help="check and print the commands only")
    args = ap.parse_args()
    exe = os.path.join(args.build_dir, "chapters", "16_scan")
    if not os.access(exe, os.X_OK):
        print(f"error: {exe} is not a built program (ninja -C {args.build_dir} chapters/16_scan)")
        return 2
    started, failed, best = time.time(), False, {}
    saved = open(args.save, "w", encoding="utf-8") if args.save and not args.dry_run else None
    for _ in range(args.repeat):
        for size in SIZES:
            for step, extra, why in CANDIDATES:
                tile = tile_of(extra, step)
                if args.dry_run:  # the program parses each command (--list: no GPU needed)
                    cmd = [exe, "--n", size, "--type", "all", "--variant", step, "--json"] + extra
                    p = subprocess.run(cmd + ["--list"], capture_output=True, text=True, timeout=60)
                    print(f"{'PASS' if p.returncode == 0 else 'FAIL'} {' '.join(cmd)}    # {why}")
                    failed = failed or p.returncode != 0
                    continue
                cmd, code, records, err = run_one(exe, step, extra, size, args.reps)
                if code == SKIP:
                    print(err or "skipped: no GPU")
                    return SKIP
                for rec in records:
                    if saved:
                        saved.write(json.dumps(dict(rec, command=" ".join(cmd[1:]))) + "\n")
                results = [r for r in records if r.get("record") == "result"]
                device = next((r for r in records if r.get("record") == "device"), {})
                cubs = {r.get("note"): r for r in results if r["variant"] == "cub"}
                print(f"# {step} {tile} at {size}: {why}; copy {device.get('copy_gbps', 0):.0f} GB/s")
                for r in results:
                    name = r["variant"]
                    print(fmt_row(name, "-" if name == "cub" else tile, r, cubs.get(r.get("note"))))
                    if name != "cub" and r["ok"] and cubs.get(r.get("note")):
                        key = (r.get("note"), r["n"])
                        vs = r["gbps"] / cubs[r.get("note")]["gbps"]
                        if key not in best or vs > best[key][0]:
                            best[key] = (vs, f"{name} {tile}", r["gbps"], r.get("pct_of_copy"))
                    failed = failed or not r["ok"]
                if code != 0 or not results:
                    print(f"FAIL {' '.join(cmd)}: exit {code}; {err.splitlines()[-1] if err else ''}")
                    failed = True
                sys.stdout.flush()
    if saved:
        saved.close()
    if args.dry_run:
        return 1 if failed else 0
    print("# best candidate per input (ratio to CUB in the same process):")
    for (note, n), (vs, name, gbps, pct) in sorted(best.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        print(f"#   {note:<14} n={n:<10} {name:<24} {gbps:8.0f} GB/s  {pct:5.1f}% of copy  {vs:5.2f}x CUB")
    print(f"# {time.time() - started:.0f} s; {'some check or run FAILED' if failed else 'every check ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
