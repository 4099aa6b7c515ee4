"""Each _jax_compat shim added for %jaxcache, checked for its behaviour on the installed JAX."""

from __future__ import annotations

import logging
from functools import partial

import jax
import jax.numpy as jnp

from jaxshow import _jax_compat


class _Recorder(_jax_compat.TraceProbe):
    def __init__(self):
        self.calls = []

    def enter(self, fun, debug_info):
        return getattr(fun, "__name__", "?")

    def exit(self, token, missed, key):
        self.calls.append((token, missed, key))


def test_explain_logger_receives_jax_explanations():
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger(_jax_compat.explain_logger_name())
    logger.addHandler(handler)
    try:
        with jax.explain_cache_misses(True):
            jax.jit(lambda v: v * 5)(jnp.ones(2))
    finally:
        logger.removeHandler(handler)
    assert any(r.getMessage().startswith("TRACING CACHE MISS") for r in records)


def test_trace_probe_tells_misses_from_hits_and_uninstalls():
    recorder = _Recorder()

    @jax.jit
    def inner(v):
        return v * 2

    @jax.jit
    def outer(v):
        return inner(v) + 1

    module = _jax_compat._trace_cache_module()
    original = module.trace_to_jaxpr
    uninstall = _jax_compat.install_trace_probe(recorder)
    try:
        outer(jnp.ones(3))
        jax.jit(outer.__wrapped__).trace(jnp.ones(3))
    finally:
        uninstall()
    assert module.trace_to_jaxpr is original
    mine = [(name, missed) for name, missed, _ in recorder.calls if name in ("inner", "outer")]
    assert mine[:2] == [("inner", True), ("outer", True)], "a nested trace is its own miss"
    assert ("outer", False) in mine[2:], "a new wrapper of the same function is a trace-cache hit"
    key = next(k for n, m, k in recorder.calls if n == "outer" and m)
    types, tree, context = _jax_compat.describe_trace_key(key)
    assert types == (("v", "f32[3]"),) and "PyTreeDef" in tree and isinstance(context, tuple)


def test_diff_trace_keys_speaks_jax_words():
    recorder = _Recorder()

    @partial(jax.jit, static_argnums=1)
    def g(v, n):
        return v * n

    uninstall = _jax_compat.install_trace_probe(recorder)
    try:
        g(jnp.ones(2), 1)
        g(jnp.ones(3), 1)
        g(jnp.ones(3), 2)
    finally:
        uninstall()
    keys = [k for n, m, k in recorder.calls if n == "g" and m]
    assert "different input types" in _jax_compat.diff_trace_keys(keys[1], keys[0])
    assert "Static(val=2)" in _jax_compat.diff_trace_keys(keys[2], keys[1])


def test_trace_cache_entries_grows_with_new_signatures():
    before = _jax_compat.trace_cache_entries()
    jax.jit(lambda v: v - 7)(jnp.ones(11))
    assert before is not None and _jax_compat.trace_cache_entries() > before


def test_config_global_value_ignores_thread_local_override():
    with jax.explain_cache_misses(True):
        assert _jax_compat.config_global_value("jax_explain_cache_misses") is False
    assert _jax_compat.config_global_value("jax_compilation_cache_dir") is None


def test_persistent_cache_state_without_a_directory():
    jax.jit(lambda v: v + 3)(jnp.ones(2))
    assert _jax_compat.persistent_cache_initialized() is False
    assert _jax_compat.persistent_cache_directory_in_use() is None
