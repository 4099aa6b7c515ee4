"""Cost of %%jaxstages against the same cell run plainly: a cold cell, a hot loop, and eager loops.

``cold``: a 60-layer MLP gradient step (trace + lower + compile + run) is run
as a notebook cell. ``hot``: a jitted step over a 200-leaf pytree, compiled
beforehand, is called 400 times in a loop in the cell. Each cell runs in a
fresh InteractiveShell, once plainly and once under ``%%jaxstages``, in fresh
processes, alternating which goes first; the medians of the repeats are
compared. The report's display (HTML and text) is included, as a notebook
frontend would ask for both.

``eager``: cells that run JAX eagerly in a Python loop, warm (JAX's own
helpers compiled by a first run of each), side by side in one process and one
shell, plain and under ``%%jaxstages`` alternately (default 15 repeats): an
eager ``jax.grad`` loop (each step calls JAX's jitted helpers, ``jnp.sum``'s,
through JAX's Python path), a loop of ``jnp.sort``/``jnp.linalg.norm``/
``jax.nn.softmax`` on small arrays, and a small jitted step called 2,000
times (the call hook's cost per hit).

    python benchmarks/stages_overhead.py [--scenario cold|hot|eager] [--repeats N] [--layers 60] [--width 256]

Targets: cold ratio <= 1.30 (issue 8); the eager grad loop within 1.10 of plain; the hot loops are reported beside them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

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

EAGER_SETUP = """
import jax, jax.numpy as jnp
w0, xs, a = jnp.ones(8), jnp.arange(8.0), jnp.linspace(0.0, 1.0, 16)

def loss(w, x):
    return jnp.sum(jnp.tanh(w * x) ** 2)

@jax.jit
def tiny_step(v):
    return v * 0.5 + 1.0
"""

EAGER_CELLS = {
    "eager jax.grad loop, 200 steps": "w = w0\nfor i in range(200):\n    g = jax.grad(loss)(w, xs)\n    w = w - 0.1 * g\njax.block_until_ready(w);",
    "eager jnp.sort/norm/softmax loop, 200 steps": ("for i in range(200):\n    s = jnp.sort(a); n = jnp.linalg.norm(a); p = jax.nn.softmax(a)\n"
                                                   "jax.block_until_ready(p);"),
    "tiny jitted step called 2,000 times, warm": "v = jnp.ones(4)\nfor i in range(2000):\n    v = tiny_step(v)\njax.block_until_ready(v);",
}


def _shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.run_line_magic("load_ext", "jaxshow")
    return shell


def eager(repeats: int) -> None:
    """The eager cells, plain and under %%jaxstages alternately in this process (see the module)."""
    from IPython.utils.capture import capture_output

    shell = _shell()
    assert shell.run_cell(EAGER_SETUP).success
    for what, body in EAGER_CELLS.items():
        runs: dict[str, list[float]] = {"plain": [], "magic": []}
        for repeat in range(repeats + 1):  # the first of each is a warm-up, not counted
            for mode in (("plain", "magic") if repeat % 2 == 0 else ("magic", "plain")):
                with capture_output():
                    start = time.perf_counter()
                    result = shell.run_cell(body if mode == "plain" else "%%jaxstages\n" + body)
                    seconds = time.perf_counter() - start
                assert result.success, result.error_in_exec
                if repeat:
                    runs[mode].append(seconds)
        plain, magic = statistics.median(runs["plain"]), statistics.median(runs["magic"])
        print(f"{what}: plain {plain * 1e3:.1f} ms, %%jaxstages {magic * 1e3:.1f} ms, ratio {magic / plain:.3f} "
              f"(median of {repeats}, one process)", flush=True)


def child(mode: str, layers: int, width: int, scenario: str) -> None:
    from IPython.utils.capture import capture_output

    shell = _shell()
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
    parser.add_argument("--repeats", type=int, help="3 fresh processes per mode (cold, hot), 15 runs (eager)")
    parser.add_argument("--layers", type=int, default=60)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--scenario", choices=("cold", "hot", "eager"), default="cold")
    parser.add_argument("--child", choices=("plain", "magic"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.layers, args.width, args.scenario)
        return
    if args.scenario == "eager":
        eager(args.repeats or 15)
        return
    args.repeats = args.repeats or 3
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
