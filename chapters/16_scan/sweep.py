#!/usr/bin/env python3
"""The single-pass candidates of chapters 16, 17 and 18 side by side, in one short GPU session (issue 46).

usage: python3 chapters/16_scan/sweep.py BUILD_DIR [--chapter 16|17|18] [--older] [--only STEPS]
                                         [--sizes 2^28,...] [--sort keys|pairs|both]
                                         [--l2-ahead KIB,...] [--reps N] [--repeat K]
                                         [--save FILE] [--dry-run]

Runs the chapter's program once per candidate and size with --json, CUB measured in the
same process, every row checked by the program as in its default run:
  16  BUILD_DIR/chapters/16_scan --type all: u32 and f32, inclusive (and exclusive for a
      goal step); the candidates at 2^28, then some at 2^20 (about 2 minutes)
  17  BUILD_DIR/chapters/17_stream_compaction: keep 1 %, 50 % and 99 % at 2^28 (about
      1.5 minutes)
  18  BUILD_DIR/chapters/18_radix_sort --sort both (--sort picks keys or pairs): the
      onesweep steps at 2^28 and 2^20 (about 10 s a process at 2^28, the CPU's reference
      sort included)
Prints each row as the program measures it: the candidate (step and tile), its input, n,
GB/s and % of the copy measured by that process (chapter 18: GKey/s), the ratio to CUB's
in the same process, the median time, the check. CUB's rows are printed too (one per process: their
spread is the run-to-run noise). Ends with the best candidate per input and size.
--older adds chapter 16's steps 9 to 12 at their tiles (about 1 minute more); --only
keeps the candidates of the steps named (comma-separated); --sizes keeps only these sizes
of each candidate's. --l2-ahead runs each candidate whose step prefetches into the L2
(PREFETCHING) once per distance, in KiB, through the environment's STEPWISE_L2_AHEAD_KIB
(chapters/16_scan/scan_tile_io.cuh), its tile printed with the distance (4x256@8192K); the
other candidates run once. Exit 0 when every process
exited 0 and every row passed its check; 77 without a GPU; 1 otherwise.
--repeat runs the whole list K times; --save writes every JSON record, each with its
command (and the distance, l2_ahead_kib), to FILE (JSON lines) for the results' evidence. --dry-run runs nothing: it has
the program parse each command (with --list, which needs no GPU) and prints it, PASS or
FAIL (the tests 16_scan-sweep-plan, 17_stream_compaction-sweep-plan and
18_radix_sort-sweep-plan: a renamed step
or a tile it no longer takes fails).
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

# Per chapter: (step, extra arguments, why it is here, sizes). Each step is the one
# before with one change; a first row measures the step the new ones build on, in the
# same session. The candidates run size by size, the first size first.
CANDIDATES = {
    "16": [
        ("lookback-lean", [], "step 12, the baseline: CUB's tile 6 x 128", ["2^28", "2^20"]),
        ("lookback-l2-prefetch", [], "+ the input 4 MiB ahead prefetched into the L2 (6 x 128)",
         ["2^28", "2^20"]),
        ("lookback-l2-prefetch", ["--tile-rows", "8", "--block", "128"], "the same at 8 x 128",
         ["2^28"]),
        ("lookback-l2-prefetch", ["--tile-rows", "4", "--block", "256"], "the same at 4 x 256",
         ["2^28"]),
        ("lookback-l2-prefetch", ["--tile-rows", "8", "--block", "256"],
         "the same at 8 x 256 (twice 4 x 256's bytes a tile, the H200's best at 4 MiB)", ["2^28"]),
        ("lookback-prefetch", [], "step 13: persistent, the next tile's loads in registers",
         ["2^28"]),
        ("lookback-async", [], "step 14: the next tile in shared memory by cp.async", ["2^28"]),
        ("lookback-vec", ["--tile-rows", "8"], "step 8 at the H100 sweep's best tile, 8 x 256",
         ["2^28", "2^20"]),
    ],
    "16-older": [
        ("lookback-vec", [], "step 8 at its default tile, 4 rows x 256", ["2^28"]),
        ("lookback-noticket", [], "+ blockIdx.x, no ticket (4 x 256)", ["2^28"]),
        ("lookback-early", [], "+ the aggregate published first (4 x 256)", ["2^28"]),
        ("lookback-backoff", [], "+ __nanosleep before and between polls (4 x 256)", ["2^28"]),
        ("lookback-backoff", ["--tile-rows", "8"], "the same at 8 x 256", ["2^28"]),
        ("lookback-lean", ["--tile-rows", "4", "--block", "256"],
         "+ launch bounds at 4 x 256 (5 blocks an SM, lookback-backoff's 40 registers hold 6)",
         ["2^28"]),
        ("lookback-lean", ["--tile-rows", "4", "--block", "128"], "the same at 4 x 128", ["2^28"]),
    ],
    "17": [
        ("one-pass", ["--tile-rows", "8", "--block", "256"],
         "step 2, the baseline, at the H100 tour's tile 8 x 256", ["2^28"]),
        ("one-pass-staged", ["--tile-rows", "8", "--block", "256"],
         "+ the kept elements through shared memory, 16-byte stores", ["2^28"]),
        ("one-pass-lean", ["--tile-rows", "8", "--block", "256"],
         "+ 64 registers, not 125: twice the blocks an SM", ["2^28"]),
        ("one-pass-backoff", ["--tile-rows", "8", "--block", "256"],
         "+ chapter 16's paused look-back", ["2^28"]),
        ("one-pass-l2-prefetch", ["--tile-rows", "8", "--block", "256"],
         "+ the input 4 MiB ahead prefetched into the L2", ["2^28"]),
        ("one-pass-l2-prefetch", ["--tile-rows", "8", "--block", "128"], "the same at 8 x 128",
         ["2^28"]),
        ("one-pass-l2-prefetch", ["--tile-rows", "4", "--block", "256"], "the same at 4 x 256",
         ["2^28"]),
        ("three-pass", ["--tile-rows", "8", "--block", "256"],
         "step 1 (the goal: one pass at least as fast at every ratio)", ["2^28"]),
    ],
}
BOTH = ["2^28", "2^20"]
CANDIDATES["18"] = [  # steps 2, 4, 5 and 7 dropped after the H100 sweeps at 4c196e1 and 960b449;
    # step 9 at 16 x 384, 20 x 512 and 16 x 512 after the one at f74964a (no gain)
    ("onesweep-ahead", ["--tile-rows", "20", "--block", "384"],
     "the baseline: step 6, the best step at 960b449 (H100, keys 0.75x)", ["2^28"]),
    ("onesweep-lean", ["--tile-rows", "24", "--block", "384"],
     "step 6's tile in fewer instructions and registers a key", ["2^28"]),
    ("onesweep-lean-hist", ["--tile-rows", "24", "--block", "384"],
     "+ step 5's histogram pass", BOTH),
    ("onesweep-lean-hist", ["--tile-rows", "20", "--block", "384"], "the same at 20 x 384", BOTH),
    ("onesweep-packed", ["--tile-rows", "24", "--block", "384"],
     "+ pairs as one 8-byte word in the scratch buffer", BOTH),
    ("onesweep-packed", ["--tile-rows", "20", "--block", "384"], "the same at 20 x 384", ["2^28"]),
]
PROGRAMS = {"16": "16_scan", "17": "17_stream_compaction", "18": "18_radix_sort"}
OWN_TILES = {"lookback-lean": ("6", "128"), "lookback-prefetch": ("6", "128"),
             "lookback-async": ("6", "128"), "lookback-l2-prefetch": ("6", "128")}  # the rest: 4 rows x 256 threads
# The steps whose tiles prefetch the input into the L2 some distance ahead (l2_ahead_tiles).
PREFETCHING = {"lookback-l2-prefetch", "one-pass-l2-prefetch", "onesweep-ahead", "onesweep-pause",
               "onesweep-lean", "onesweep-lean-hist", "onesweep-packed"}
SKIP = 77
TIMEOUT_S = 180  # one process; a 2^28 one takes about 10 s


def tile_of(extra, step):
    """The tile a candidate runs at, as rows x block ("4x256"), from its arguments."""
    rows = extra[extra.index("--tile-rows") + 1] if "--tile-rows" in extra else None
    block = extra[extra.index("--block") + 1] if "--block" in extra else None
    own = OWN_TILES.get(step, ("4", "256"))
    return f"{rows or own[0]}x{block or own[1]}"


def command(exe, chapter, step, extra, size, reps, sort):
    cmd = [exe, "--n", size, "--variant", step, "--json"] + extra
    if chapter == "16":
        cmd[3:3] = ["--type", "all"]
    if chapter == "18":
        cmd[3:3] = ["--sort", sort]
    return cmd + (["--reps", str(reps)] if reps else [])


def measure_of(rec):
    """A row's input (its note, or chapter 18's problem: sort-keys, sort-pairs) and rate
    (GB/s, or chapter 18's GKey/s)."""
    if rec.get("problem", "").startswith("sort"):
        return rec["problem"], rec.get("extra", {}).get("gkeys_s"), "GKey/s"
    return rec.get("note", ""), rec.get("gbps"), "GB/s"


def fmt_row(name, tile, r, vs):
    note, rate, unit = measure_of(r)
    pct = r.get("pct_of_copy")
    copy = f"  {pct:5.1f}% of copy" if unit == "GB/s" and pct is not None else ""
    return (f"{name:<18} {tile:>6}  {note:<14} n={r['n']:<10} "
            f"{rate or float('nan'):8.2f} {unit}{copy}  "
            f"{vs:5.2f}x CUB  {1000 * r['ms_median']:9.1f} us  {'ok' if r['ok'] else 'FAIL'}")


def run_one(cmd, tile, best, saved, ahead=None):
    """Runs one process (with STEPWISE_L2_AHEAD_KIB=ahead when given), printing each row as
    it comes; returns (exit code, rows, stderr)."""
    env = dict(os.environ, STEPWISE_L2_AHEAD_KIB=ahead) if ahead else None
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    timer = threading.Timer(TIMEOUT_S, p.kill)
    timer.start()
    cubs, rows, failed = {}, 0, False
    for line in p.stdout:
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if saved:
            saved.write(json.dumps(dict(rec, command=" ".join(cmd[1:]), l2_ahead_kib=ahead)) + "\n")
        if rec.get("record") == "device":
            print(f"#   copy {rec.get('copy_gbps', 0):.0f} GB/s", flush=True)
        if rec.get("record") != "result" or rec.get("role") == "cpu":
            continue
        rows += 1
        name = rec["variant"]
        note, rate, _ = measure_of(rec)
        if name == "cub":
            cubs[note] = rate
        vs = rate / cubs[note] if rate and cubs.get(note) else float("nan")
        print(fmt_row(name, "-" if name == "cub" else tile, rec, vs), flush=True)
        failed = failed or not rec["ok"]
        key = (note, rec["n"])
        if name != "cub" and rec["ok"] and vs == vs and (key not in best or vs > best[key][0]):
            best[key] = (vs, name, tile, rec)
    err = "\n".join(l for l in p.stderr.read().strip().splitlines() if not l.startswith("note: "))
    code = p.wait()
    timed_out = not timer.is_alive() and code != 0
    timer.cancel()
    if timed_out:
        err = f"no answer within {TIMEOUT_S} s"
    return code, rows, failed, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--chapter", choices=sorted(PROGRAMS), default="16",
                    help="16 (scan), 17 (compaction) or 18 (radix sort)")
    ap.add_argument("--sizes", default="", help="only these sizes of each candidate's (comma-separated)")
    ap.add_argument("--sort", choices=["keys", "pairs", "both"], default="both", help="chapter 18: what to sort")
    ap.add_argument("--older", action="store_true", help="chapter 16: also steps 9 to 12 at their tiles")
    ap.add_argument("--only", default="", help="only the candidates of these steps (comma-separated)")
    ap.add_argument("--l2-ahead", default="",
                    help="the prefetching steps at each of these L2 distances, KiB (comma-separated)")
    ap.add_argument("--reps", type=int, default=0, help="timed runs per row (the program's default)")
    ap.add_argument("--repeat", type=int, default=1, help="run the whole list this many times")
    ap.add_argument("--save", help="write every JSON record, with its command, to this file")
    ap.add_argument("--dry-run", action="store_true", help="check and print the commands only")
    args = ap.parse_args()
    exe = os.path.join(args.build_dir, "chapters", PROGRAMS[args.chapter])
    if not os.access(exe, os.X_OK):
        print(f"error: {exe} is not a built program (ninja -C {args.build_dir} chapters/{PROGRAMS[args.chapter]})")
        return 2
    older = CANDIDATES.get(args.chapter + "-older", [])
    candidates = CANDIDATES[args.chapter] + (older if args.older or args.only else [])
    if args.only:  # from every candidate of the chapter, --older's too
        wanted = set(args.only.split(","))
        unknown = wanted - {c[0] for c in candidates}
        if unknown:
            print(f"error: --only: no candidate of {', '.join(sorted(unknown))} in chapter {args.chapter}")
            return 2
        candidates = [c for c in candidates if c[0] in wanted]
    aheads = args.l2_ahead.split(",") if args.l2_ahead else []
    bad = [a for a in aheads if not a.isdigit() or not 1 <= int(a) <= 65536]
    if bad:
        print(f"error: --l2-ahead: {','.join(bad)}: each distance an integer from 1 to 65536 (KiB)")
        return 2
    sizes = []
    for c in candidates:
        sizes += [s for s in c[3] if s not in sizes]
    if args.sizes:
        sizes = [s for s in sizes if s in args.sizes.split(",")]
    started, failed, best = time.time(), False, {}
    saved = open(args.save, "w", encoding="utf-8") if args.save and not args.dry_run else None
    for _ in range(args.repeat):
        for size in sizes:
            for step, extra, why, its_sizes in candidates:
                if size not in its_sizes:
                    continue
                cmd = command(exe, args.chapter, step, extra, size, args.reps, args.sort)
                for ahead in (aheads if step in PREFETCHING and aheads else [None]):
                    tile = tile_of(extra, step) + (f"@{ahead}K" if ahead else "")
                    env = f"STEPWISE_L2_AHEAD_KIB={ahead} " if ahead else ""
                    if args.dry_run:  # the program parses each command (--list: no GPU needed)
                        p = subprocess.run(cmd + ["--list"], capture_output=True, text=True, timeout=60)
                        print(f"{'PASS' if p.returncode == 0 else 'FAIL'} {env}{' '.join(cmd)}    # {why}")
                        failed = failed or p.returncode != 0
                        continue
                    print(f"# {step} {tile} at {size}: {why}", flush=True)
                    code, rows, bad, err = run_one(cmd, tile, best, saved, ahead)
                    if code == SKIP:
                        print(err or "skipped: no GPU")
                        return SKIP
                    failed = failed or bad
                    if code != 0 or not rows:
                        print(f"FAIL {env}{' '.join(cmd)}: exit {code}; {err.splitlines()[-1] if err else ''}")
                        failed = True
    if saved:
        saved.close()
    if args.dry_run:
        return 1 if failed else 0
    print("# best candidate per input (ratio to CUB in the same process):")
    for _, (vs, name, tile, rec) in sorted(best.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        print(f"#   {fmt_row(name, tile, rec, vs)}")
    print(f"# {time.time() - started:.0f} s; {'some check or run FAILED' if failed else 'every check ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
