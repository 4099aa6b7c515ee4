"""The one place that touches JAX internals or probes for version differences.

Each private need is one small function that tries the public API first, falls
back to the private one, and degrades to a clear "unavailable" answer. Every
function here has a test in ``tests/test_jax_compat.py`` that checks behaviour on
the installed JAX, not which branch ran.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import jax
import jax.monitoring

JAX_VERSION = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())

_JIT_OPTION_NAMES = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames")


def jit_options(fn: Any) -> dict[str, tuple] | None:
    """Static and donated argument numbers/names of a ``jax.jit`` wrapper.

    JAX keeps these only on the private ``_jit_info`` record (a ``PjitInfo``);
    returns ``None`` where it is missing (other wrappers, other JAX versions).
    """
    info = getattr(fn, "_jit_info", None)
    if info is None or not all(hasattr(info, n) for n in _JIT_OPTION_NAMES):
        return None
    return {n: tuple(getattr(info, n)) for n in _JIT_OPTION_NAMES}


def cache_size(fn: Any) -> int | None:
    """Entries in the C++ jit cache of ``fn`` (shared by all wrappers of one function)."""
    size = getattr(fn, "_cache_size", None)
    if size is None:
        return None
    try:
        return int(size())
    except Exception:  # noqa: BLE001 - a probe; absence is the answer
        return None


def unregister_duration_listener(callback: Callable) -> None:
    """Remove a ``jax.monitoring`` duration listener (public API since jax 0.8.1)."""
    public = getattr(jax.monitoring, "unregister_event_duration_listener", None)
    if public is not None:
        public(callback)
        return
    from jax._src import monitoring as _monitoring

    _monitoring._unregister_event_duration_listener_by_callback(callback)


def unregister_event_listener(callback: Callable) -> None:
    """Remove a ``jax.monitoring`` event listener (public API since jax 0.8.1)."""
    public = getattr(jax.monitoring, "unregister_event_listener", None)
    if public is not None:
        public(callback)
        return
    from jax._src import monitoring as _monitoring

    _monitoring._unregister_event_listener_by_callback(callback)


def unregister_scalar_listener(callback: Callable) -> None:
    """Remove a ``jax.monitoring`` scalar listener (public API since jax 0.8.1)."""
    public = getattr(jax.monitoring, "unregister_scalar_listener", None)
    if public is not None:
        public(callback)
        return
    from jax._src import monitoring as _monitoring

    _monitoring._unregister_scalar_listener_by_callback(callback)


def exclude_from_source_info(directory: str) -> bool:
    """Keep JAX's call-site attribution off jaxshow's own frames.

    Without it, a function that jaxshow calls on the user's behalf is reported
    by JAX as called from jaxshow. Private in every JAX release checked
    (``source_info_util.register_exclusion``); returns whether it took effect.
    """
    try:
        from jax._src import source_info_util
    except ImportError:
        return False
    register = getattr(source_info_util, "register_exclusion", None)
    if register is None:
        return False
    register(directory.rstrip(os.sep) + os.sep)
    return True


def trace_context_names() -> tuple[str, ...] | None:
    """Names of the config values in JAX's trace context (jax >= 0.10.2), else ``None``."""
    try:
        from jax._src import config as _config

        return tuple(_config.trace_context_names())
    except Exception:  # noqa: BLE001 - NotImplementedError on older jaxlib
        return None
