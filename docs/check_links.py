#!/usr/bin/env python3
"""Every relative link of the repository's Markdown leads to a file (and heading) it holds.

    python3 docs/check_links.py            # README.md and every tracked .md file
    python3 docs/check_links.py FILE...    # only these

A link [text](target) or an image ![text](target) whose target is not a web address
must name a file or folder of the checkout, relative to the page, and a #heading in a
Markdown target must be one of that page's headings (GitHub's anchors: lower case,
punctuation dropped, spaces as hyphens). Links inside code (`...` and fenced blocks)
are not links. Exit 1 and one line per broken link, else 0.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def markdown_files():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                              "*.md"], capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # no git: every .md under the root
        files = [os.path.relpath(os.path.join(d, f), ROOT) for d, dirs, names in os.walk(ROOT)
                 for f in names if f.endswith(".md")]
    # never what lies in a hidden or a build folder (a copy of another tree, a build's files)
    files = [f for f in files if not any(part.startswith((".", "build")) for part in f.split("/")[:-1])]
    return sorted(f for f in files if os.path.isfile(os.path.join(ROOT, f)))


def slug(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_ANCHORS = {}


def anchors(path):
    if path not in _ANCHORS:
        with open(path, encoding="utf-8") as f:
            text = FENCE.sub("", f.read())
        seen, out = {}, set()
        for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
            s = slug(m.group(1))
            out.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
        out |= set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
        _ANCHORS[path] = out
    return _ANCHORS[path]


def broken(rel):
    path = os.path.join(ROOT, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = CODE.sub(lambda m: " " * len(m.group(0)), text)
    out = []
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
            continue
        line = text.count("\n", 0, m.start()) + 1
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            out.append(f"{rel}:{line}: {target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            out.append(f"{rel}:{line}: {target}: no heading #{anchor} in {os.path.relpath(dest, ROOT)}")
    return out


def main():
    files = [os.path.relpath(os.path.abspath(f), ROOT) for f in sys.argv[1:]] or markdown_files()
    problems = [p for f in files for p in broken(f)]
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
