"""Cost of %%jaxstages against the same cell run plainly: a cold cell, and a hot loop.

``cold``: a 60-layer MLP gradient step (trace + lower + compile + run) is run
as a notebook cell. ``hot``: a jitted step over a 200-leaf pytree, compiled
beforehand, is called 400 times in a loop in the cell. Each cell runs in a
fresh InteractiveShell, once plainly and once under ``%%jaxstages``, in fresh
processes, alternating which goes first; the medians of the repeats are
compared. The report's display (HTML and text) is included, as a notebook
frontend would ask for both.

    python benchmarks/stages_overhead.py [--scenario cold|hot] [--repeats 3] [--layers 60] [--width 256]

Targets (issue 8): cold ratio <= 1.30; the hot loop is reported beside it.
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

HOT_SETUP = """
import jax, jax.numpy as jnp
state = {{f"p{{i}}": jnp.ones(4) for i in range(200)}}

@jax.jit
def step(state):
    return jax.tree.map(lambda v: v * 0.5 + 1.0, state)

state = jax.block_until_ready(step(state));
"""

HOT_CELL = "for _ in range(400):\n    state = step(state)\njax.block_until_ready(state);"


def child(mode: str, layers: int, width: int, scenario: str) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.run_line_magic("load_ext", "jaxshow")
    setup, body = (SETUP, CELL) if scenario == "cold" else (HOT_SETUP, HOT_CELL)
    assert shell.run_cell(setup.format(layers=layers, width=width)).success
    cell = body if mode == "plain" else "%%jaxstages\n" + body
    with capture_output() as cap:
        start = time.perf_counter()
        result = shell.run_cell(cell)
        seconds = time.perf_counter() - start
    assert result.success, result.error_in_exec
    html_bytes = sum(len(o.data.get("text/html", "")) for o in cap.outputs)
    walk_seconds = None
    if mode == "magic" and scenario == "cold":
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
    parser.add_argument("--scenario", choices=("cold", "hot"), default="cold")
    parser.add_argument("--child", choices=("plain", "magic"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.layers, args.width, args.scenario)
        return
    runs: dict[str, list[float]] = {"plain": [], "magic": []}
    html_bytes = 0
    walks: list[float] = []
    for repeat in range(args.repeats):
        order = ("plain", "magic") if repeat % 2 == 0 else ("magic", "plain")
        for mode in order:
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, "--scenario", args.scenario, "--layers", str(args.layers),
                 "--width", str(args.width)],
                check=True, capture_output=True, text=True,
            ).stdout.strip().splitlines()[-1]
            record = json.loads(out)
            runs[mode].append(record["seconds"])
            html_bytes = max(html_bytes, record["html_bytes"])
            if record["walk_seconds"] is not None:
                walks.append(record["walk_seconds"])
            print(f"repeat {repeat + 1}: {mode:5s} {record['seconds']:.3f} s", flush=True)
    plain, magic = statistics.median(runs["plain"]), statistics.median(runs["magic"])
    what = f"{args.layers}-layer MLP gradient step, cold cell" if args.scenario == "cold" else "200-leaf step called 400 times, warm"
    print(f"\n{what}, median of {args.repeats} fresh processes:")
    print(f"  plain cell      {plain:.3f} s")
    print(f"  %%jaxstages     {magic:.3f} s   (report HTML {html_bytes / 1e6:.2f} MB)")
    print(f"  ratio           {magic / plain:.3f}" + ("  (target <= 1.30)" if args.scenario == "cold" else ""))
    if walks:
        print(f"  jaxshow.stages() walk of the four stations from JAX's caches: {statistics.median(walks) * 1e3:.0f} ms (median)")


if __name__ == "__main__":
    main()
