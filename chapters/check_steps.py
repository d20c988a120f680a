#!/usr/bin/env python3
"""A chapter's header must list exactly the steps the program runs.

usage: check_steps.py PROGRAM SOURCE

Reads the "Steps:" entry of SOURCE's opening comment (names separated by commas,
continued on the following comment lines until the next "Label:" or a blank
comment line) and compares it, in order, with what `PROGRAM --list` prints.
It needs no GPU: --list exits before the program looks for one.
"""
import re
import subprocess
import sys


def header_steps(source):
    names, inside = [], False
    for line in open(source, encoding="utf-8"):
        if not line.startswith("//"):
            break
        text = line[2:].strip()
        if re.match(r"^lab [a-z0-9-]+: (hide )?(begin|end)$", text):
            continue  # a lab mark (chapters/labs): a student copy leaves the lines between out
        m = re.match(r"Steps:\s*(.*)$", text)
        if m:
            inside, text = True, m.group(1)
        elif inside and (not text or re.match(r"^[A-Z][\w -]*:\s", text)):
            break
        if inside:
            names += [t.strip() for t in text.split(",") if t.strip()]
    return names


def main():
    program, source = sys.argv[1], sys.argv[2]
    p = subprocess.run([program, "--list"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        print(f"FAIL {program} --list exited {p.returncode}: {p.stderr.strip()}")
        return 1
    listed = [l.strip() for l in p.stdout.splitlines() if l.strip()]
    header = header_steps(source)
    if not listed:
        print(f"FAIL {program} --list printed no steps")
        return 1
    if header != listed:
        print(f"FAIL the header of {source} lists {header or 'no Steps: entry'}")
        print(f"     but {program} --list prints {listed}")
        return 1
    print(f"PASS {len(listed)} steps: {', '.join(listed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
