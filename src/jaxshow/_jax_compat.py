"""The one place that touches JAX internals or probes for version differences.

Each private need is one small function that tries the public API first, falls
back to the private one, and degrades to a clear "unavailable" answer. Every
function here has a test in ``tests/test_jax_compat.py`` that checks behaviour on
the installed JAX, not which branch ran.
"""

from __future__ import annotations

import os
import threading
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


# --- tracing cache and persistent compilation cache (used by retrace.py, persistent.py) -------


def explain_logger_name() -> str:
    """The logger JAX's ``jax_explain_cache_misses`` writes to (moved in jax 0.9)."""
    return "jax._src.interpreters.partial_eval" if JAX_VERSION >= (0, 9) else "jax._src.pjit"


def _trace_cache_module():
    """The module whose ``trace_to_jaxpr`` is JAX's tracing cache (jax >= 0.9), else ``None``."""
    try:
        from jax._src.interpreters import partial_eval as _pe
    except ImportError:
        return None
    cached = getattr(_pe, "trace_to_jaxpr", None)
    if cached is None or not hasattr(cached, "cache_info") or not hasattr(_pe, "diff_tracing_cache_keys"):
        return None
    return _pe


def trace_cache_entries() -> int | None:
    """Entries in JAX's tracing cache, all functions together (jax >= 0.9), else ``None``."""
    module = _trace_cache_module()
    if module is None:
        return None
    try:
        return int(module.trace_to_jaxpr.cache_info().currsize)
    except Exception:  # noqa: BLE001 - a probe; absence is the answer
        return None


class TraceProbe:
    """What ``install_trace_probe`` calls back: one object per traced call, on the tracing thread."""

    def enter(self, fun: Any, debug_info: Any) -> Any:  # pragma: no cover - interface
        """A call of the tracing cache starts; the return value comes back to ``exit``."""
        raise NotImplementedError

    def exit(self, token: Any, missed: bool, key: Any) -> None:  # pragma: no cover - interface
        """It ended; ``missed`` says whether this call (not a nested one) traced, ``key`` is its cache key."""
        raise NotImplementedError


def install_trace_probe(probe: TraceProbe) -> Callable[[], None] | None:
    """Observe every lookup in JAX's tracing cache, hit or miss, without changing it.

    JAX has no public hook for "this call traced". Since jax 0.9 every trace of
    a jitted function (and of ``cond``/``scan`` bodies) goes through the
    ``weakref_lru_cache`` ``partial_eval.trace_to_jaxpr``; jaxshow puts a thin
    forwarding wrapper in its place and tells a miss from a hit by the cache's
    own miss counter. C++ fast-path hits never reach it, so a hot loop pays
    nothing. Returns the function that puts the original back, or ``None``
    where this JAX has no such cache.
    """
    module = _trace_cache_module()
    if module is None:
        return None
    from jax._src import config as _config

    original = module.trace_to_jaxpr
    info = original.cache_info
    local = threading.local()

    class _Probed:
        __slots__ = ()

        def __call__(self, fun, in_avals, debug_info, *context, **kwargs):
            stack = getattr(local, "stack", None)
            if stack is None:
                stack = local.stack = []
            token = probe.enter(fun, debug_info)
            before = info().misses
            stack.append(0)
            missed = False
            try:
                return original(fun, in_avals, debug_info, *context, **kwargs)
            finally:
                nested = stack.pop()
                delta = info().misses - before
                missed = delta - nested > 0
                if stack:
                    stack[-1] += delta
                key = (_config.trace_context(), (in_avals, debug_info, *context), {}) if missed else None
                probe.exit(token, missed, key)

        def __getattr__(self, name):
            return getattr(original, name)

    probed = _Probed()
    module.trace_to_jaxpr = probed

    def uninstall() -> None:
        if module.trace_to_jaxpr is probed:
            module.trace_to_jaxpr = original

    return uninstall


def diff_trace_keys(new_key: Any, old_key: Any) -> str | None:
    """JAX's own explanation of why ``new_key`` misses ``old_key`` (the text of one diff)."""
    module = _trace_cache_module()
    if module is None:
        return None
    try:
        return str(module.diff_tracing_cache_keys(new_key, old_key)[-1])
    except Exception:  # noqa: BLE001 - the explanation is optional evidence
        return None


def describe_trace_key(key: Any) -> tuple[tuple[tuple[str, str], ...], str, tuple] | None:
    """A tracing-cache key as printable parts: ``((arg, "f32[3]"), ...)``, pytree text, trace context.

    Keys are ``(trace_context, (in_avals: FlatTree, debug_info, *context), {})``
    on jax >= 0.9. Returns ``None`` for any other shape.
    """
    try:
        context, (in_avals, debug_info, *_), _ = key
        avals = tuple(in_avals.vals)
        names = tuple(debug_info.arg_names or ()) or tuple(f"[{i}]" for i in range(len(avals)))
        types = tuple((str(n), _aval_text(a)) for n, a in zip(names, avals))
        return types, str(in_avals.tree), tuple(context)
    except Exception:  # noqa: BLE001
        return None


def _aval_text(aval: Any) -> str:
    short = getattr(aval, "str_short", None)
    text = short(True) if short is not None else str(aval)
    if getattr(aval, "weak_type", False):
        text += "{weak_type=True}"
    return text


def persistent_cache_initialized() -> bool | None:
    """Whether JAX has opened its persistent cache in this process (it does so at the first compile)."""
    try:
        from jax._src import compilation_cache as _cc
    except ImportError:
        return None
    value = getattr(_cc, "_cache_initialized", None)
    return None if value is None else bool(value)


def persistent_cache_directory_in_use() -> str | None:
    """The directory the opened persistent cache writes to, which may differ from the config value."""
    try:
        from jax._src import compilation_cache as _cc
    except ImportError:
        return None
    cache = getattr(_cc, "_cache", None)
    path = getattr(cache, "path", None)
    return None if path is None else str(path)


def config_global_value(name: str) -> Any:
    """The global value of a config option, ignoring any thread-local override (``with jax.x(...)``)."""
    try:
        from jax._src import config as _config

        return _config.config_states[name].get_global()
    except Exception:  # noqa: BLE001 - Flags have no thread-local value; the current value is the global one
        return jax.config.values[name]
