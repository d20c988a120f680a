#!/usr/bin/env python3
"""Every command of a chapter header's "Run:" entry must be accepted by the program.

usage: check_run_lines.py PROGRAM SOURCE
       check_run_lines.py --plant PROGRAM SOURCE   (the check can fail: see PLANTS)

Reads the "Run:" entry of SOURCE's opening comment: the "Run:" line and the indented
comment lines under it, up to the next label or a blank comment line. A command starts on
a line that holds build/chapters/NAME (after a launcher such as launch.py, if any) and goes
on over the lines that start with "[" or "--", or while a bracket is open; any other line
is prose and is not run. In a command:

  [X]        X may be left out; brackets nest: [--verify-only [--large]]
  [X | Y]    X or Y, not both (a "|" between spaces)
  a|b|c      one of the values a, b, c
  K, N, PATH a placeholder (capitals): the option's lowest value or first choice as
             PROGRAM --help gives them (1 for a launcher's option), and for PATH a file

Each command runs with no bracket, with every bracket (the first of each choice), and with
each bracket alone, once per choice in it. build/chapters/NAME becomes PROGRAM (NAME must
be PROGRAM's name), and a launcher that is a file of the repository (launch.py) runs from
there. The GPUs are hidden (CUDA_VISIBLE_DEVICES empty, REQUIRE_GPU unset): a GPU program
checks its options first and then exits 77, so on any machine the test needs no GPU and
takes none from the tests that do. Each run must exit 0 or 77; a CPU program still running
after TIMEOUT_S seconds is past its option checks and is stopped. Exit 2 (bad input) or
any other code fails, naming the header line. An exit 2 that says "this build found no"
(an option of the header that this build leaves out, e.g. --bootstrap mpi without MPI) is
reported as SKIP.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# A program rejects a bad option within milliseconds of its start; a CPU chapter past its
# checks computes with every core, which CI's other tests need: 2 s is ample and wastes little.
TIMEOUT_S = 2
SKIP = 77
NOT_IN_BUILD = "this build found no"


# --- the header ----------------------------------------------------------------------------

def run_entry(source):
    """[(line number, text)] of the Run: entry, "Run:" itself removed."""
    out, inside = [], False
    with open(source, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.startswith("//"):
            break
        body = line[2:]
        if re.match(r"^\s*lab [a-z0-9-]+: (hide )?(begin|end)\s*$", body):
            continue  # a lab mark (chapters/labs): a student copy leaves the lines between out
        m = re.match(r"^ Run:\s*(.*)$", body)
        if m:
            inside = True
            out.append((number, m.group(1).strip()))
        elif inside:
            if not body.startswith("  ") or not body.strip():
                break  # the next label, or a blank comment line
            out.append((number, body.strip()))
    return out


def commands(entry):
    """[(first line, last line, text)] of the commands in the entry; prose is left out."""
    found, current = [], None
    for number, text in entry:
        depth = current[2].count("[") - current[2].count("]") if current else 0
        if current and (depth > 0 or text.startswith(("[", "--"))) and "build/chapters/" not in text:
            current[1], current[2] = number, current[2] + " " + text
            continue
        current = None
        if "build/chapters/" in text:
            current = [number, number, text]
            found.append(current)
    return [tuple(c) for c in found]


def tokens(text):
    return re.findall(r"\[|\]|[^\s\[\]]+", text)


def parse(toks, pos=0, closing=False):
    """A sequence of items: ("tok", text), ("alt", [values]) or ("group", id, [sequences])."""
    alternatives, seq = [], []
    while pos < len(toks):
        t = toks[pos]
        if t == "[":
            inner, pos = parse(toks, pos + 1, True)
            seq.append(["group", None, inner])
            continue
        if t == "]":
            if not closing:
                raise ValueError("a ']' without its '['")
            alternatives.append(seq)
            return alternatives, pos + 1
        if t == "|":
            alternatives.append(seq)
            seq = []
        elif "|" in t:
            seq.append(["alt", t.split("|")])
        else:
            seq.append(["tok", t])
        pos += 1
    if closing:
        raise ValueError("a '[' without its ']'")
    if alternatives:
        raise ValueError("'|' outside brackets")
    return seq, pos


def number_groups(seq, parents=(), groups=None):
    """Gives every group an id; returns {id: (the group, the ids of the groups around it)}."""
    groups = {} if groups is None else groups
    for item in seq:
        if item[0] == "group":
            item[1] = len(groups)
            groups[item[1]] = (item, parents)
            for alternative in item[2]:
                number_groups(alternative, parents + (item[1],), groups)
    return groups


def render(seq, included, choice):
    """The words of seq with the groups in `included`; choice maps id(item) to an index."""
    words = []
    for item in seq:
        if item[0] == "tok":
            words.append(item[1])
        elif item[0] == "alt":
            words.append(item[1][choice.get(id(item), 0)])
        elif item[1] in included:
            words += render(item[2][choice.get(id(item), 0)], included, choice)
    return words


def expansions(seq):
    """The argument lists to run: none of the brackets, all of them, each alone per choice."""
    groups = number_groups(seq)
    runs = [render(seq, set(), {}), render(seq, set(groups), {})]
    top_alts = [item for item in seq if item[0] == "alt"]
    for item in top_alts:
        for k in range(1, len(item[1])):
            runs.append(render(seq, set(), {id(item): k}))
    for gid, (group, parents) in groups.items():
        included = set(parents) | {gid}
        for k, alternative in enumerate(group[2]):
            runs.append(render(seq, included, {id(group): k}))
            for item in alternative:
                if item[0] == "alt":
                    for v in range(1, len(item[1])):
                        runs.append(render(seq, included, {id(group): k, id(item): v}))
    unique = []
    for r in runs:
        if r not in unique:
            unique.append(r)
    return unique


# --- placeholders ----------------------------------------------------------------------------

def option_values(program):
    """{option: a valid value} from PROGRAM --help: the lowest of a range, the first choice."""
    p = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60)
    values = {}
    for opt, rng in re.findall(r"^\s+(--[\w-]+) X .*\(([^()]*)\)\s*$", p.stdout, re.M):
        m = re.fullmatch(r"(-?[\d.e+]+) to (-?[\d.e+]+)", rng)
        if m:
            values[opt] = m.group(1)
        elif "," in rng or re.fullmatch(r"[\w.-]+", rng):
            choices = [c.strip() for c in rng.split(",") if c.strip() != "all"]
            values[opt] = choices[0] if choices else None
    return values


def fill(words, values, a_file):
    """Placeholders replaced: PATH by a file, others by the value of the option before them."""
    out = []
    for k, w in enumerate(words):
        before = words[k - 1] if k else ""
        if re.fullmatch(r"[A-Z][A-Z_]*", w) and w != "PATH":
            w = values.get(before) or "1"
        out.append(re.sub(r"\bPATH\b", lambda _: a_file, w))
    return out


# --- the runs --------------------------------------------------------------------------------

def run(argv, env):
    """(exit code or None when stopped after TIMEOUT_S, stderr)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=TIMEOUT_S)
        return p.returncode, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        return None, err


def check(program, source, say=print):
    """The number of failures; every run and its outcome go to say()."""
    name, root = Path(program).name, source.parents[2]
    entry = run_entry(source)
    if not entry:
        say(f"FAIL {source} has no Run: entry in its opening comment")
        return 1
    found = commands(entry)
    lines_in = {n for first, last, _ in found for n in range(first, last + 1)}
    for number, text in entry:
        if number not in lines_in:
            say(f"note: line {number} is prose, not run: {text}")
    if not any(f"build/chapters/{name}" in text.split() for _, _, text in found):
        say(f"FAIL the Run: entry of {source.name} has no command build/chapters/{name}")
        return 1
    values = option_values(program)
    env = {k: v for k, v in os.environ.items() if k != "REQUIRE_GPU"}
    env["CUDA_VISIBLE_DEVICES"] = ""
    tmp = tempfile.mkdtemp(prefix="run-lines-")
    a_file = str(shutil.copy(source, Path(tmp) / "input.txt"))  # PATH: a file that exists, of some bytes
    failures = total = 0
    try:
        for first, last, text in found:
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            try:
                seq, _ = parse(tokens(text))
            except ValueError as e:
                say(f"FAIL {where}: {e}: {text}")
                failures += 1
                continue
            for words in expansions(seq):
                words = fill(words, values, a_file)
                at = next(k for k, w in enumerate(words) if w.startswith("build/chapters/"))
                if words[at] != f"build/chapters/{name}":
                    say(f"FAIL {where}: names {words[at]}, but this chapter's program is {name}")
                    failures += 1
                    break
                launcher = words[:at]
                if launcher and (root / launcher[0]).is_file():
                    launcher[0] = str(root / launcher[0])
                    if launcher[0].endswith(".py"):
                        launcher.insert(0, sys.executable)
                argv = launcher + [program] + words[at + 1:]
                shown = " ".join(words)
                total += 1
                code, err = run(argv, env)
                last_line = (err.strip().splitlines() or [""])[-1]
                if code in (0, SKIP):
                    say(f"PASS {where}: exit {code}: {shown}")
                elif code is None:
                    say(f"PASS {where}: still running after {TIMEOUT_S} s, past its option checks "
                          f"(stopped): {shown}")
                elif code == 2 and NOT_IN_BUILD in err:
                    why = next(line for line in err.splitlines() if NOT_IN_BUILD in line).strip()
                    say(f"SKIP {where}: {shown}: {why}")
                else:
                    say(f"FAIL {where}: exit {code}{' (bad input)' if code == 2 else ''}: {shown}: "
                          f"{last_line}")
                    failures += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"{total} runs of {len(found)} Run: command(s), {failures} failed")
    return failures


# Added to the end of the first command, each must fail the check, naming its line: an
# option the program lacks; an option twice, only when every bracket is in; the second of
# two alternatives; the second of a choice of values.
PLANTS = [(" [--no-such-option]", "unknown option '--no-such-option'"),
          (" [--seed 1] [--seed 2]", "--seed given twice"),
          (" [--reps 3 | --no-such-option]", "unknown option '--no-such-option'"),
          (" [--seed 1|x]", "--seed expects an integer")]


def plant(program, source):
    """0 when the real header passes and each planted one fails on its planted line."""
    failures = check(program, source, say=lambda _: None) != 0
    print(f"{'FAIL' if failures else 'PASS'} the header as it is")
    _, last, _ = commands(run_entry(source))[0]
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "chapters" / source.parent.name / source.name
        copy.parent.mkdir(parents=True)
        for added, expected in PLANTS:
            planted = list(lines)
            planted[last - 1] = planted[last - 1].rstrip("\n") + added + "\n"
            copy.write_text("".join(planted), encoding="utf-8")
            said = []
            found = check(program, copy, say=said.append) > 0 and any(
                s.startswith("FAIL") and f"{last}:" in s and expected in s for s in said)
            failures += not found
            print(f"{'PASS' if found else 'FAIL'} planted{added}: "
                  f"{'reported' if found else 'not reported'} ({expected}, line {last})")
    return 1 if failures else 0


def main():
    if sys.argv[1] == "--plant":
        return plant(os.path.abspath(sys.argv[2]), Path(sys.argv[3]).resolve())
    return 1 if check(os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()) else 0


if __name__ == "__main__":
    sys.exit(main())
