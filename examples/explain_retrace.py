"""Why did my jitted function trace again? ``jaxshow.explain()`` on four common causes.

Run: ``python examples/explain_retrace.py``
"""

from functools import partial

import jax
import jax.numpy as jnp

import jaxshow


@partial(jax.jit, static_argnums=1)
def step(x, n):
    print("tracing step")  # runs once per trace, not once per call
    return x * n


with jaxshow.explain() as ex:
    step(jnp.ones(3), 2)
    step(jnp.ones(3), 2)  # hit
    step(jnp.ones(4), 2)  # new shape
    step(jnp.ones(4), 3)  # new static argument
    step(1.0, 3)  # weak-typed Python scalar
    for _ in range(2):
        jax.jit(lambda v: v + 1)(jnp.ones(2))  # a new function object every time

for miss in ex.report.misses:
    print(f"{miss.function}: {miss.category}: {miss.summary}")
print()
print(ex.report)
