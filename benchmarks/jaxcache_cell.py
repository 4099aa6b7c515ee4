"""Cost of ``%%jaxcache`` on a cell whose calls trace: a jitted step over a 200-leaf pytree, 40 new shapes per cell.

Not run by pytest. Usage::

    python benchmarks/jaxcache_cell.py [--repeats 8] [--calls 40] [--leaves 200]

One process and one shell: the same cell (each call a new shape, so each traces, lowers and compiles) is run plainly
and under ``%%jaxcache`` alternately, the order swapped each repeat; the medians of the cells' wall times are compared.
``%%jaxcache`` diffs each miss against the closest earlier signature (JAX's explanation and jaxshow's), keeps each
trace's jaxpr for the miss's jaxpr diff, and prints and diffs those when the report is made.
"""

from __future__ import annotations

import argparse
import statistics
import time

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

SETUP = ("import jax, jax.numpy as jnp\nparams = {{f'p{{i}}': jnp.ones(4) for i in range({leaves})}}\n"
         "step = jax.jit(lambda p, x: sum(jnp.sum(v) for v in p.values()) * x.sum())\nn = [8]")
CELL = "for _ in range({calls}):\n    n[0] += 1\n    y = step(params, jnp.ones(n[0]))"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--leaves", type=int, default=200)
    args = parser.parse_args()
    config = Config()
    config.HistoryAccessor.enabled = False
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "jaxshow")
    ip.run_cell(SETUP.format(leaves=args.leaves))
    cell = CELL.format(calls=args.calls)

    def timed(magic: str) -> float:
        with capture_output() as cap:
            start = time.perf_counter()
            ip.run_cell(magic + cell, store_history=True)
            for output in cap.outputs:  # the report as a front end asks for it
                output.data  # noqa: B018
            return time.perf_counter() - start

    samples: dict[str, list[float]] = {"plain": [], "%%jaxcache": []}
    for r in range(args.repeats):
        for mode in (("plain", "%%jaxcache"), ("%%jaxcache", "plain"))[r % 2]:
            samples[mode].append(timed("" if mode == "plain" else "%%jaxcache\n"))
    plain, magic = (statistics.median(samples[m]) for m in ("plain", "%%jaxcache"))
    print(f"{args.calls} traced calls per cell, {args.leaves}-leaf pytree, medians of {args.repeats}:")
    print(f"  plain cell   {plain:.2f} s ({plain / args.calls * 1e3:.0f} ms a call)")
    print(f"  %%jaxcache   {magic:.2f} s")
    print(f"  ratio        {magic / plain:.3f}")


if __name__ == "__main__":
    main()
