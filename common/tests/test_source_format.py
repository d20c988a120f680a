#!/usr/bin/env python3
"""The C++ and CUDA sources are formatted as .clang-format says, and every chapter
file is at most MAX_LINES lines once formatted (a chapter reads top to bottom in
five minutes; wide lines do not count as short).

    python3 common/tests/test_source_format.py [--root DIR] [--plant]

Checks every .cu, .cuh, .h, .hpp and .cpp file under chapters/ and common/: a file
whose text differs from `clang-format --style=file`'s output is listed (fix it with
`clang-format -i --style=file FILE`), and so is a file under chapters/ longer than
MAX_LINES formatted lines. It only reads: CI checks, it does not rewrite.

clang-format's output changes between major versions, so the check needs the one CI
installs (Debian 12's clang-format, major version CLANG_FORMAT_MAJOR); with another
or none it prints one line and exits 77 (meson: skipped). CLANG_FORMAT names the
binary to use.

--plant checks a scratch tree holding one unformatted file and one chapter file of
MAX_LINES + 1 lines, and exits 0 only if both are found: the check can fail.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MAX_LINES = 320
CLANG_FORMAT_MAJOR = 14
SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp")
FOLDERS = ("chapters", "common")
ROOT = Path(__file__).resolve().parents[2]


def find_clang_format():
    """(binary, None) or (None, why)."""
    names = [os.environ["CLANG_FORMAT"]] if os.environ.get("CLANG_FORMAT") else \
        ["clang-format", f"clang-format-{CLANG_FORMAT_MAJOR}"]
    found = []
    for name in names:
        exe = shutil.which(name)
        if not exe:
            continue
        out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", out)
        if m and int(m.group(1)) == CLANG_FORMAT_MAJOR:
            return exe, None
        found.append(f"{name} {m.group(1) if m else '?'}")
    return None, (f"clang-format {CLANG_FORMAT_MAJOR} is needed (Debian 12: apt-get install clang-format); "
                  + (f"found {', '.join(found)}" if found else "none found"))


def sources(root):
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(root / folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("build", ".")))
            for name in sorted(filenames):
                if name.endswith(SUFFIXES):
                    yield Path(dirpath) / name


def check(root, exe):
    """The problems, one line each."""
    def one(path):
        text = path.read_text()
        formatted = subprocess.run([exe, "--style=file", str(path)], cwd=root, capture_output=True,
                                   text=True).stdout
        rel = path.relative_to(root)
        found = []
        if formatted != text:
            found.append(f"{rel}: not formatted (clang-format -i --style=file {rel})")
        lines = formatted.count("\n")
        if rel.parts[0] == "chapters" and lines > MAX_LINES:
            found.append(f"{rel}: {lines} lines formatted, more than {MAX_LINES}")
        return found

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return [line for found in pool.map(one, list(sources(root))) for line in found]


def plant(exe):
    """A scratch tree with one problem of each kind: both must be reported."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copy(ROOT / ".clang-format", tmp / ".clang-format")
        (tmp / "common").mkdir()
        (tmp / "common" / "untidy.h").write_text("int  f( int x ){return x;}\n")
        (tmp / "chapters" / "99_long").mkdir(parents=True)
        (tmp / "chapters" / "99_long" / "long.cu").write_text(
            "".join(f"int v{k} = {k};\n" for k in range(MAX_LINES + 1)))
        found = check(tmp, exe)
        want = ["common/untidy.h: not formatted", f"chapters/99_long/long.cu: {MAX_LINES + 1} lines"]
        missed = [w for w in want if not any(line.startswith(w) for line in found)]
        print("\n".join(found))
        if missed:
            print(f"FAIL the planted problems were not all found: {missed}")
            return 1
        print("ok: both planted problems found")
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the tree to check (default: this repository)")
    ap.add_argument("--plant", action="store_true", help="check a scratch tree with planted problems")
    args = ap.parse_args()
    exe, why = find_clang_format()
    if not exe:
        print(f"SKIP {why}")
        return 77
    if args.plant:
        return plant(exe)
    found = check(args.root.resolve(), exe)
    count = sum(1 for _ in sources(args.root.resolve()))
    print("\n".join(found))
    print(f"{count} sources checked: {len(found)} problems" + ("" if found else
          f" (formatted as .clang-format says; every chapter file at most {MAX_LINES} lines)"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
