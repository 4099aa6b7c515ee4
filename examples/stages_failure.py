"""What ``jaxshow.stages`` reports for functions that fail while tracing and while lowering.

Run with ``python examples/stages_failure.py``. ``jaxshow.stages`` does not raise: the report
keeps every station reached, the stage that failed (``report.stopped_at``) and the error
(``report.error``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

import jaxshow


@jax.jit
def normalise(v):
    """Fails while tracing: Python ``if`` on a traced value."""
    if v.sum() > 0:
        return v / v.sum()
    return v


def _add_one_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


@jax.jit
def add_one(x):
    """Fails while lowering on CPU: a Pallas kernel needs ``interpret=True`` there.

    Tracing succeeds (the jaxpr holds a ``pallas_call``); lowering it for the CPU backend raises.
    On a GPU or TPU this one lowers and compiles, and the report shows all four stations.
    """
    return pl.pallas_call(_add_one_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def show(report: jaxshow.StagesReport) -> None:
    print(repr(report))
    print("  stations reached:", report.stations_reached or "none")
    print("  stopped at:", report.stopped_at)
    if report.error is not None:
        first_line = report.error.message.splitlines()[0]
        print(f"  error: {report.error.type_name} ({report.error.stage}): {first_line}")
    print()


def main() -> None:
    x = jnp.ones((8, 128))
    show(jaxshow.stages(normalise, x))
    show(jaxshow.stages(add_one, x))
    print(jaxshow.stages(add_one, x))  # the text report: the Traced station, then where it stopped


if __name__ == "__main__":
    main()
