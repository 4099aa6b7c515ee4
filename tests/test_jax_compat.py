"""Each _jax_compat shim, checked for behaviour on the installed JAX."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import jaxshow
from jaxshow import _jax_compat, timings
from jaxshow.capture import stations


def test_jit_options_of_a_jit_wrapper():
    @partial(jax.jit, static_argnums=(1,), static_argnames=("mode",), donate_argnums=0)
    def f(x, n, mode="a"):
        return x * n

    options = _jax_compat.jit_options(f)
    assert options["static_argnums"] == (1,)
    assert "mode" in options["static_argnames"]
    assert options["donate_argnums"] == (0,)
    assert _jax_compat.jit_options(lambda x: x) is None
    assert _jax_compat.jit_options(jax.pmap(lambda x: x)) is None


def test_cache_size_counts_compiled_signatures():
    f = jax.jit(lambda x: x + 1)
    assert _jax_compat.cache_size(f) == 0
    f(jnp.ones(2))
    f(jnp.ones(3))
    assert _jax_compat.cache_size(f) == 2
    assert _jax_compat.cache_size(lambda x: x) is None


def test_listeners_are_removed_by_the_unregister_shims():
    calls = []

    def duration(event, secs, **kw):
        calls.append(event)

    def event(name, **kw):
        calls.append(name)

    jax.monitoring.register_event_duration_secs_listener(duration)
    jax.monitoring.register_event_listener(event)
    _jax_compat.unregister_duration_listener(duration)
    _jax_compat.unregister_event_listener(event)
    jax.jit(lambda x: x * 7)(jnp.ones(5))
    assert calls == []


def test_event_bus_registers_only_while_collecting():
    assert not timings.listeners_registered()
    with timings.EventCollector() as collector:
        assert timings.listeners_registered()
        jax.jit(lambda x: x - 9)(jnp.ones(6))
    assert not timings.listeners_registered()
    assert {e.stage for e in collector.events} >= {"trace", "lower", "compile"}


def test_source_info_exclusion_points_call_sites_at_the_caller():
    assert _jax_compat.exclude_from_source_info(stations.PACKAGE_DIR)
    report = jaxshow.stages_with(debug_info=True)(lambda x: x * 3, jnp.ones(2))
    assert "jaxshow/" not in report.traced.jaxpr_source_text
    assert __file__ in report.traced.jaxpr_source_text


def test_trace_context_names_is_a_tuple_or_none():
    names = _jax_compat.trace_context_names()
    if _jax_compat.JAX_VERSION >= (0, 10, 2):
        assert "jax_enable_x64" in names
    else:
        assert names is None
