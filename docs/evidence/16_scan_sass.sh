#!/usr/bin/env bash
# Evidence for docs/16_scan.md (step 15, the lead the distance sweep left): what the u32 and the
# f32 instantiations of the prefetching step's kernel (scan_lookback_l2_prefetch, 4 x 256)
# compile to. For each: its instruction count, the opcodes that differ between the two types,
# and the warp scan's first steps (from its first SHFL.UP on, guards kept). No GPU runs: the
# SASS is the compiler's (cuobjdump -sass of the chapter's program, sm_90).
# usage: bash docs/evidence/16_scan_sass.sh <build_dir>
set -uo pipefail
build=${1:?usage: 16_scan_sass.sh <build_dir>}
obj="$build/chapters/16_scan"  # the program: its kernels, whichever object holds them
echo "# $(nvcc --version | tail -1), $(cuobjdump --version | tail -1)"
for t in j f; do
  name="_ZN4ch1625scan_lookback_l2_prefetchI${t}Li4ELi256EEEvPKT_PS1_lbPyl"
  cuobjdump -sass -fun "$name" "$obj" 2> /dev/null | python3 -c '
import collections, re, sys
t = {"j": "u32", "f": "f32"}[sys.argv[1]]
ins = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", sys.stdin.read())]
ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", i).split()[0].split(".")[0] for i in ins)
print(f"== {t}: scan_lookback_l2_prefetch<{t}, 4 rows, 256 threads>")
print(f"{t} instructions {len(ins)}")
for op in ("SHFL", "SEL", "FSEL", "FADD", "IMAD", "IADD3", "ISETP"):
    print(f"{t} {op} {ops[op]}")
first = next(k for k, i in enumerate(ins) if i.startswith("SHFL.UP"))
print(f"{t}: the warp scan, from its first SHFL.UP:")
for i in ins[first:first + 20]:
    print("   ", i)
' "$t"
done
