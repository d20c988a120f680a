"""The marks: which lines of a chapter source are a student's, and the stubs that replace them.

A region is a run of lines between two marks; its body is the lines between them:

    // lab <task>: begin
    ...the reference code...
    // lab <task>: end

A later step of a chapter that holds a task's answer is wrapped in `hide` marks;
the student copy of that task's track leaves those lines out:

    // lab <task>: hide begin
    ...a later kernel, its launcher, its row of the step table...
    // lab <task>: hide end

In the docs, text that shows a task's answer is wrapped the same way in HTML
comments (`<!-- lab <task>: begin -->` ... `<!-- lab <task>: end -->`); the copy
shows a pointer to the handout instead. A handout's notes for instructors are
wrapped in `<!-- lab instructor: begin/end -->` and left out.
"""
import hashlib
import re
from pathlib import Path

MARK = re.compile(r"^(?P<indent>\s*)// lab (?P<task>[a-z0-9-]+): (?P<hide>hide )?(?P<what>begin|end)\s*$")
DOC_MARK = re.compile(r"^\s*<!-- lab (?P<task>[a-z0-9-]+): (?P<what>begin|end) -->\s*$")
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".h")


def find_regions(lines, hidden=False):
    """[(task, begin index, end index, indent)] of the marked regions in a file's lines
    (of the `hide` blocks with hidden=True). Raises ValueError on unbalanced marks."""
    out, open_ = [], None
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m or bool(m["hide"]) != hidden:
            continue
        if m["what"] == "begin":
            if open_:
                raise ValueError(f"line {i + 1}: 'lab {m['task']}: begin' inside region {open_[0]}")
            open_ = (m["task"], i, m["indent"])
        else:
            if not open_ or open_[0] != m["task"]:
                raise ValueError(f"line {i + 1}: 'lab {m['task']}: end' without its begin")
            out.append((open_[0], open_[1], i, open_[2]))
            open_ = None
    if open_:
        raise ValueError(f"region {open_[0]} is not closed")
    return out


def wrap(text, indent, prefix, width=92):
    """Comment lines of at most `width` characters after the indent (the same breaks at any indent)."""
    lines, cur = [], ""
    for w in text.split():
        lead = prefix if not lines else "//   "
        if cur and len(lead) + len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return [f"{indent}{prefix if k == 0 else '//   '}{line}" for k, line in enumerate(lines)]


def stub_body(task, region, indent):
    """The lines that replace a region's body in a student copy."""
    body = wrap(region.text, indent, f"// TODO(lab {task.id}): ")
    body += wrap("Hint: " + region.hint, indent, "//   ")
    body += [indent + line for line in region.stub.splitlines() if line.strip()]
    return body


def file_regions(path, task_id=None):
    """{task: [body lines, ...]} of one file (bodies without the mark lines)."""
    lines = Path(path).read_text().split("\n")
    out = {}
    for t, b, e, _ in find_regions(lines):
        if task_id is None or t == task_id:
            out.setdefault(t, []).append(lines[b + 1:e])
    return out


def task_bodies(root, task):
    """The task's region bodies in `root`, in the order of task.regions; None where missing."""
    per_file = {}
    bodies = []
    for region in task.regions:
        if region.file not in per_file:
            try:
                per_file[region.file] = file_regions(Path(root) / region.file, task.id).get(task.id, [])
            except (OSError, ValueError):
                per_file[region.file] = []
        found = per_file[region.file]
        bodies.append(found.pop(0) if found else None)
    return bodies


def region_starts(root, task):
    """[(file, first body line number (1-based), body)] of the task's regions in `root`."""
    out = []
    for f in dict.fromkeys(r.file for r in task.regions):
        try:
            lines = (Path(root) / f).read_text().split("\n")
            regions = find_regions(lines)
        except (OSError, ValueError):
            continue
        out += [(f, b + 2, lines[b + 1:e]) for t, b, e, _ in regions if t == task.id]
    return out


def same_lines(lines):
    return "\n".join(line.strip() for line in lines if line.strip())


def stub_status(root, task):
    """("FAIL", why) for damaged marks, ("NOT_IMPLEMENTED", where) for a region that is
    still its stub, or (None, "")."""
    bodies = task_bodies(root, task)
    if any(b is None for b in bodies):
        return "FAIL", "the region marks of this task are missing or damaged; restore the '// lab' lines"
    todo = [k for k, (b, r) in enumerate(zip(bodies, task.regions)) if same_lines(b) == same_lines(stub_body(task, r, ""))]
    if todo:
        where = ", ".join(f"{task.regions[k].file} (region {k + 1} of {len(task.regions)})" for k in todo)
        return "NOT_IMPLEMENTED", f"still the stub: {where}"
    return None, ""


def sources_digest(root, task):
    """[(path, sha256)] of each file that holds the task's regions."""
    out = []
    for f in dict.fromkeys(r.file for r in task.regions):
        p = Path(root) / f
        out.append((f, hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else "missing"))
    return out


def replace_bodies(path, task_id, bodies):
    """Puts `bodies` (lists of lines) into the task's regions of one file, in order."""
    lines = Path(path).read_text().split("\n")
    regions = [r for r in find_regions(lines) if r[0] == task_id]
    if len(regions) != len(bodies):
        raise ValueError(f"{path}: {len(regions)} regions of {task_id}, {len(bodies)} bodies given")
    for (t, b, e, _), body in reversed(list(zip(regions, bodies))):
        lines[b + 1:e] = body
    Path(path).write_text("\n".join(lines))


def drop_hidden(text, task_ids):
    """The text of a source without the `hide` blocks of these tasks (marks included)."""
    lines = text.split("\n")
    for t, b, e, _ in reversed(find_regions(lines, hidden=True)):
        if t in task_ids:
            del lines[b:e + 1]
    return "\n".join(lines)


def redact_doc(text, pointer):
    """A doc without the content between `<!-- lab T: begin/end -->` marks: each block
    gives way to pointer(task)."""
    lines, out, inside = text.split("\n"), [], None
    for line in lines:
        m = DOC_MARK.match(line)
        if m and m["what"] == "begin" and inside is None:
            inside = m["task"]
            if inside != "instructor":  # instructors' notes go without a word
                out.append(pointer(inside))
        elif m and m["what"] == "end" and inside == m["task"]:
            inside = None
        elif inside is None:
            out.append(line)
    return "\n".join(out)
