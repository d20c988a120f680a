#!/usr/bin/env python3
"""Evidence for docs/16_scan.md and docs/21_hopper_gemm.md (issues 46 and 49): one line per
kernel of Nsight Compute metric files (ncu --csv --metrics ...), the median over its profiled
launches: time, the SM clock the kernel ran at (cycles over time, the clocks not locked), its
tensor pipe's active share, the SMs' throughput, and its L2 and DRAM bytes ("-" for a metric
the file does not hold). By hand: it reads files a GPU run wrote.
usage: python3 docs/evidence/ncu_table.py LABEL=FILE.csv[.gz] [LABEL=FILE.csv[.gz] ...]"""
import collections
import csv
import gzip
import statistics
import sys

COLUMNS = [("gpu__time_duration.sum", "us", 1e-3), ("sm__cycles_elapsed.avg.per_second", "GHz", 1e-9),
           ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", "tensor%", 1),
           ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm%", 1),
           ("lts__t_bytes.sum", "L2_GB", 1e-9), ("dram__bytes_read.sum", "dram_read_GB", 1e-9),
           ("dram__bytes_write.sum", "dram_write_GB", 1e-9)]


def main(args):
    print("label kernel launches " + " ".join(name for _, name, _ in COLUMNS))
    for arg in args:
        label, path = arg.split("=", 1)
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            rows = list(csv.DictReader(line for line in f if line.startswith('"')))
        found = collections.defaultdict(lambda: collections.defaultdict(list))
        for r in rows:
            unit = r["Metric Unit"]
            v = float(r["Metric Value"].replace(",", ""))
            scale = {"ms": 1e6, "us": 1e3, "usecond": 1e3, "msecond": 1e6, "nsecond": 1, "ns": 1,
                     "Ghz": 1e9, "Mhz": 1e6, "hz": 1, "cycle/second": 1, "cycle/nsecond": 1e9,
                     "Gbyte": 1e9, "Mbyte": 1e6, "Kbyte": 1e3, "byte": 1, "Tbyte": 1e12}.get(unit, 1)
            kernel = r["Kernel Name"].split("(")[0].removeprefix("void ").replace(" ", "")
            found[kernel][r["Metric Name"]].append(v * scale)
        for kernel, m in found.items():
            cells = []
            for metric, _, scale in COLUMNS:
                vals = m.get(metric)
                cells.append(f"{statistics.median(vals) * scale:.3f}" if vals else "-")
            launches = len(m.get("gpu__time_duration.sum", []))
            print(f"{label} {kernel} {launches} " + " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
