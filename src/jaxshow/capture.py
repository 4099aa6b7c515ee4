"""Walk a jitted call through JAX's stages and record each station as plain data.

``jax.jit(f)`` -> ``Traced`` -> ``Lowered`` -> ``Compiled``. JAX caches every
step, so walking them again with the *abstract* arguments of a call that already
ran is a cache hit at each station: nothing is traced, lowered or compiled a
second time. Records hold shapes, dtypes and sharding strings, never arrays.

This module uses JAX but never IPython.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import types
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import jax
import numpy as np

from jaxshow import _jax_compat
from jaxshow.report import (
    ArgSpec,
    CompiledStation,
    CostAnalysis,
    ErrorSummary,
    LoweredStation,
    MemoryStats,
    PlacementSpec,
    SourceLocation,
    Stage,
    StagesReport,
    TracedStation,
    WrapperStation,
)
from jaxshow.timings import EventCollector, StageEvent, timings_from_events

DIALECTS = ("stablehlo", "hlo")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_jax_compat.exclude_from_source_info(_PACKAGE_DIR)


def is_stageable(fn: Any) -> bool:
    """Whether ``fn`` is a wrapper jaxshow can walk (``jax.jit`` and kin: ``.lower``)."""
    fn = bind_call(fn, (), {})[0]
    return callable(fn) and not isinstance(fn, type) and callable(getattr(fn, "lower", None))


def bind_call(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, tuple, dict]:
    """See through a bound method or ``functools.partial`` of a jitted function.

    ``obj.step(x)`` with a jitted ``step`` is the call ``step(obj, x)``: a
    bound method forwards ``.lower`` to the wrapper without ``obj``, so the
    walk must pass it explicitly.
    """
    while True:
        if isinstance(fn, types.MethodType) and callable(getattr(fn.__func__, "lower", None)):
            fn, args = fn.__func__, (fn.__self__, *args)
        elif isinstance(fn, functools.partial):
            fn, args, kwargs = fn.func, (*fn.args, *args), {**fn.keywords, **kwargs}
        else:
            return fn, args, kwargs


def _function_name(fn: Any) -> str:
    target = inspect.unwrap(fn) if hasattr(fn, "__wrapped__") else fn
    return getattr(target, "__name__", None) or type(fn).__name__


def _defined_at(fn: Any) -> SourceLocation | None:
    target = inspect.unwrap(fn) if hasattr(fn, "__wrapped__") else fn
    code = getattr(target, "__code__", None)
    if code is None:
        return None
    return SourceLocation(code.co_filename, code.co_firstlineno, getattr(target, "__qualname__", code.co_name))


def _wrapper_kind(fn: Any) -> str:
    if callable(getattr(fn, "trace", None)) and hasattr(fn, "_jit_info"):
        return "jax.jit"
    module = type(fn).__module__ or ""
    return f"{module}.{type(fn).__qualname__}".lstrip(".")


def _static_values(fn: Any, options: dict | None, args: tuple, kwargs: dict) -> tuple[tuple[str, str], ...]:
    if not options:
        return ()
    shown = [(f"arg {i}", _short_repr(args[i])) for i in options["static_argnums"] if -len(args) <= i < len(args)]
    shown += [(name, _short_repr(kwargs[name])) for name in options["static_argnames"] if name in kwargs]
    return tuple(shown)


def _short_repr(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def wrapper_station(fn: Any, args: tuple = (), kwargs: dict | None = None, *, wrapped_by_jaxshow: bool = False) -> WrapperStation:
    """Describe the jit wrapper: name, definition site, static and donated arguments."""
    options = _jax_compat.jit_options(fn)
    return WrapperStation(
        name=_function_name(fn),
        qualname=getattr(inspect.unwrap(fn) if hasattr(fn, "__wrapped__") else fn, "__qualname__", _function_name(fn)),
        kind=_wrapper_kind(fn),
        defined_at=_defined_at(fn),
        static_argnums=options["static_argnums"] if options else (),
        static_argnames=options["static_argnames"] if options else (),
        donate_argnums=options["donate_argnums"] if options else (),
        donate_argnames=options["donate_argnames"] if options else (),
        options_unavailable=None if options else f"{_wrapper_kind(fn)} does not expose its jit options",
        wrapped_by_jaxshow=wrapped_by_jaxshow,
        static_args=_static_values(fn, options, args, kwargs or {}),
    )


# --- abstract arguments ----------------------------------------------------------------------


def _abstract_leaf(leaf: Any) -> Any:
    """An array becomes a ``ShapeDtypeStruct`` that hits the same jit cache entries."""
    if isinstance(leaf, jax.Array):
        aval = getattr(leaf, "aval", None)
        sharding = leaf.sharding if getattr(leaf, "committed", False) else None
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, weak_type=bool(getattr(aval, "weak_type", False)), sharding=sharding)
    if isinstance(leaf, (np.ndarray, np.generic)):
        return jax.ShapeDtypeStruct(np.shape(leaf), leaf.dtype)
    return leaf


def abstract_arguments(fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Replace every array in a call's arguments by its abstract value; keep static ones."""
    options = _jax_compat.jit_options(fn) or {}
    static_nums = {i % len(args) for i in options.get("static_argnums", ()) if args and -len(args) <= i < len(args)}
    static_names = set(options.get("static_argnames", ()))
    new_args = tuple(a if i in static_nums else jax.tree_util.tree_map(_abstract_leaf, a) for i, a in enumerate(args))
    new_kwargs = {k: v if k in static_names else jax.tree_util.tree_map(_abstract_leaf, v) for k, v in kwargs.items()}
    return new_args, new_kwargs


# --- stations -------------------------------------------------------------------------------


def _argument_names(fn: Any, n_positional: int) -> list[str] | None:
    """Names of the dynamic positional parameters, in order, as ``args_info`` lists them."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    options = _jax_compat.jit_options(fn) or {}
    static = {i % max(n_positional, 1) for i in options.get("static_argnums", ())}
    names: list[str] = []
    for i in range(n_positional):
        if i in static:
            continue
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"args[{i}]")
    return names


def _readable_paths(fn: Any, tree: Any) -> list[tuple[str, Any]]:
    """Flatten an ``((args...), {kwargs})`` pytree into (``params['w']``-style path, leaf)."""
    flat, _ = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: x is None)
    n_positional = len(tree[0]) if isinstance(tree, tuple) and len(tree) == 2 and isinstance(tree[0], tuple) else 0
    names = _argument_names(fn, n_positional) if n_positional else None
    out = []
    for path, leaf in flat:
        out.append((_path_text(path, names), leaf))
    return out


def _path_text(path: tuple, names: list[str] | None) -> str:
    if len(path) >= 2 and isinstance(path[0], jax.tree_util.SequenceKey):
        head, second, rest = path[0].idx, path[1], path[2:]
        if head == 0 and isinstance(second, jax.tree_util.SequenceKey) and names and second.idx < len(names):
            return names[second.idx] + jax.tree_util.keystr(rest)
        if head == 1 and isinstance(second, jax.tree_util.DictKey):
            return str(second.key) + jax.tree_util.keystr(rest)
    return jax.tree_util.keystr(path) or "result"


def _sharding_text(value: Any, aval: Any) -> str | None:
    """The value's sharding, else its type-level sharding when it names a real mesh."""
    sharding = getattr(value, "sharding", None)
    if sharding is None:
        sharding = getattr(aval, "sharding", None)
        if sharding is None or getattr(getattr(sharding, "mesh", None), "empty", True):
            return None
    return str(sharding)


def _spec_from_aval(path: str, value: Any, donated: bool = False) -> ArgSpec:
    aval = getattr(value, "_aval", None) or getattr(value, "aval", None) or value
    return ArgSpec(
        path=path,
        shape=tuple(int(d) if isinstance(d, (int, np.integer)) else d for d in getattr(aval, "shape", ())),
        dtype=str(getattr(aval, "dtype", "?")),
        weak_type=bool(getattr(aval, "weak_type", False)),
        sharding=_sharding_text(value, aval),
        donated=donated,
    )


def _subjaxprs(value: Any):
    if hasattr(value, "eqns") and hasattr(value, "invars"):
        yield value
    elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
        yield value.jaxpr
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _subjaxprs(item)


def _primitive_counts(jaxpr: Any) -> Counter:
    counts: Counter = Counter()
    stack = [jaxpr]
    while stack:
        current = stack.pop()
        for eqn in current.eqns:
            counts[eqn.primitive.name] += 1
            for param in eqn.params.values():
                stack.extend(_subjaxprs(param))
    return counts


def traced_station(fn: Any, traced: Any, *, source_info: bool = False) -> TracedStation:
    """Record the ``Traced`` stage: jaxpr text, signature, effects and equation counts."""
    closed = traced.jaxpr
    inner = closed.jaxpr
    args = tuple(
        _spec_from_aval(path, info, donated=bool(getattr(info, "donated", False)))
        for path, info in _readable_paths(fn, traced.args_info)
    )
    notes: tuple[str, ...] = ()
    try:
        out_flat = jax.tree_util.tree_flatten_with_path(traced.out_info)[0]
        out_info = tuple(_spec_from_aval("result" + jax.tree_util.keystr(p), v) for p, v in out_flat)
    except Exception as exc:  # noqa: BLE001 - e.g. pmap's Traced.out_info on jax 0.7.0
        out_info = tuple(_spec_from_aval(f"result[{i}]", aval) for i, aval in enumerate(closed.out_avals))
        notes = (f"Traced.out_info failed ({type(exc).__name__}: {exc}); outputs read from the jaxpr instead",)
    counts = _primitive_counts(inner)
    return TracedStation(
        jaxpr_text=closed.pretty_print(use_color=False),
        jaxpr_source_text=closed.pretty_print(use_color=False, source_info=True) if source_info else None,
        args=args,
        out_info=out_info,
        effects=tuple(sorted(type(e).__name__ for e in closed.effects)),
        equation_count=len(inner.eqns),
        primitive_counts=tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        const_count=len(getattr(closed, "consts", ()) or ()),
        notes=notes,
    )


def normalise_cost(raw: Any, *, optimized: bool) -> CostAnalysis | None:
    """``cost_analysis()`` gives a dict (or, in old releases, a list of one dict)."""
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    if not raw:
        return None
    entries = tuple(sorted((str(k), float(v)) for k, v in dict(raw).items()))
    lookup = dict(entries)

    def known(key: str) -> float | None:
        value = lookup.get(key)
        return value if value is not None and value >= 0 else None

    return CostAnalysis(
        flops=known("flops"),
        transcendentals=known("transcendentals"),
        bytes_accessed=known("bytes accessed"),
        entries=entries,
        optimized=optimized,
    )


def _backend_name() -> str:
    try:
        return jax.default_backend()
    except Exception:  # noqa: BLE001
        return "this backend"


def lowered_station(lowered: Any, *, dialect: str = "stablehlo", debug_info: bool = False) -> LoweredStation:
    """Record the ``Lowered`` stage: module text and the pre-optimisation cost estimate."""
    text = lowered.as_text(dialect, debug_info=debug_info)
    try:
        cost = normalise_cost(lowered.cost_analysis(), optimized=False)
        reason = None if cost else f"backend '{_backend_name()}' gives no cost analysis before compilation"
    except Exception as exc:  # noqa: BLE001 - plugin backends raise here
        cost, reason = None, f"not available before compilation: {exc}"
    return LoweredStation(dialect=dialect, module_text=text, debug_info=debug_info, cost=cost, cost_unavailable=reason)


def _memory_stats(raw: Any) -> MemoryStats | None:
    if raw is None:
        return None

    def field_of(name: str) -> int | None:
        value = getattr(raw, name, None)
        return int(value) if value is not None and value >= 0 else None

    return MemoryStats(
        argument_size_bytes=field_of("argument_size_in_bytes"),
        output_size_bytes=field_of("output_size_in_bytes"),
        alias_size_bytes=field_of("alias_size_in_bytes"),
        temp_size_bytes=field_of("temp_size_in_bytes"),
        generated_code_size_bytes=field_of("generated_code_size_in_bytes"),
        host_temp_size_bytes=field_of("host_temp_size_in_bytes"),
        peak_memory_bytes=field_of("peak_memory_in_bytes"),
    )


def _placements(fn: Any, shardings: Any, formats: Any, *, inputs: bool) -> tuple[PlacementSpec, ...]:
    if inputs:
        sharding_leaves = _readable_paths(fn, shardings)
    else:
        sharding_leaves = [
            ("result" + jax.tree_util.keystr(p), s)
            for p, s in jax.tree_util.tree_flatten_with_path(shardings, is_leaf=lambda x: x is None)[0]
        ]
    format_leaves = jax.tree_util.tree_leaves(formats, is_leaf=lambda x: x is None) if formats is not None else []
    specs = []
    for i, (path, sharding) in enumerate(sharding_leaves):
        fmt = format_leaves[i] if i < len(format_leaves) else None
        layout = getattr(fmt, "layout", fmt)
        specs.append(PlacementSpec(path, None if sharding is None else str(sharding), None if layout is None else str(layout)))
    return tuple(specs)


def compiled_station(fn: Any, compiled: Any) -> CompiledStation:
    """Record the ``Compiled`` stage: optimised HLO, cost, memory, shardings and formats."""
    backend = _backend_name()
    hlo = _safe(compiled.as_text)
    cost_raw = _safe(compiled.cost_analysis)
    cost = normalise_cost(cost_raw, optimized=True)
    memory = _memory_stats(_safe(compiled.memory_analysis))
    in_formats = getattr(compiled, "input_formats", None) if hasattr(compiled, "input_formats") else getattr(compiled, "input_layouts", None)
    out_formats = getattr(compiled, "output_formats", None) if hasattr(compiled, "output_formats") else getattr(compiled, "output_layouts", None)
    try:
        inputs = _placements(fn, compiled.input_shardings, in_formats, inputs=True)
        outputs = _placements(fn, compiled.output_shardings, out_formats, inputs=False)
        placements_unavailable = None
    except Exception as exc:  # noqa: BLE001
        inputs, outputs, placements_unavailable = (), (), f"shardings unavailable: {exc}"
    return CompiledStation(
        optimized_hlo_text=hlo,
        hlo_unavailable=None if hlo else f"backend '{backend}' does not return optimised HLO text",
        cost=cost,
        cost_unavailable=None if cost else f"backend '{backend}' does not report cost analysis",
        memory=memory,
        memory_unavailable=None if memory else f"backend '{backend}' does not report memory analysis",
        inputs=inputs,
        outputs=outputs,
        placements_unavailable=placements_unavailable,
    )


def _safe(method: Callable) -> Any:
    try:
        return method()
    except Exception:  # noqa: BLE001 - "cannot answer" is recorded as None
        return None


# --- the walk -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """What to record: IR dialect, source locations."""

    dialect: str = "stablehlo"
    debug_info: bool = False

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {self.dialect!r}; choose one of {', '.join(DIALECTS)}")


@dataclass
class _WalkResult:
    traced: TracedStation | None = None
    lowered: LoweredStation | None = None
    compiled: CompiledStation | None = None
    error: ErrorSummary | None = None
    stopped_at: Stage | None = None
    notes: list[str] = field(default_factory=list)


def walk_stations(fn: Any, args: tuple, kwargs: dict, options: WalkOptions, *, until: Stage | None = None) -> _WalkResult:
    """Trace, lower and compile ``fn`` for ``args``; stop before ``until`` if given.

    Each step is recorded as soon as it succeeds, so a failure leaves the
    stations reached and the stage that failed.
    """
    result = _WalkResult()
    stage: Stage = "trace"
    try:
        if callable(getattr(fn, "trace", None)):
            if until == "trace":
                return result
            traced = fn.trace(*args, **kwargs)
            result.traced = traced_station(fn, traced, source_info=options.debug_info)
            stage = "lower"
            if until == "lower":
                return result
            lowered = traced.lower()
        else:
            result.notes.append(f"{_wrapper_kind(fn)} has no .trace(): the jaxpr station is skipped")
            stage = "lower"
            if until in ("trace", "lower"):
                return result
            lowered = fn.lower(*args, **kwargs)
        result.lowered = lowered_station(lowered, dialect=options.dialect, debug_info=options.debug_info)
        stage = "compile"
        if until == "compile":
            return result
        compiled = lowered.compile()
        result.compiled = compiled_station(fn, compiled)
    except Exception as exc:  # noqa: BLE001 - recorded; the caller decides whether to raise
        result.error = ErrorSummary.from_exception(exc, stage)
        result.stopped_at = stage
    return result


def stages(fn: Callable, *args: Any, dialect: str = "stablehlo", debug_info: bool = False, **kwargs: Any) -> StagesReport:
    """Walk ``fn(*args, **kwargs)`` through trace, lower and compile without running it.

    ``fn`` is normally a ``jax.jit`` wrapper; a plain callable is wrapped in
    ``jax.jit`` and the report says so. Arrays may be real or
    ``jax.ShapeDtypeStruct``. Stage timings come from ``jax.monitoring``: a stage
    JAX already had cached shows as a cache hit.

    Args:
      fn: the function to inspect.
      *args: its positional arguments.
      dialect: ``"stablehlo"`` (default) or ``"hlo"`` for the lowered module.
      debug_info: include source locations in the lowered module and the jaxpr.
      **kwargs: its keyword arguments.

    Returns:
      A :class:`~jaxshow.report.StagesReport`.
    """
    options = WalkOptions(dialect=dialect, debug_info=debug_info)
    fn, args, kwargs = bind_call(fn, args, kwargs)
    notes: list[str] = []
    wrapped = False
    if not is_stageable(fn):
        if not callable(fn):
            raise TypeError(f"jaxshow.stages needs a callable, got {type(fn).__name__}")
        notes.append(f"{_function_name(fn)} is not jitted: jaxshow wrapped it in jax.jit to show what JAX would do with it")
        fn, wrapped = jax.jit(fn), True
    with EventCollector() as collector:
        result = walk_stations(fn, args, kwargs, options)
    return StagesReport(
        function=_function_name(fn),
        wrapper=wrapper_station(fn, args, kwargs, wrapped_by_jaxshow=wrapped),
        traced=result.traced,
        lowered=result.lowered,
        compiled=result.compiled,
        timings=timings_from_events([e for e in collector.events if e.base_name == _function_name(fn)]),
        stopped_at=result.stopped_at,
        error=result.error,
        notes=tuple(notes + result.notes),
        executed=False,
    )


# --- calls observed in a cell -----------------------------------------------------------------


@dataclass
class RecordedCall:
    """One call of a jitted function seen while a cell ran (internal, mutable)."""

    fn: Any
    args: tuple
    kwargs: dict
    call_site: SourceLocation | None
    events: list[StageEvent] = field(default_factory=list)
    error: BaseException | None = None
    repeats: int = 1

    @property
    def name(self) -> str:
        return _function_name(self.fn)

    def signature_key(self) -> tuple:
        """Identity of the function plus the abstract signature, for de-duplication."""
        leaves, treedef = jax.tree_util.tree_flatten((self.args, self.kwargs))
        return (id(self.fn), str(treedef), tuple(_leaf_key(x) for x in leaves))


def _leaf_key(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct):
        return ("sds", leaf.shape, str(leaf.dtype), leaf.weak_type, str(leaf.sharding))
    try:
        hash(leaf)
        return leaf
    except TypeError:
        return repr(leaf)


class CallRecorder:
    """The hook a cell's calls go through: ``recorder(f)`` returns what to call.

    A stageable wrapper comes back as a recording stand-in that notes the
    call's abstract arguments *before* calling it (a donated argument is
    deleted after the call); anything else comes back unchanged.
    """

    def __init__(self, collector: EventCollector) -> None:
        self.collector = collector
        self.calls: list[RecordedCall] = []
        self.recording_errors: list[str] = []

    def __call__(self, fn: Any) -> Any:
        if not is_stageable(fn):
            return fn

        def recorded_call(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            call = self._record(*bind_call(fn, args, kwargs))
            if call is None:
                return fn(*args, **kwargs)
            start = len(self.collector.events)
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                call.error = exc
                raise
            finally:
                thread = threading.get_ident()
                call.events = [e for e in self.collector.events[start:] if e.thread_id == thread]

        return recorded_call

    def _record(self, fn: Any, args: tuple, kwargs: dict) -> RecordedCall | None:
        try:
            abstract_args, abstract_kwargs = abstract_arguments(fn, args, kwargs)
            frame = sys._getframe(2)
            site = SourceLocation(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        except Exception as exc:  # noqa: BLE001 - never disturb the user's call
            self.recording_errors.append(f"could not record a call of {_function_name(fn)}: {exc}")
            return None
        call = RecordedCall(fn, abstract_args, abstract_kwargs, site)
        self.calls.append(call)
        return call


def calls_to_show(calls: list[RecordedCall], *, show_all: bool, name: str | None) -> list[RecordedCall]:
    """Pick the calls to report: the last (default), one function by name, or all distinct ones."""
    if name is not None:
        calls = [c for c in calls if c.name == name or getattr(c.fn, "__qualname__", None) == name]
    if not calls:
        return []
    if not show_all:
        return [_with_repeats(calls[-1], calls)]
    distinct: dict[tuple, RecordedCall] = {}
    for call in calls:
        key = call.signature_key()
        if key in distinct:
            distinct[key].repeats += 1
            distinct[key].events = distinct[key].events + call.events
            if call.error is not None:
                distinct[key].error = call.error
        else:
            distinct[key] = call
    return list(distinct.values())


def _with_repeats(last: RecordedCall, calls: list[RecordedCall]) -> RecordedCall:
    key = last.signature_key()
    last.repeats = sum(1 for c in calls if c.signature_key() == key)
    return last


def failed_stage(call: RecordedCall) -> Stage:
    """The stage a failed call stopped in: the last stage JAX started for it.

    JAX emits a stage's duration event even when the stage raises, so the
    last stage seen is the one that failed; no event means it failed before or
    at tracing.
    """
    stage: Stage = "trace"
    for event in call.events:
        if event.base_name == call.name and event.stage in ("trace", "lower", "compile"):
            stage = event.stage  # type: ignore[assignment]
    return stage


def report_for_call(call: RecordedCall, options: WalkOptions) -> StagesReport:
    """Walk a recorded call's stations from JAX's caches and attach its timings.

    A call that failed is walked only up to the stage that failed (those
    stations are cached), so neither the user's Python nor the failing stage
    runs again.
    """
    until: Stage | None = failed_stage(call) if call.error is not None else None
    result = walk_stations(call.fn, call.args, call.kwargs, options, until=until)
    error = result.error
    stopped_at = result.stopped_at
    if call.error is not None:
        error, stopped_at = ErrorSummary.from_exception(call.error, until), until
    notes = list(result.notes)
    if call.repeats > 1:
        notes.append(f"called {call.repeats} times with this signature in the cell")
    own_events = [e for e in call.events if e.base_name == call.name]
    return StagesReport(
        function=call.name,
        wrapper=wrapper_station(call.fn, call.args, call.kwargs),
        traced=result.traced,
        lowered=result.lowered,
        compiled=result.compiled,
        timings=timings_from_events(own_events),
        stopped_at=stopped_at,
        error=error,
        notes=tuple(notes),
        executed=call.error is None,
        call_site=call.call_site,
    )
