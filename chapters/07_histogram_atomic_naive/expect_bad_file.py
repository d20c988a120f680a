#!/usr/bin/env python3
"""A bad --file must exit 2 with one line that names --file, GPU or not.

usage: CHAPTER_EXE=PROGRAM expect_bad_file.py   (chapters/meson.build sets it)

Runs PROGRAM --file X, with and without --verify-only, for X a directory, a
missing path, an empty file and (where it exists) /dev/null: each must exit 2,
print nothing on stdout and exactly one line on stderr containing "--file".
The check comes before the program looks for a GPU, so this test needs none.
"""
import os
import subprocess
import sys
import tempfile


def main():
    program = os.environ["CHAPTER_EXE"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.bin")
        open(empty, "wb").close()
        cases = [(tmp, "is a directory"), (os.path.join(tmp, "missing.bin"), "No such file"),
                 (empty, "is empty")]
        if os.path.exists("/dev/null"):
            cases.append(("/dev/null", "not a regular file"))
        for path, why in cases:
            for extra in ([], ["--verify-only"]):
                args = [program, "--file", path] + extra
                p = subprocess.run(args, capture_output=True, text=True, timeout=60)
                lines = [l for l in p.stderr.splitlines() if l.strip()]
                ok = (p.returncode == 2 and not p.stdout.strip() and len(lines) == 1 and "--file" in lines[0]
                      and why in lines[0])
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} --file {path} {' '.join(extra)}: exit {p.returncode}: "
                      f"{p.stderr.strip()}")
    print(f"{2 * len(cases)} bad --file cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
