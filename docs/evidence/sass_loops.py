#!/usr/bin/env python3
"""The loops of each kernel in `cuobjdump -sass` output, with what each loop issues.

    cuobjdump -sass build/chapters/19_sgemm.p/*.o | python3 docs/evidence/sass_loops.py [NAME_PART ...]

A loop is a backward branch: the instructions from its target to the branch. For each
kernel whose mangled name holds every NAME_PART, prints its instruction count and, per
loop (innermost first), its size and its opcodes by count: how many FFMAs a loop issues
and how many other instructions come with them, the issue slots an FMA-bound kernel
spends on something else. A loop's count includes the loops inside it.
"""
import collections
import re
import sys

FUNCTION = re.compile(r"Function : (\S+)")
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"\bBRA\b.*?(0x[0-9a-f]+)")


def kernels(lines):
    """{mangled name: [(address, instruction text)]}."""
    out, name = {}, None
    for line in lines:
        m = FUNCTION.search(line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name and (m := INSTRUCTION.match(line)):
            out[name].append((int(m.group(1), 16), m.group(2)))
    return out


def opcode(text):
    """'FFMA' of '@P0 FFMA.FTZ R1, ...': the guard and the modifiers dropped."""
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0].split(".")[0]


def main():
    parts = sys.argv[1:]
    for name, code in kernels(sys.stdin).items():
        if not all(p in name for p in parts):
            continue
        print(f"{name}: {len(code)} instructions")
        loops = sorted({(int(m.group(1), 16), addr) for addr, text in code
                        if (m := BRANCH.search(text)) and int(m.group(1), 16) < addr},
                       key=lambda span: span[1] - span[0])
        for first, last in loops:
            body = [opcode(text) for addr, text in code if first <= addr <= last]
            mix = collections.Counter(body).most_common(10)
            print(f"  loop {first:#06x}-{last:#06x}: {len(body)} instructions: "
                  + ", ".join(f"{op} {n}" for op, n in mix))


if __name__ == "__main__":
    main()
