"""JAX libraries beyond flax, optax and equinox through the magics; each test skips where its library is not installed.

None of them is a test extra: ``pip install dm-haiku`` runs the haiku test.
"""

from __future__ import annotations

import pytest

from jaxshow import retrace
from shellrun import run_captured


def test_haiku_models_are_told_apart_by_the_function_each_transforms(ip):
    # jax 0.10.2, dm-haiku 0.0.17: a second model's jax.jit(net.apply) read under %jaxcache 're-defined function (made
    # anew inside without_apply_rng): apply_fn is a new function object with the same name and source as one traced
    # before ... make the jitted function once, outside without_apply_rng', with a jaxpr diff against the first model's.
    pytest.importorskip("haiku")
    retrace.registry.clear()
    assert ip.run_cell("import jax, jax.numpy as jnp, haiku as hk\n"
                       "def fwd(x):\n    return hk.Linear(2)(x)\n"
                       "def seq(x):\n    return hk.Linear(2)(x) + 1\n"
                       "x = jnp.ones((3, 4))\n"
                       "params = hk.transform(fwd).init(jax.random.PRNGKey(0), x)").success
    misses = []
    for model in ("fwd", "seq", "fwd"):
        result, cap = run_captured(ip, f"%%jaxcache -o rep\njax.jit(hk.without_apply_rng(hk.transform({model})).apply)(params, x)")
        assert result.success, cap.stderr
        [row] = ip.user_ns["rep"].functions
        misses.append((row.function, row.misses[0].category))
    assert misses == [("apply_fn", "never_seen"), ("apply_fn", "never_seen"),
                      ("apply_fn", "redefined")]
