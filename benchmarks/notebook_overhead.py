"""A real notebook's cell time with every code cell under ``%%jaxstages``, against the same notebook plainly.

Each notebook runs in a fresh kernel (this Python's ``python3`` kernel,
through nbclient), plainly and with ``%load_ext jaxshow`` first and
``%%jaxstages`` on every code cell, alternating which goes first, ``--repeats``
times each. The figure is the sum of the cells' own execution times
(nbclient's ``iopub.execute_input`` to ``shell.execute_reply``), leaving out
cells with ``%timeit`` (it picks its own loop counts, so their time is not
comparable run to run) and cells that import JAX (under the magic
``%load_ext jaxshow`` has already imported it).

    python benchmarks/notebook_overhead.py NOTEBOOK.ipynb [...] [--repeats 2] [--cells]

JAX's documentation notebooks make a good test (fetch jax-ml/jax; the ``.md``
sources under ``docs/`` convert with jupytext).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import pathlib
import statistics
import tempfile

import nbformat
from nbclient import NotebookClient


def variant(notebook: nbformat.NotebookNode, magic: bool) -> nbformat.NotebookNode:
    """The notebook with its outputs cleared, and with every code cell under ``%%jaxstages`` when ``magic``."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            stripped = cell.source.lstrip()
            if magic and stripped and not stripped.startswith(("%", "!")):
                cell.source = "%%jaxstages\n" + cell.source
    if magic:
        notebook.cells.insert(0, nbformat.v4.new_code_cell("%load_ext jaxshow"))
    return notebook


def cell_seconds(cell: nbformat.NotebookNode) -> float:
    timing = cell.metadata["execution"]
    start, end = (datetime.datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


def run(notebook: nbformat.NotebookNode, magic: bool, workdir: str) -> list[float]:
    """Each original code cell's seconds, in order."""
    executed = variant(notebook, magic)
    NotebookClient(executed, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": workdir}}).execute()
    cells = [c for c in executed.cells if c.cell_type == "code"]
    return [cell_seconds(c) for c in (cells[1:] if magic else cells)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="+", type=pathlib.Path)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cells", action="store_true", help="also print each timed cell's median seconds, plain and under the magic")
    args = parser.parse_args()
    totals = {False: 0.0, True: 0.0}
    print("| notebook | cells timed | plain | `%%jaxstages` on every cell | ratio |")
    print("|---|---|---|---|---|")
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=4)
        sources = [c.source for c in notebook.cells if c.cell_type == "code"]
        timed = [i for i, s in enumerate(sources) if "timeit" not in s and "import jax" not in s]
        sums: dict[bool, list[float]] = {False: [], True: []}
        cells: dict[bool, list[list[float]]] = {False: [], True: []}
        with tempfile.TemporaryDirectory() as workdir:
            for repeat in range(args.repeats):
                for magic in ((False, True) if repeat % 2 == 0 else (True, False)):
                    seconds = run(notebook, magic, workdir)
                    sums[magic].append(sum(seconds[i] for i in timed))
                    cells[magic].append(seconds)
        if args.cells:
            extras = []
            for i in timed:
                plain, magic = (statistics.median(run[i] for run in cells[m]) for m in (False, True))
                extras.append(magic - plain)
                print(f"  {plain * 1e3:9.1f} ms {magic * 1e3:9.1f} ms {(magic - plain) * 1e3:+8.1f} ms  {sources[i].splitlines()[0][:60]}")
            print(f"  median extra per cell: {statistics.median(extras) * 1e3:.1f} ms")
        plain, magic = statistics.mean(sums[False]), statistics.mean(sums[True])
        totals[False] += plain
        totals[True] += magic
        print(f"| {path.stem} | {len(timed)} | {plain:.2f} s | {magic:.2f} s | {magic / plain:.3f} |")
    print(f"| all | | {totals[False]:.2f} s | {totals[True]:.2f} s | **{totals[True] / totals[False]:.3f}** |")


if __name__ == "__main__":
    main()
