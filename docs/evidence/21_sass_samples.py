#!/usr/bin/env python3
"""Evidence for docs/21_hopper_gemm.md (issue 49): where a kernel's warps were when Nsight
Compute sampled them, from its source page as SASS (ncu -i REPORT --page source --csv
--print-source sass), summed by what the instruction does. One line per kernel: its samples,
then each class's share of them in %, then the wgmma shapes its code issues and how many
accumulators (distinct first registers of their results) a warpgroup keeps:
  wgmma-issue   HGMMA (issuing, stalled while the tensor cores' queue is full)
  wgmma-wait    WARPGROUP.DEPBAR (waiting for issued wgmmas to finish)
  mbar-wait     SYNCS.PHASECHK try-waits, the branch that tests their result (within a
                dozen instructions, on the predicate they set) and a sleep
                between polls (a consumer waiting for a stage or its turn, the producer
                waiting for a free stage)
  epilogue      STS, STSM, FENCE, MEMBAR, BAR.SYNC (named barriers), UTMASTG, UTMACMDFLUSH,
                DEPBAR on scoreboard 0, STG (C written: through shared memory or directly)
  cluster-exit  UCGABAR_WAIT (warps with nothing left to do, waiting for the cluster to end)
  other         everything else (addresses, loop control, copies issued)
By hand: it reads files a GPU run wrote.
usage: python3 docs/evidence/21_sass_samples.py LABEL=FILE.csv[.gz] [LABEL=FILE.csv[.gz] ...]"""
import csv
import gzip
import re
import sys

WINDOW = 12  # lines after a try-wait in which a branch on its predicate is its test
CLASSES = ["wgmma-issue", "wgmma-wait", "mbar-wait", "epilogue", "cluster-exit", "other"]
EPILOGUE = re.compile(r"\b(STS|STSM|FENCE|MEMBAR|BAR\.SYNC|UTMASTG|UTMACMDFLUSH|STG)\b|DEPBAR\.LE SB0")


def classify(source, tested):
    if "HGMMA" in source:
        return "wgmma-issue"
    if "WARPGROUP.DEPBAR" in source:
        return "wgmma-wait"
    if "SYNCS.PHASECHK" in source or "NANOSLEEP" in source:
        return "mbar-wait"
    if tested and re.search(r"@!?" + tested + r"\s+BRA\b", source):
        return "mbar-wait"
    if EPILOGUE.search(source):
        return "epilogue"
    if "UCGABAR_WAIT" in source:
        return "cluster-exit"
    return "other"


def main(args):
    print("label samples " + " ".join(CLASSES))
    for arg in args:
        label, path = arg.split("=", 1)
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            rows = list(csv.reader(f))
        head = next(i for i, r in enumerate(rows) if "Source" in r)
        names = rows[head]
        source, samples = names.index("Source"), names.index("Warp Stall Sampling (All Samples)")
        totals = dict.fromkeys(CLASSES, 0.0)
        tested, left = "", 0  # the predicate the last try-wait set, and for how many more lines
        for r in rows[head + 1:]:
            if len(r) <= samples:
                continue
            totals[classify(r[source], tested if left > 0 else "")] += float(r[samples] or 0)
            wait = re.search(r"SYNCS\.PHASECHK\S*\s+(U?P\d)", r[source])
            tested, left = (wait.group(1), WINDOW) if wait else (tested, left - 1)
        whole = sum(totals.values())
        shapes = sorted({m.group(1) for r in rows[head + 1:] if len(r) > source
                         for m in [re.search(r"HGMMA\.(\d+x\d+x\d+)", r[source])] if m})
        accumulators = {m.group(1) for r in rows[head + 1:] if len(r) > source
                        for m in [re.search(r"HGMMA\.\S+\s+(R\d+),", r[source])] if m}
        print(f"{label} {whole:.0f} " + " ".join(f"{100 * totals[c] / whole:.1f}" for c in CLASSES)
              + " wgmma=" + ",".join(shapes) + f" accumulators={len(accumulators)}")


if __name__ == "__main__":
    main(sys.argv[1:])
