"""Cost, per run of a cell, of the line ids the cell runner keeps where the front end names cells (JupyterLab, VS Code).

Not run by pytest. Usage::

    python benchmarks/cell_ids.py

Every cell that runs with a cell id has its lines paired with the lines of its
last run (:func:`jaxshow.cellrun.carried_line_ids`), whether or not a magic is
on. Reported: the median time of that pairing for cells of 50, 200 and 500
lines run again unchanged, with one line edited, with 15 blocks of 4 lines edited
in place, and with every line replaced (a paste), and how many lines kept their ids.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time

from jaxshow.cellrun import carried_line_ids


def _lines(count: int, tag: str) -> list[str]:
    rng = random.Random(count)
    return [f"x_{tag}_{i} = jnp.sin(w_{i}) * {rng.random():.6f}  # step {i}" for i in range(count)]


def _edits(before: list[str]) -> dict[str, list[str]]:
    one = before.copy()
    one[len(one) // 2] += " + 1"
    blocks = before.copy()
    for start in range(0, min(len(blocks), 300), 20):
        for k in range(start, min(start + 4, len(blocks))):
            blocks[k] = blocks[k].replace("jnp.sin", "jnp.cos")
    return {"unchanged": before, "one line edited": one, "15 blocks of 4 lines edited": blocks,
            "every line replaced": _lines(len(before), "b")}


def main() -> None:
    print(f"{'lines':>5}  {'edit':<28} {'median':>9}  ids kept")
    for count in (50, 200, 500):
        before = _lines(count, "a")
        ids = tuple(range(count))
        for name, after in _edits(before).items():
            times, kept = [], 0
            for _ in range(7):
                started = time.perf_counter()
                carried = carried_line_ids(before, ids, after, itertools.count(count))
                times.append(time.perf_counter() - started)
                kept = sum(i < count for i in carried)
            print(f"{count:>5}  {name:<28} {statistics.median(times) * 1e3:7.2f} ms  {kept}/{count}")


if __name__ == "__main__":
    main()
