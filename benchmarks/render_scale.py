"""Rendering cost of a report whose optimised HLO is about 10 MB, and of one with 10,000 argument leaves.

Real-model modules reach 1-12 MB of optimised HLO (shared/peers.md §5.1). This
builds a report from a real module, repeated up to the target size, and times
the HTML and text forms with the default budgets (every IR text is stored whole;
at most ``max_lines`` lines of each are shown, highlighted). It then gives the
same report ``--leaves`` argument leaves and input placements (a large pytree of
parameters), of which each table shows at most ``max_rows``.

    python benchmarks/render_scale.py [--megabytes 10] [--leaves 10000]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import jax
import jax.numpy as jnp

import jaxshow
from jaxshow import render
from jaxshow.report import ArgSpec, PlacementSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--leaves", type=int, default=10_000)
    args = parser.parse_args()

    @jax.jit
    def block(x, w):
        for _ in range(8):
            x = jnp.tanh(x @ w) + x
        return jnp.sum(x**2)

    small = jaxshow.stages(block, jnp.ones((64, 128)), jnp.ones((128, 128)))
    unit = small.compiled.optimized_hlo_text
    big = unit * max(1, int(args.megabytes * 1e6 / len(unit)))
    report = dataclasses.replace(small, compiled=dataclasses.replace(small.compiled, optimized_hlo_text=big))

    start = time.perf_counter()
    page = render.to_html(report)
    html_seconds = time.perf_counter() - start
    start = time.perf_counter()
    text = render.to_text(report)
    text_seconds = time.perf_counter() - start
    print(f"optimised HLO on the record: {len(big) / 1e6:.1f} MB, {big.count(chr(10)):,} lines")
    print(f"HTML: {html_seconds * 1e3:.0f} ms, {len(page) / 1e3:.0f} kB ({len(page) / len(big):.3f} of the text)")
    print(f"text: {text_seconds * 1e3:.0f} ms, {len(text) / 1e3:.0f} kB")
    print(f"shown: {render.TextBudget().max_lines} lines per IR text; the rest is named in a footer")

    paths = [f"params['layer_{i}']['w']" for i in range(args.leaves)]
    leaves = dataclasses.replace(
        small,
        traced=dataclasses.replace(small.traced, args=tuple(ArgSpec(p, (128, 256), "float32", sharding="SingleDeviceSharding(cpu:0)") for p in paths)),
        compiled=dataclasses.replace(small.compiled, inputs=tuple(PlacementSpec(p, "SingleDeviceSharding(cpu:0)", "{1,0}") for p in paths)),
    )
    start = time.perf_counter()
    page = render.to_html(leaves)
    html_seconds = time.perf_counter() - start
    start = time.perf_counter()
    text = render.to_text(leaves)
    text_seconds = time.perf_counter() - start
    print(f"{args.leaves:,} argument leaves and input placements, {render.TextBudget().max_rows} rows shown per table:")
    print(f"HTML: {html_seconds * 1e3:.0f} ms, {len(page) / 1e3:.0f} kB; text: {text_seconds * 1e3:.0f} ms, {len(text) / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
