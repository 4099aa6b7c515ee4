"""Cold-cell cost of %%jaxstages against the same cell run plainly.

A 60-layer MLP gradient step (trace + lower + compile + run) is run as a
notebook cell in a fresh InteractiveShell, once plainly and once under
``%%jaxstages``, in fresh processes, alternating which goes first; the
medians of the repeats are compared. The display formatting (HTML and text)
is included, as a notebook frontend would ask for both.

    python benchmarks/stages_overhead.py [--repeats 3] [--layers 60] [--width 256]

Target (issue 2): ratio <= 1.3.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

SETUP = """
import jax, jax.numpy as jnp
LAYERS, WIDTH = {layers}, {width}
keys = jax.random.split(jax.random.key(0), LAYERS)
params = [{{"w": jax.random.normal(k, (WIDTH, WIDTH)) / WIDTH ** 0.5, "b": jnp.zeros(WIDTH)}} for k in keys]
x = jax.random.normal(jax.random.key(1), (64, WIDTH))

def loss_fn(params, x):
    for layer in params:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return jnp.mean(x ** 2)

@jax.jit
def train_step(params, x):
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    return loss, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

jax.block_until_ready((params, x));
"""

CELL = "loss, params = train_step(params, x)\njax.block_until_ready(loss)"


def child(mode: str, layers: int, width: int) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.run_line_magic("load_ext", "jaxshow")
    assert shell.run_cell(SETUP.format(layers=layers, width=width)).success
    cell = CELL if mode == "plain" else "%%jaxstages\n" + CELL
    with capture_output() as cap:
        start = time.perf_counter()
        result = shell.run_cell(cell)
        seconds = time.perf_counter() - start
    assert result.success, result.error_in_exec
    html_bytes = sum(len(o.data.get("text/html", "")) for o in cap.outputs)
    walk_seconds = None
    if mode == "magic":
        import jaxshow

        start = time.perf_counter()
        jaxshow.stages(shell.user_ns["train_step"], shell.user_ns["params"], shell.user_ns["x"])
        walk_seconds = time.perf_counter() - start
    print(json.dumps({"mode": mode, "seconds": seconds, "html_bytes": html_bytes, "walk_seconds": walk_seconds}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--layers", type=int, default=60)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--child", choices=("plain", "magic"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.layers, args.width)
        return
    runs: dict[str, list[float]] = {"plain": [], "magic": []}
    html_bytes = 0
    walks: list[float] = []
    for repeat in range(args.repeats):
        order = ("plain", "magic") if repeat % 2 == 0 else ("magic", "plain")
        for mode in order:
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, "--layers", str(args.layers), "--width", str(args.width)],
                check=True, capture_output=True, text=True,
            ).stdout.strip().splitlines()[-1]
            record = json.loads(out)
            runs[mode].append(record["seconds"])
            html_bytes = max(html_bytes, record["html_bytes"])
            if record["walk_seconds"] is not None:
                walks.append(record["walk_seconds"])
            print(f"repeat {repeat + 1}: {mode:5s} {record['seconds']:.3f} s", flush=True)
    plain, magic = statistics.median(runs["plain"]), statistics.median(runs["magic"])
    print(f"\n{args.layers}-layer MLP gradient step, cold cell, median of {args.repeats} fresh processes:")
    print(f"  plain cell      {plain:.3f} s")
    print(f"  %%jaxstages     {magic:.3f} s   (report HTML {html_bytes / 1e6:.2f} MB)")
    print(f"  ratio           {magic / plain:.3f}  (target <= 1.30)")
    print(f"  walk of the four stations from JAX's caches: {statistics.median(walks) * 1e3:.0f} ms (median)")


if __name__ == "__main__":
    main()
