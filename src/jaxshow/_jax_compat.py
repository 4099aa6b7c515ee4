"""The one place that touches JAX internals or probes for version differences.

Each private need is one small function that tries the public API first, falls
back to the private one, and degrades to a clear "unavailable" answer. Every
function here has a test in ``tests/test_jax_compat.py`` that checks behaviour on
the installed JAX, not which branch ran.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import copy
import dataclasses
import functools
import gc
import importlib
import inspect
import itertools
import logging
import math
import operator
import os
import sys
import threading
import types
import weakref
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import jax
import jax.monitoring

from jaxshow.installed import is_installed
from jaxshow.report import CONTEXT_POSITION
from jaxshow.reprs import (compared_by_parts, differ, each_pair_compared_once, once_per_pair, runs_users_eq, runs_users_repr,
                           safe_repr, weak_ref)

JAX_VERSION = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())


def jaxlib_version() -> str:
    """jaxlib's version (``jaxlib.version.__version__``, public), ``""`` where it cannot be read."""
    try:
        from jaxlib import version
    except ImportError:
        return ""
    return str(getattr(version, "__version__", ""))
JAX_DIR = os.path.dirname(os.path.abspath(jax.__file__)) + os.sep
"""The installed jax package's directory (with a trailing separator): JAX's own source files are under it."""
JAXSHOW_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
"""jaxshow's own package folder, with a trailing separator."""

_JIT_OPTION_NAMES = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames")


def jit_options_of_info(info: Any) -> dict[str, tuple] | None:
    """Static and donated argument numbers/names from a ``jax.jit`` wrapper's ``PjitInfo`` (:func:`jit_info`).

    JAX keeps these only on that private record; ``None`` where it is missing
    (other wrappers, other JAX versions).
    """
    if info is None or not all(hasattr(info, n) for n in _JIT_OPTION_NAMES):
        return None
    return {n: tuple(getattr(info, n) or ()) for n in _JIT_OPTION_NAMES}


def jit_set_options(info: Any) -> tuple[tuple[str, Any], ...]:
    """The options of a ``jax.jit`` wrapper's ``PjitInfo`` that the user set, other than static and donated arguments,
    as ``(jax.jit's keyword, value)``: shardings and layouts as the pytree they were given in (a leaf left unset is
    ``None``), ``compiler_options`` as a dict; ``()`` for a record without these fields or with none set."""
    found: list[tuple[str, Any]] = []
    for keyword in ("in_shardings", "out_shardings", "in_layouts", "out_layouts"):
        treedef, leaves = getattr(info, f"{keyword}_treedef", None), getattr(info, f"{keyword}_leaves", None)
        if treedef is None or leaves is None:
            continue
        leaves = [None if type(leaf).__name__ == "UnspecifiedValue" else leaf for leaf in leaves]
        if any(leaf is not None for leaf in leaves) or (keyword == "in_shardings" and getattr(info, "user_specified_in_shardings", False)):
            try:
                found.append((keyword, treedef.unflatten(leaves)))
            except Exception:  # noqa: BLE001 - a tree JAX cannot rebuild: its leaves as they are
                found.append((keyword, tuple(leaves)))
    for keyword, default in (("keep_unused", False), ("device", None), ("backend", None), ("abstracted_axes", None)):
        value = getattr(info, keyword, default)
        if value is not default and value != default:
            found.append((keyword, value))
    inline = getattr(info, "inline", False)
    if inline is True or (inline is not False and getattr(inline, "name", "AUTO") != "AUTO"):  # jax >= 0.11: jax.Inline
        found.append(("inline", inline))
    options = getattr(info, "compiler_options_kvs", ())
    if options:
        found.append(("compiler_options", dict(options)))
    return tuple(found)


def cache_size(fn: Any) -> int | None:
    """Entries in the C++ jit cache of ``fn`` (shared by all wrappers of one function)."""
    size = getattr(fn, "_cache_size", None)
    if size is None:
        return None
    try:
        return int(size())
    except Exception:  # noqa: BLE001 - a probe; absence is the answer
        return None


def _unregister(public: str, private: str, callback: Callable) -> None:
    """Remove a ``jax.monitoring`` listener (public API since jax 0.8.1); one already gone is left alone.

    The user's code may have removed it (``jax.monitoring.clear_event_listeners()``),
    and JAX asserts that a listener it removes is registered.
    """
    remove = getattr(jax.monitoring, public, None)
    if remove is None:
        from jax._src import monitoring as _monitoring

        remove = getattr(_monitoring, private)
    try:
        remove(callback)
    except (AssertionError, ValueError):
        pass


def unregister_duration_listener(callback: Callable) -> None:
    _unregister("unregister_event_duration_listener", "_unregister_event_duration_listener_by_callback", callback)


def unregister_event_listener(callback: Callable) -> None:
    _unregister("unregister_event_listener", "_unregister_event_listener_by_callback", callback)


def removed_listeners(duration: Callable, event: Callable) -> tuple[bool, bool]:
    """Whether a duration and an event listener are no longer on ``jax.monitoring`` (``(False, False)`` where unknown).

    ``jax._src.monitoring.get_event_duration_listeners``/``get_event_listeners``
    (0.7 to 0.12) return copies of JAX's lists.
    """
    from jax._src import monitoring as _monitoring

    try:
        return (duration not in _monitoring.get_event_duration_listeners(), event not in _monitoring.get_event_listeners())
    except Exception:  # noqa: BLE001 - a probe; unknown reads as still there
        return False, False


_LISTENER_LISTS = ("_event_listeners", "_event_duration_secs_listeners", "_event_time_span_listeners", "_scalar_listeners")
"""``jax._src.monitoring``'s lists of listeners (0.7 to 0.12), which its ``record_*`` functions loop over."""
_TIMING_LOGGERS = ("jax._src.dispatch", "jax._src.interpreters.pxla")
"""The loggers of JAX's stage timings ('Finished tracing g for jit in …', at WARNING under ``jax_log_compiles``)."""
_unheard_depth: dict[int, int] = {}
_unheard_lock = threading.Lock()
_unheard_lists: dict[str, tuple[list, list]] = {}


class _HeardByOthers(list):
    """One of JAX's lists of ``jax.monitoring`` listeners, put in its place while a thread reads back: on that thread
    it holds only jaxshow's listeners. Registering and removing work on it as on JAX's list."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        everyone = list.__iter__(self)
        if threading.get_ident() not in _unheard_depth:
            return everyone
        return iter([c for c in everyone if _jaxshows(c)])


def _jaxshows(callback: Any) -> bool:
    """Whether a listener is jaxshow's own (a function or bound method of its modules), read by type only."""
    callback = callback.__func__ if type(callback) is types.MethodType else callback
    module = callback.__module__ if type(callback) is types.FunctionType else None  # a user's function may set any
    return type(module) is str and module.startswith("jaxshow.")


def _not_unheard(record: Any) -> bool:
    return record.thread not in _unheard_depth


@contextlib.contextmanager
def unheard() -> Iterator[None]:
    """Keep what JAX reports of the stages this thread runs inside (jaxshow's read-back of a call's stations, which goes
    through JAX's trace path and times a trace-cache lookup as a trace) from the user's ``jax.monitoring`` listeners and
    JAX's timing log lines ('Finished tracing g for jit', shown under ``jax_log_compiles``): a plain run of the cell
    reports neither. jaxshow's own listeners still hear it; other threads' events and lines reach everyone."""
    from jax._src import monitoring as _monitoring

    thread = threading.get_ident()
    with _unheard_lock:
        if not _unheard_depth:
            for name in _LISTENER_LISTS:
                listeners = getattr(_monitoring, name, None)
                if type(listeners) is list:
                    _unheard_lists[name] = (listeners, _HeardByOthers(listeners))
                    setattr(_monitoring, name, _unheard_lists[name][1])
            for name in _TIMING_LOGGERS:
                logging.getLogger(name).addFilter(_not_unheard)
        _unheard_depth[thread] = _unheard_depth.get(thread, 0) + 1
    try:
        yield
    finally:
        with _unheard_lock:
            _unheard_depth[thread] -= 1
            if not _unheard_depth[thread]:
                del _unheard_depth[thread]
            if not _unheard_depth:
                for name, (listeners, standing) in _unheard_lists.items():
                    if getattr(_monitoring, name, None) is standing:  # else the user's code cleared them meanwhile
                        listeners[:] = list.copy(standing)
                        setattr(_monitoring, name, listeners)
                _unheard_lists.clear()
                for name in _TIMING_LOGGERS:
                    logging.getLogger(name).removeFilter(_not_unheard)


def exclude_from_source_info(directory: str) -> bool:
    """Keep JAX's call-site attribution and its filtered tracebacks off jaxshow's own frames.

    Without it, a function that jaxshow calls on the user's behalf is reported
    by JAX as called from jaxshow, and a traceback the user prints shows
    jaxshow's hook frames. Private in every JAX release checked
    (``source_info_util.register_exclusion``, ``traceback_util.register_exclusion``);
    returns whether both took effect.
    """
    path = directory.rstrip(os.sep) + os.sep
    done = 0
    for module_name in ("source_info_util", "traceback_util"):
        try:
            module = importlib.import_module(f"jax._src.{module_name}")
        except ImportError:
            continue
        register = getattr(module, "register_exclusion", None)
        excluded = getattr(module, "_exclude_paths", None)
        if register is None:
            continue
        if excluded is None or path not in excluded:
            register(path)
        done += 1
    return done == 2


def trace_context_names() -> tuple[str, ...] | None:
    """Names of the config values in JAX's trace context (jax >= 0.10.2), else ``None``."""
    try:
        from jax._src import config as _config

        return tuple(_config.trace_context_names())
    except Exception:  # noqa: BLE001 - NotImplementedError on older jaxlib
        return None


def trace_context_positions() -> tuple[str, ...] | None:
    """The name of each position of JAX's trace-context tuple: :func:`trace_context_names` (jax >= 0.10.2), else
    found by :func:`_probed_trace_context_positions`, where a position no holder in JAX's modules shows in (a user's
    ``jax.make_user_context``) is named by its place, ``trace context [i]``; ``None`` where this JAX cannot be probed.
    A name JAX gives more than one position (each ``jax.make_user_context`` is a ``user_context``) is numbered from its
    second (``user_context 2``): a position added later renames none before it."""
    listed = trace_context_names()
    if listed is None:
        try:
            from jax._src import config as _config

            listed = _probed_trace_context_positions(len(_config.trace_context()))
        except Exception:  # noqa: BLE001 - a trace context of another shape
            return None
    return _numbered_repeats(listed) if listed is not None else None


def _numbered_repeats(names: tuple[str | None, ...]) -> tuple[str, ...]:
    """``names`` with a repeated one numbered from its second, and ``trace context [i]`` for a position with none."""
    seen: dict[str, int] = {}
    numbered = []
    for i, name in enumerate(names):
        if name is None:
            numbered.append(f"{CONTEXT_POSITION}[{i}]")
            continue
        seen[name] = seen.get(name, 0) + 1
        numbered.append(name if seen[name] == 1 else f"{name} {seen[name]}")
    return tuple(numbered)


@functools.lru_cache(maxsize=4)
def _probed_trace_context_positions(length: int) -> tuple[str | None, ...] | None:
    """Each position of a trace context of ``length`` values named by setting each of JAX's config holders in turn to
    a fresh object, on this thread, and seeing where the object shows: the option's name (``jax_enable_x64``), else
    the global holding it (``mesh_context_manager``), as ``trace_context_names`` names them on jax >= 0.10.2.
    ``Config.swap_local`` stores the value and returns the one before it: no option's hook runs and nothing is
    traced, so JAX sees no change (a few ms, once per length: a module imported later may add an option). ``None`` for a
    position no holder in JAX's modules shows in (a ``jax.make_user_context`` of the user's)."""
    from jax._src import config as _config

    holder_type = getattr(getattr(_config, "config_ext", None), "Config", None)
    if not isinstance(holder_type, type) or not hasattr(holder_type, "swap_local"):
        return None
    names: list[str | None] = [None] * length
    seen: set[int] = set()
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "jax" or module_name.startswith("jax.")):
            continue
        for global_name, holder in list(vars(module).items()):
            holder = getattr(holder, "_obj", holder)  # a user context (jax.make_user_context) wraps its Config
            if not isinstance(holder, holder_type) or id(holder) in seen:
                continue
            seen.add(id(holder))
            marker = object()
            before = holder.swap_local(marker)
            try:
                context = _config.trace_context()
            finally:
                holder.swap_local(before)
            for index, value in enumerate(context[:length]):
                if value is marker and names[index] is None:
                    name = getattr(holder, "_name", None) or getattr(holder, "name", None)
                    names[index] = name if isinstance(name, str) and name else global_name
    return tuple(names)


_context_names: tuple[int, tuple[str, ...] | None] = (-1, None)
"""The names of the positions of JAX's trace-context tuple (:func:`trace_context_positions`), and the tuple's length when
they were read: JAX only appends to it, as a module imported later defines more (Pallas's, on jax 0.12, while a call
lowers)."""


def _context_position_names(length: int) -> tuple[str, ...]:
    """A name for each of the first ``length`` positions of JAX's trace context: JAX's own (``jax_enable_x64``,
    ``xla_metadata_context_manager``), else ``trace context [i]``; read again only when the tuple grows."""
    global _context_names
    if _context_names[0] != length:
        names = trace_context_positions()
        _context_names = (length, names[:length] if names is not None and len(names) >= length else None)
    return _context_names[1] or _numbered_repeats((None,) * length)


MESH_CONTEXT = "mesh context"
"""How jaxshow names the trace context's ``abstract_mesh_context_manager``, the mesh set around a call
(``jax.set_mesh``, ``jax.sharding.use_mesh``, a ``shard_map``'s), in ``%jaxcache`` and ``%%jaxstages``."""


class TraceContext(NamedTuple):
    """JAX's trace context as a call saw it (:func:`trace_context_snapshot`): a name for each position, and the values."""

    names: tuple[str, ...]
    values: tuple[Any, ...]


def trace_context_snapshot() -> TraceContext:
    """JAX's trace context as this thread sees it: the tuple JAX's caches key each trace on (every config option in it,
    and the states no option names: ``set_xla_metadata``, ``compute_on``, the mesh, a user context), with a name for
    each position. One call into JAX: cheap enough for every trace; :func:`describe_trace_context` writes it out when a
    report shows it. Empty where this JAX's trace context cannot be read."""
    try:
        values = tuple(_trace_context_now())
    except Exception:  # noqa: BLE001 - a JAX without one: nothing to compare, as for a trace under a transformation
        return TraceContext((), ())
    return TraceContext(_context_position_names(len(values)), values)


def describe_trace_context(snapshot: TraceContext) -> tuple[tuple[str, str], ...]:
    """``(name, value as text)`` for a :func:`trace_context_snapshot`, sorted by name, then the mesh set around the call
    (:data:`MESH_CONTEXT`): meshes as :func:`_mesh_context_text` writes them, the axes bound as ``axes ('i': 4)``,
    anything else as its ``repr`` (one that raises named by its type)."""
    described = sorted(_context_entry(name, value) for name, value in zip(*snapshot))
    return tuple(sorted(described, key=lambda entry: entry[0] == MESH_CONTEXT))


def _context_entry(name: str, value: Any) -> tuple[str, str]:
    if name == "abstract_mesh_context_manager":
        return MESH_CONTEXT, _mesh_context_text(value)
    if name == "mesh_context_manager":  # the concrete mesh of ``with mesh:``
        return name, _mesh_context_text(value)
    if name == "axis_env_state":  # an AxisEnv (jax >= 0.8), whose default repr holds its address; pairs on jax 0.7
        try:
            sizes = getattr(value, "axis_sizes", None)
            axes = [(str(n), int(size)) for n, size in (sizes.items() if sizes is not None else value)]
            return name, "axes (" + ", ".join(f"{n!r}: {size}" for n, size in axes) + ")" if axes else "no axes bound"
        except Exception:  # noqa: BLE001 - an environment of another shape: its repr
            pass
    return name, safe_repr(context_value(name, value), 200)


def context_value(name: str, value: Any) -> Any:
    """What a trace-context value is shown as: ``set_xla_metadata``'s dict (``{'foo': 'bar'}``), not the object that holds
    it, whose repr is its address; any other value itself."""
    if name == "xla_metadata_context_manager" and isinstance(getattr(value, "val", None), dict):
        return value.val
    return value


def _mesh_context_text(mesh: Any) -> str:
    """``mesh ('data': 2, 'model': 4, axis_types=(Auto, Auto))`` as a mesh line names a mesh; ``no mesh`` for none (JAX's
    ``None``, ``()`` or empty mesh)."""
    if mesh is None or (isinstance(mesh, tuple) and not mesh) or getattr(mesh, "empty", False):
        return "no mesh"
    sizes = mesh_sizes(mesh)
    types = ", ".join(getattr(t, "name", str(t)) for t in getattr(mesh, "axis_types", ()) or ())
    return f"mesh ({sizes}, axis_types=({types}{',' if len(mesh.axis_types) == 1 else ''}))" if sizes else repr(mesh)


# --- tracing cache and persistent compilation cache (used by retrace/, persistent.py) -------


def explain_logger_name() -> str:
    """The logger JAX's ``jax_explain_cache_misses`` writes to (moved in jax 0.9)."""
    return "jax._src.interpreters.partial_eval" if JAX_VERSION >= (0, 9) else "jax._src.pjit"


@functools.lru_cache(maxsize=None)
def _trace_cache_module():
    """The module whose ``trace_to_jaxpr`` is JAX's tracing cache (jax >= 0.9), else ``None`` (looked up once)."""
    try:
        from jax._src.interpreters import partial_eval as _pe
    except ImportError:
        return None
    cached = getattr(_pe, "trace_to_jaxpr", None)
    if cached is None or not hasattr(cached, "cache_info") or not hasattr(_pe, "diff_tracing_cache_keys"):
        return None
    return _pe


def _pjit_trace_cache() -> tuple[Any, Any, Any] | None:
    """jax <= 0.8's tracing cache: ``(pjit module, _create_pjit_jaxpr as installed now, its per-function dicts)``.

    Before jax 0.9 every jit trace goes through ``pjit._create_pjit_jaxpr``, a
    ``linear_util.cache`` that keeps one dict of keys per Python function in
    the closure variable ``fun_caches``. Returns ``None`` on any other JAX.
    """
    if _trace_cache_module() is not None:
        return None
    try:
        from jax._src import pjit as _pjit
    except ImportError:
        return None
    current = getattr(_pjit, "_create_pjit_jaxpr", None)
    cached = getattr(current, "jaxshow_original", current)  # under jaxshow probes, the lu.cache itself
    caches = _closure_value(cached, "fun_caches")
    if not hasattr(_pjit, "diff_tracing_cache_keys") or not hasattr(caches, "get") or not hasattr(caches, "values"):
        return None
    return _pjit, current, caches


def _trace_cache_callable() -> Any:
    """The callable that is JAX's tracing cache right now (the probe's wrapper while one is installed)."""
    module = _trace_cache_module()
    if module is not None:
        return module.trace_to_jaxpr
    pjit_cache = _pjit_trace_cache()
    return None if pjit_cache is None else pjit_cache[0]._create_pjit_jaxpr


def trace_cache_misses() -> int | None:
    """How many lookups in JAX's tracing cache have missed (traced) so far, else ``None`` (jax <= 0.8).

    From jax 0.9 JAX publishes its trace event around the cached
    ``trace_to_jaxpr``, so a lookup that found its jaxpr (a new ``jax.jit``
    wrapper of a function traced before) emits the event too; this count tells
    the two apart.
    """
    module = _trace_cache_module()
    if module is None:
        return None
    try:
        return int(module.trace_to_jaxpr.cache_info().misses)
    except Exception:  # noqa: BLE001 - a cache without the counter: unknown
        return None


def trace_cache_entries(fun: Any = None) -> int | None:
    """Entries JAX's own explanation compares a miss with, else ``None``.

    jax >= 0.9: the whole tracing cache, all functions together (``fun`` is
    ignored). jax <= 0.8: the keys cached for ``fun`` (JAX compares a miss only
    with those), or for all functions together when ``fun`` is ``None``.
    """
    module = _trace_cache_module()
    if module is None:
        pjit_cache = _pjit_trace_cache()
        if pjit_cache is None:
            return None
        caches = pjit_cache[2]
        try:
            if fun is None:
                return sum(len(c) for c in list(caches.values()))
            entries = _weak_get(caches, fun)
            return 0 if entries is None else len(entries)
        except Exception:  # noqa: BLE001 - a probe; absence is the answer
            return None
    try:
        return int(module.trace_to_jaxpr.cache_info().currsize)
    except Exception:  # noqa: BLE001 - a probe; absence is the answer
        return None


def _weak_get(table: Any, key: Any) -> Any:
    """``table.get(key)`` of a ``WeakKeyDictionary`` keyed by functions; by identity where ``key``'s class has an
    ``__eq__`` of its own (a callable object's), which the lookup would run on the user's object."""
    if type(key).__eq__ is object.__eq__:
        return table.get(key)
    return next((value for ref, value in list(table.data.items()) if ref() is key), None)


def _pjit_entries(caches: Any, fun: Any) -> Any:
    """jax <= 0.8: ``fun``'s entries in the tracing cache (:func:`_weak_get`); ``None`` where it has none, or where
    ``fun`` cannot be a weak key (``TypeError``)."""
    try:
        return _weak_get(caches, fun)
    except TypeError:
        return None


def _listed_keys(module: Any) -> list:
    """``trace_to_jaxpr.cache_keys()``, with the garbage collector off where listing them can crash (:func:`lists_keys_unsafely`)."""
    if not (lists_keys_unsafely() and gc.isenabled()):
        return module.trace_to_jaxpr.cache_keys()
    gc.disable()
    try:
        return module.trace_to_jaxpr.cache_keys()
    finally:
        gc.enable()


class _ClearWatch:
    """Stands in JAX's cache registry (``jax._src.util.register_cache``) as a cache, so that ``jax.clear_caches()`` calls
    its ``cache_clear``: the one moment JAX empties every tracing cache at once."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback = callback

    def cache_clear(self) -> None:
        try:
            self._callback()
        except Exception:  # noqa: BLE001 - the user's jax.clear_caches() must clear every cache after this one
            pass

    def cache_info(self) -> None:
        return None

    def cache_keys(self) -> tuple:
        return ()


def on_caches_cleared(callback: Callable[[], None]) -> Any:
    """Run ``callback`` whenever ``jax.clear_caches()`` empties JAX's caches; the handle to keep (JAX holds it weakly:
    dropped, the callback ends), or ``None`` where JAX has no cache registry to join."""
    try:
        from jax._src import util
        watch = _ClearWatch(callback)
        util.register_cache(watch, "jaxshow: forget the traces JAX let go of")
        return watch
    except Exception:  # noqa: BLE001 - another JAX: a cleared cache is told by the keys JAX lets go of, as before
        return None


_clears_here = threading.local()


def _count_clear_here() -> None:
    _clears_here.count = clears_on_this_thread() + 1


def clears_on_this_thread() -> int:
    """How many times ``jax.clear_caches()`` ran on this thread since jaxshow was imported: one that ran inside a lookup
    of JAX's tracing cache ran in its trace (a hit runs no code of the user's), which was a miss, though the clear
    emptied the counts and entries that tell one."""
    return getattr(_clears_here, "count", 0)


_clear_count_watch = on_caches_cleared(_count_clear_here)  # held here: JAX holds it weakly


def cached_trace_keys(fun: Any, debug_info: Any, other_than: Any = None) -> list | None:
    """The keys JAX's tracing cache holds for ``fun`` but ``other_than``, as the probe makes them; ``None`` where this JAX cannot say.

    A refused trace gets no words from JAX on jax <= 0.8 (it explains after
    tracing) and none for a static argument on jax >= 0.11 ("cache miss
    explanation unavailable"), so jaxshow diffs the miss against these itself.
    jax >= 0.9: ``trace_to_jaxpr.cache_keys()``, the ``(function ref, *key)``
    tuples JAX's own explainer filters the same way; O(entries in the cache).
    That list also holds the key of a lookup that raised (a refused one:
    JAX keeps its entry, and traces it when next asked), hence ``other_than``.
    jax <= 0.8: the per-function dict of ``pjit._create_pjit_jaxpr``, which
    keeps no key of a lookup that raised.
    """
    module = _trace_cache_module()
    try:
        if module is not None:
            if _trace_probes.holds_no_key(fun):
                return []
            return [key for ref, context, args, *_ in _trace_probes.listed_keys(module)
                    if ref() is fun and (key := (context, args, {})) != other_than]
        pjit_cache = _pjit_trace_cache()
        if pjit_cache is None:
            return None
        entries = _weak_get(pjit_cache[2], fun)
        return [k for key in list(entries or ()) if (k := PjitTraceKey(key, debug_info)) != other_than]
    except Exception:  # noqa: BLE001 - a probe; absence is the answer
        return None


def traced_functions() -> list | None:
    """The functions JAX's tracing cache holds an entry for, else ``None`` where this JAX cannot say.

    jax >= 0.9: ``trace_to_jaxpr.cache_keys()``; jax <= 0.8: the keys of ``pjit._create_pjit_jaxpr``'s
    per-function dicts. O(entries in the cache).
    """
    module = _trace_cache_module()
    try:
        if module is not None:
            return [fun for ref, *_ in _listed_keys(module) if (fun := ref()) is not None]
        pjit_cache = _pjit_trace_cache()
        return None if pjit_cache is None else list(pjit_cache[2].keys())
    except Exception:  # noqa: BLE001 - a probe; absence is the answer
        return None


def trace_cache_counts_all_functions() -> bool:
    """Whether :func:`trace_cache_entries` counts one cache for all functions (jax >= 0.9), not one per function."""
    return _trace_cache_module() is not None


class TraceProbe:
    """What ``install_trace_probe`` calls back: one object per traced call, on the tracing thread."""

    def enter(self, fun: Any, debug_info: Any) -> Any:  # pragma: no cover - interface
        """A call of the tracing cache starts; the return value comes back to ``exit``."""
        raise NotImplementedError

    def exit(self, token: Any, missed: bool, key: Any) -> None:  # pragma: no cover - interface
        """It ended; ``missed`` says whether this call (not a nested one) traced, ``key`` is its cache key."""
        raise NotImplementedError

    def traced(self, token: Any, jaxpr: Any) -> None:
        """This call traced ``jaxpr`` (JAX's open ``Jaxpr``, no constants); called before ``exit``. Optional."""

    def raised(self, token: Any, error: BaseException) -> None:
        """This call's trace raised ``error`` (not a refusal); called before ``exit``. Optional."""

    def refuses(self, fun: Any, debug_info: Any) -> Any:
        """A token when this lookup must not trace (it runs under ``jax.no_tracing``), else ``None``."""
        return None

    def refusal(self, token: Any, key: Any) -> BaseException | None:
        """The error to raise instead of JAX's when a lookup :meth:`refuses` let through would have traced."""
        return None


def _refused_by_jax(exc: BaseException) -> bool:
    """Whether ``exc`` is JAX's own ``jax_no_tracing`` error: the lookup would have traced."""
    return type(exc) is RuntimeError and "'no_tracing' is set" in str(exc)


class _Guard:
    """While entered (counted, any thread): some of JAX's functions replaced by guarded ones, each put back on the
    last exit where it is still the guard's. ``guards()`` lists ``(module, name, guarded function)`` at the first
    entry."""

    def __init__(self, guards: Callable[[], list[tuple[Any, str, Any]]]) -> None:
        self._guards = guards
        self._lock = threading.Lock()
        self._depth = 0
        self._restore: list[tuple[Any, str, Any, Any]] = []

    def __enter__(self) -> None:
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._restore = [(module, name, getattr(module, name), guard) for module, name, guard in self._guards()]
                for module, name, _, guard in self._restore:
                    setattr(module, name, guard)

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for module, name, original, guard in self._restore:
                    if getattr(module, name) is guard:  # put back only where it is still ours
                        setattr(module, name, original)
                self._restore = []


def _explanation_guards() -> list[tuple[Any, str, Any]]:
    """JAX's wording of a tracing-cache miss returns a note instead of raising.

    With ``jax_explain_cache_misses`` on, jax <= 0.10 words a miss through
    ``diff_tracing_cache_keys`` (``pjit``'s up to 0.8, ``partial_eval``'s from
    0.9), which calls ``repr`` on the static values: one whose ``repr`` raises
    made the user's call raise, where without the flag it runs. jaxshow turns
    the flag on, so it guards that function while it does.
    """
    return [(module, "diff_tracing_cache_keys", _guarded_diff(original, module is _pjit_module()))
            for module in (_pjit_module(), _trace_cache_module())
            if module is not None and callable(original := getattr(module, "diff_tracing_cache_keys", None))]


def _tree_comparison_guards() -> list[tuple[Any, str, Any]]:
    """JAX's comparison of two keys' pytrees (``tree_util.equality_errors_pytreedef``, all versions) runs no flatten nor
    ``__repr__`` of the user's (:func:`_guarded_tree_errors`)."""
    tree_util = _tree_util_module()
    errors = getattr(tree_util, "equality_errors_pytreedef", None)
    return [(tree_util, "equality_errors_pytreedef", _guarded_tree_errors(errors))] if callable(errors) else []


def _tree_util_module() -> Any:
    from jax._src import tree_util

    return tree_util


def _guarded_tree_errors(original: Callable[..., Any]) -> Callable[..., Any]:
    """JAX's ``equality_errors_pytreedef(tree1, tree2)``, read from the two definitions alone where JAX's own would run
    code of the user's (:func:`_runs_users_code`): it rebuilds both trees, flattens each node again and prints their
    metadata (its explanation of one miss ran a user's ``tree_flatten`` 26 times, where the call runs it once)."""
    def equality_errors_pytreedef(tree1: Any, tree2: Any) -> Any:
        if user_explains_cache_misses() and not getattr(_own_comparison, "depth", 0):
            return original(tree1, tree2)  # JAX's explanation, which the user's flag asked for: JAX's words, as without jaxshow
        if not differ(tree1, tree2):  # JAX's finds no error in equal trees: none to look for (JAX compares a new key with every cached one)
            return iter(())
        if not _runs_users_code([tree1, tree2]):
            return original(tree1, tree2)
        return _treedef_errors((), tree1, tree2)

    return functools.update_wrapper(equality_errors_pytreedef, original)


def _runs_users_code(trees: list[Any]) -> bool:
    """Whether rebuilding, flattening or printing the nodes of ``trees`` (``PyTreeDef``s) runs code of the user's: a
    flatten JAX's registry holds from no installed file, or a ``__repr__`` of the user's in a node's metadata
    (:func:`jaxshow.reprs.runs_users_repr`). A tree that cannot be read runs none."""
    try:
        return any(runs_users_repr(meta) or ((code := pytree_flatten_code(kind)) is not None
                                             and not is_installed(os.path.abspath(code.co_filename)))
                   for kind, meta in _node_data(trees))
    except Exception:  # noqa: BLE001 - not a PyTreeDef
        return False


def _node_data(trees: list[Any]) -> Iterator[tuple[type, Any]]:
    """``(type, metadata)`` of each node of ``trees`` (``PyTreeDef``s), leaves left out, read without rebuilding any."""
    pending = list(trees)
    while pending:
        tree = pending.pop()
        if (data := tree.node_data()) is not None:
            yield data
        pending.extend(tree.children())


class _LeafType(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


class _Leaf(metaclass=_LeafType):
    """How JAX's ``equality_errors_pytreedef`` names a leaf's type: ``pytree leaf``."""


def _treedef_errors(path: tuple, tree1: Any, tree2: Any) -> Any:
    """``tree_util.equality_errors_pytreedef``'s ``(path, now, before, why)`` entries, in its words and order, read from
    two ``PyTreeDef``s without rebuilding or flattening a node: a child of a node other than a tuple, list, namedtuple or
    dict is keyed by its index (``FlattenedIndexKey``), as its own keys come only from running its flatten; metadata is
    compared with ``!=`` and shown by :func:`safe_repr` (no ``__repr__`` of the user's runs)."""
    from jax.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

    data1, data2 = tree1.node_data(), tree2.node_data()
    if data1 is None and data2 is None:
        return
    kind1, kind2 = (_Leaf if d is None else d[0] for d in (data1, data2))
    if kind1 is not kind2:
        yield path, str(kind1), str(kind2), "their Python types differ"
        return
    children1, children2 = tree1.children(), tree2.children()
    if issubclass(kind1, (list, tuple)) and len(children1) != len(children2):
        yield (path, f"{kind1.__name__} of length {len(children1)}", f"{kind2.__name__} of length {len(children2)}",
               "the lengths do not match")
        return

    def keys(kind: type, meta: Any, n: int) -> list[Any]:
        if issubclass(kind, dict):
            return [DictKey(k) for k in meta]
        if issubclass(kind, tuple) and hasattr(kind, "_fields"):
            return [GetAttrKey(name) for name in kind._fields]
        return [(SequenceKey if issubclass(kind, (list, tuple)) else FlattenedIndexKey)(i) for i in range(n)]

    keys1, keys2 = keys(kind1, data1[1], len(children1)), keys(kind2, data2[1], len(children2))
    if len(children1) != len(children2):
        try:
            diff = " ".join(repr(k.key) for k in set(keys1).symmetric_difference(set(keys2)))
        except Exception:  # noqa: BLE001 - keys that do not hash
            diff = ""
        counted = [f"{kind} with {len(c)} child{'ren' if len(c) > 1 else ''}" for kind, c in ((kind1, children1), (kind2, children2))]
        yield (path, *counted, "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    meta1, meta2 = ((tuple(d[1]) if issubclass(kind1, dict) else d[1]) for d in (data1, data2))  # a dict's: its keys
    if differ(meta1, meta2):
        yield (path, f"{kind1} with pytree metadata {safe_repr(meta1, _STATIC_REPR_CHARS)}",
               f"{kind2} with pytree metadata {safe_repr(meta2, _STATIC_REPR_CHARS)}", "the pytree node metadata does not match")
        return
    for key, child1, child2 in zip(keys1, children1, children2):
        yield from _treedef_errors((*path, key), child1, child2)


def _diff_once(diff: Callable[..., Any], new_key: tuple, old_key: tuple, *rest: Any) -> Any:
    """JAX's ``diff(new_key, old_key, *rest)`` of two tracing-cache keys, once for a pair within a lookup
    (:func:`jaxshow.reprs.each_pair_compared_once`): its explanation compares the new key with each kept one, jaxshow
    asks again for the closest, each comparison running a static value's ``__eq__`` of the user's. A pair is known by
    the objects the keys hold (jax <= 0.8's transforms, jax >= 0.9's input ``FlatTree``): jaxshow's key is built anew."""
    try:
        subjects = (new_key[0], old_key[0]) if rest else (new_key[1][0], old_key[1][0])
    except (TypeError, IndexError):
        return diff(new_key, old_key, *rest)
    return once_per_pair(diff, new_key, old_key, *rest, by=subjects)


def _guarded_diff(original: Callable[..., Any], pjit_shape: bool) -> Callable[..., Any]:
    def diff_tracing_cache_keys(*args: Any, **kwargs: Any) -> Any:
        try:
            new, old = ((_pjit_static_entries(args[0][0]), _pjit_static_entries(args[1][0])) if pjit_shape
                        else (_static_boxes(args[0]), _static_boxes(args[1])))
            users = user_explains_cache_misses()  # the user's flag: JAX's words, as without jaxshow
            if not users and unread_statics_differ(new, old):
                note = f"{EXPLANATION_UNAVAILABLE}: {STATICS_UNREAD}"
            elif not users and pjit_shape and (trees := _pjit_unread_trees(args[0][0], args[1][0])) is not None:
                return [_tree_words(*trees)], len(list(_treedef_errors((), *trees)))
            elif kwargs or len(args) != 2 + pjit_shape:
                return original(*args, **kwargs)
            else:
                return _diff_once(original, *args)
        except Exception as exc:  # noqa: BLE001 - a user's static value's repr or ==
            note = _explanation_unavailable(exc)
        # pjit's (diffs, size), partial_eval's (severity, count, text): ranked last, so a key JAX can compare is the closest
        return ([note], sys.maxsize) if pjit_shape else (4, sys.maxsize, note)

    return functools.update_wrapper(diff_tracing_cache_keys, original)


EXPLANATION_UNAVAILABLE = "cache miss explanation unavailable"
"""How JAX's comparison of two cache keys starts when it has no reason to give (and jaxshow's, when it raised)."""


STATICS_UNREAD = "comparing the keys would run the repr of a static value of yours, which the call itself never runs"
"""Why JAX's comparison of two keys is not asked for, under the flag jaxshow turned on (:func:`unread_statics_differ`)."""


def unread_statics_differ(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether JAX's comparison of two keys would print static values (:func:`_static_entries`, or
    :func:`_static_boxes`) whose ``repr`` is the user's (:func:`jaxshow.reprs.runs_users_repr`), which the plain call
    never runs: it prints the two at a place both keys hold a static value, where they differ."""
    common = new.keys() & old.keys()
    return (any(runs_users_repr(_unboxed(v)) for v in (*new.values(), *old.values()))
            and any(differ(new[p], old[p]) for p in common))


def _static_boxes(key: Any) -> dict[str, Any]:
    """:func:`_static_entries`, jax >= 0.11's values in their ``FTStatic`` boxes, which :func:`jaxshow.reprs.differ`
    compares by the hash they keep first (no ``__eq__`` of the user's runs for values of unequal hashes)."""
    boxes = _static_args(key) if not isinstance(key, PjitTraceKey) else None
    return boxes if boxes is not None else _static_entries(key)


def _unboxed(value: Any) -> Any:
    """The value in jax >= 0.11's ``FTStatic`` box (:func:`_static_boxes`), else ``value`` itself."""
    ft = _flattree()
    return value.val if ft is not None and type(value) is ft.FTStatic else value


def _pjit_unread_trees(transforms: Any, old_transforms: Any) -> tuple[Any, Any] | None:
    """jax <= 0.8: the input pytrees of two keys (their ``flatten_fun`` transforms) where they differ and JAX's words
    for them would print a ``__repr__`` of the user's in a node's metadata (it prints both trees whole), else ``None``."""
    trees = [*_pjit_in_trees(transforms), *_pjit_in_trees(old_transforms)]
    if len(trees) == 2 and differ(*trees) and any(runs_users_repr(meta) for _, meta in _node_data(trees)):
        return trees[0], trees[1]
    return None


def _tree_words(tree: Any, old_tree: Any) -> str:
    """jax >= 0.9's words for two different input pytrees (:func:`_treedef_errors`), which print no ``__repr__`` of the
    user's."""
    return "different input pytree:\n" + "\n".join(
        f"  * at input path {jax.tree_util.keystr(tuple(path))}, now {now} and before {before}, so {why}"
        for path, now, before, why in _treedef_errors((), tree, old_tree))


def _static_entries(key: Any) -> dict[str, Any]:
    """A key's static values by where JAX's comparison prints them: each by input path (jax >= 0.9); jax <= 0.8 prints
    all positional ones, or all keyword ones, where any of them differ."""
    if isinstance(key, PjitTraceKey):
        return _pjit_static_entries(key.key[0])
    return _statics_by_path(key)


def _pjit_in_trees(transforms: Any) -> list[Any]:
    """jax <= 0.8: the input pytree a key's ``flatten_fun`` transform holds, as a list of one (none where there is none)."""
    return [t[1][0] for t in transforms if getattr(t[0], "__name__", "").startswith("flatten_fun")][:1]


def _pjit_static_entries(transforms: Any) -> dict[str, Any]:
    args, kwargs = _pjit_statics(transforms)
    return {"args": tuple(args), "kwargs": tuple(kwargs.items())}


def _explanation_unavailable(exc: BaseException) -> str:
    return f"{EXPLANATION_UNAVAILABLE}: comparing the keys raised {type(exc).__name__} (a static value's repr or ==?)"


def _treedef_parts(tree: Any) -> tuple:
    """A pytree definition as its node's ``(type, metadata)`` and its children's definitions: what its ``==`` compares."""
    return tree.node_data(), tuple(tree.children())


_PLAIN_NODES = frozenset({dict, list, tuple, type(None), collections.OrderedDict})
_PLAIN_METADATA = frozenset({type(None), str, int, float, bool, bytes})
_plain_trees: dict[int, Any] = {}
"""Pytree definitions found plain (:func:`_plain_tree`) by id, each held (so no other takes its id), emptied when they
hold more than :data:`_PLAIN_NODES_KEPT` nodes: a miss compares its key with each kept one, whose definitions are the
same objects from one miss to the next."""
_PLAIN_NODES_KEPT = 200_000
"""Nodes of the definitions remembered plain, at most (a few MB; JAX's own cache holds most of them anyway)."""
_plain_nodes = [0]


def _plain_tree(tree: Any) -> bool:
    """Whether ``tree == other`` (``PyTreeDef``s) answers as :func:`_treedef_parts` compared, running no code of the
    user's: each node a dict, list, tuple, ``None``, ordered dict or namedtuple (a registered node may not: jax >= 0.10
    finds two ``register_dataclass`` classes of one name equal), whose metadata (a dict's keys) is builtin scalars.
    Those found plain are remembered."""
    if id(tree) in _plain_trees:
        return True
    try:
        for kind, meta in _node_data([tree]):
            if not (kind in _PLAIN_NODES or (issubclass(kind, tuple) and type(kind) is type and hasattr(kind, "_fields"))) \
                    or not all(type(m) in _PLAIN_METADATA for m in (meta if type(meta) in (list, tuple) else (meta,))):
                return False
    except Exception:  # noqa: BLE001 - not a PyTreeDef as this JAX makes them
        return False
    nodes = getattr(tree, "num_nodes", 1)
    if _plain_nodes[0] + nodes > _PLAIN_NODES_KEPT:
        _plain_trees.clear()
        _plain_nodes[0] = 0
    _plain_trees[id(tree)] = tree
    _plain_nodes[0] += nodes
    return True


def _static_parts(static: Any) -> tuple:
    """A boxed static value as its ``==`` compares it: the value's type, the hash the box keeps (jax >= 0.11's
    ``FTStatic``: two values of unequal hashes differ, as JAX's cache finds them, with no ``__eq__`` run), then the value
    (by identity where unhashable)."""
    val = static.val
    return type(val), getattr(static, "_hash", None), (val if getattr(static, "_hashable", True) else id(val))


def _compare_keys_by_parts() -> None:
    """Teach :func:`jaxshow.reprs.differ` the parts of the JAX objects a tracing-cache key holds (pytree definitions,
    the boxes of static values (jax <= 0.8's in its transforms), jax 0.9-0.10's ``FlatTree``, jax >= 0.11's
    ``flattree`` cases), so that within :func:`jaxshow.reprs.each_pair_compared_once` a static value of the user's is
    compared once with each other one, not once per whole-key, whole-tree or node comparison of its steps. Any JAX
    version: a class this one lacks is skipped."""
    tree_util = _tree_util_module()
    compared_by_parts(tree_util.PyTreeDef, _treedef_parts, whole=_plain_tree)
    try:
        from jax._src import flattree
    except ImportError:
        flattree = None
    try:
        from jax._src import hijax
    except ImportError:
        hijax = None
    from jax._src import api_util

    for module, name, part in [(tree_util, "Static", _static_parts), (hijax, "Static", lambda s: (s.val,)),
                               (api_util, "_HashableWithStrictTypeEquality", _static_parts),
                               (tree_util, "FlatTree", lambda t: (t.vals, t.tree, t.statics, t.registry)),
                               (flattree, "FTStatic", _static_parts), (flattree, "FTTuple", lambda t: (t.elts,)),
                               (flattree, "FTDict", lambda t: (t.keys, t._vals)),
                               (flattree, "FTPyTree", lambda t: (t.xs, t.tree)),
                               (flattree, "FTSingleton", lambda t: (t.val,)), (flattree, "FTFiltered", lambda t: (t.val,))]:
        kind = getattr(module, name, None)
        if isinstance(kind, type) and "__eq__" in vars(kind):
            compared_by_parts(kind, part, operator.attrgetter("val") if part is _static_parts else None)  # a box's value


_compare_keys_by_parts()


_explanation_guard = _Guard(_explanation_guards)
_tree_comparison_guard = _Guard(_tree_comparison_guards)
_own_comparison = threading.local()
"""``depth``: jaxshow's own comparisons of two keys open on this thread (:func:`_jaxshows_comparison`)."""


@contextlib.contextmanager
def _jaxshows_comparison() -> Any:
    """jaxshow's own comparison of two keys (its diff, its ranking), through JAX's functions: their pytree comparison
    runs no flatten or ``__repr__`` of the user's, whatever the user's flag (it is no explanation the user asked for)."""
    _own_comparison.depth = getattr(_own_comparison, "depth", 0) + 1
    try:
        with _tree_comparison_guard:
            yield
    finally:
        _own_comparison.depth -= 1


def special_value_found(exc: BaseException | None) -> tuple[str, str] | None:
    """``(program, "nan" or "inf")`` where ``exc`` is JAX's signal that ``jax_debug_nans``/``jax_debug_infs`` found one.

    JAX checks a jitted call's output after it ran and raises its internal
    ``InternalFloatingPointError(name, ty)`` (``jax._src.api_util``, 0.7 to
    0.12); it catches it itself, runs the function again de-optimized to find
    the operation, and raises a ``FloatingPointError`` from there. ``None``
    for any other error, or where this JAX has no such class.
    """
    try:
        from jax._src.api_util import InternalFloatingPointError
    except ImportError:
        return None
    if not isinstance(exc, InternalFloatingPointError):
        return None
    return str(getattr(exc, "name", "?")), str(getattr(exc, "ty", "nan"))


class _Explaining(threading.local):
    """jaxshow's own ``jax.explain_cache_misses(True)`` contexts open on this thread, and the user's value beneath them."""

    depth = 0
    users_value = False


_explaining = _Explaining()


def _explain_flag() -> bool:
    try:
        return bool(jax.config.jax_explain_cache_misses)
    except Exception:  # noqa: BLE001 - a JAX without the attribute
        return bool(jax.config.values.get("jax_explain_cache_misses", False))


@contextlib.contextmanager
def explaining_cache_misses() -> Any:
    """``jax.explain_cache_misses(True)``, where JAX's explanation of a miss never raises into the user's call."""
    depth = _explaining.depth
    if depth == 0:
        _explaining.users_value = _explain_flag()
    _explaining.depth = depth + 1
    try:
        with _explanation_guard, _tree_comparison_guard, jax.explain_cache_misses(True):
            yield
    finally:
        _explaining.depth = depth


def user_explains_cache_misses() -> bool:
    """Whether ``jax_explain_cache_misses`` would be on here without jaxshow's own contexts on this thread.

    JAX logs a ``TRACING CACHE MISS`` only while the flag is on, and logs its
    persistent-cache misses and skipped writes at WARNING instead of DEBUG:
    what the user set (``jax.config.update``, ``with jax.explain_cache_misses():``
    around the magic or the lookup) decides whether they would have seen those
    lines. Read beneath jaxshow's outermost context on this thread, where one is open.
    """
    return _explaining.users_value if _explaining.depth else _explain_flag()


def refusing_traces() -> Any:
    """A context in which a trace of a jitted function raises instead of running, and JAX explains the miss first.

    ``jax.no_tracing`` (public since jax 0.7; JAX checks it before tracing, so
    the function's Python never runs and nothing is cached) and
    ``jax.explain_cache_misses`` (JAX logs why the lookup missed, before its
    check). Neither is part of a cache key: a hit is unchanged. ``None`` where
    this JAX has no ``no_tracing``.
    """
    no_tracing = getattr(jax, "no_tracing", None)
    if no_tracing is None:
        try:
            from jax._src.config import no_tracing
        except ImportError:
            return None

    stack = contextlib.ExitStack()
    stack.enter_context(no_tracing(True))
    stack.enter_context(explaining_cache_misses())
    return stack


class _TraceProbes(TraceProbe):
    """The one probe JAX's tracing cache calls: every installed probe, in order, each guarded.

    It also knows, without listing JAX's cache again, which functions that cache holds no key for (jax >= 0.9): listing
    it costs O(entries), all functions together (36 ms at 36,000), and a ``%jaxcache`` session asks at the first miss of
    every function it keeps no history of. A function holds none when it held none at the last listing (:attr:`holders`)
    and no lookup of it ended since (:attr:`touched`): while installed, every lookup goes through the probe.
    """

    def __init__(self) -> None:
        self.probes: list[TraceProbe] = []
        self.lock = threading.Lock()
        self.uninstall: Callable[[], None] | None = None
        self.holders: frozenset[int] | None = None
        """The ids of the functions JAX's tracing cache held a key for when it was last listed, while installed."""
        self.touched: set[int] = set()
        """The ids of the functions whose lookups ended since that listing (each lookup's key is in JAX's cache by then)."""
        self._index_lock = threading.Lock()

    def holds_no_key(self, fun: Any) -> bool:
        """Whether JAX's tracing cache is known to hold no key for ``fun``, but for a lookup of it still open."""
        with self._index_lock:
            return self.holders is not None and id(fun) not in self.holders and id(fun) not in self.touched

    def listed_keys(self, module: Any) -> list:
        """``module``'s tracing-cache keys (:func:`_listed_keys`), noting while installed which functions they belong to.

        :attr:`touched` is emptied before the listing: a lookup that ends after it added its key first, so it is in
        the listing or noted after it. An id seen again for another function (the first freed) only means a listing."""
        installed = self.uninstall is not None
        with self._index_lock:
            if installed:
                self.holders = None
                self.touched.clear()
            keys = _listed_keys(module)
            if installed:
                self.holders = frozenset(id(f) for ref, *_ in keys if (f := ref()) is not None)
        return keys

    def forget_listing(self) -> None:
        """Drop what the last listing said: once uninstalled, lookups go unseen."""
        with self._index_lock:
            self.holders = None
            self.touched.clear()

    def enter(self, fun: Any, debug_info: Any) -> list:
        tokens = []
        for probe in list(self.probes):
            try:
                tokens.append((probe, probe.enter(fun, debug_info)))
            except Exception:  # noqa: BLE001 - a probe must never break the user's call
                pass
        return tokens

    def traced(self, tokens: list, jaxpr: Any) -> None:
        _tell_each(tokens, "traced", jaxpr)

    def raised(self, tokens: list, error: BaseException) -> None:
        _tell_each(tokens, "raised", error)

    def exit(self, tokens: list, missed: bool, key: Any) -> None:
        _tell_each(tokens, "exit", missed, key)

    def refusing(self, fun: Any, debug_info: Any) -> list | None:
        """The probes that refuse this lookup a trace, with their tokens; ``None`` when none does."""
        found = None
        for probe in list(self.probes):
            try:
                token = probe.refuses(fun, debug_info)
            except Exception:  # noqa: BLE001
                token = None
            if token is not None:
                found = (found or []) + [(probe, token)]
        return found

    def refused(self, refusing: list, key: Any) -> BaseException | None:
        """The error the first refusing probe raises for a lookup that would have traced."""
        for probe, token in refusing:
            try:
                error = probe.refusal(token, key)
            except Exception:  # noqa: BLE001
                error = None
            if error is not None:
                return error
        return None


def _tell_each(tokens: list | None, event: str, *args: Any) -> None:
    """Call ``event`` (``traced``, ``raised``, ``exit``) of each probe that entered, with its token, innermost first; a
    probe that raises is skipped."""
    for probe, token in reversed(tokens or ()):
        try:
            getattr(probe, event)(token, *args)
        except Exception:  # noqa: BLE001 - a probe must never break the user's call
            pass


_trace_probes = _TraceProbes()
TOUCHED_LIMIT = 100_000
"""Functions looked up since the last listing of JAX's tracing cache past which the next question lists it again."""


def install_trace_probe(probe: TraceProbe) -> Callable[[], None] | None:
    """Add ``probe`` to the observers of JAX's tracing cache; returns the function that removes it.

    However probes are added and removed (a ``%jaxcache on`` session opened
    inside a ``%%jaxcache`` cell and closed after it), JAX's own tracing
    cache is put back when the last one goes. Returns ``None`` where this JAX
    has no such cache.
    """
    with _trace_probes.lock:
        if not _trace_probes.probes:
            _trace_probes.uninstall = _install_trace_cache_wrapper(_trace_probes)
            if _trace_probes.uninstall is None:
                return None
        _trace_probes.probes.append(probe)

    def uninstall() -> None:
        with _trace_probes.lock:
            if probe in _trace_probes.probes:
                _trace_probes.probes.remove(probe)
            if not _trace_probes.probes and _trace_probes.uninstall is not None:
                _trace_probes.uninstall()
                _trace_probes.uninstall = None
                _trace_probes.forget_listing()

    return uninstall


def _install_trace_cache_wrapper(probe: _TraceProbes) -> Callable[[], None] | None:
    """Observe every lookup in JAX's tracing cache, hit or miss, without changing it.

    JAX has no public hook for "this call traced". Since jax 0.9 every trace of
    a jitted function (and of ``cond``/``scan`` bodies) goes through the
    ``weakref_lru_cache`` ``partial_eval.trace_to_jaxpr``; jaxshow puts a thin
    forwarding wrapper in its place and tells a miss from a hit by the cache's
    own miss counter, or by the lookup raising: a hit returns what the cache
    holds, and a trace that failed again (the same call re-run after a Ctrl-C or
    an error) leaves that counter where it was; so does the trace that then succeeds (or follows a refused one),
    told by its key (:func:`_after_raise`). C++ fast-path hits never reach
    it, so a hot loop pays nothing. On jax 0.7-0.8 the tracing cache is the ``lu.cache``'d
    ``pjit._create_pjit_jaxpr`` instead (:func:`_install_pjit_trace_probe`);
    its keys are :class:`PjitTraceKey`. Returns the function that puts the
    original back, or ``None`` where this JAX has no such cache.
    """
    module = _trace_cache_module()
    if module is None:
        return _install_pjit_trace_probe(probe)
    from jax._src import config as _config

    original = module.trace_to_jaxpr
    info = original.cache_info
    local = threading.local()
    explaining_unsafely = lists_keys_unsafely()

    class _Probed:
        __slots__ = ()

        def __call__(self, fun, in_avals, debug_info, *context, **kwargs):
            __tracebackhide__ = True  # noqa: F841 - IPython leaves this frame out of a refused trace's traceback
            stack = getattr(local, "stack", None)
            if stack is None:
                stack = local.stack = []
            compared = each_pair_compared_once()  # JAX's explanation, then the record of the miss: a pair compared once
            compared.__enter__()  # not a with: no frame of jaxshow's stays in the user's traceback
            token = probe.enter(fun, debug_info)
            refusing = probe.refusing(fun, debug_info) if probe.probes else None
            before, clears = info().misses, clears_on_this_thread()
            stack.append(0)
            missed = refused = raised = False
            result = None
            collecting = explaining_unsafely and gc.isenabled() and (refusing is not None or _config.explain_cache_misses.value)
            try:
                if collecting:
                    gc.disable()
                if refusing is None:
                    result = original(fun, in_avals, debug_info, *context, **kwargs)
                else:
                    with refusing_traces():
                        result = original(fun, in_avals, debug_info, *context, **kwargs)
                return result
            except BaseException as exc:
                raised = True
                _drop_own_frame(exc, sys._getframe())
                if refusing is not None and _refused_by_jax(exc):
                    refused = True
                    error = probe.refused(refusing, (_config.trace_context(), (in_avals, debug_info, *context), {}))
                    if error is not None:
                        raise error from None
                else:
                    probe.raised(token, exc)
                raise
            finally:
                if collecting:
                    gc.enable()
                nested = stack.pop()
                delta = info().misses - before
                retried = _after_raise(fun, (in_avals, debug_info, context, tuple(kwargs.items())), raised)
                missed = (delta - nested > 0 or raised or retried or clears_on_this_thread() != clears) and not refused
                if stack:
                    stack[-1] += delta
                key = (_config.trace_context(), (in_avals, debug_info, *context), {}) if missed else None
                if missed and result is not None:
                    probe.traced(token, traced_jaxpr(result))
                probe.exit(token, missed, key)
                if probe.holders is not None:  # its key, if any, is in JAX's cache: after its own probe.exit
                    touched = probe.touched
                    touched.add(id(fun))
                    if len(touched) > TOUCHED_LIMIT:
                        probe.holders = None
                compared.__exit__(None, None, None)
                del token, refusing  # this frame outlives the call in its error's traceback: it keeps no session alive

        def __getattr__(self, name):
            return getattr(original, name)

    probed = _Probed()
    module.trace_to_jaxpr = probed

    def uninstall() -> None:
        if module.trace_to_jaxpr is probed:
            module.trace_to_jaxpr = original

    return uninstall


@functools.cache
def lists_keys_unsafely() -> bool:
    """Whether this jaxlib's tracing cache can crash the process while it lists its keys (jaxlib 0.9.x).

    ``trace_to_jaxpr.cache_keys()`` builds Python tuples as it walks its C++
    map. A collection that an allocation there starts can free a weakly keyed
    function (a reloaded module's, any function in a reference cycle), whose
    callback erases entries from the map mid-walk: a segmentation fault. JAX
    lists the keys so itself before it explains a miss
    (``jax_explain_cache_misses``), and jaxshow does to diff a miss
    (:func:`cached_trace_keys`). jaxlib 0.10.0 snapshots the entries first
    (jax commit 5608120, "Possible fix for a crash seen in CI"); 0.9.x is the
    only release with the listing and without the fix. There, jaxshow keeps
    the collector off while it lists, and for a lookup while misses are
    explained (the trace included: the collector runs again when the
    outermost lookup returns).
    """
    try:
        from jax._src.lib import version as jaxlib_version
    except ImportError:
        return False
    return (0, 9) <= tuple(jaxlib_version)[:2] < (0, 10)


_failed_lookups: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per function, the keys of lookups of JAX's tracing cache that raised (a refused trace, an error), kept across
installs of the probe (``%jaxcache thaw`` then ``%%jaxcache``): JAX keeps an entry for such a key, and counts its next
lookup a hit, though it traces then."""

_failed_kinds: set[type] = set()
"""The types of the functions in :data:`_failed_lookups`: a function of another type (a callable object of the user's
class) is not hashed, which would run its own ``__hash__``, to find it is not there."""


def _after_raise(fun: Any, lookup: tuple, raised: bool) -> bool:
    """Whether this lookup of ``fun`` returned for a key whose earlier lookup raised, so it traced (JAX counts it a
    hit); a lookup that raised is remembered (at most 64 keys a function). The trace context is part of the key."""
    failed = _failed_lookups
    try:
        if not raised and (type(fun) not in _failed_kinds or fun not in failed):
            return False
        key, keys = (_trace_context_now(), *lookup), failed.setdefault(fun, set())
        if raised:
            _failed_kinds.add(type(fun))
            if len(keys) >= 64:
                keys.clear()
            keys.add(key)
            return False
        if key in keys:
            keys.discard(key)
            return True
    except Exception:  # noqa: BLE001 - a function or key that cannot be hashed or weakly referenced: as before
        pass
    return False


def _trace_context_now() -> Any:
    from jax._src import config as _config

    return _config.trace_context()


def traced_jaxpr(result: Any) -> Any:
    """The open ``Jaxpr`` in what JAX's tracing cache returned (its first item is a ``ClosedJaxpr`` on every
    release checked, 0.7.0 through 0.12), else ``None``. It may hold constants (jax 0.12's own, an inner jit's): what is
    kept past the miss is :func:`jaxpr_without_values`'s copy."""
    closed = result[0] if isinstance(result, tuple) and result else None
    jaxpr = getattr(closed, "jaxpr", None)
    return jaxpr if jaxpr is not None and hasattr(jaxpr, "eqns") else None


def jaxpr_without_values(jaxpr: Any) -> Any:
    """``jaxpr`` (open or closed) with every constant's value, its own and those of the jaxprs in its equations'
    parameters, replaced by ``None``: it prints as ``jaxpr`` does and keeps no array alive. jax 0.12's open ``Jaxpr``
    carries its constants (what the function closes over), and on every release a nested ``jax.jit`` that closes over an
    array carries them in its ``ClosedJaxpr`` parameter. Parts that hold no constant are shared, not copied."""
    kinds = _jaxpr_types()
    closed_kind = kinds[-1] if len(kinds) == 2 else None  # ClosedJaxpr, where this JAX has one
    done: dict[int, Any] = {}

    def param(value: Any) -> Any:
        if isinstance(value, kinds):
            return strip(value)
        if type(value) in (tuple, list) and any(isinstance(v, kinds) for v in value):
            items = [param(v) for v in value]
            return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
        return value

    def equation(eqn: Any) -> Any:
        params = None  # a copy once a parameter changes: most equations hold no jaxpr
        for name, value in eqn.params.items():
            new = param(value)
            if new is not value:
                params = dict(eqn.params) if params is None else params
                params[name] = new
        return eqn if params is None else eqn.replace(params=params)

    def strip(closed: Any) -> Any:
        if id(closed) in done:
            return done[id(closed)]
        is_closed = closed_kind is not None and isinstance(closed, closed_kind)
        inner = original = closed.jaxpr if is_closed else closed  # a ClosedJaxpr's Jaxpr; jax 0.12's Jaxpr is its own
        eqns = [equation(eqn) for eqn in inner.eqns]
        if any(map(operator.is_not, eqns, inner.eqns)):
            inner = inner.replace(eqns=eqns)
        consts = closed.consts if is_closed or _carries_consts(type(closed)) else ()
        values = [None] * len(consts) if any(c is not None for c in consts) else None
        if original is closed:  # an open Jaxpr; jax 0.12's carries the constants itself
            result = inner if values is None else inner.with_consts(values)
        elif values is not None or inner is not original:
            result = closed.replace(jaxpr=inner, consts=closed.consts if values is None else values)
        else:
            result = closed
        done[id(closed)] = result
        return result

    return strip(jaxpr)


def jaxpr_text(jaxpr: Any) -> str:
    """A jaxpr printed as ``%%jaxstages`` prints it (no colour, no source locations)."""
    return jaxpr.pretty_print(use_color=False)


class PjitTraceKey(tuple):
    """A jax <= 0.8 tracing-cache key ``(transforms, params, in_type, args, trace_context)`` with the call's debug info.

    The key is built as ``linear_util.cache`` builds it; the debug info is not
    part of JAX's key but JAX's diff function needs it for argument names.
    """

    __slots__ = ()

    def __new__(cls, key: tuple, debug_info: Any) -> PjitTraceKey:
        return super().__new__(cls, (key, debug_info))

    @property
    def key(self) -> tuple:
        return self[0]

    @property
    def debug_info(self) -> Any:
        return self[1]


def _install_pjit_trace_probe(probe: _TraceProbes) -> Callable[[], None] | None:
    """``install_trace_probe`` for jax <= 0.8: wrap ``pjit._create_pjit_jaxpr``.

    A call missed when it added a key to its function's dict in the
    ``lu.cache`` (or raised while tracing: a hit cannot). JAX's own explanation
    is logged inside the cached call, so it arrives while the probe's frame is open.
    """
    pjit_cache = _pjit_trace_cache()
    if pjit_cache is None:
        return None
    from jax._src import config as _config

    module, original, caches = pjit_cache

    class _Probed:
        __slots__ = ("jaxshow_original",)

        def __call__(self, fun, *args):
            __tracebackhide__ = True  # noqa: F841 - IPython leaves this frame out of a refused trace's traceback
            f = getattr(fun, "f", fun)
            entries = _pjit_entries(caches, f)
            before, clears = len(entries) if entries is not None else 0, clears_on_this_thread()
            debug_info = getattr(fun, "debug_info", None)
            key = PjitTraceKey((fun.transforms, fun.params, fun.in_type, args, _config.trace_context()), debug_info)
            compared = each_pair_compared_once()  # as in install_trace_probe
            compared.__enter__()
            token = probe.enter(f, debug_info)
            refusing = probe.refusing(f, debug_info) if probe.probes else None
            missed = True
            result = None
            try:
                if refusing is None:
                    with _unexplained_where_users_eq_runs(key, entries):
                        result = original(fun, *args)
                else:
                    with refusing_traces():
                        result = original(fun, *args)
                missed = len(_pjit_entries(caches, f) or ()) > before or clears_on_this_thread() != clears
                return result
            except BaseException as exc:
                _drop_own_frame(exc, sys._getframe())
                if refusing is not None and _refused_by_jax(exc):
                    missed = False
                    error = probe.refused(refusing, key)
                    if error is not None:
                        raise error from None
                else:
                    probe.raised(token, exc)
                raise
            finally:
                if missed and result is not None:
                    probe.traced(token, traced_jaxpr(result))
                probe.exit(token, missed, key if missed else None)
                compared.__exit__(None, None, None)
                del token, refusing  # as in install_trace_probe's wrapper

        def __getattr__(self, name):
            return getattr(original, name)

    probed = _Probed()
    probed.jaxshow_original = getattr(original, "jaxshow_original", original)
    module._create_pjit_jaxpr = probed

    def uninstall() -> None:
        if module._create_pjit_jaxpr is probed:
            module._create_pjit_jaxpr = original

    return uninstall


def _unexplained_where_users_eq_runs(key: PjitTraceKey, entries: Any) -> Any:
    """jax <= 0.8: a context in which JAX does not explain this lookup's miss where jaxshow alone turned its explanation
    on and it would run an ``__eq__`` of the user's (:func:`jaxshow.reprs.runs_users_eq`) on a static value of ``key``
    or of a key cached before (``entries``): JAX compares the new key with every cached one (``key != ok``), which the
    lookup itself never does with keys of other hashes; a user's ``__eq__`` that raised made the call raise."""
    if not _explain_flag() or user_explains_cache_misses():
        return contextlib.nullcontext()
    keys = (key.key, *(entries or ()))
    if any(runs_users_eq(value) for k in keys for value in _pjit_static_values(k[0])):
        return jax.explain_cache_misses(False)
    return contextlib.nullcontext()


def trace_key_context(key: Any) -> tuple[tuple, Any]:
    """``(trace context values, debug info or None)`` of a key from the probe, any JAX version."""
    if isinstance(key, PjitTraceKey):
        return tuple(key.key[4]), None
    context, (_, debug_info, *_), _ = key
    return tuple(context), debug_info


def bound_axes(key: Any) -> tuple[tuple[str, int], ...] | None:
    """The named axes bound where a key was traced (``jax.shard_map``'s mesh axes, a ``jax.vmap`` axis_name), with
    their sizes: its trace context's ``axis_env_state``, an ``AxisEnv`` whose ``axis_sizes`` maps them (jax >= 0.8),
    or ``(name, size)`` pairs (jax 0.7). ``None`` where this JAX's context cannot be read by name."""
    try:
        names, (context, _) = trace_context_positions(), trace_key_context(key)
        if names is None or len(names) < len(context) or "axis_env_state" not in names[:len(context)]:
            return None
        env = context[names.index("axis_env_state")]
        sizes = getattr(env, "axis_sizes", None)
        return tuple((str(n), int(size)) for n, size in (sizes.items() if sizes is not None else env))
    except Exception:  # noqa: BLE001 - a context of another shape
        return None


def trace_key_distance(new_key: Any, old_key: Any) -> int | None:
    """How far apart JAX itself ranks two keys when it picks the closest (jax <= 0.8: diff size), else ``None``.

    jax >= 0.9 ranks by the kind of difference first (context, pytree, debug
    info, types); jaxshow reproduces that ranking itself.
    """
    if not isinstance(new_key, PjitTraceKey) or not isinstance(old_key, PjitTraceKey):
        return None
    pjit_cache = _pjit_trace_cache()
    if pjit_cache is None:
        return None
    try:
        if unread_statics_differ(_static_boxes(new_key), _static_boxes(old_key)):  # JAX's diff would print them
            (new, new_kw), (before, old_kw) = _pjit_statics(new_key.key[0]), _pjit_statics(old_key.key[0])
            types, old_types = new_key.key[3][0], old_key.key[3][0]  # its size counted here: static values and types
            return (sum(map(differ, new, before)) + abs(len(new) - len(before)) + (new_kw.keys() != old_kw.keys())
                    + sum(differ(v, old_kw[k]) for k, v in new_kw.items() if k in old_kw)
                    + sum(map(differ, types, old_types)) + abs(len(types) - len(old_types)))
        if (trees := _pjit_unread_trees(new_key.key[0], old_key.key[0])) is not None:  # JAX's diff would print them
            return len(list(_treedef_errors((), *trees)))
        return int(_pjit_diff(new_key, old_key)[1])
    except Exception:  # noqa: BLE001 - ranking is best effort
        return None


def static_arg_positions(key: Any) -> tuple[int, ...] | None:
    """Positions of the static positional arguments in a jax <= 0.8 key, in JAX's order; else ``None``.

    jax <= 0.8 words a static-argument change as ``now 3 and before 2``
    without saying which argument; this names them.
    """
    if not isinstance(key, PjitTraceKey):
        return None
    for transform in key.key[0]:
        try:
            if getattr(transform[0], "__name__", "") == "_argnums_partial":
                dyn_argnums, static_args = transform[1]
                total = len(dyn_argnums) + len(static_args)
                return tuple(i for i in range(total) if i not in set(dyn_argnums))
        except Exception:  # noqa: BLE001
            return None
    return ()


def static_kwarg_names(key: Any) -> tuple[str, ...]:
    """The names of the static keyword arguments in a jax <= 0.8 key, in JAX's (sorted) order; else empty.

    jax <= 0.8 words a static-keyword change as ``now {n: 3} and before {n: 2}``; its values follow the positional
    ones in :func:`static_arg_values`.
    """
    try:
        return tuple(_pjit_statics(key.key[0])[1]) if isinstance(key, PjitTraceKey) else ()
    except Exception:  # noqa: BLE001 - a key of another shape
        return ()


@functools.lru_cache(maxsize=None)
def _flattree() -> Any:
    """``jax._src.flattree`` (jax >= 0.11), else ``None``; looked up once (a failed import is not cached by Python)."""
    try:
        from jax._src import flattree as _ft
    except ImportError:
        return None
    return _ft


def _static_args(key: Any) -> dict[str, Any] | None:
    """jax >= 0.11: a key's static arguments (``FTStatic`` nodes) by input path ``[0][2]``, ``[1]['mode']``; else ``None``.

    jax 0.9-0.10 keeps static values in the key's pytree (``Static(val=2)``
    nodes); jax >= 0.11 keeps them in ``flattree.FTStatic`` entries of the
    key's ``FlatTree``, outside the pytree its diff function compares.
    """
    _ft = _flattree()
    if _ft is None:
        return None
    try:
        _, (in_avals, *_), _ = key
    except (TypeError, ValueError):
        return None
    if not isinstance(in_avals, _ft.FTTuple):
        return None
    found: dict[str, Any] = {}
    for i, group in enumerate(in_avals.elts):
        if isinstance(group, _ft.FTTuple):
            items = zip((f"[{i}][{j}]" for j in range(len(group.elts))), group.elts)
        elif isinstance(group, _ft.FTDict):
            items = zip((f"[{i}][{k!r}]" for k in group.keys), group._vals)
        else:
            continue
        found.update((path, node) for path, node in items if isinstance(node, _ft.FTStatic))
    return found


def argument_static_values(key: Any) -> tuple[Any, ...]:
    """The values of the call's own static arguments (``static_argnums``, ``static_argnames``) in a key from the probe,
    read at the key's top level only (not a pytree's ``Static`` nodes further down), any JAX version; empty where none."""
    entries = _static_entries(key)
    if isinstance(key, PjitTraceKey):
        return (*entries.get("args", ()), *(v for _, v in entries.get("kwargs", ())))
    return tuple(entries.values())


def loose_trace_key(key: Any, fun: Any) -> Callable[[], Any] | None:
    """``key`` (of ``fun``) held without keeping alive what it holds: a callable that gives the key back while JAX's
    tracing cache keeps its entry, then ``None``; ``None`` where this key cannot be held so.

    jax >= 0.9 keeps a key's static values in its input tree (a ``FlatTree``),
    the object JAX's cache key holds: referenced weakly, the key is rebuilt
    around it while it lives. jax <= 0.8 keeps them in the key's transforms; its
    arguments hold an object of the call's own (``IgnoreKey``) that JAX's entry
    keeps, by which the key is found again among ``fun``'s entries.
    """
    try:
        if isinstance(key, PjitTraceKey):
            witness = next(w for a in key.key[3] if (w := weak_ref(a)) is not None)
            return _found_again(witness, weakref.ref(fun), key.debug_info)
        context, (tree, *rest), extra = key
        ref = weakref.ref(tree)
    except (StopIteration, TypeError, ValueError):
        return None
    rest = tuple(rest)

    def held() -> Any:
        found = ref()
        return None if found is None else (context, (found, *rest), extra)

    return held


def _found_again(witness: weakref.ref, fun: weakref.ref, debug_info: Any) -> Callable[[], Any]:
    """jax <= 0.8: the key among ``fun``'s entries in JAX's tracing cache whose arguments hold ``witness``, else ``None``."""

    def held() -> Any:
        found, f, pjit_cache = witness(), fun(), _pjit_trace_cache()
        if found is None or f is None or pjit_cache is None:
            return None
        entries = list(_pjit_entries(pjit_cache[2], f) or ())
        return next((PjitTraceKey(k, debug_info) for k in entries if any(a is found for a in k[3])), None)

    return held


def static_arg_values(key: Any) -> tuple[Any, ...]:
    """The static argument values in a key from the probe (the user's objects, unread), any JAX version.

    jax >= 0.11 keeps them in ``FTStatic`` entries of the key's ``FlatTree``,
    jax 0.9-0.10 in ``Static`` nodes of its pytree, jax <= 0.8 in the
    ``_argnums_partial``/``_argnames_partial`` transforms of a
    :class:`PjitTraceKey`; each boxed in a JAX object whose ``val`` is the value.
    Empty for a key of any other shape.
    """
    try:
        if isinstance(key, PjitTraceKey):
            return tuple(_pjit_static_values(key.key[0]))
        statics = _static_args(key)
        if statics is not None:
            return tuple(node.val for node in statics.values())
        _, (in_avals, *_), _ = key
        return tuple(_static_nodes(in_avals.tree))
    except Exception:  # noqa: BLE001 - a key of another shape: nothing found
        return ()


def static_argument_paths(key: Any) -> frozenset[str]:
    """The input paths of a key's static arguments (as :func:`static_argument_texts` keys them), no value shown."""
    return frozenset(_statics_by_path(key))


def static_argument_texts(key: Any) -> dict[str, str]:
    """A key's static arguments by input path (``[0][1]``, ``[1]['n']``), each value as :func:`safe_repr` shows it; empty
    for a key of another shape."""
    statics = _statics_by_path(key)
    return dict(zip(statics, _shown(statics.values())))


def _pjit_static_values(transforms: Any) -> list[Any]:
    args, kwargs = _pjit_statics(transforms)
    return [*args, *kwargs.values()]


def _pjit_statics(transforms: Any) -> tuple[list[Any], dict[str, Any]]:
    """jax <= 0.8: a key's static values, positional and by keyword (sorted by name, as its diff shows them)."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for transform in transforms:
        name = getattr(transform[0], "__name__", "")
        if name == "_argnums_partial":
            args += [boxed.val for boxed in transform[1][1]]
        elif name == "_argnames_partial":
            kwargs.update(sorted((k, boxed.val) for k, boxed in transform[1][0].val.items()))
    return args, kwargs


def _tree_static_changes(new_key: Any, old_key: Any) -> tuple[tuple[str, str, str], ...] | None:
    """jax 0.9-0.10: :func:`static_arg_changes` of two keys' ``Static`` nodes, the arguments' own (``[0][1]``, ``[1]['n']``)."""
    try:
        new, old = (_argument_statics(k[1][0].tree) for k in (new_key, old_key))
    except Exception:  # noqa: BLE001 - a key of another shape
        return None
    if new is None or old is None or new.keys() != old.keys():
        return None
    return tuple((p, *_value_reprs(new[p], old[p])) for p in new if differ(new[p], old[p]))


def _argument_statics(treedef: Any) -> dict[str, Any] | None:
    """The values of the ``Static`` nodes among a ``((args), {kwargs})`` pytree definition's arguments, by input path."""
    groups = treedef.children()
    if len(groups) != 2:
        return None
    found: dict[str, Any] = {}
    for i, group in enumerate(groups):
        children = group.children()
        paths = (f"[{i}][{j}]" for j in range(len(children))) if i == 0 else (f"[{i}][{k!r}]" for k in group.node_data()[1] or ())
        for path, node in zip(paths, children):
            meta = node.node_data()
            if meta is not None and meta[0].__name__ == "Static" and meta[0].__module__.startswith("jax"):
                found[path] = meta[1].val
    return found


def _static_nodes(treedef: Any) -> list[Any]:
    """The values of jax 0.9-0.10's ``Static`` nodes in a pytree definition, depth first."""
    found: list[Any] = []
    pending = [treedef]
    for _ in range(10_000):  # nodes looked at, at most
        if not pending:
            break
        node = pending.pop()
        data = node.node_data()
        if data is not None and data[0].__name__ == "Static" and data[0].__module__.startswith("jax"):
            found.append(data[1].val)
        pending.extend(reversed(node.children()))
    return found


def treedef_differences(new: Any, old: Any, depth: int = 4) -> int:
    """How many subtrees differ between two pytree definitions: a node whose type, metadata (a ``Static``'s value
    on jax 0.9-0.10) or number of children differs counts one; below ``depth`` levels, any difference counts one.

    ``g(x, n=5)`` differs from ``g(x, n=2)`` in one (the ``Static`` under ``kwargs``), from ``g(x, 2)`` in two
    (the lengths of ``args`` and of ``kwargs``). 1 where a definition cannot be taken apart.
    """
    if not differ(new, old):
        return 0
    try:
        return _subtree_differences(new, old, depth) or 1
    except Exception:  # noqa: BLE001 - an odd node's metadata that cannot be compared
        return 1


def _subtree_differences(new: Any, old: Any, depth: int) -> int:
    """:func:`treedef_differences` below the root, node by node: ``children()`` makes new definitions each time, so
    comparing whole subtrees would run a static value's ``__eq__`` once per level, not once."""
    if _node_data_differ(new.node_data(), old.node_data()):
        return 1
    children, old_children = new.children(), old.children()
    if len(children) != len(old_children):
        return 1
    if depth == 0:
        return int(any(_subtree_differences(a, b, 0) for a, b in zip(children, old_children)))
    return sum(_subtree_differences(a, b, depth - 1) for a, b in zip(children, old_children))


def _node_data_differ(new: tuple | None, old: tuple | None) -> bool:
    """Whether two nodes' ``(type, metadata)`` differ (``None``: a leaf); the metadata compared by :func:`differ`, which
    compares each pair once where asked (``node_data()`` makes a new tuple each time)."""
    if new is None or old is None:
        return new is not old
    return new[0] is not old[0] or differ(new[1], old[1])


def unequal_node_data(new_key: Any, old_key: Any) -> tuple[Any, Any, int | None] | None:
    """The first static values, else the first pytree nodes' metadata (a flax ``GraphDef``), that compare unequal
    between two tracing-cache keys' inputs, as ``(now, before, index)``: the user's objects, unread, and a static
    value's index among :func:`static_arg_values` (``None`` for metadata). ``None`` where none differs or a key
    cannot be read.

    Static values as :func:`static_arg_values` finds them; the pytree is the
    key's ``FlatTree`` definition (jax >= 0.9) or the one its ``flatten_fun``
    transform holds (jax <= 0.8), walked depth first over at most 10,000 nodes.
    """
    try:
        for index, (now, before) in enumerate(zip(static_arg_values(new_key), static_arg_values(old_key))):
            if differ(now, before):
                return now, before, index
        nodes = _unequal_metadata(new_key, old_key)
        return (nodes[0][1], nodes[1][1], None) if nodes is not None else None
    except Exception:  # noqa: BLE001 - a user's __eq__ that raises, or a key of another shape: nothing found
        return None


def static_fields_apart(new_key: Any, old_key: Any) -> tuple[type, tuple[tuple[str, Any, Any, str, str], ...]] | None:
    """The class of the first pytree node whose metadata differs between two tracing-cache keys' inputs, where that
    metadata is a dataclass's static fields (:func:`dataclass_static_fields`), with each field that differs as ``(name,
    now, before, now's text, before's text)``: the user's values, unread, and their texts by :func:`safe_repr`;
    ``None`` where the first such node is of another kind, or a key cannot be read."""
    try:
        nodes = _unequal_metadata(new_key, old_key)
        if nodes is None:
            return None
        (kind, meta), (_, old_meta) = nodes
        names = dataclass_static_fields(kind)
        if names is None or not (len(names) == len(meta) == len(old_meta)):
            return None
        return kind, tuple((name, now, before, *_value_reprs(now, before))
                           for name, now, before in zip(names, meta, old_meta) if differ(now, before))
    except Exception:  # noqa: BLE001 - a user's __eq__ that raises, or a key of another shape: nothing found
        return None


def _unequal_metadata(new_key: Any, old_key: Any) -> tuple[tuple[type, Any], tuple[type, Any]] | None:
    """The node data ``(class, metadata)``, now and before, of the first pytree node of one class at one place of two
    tracing-cache keys' inputs whose metadata compare unequal (:func:`_paired_nodes`); ``None`` where none differs."""
    for data, old_data in _paired_nodes(new_key, old_key):
        if data is not None and old_data is not None and data[0] is old_data[0] and differ(data[1], old_data[1]):
            return data, old_data
    return None


def dataclass_static_fields(kind: type) -> tuple[str, ...] | None:
    """The static fields of a class ``jax.tree_util.register_dataclass`` registered (flax's ``struct.dataclass`` does),
    in the order of the pytree metadata they make: its ``meta_fields``, which the unflatten JAX registers holds
    (``jax._src.tree_util._registry``, 0.7 to 0.12; no public reader). ``None`` for any other node type."""
    from jax._src import tree_util

    unflatten = getattr(getattr(tree_util, "_registry", {}).get(kind), "from_iter", None)
    code = getattr(unflatten, "__code__", None)
    if getattr(code, "co_name", None) != "unflatten_func" or "meta_fields" not in code.co_freevars:
        return None
    names = unflatten.__closure__[code.co_freevars.index("meta_fields")].cell_contents
    return tuple(names) if isinstance(names, tuple) and all(isinstance(n, str) for n in names) else None


def _paired_nodes(new_key: Any, old_key: Any) -> Iterator[tuple[Any, Any]]:
    """The node data of two tracing-cache keys' input pytrees at each place, ``(now, before)`` (``None`` for a leaf),
    depth first over at most 10,000 places, read without rebuilding or flattening a node; a place's children only
    where its two nodes are of one class."""
    pending = list(zip(*(_input_treedefs(k) for k in (new_key, old_key))))
    for _ in range(10_000):
        if not pending:
            return
        now, before = pending.pop()
        data, old_data = now.node_data(), before.node_data()
        yield data, old_data
        if data is not None and old_data is not None and data[0] is old_data[0]:
            pending.extend(reversed(list(zip(now.children(), before.children()))))


def node_classes_apart(new_key: Any, old_key: Any) -> tuple[type, type] | None:
    """The first two pytree node classes at one place of two tracing-cache keys' inputs that are two objects of one
    module and name (a class its module or cell made anew when it ran again), as ``(now, before)``; ``None`` where
    there are none or a key cannot be read. Read without rebuilding or flattening a node, over at most 10,000 nodes."""
    try:
        for data, old_data in _paired_nodes(new_key, old_key):
            if data is not None and old_data is not None and data[0] is not old_data[0] and (
                    (data[0].__module__, data[0].__qualname__) == (old_data[0].__module__, old_data[0].__qualname__)):
                return data[0], old_data[0]
    except Exception:  # noqa: BLE001 - a key of another shape: nothing found
        return None
    return None


def _input_treedefs(key: Any) -> list[Any]:
    if isinstance(key, PjitTraceKey):
        return _pjit_in_trees(key.key[0])
    _, (in_avals, *_), _ = key
    return [in_avals.tree]


def static_arg_changes(new_key: Any, old_key: Any) -> tuple[tuple[str, str, str], ...] | None:
    """``(input path, now, before)`` for each static argument that differs between two jax >= 0.11 keys.

    Values are compared with JAX's own equality and shown as ``repr``, as jax
    0.10 shows them (``Static(val='y')``). ``None`` on other JAX versions, whose
    keys and diff functions already hold the static values, or when the two
    keys do not have static arguments at the same input paths.
    """
    new, old = _static_args(new_key), _static_args(old_key)
    if new is None or old is None or new.keys() != old.keys():
        return None
    return tuple((p, *_value_reprs(new[p].val, old[p].val)) for p in new if differ(new[p], old[p]))


def static_value_changes(new_key: Any, old_key: Any) -> tuple[tuple[str, str, str], ...]:
    """``(input path, now, before)`` for each static argument passed the same way in both keys whose value differs,
    any JAX version: ``[0][2]`` (by position), ``[1]['n']`` (by keyword). JAX's own diff stops at its first
    difference (a keyword passed another way); these are compared by the values' own equality, shown by
    :func:`safe_repr`. Empty where a key cannot be read."""
    new, old = _statics_by_path(new_key), _statics_by_path(old_key)
    return tuple((p, *_value_reprs(new[p], old[p])) for p in new if p in old and differ(new[p], old[p]))


def _statics_by_path(key: Any) -> dict[str, Any]:
    """A key's static argument values by input path (``[0][2]``, ``[1]['n']``), the user's objects unread, any JAX
    version; empty for a key of another shape."""
    try:
        if isinstance(key, PjitTraceKey):
            args, kwargs = _pjit_statics(key.key[0])
            positions = static_arg_positions(key) or ()
            return {**({f"[0][{p}]": v for p, v in zip(positions, args)} if len(positions) == len(args) else {}),
                    **{f"[1][{k!r}]": v for k, v in kwargs.items()}}
        statics = _static_args(key)
        if statics is not None:
            return {p: node.val for p, node in statics.items()}
        return _argument_statics(key[1][0].tree) or {}
    except Exception:  # noqa: BLE001 - a key of another shape
        return {}


_STATIC_REPR_CHARS = 1_000


def _value_reprs(now: Any, before: Any) -> tuple[str, str]:
    """Bounded reprs of a user's two static values, with their memory addresses, as jax 0.10's diff shows them: the
    explanation narrows them to the part that changed, which tells two objects of one repr apart by address."""
    return safe_repr(now, _STATIC_REPR_CHARS), safe_repr(before, _STATIC_REPR_CHARS)


def _pjit_diff(new_key: PjitTraceKey, old_key: PjitTraceKey) -> tuple[list, int]:
    """jax <= 0.8: JAX's diff of two keys, ``(differences, their number)``."""
    with _jaxshows_comparison():  # its pytree comparison runs no flatten of the user's
        return _diff_once(_pjit_trace_cache()[0].diff_tracing_cache_keys, new_key.key, old_key.key, new_key.debug_info)


CONTEXT_LENGTHS_DIFFER = ("Tracing context doesn't match, e.g. due to config or context manager.\n"
                          "  * number of tracing context values differs: now {} and before {}")
"""JAX's words (jax >= 0.10) for two keys whose trace contexts hold different numbers of options."""


def diff_trace_keys(new_key: Any, old_key: Any) -> str | None:
    """JAX's own explanation of why ``new_key`` misses ``old_key`` (the text of one diff).

    jax >= 0.11 no longer compares static arguments (it says "cache miss
    explanation unavailable"); where its context and pytree match, a
    static-argument difference is worded as jax 0.10 words it, at the same rank.
    """
    lengths = len(trace_key_context(new_key)[0]), len(trace_key_context(old_key)[0])
    if lengths[0] != lengths[1]:  # a module imported between the two defined options (jax 0.8's and 0.9's diffs raise then)
        return CONTEXT_LENGTHS_DIFFER.format(*lengths)
    if isinstance(new_key, PjitTraceKey) and isinstance(old_key, PjitTraceKey):
        try:
            if unread_statics_differ(_static_boxes(new_key), _static_boxes(old_key)):
                return _pjit_static_words(new_key.key[0], old_key.key[0])
            if (trees := _pjit_unread_trees(new_key.key[0], old_key.key[0])) is not None:
                return _tree_words(*trees)
            return "\n".join(str(d) for d in _pjit_diff(new_key, old_key)[0])
        except Exception as exc:  # noqa: BLE001 - the explanation is optional evidence
            return _explanation_unavailable(exc)
    module = _trace_cache_module()
    if module is None:
        return None
    try:
        if unread_statics_differ(_static_boxes(new_key), _static_boxes(old_key)):
            diff, changes = None, static_arg_changes(new_key, old_key) or _tree_static_changes(new_key, old_key)  # JAX's words would run their reprs
        else:
            with _jaxshows_comparison():  # its pytree comparison runs no flatten of the user's
                diff = _diff_once(module.diff_tracing_cache_keys, new_key, old_key)  # (severity, number of diffs, text)
            changes = static_arg_changes(new_key, old_key) if diff[0] > 1 else None  # severity 0: context, 1: pytree
    except Exception as exc:  # noqa: BLE001 - the explanation is optional evidence
        return _explanation_unavailable(exc)
    if changes:
        return "different static arguments (compared by jaxshow):\n" + "\n".join(
            f"  * at input path {p}, now Static(val={now}) and before Static(val={before}), so the static values differ"
            for p, now, before in changes
        )
    return str(diff[-1]) if diff is not None else f"{EXPLANATION_UNAVAILABLE}: {STATICS_UNREAD}"


def _pjit_static_words(new: Any, old: Any) -> str:
    """jax <= 0.8's words for two keys' different static values (``_argnums_partial``, ``_argnames_partial`` transforms),
    each shown by :func:`safe_repr`, which runs no ``__repr__`` of the user's."""
    (args, kwargs), (old_args, old_kwargs) = _pjit_statics(new), _pjit_statics(old)
    words = []
    if len(args) != len(old_args) or any(map(differ, args, old_args)):
        words.append(f"different value of static args:\n  now {', '.join(_shown(args))} and before {', '.join(_shown(old_args))}")
    if kwargs.keys() != old_kwargs.keys() or any(differ(kwargs[k], old_kwargs[k]) for k in kwargs):
        now, before = (", ".join(f"{k}: {v}" for k, v in zip(d, _shown(d.values()))) for d in (kwargs, old_kwargs))
        words.append(f"different value of static kwargs:\n  now {{{now}}} and before {{{before}}}")
    return "\n".join(words)


def _shown(values: Any) -> list[str]:
    return [safe_repr(v, _STATIC_REPR_CHARS) for v in values]


def describe_trace_key(key: Any, mesh: bool = False, devices: bool = False) -> tuple[tuple[tuple[str, str], ...], str, tuple] | None:
    """A tracing-cache key as printable parts: ``((arg, "f32[3]"), ...)``, pytree text, trace context.

    ``mesh`` adds the axis sizes of each type's mesh (``f32[8,8] on mesh ('data': 4, 'model': 2)``; ``f32[8,8] (no
    mesh)``), which JAX's spelling of a type leaves out, and ``devices`` the kind of devices each mesh names
    (``… of cpu devices``, :func:`_mesh_devices`). Keys are ``(trace_context, (in_avals: FlatTree, debug_info, *context), {})``
    on jax >= 0.9 and :class:`PjitTraceKey` on jax <= 0.8. Returns ``None`` for
    any other shape.
    """
    if isinstance(key, PjitTraceKey):
        return _describe_pjit_key(key, mesh, devices)
    try:
        context, (in_avals, debug_info, *_), _ = key
        avals = tuple(in_avals.vals)
        names = tuple(debug_info.arg_names or ()) or tuple(f"[{i}]" for i in range(len(avals)))
        types = tuple((str(n), _aval_text(a, mesh, devices)) for n, a in zip(names, avals))
        return types, _tree_text(in_avals.tree, static_arg_values(key)), tuple(context)
    except Exception:  # noqa: BLE001
        return None


TREE_UNREAD = "<a pytree holding a value whose repr is yours: not printed>"
"""A key's pytree text where printing it would run a ``__repr__`` of the user's (:func:`_tree_text`)."""


def _tree_text(tree: Any, statics: tuple[Any, ...]) -> str:
    """``str(tree)``, or :data:`TREE_UNREAD` where that would run a ``__repr__`` of the user's, which the call itself
    never runs: of a static value (jax 0.9-0.10's ``Static`` nodes print theirs), a dict key or a node's metadata."""
    unread = any(map(runs_users_repr, statics)) or any(runs_users_repr(meta) for _, meta in _node_data([tree]))
    return TREE_UNREAD if unread else str(tree)


class TraceKeyParts:
    """A jax >= 0.9 tracing-cache key taken apart once, so comparing it with many earlier keys stays cheap.

    ``context`` (the trace-context values), ``debug_info``, ``treedef`` (the
    input pytree), ``statics`` (jax >= 0.11: static argument nodes by input
    path; ``None`` where the pytree holds them), ``avals`` (the input types,
    compared as JAX's diff function compares them) and ``head``: everything but
    the types, hashable, or ``None`` when some part cannot be hashed. Two keys
    with equal heads differ, for JAX's diff function, only in their input types.
    Nothing is formatted as text here.
    """

    __slots__ = ("context", "debug_info", "treedef", "statics", "avals", "head", "_static_values")

    def __init__(self, context: tuple, debug_info: Any, treedef: Any, statics: dict[str, Any] | None, avals: tuple) -> None:
        self.context, self.debug_info, self.treedef, self.statics, self.avals = context, debug_info, treedef, statics, avals
        head: Any = (context, treedef, tuple(statics.items()) if statics else (), debug_info)
        try:
            hash(head)
        except Exception:  # noqa: BLE001 - an unhashable part: compare one by one instead
            head = None
        self.head = head
        self._static_values: tuple | None = None

    @property
    def static_values(self) -> tuple:
        """The call's own static argument values, as :func:`argument_static_values` reads them from the key, read once."""
        if self._static_values is None:
            try:
                if self.statics is not None:
                    found = {p: node.val for p, node in self.statics.items()}
                elif self.treedef.num_nodes - self.treedef.num_leaves == 3:
                    found = {}  # only the ((args), {kwargs}) nodes: every argument a leaf, none a Static node
                else:
                    found = _argument_statics(self.treedef) or {}
            except Exception:  # noqa: BLE001 - a pytree of another shape
                found = {}
            self._static_values = tuple(found.values())
        return self._static_values


def trace_key_parts(key: Any) -> TraceKeyParts | None:
    """:class:`TraceKeyParts` of a jax >= 0.9 key from the probe.

    ``None`` for jax <= 0.8 keys (:class:`PjitTraceKey`), which JAX itself ranks
    by the size of its diff, and for any key of another shape.
    """
    if key is None or isinstance(key, PjitTraceKey):
        return None
    try:
        context, (in_avals, debug_info, *_), _ = key
        return TraceKeyParts(tuple(context), debug_info, in_avals.tree, _static_args(key), tuple(in_avals.vals))
    except Exception:  # noqa: BLE001
        return None


def static_arg_differences(new: TraceKeyParts, old: TraceKeyParts) -> int | None:
    """How many static arguments differ between two keys' parts, else ``None`` (jax <= 0.10: the pytree holds them).

    An argument static in one key and traced (or not passed) in the other counts as one: jax >= 0.11 keeps it out of
    the pytree, so the switch is a static difference, as the pytree's was before, not another debug info.
    """
    if new.statics is None or old.statics is None:
        return None
    both = new.statics.keys() & old.statics.keys()
    return sum(1 for p in both if differ(new.statics[p], old.statics[p])) + len(new.statics.keys() ^ old.statics.keys())


def type_differences(new: TraceKeyParts, old: TraceKeyParts) -> int:
    """How many input types differ between two keys' parts (JAX's own comparison of avals)."""
    return sum(1 for a, b in zip(new.avals, old.avals) if a != b) + abs(len(new.avals) - len(old.avals))


def only_types_differ(new: TraceKeyParts, old: TraceKeyParts) -> bool:
    """Whether JAX's diff function finds the two keys' first difference in their input types.

    True when the trace contexts, pytrees, static arguments and debug infos are
    equal and an input type JAX names by argument differs: JAX's diff then says
    "different input types", without being asked.
    """
    names = getattr(new.debug_info, "arg_names", None) or ()
    return (
        new.context == old.context
        and new.treedef == old.treedef
        and not static_arg_differences(new, old)
        and new.debug_info == old.debug_info
        and len(names) == len(new.avals) == len(old.avals)
        and new.avals != old.avals
    )


def _describe_pjit_key(key: PjitTraceKey, mesh: bool = False, devices: bool = False) -> tuple[tuple[tuple[str, str], ...], str, tuple] | None:
    try:
        transforms, _, _, (arg_types, *_), context = key.key
        avals = tuple(getattr(a, "aval", a) for a in arg_types)
        names: tuple = ()
        safe = getattr(key.debug_info, "safe_arg_names", None)
        if safe is not None:
            names = tuple(safe(len(avals)))
        if not any(names):
            names = tuple(f"[{i}]" for i in range(len(avals)))
        types = tuple((str(n), _aval_text(a, mesh, devices)) for n, a in zip(names, avals))
        trees = [_tree_text(t[1][0], ()) for t in transforms if getattr(t[0], "__name__", "").startswith("flatten_fun")]
        return types, (trees[0] if trees else ""), tuple(context)
    except Exception:  # noqa: BLE001
        return None


def _aval_text(aval: Any, mesh: bool = False, devices: bool = False) -> str:
    short = getattr(aval, "str_short", None)
    text = short(True) if short is not None else str(aval)
    if getattr(aval, "weak_type", False):
        text += "{weak_type=True}"
    if mesh and (sharding := getattr(aval, "sharding", None)) is not None:
        sizes = mesh_sizes(getattr(sharding, "mesh", None))
        text += f" on mesh ({sizes}){_mesh_devices(sharding.mesh) if devices else ''}" if sizes else " (no mesh)"
    return text


def _mesh_devices(mesh: Any) -> str:
    """`` of cpu devices`` where an abstract mesh names the kind of its devices (one made from a ``Mesh`` of devices,
    jax >= 0.8), else ``""``: JAX's cache tells it from an ``AbstractMesh`` made by hand, though JAX prints both alike."""
    kind = getattr(getattr(mesh, "abstract_device", None), "device_kind", None)
    return f" of {kind} devices" if isinstance(kind, str) else ""


def mesh_sizes(mesh: Any) -> str | None:
    """``'data': 4, 'model': 2`` for a mesh (concrete or abstract), ``None`` for an empty one or none."""
    try:
        if mesh is None or getattr(mesh, "empty", True):
            return None
        return ", ".join(f"{name!r}: {size}" for name, size in zip(mesh.axis_names, mesh.axis_sizes))
    except Exception:  # noqa: BLE001 - a mesh type of another shape: said as JAX says it
        return None


def shard_map_shards(params: dict[str, Any]) -> int:
    """How many shards a ``shard_map`` equation's body runs as (its shapes are one shard's): the product of its mesh's
    sizes along the axes it makes manual, ``newly_manual_axes`` (jax >= 0.8) or ``manual_axes`` (jax 0.7); 1 where
    this JAX's parameters cannot be read so."""
    try:
        mesh = params["mesh"]
        axes = params.get("newly_manual_axes", params.get("manual_axes"))
        sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
        return math.prod(sizes[name] for name in axes) if axes is not None else 1
    except Exception:  # noqa: BLE001 - a shard_map of another shape: its body counted once
        return 1


def named_on_mesh(sharding: Any, mesh: Any) -> Any:
    """A ``GSPMDSharding`` XLA chose (a ``jax.shard_map`` input jit was given no sharding for) as a ``NamedSharding``
    on ``mesh``, as JAX turns its programs' outputs into one (``sharding_impls._gspmd_to_named_sharding_via_mesh``,
    jax 0.7 to 0.12); ``None`` where this JAX cannot."""
    try:
        from jax._src import sharding_impls

        return sharding_impls._gspmd_to_named_sharding_via_mesh(sharding, mesh)
    except Exception:  # noqa: BLE001 - another JAX, or a sharding no spec on this mesh describes
        return None


def spec_partitions(spec: Any) -> tuple[Any, ...]:
    """A ``PartitionSpec``'s partitions, one per array dimension, without iterating it: from jax 0.8 a spec with
    reduced or unreduced axes refuses ``tuple(spec)`` and ``*spec`` (``ValueError: Using *pspec is dangerous``).
    ``spec.partitions`` from jax 0.8, ``spec._partitions`` before."""
    partitions = getattr(spec, "partitions", None)
    if partitions is None:
        partitions = getattr(spec, "_partitions", None)
    return tuple(partitions) if partitions is not None else tuple(spec)


def is_default_layout(layout: Any) -> bool:
    """Whether a compiled program's ``Layout`` is XLA's default: row-major (``major_to_minor=(0, 1)`` for a matrix),
    untiled, whole-byte elements. jax 0.7 names the last two ``_tiling`` and ``_sub_byte_element_size_in_bits``."""
    order = getattr(layout, "major_to_minor", None)
    tiling = getattr(layout, "tiling", getattr(layout, "_tiling", None))
    sub_byte = getattr(layout, "sub_byte_element_size_in_bits", getattr(layout, "_sub_byte_element_size_in_bits", None))
    return isinstance(order, tuple) and order == tuple(range(len(order))) and tiling == () and sub_byte == 0


def persistent_cache_initialized() -> bool | None:
    """Whether JAX has opened its persistent cache in this process (it does so at the first compile)."""
    try:
        from jax._src import compilation_cache as _cc
    except ImportError:
        return None
    value = getattr(_cc, "_cache_initialized", None)
    return None if value is None else bool(value)


def persistent_cache_open_failed() -> bool | None:
    """Whether JAX tried to open its persistent cache in this process and holds none: making or opening the directory
    raised (a file in its place, no permission), which JAX only warns about, and it does not try again until
    ``reset_cache()``. ``None`` where this JAX keeps neither ``_cache_initialized`` nor ``_cache``."""
    try:
        from jax._src import compilation_cache as _cc
    except ImportError:
        return None
    if not hasattr(_cc, "_cache_initialized") or not hasattr(_cc, "_cache"):
        return None
    return bool(_cc._cache_initialized) and _cc._cache is None


def persistent_cache_use_decided() -> bool | None:
    """Whether JAX uses its persistent cache in this process, where it has decided (``None`` where it has not, or this
    JAX keeps no record): it decides once, at the first compile, reading ``jax_enable_compilation_cache`` then, and
    again only after ``reset_cache()`` (``compilation_cache.is_cache_used``: ``_cache_checked``, ``_cache_used``)."""
    try:
        from jax._src import compilation_cache as _cc
    except ImportError:
        return None
    if not getattr(_cc, "_cache_checked", False):
        return None
    used = getattr(_cc, "_cache_used", None)
    return None if used is None else bool(used)


def _opened_persistent_cache() -> Any:
    """The file cache JAX opened in this process (``compilation_cache._cache``, an ``LRUCache``), or ``None``; unwrapped
    from the ``VerificationCache`` that jax >= 0.9.1 puts around it under ``jax_compilation_cache_check_contents``."""
    try:
        from jax._src import compilation_cache as _cc
    except ImportError:
        return None
    cache = getattr(_cc, "_cache", None)
    return getattr(cache, "_base_cache", cache)


def persistent_cache_directory_in_use() -> str | None:
    """The directory the opened persistent cache writes to, which may differ from the config value."""
    path = getattr(_opened_persistent_cache(), "path", None)
    return None if path is None else str(path)


def persistent_cache_max_size_in_use() -> int | None:
    """The ``jax_compilation_cache_max_size`` the opened persistent cache keeps to (-1: no limit), which JAX reads once,
    when it opens the cache; ``None`` where none is open or this JAX's cache does not say."""
    cache = _opened_persistent_cache()
    limited = getattr(cache, "eviction_enabled", None)
    if limited is None:
        return None
    return getattr(cache, "max_size", None) if limited else -1


# --- IR dumps (used by dumps.py) ----------------------------------------------------------------


def dump_next_numbers() -> tuple[int | None, int | None]:
    """The counters JAX's next module dump and next jaxpr dump get, read without advancing them; ``None`` if unknown.

    JAX numbers dumps with process-wide ``itertools.count``s, whose ``repr`` is
    ``count(N)``: the module's (``jax_ir{NNNN}_…``) is ``_ir_dump_counter`` in
    ``jax._src.interpreters.mlir`` (0.7 through 0.12), the jaxpr's
    (``jax_{NNNNNN}_f.jaxpr.txt``) ``jaxpr_util._jaxpr_id_counter`` (0.8 on;
    0.7 names jaxpr dumps without a number). A few microseconds: a cell
    boundary reads both.
    """
    return (_count_value(sys.modules.get("jax._src.interpreters.mlir"), "_ir_dump_counter"),
            _count_value(sys.modules.get("jax._src.jaxpr_util"), "_jaxpr_id_counter"))


def _count_value(module: types.ModuleType | None, name: str) -> int | None:
    text = repr(getattr(module, name, None))
    if text.startswith("count(") and text.endswith(")") and text[6:-1].isdigit():
        return int(text[6:-1])
    return None


def xla_dump_to_in_effect() -> str | None:
    """The ``--xla_dump_to`` XLA parsed from ``XLA_FLAGS`` at backend start (``''`` for none); ``None`` if unknown.

    Asked only once a backend has started: XLA parses its flags once per
    process, and asking earlier would make it parse them now.
    """
    if not backends_initialized()[0]:
        return None
    try:
        from jax._src.lib import xla_client as _xc

        options = _xc.CompileOptions()  # each object held: a chained expression frees its parent and crashes jaxlib 0.12
        build = options.executable_build_options
        debug = build.debug_options
        return str(debug.xla_dump_to)
    except Exception:  # noqa: BLE001 - a jaxlib without these bindings
        return None


# --- the jit miss path: where JAX traces, lowers and compiles a call (used by capture/calls.py) -


class CallObserver:
    """What :func:`install_call_hooks` calls back, on the calling thread, inside the user's call.

    Every method must return quickly and never raise; ``busy()`` true makes
    every hook a plain pass-through (jaxshow's own rebuilds go through JAX too).
    """

    def busy(self) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def trace_started(self, fun: Any, jit_info: Any, args: tuple, kwargs: dict) -> Any:  # pragma: no cover - interface
        """JAX's Python path for a jit wrapper's call started (a C++ cache miss, ``.trace`` or ``.lower``)."""
        raise NotImplementedError

    def trace_ended(self, token: Any, jaxpr: Any, args_flat: list | None, error: BaseException | None,
                    out_tree: Any) -> None:  # pragma: no cover
        """It ended with ``jaxpr`` (a ``ClosedJaxpr``), the flat arguments JAX made for it (its consts first) and its
        output's pytree definition (``None`` if unknown), or ``error``."""
        raise NotImplementedError

    def run_started(self, jaxpr: Any, name: str, donated: tuple[bool, ...]) -> Any:  # pragma: no cover
        """JAX's Python dispatch of ``jaxpr`` started: it lowers, compiles (or finds both cached) and runs."""
        raise NotImplementedError

    def lower_started(self, jaxpr: Any, donated: tuple[bool, ...]) -> None:
        """Lowering of ``jaxpr`` (or its cache lookup) starts: in a dispatch, or ahead of time (``Traced.lower()``);
        ``donated``: which of its arguments are donated."""

    def lowered(self, computation: Any, error: BaseException | None) -> None:  # pragma: no cover
        """Lowering (or its cache lookup) ended with ``computation`` or ``error``."""
        raise NotImplementedError

    def run_ended(self, token: Any, executable: Any, error: BaseException | None) -> None:  # pragma: no cover
        """The dispatch ended; ``executable`` is the compiled program when compilation succeeded."""
        raise NotImplementedError

    def compiling(self) -> None:
        """XLA is about to compile a lowered module: the calling thread waits in C++, without the GIL, until it is done."""

    def rerun_started(self, fun: Any, signal: BaseException | None = None) -> Any:
        """``jax_debug_nans``/``jax_debug_infs`` found a nan or inf in a jitted call's output (``signal``, JAX's internal
        error: :func:`special_value_found` reads it): JAX runs ``fun`` de-optimized."""

    def rerun_ended(self, token: Any) -> None:
        """That re-run ended (it raises, always)."""


def _pjit_module():
    try:
        from jax._src import pjit as _pjit
    except ImportError:
        return None
    return _pjit


def _compiler_module() -> Any:
    """``jax._src.compiler``, whose ``backend_compile_and_load`` hands a lowered module to XLA (0.7 to 0.12)."""
    try:
        from jax._src import compiler
    except ImportError:
        return None
    return compiler


def _entry_hook_name(module: Any) -> str | None:
    """The function every jit trace of a wrapper goes through: ``_infer_params`` (``_trace_for_jit`` on jax 0.9)."""
    for name in ("_infer_params", "_trace_for_jit"):
        target = getattr(module, name, None)
        if target is None:
            continue
        try:
            params = list(inspect.signature(target).parameters)
        except (TypeError, ValueError):
            continue
        if params[:4] == ["fun", "ji", "args", "kwargs"] or params[:4] == ["fun", "jit_info", "args", "kwargs"]:
            return name
    return None


def call_hooks_supported() -> bool:
    """Whether this JAX has the three private functions :func:`install_call_hooks` wraps."""
    module = _pjit_module()
    return (
        module is not None
        and _entry_hook_name(module) is not None
        and callable(getattr(module, "_pjit_call_impl_python", None))
        and callable(getattr(module, "_resolve_and_lower", None))
    )


def _api_util_module() -> Any:
    """``jax._src.api_util``, whose ``maybe_recursive_nan_check`` runs a function de-optimized after a nan (0.7 to 0.12)."""
    try:
        from jax._src import api_util
    except ImportError:
        return None
    return api_util


def _drop_own_frame(exc: BaseException, frame: Any) -> None:
    """Take a hook's own frame off the traceback of an error passing through it (a bare ``raise`` keeps it off), and
    off its message where that holds the Python stack: jaxlib words a callback's error (``jax.debug.callback``,
    ``pure_callback``) with every frame on the stack as the callback raised (nanobind's ``python_error::what()``,
    which ``traceback_util``'s filtering never sees), the hook's frame among them."""
    tb = exc.__traceback__
    if tb is None or tb.tb_frame is not frame:
        return
    exc.__traceback__ = tb.tb_next
    code = frame.f_code
    for name in {code.co_name, getattr(code, "co_qualname", code.co_name)}:
        _without_text(exc, f'  File "{code.co_filename}", line {tb.tb_lineno}, in {name}\n')


def _without_text(exc: BaseException, text: str) -> None:
    """Take ``text`` out of an error's message: its ``args`` and the strings it keeps (jaxlib's ``JaxRuntimeError``
    words ``str()`` from its ``_error_message``, 0.8 to 0.12; jax 0.7's ``XlaRuntimeError`` from ``args``)."""
    try:
        if exc.args and isinstance(exc.args[0], str) and text in exc.args[0]:
            exc.args = (exc.args[0].replace(text, "", 1), *exc.args[1:])
        for key, value in list(vars(exc).items()):
            if isinstance(value, str) and text in value:
                setattr(exc, key, value.replace(text, "", 1))
    except Exception:  # noqa: BLE001 - an error that refuses a change keeps its message as it was
        pass


def _quietly(call: Callable[..., Any], *args: Any) -> Any:
    try:
        return call(*args)
    except Exception:  # noqa: BLE001 - jaxshow's bookkeeping must never reach the user's call
        return None


def install_call_hooks(observer: CallObserver) -> Callable[[], None] | None:
    """Observe every trace, lowering, compile and Python dispatch of ``jax.jit`` while installed.

    JAX has no public hook for these. Its Python miss path goes through three
    module globals of ``jax._src.pjit`` on every version from 0.7 to 0.12:
    the entry hook (``_infer_params``; ``_trace_for_jit`` on 0.9) for each
    wrapper call that misses the C++ cache, ``_pjit_call_impl_python`` for
    every Python dispatch (a wrapper's miss, and ``jit_p``'s impl under
    ``grad``/``vmap`` or eagerly), and ``_resolve_and_lower`` inside it; then
    ``jax._src.compiler.backend_compile_and_load`` as XLA's compile starts
    (optional: without it, ``compiling`` is never called), and
    ``jax._src.api_util.maybe_recursive_nan_check``, JAX's de-optimized re-run
    after ``jax_debug_nans`` found a nan (optional: ``rerun_started``). A C++
    cache hit reaches none of them, so a hot loop pays nothing. Returns the
    function that puts the originals back (only where they are still ours), or
    ``None`` where this JAX lacks them.
    """
    module = _pjit_module()
    if module is None or not call_hooks_supported():
        return None
    compiler = _compiler_module()
    entry_name = _entry_hook_name(module)
    original_entry = getattr(module, entry_name)
    original_run = module._pjit_call_impl_python
    original_lower = module._resolve_and_lower

    def entry(fun, ji, args, kwargs):
        if observer.busy():
            return original_entry(fun, ji, args, kwargs)
        token = _quietly(observer.trace_started, fun, ji, args, kwargs)
        try:
            result = original_entry(fun, ji, args, kwargs)
        except BaseException as exc:
            _quietly(observer.trace_ended, token, None, None, exc, None)
            _drop_own_frame(exc, sys._getframe())
            del token  # this frame outlives the call in its error's traceback: it keeps no capture or session alive
            raise
        _quietly(observer.trace_ended, token, result[0].params["jaxpr"], result[1], None, getattr(result[0], "out_tree", None))
        return result

    def run(*args, **params):
        if observer.busy():
            return original_run(*args, **params)
        token = _quietly(observer.run_started, params.get("jaxpr"), str(params.get("name", "?")), tuple(params.get("donated_invars", ())))
        try:
            out = original_run(*args, **params)
        except BaseException as exc:
            _quietly(observer.run_ended, token, None, exc)
            _drop_own_frame(exc, sys._getframe())
            del token  # as in entry
            raise
        _quietly(observer.run_ended, token, out[1], None)
        return out

    def lower(*args, **kwargs):
        if observer.busy():
            return original_lower(*args, **kwargs)
        # keywords in the dispatch and in Traced.lower(), 0.7 to 0.12
        _quietly(observer.lower_started, kwargs.get("jaxpr"), tuple(bool(d) for d in kwargs.get("donated_invars", ())))
        try:
            computation = original_lower(*args, **kwargs)
        except BaseException as exc:
            _quietly(observer.lowered, None, exc)
            _drop_own_frame(exc, sys._getframe())
            raise
        _quietly(observer.lowered, computation, None)
        return computation

    original_compile = getattr(compiler, "backend_compile_and_load", None)

    def xla_compile(*args, **kwargs):
        if not observer.busy():
            _quietly(observer.compiling)
        try:
            return original_compile(*args, **kwargs)
        except BaseException as exc:
            _drop_own_frame(exc, sys._getframe())
            raise

    api_util = _api_util_module()
    original_rerun = getattr(api_util, "maybe_recursive_nan_check", None)

    def rerun(*args, **kwargs):
        if observer.busy():
            return original_rerun(*args, **kwargs)
        fun = args[1] if len(args) > 1 else kwargs.get("fun")
        token = _quietly(observer.rerun_started, fun, args[0] if args else kwargs.get("e"))
        try:
            return original_rerun(*args, **kwargs)
        except BaseException as exc:
            _drop_own_frame(exc, sys._getframe())
            raise
        finally:
            _quietly(observer.rerun_ended, token)
            del token  # as in entry

    hooks = [(module, entry_name, entry, original_entry), (module, "_pjit_call_impl_python", run, original_run),
             (module, "_resolve_and_lower", lower, original_lower)]
    if callable(original_compile):  # optional: jaxshow only reads stations earlier with it
        hooks.append((compiler, "backend_compile_and_load", xla_compile, original_compile))
    if callable(original_rerun):  # optional: the calls of a de-optimized re-run are then told apart
        hooks.append((api_util, "maybe_recursive_nan_check", rerun, original_rerun))
    for owner, name, hook, original in hooks:
        functools.update_wrapper(hook, original)
        setattr(owner, name, hook)

    def uninstall() -> None:
        for owner, name, hook, original in hooks:
            if getattr(owner, name, None) is hook:
                setattr(owner, name, original)

    return uninstall


_DISPATCH_REFUSALS = (
    "Non-hashable static arguments are not supported",
    "static arguments should be comparable using __eq__",
    "Exception raised while checking equality of metadata fields of pytree",
)
"""How jaxlib's C++ dispatch words an error it raises for a call's arguments, before any cache lookup (0.7 to 0.12)."""


def dispatch_refusal(error: BaseException) -> bool:
    """Whether ``error`` is jaxlib's refusal of a call's static arguments or pytree metadata (unhashable, or ``__eq__`` raised)."""
    message = error.args[0] if type(error) is ValueError and error.args else None
    return isinstance(message, str) and message.startswith(_DISPATCH_REFUSALS)


CPP_UNKEYED_CANDIDATES = ("keep_unused", "inline")
"""The jit options a JAX release may leave out of its C++ cache's key (:func:`cpp_unkeyed_variants`)."""


def cpp_unkeyed_variants(wrapper: Any) -> list[dict[str, Any]]:
    """The other values of the jit options JAX's C++ cache does not key a function's calls on (``keep_unused`` and
    ``inline``: not fields of ``pxla.JitGlobalCppCacheKeys``, 0.7 to 0.12.0; 0.12.1 keys ``keep_unused``), as overrides of a call's params: a call of
    ``wrapper`` may run the executable another wrapper of its function compiled with one of them. ``inline`` as a
    bool, or (jax >= 0.11, ``jax.Inline``) its two values ``jax.jit`` makes of a bool; each holds only the options that
    differ from the wrapper's; ``[]`` where unknown."""
    info = getattr(wrapper, "_jit_info", None)
    try:
        from jax._src.interpreters import pxla

        keyed = {f.name for f in dataclasses.fields(pxla.JitGlobalCppCacheKeys)}
    except Exception:  # noqa: BLE001 - no such module or record: nothing known to be shared
        return []
    choices: list[list[tuple[str, Any]]] = []
    for name in CPP_UNKEYED_CANDIDATES:
        if name in keyed or not hasattr(info, name):
            continue
        value = getattr(info, name)
        if isinstance(value, bool):
            choices.append([(name, value), (name, not value)])
        elif (kind := type(value)).__name__ == "Inline" and {"AUTO", "JAX_LATE"} <= set(kind.__members__):
            choices.append([(name, value)] + [(name, kind[n]) for n in ("AUTO", "JAX_LATE") if kind[n] is not value])
    variants = ({k: x for k, x in c if getattr(info, k) is not x} for c in itertools.product(*choices))
    return [v for v in variants if v]


def lower_cached(wrapper: Any, args: tuple, kwargs: dict, unkeyed: dict[str, Any] | None = None
                 ) -> tuple[Any, tuple[bool, ...], Any, list]:
    """``(jaxpr, donated flags, lowered computation, flat arguments)`` of a jit wrapper's call, from JAX's caches.

    What ``wrapper.trace(*args).lower()`` looks up, without building a
    ``Traced``: that unflattens the arguments' pytree (``args_info``), so a user
    pytree class's constructor would run again. The same private path JAX's
    dispatch takes on a miss: the entry hook (``_infer_params``;
    ``_trace_for_jit`` on 0.9.0), then ``_resolve_and_lower`` with the flat
    argument types (jax >= 0.8.2) or the flat arguments (older). ``unkeyed``: params replaced
    (:func:`cpp_unkeyed_variants`), to look up the lowering another wrapper made.
    """
    from jax._src.interpreters import mlir

    module = _pjit_module()
    entry = getattr(module, _entry_hook_name(module))
    params, args_flat = entry(wrapper._fun, wrapper._jit_info, args, kwargs)
    params = {**params.params, **(unkeyed or {})}
    to_type = getattr(module, "convert_to_metaty", None)
    arg_types = [to_type(a) for a in args_flat] if to_type is not None else args_flat
    computation = module._resolve_and_lower(arg_types, **params, lowering_platforms=None,
                                            lowering_parameters=mlir.LoweringParameters(), pgle_profiler=None)
    return params["jaxpr"], tuple(bool(d) for d in params["donated_invars"]), computation, args_flat


def pytree_flatten_code(kind: type) -> types.CodeType | None:
    """The Python code JAX's pytree registry runs to flatten an object of type ``kind``.

    The function given to ``register_pytree_node`` (or ``register_pytree_with_keys``), or the class's own
    ``tree_flatten`` for ``register_pytree_node_class``; ``None`` for a type JAX does not know or flattens in C++
    (tuples, dicts, ``register_dataclass``, whose entry is JAX's own code). JAX has no public reader of its
    registry: ``jax._src.tree_util._registry`` maps each type registered from Python to its flatten, 0.7 to 0.12.
    """
    from jax._src import tree_util

    flatten = getattr(getattr(tree_util, "_registry", {}).get(kind), "to_iter", None)
    if isinstance(flatten, operator.methodcaller):
        flatten = getattr(kind, flatten.__reduce__()[1][0], None)
    flatten = getattr(flatten, "__func__", flatten)
    if isinstance(flatten, functools.partial):
        flatten = flatten.func
    code = getattr(flatten, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


_CALLBACK_FILE = os.path.join(JAX_DIR, "_src", "callback.py")


def host_callback_frame(frame: Any, outer: Any) -> Any:
    """The frame where JAX's runtime entered a host callback (``jax.debug.callback``, ``jax.pure_callback``,
    ``io_callback``: ``_wrapped_callback`` in ``jax/_src/callback.py``, 0.7 to 0.12), on the stack from ``frame`` out
    before ``outer`` (``None``: to the end); ``None`` where there is none."""
    while frame is not None and frame is not outer:
        code = frame.f_code
        if code.co_name == "_wrapped_callback" and code.co_filename == _CALLBACK_FILE:
            return frame
        frame = frame.f_back
    return None


def computation_compiling(frame: Any) -> Any:
    """The lowered computation whose ``compile()`` runs at ``frame`` or outside it (``Lowered.compile()`` calls it),
    or ``None``: ``MeshComputation.compile`` of ``jax._src.interpreters.pxla``, 0.7 to 0.12."""
    try:
        from jax._src.interpreters import pxla
        code = pxla.MeshComputation.compile.__code__
    except (ImportError, AttributeError):
        return None
    while frame is not None:
        if frame.f_code is code:
            return frame.f_locals.get("self")
        frame = frame.f_back
    return None


def lowered_compiling(frame: Any) -> bool:
    """Whether a public ``jax.stages.Lowered.compile()`` runs at ``frame`` or outside it (not a jitted call's own compile)."""
    code = getattr(getattr(jax.stages.Lowered, "compile", None), "__code__", None)
    while frame is not None and code is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def traced_lowering(frame: Any) -> Any:
    """The ``jax.stages.Traced`` whose ``.lower()`` runs at ``frame`` or outside it, or ``None``: where ``Traced.lower``
    reaches no hook (jax 0.7's ``Traced`` calls the ``_resolve_and_lower`` it was made with)."""
    code = getattr(getattr(jax.stages.Traced, "lower", None), "__code__", None)
    while frame is not None and code is not None:
        if frame.f_code is code:
            return frame.f_locals.get("self")
        frame = frame.f_back
    return None


def lowered_from(frame: Any, jaxpr: Any) -> Any:
    """The jaxpr of high types (an argument or a value with an ``unreduced`` sharding) that JAX lowered to ``jaxpr`` before
    dispatching or lowering it, at ``frame`` or outside it, or ``None``: ``jit_p``'s ``_to_lojax`` (its ``jaxpr`` to
    ``lo_jaxpr``) and ``_run_python_pjit`` (``p.params["jaxpr"]`` to ``jaxpr``) of ``jax._src.pjit``, and
    ``Traced.lower`` (its ``jaxpr`` to its ``lojax.jaxpr``), where they lower (0.12.1)."""
    module = _pjit_module()
    to_lojax = getattr(getattr(module, "_to_lojax", None), "__code__", None)
    run_python = getattr(getattr(module, "_run_python_pjit", None), "__code__", None)
    traced_lower = getattr(getattr(jax.stages.Traced, "lower", None), "__code__", None)
    while frame is not None:
        if frame.f_code is to_lojax and frame.f_locals.get("lo_jaxpr") is jaxpr:
            return frame.f_locals.get("jaxpr")
        if frame.f_code is run_python:
            return getattr(frame.f_locals.get("p"), "params", {}).get("jaxpr") if frame.f_locals.get("jaxpr") is jaxpr else None
        if frame.f_code is traced_lower:
            traced = frame.f_locals.get("self")
            lojax = getattr(traced, "_lojax", None)
            return getattr(traced, "jaxpr", None) if getattr(lojax, "jaxpr", None) is jaxpr else None
        frame = frame.f_back
    return None


def traced_donated(traced: Any) -> tuple[bool, ...]:
    """Which arguments of a ``jax.stages.Traced``'s jaxpr are donated: its ``_params`` (jax >= 0.8) or the keywords of
    its ``_lower_callable`` (0.7); ``()`` where neither is there."""
    params = getattr(traced, "_params", None)
    if not isinstance(params, dict):
        params = getattr(getattr(traced, "_lower_callable", None), "keywords", None)
    return tuple(bool(d) for d in params.get("donated_invars", ())) if isinstance(params, dict) else ()


def computation_executable(computation: Any) -> Any:
    """The compiled executable a lowered computation holds (JAX caches it on the first ``compile()``), or ``None``."""
    return getattr(computation, "_executable", None)


def kept_inputs(lowered: Any) -> tuple[int, ...] | None:
    """The positions of the jaxpr inputs a lowered computation (or a ``jax.stages.Lowered``) kept as parameters, in
    order: JAX prunes the unused ones unless ``keep_unused`` (``MeshComputation.compile_args['kept_var_idx']``, 0.7 to
    0.12); ``None`` where unknown."""
    compile_args = getattr(getattr(lowered, "_lowering", lowered), "compile_args", None)
    kept = compile_args.get("kept_var_idx") if isinstance(compile_args, dict) else None
    return tuple(sorted(kept)) if kept is not None else None


def exported_function(jaxpr: Any) -> str | None:
    """The name of the function a ``jax.export.Exported`` was exported from, where ``jaxpr`` is JAX's eager program for
    its ``.call()`` outside jit: one ``call_exported`` equation whose ``exported`` parameter names it (``fun_name``,
    0.7 to 0.12); else ``None``."""
    eqns = getattr(getattr(jaxpr, "jaxpr", jaxpr), "eqns", None)
    if not eqns or len(eqns) != 1 or getattr(eqns[0].primitive, "name", None) != "call_exported":
        return None
    name = getattr(eqns[0].params.get("exported"), "fun_name", None)
    return name if isinstance(name, str) else None


def computation_compiled(computation: Any) -> bool:
    """Whether a lowered computation holds its compiled executable."""
    return computation_executable(computation) is not None


def compiled_from(computation: Any, executable: Any) -> bool:
    """Whether ``executable`` (a ``jax.stages.Compiled``'s) was compiled from the lowered ``computation``: the executable
    it caches, or one its ``compile(compiler_options=..., device_assignment=...)`` made, which JAX keeps only in the
    ``Compiled`` it returns; that one is handed the computation's own ``all_args_info`` (0.7 to 0.12)."""
    if computation_executable(computation) is executable:
        return True
    arguments = _all_args_info(computation)
    return arguments is not None and arguments is _all_args_info(executable)


def lowered_from_computation(computation: Any, jaxpr: Any, donated: tuple[bool, ...]) -> Any:
    """A public ``jax.stages.Lowered`` around a computation JAX lowered for a transformed call (``grad``, ``vmap``).

    ``Lowered(lowering, args_info, out_tree)`` takes these three first
    parameters from jax 0.7 to 0.12; ``.compile()`` then returns the cached
    executable that ran. With no ``jaxpr`` (a ``Lowered`` made before the cell),
    the argument and output types are the computation's own (:func:`_program_avals`).
    """
    from jax._src import stages as _stages

    in_avals, out_avals = (tuple(jaxpr.in_avals), list(jaxpr.out_avals)) if jaxpr is not None else _program_avals(computation)
    in_tree = jax.tree_util.tree_structure((in_avals, {}))
    donate_argnums = tuple(i for i, d in enumerate(donated) if d)
    args_info = _stages.make_args_info(in_tree, in_avals, donate_argnums)
    out_tree = jax.tree_util.tree_structure(list(out_avals))
    return _stages.Lowered(computation, args_info, out_tree)


def _all_args_info(program: Any) -> Any:
    """``pxla.AllArgsInfo`` (every argument's type, dead ones too, and the traced function's ``DebugInfo``) of a lowered
    computation (``compile_args``) or a compiled executable (``_all_args_info``): ``MeshComputation`` and
    ``MeshExecutable`` hold it from jax 0.7 to 0.12."""
    compile_args = getattr(program, "compile_args", None)
    return compile_args.get("all_args_info") if isinstance(compile_args, dict) else getattr(program, "_all_args_info", None)


def _program_avals(program: Any) -> tuple[tuple, list]:
    """``(argument types, output types)`` of a lowered computation or compiled executable, as ``Compiled.args_info`` has them."""
    outputs = program.compile_args["global_out_avals"] if hasattr(program, "compile_args") else program.out_avals
    return tuple(_all_args_info(program).in_avals), list(outputs)


def symbolic_dimensions(lowered: Any) -> tuple[str, ...]:
    """The symbolic dimensions (``jax.export.symbolic_shape``'s ``b``) of a ``jax.stages.Lowered``'s inputs and
    outputs, each once, read from its computation's flat types (``Lowered.args_info`` would unflatten the user's pytree
    classes, running their code); empty where every dimension is a number, or the types cannot be read."""
    from jax import export  # jax 0.7 loads it only when asked

    try:
        in_avals, out_avals = _program_avals(lowered._lowering)
        dims = [d for aval in (*in_avals, *out_avals) for d in getattr(aval, "shape", ())]
        return tuple(dict.fromkeys(str(d) for d in dims if export.is_symbolic_dim(d)))
    except Exception:  # noqa: BLE001 - a Lowered of another shape: none found
        return ()


def program_debug_info(program: Any) -> Any:
    """The ``DebugInfo`` of the function a lowered computation or compiled executable was traced from; ``None`` where
    this JAX keeps none."""
    return getattr(_all_args_info(program), "debug_info", None)


def trace_mark(program: Any) -> Any:
    """What one trace made and the computation lowered from it keeps, to match them by identity: the ``result_paths``
    tuple of the ``DebugInfo`` of an open ``Jaxpr`` once its trace returned (jit sets it then, 0.10 to 0.12) or of a
    lowered computation (the jaxpr's DebugInfo, or a copy naming hoisted constants); ``None`` where it is empty, one
    tuple for all traces."""
    info = getattr(program, "debug_info", None)
    paths = getattr(program_debug_info(program) if info is None else info, "result_paths", None)
    return paths if isinstance(paths, tuple) and paths else None


def debug_info_function(info: Any) -> tuple[str, str | None]:
    """``(function name, source file or None)`` from a ``DebugInfo`` (``"?"`` where there is none)."""
    name = str(getattr(info, "func_name", None) or "?")
    return name, _file_of_source_info(getattr(info, "func_src_info", None))


def compiled_executable(compiled: Any) -> Any:
    """The executable a ``jax.stages.Compiled`` runs (``_executable``, a ``MeshExecutable``, jax 0.7 to 0.12), or ``None``."""
    return getattr(compiled, "_executable", None)


def flat_compiled(compiled: Any) -> Any:
    """A copy of a ``jax.stages.Compiled`` whose arguments and outputs are flat lists of types: its shardings and
    formats are then read without unflattening the user's pytrees (a registered class's constructor would run).
    ``args_info`` and ``out_tree`` are public attributes from 0.7 to 0.12; the types come from its executable."""
    from jax._src import stages as _stages

    in_avals, out_avals = _program_avals(compiled_executable(compiled))
    flat = copy.copy(compiled)
    flat.args_info = _stages.make_args_info(jax.tree_util.tree_structure((in_avals, {})), in_avals, ())
    flat.out_tree = jax.tree_util.tree_structure(list(out_avals))
    return flat


def closed_over_refs(closed: Any) -> int:
    """How many of a closed jaxpr's constants are ``jax.new_ref`` refs (constvars of type ``AbstractRef``, from 0.7 to
    0.12), which JAX passes to the compiled program as inputs; 0 where its constvars cannot be read."""
    try:
        return sum(type(v.aval).__name__ == "AbstractRef" for v in closed.jaxpr.constvars)
    except Exception:  # noqa: BLE001 - a jaxpr of another shape: its constants read as baked in
        return 0


def effect_input(effect: Any, closed: Any) -> int | str | None:
    """Which input of a closed jaxpr an effect is on (a ref's ``ReadEffect``, ``WriteEffect``): the index of its
    argument, ``"const"`` for a closed-over ref, ``None`` for an effect on no input (``DebugEffect``, ``IOEffect``) or
    where this JAX does not tell: the effect names its input by a variable (jax >= 0.9); an ``int`` ``input_index``
    (jax 0.8) counts the closed-over refs JAX made inputs of the jaxpr, which the call's arguments do not hold."""
    found = getattr(effect, "input", getattr(effect, "input_index", None))
    if found is None or isinstance(found, int):
        return None
    jaxpr = getattr(closed, "jaxpr", None)
    if any(found is v for v in getattr(jaxpr, "invars", ())):
        return next(i for i, v in enumerate(jaxpr.invars) if v is found)
    return "const" if any(found is v for v in getattr(jaxpr, "constvars", ())) else None


def flat_traced(traced: Any) -> Any | None:
    """A copy of a ``jax.stages.Traced`` whose ``args_info`` and ``out_info`` are flat lists, where the real ones hold no
    ``None`` (a pytree class of the user's is then not constructed to read them: jax >= 0.9 unflattens both from its
    pytree definitions at each read); ``None`` on jax <= 0.8 (``args_info`` built as it traced, ``in_tree`` read by
    flattening it) or where an input pytree holds a ``None``, which the argument list shows."""
    if "_in_tree" not in getattr(type(traced), "__slots__", ()):
        return None
    in_tree, out_tree = traced._in_tree, traced.out_tree
    if _holds_none(in_tree):
        return None
    flat = copy.copy(traced)
    flat._in_tree = jax.tree_util.tree_structure(((0,) * in_tree.num_leaves, {}))
    flat.out_tree = jax.tree_util.tree_structure([0] * out_tree.num_leaves)
    return flat


def traced_argument_shardings(traced: Any) -> tuple[Any, ...] | None:
    """The sharding each flat argument of a ``jax.stages.Traced`` was placed with (``None`` for one with none), one per
    jaxpr input; ``None`` where this JAX keeps neither. jax 0.10 and 0.12 keep the arguments' types with their shardings
    (``_meta_tys_flat``), jax 0.7 the arguments themselves (``_args_flat``); 0.8 and 0.9 were not checked. No argument
    is flattened again."""
    metas = getattr(traced, "_meta_tys_flat", None)
    if isinstance(metas, (tuple, list)):
        return tuple(getattr(meta, "sharding", None) for meta in metas)
    args = getattr(traced, "_args_flat", None)
    if isinstance(args, (tuple, list)):
        return tuple(_array_sharding(arg) for arg in args)
    return None


def _array_sharding(value: Any) -> Any:
    """An array's (or a ``jax.ShapeDtypeStruct``'s) sharding, its kind read from ``type(value)`` alone; ``None`` for
    anything else (a tracer, a NumPy array)."""
    kind = type(value)
    if not issubclass(kind, (jax.Array, jax.ShapeDtypeStruct)) or issubclass(kind, jax.core.Tracer):
        return None
    return getattr(value, "sharding", None)


def _holds_none(tree: Any) -> bool:
    """Whether a pytree definition has a ``None`` node, read from its nodes' types (no code of the user's runs)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        data = node.node_data()
        if data is not None and data[0] is type(None):
            return True
        pending.extend(node.children())
    return False


def jaxpr_prefix(closed: Any, equations: int) -> Any:
    """``closed`` keeping only its first ``equations`` top-level equations, for printing as far as a report shows.

    Its outputs become the kept variables that later equations (or the
    result) use, so nothing kept prints as unused ``_``. ``ClosedJaxpr.replace``
    and ``Jaxpr.replace`` exist from 0.7 to 0.12 (0.12's ``make_jaxpr`` gives a
    ``Jaxpr`` whose ``.jaxpr`` is itself); ``None`` where they do not.
    """
    try:
        inner = closed.jaxpr
        kept, rest = inner.eqns[:equations], inner.eqns[equations:]
        used = {id(v) for eqn in rest for v in eqn.invars} | {id(v) for v in inner.outvars}
        outvars = [v for eqn in kept for v in eqn.outvars if id(v) in used]
        return closed.replace(jaxpr=inner.replace(eqns=kept, outvars=outvars))
    except Exception:  # noqa: BLE001 - a JAX without .replace: the caller prints the whole jaxpr
        return None


def jaxpr_debug_info(jaxpr: Any) -> Any:
    """The ``DebugInfo`` of the function a ``ClosedJaxpr`` was traced from (argument names, result paths, source);
    ``None`` where it keeps none."""
    return getattr(getattr(jaxpr, "jaxpr", None), "debug_info", None)


def jaxpr_function(jaxpr: Any) -> tuple[str, str | None]:
    """``(function name, source file or None)`` of the Python function a ``ClosedJaxpr`` was traced from."""
    return debug_info_function(jaxpr_debug_info(jaxpr))


def jit_info_function(jit_info: Any) -> tuple[str, str | None]:
    """``(function name, source file or None)`` from a wrapper's ``PjitInfo`` (before any jaxpr exists)."""
    source = getattr(jit_info, "fun_sourceinfo", None)
    name = str(source).split(" at ", 1)[0] if source else "?"
    return name, _file_of_source_info(source)


def evaluates_closed_jaxpr(fun: Any) -> bool:
    """Whether ``fun``, a plain function of JAX's own, closes over a jaxpr it evaluates, or a ``functools.partial`` of
    one given a jaxpr: JAX traces such a function with the debug info of the user's function whose jaxpr it is, though
    none of the user's code runs again (checkify's ``jaxpr_to_checkify_jaxpr.<locals>.fun_wrapped``, 0.10 to 0.12;
    ``_transpose_jaxpr_fancy.<locals>.transposed``, the backward pass of a jitted call under ``jax.grad``, 0.12;
    ``partial(_eval_jaxpr_discharge_state, jaxpr, ...)``, the discharge of a ``jax.Ref`` argument, 0.12).
    ``False`` where ``jax._src.core`` has neither jaxpr type."""
    if type(fun) is functools.partial and _is_jax_function(fun.func):
        kinds = _jaxpr_types()
        return bool(kinds) and any(isinstance(arg, kinds) for arg in fun.args)
    closure = fun.__closure__ if _is_jax_function(fun) else None
    kinds = _jaxpr_types() if closure else ()
    return bool(kinds) and any(_cell_filled(cell) and isinstance(cell.cell_contents, kinds) for cell in closure)


def _is_jax_function(fun: Any) -> bool:
    """Whether ``fun`` is a plain function defined in JAX's own files."""
    return type(fun) is types.FunctionType and fun.__code__.co_filename.startswith(JAX_DIR)


@functools.cache
def _carries_consts(kind: type) -> bool:
    """Whether an open jaxpr of this type carries its constants (jax 0.12's ``Jaxpr.consts``)."""
    return hasattr(kind, "consts")


@functools.cache
def _jaxpr_types() -> tuple[type, ...]:
    """JAX's ``Jaxpr`` and ``ClosedJaxpr`` classes, those this JAX has (looked up once)."""
    try:
        from jax._src import core as _core
    except ImportError:
        return ()
    return tuple(k for k in (getattr(_core, "Jaxpr", None), getattr(_core, "ClosedJaxpr", None)) if isinstance(k, type))


def unnamed_callable_source(fun: Any) -> tuple[str, str, int] | None:
    """``(name, file, first line)`` of a jitted callable JAX names ``<unknown>``, else ``None``.

    JAX's ``fun_sourceinfo`` unwraps plain functions and ``functools.partial``;
    anything else (an instance of a class with ``__call__``, JAX's own
    ``HashablePartial`` that eager ``shard_map`` jits per primitive) gets no
    name and no file. Only types are read here (the class's ``__call__``, a
    ``partial``'s ``func``, a HashablePartial's ``f``), never a user object's
    own attributes. Never raises: the name is a nicety, never the call's outcome.
    """
    try:
        return _callable_source(fun)
    except Exception:  # noqa: BLE001 - a hostile metaclass or function attribute
        return None


def _callable_source(fun: Any) -> tuple[str, str, int] | None:
    if (pullback := pullback_source(fun)) is not None:
        return pullback
    for _ in range(8):
        if isinstance(fun, functools.partial):
            fun = fun.func
        elif type(fun).__name__ == "HashablePartial" and type(fun).__module__.startswith("jax"):
            fun = getattr(fun, "f", None)
        else:
            break
    if isinstance(fun, types.FunctionType):  # as far as __wrapped__ holds functions: one may point to anything
        fun = inspect.unwrap(fun, stop=lambda f: type(getattr(f, "__wrapped__", None)) is not types.FunctionType)
    if isinstance(fun, (types.FunctionType, types.MethodType)):
        code = getattr(fun, "__code__", None)
        return (fun.__name__, code.co_filename, code.co_firstlineno) if code is not None else None
    call = getattr(type(fun), "__call__", None)
    if isinstance(call, types.FunctionType):
        return type(fun).__name__, call.__code__.co_filename, call.__code__.co_firstlineno
    return None


_PULLBACK_MAKERS = {"_lift_linearized": "linearize", "_vjp3_callable": "vjp", "_vjp_pullback_wrapper": "vjp"}
"""JAX's functions behind the function ``jax.linearize`` or ``jax.vjp`` returns (0.7 to 0.12), by the JAX function."""
_PULLBACK_WORDS = {"linearize": "jvp", "vjp": "pullback"}


class Pullback(NamedTuple):
    """The function ``jax.vjp(f, …)`` or ``jax.linearize(f, …)`` returns: ``maker`` (``"vjp"``), ``name``
    (``"vjp(f) pullback"``), and ``f``'s file and first line."""
    maker: str
    name: str
    file: str
    line: int


def pullback_source(fun: Any) -> tuple[str, str, int] | None:
    """``("vjp(f) pullback", f's file, f's first line)`` for the function ``jax.vjp(f, …)`` returns (``linearize(f)
    jvp`` for ``jax.linearize``'s), else ``None``."""
    found = pullback_of(fun)
    return (found.name, found.file, found.line) if found is not None else None


def pullback_of(fun: Any) -> Pullback | None:
    """The :class:`Pullback` ``fun`` is, else ``None``. JAX names it by its class (``VJP``, ``_HashableCallableShim``);
    ``f`` is read from the debug info of the jaxpr it holds. Only JAX's and functools' objects, lists and tuples are
    opened. Never raises."""
    try:
        return _pullback_of(fun)
    except Exception:  # noqa: BLE001 - a hostile metaclass: no pullback of JAX's
        return None


def _pullback_of(fun: Any) -> Pullback | None:
    maker, pending = None, [fun]
    for _ in range(64):
        if not pending:
            return None
        held = pending.pop()
        kind = type(held)
        if kind not in (list, tuple) and not kind.__module__.startswith(("jax.", "functools")):
            continue
        if kind.__name__ in ("Jaxpr", "ClosedJaxpr"):
            found = parse_source_info(getattr(getattr(getattr(held, "jaxpr", held), "debug_info", None), "func_src_info", None))
            if maker is not None and found is not None:
                return Pullback(maker, f"{maker}({found[0]}) {_PULLBACK_WORDS[maker]}", found[1], found[2])
        elif isinstance(held, functools.partial):  # jax.tree_util.Partial, too
            named = held.func.__name__ if type(held.func) is types.FunctionType else ""  # a user object's lookups never run
            maker = maker or _PULLBACK_MAKERS.get(named)
            pending.extend(reversed((held.func, *held.args)))
        elif kind.__name__ in ("_HashableCallableShim", "VJP"):
            pending.append(held.fun)
        elif kind in (list, tuple):
            pending.extend(reversed(held))
    return None


UNNAMED_FUNCTION_NAMES = ("<unnamed function>", "<unnamed wrapped function>")
"""The names JAX compiles a callable with no ``__name__`` under: ``jit__unnamed_function`` (jax 0.12), or
``jit__unnamed_wrapped_function`` (jax 0.7, where the name comes from ``lu.WrappedFun``)."""


def unknown_name(name: str) -> bool:
    """Whether JAX gave a function no name (``?`` from jaxshow, ``<unknown>`` from ``fun_sourceinfo``)."""
    return name in ("?", "<unknown>", "", "<unnamed function>", "_unnamed_function")


def parse_source_info(source: Any) -> tuple[str, str, int] | None:
    """JAX's ``"f at /path/file.py:12"`` (``func_src_info``, ``fun_sourceinfo``) -> ``("f", "/path/file.py", 12)``; line 0 if none."""
    return _parsed_source_info(source if type(source) is str else str(source or ""))


@functools.lru_cache(maxsize=1024)
def _parsed_source_info(text: str) -> tuple[str, str, int] | None:
    """:func:`parse_source_info` of a text, kept: each miss of a function reads its source info again."""
    if " at " not in text:
        return None
    name, where = text.split(" at ", 1)
    file, _, line = where.rpartition(":")
    return (name, file, int(line)) if file and line.isdigit() else (name, where, 0)


def _file_of_source_info(source: Any) -> str | None:
    parts = parse_source_info(source)
    return parts[1] if parts else None


def jit_wrapper_type() -> type:
    """The type of a ``jax.jit`` wrapper (``jaxlib``'s ``PjitFunction``), found without touching user objects."""
    return type(jax.jit(_identity))


def _identity(x: Any) -> Any:
    return x


def pmap_wrapper_code() -> types.CodeType | None:
    """The code of the function ``jax.pmap`` returns where it is a plain Python function (jax >= 0.8, whose ``pmap``
    is a jit of ``shard_map``), else ``None`` (jax 0.7's ``PmapFunction``)."""
    wrapper = jax.pmap(_identity)
    return wrapper.__code__ if type(wrapper) is types.FunctionType else None


def jit_disabled() -> bool:
    """Whether ``jax.disable_jit()`` is in effect on this thread."""
    try:
        return bool(jax.config.jax_disable_jit)
    except Exception:  # noqa: BLE001
        return False


def jit_info(wrapper: Any) -> Any:
    """A ``jax.jit`` wrapper's private ``PjitInfo`` (its options and source info), else ``None``."""
    return getattr(wrapper, "_jit_info", None)


def pmapped_function(fun: Any) -> tuple[str, str | None] | None:
    """``(name, source file)`` of the user's function when ``fun`` is the jit body ``jax.pmap`` builds (jax >= 0.8).

    Since jax 0.8 ``pmap`` runs as a ``jit`` of ``shard_map`` of a function
    ``_fun`` in ``jax/_src/pmap.py`` that closes over the user's function as a
    ``linear_util.WrappedFun`` named ``fun``; its debug info names the user's
    function. ``None`` for anything else.
    """
    source = pmapped_source_info(fun)
    if not source:
        return None
    return str(source).split(" at ", 1)[0], _file_of_source_info(source)


def pmapped_source_info(fun: Any) -> str | None:
    """JAX's ``"f at /path/file.py:12"`` for the user's function under ``jax.pmap``'s jit body (jax >= 0.8), else ``None``."""
    source = getattr(getattr(_pmapped_wrapped(fun), "debug_info", None), "func_src_info", None)
    return str(source) if source else None


def pmapped_arg_names(fun: Any, paths: Sequence[str]) -> dict[str, str]:
    """The user's name of each argument of ``jax.pmap``'s jit body ``fun`` (jax >= 0.8), whose flat ``paths`` JAX names
    ``flat_args[i]`` (``args[i]`` on 0.8): pmap's own debug info names each argument of the user's function, so only
    where each is one array; else ``{}``."""
    names = getattr(getattr(_pmapped_wrapped(fun), "debug_info", None), "arg_names", None)
    if not names or len(names) != len(paths) or not all(names):
        return {}
    if not any(all(p == f"{body}[{i}]" for i, p in enumerate(paths)) for body in ("flat_args", "args")):
        return {}
    return {p: str(n) for p, n in zip(paths, names)}


def pmapped_target(fun: Any) -> Any:
    """The callable given to ``jax.pmap`` when ``fun`` is the jit body it builds (jax >= 0.8: the ``f`` of the
    ``linear_util.WrappedFun`` that ``_fun`` closes over), else ``None``."""
    return getattr(_pmapped_wrapped(fun), "f", None)


def pmap_function(wrapper: Any) -> Any:
    """The function given to ``jax.pmap``: its wrapper's ``__wrapped__``, else (jax 0.8.0, whose wrapper sets none) the
    ``f`` its ``infer_params`` closes over; ``None`` where neither is there."""
    inner = getattr(wrapper, "__wrapped__", None)
    return inner if inner is not None else _closure_value(_closure_value(wrapper, "infer_params"), "f")


def pmap_static_argnums(wrapper: Any) -> tuple[int, ...]:
    """The ``static_broadcasted_argnums`` of a ``jax.pmap`` wrapper (jax >= 0.8), from its ``infer_params``; else ``()``."""
    found = _closure_value(_closure_value(wrapper, "infer_params"), "static_broadcasted_tuple")
    return tuple(found) if isinstance(found, tuple) else ()


def pmap_jit_call(wrapper: Any, args: tuple, kwargs: dict) -> tuple[Any, list] | None:
    """``(the jax.jit wrapper, its flat arguments)`` a call of ``jax.pmap``'s wrapper with these arguments calls
    (jax >= 0.8), looked up again by pmap's own ``infer_params``: its ``lu.cache`` of shard_map jits, all lookups. It
    flattens the arguments and hashes the static ones, as the call did. ``None`` where this JAX's pmap has no such
    function, or on several processes, where ``infer_params`` also makes global arrays of the arguments.
    """
    infer = _closure_value(wrapper, "infer_params")
    if infer is None or jax.process_count() > 1:
        return None
    found = infer(*args, **kwargs)
    # jax >= 0.9: (cached, jitted_f, dyn_args_flat, …); 0.8: (jitted_f, flat_global_args, p, mesh, out_specs, donate_tuple)
    at = 0 if isinstance(found[1], (list, tuple)) else 1
    return found[at], list(found[at + 1])


def _closure_value(fun: Any, name: str) -> Any:
    """The value a plain function's closure holds under ``name``, else ``None``."""
    code = fun.__code__ if type(fun) is types.FunctionType else None
    if code is None or name not in code.co_freevars:
        return None
    try:
        return fun.__closure__[code.co_freevars.index(name)].cell_contents
    except (IndexError, TypeError, ValueError):  # ValueError: an empty cell
        return None


def _pmapped_wrapped(fun: Any) -> Any:
    """The ``linear_util.WrappedFun`` of the user's function under ``jax.pmap``'s jit body: the one its ``_fun``
    (``jax/_src/pmap.py``, jax >= 0.9) closes over as ``fun``; on jax 0.8, the body is ``shard_map`` of that
    ``WrappedFun``'s ``call_wrapped``, traced for ``pmap``."""
    while type(fun) is types.FunctionType and "__wrapped__" in fun.__dict__:  # JAX's api_boundary, util.wraps
        fun = fun.__dict__["__wrapped__"]
    if type(fun) is types.MethodType and type(fun.__self__).__name__ == "WrappedFun":
        traced_for = getattr(getattr(fun.__self__, "debug_info", None), "traced_for", None)
        return fun.__self__ if traced_for == "pmap" else None
    code = fun.__code__ if type(fun) is types.FunctionType else None
    if code is None or not code.co_filename.endswith(os.path.join("jax", "_src", "pmap.py")):
        return None
    wrapped = _closure_value(fun, "fun")
    return wrapped if type(wrapped).__name__ == "WrappedFun" else None


_operation_names: list[Any] = [None, frozenset()]


def jax_operation_names() -> frozenset[str]:
    """The names JAX compiles its own eager operations under (``jnp.sin(x)`` outside jit dumps ``jit_sin``).

    Every primitive with a lowering (``mlir._lowerings`` and its per-platform
    tables), every function jitted at the top level of a ``jax._src`` module
    (``jnp.where``'s ``_where``) and every ``jnp`` ufunc (``multiply``). Read again only when more of JAX's
    modules have been imported; empty where this JAX keeps no such tables.
    """
    modules = [m for name, m in list(sys.modules.items()) if name.startswith("jax._src.") and m is not None]
    if _operation_names[0] == len(modules):
        return _operation_names[1]
    names: set[str] = set()
    try:
        from jax._src.interpreters import mlir
        tables = [getattr(mlir, "_lowerings", {}), *getattr(mlir, "_platform_specific_lowerings", {}).values()]
        names.update(str(p.name) for table in tables for p in list(table) if isinstance(getattr(p, "name", None), str))
    except Exception:  # noqa: BLE001 - a JAX without these tables: jitted functions only
        pass
    ufunc_type = getattr(sys.modules.get("jax.numpy"), "ufunc", None)  # jnp.multiply: a jitted function inside
    for module in modules:
        values = list(vars(module).values())
        names |= jitted_function_names(values)
        names.update(value.__name__ for value in values if type(value) is ufunc_type and isinstance(value.__name__, str))
    _operation_names[:] = [len(modules), frozenset(names)]
    return _operation_names[1]


def jitted_function_names(values: Any) -> set[str]:
    """The names of the Python functions behind the ``jax.jit`` wrappers among ``values``, told by type only
    (a namespace's values: no attribute of any other object is read)."""
    wrapper_type = jit_wrapper_type()
    funs = (jit_function(v) for v in list(values) if type(v) is wrapper_type)
    return {f.__name__ for f in funs if type(f) is types.FunctionType}


def abstract_value(value: Any) -> Any:
    """The abstract value ``value`` stands for: a ``jax.stages.ArgInfo``'s (its private ``_aval``, 0.7 to 0.12), an
    array's or tracer's ``aval``, else ``value`` itself (an aval, a ``ShapeDtypeStruct``)."""
    return getattr(value, "_aval", None) or getattr(value, "aval", None) or value


def is_ref_aval(aval: Any) -> bool:
    """Whether an abstract value is a mutable array reference's (``jax.new_ref``: ``state.types.AbstractRef``; not in jax 0.7)."""
    kind = type(aval)
    return kind.__name__ == "AbstractRef" and kind.__module__.startswith("jax.")


class ProgramPlacements(NamedTuple):
    """A compiled program's input and output shardings and layouts, flat, in the program's own order."""
    inputs: list
    outputs: list
    input_layouts: list | None
    output_layouts: list | None


def program_placements(compiled: Any) -> ProgramPlacements | None:
    """Every input's and output's sharding and layout of a compiled program, flat, also where the program has
    more of them than the function's pytrees: a jitted function that closes over a ``jax.new_ref`` takes it as
    an input after its own arguments, and writes back each ref it was passed, then each it closed over, as an
    output after its own results, and JAX's ``Compiled.input_shardings``, ``output_shardings`` and formats
    raise "Too many leaves for PyTreeDef" (jax 0.10 to 0.12). Read from ``Compiled``'s private flat lists;
    ``None`` where they are missing, the layouts ``None`` where those are."""
    try:
        inputs, outputs = list(compiled._input_shardings_flat()), list(compiled._executable._out_shardings)
    except Exception:  # noqa: BLE001 - a JAX without the flat lists: the caller says why
        return None
    try:
        in_layouts, out_layouts = list(compiled._input_layouts_flat()), [f.layout for f in compiled._output_formats_flat]
    except Exception:  # noqa: BLE001 - shardings without layouts
        in_layouts = out_layouts = None
    return ProgramPlacements(inputs, outputs, in_layouts, out_layouts)


def eager_primitive_function(fun: Any) -> bool:
    """Whether ``fun`` is a function JAX jits to run one primitive outside jit (``x * 2``, a ``jax.lax.scan``):
    ``dispatch.xla_primitive_callable``'s ``prim_fun``, marked ``_apply_primitive`` (0.7 to 0.12); ``False`` without the mark."""
    return type(fun) is types.FunctionType and fun.__dict__.get("_apply_primitive") is True


def jit_function(wrapper: Any) -> Any:
    """The Python function a ``jax.jit`` wrapper traces (its private ``_fun``), else ``None``."""
    return getattr(wrapper, "_fun", None)


def outside_jaxshow(frame: Any) -> Any:
    """The first frame from ``frame`` out that is not in jaxshow's files (past its hooks and probes)."""
    while frame is not None and _jaxshows_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


@functools.lru_cache(maxsize=1024)
def _jaxshows_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(JAXSHOW_DIR)


def jit_caller(frame: Any) -> Any:
    """The frame that called the ``jax.jit`` wrapper whose trace is under way at ``frame``, else ``None``.

    From ``frame`` out, past jaxshow's probe, through ``pjit.py``'s frames only
    (and jaxshow's call hooks among them) to the wrapper's C++ cache miss, ``cache_miss`` there, then past JAX's
    ``reraise_with_filtered_traceback`` around it (0.7 to 0.12). ``None`` where
    another frame comes first: the trace is not that call's own (``.trace()``,
    ``jax.make_jaxpr``; a jvp JAX traces for a call under ``jax.grad``).
    """
    frame = outside_jaxshow(frame)
    seen = set()
    while frame is not None and frame.f_code.co_name != "cache_miss":
        if not _jaxshows_file(frame.f_code.co_filename):  # jaxshow's entry hook, where installed
            seen.add(frame.f_code.co_filename)
        if len(seen) > 1:
            return None
        frame = frame.f_back
    if frame is None or seen - {frame.f_code.co_filename}:
        return None
    frame = frame.f_back
    while frame is not None and frame.f_code.co_name == "reraise_with_filtered_traceback":
        frame = frame.f_back
    return frame


def raised_reading_jit_call(error: BaseException) -> bool:
    """Whether ``error`` came out of JAX's reading of a jitted call before its program: ``pjit._infer_params``, where JAX
    parses the arguments, checks them against the jit's options and traces (``_trace_for_jit`` on jax 0.9), 0.7 to 0.12.

    Read from the error's frames, which JAX keeps under IPython (``jax_traceback_filtering`` ``auto``: its frames are
    hidden, not removed), or from the unfiltered traceback it attaches in ``remove_frames`` mode; ``False`` where JAX
    removed them (``quiet_remove_frames``).
    """
    return _raised_in_pjit(error, ("_infer_params", "_trace_for_jit"))


def refused_by_no_tracing(error: BaseException) -> bool:
    """Whether ``error`` is ``jax.no_tracing()``'s refusal of a jitted call that missed JAX's C++ cache, raised in
    ``pjit._cpp_pjit``'s ``cache_miss`` before JAX looks up its traces (0.7 to 0.12), read as
    :func:`raised_reading_jit_call` reads its frames: none of them traces (a call inside the trace of the call
    refused)."""
    return (isinstance(error, RuntimeError) and str(error).endswith("but 'no_tracing' is set")
            and _raised_in_pjit(error, ("cache_miss",)) and not raised_reading_jit_call(error))


def refused_to_run(error: BaseException) -> bool:
    """Whether ``error`` is ``jax.no_execution()``'s refusal to run a compiled program (``ExecuteReplicated``, jax >= 0.8)."""
    return isinstance(error, RuntimeError) and str(error).endswith("but the no_execution config option is set")


def _raised_in_pjit(error: BaseException, functions: tuple[str, ...]) -> bool:
    pjit_file = os.path.join(JAX_DIR, "_src", "pjit.py")
    tracebacks = [error.__traceback__]
    if type(error.__cause__).__name__ == "UnfilteredStackTrace":
        tracebacks.append(error.__cause__.__traceback__)
    for tb in tracebacks:
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_name in functions and os.path.abspath(code.co_filename) == pjit_file:
                return True
            tb = tb.tb_next
    return False


def trace_state_clean() -> bool:
    """Whether no transformation (``grad``, ``vmap``, an outer trace) is active on this thread.

    JAX's own test compares the axis environment with its top one by identity; on jax 0.7, where an empty one is not
    interned, ``jax.make_jaxpr``'s ``extend_axis_env_nd([])`` sets one equal to it, with no transformation active.
    """
    try:
        from jax._src import core as _core

        if _core.trace_state_clean():
            return True
        context = _core.trace_ctx
        return context.trace is _core.eval_trace and context.axis_env == _core.top_axis_env
    except Exception:  # noqa: BLE001 - unknown: assume a plain call
        return True


# --- config options (used by config_inventory.py; jax-facts §7) -----------------------------

ConfigKind = str
"""``"scopable"`` (a ``State``: global value plus a per-thread context manager), ``"flag"`` (a ``Flag``: one value), ``"unknown"``."""

BACKEND_START_READS: dict[str, str] = {
    "jax_platforms": "read once, when JAX creates its backends (xla_bridge.backends())",
    "jax_cpu_collectives_implementation": "read when JAX creates the CPU backend (xla_bridge.make_cpu_client)",
    "jax_cpu_enable_async_dispatch": "read when JAX creates the CPU backend (xla_bridge.make_cpu_client)",
    "jax_pjrt_client_create_options": "read when JAX creates a PJRT plugin backend (xla_bridge._options_from_jax_configs)",
    "jax_cuda_visible_devices": "read when JAX creates the CUDA plugin backend (xla_bridge._options_from_jax_configs)",
    "jax_rocm_visible_devices": "read when JAX creates the ROCm plugin backend (xla_bridge._options_from_jax_configs)",
}
"""Options JAX reads only while it creates a backend, so a change after that is silently ignored.

Checked by reading ``jax/_src/xla_bridge.py`` of jax 0.7.0, 0.10.2 and 0.12.0.1,
where every name here is defined; :func:`backend_start_reads` keeps only the
names the running JAX defines. Options that *raise* after the backend started
are not listed: :func:`raises_after_backend_start` finds their validator.
"""

_ENV_READERS = frozenset({"getenv", "get", "bool_env", "int_env", "float_env"})
_STR_METHODS = frozenset({"lower", "upper", "strip"})


def config_holders() -> dict[str, Any]:
    """Option name -> JAX's value holder (a ``State`` or a ``Flag``), for every option of the running JAX.

    ``jax.config._value_holders`` is private in every release checked (0.7.0 through 0.12);
    returns ``{}`` where it is missing, and the caller falls back to ``jax.config.values``.
    """
    holders = getattr(jax.config, "_value_holders", None)
    return dict(holders) if isinstance(holders, dict) else {}


def config_option_kind(holder: Any) -> ConfigKind:
    """``"scopable"`` for a ``State`` (it has a context manager), ``"flag"`` for a ``Flag``, else ``"unknown"``."""
    try:
        from jax._src import config as _config
    except ImportError:
        _config = None
    state, flag = getattr(_config, "State", None), getattr(_config, "Flag", None)
    if isinstance(state, type) and isinstance(holder, state):
        return "scopable"
    if isinstance(flag, type) and isinstance(holder, flag):
        return "flag"
    if callable(getattr(holder, "get_local", None)) and callable(holder):
        return "scopable"
    return "flag" if hasattr(holder, "value") else "unknown"


def _unset_sentinel() -> Any:
    """The object ``State.get_local()`` returns when no context manager is active on this thread."""
    try:
        from jax._src import config as _config
    except ImportError:
        return None
    for owner in (getattr(_config, "config_ext", None), _config):
        sentinel = getattr(owner, "unset", None)
        if sentinel is not None:
            return sentinel
    return None


def config_values(holder: Any) -> tuple[Any, Any, bool]:
    """``(value this thread sees, global value, context manager active on this thread)`` of one holder.

    Reads only (``State.value``/``get_global``/``get_local``, ``Flag.value``); never
    ``jax.config.read`` (it raises for options with a context manager) and never
    ``update``. A ``State``'s thread-local value is "set" when ``get_local()`` is
    not JAX's ``unset`` sentinel (``config_ext.unset`` in 0.7.0 through 0.12).
    """
    value = holder.value
    get_global, get_local = getattr(holder, "get_global", None), getattr(holder, "get_local", None)
    if get_global is None or get_local is None:
        return value, value, False
    sentinel = _unset_sentinel()
    local = get_local()
    active = sentinel is not None and local is not sentinel
    return (local if active else value), get_global(), active


def config_meta(name: str) -> tuple[str, dict[str, Any]]:
    """``(value type, keyword arguments)`` JAX recorded for an option (``jax.config.meta``): ``("bool", {"help": …})``."""
    meta = getattr(jax.config, "meta", None)
    entry = meta.get(name) if isinstance(meta, dict) else None
    if not isinstance(entry, tuple) or len(entry) != 3:
        return "", {}
    value_type, _args, kwargs = entry
    type_name = value_type if isinstance(value_type, str) else getattr(value_type, "__name__", str(value_type))
    return type_name, dict(kwargs) if isinstance(kwargs, dict) else {}


def config_help(name: str, holder: Any) -> str:
    """An option's help text: ``help`` in ``jax.config.meta``, else the ``State``'s docstring after its first line."""
    help_text = config_meta(name)[1].get("help")
    if isinstance(help_text, str) and help_text.strip():
        return help_text.strip()
    doc = getattr(holder, "__doc__", None)
    if isinstance(doc, str) and doc.startswith("Context manager for") and "\n\n" in doc:
        return doc.split("\n\n", 1)[1].strip()
    return ""


PROBED_TRACE_CONTEXT = "the options that show in jax._src.config.trace_context() when set"
"""Where :func:`trace_context_option_names` found them on a C++ trace context without names (jax 0.8 to 0.10.1)."""

PYTHON_TRACE_CONTEXT = "the options jax._src.config.trace_context() reads"
"""Where it found them on a Python trace context (jax 0.7, and 0.8 on older jaxlib), whose options also reach jaxlib's
jit state through update hooks."""


def trace_context_option_names(names: Any) -> tuple[frozenset[str] | None, str]:
    """The options among ``names`` that are part of JAX's trace context, and where that came from.

    - jaxlib with ``trace_context_names`` (jax >= 0.10.2): that function's answer.
    - otherwise the options :func:`trace_context_positions` finds in it, said as
      :data:`PYTHON_TRACE_CONTEXT` where ``trace_context()`` is Python (jax <= 0.7.x,
      and 0.8 on older jaxlib), else as :data:`PROBED_TRACE_CONTEXT`; ``None`` and why where it finds none.
    """
    names = frozenset(names)
    listed = trace_context_names()
    if listed is not None:
        return names & frozenset(listed), "jax._src.config.trace_context_names()"
    try:
        from jax._src import config as _config
    except ImportError:
        return None, "jax._src.config is missing"
    positions = trace_context_positions()
    if positions is None:
        return None, "this jaxlib keeps the trace context in C++ and cannot list it (trace_context_names needs jax >= 0.10.2)"
    python = hasattr(getattr(_config, "trace_context", None), "__code__")
    return names & frozenset(positions), PYTHON_TRACE_CONTEXT if python else PROBED_TRACE_CONTEXT


def raises_after_backend_start(holder: Any) -> bool:
    """Whether setting ``holder`` runs JAX's ``xla_bridge._validate_backend_not_initialized``.

    The validator sits in the closure of the ``State``'s parser (jax >= 0.8:
    ``_parser``) or is its ``_validator`` (0.7.x), possibly inside a
    ``functools.partial``; it raises once a backend is up unless the value is
    unchanged. Found by walking those callables, never by calling them.
    """
    try:
        from jax._src import xla_bridge as _xb
    except ImportError:
        return False
    target = getattr(_xb, "_validate_backend_not_initialized", None)
    if target is None:
        return False
    seen: set[int] = set()
    pending = [getattr(holder, attr, None) for attr in ("_parser", "_validator")]
    while pending:
        item = pending.pop()
        if item is None or id(item) in seen or len(seen) > 64:
            continue
        seen.add(id(item))
        if item is target:
            return True
        if isinstance(item, functools.partial):
            pending.extend((item.func, *item.args))
        elif isinstance(item, types.FunctionType):
            pending.extend(cell.cell_contents for cell in (item.__closure__ or ()) if _cell_filled(cell))
    return False


def _cell_filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def backend_start_reads(names: Any) -> dict[str, str]:
    """:data:`BACKEND_START_READS` restricted to the options the running JAX defines."""
    return {name: why for name, why in BACKEND_START_READS.items() if name in names}


def backends_initialized() -> tuple[bool | None, tuple[str, ...]]:
    """Whether JAX has created its backends in this process, and their platform names; never creates one.

    ``xla_bridge.backends_are_initialized()`` (0.7.0 through 0.12), else the
    module's ``_backends`` dict; ``(None, ())`` where neither exists.
    """
    try:
        from jax._src import xla_bridge as _xb
    except ImportError:
        return None, ()
    backends = getattr(_xb, "_backends", None)
    platforms = tuple(sorted(str(k) for k in backends)) if isinstance(backends, dict) else ()
    probe = getattr(_xb, "backends_are_initialized", None)
    if probe is not None:
        try:
            return bool(probe()), platforms
        except Exception:  # noqa: BLE001 - fall back to the dict
            pass
    return (bool(backends), platforms) if isinstance(backends, dict) else (None, ())


class ConfigDefinition(NamedTuple):
    """What the call that defined an option says, read from JAX's source.

    ``default_known`` is False where the default is computed at import by an
    expression this reader does not evaluate (``default_text`` holds it).
    ``env_vars`` are the environment variables the definition reads;
    ``include_in_jit_key`` is ``None`` where the keyword is not a literal.
    """

    default_known: bool
    default: Any
    default_text: str
    env_vars: tuple[str, ...]
    include_in_jit_key: bool | None


_DEFINITIONS: dict[str, ConfigDefinition] = {}
_SCANNED_MODULES: set[str] = set()


def config_definitions(holders: dict[str, Any]) -> dict[str, ConfigDefinition]:
    """How each option was defined, read from the source of the JAX modules that hold the options.

    JAX keeps no default value and no jit-key membership where Python can read
    it (the env var is applied to the default at import, and ``include_in_jit_key``
    goes into C++), so this reads the defining calls (``bool_state(name=…,
    default=…)``, ``string_flag(…)``) with :mod:`ast`. The modules are those
    with a holder among their globals; each is parsed once per process.
    Options it cannot find are missing from the answer.
    """
    missing = [name for name in holders if name not in _DEFINITIONS]
    if missing:
        wanted = {id(holders[name]) for name in missing}
        for module_name, module in list(sys.modules.items()):
            if module_name in _SCANNED_MODULES or not module_name.startswith("jax") or module is None:
                continue
            try:
                defines = any(id(v) in wanted for v in list(vars(module).values()))
            except TypeError:
                continue
            if defines:
                _SCANNED_MODULES.add(module_name)
                _DEFINITIONS.update({k: v for k, v in _definitions_in(module).items() if k not in _DEFINITIONS})
    return {name: _DEFINITIONS[name] for name in holders if name in _DEFINITIONS}


def _definitions_in(module: types.ModuleType) -> dict[str, ConfigDefinition]:
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError, ValueError):
        return {}
    found: dict[str, ConfigDefinition] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        helper = _call_name(node.func)
        if not helper.endswith(("_state", "_flag")):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        name_node = keywords.get("name", node.args[0] if node.args else None)
        if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)) or name_node.value in found:
            continue
        name = name_node.value
        default_node = keywords.get("default", node.args[1] if len(node.args) > 1 else None)
        env_vars: list[str] = [name.upper()] if helper.endswith("_state") else []
        known, default = _evaluate(default_node, vars(module), env_vars) if default_node is not None else (False, None)
        found[name] = ConfigDefinition(
            default_known=known,
            default=default,
            default_text=ast.unparse(default_node) if default_node is not None else "",
            env_vars=tuple(dict.fromkeys(env_vars)),
            include_in_jit_key=_literal_flag(keywords.get("include_in_jit_key")),
        )
    return found


def _call_name(func: Any) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _literal_flag(node: Any) -> bool | None:
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def _evaluate(node: Any, namespace: dict[str, Any], env_vars: list[str]) -> tuple[bool, Any]:
    """``(known, value)`` of a default expression without running JAX code.

    Handles literals, arithmetic on numbers, module-level names and attribute
    chains (``ExplicitX64Mode.WARN``), the environment readers JAX uses
    (``os.getenv(VAR, d)``, ``bool_env(VAR, d)``, ``int_env(VAR, d)``: the
    variable is recorded and ``d`` is the default) and ``.lower()`` on a string.
    Anything else (a call into logging, say) is unknown.
    """
    import operator

    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        known, value = _evaluate(node.operand, namespace, env_vars)
        if known and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, -value if isinstance(node.op, ast.USub) else value
        return False, None
    if isinstance(node, ast.BinOp):
        ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow}
        op = ops.get(type(node.op))
        (lk, left), (rk, right) = _evaluate(node.left, namespace, env_vars), _evaluate(node.right, namespace, env_vars)
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
        if op is None or not (lk and rk and numbers) or (op is operator.pow and abs(right) > 64):
            return False, None
        return True, op(left, right)
    if isinstance(node, ast.Name):
        return (True, namespace[node.id]) if node.id in namespace else (False, None)
    if isinstance(node, ast.Attribute):
        known, owner = _evaluate(node.value, namespace, env_vars)
        if known and isinstance(owner, (type, types.ModuleType)) and hasattr(owner, node.attr):
            return True, getattr(owner, node.attr)
        return False, None
    if isinstance(node, ast.Call):
        func = node.func
        name = _call_name(func)
        if name in _STR_METHODS and isinstance(func, ast.Attribute) and not node.args:
            known, value = _evaluate(func.value, namespace, env_vars)
            return (True, getattr(value, name)()) if known and isinstance(value, str) else (False, None)
        if name in _ENV_READERS and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            env_vars.append(node.args[0].value)
            if len(node.args) < 2:
                return name in ("getenv", "get"), None
            return _evaluate(node.args[1], namespace, env_vars)
    return False, None


def equation_frames(eqn: Any) -> tuple[tuple[str, int], ...]:
    """``(file, line)`` of every Python frame that made a jaxpr equation, innermost first; ``()`` where JAX kept none.

    ``eqn.source_info.traceback`` is JAX's own record (``source_info_util``,
    private in every release checked); its ``frames`` come from jaxlib's
    ``Traceback``. :func:`source_info_util.user_frame` picks one frame
    skipping JAX only; the linked views also skip libraries, so they need all.
    """
    traceback = getattr(getattr(eqn, "source_info", None), "traceback", None)
    try:
        return tuple((str(f.file_name), int(f.line_num)) for f in traceback.frames) if traceback is not None else ()
    except Exception:  # noqa: BLE001 - a JAX whose traceback has another shape: no locations
        return ()
