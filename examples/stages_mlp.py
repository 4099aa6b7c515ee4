"""Walk an MLP train step through JAX's stages with ``jaxshow.stages`` and read the report.

Run with ``python examples/stages_mlp.py``. Nothing is executed: the train step is traced,
lowered and compiled ahead of time for the shapes given, which may be ``jax.ShapeDtypeStruct``s.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import jaxshow


def init_params(key, sizes=(16, 32, 32, 1)):
    params = {}
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        key, sub = jax.random.split(key)
        params[f"layer{i}"] = {"w": jax.random.normal(sub, (m, n)) / jnp.sqrt(m), "b": jnp.zeros(n)}
    return params


def mlp(params, x):
    *hidden, last = params.values()
    for layer in hidden:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def loss_fn(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)


@partial(jax.jit, donate_argnums=0)
def train_step(params, batch, lr=0.05):
    x, y = batch
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss


def main() -> None:
    params = init_params(jax.random.key(0))
    batch = (jax.ShapeDtypeStruct((256, 16), jnp.float32), jax.ShapeDtypeStruct((256, 1), jnp.float32))
    report = jaxshow.stages(train_step, params, batch)

    print(report)  # the full text report, as a terminal shows it
    print()
    print(repr(report))
    print("stopped at:", report.stopped_at)
    print("donated:", [a.path for a in report.traced.args if a.donated])
    print("equations:", report.traced.equation_count, "| top primitives:", report.traced.primitive_counts[:3])
    print("StableHLO lines:", len(report.lowered.module_text.splitlines()))
    print("FLOPs before / after optimisation:", report.lowered.cost.flops, report.compiled.cost.flops)
    memory = report.compiled.memory
    print("temporaries:", memory.temp_size_bytes, "bytes | aliased (donated):", memory.alias_size_bytes, "bytes")
    print("seconds: trace", report.timings.trace_seconds, "lower", report.timings.lowering_seconds, "compile", report.timings.compile_seconds)


if __name__ == "__main__":
    main()
