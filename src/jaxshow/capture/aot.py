"""``jaxshow.stages()``: a function's four stations ahead of time, without running it (uses JAX; never IPython)."""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

import jax
import numpy as np

from jaxshow import _jax_compat
from jaxshow.capture.calls import CallCapture, pmap_outside_jit, pmapped_jit
from jaxshow.capture.labels import (Label, LabelText, file_label, labelled_stations, labelled_summary, labelled_wrapper, unlabelled,
                                    unlabelled_text)
from jaxshow.capture.prefetch import Stations
from jaxshow.capture.stations import (
    WalkOptions,
    argument_label,
    library_jit,
    parameter_names,
    pmapped_defined_at,
    stageable,
    static_values,
    type_module,
    walk_stations,
    wrapper_station,
)
from jaxshow.capture.written import transforms, written
from jaxshow.report import SourceLocation, StagesReport
from jaxshow.timings import timings_from_events


_STAGES = (jax.stages.Traced, jax.stages.Lowered, jax.stages.Compiled)
"""What ``f.trace(x)``, ``.lower()`` and ``.compile()`` return: stages of a call, not something to walk."""


def stages(fn: Callable, /, *args: Any, **kwargs: Any) -> StagesReport:
    """Walk ``fn(*args, **kwargs)`` through trace, lower and compile without running it.

    Every keyword goes to ``fn``; choose the IR dialect or source locations
    with :func:`stages_with`. ``fn`` is normally a ``jax.jit`` wrapper; a plain
    callable is wrapped in ``jax.jit`` and the report says so. Arrays may be
    real or ``jax.ShapeDtypeStruct``. Stage timings come from
    ``jax.monitoring``: a stage JAX already had cached shows as a cache hit.

    Returns:
      A :class:`~jaxshow.report.StagesReport`.
    """
    return stages_with()(fn, *args, **kwargs)


def stages_with(*, dialect: str = "stablehlo", debug_info: bool = False, source: bool = False,
                label: Label = unlabelled, label_text: LabelText = unlabelled_text) -> Callable[..., StagesReport]:
    """:func:`stages` with options: ``stages_with(dialect="hlo")(f, x)``.

    Args:
      dialect: ``"stablehlo"`` (default) or ``"hlo"`` for the lowered module.
      debug_info: include source locations in the lowered module and the jaxpr.
      source: also show the linked views: your source lines beside the jaxpr, StableHLO and optimised HLO lines they made.
      label, label_text: the front end's names for its cells (:mod:`jaxshow.capture.labels`), where a shell runs.
    """
    options = WalkOptions(dialect=dialect, debug_info=debug_info, source=source)

    def walk(fn: Callable, /, *args: Any, **kwargs: Any) -> StagesReport:
        if isinstance(fn, _STAGES):
            raise TypeError(f"jaxshow.stages needs the function and its arguments, got a jax.stages.{type(fn).__name__} "
                            f"(a stage already taken): pass the jitted function, jaxshow.stages(f, *args)")
        target = stageable(fn)
        wrapped_by_jaxshow = target is None
        held: tuple[str, ...] = ()
        if target is None:
            if not callable(fn):
                raise TypeError(f"jaxshow.stages needs a callable, got {type(fn).__name__}")
            jitted, args, kwargs, held = _jitted(fn, args, kwargs)
            target = (jitted, (), {})
        wrapper, lead, bound = target
        args, kwargs = (*lead, *args), {**bound, **kwargs}
        pmapped = _pmap_jit_call(wrapper, args, kwargs)
        if pmapped is not None:  # walked as %%jaxstages shows a pmap call: the jit it calls, with its flat arguments
            wrapper, args, kwargs = pmapped
        with CallCapture() as capture:
            result = walk_stations(wrapper, args, kwargs, options, functools.partial(file_label, label=label))
        info = _jax_compat.jit_info(wrapper)
        name = _jax_compat.jit_info_function(info)[0] if info is not None else str(getattr(wrapper, "__name__", "?"))
        defined_at = None
        if pmapped is not None and (named := _jax_compat.pmapped_function(_jax_compat.jit_function(wrapper))):
            name, defined_at = named[0], pmapped_defined_at(_jax_compat.jit_function(wrapper))
        elif pmap_outside_jit(wrapper) and type(given := _jax_compat.pmap_function(wrapper)) is types.FunctionType:  # jax 0.7
            name, defined_at = given.__name__, SourceLocation(given.__code__.co_filename, given.__code__.co_firstlineno, given.__name__)
        elif _jax_compat.unknown_name(name) and (found := _jax_compat.unnamed_callable_source(_jax_compat.jit_function(wrapper))):
            name, defined_at = found[0], SourceLocation(found[1], found[2], found[0])
        name = written(name, transforms(_jax_compat.jit_function(wrapper)))  # grad(g), as %jaxcache and %%jaxstages name it
        notes = [_wrapped_note(fn, name)] if wrapped_by_jaxshow else []
        if held:
            notes.append(f"held out of the trace, as {_library_of(fn)} holds them static: {', '.join(held)} (no array: "
                         f"jax.jit cannot trace them)")
        kind = ("jax.pmap" if pmapped is not None or pmap_outside_jit(wrapper) else "jax.jit" if info is not None
                else type(wrapper).__name__)
        traced, lowered, compiled = labelled_stations(Stations(result.traced, result.lowered, result.compiled), options, label_text)
        return StagesReport(
            function=name,
            wrapper=labelled_wrapper(wrapper_station(info, name=name, kind=kind, static_args=static_values(info, args, kwargs),
                                                     wrapped_by_jaxshow=wrapped_by_jaxshow, defined_at=defined_at), label),
            traced=traced,
            lowered=lowered,
            compiled=compiled,
            timings=timings_from_events([e for r in capture.records for e in r.events]),
            stopped_at=result.stopped_at,
            error=labelled_summary(result.error, label_text),
            notes=tuple(notes + result.notes),
            executed=False,
            linked=result.linked,
        )

    return walk


def _pmap_jit_call(wrapper: Any, args: tuple, kwargs: dict) -> tuple[Any, tuple, dict] | None:
    """For ``jax.pmap``'s wrapper (jax >= 0.8, a jit of ``shard_map``), the jit a call with these arguments calls and its
    flat arguments, as pmap's own ``infer_params`` finds them; else ``None`` (then the wrapper itself is walked)."""
    if not pmapped_jit(wrapper):
        return None
    try:
        found = _jax_compat.pmap_jit_call(wrapper, args, kwargs)
    except Exception:  # noqa: BLE001 - arguments pmap refuses: walking the wrapper itself reports JAX's error
        return None
    return None if found is None else (found[0], tuple(found[1]), {})


_TRACEABLE = (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct, bool, int, float, complex)
"""The leaves ``jax.jit`` traces as arrays; any other leaf it refuses."""


def _jitted(fn: Callable, args: tuple, kwargs: dict) -> tuple[Any, tuple, dict, tuple[str, ...]]:
    """``jax.jit`` of a callable that is no JAX wrapper, with the arguments to walk it with, and the paths of the
    arguments' leaves held inside it (:func:`_holding_untraceable`: only for a library's jit, ``eqx.filter_jit``, which
    holds a model's functions static itself)."""
    holding = _holding_untraceable(fn, args, kwargs) if library_jit(fn) is not None else None
    if holding is None:
        return jax.jit(fn), args, kwargs, ()
    with_held, args, kwargs, held = holding
    return jax.jit(with_held), args, kwargs, held


def _holding_untraceable(fn: Callable, args: tuple, kwargs: dict) -> tuple[Callable, tuple, dict, tuple[str, ...]] | None:
    """``fn`` with the arguments' leaves ``jax.jit`` cannot trace (an ``eqx.nn.MLP``'s activation function, which
    ``eqx.filter_jit`` holds static) held inside it, the arguments with an empty node, ``()``, in their place (no
    ``None``, which the Traced station lists as an argument), and those leaves' paths (``model.activation``); ``None``
    where every leaf can be traced."""
    flat, treedef = jax.tree_util.tree_flatten_with_path((args, kwargs))
    held = [(False, leaf) if isinstance(leaf, _TRACEABLE) else (True, leaf) for _, leaf in flat]
    if not any(is_held for is_held, _ in held):
        return None

    @functools.wraps(fn)
    def with_held(*given_args: Any, **given_kwargs: Any) -> Any:
        given = iter(jax.tree_util.tree_leaves((given_args, given_kwargs)))
        full_args, full_kwargs = jax.tree_util.tree_unflatten(treedef, [leaf if is_held else next(given) for is_held, leaf in held])
        return fn(*full_args, **full_kwargs)

    with_held.__signature__ = _signature(fn)  # type: ignore[attr-defined]  # JAX names the arguments by it
    traced_args, traced_kwargs = jax.tree_util.tree_unflatten(treedef, [() if is_held else leaf for is_held, leaf in held])
    names = parameter_names(with_held.__signature__)
    paths = tuple(_argument_path(path, names) for (path, _), (is_held, _) in zip(flat, held) if is_held)
    return with_held, traced_args, traced_kwargs, paths


def _argument_path(path: tuple, names: tuple[str, ...]) -> str:
    """A leaf's path in ``(args, kwargs)`` by the parameter it is passed as (``names``: the positional ones):
    ``model.activation``, ``scale``."""
    where, key, *rest = path
    head = argument_label(names, key.idx) if where.idx == 0 else str(key.key)
    return head + jax.tree_util.keystr(tuple(rest))


def _signature(fn: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _library_of(fn: Any) -> str:
    """The top-level package of a library's callable object's class (``equinox``)."""
    return type_module(type(fn)).split(".")[0]


def _wrapped_note(fn: Any, name: str) -> str:
    """Why jaxshow jitted ``fn``: it is not jitted, or it jits inside a library (flax's ``nnx.jit``), where its own
    ``jax.jit`` is called with arguments the library makes."""
    shown = _name_for_note(fn, name)
    if library_jit(fn) is None:
        return f"{shown} is not jitted: jaxshow wrapped it in jax.jit to show what JAX would do with it"
    library = _library_of(fn)
    return (f"{shown} is jitted inside {library} (a {type(fn).__name__}): jaxshow wrapped it in jax.jit to show what JAX "
            f"does with it; {library}'s own jit is the inner jit of the jaxpr")


def _name_for_note(fn: Any, name: str) -> str:
    """What to call a callable jaxshow jitted: the report's name, else a class's own name or the object's type (read from types only)."""
    if not _jax_compat.unknown_name(name):
        return name
    return type.__dict__["__name__"].__get__(fn) if isinstance(fn, type) else type(fn).__name__
