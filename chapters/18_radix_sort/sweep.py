#!/usr/bin/env python3
"""Chapter 18's onesweep steps at several tiles, in one short GPU session (issue 46).

usage: python3 chapters/18_radix_sort/sweep.py BUILD_DIR [--sort keys|pairs|both]
                                               [--only STEPS] [--sizes 2^28,2^20]
                                               [--reps N] [--save FILE] [--dry-run]

Runs BUILD_DIR/chapters/18_radix_sort once per candidate (a step at a tile) and size,
with --variant, --tile-rows, --block and --json: CUB is measured in the same process and
every row checked by the program, as in its default run. Prints each row: the candidate,
keys or pairs, n, GKey/s, the ratio to CUB's GKey/s in that process, the median time, the
check; CUB's rows too (one per process: their spread is the run-to-run noise). Ends with
the best candidate per input and size. About 10 s a process at 2^28 (the reference sort
on the CPU included): about 70 s for the whole list at 2^28 alone, 2 to 3 minutes at both
sizes.
--only keeps the candidates of the steps named (comma-separated). Exit 0 when every
process exited 0 and every row passed its check; 77 without a GPU; 1 otherwise.
--save writes every JSON record, each with its command, to FILE (JSON lines).
--dry-run runs nothing: the program parses each command (with --list, no GPU needed),
PASS or FAIL (the test 18_radix_sort-sweep-plan: a renamed step or a tile the program no
longer takes fails).
"""
import argparse
import json
import os
import subprocess
import sys
import time

# (step, rows, block, why). Each step is the one before with one change; the baseline
# first, in the same session. Steps 2, 4 and 5 were dropped after the H100 sweep at
# 4c196e1 (docs/18): each lost to step 3 at every tile tried.
CANDIDATES = [
    ("onesweep-early", 16, 256, "the baseline: step 3, the best step at 4c196e1 (H100, keys 0.73x)"),
    ("onesweep-ahead", 16, 256, "+ the keys (and values) of a tile 4 MiB ahead prefetched into the L2"),
    ("onesweep-ahead", 24, 256, "the same at 24 x 256"),
    ("onesweep-ahead", 20, 384, "the same at 20 x 384"),
    ("onesweep-pause", 16, 256, "+ pauses before the look-back's first poll and between polls"),
    ("onesweep-pause", 24, 256, "the same at 24 x 256"),
    ("onesweep-pause", 20, 384, "the same at 20 x 384"),
]
SKIP = 77
TIMEOUT_S = 180  # one process


def command(exe, step, rows, block, size, sort, reps):
    cmd = [exe, "--n", size, "--sort", sort, "--variant", step, "--tile-rows", str(rows),
           "--block", str(block), "--json"]
    return cmd + (["--reps", str(reps)] if reps else [])


def run_one(cmd, tile, best, saved):
    """Runs one process and prints its rows; returns (exit code, rows, a row failed, stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 1, 0, True, f"no answer within {TIMEOUT_S} s"
    cub, rows, failed = {}, 0, False
    for line in p.stdout.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if saved:
            saved.write(json.dumps(dict(rec, command=" ".join(cmd[1:]))) + "\n")
        if rec.get("record") != "result" or rec.get("role") == "cpu":
            continue
        rows += 1
        name, problem, gkeys = rec["variant"], rec["problem"], rec.get("extra", {}).get("gkeys_s")
        if name == "cub":
            cub[problem] = gkeys
        vs = gkeys / cub[problem] if gkeys and cub.get(problem) else float("nan")
        print(f"{name:<16} {'-' if name == 'cub' else tile:>6}  {problem:<10} n={rec['n']:<10} "
              f"{gkeys or float('nan'):7.2f} GKey/s  {vs:5.2f}x CUB  {rec['ms_median']:9.3f} ms  "
              f"{'ok' if rec['ok'] else 'FAIL'}", flush=True)
        failed = failed or not rec["ok"]
        key = (problem, rec["n"])
        if name != "cub" and rec["ok"] and vs == vs and (key not in best or vs > best[key][0]):
            best[key] = (vs, f"{name} {tile}", gkeys)
    return p.returncode, rows, failed, p.stderr.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--sort", choices=["keys", "pairs", "both"], default="both")
    ap.add_argument("--only", default="", help="only the candidates of these steps (comma-separated)")
    ap.add_argument("--sizes", default="2^28,2^20", help="the sizes, comma-separated (2^k or a number)")
    ap.add_argument("--reps", type=int, default=0, help="timed runs per row (the program's default)")
    ap.add_argument("--save", help="write every JSON record, with its command, to this file")
    ap.add_argument("--dry-run", action="store_true", help="check and print the commands only")
    args = ap.parse_args()
    exe = os.path.join(args.build_dir, "chapters", "18_radix_sort")
    if not os.access(exe, os.X_OK):
        print(f"error: {exe} is not a built program (ninja -C {args.build_dir} chapters/18_radix_sort)")
        return 2
    candidates = CANDIDATES
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {c[0] for c in CANDIDATES}
        if unknown:
            print(f"error: --only: no candidate of {', '.join(sorted(unknown))}")
            return 2
        candidates = [c for c in CANDIDATES if c[0] in wanted]
    started, failed, best = time.time(), False, {}
    saved = open(args.save, "w", encoding="utf-8") if args.save and not args.dry_run else None
    for size in args.sizes.split(","):
        for step, rows, block, why in candidates:
            tile = f"{rows}x{block}"
            cmd = command(exe, step, rows, block, size, args.sort, args.reps)
            if args.dry_run:  # the program parses each command (--list: no GPU needed)
                p = subprocess.run(cmd + ["--list"], capture_output=True, text=True, timeout=60)
                print(f"{'PASS' if p.returncode == 0 else 'FAIL'} {' '.join(cmd)}    # {why}")
                failed = failed or p.returncode != 0
                continue
            print(f"# {step} {tile} at {size}: {why}", flush=True)
            code, rows_seen, bad, err = run_one(cmd, tile, best, saved)
            if code == SKIP:
                print(err or "skipped: no GPU")
                return SKIP
            failed = failed or bad
            if code != 0 or not rows_seen:
                print(f"FAIL {' '.join(cmd)}: exit {code}; {err.splitlines()[-1] if err else ''}")
                failed = True
    if saved:
        saved.close()
    if args.dry_run:
        return 1 if failed else 0
    print("# best candidate per input (ratio to CUB in the same process):")
    for (problem, n), (vs, name, gkeys) in sorted(best.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        print(f"#   {problem:<10} n={n:<10} {name:<24} {gkeys:7.2f} GKey/s  {vs:5.2f}x CUB")
    print(f"# {time.time() - started:.0f} s; {'some check or run FAILED' if failed else 'every check ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
