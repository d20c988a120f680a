#!/usr/bin/env python3
"""Runs every cell of notebooks/colab.ipynb with nbclient, as Colab would, in this checkout.

    python3 notebooks/check_notebook.py [--build-dir build] [--timeout 1800]

It reuses the build folder (the README's commands made it: the notebook's build cell
then has nothing to compile). Without a GPU the GPU cells print "skipped: ..."; with
one they run the tour and a lab check. Prints each cell's output, then one line:
"notebook: N cells ran, K skipped (no GPU)" and exits 0, or names the failing cell
and exits 1. Needs nbclient, nbformat and ipykernel (python3 -m pip install ...).

Why not a meson test: the notebook drives meson itself (setup, compile, the tour),
which must not run from inside `meson test` on the same build folder, and on a GPU
its tour writes docs/runs/results/. .ci/run runs it after the README's commands, and
.ci/gpu-run has a step `notebook` for the GPU machine.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build", help="relative to the repository (default: build)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    args = ap.parse_args()
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
    except ImportError as e:
        print(f"notebook: cannot run it ({e}): python3 -m pip install nbclient nbformat ipykernel")
        return 1
    path = os.path.join(HERE, "colab.ipynb")
    nb = nbformat.read(path, as_version=4)
    os.environ["STEPWISE_BUILD_DIR"] = args.build_dir
    client = NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                            resources={"metadata": {"path": ROOT}})
    failed = None
    try:
        client.execute()
    except CellExecutionError as e:
        failed = str(e).strip().splitlines()
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    ran = skipped = 0
    for k, cell in enumerate(code_cells, 1):
        text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if cell.get("execution_count") is None and not errors:
            continue  # not reached: an earlier cell failed
        ran += 1
        skipped += any(line.startswith("skipped:") for line in text.splitlines())
        print(f"--- cell {k}: {cell.source.splitlines()[0]}")
        print(text.rstrip())
        for o in errors:
            print(f"ERROR {o.get('ename')}: {o.get('evalue')}")
    if failed:
        print("\n".join(failed[-15:]))
        print(f"notebook: FAILED after {ran} of {len(code_cells)} cells")
        return 1
    print(f"notebook: {ran} cells ran, {skipped} skipped (no GPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
