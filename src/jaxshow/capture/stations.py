"""The four stations as plain data: the ``jax.jit`` wrapper, ``Traced``, ``Lowered``, ``Compiled``.

Each station is read from JAX's own objects: the jaxpr a call traced, the
``Lowered``/``Compiled`` around the computation it lowered and the executable
it compiled (see :mod:`jaxshow.capture.calls`), or, for ``jaxshow.stages()``,
the objects of an ahead-of-time walk. Records hold shapes, dtypes and sharding
strings, never arrays. An analysis JAX cannot give is "not available" with
JAX's reason. Also here: telling JAX's wrappers apart by type, never by
reading a user object's attributes.

This module uses JAX but never IPython.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import sys
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import jax
import numpy as np

from jaxshow import _jax_compat, irtext
from jaxshow.capture.arguments import structure_text
from jaxshow.capture.buffers import entry_buffers
from jaxshow.capture.carried import library_file
from jaxshow.capture.linked import FileLabel, default_file_label, linked_views, located_stablehlo
from jaxshow.capture.placement import (
    mesh_devices_text,
    mesh_summary,
    on_shared_mesh,
    placements,
    sharding_texts,
    sharding_views,
    type_level_sharding,
)
from jaxshow.capture.programs import JaxprContents, collectives, jaxpr_contents, left_out_line, loop_trip_counts, printed_part
from jaxshow.capture.sources import is_jax_file
from jaxshow.reprs import is_a, stable_repr
from jaxshow.report import (
    ArgSpec,
    LinkedViews,
    CompiledStation,
    CostAnalysis,
    ErrorSummary,
    LoweredStation,
    MemoryStats,
    SourceLocation,
    Stage,
    TracedStation,
    WrapperStation,
)

DIALECTS = ("stablehlo", "hlo")
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The jaxshow package: JAX attributes no source location to frames in it."""
_jax_compat.exclude_from_source_info(PACKAGE_DIR)


JIT_TYPE = _jax_compat.jit_wrapper_type()
COMPILED_TYPE = jax.stages.Compiled
"""What ``Lowered.compile()`` returns; calling it runs its executable through C++, where no hook is."""
PMAP_CODE = _jax_compat.pmap_wrapper_code()
"""The code of a ``jax.pmap`` wrapper where it is a plain function (jax >= 0.8: a jit of ``shard_map``), else ``None``."""


def jit_target(obj: Any) -> tuple[Any, tuple, dict] | None:
    """``(jit wrapper, leading args, keywords)`` when calling ``obj`` calls a ``jax.jit`` wrapper, else ``None``.

    Sees through ``functools.partial`` and bound methods by type only: no
    attribute of a user object is read (``jax.stages.Wrapped`` is a runtime
    protocol that would call a user's ``__getattr__``).
    """
    args: tuple = ()
    kwargs: dict = {}
    for _ in range(8):
        kind = type(obj)
        if kind is JIT_TYPE:
            return obj, args, kwargs
        if kind is functools.partial:
            args, kwargs, obj = (*obj.args, *args), {**obj.keywords, **kwargs}, obj.func
        elif kind is types.MethodType and type(obj.__func__) is JIT_TYPE:
            return obj.__func__, (obj.__self__, *args), kwargs
        else:
            return None
    return None


def library_jit(obj: Any) -> Any | None:
    """The ``jax.jit`` wrapper a library's callable object jits with (flax's ``nnx.jit`` keeps it in its
    ``JitWrapped``), else ``None``.

    Only an object of an installed library's class (not JAX's, not the user's)
    is looked into, and only its instance ``__dict__``, by the values' types.
    """
    kind = type(obj)
    if kind is JIT_TYPE or not _library_class(kind):
        return None
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except Exception:  # noqa: BLE001 - a class without __dict__, or one whose __dict__ is computed and fails
        return None
    if type(attributes) is not dict:
        return None
    return next((value for value in attributes.values() if type(value) is JIT_TYPE), None)


def library_wrapped(obj: Any) -> types.FunctionType | None:
    """The plain function a library's callable object wraps with ``functools.update_wrapper`` (flax's ``JitFn``, the
    function ``nnx.jit`` jits), read from its instance ``__dict__`` only, else ``None``."""
    kind = type(obj)
    if kind is types.FunctionType or not _library_class(kind):
        return None
    try:
        wrapped = object.__getattribute__(obj, "__dict__").get("__wrapped__")
    except Exception:  # noqa: BLE001 - a class without __dict__, or one whose __dict__ is computed and fails
        return None
    return wrapped if type(wrapped) is types.FunctionType else None


def library_wrapped_jit(fun: types.FunctionType) -> tuple[Any, Any] | None:
    """``(the library's jitting object, its jax.jit wrapper)`` a library's plain function made with ``functools.wraps``
    calls, as flax's ``nnx.cached_partial`` of an ``nnx.jit`` function does, else ``None``.

    Only a function of a library's file is looked into, and only its ``__wrapped__``.
    """
    wrapped = fun.__dict__.get("__wrapped__")
    if wrapped is None or type(wrapped) is types.FunctionType or not library_file(fun.__code__.co_filename):
        return None
    jitted = library_jit(wrapped)
    return (wrapped, jitted) if jitted is not None else None


def _library_class(kind: type) -> bool:
    """Whether ``kind`` is a class of an installed library's (not JAX's, jaxlib's or a builtin)."""
    name = type_module(kind)
    if name.startswith(("jax", "builtins")):
        return False
    module = sys.modules.get(name)
    return library_file(getattr(module, "__file__", None)) if module is not None else False


def stageable(obj: Any) -> tuple[Any, tuple, dict] | None:
    """Like :func:`jit_target`, also accepting JAX's other wrappers with ``.lower`` (``jax.pmap``)."""
    target = jit_target(obj)
    if target is not None:
        return target
    try:
        inspect.getattr_static(obj, "lower")
    except AttributeError:
        return None
    code = obj.__code__ if type(obj) is types.FunctionType else None
    from_jax = is_jax_type(type(obj)) or (
        code is not None and is_jax_file(code.co_filename)
    )
    return (obj, (), {}) if from_jax else None


_TYPE_MODULE = type.__dict__["__module__"]
"""``type``'s own ``__module__`` getter: read through it, a metaclass's ``__getattribute__`` never runs."""


def type_module(kind: type) -> str:
    """The module a type says it is from; ``""`` where a user's class set ``__module__`` to a non-string."""
    try:
        module = _TYPE_MODULE.__get__(kind)
    except Exception:  # noqa: BLE001 - never the user's cell's problem
        return ""
    return module if isinstance(module, str) else ""


JAX_MODULES = ("jax.", "jaxlib.")
"""How the names of JAX's and jaxlib's modules start."""


def is_jax_type(kind: type) -> bool:
    """Whether a type is JAX's or jaxlib's own, by the module it says it is from."""
    return type_module(kind).startswith(JAX_MODULES)


REPR_LIMIT = 200
"""Characters kept of a static argument's ``repr``."""

StaticValue = tuple[str, str, tuple[str, ...]]
"""A static argument as ``(name, repr without memory addresses, the addresses)`` (:func:`jaxshow.reprs.stable_repr`)."""


def parameter_names(signature: Any) -> tuple[str, ...]:
    """The names of a signature's positional parameters, in order; empty for ``None`` or a signature without them."""
    try:
        return tuple(p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    except Exception:  # noqa: BLE001 - no signature (a builtin, a callable object)
        return ()


def positions(argnums: Any, count: int) -> tuple[int, ...]:
    """``static_argnums``/``donate_argnums`` of a call with ``count`` positional arguments as positions, in order
    (negative ones counted from the end; ones past the call's arguments left out)."""
    return tuple(dict.fromkeys(i % count for i in argnums if -count <= i < count))


def argument_label(names: tuple[str, ...], position: int) -> str:
    """The positional argument at ``position`` by its parameter name (``n``), or ``args[3]`` past the named ones."""
    return names[position] if position < len(names) else f"args[{position}]"


def static_arguments(jit_info: Any, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """The call's static arguments as ``(parameter name, value)``, the values untouched."""
    options = _jax_compat.jit_options_of_info(jit_info)
    if not options:
        return []
    names = parameter_names(getattr(jit_info, "fun_signature", None))
    found = [(argument_label(names, position), args[position]) for position in positions(options["static_argnums"], len(args))]
    return found + [(name, kwargs[name]) for name in options["static_argnames"] if name in kwargs]


def static_values(jit_info: Any, args: tuple, kwargs: dict) -> tuple[StaticValue, ...]:
    """The call's static arguments by parameter name, with bounded ``repr`` values free of memory addresses."""
    return shown_statics(static_arguments(jit_info, args, kwargs))


def shown_statics(named_values: Iterable[tuple[str, Any]]) -> tuple[StaticValue, ...]:
    """``(name, value)`` pairs as :data:`StaticValue`: bounded ``repr`` values free of memory addresses."""
    return tuple(dict.fromkeys((name, *stable_repr(value, REPR_LIMIT)) for name, value in named_values))


def dynamic_arguments(jit_info: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments JAX flattens, positional and by keyword: every one that is not static."""
    options = _jax_compat.jit_options_of_info(jit_info) or {}
    static = set(positions(options.get("static_argnums", ()), len(args)))
    return (tuple(a for i, a in enumerate(args) if i not in static),
            {k: v for k, v in kwargs.items() if k not in options.get("static_argnames", ())})


def passed_arguments(jit_info: Any, args: tuple, kwargs: dict) -> tuple[tuple[str, str], ...]:
    """How the call passed each argument JAX flattens, by parameter name: ``by position`` or ``by keyword``, after the
    pytree structure of one that is no single leaf (``None, by position``; ``{'b': *, 'w': *}, by keyword``). JAX keys
    its traces on both, as the pytree of ``(args, kwargs)``."""
    options = _jax_compat.jit_options_of_info(jit_info) or {}
    names = parameter_names(getattr(jit_info, "fun_signature", None))
    static = set(positions(options.get("static_argnums", ()), len(args)))
    passed = [(argument_label(names, i), _passed(value, "by position")) for i, value in enumerate(args) if i not in static]
    passed += [(name, _passed(value, "by keyword")) for name, value in kwargs.items() if name not in options.get("static_argnames", ())]
    return tuple(passed)


def _passed(value: Any, how: str) -> str:
    structure = structure_text(value)
    return how if structure in (None, "*") else f"{structure}, {how}"


def placed_shardings(args_flat: Any) -> tuple[tuple[str, str | None, str | None, str] | None, ...] | None:
    """The mesh shardings (:func:`sharding_texts`, and what the mesh's text leaves out of its devices:
    :func:`mesh_devices_text`) of the flat arguments JAX made for a call (its consts, then the dynamic leaves: one per
    jaxpr input); ``None`` when no argument has one.

    What the caller placed (``jax.device_put(x, NamedSharding(...))``) is the
    truth under Auto mesh axes, where the traced types read ``P(None, ...)``.
    """
    if args_flat is None:
        return None
    shardings = tuple(_placed(leaf) for leaf in args_flat)
    return shardings if any(shardings) else None


def _placed(leaf: Any) -> tuple[str, str | None, str | None, str] | None:
    """A concrete array's (or an abstract argument's) mesh sharding; never a tracer's (under vmap, grad)."""
    if is_a(leaf, jax.core.Tracer) or not is_a(leaf, (jax.Array, jax.ShapeDtypeStruct)):
        return None
    try:
        sharding = leaf.sharding
    except Exception:  # noqa: BLE001 - a deleted (donated) array
        return None
    return (*sharding_texts(sharding), mesh_devices_text(sharding.mesh)) if hasattr(sharding, "spec") else None


def source_location(source_info: Any) -> SourceLocation | None:
    """JAX's ``"f at /path/file.py:12"`` as a location."""
    parts = _jax_compat.parse_source_info(source_info)
    return None if parts is None else SourceLocation(parts[1], parts[2], parts[0])


def defined_at_of(jaxpr: Any) -> SourceLocation | None:
    """Where the function a jaxpr was traced from is defined, from JAX's debug info."""
    return source_location(getattr(_jax_compat.jaxpr_debug_info(jaxpr), "func_src_info", None))


def pmapped_defined_at(fun: Any) -> SourceLocation | None:
    """Where the user's function under ``jax.pmap`` (jax >= 0.8: a jit of ``shard_map`` of JAX's own ``_fun``) is defined."""
    return source_location(_jax_compat.pmapped_source_info(fun))


class _Shown(str):
    """A text that reprs as itself inside a rebuilt pytree."""

    def __repr__(self) -> str:
        return str(self)


def _sharding_tree_text(tree: Any) -> str:
    """A pytree of shardings as specs (``(None, P('x'))``), their one mesh named once after it (`` on Mesh(...)``)."""
    meshes: dict[str, None] = {}

    def leaf_text(leaf: Any) -> _Shown:
        if leaf is None:
            return _Shown("None")
        whole, spec, mesh = sharding_texts(leaf)
        if mesh is not None:
            meshes[mesh] = None
        return _Shown(spec or whole)
    try:
        text = repr(jax.tree_util.tree_map(leaf_text, tree, is_leaf=lambda leaf: leaf is None))
    except Exception:  # noqa: BLE001 - a tree JAX cannot map: its repr
        return stable_repr(tree, REPR_LIMIT)[0]
    return text + (f" on {next(iter(meshes))}" if len(meshes) == 1 else "")


def given_options(jit_info: Any) -> tuple[tuple[str, str], ...]:
    """The options other than static and donated arguments that a ``jax.jit`` wrapper was given, as texts:
    ``('in_shardings', "P('data') on Mesh('data': 8, axis_types=(Auto,))")``, ``('keep_unused', 'True')``."""
    texts = []
    for keyword, value in _jax_compat.jit_set_options(jit_info):
        if keyword in ("in_shardings", "out_shardings"):
            text = _sharding_tree_text(value)
        elif keyword == "inline" and value is not True:
            text = f"jax.Inline.{value.name}"
        else:
            text = stable_repr(value, REPR_LIMIT)[0]
        texts.append((keyword, text))
    return tuple(texts)


def wrapper_station(jit_info: Any, *, name: str, qualname: str | None = None, kind: str = "jax.jit",
                    static_args: tuple[StaticValue, ...] = (), wrapped_by_jaxshow: bool = False,
                    defined_at: SourceLocation | None = None, options_unavailable: str | None = None) -> WrapperStation:
    """Describe the jit wrapper from JAX's ``PjitInfo``: definition site, static and donated arguments, the other
    options set."""
    options = _jax_compat.jit_options_of_info(jit_info)
    return WrapperStation(
        name=name,
        qualname=qualname or name,
        kind=kind,
        defined_at=defined_at or source_location(getattr(jit_info, "fun_sourceinfo", None)),
        static_argnums=options["static_argnums"] if options else (),
        static_argnames=options["static_argnames"] if options else (),
        donate_argnums=options["donate_argnums"] if options else (),
        donate_argnames=options["donate_argnames"] if options else (),
        options=given_options(jit_info) if options else (),
        options_unavailable=None if options else (options_unavailable or f"{kind} does not expose its jit options"),
        wrapped_by_jaxshow=wrapped_by_jaxshow,
        static_args=tuple((name, text) for name, text, _ in static_args),
        static_objects=tuple((name, addresses) for name, _, addresses in static_args if addresses),
    )


def qualname_of(fun: Any, default: str) -> str:
    """The ``__qualname__`` of a plain function, or of the one a bound method or ``functools.partial`` calls; anything
    else keeps ``default`` (read by type: no user attribute is read)."""
    while type(fun) in (types.MethodType, functools.partial):
        fun = fun.__func__ if type(fun) is types.MethodType else fun.func
    return fun.__qualname__ if type(fun) is types.FunctionType else default


@dataclass(frozen=True, slots=True)
class CallName:
    """``%%jaxstages --name``: calls of the function with this name or qualname, or of the function that the jit
    wrapper bound to this name wraps (``train = jax.jit(loss)``; ``scale = jax.jit(Scale(2))``)."""

    text: str
    """As given: ``g``, ``model.step``, or as a report writes it, ``grad(g)``."""
    function: Any = None
    bare: str = ""
    """The function's own name in ``text`` (``g`` in ``grad(g)``); ``text`` itself when empty."""

    @classmethod
    def of(cls, text: str, value: Any = None, bare: str = "") -> CallName:
        """``text``, with ``value`` (what the name is bound to) when it is a jit wrapper or a library's object that jits
        (read by type only)."""
        target = jit_target(value)
        wrapper = target[0] if target is not None else library_jit(value)
        return cls(text, _jax_compat.jit_function(wrapper) if wrapper is not None else None, bare)

    def matches(self, fun: Any, name: str, written: str | None = None) -> bool:
        """A bare name matches its function under any transformation; ``grad(g)`` only where the call is written so
        (``written``: ``None`` while the call is under way, before the report reads its transformations)."""
        if self.function is not None and fun is self.function:
            return True
        bare = self.bare or self.text
        if bare not in (name, qualname_of(fun, name)):
            return False
        return bare == self.text or written is None or written == self.text


# --- stations -------------------------------------------------------------------------------


def arg_names_of(jaxpr: Any) -> tuple[str, ...] | None:
    """JAX's own names of a jaxpr's flat arguments (``params['w']``, ``y``), from its debug info."""
    names = getattr(_jax_compat.jaxpr_debug_info(jaxpr), "arg_names", None)
    return tuple(str(n) for n in names) if names else None


def _padded(shapes: list, count: int) -> list:
    """``shapes`` for ``count`` leaves: ``None`` for each leaf the Traced station has no shape of."""
    return (shapes + [None] * count)[:count]


def _readable_paths(names: tuple[str, ...] | None, tree: Any) -> list[tuple[str, Any]]:
    """Flatten an ``((args...), {kwargs})`` pytree into (``params['w']``-style name, leaf).

    Names are JAX's own (``debug_info.arg_names``) where they match the leaves
    one to one; otherwise the pytree path.
    """
    if names is not None and all(names):
        leaves = _flat(tree)
        if len(names) == len(leaves):
            return list(zip(names, leaves))
    flat, _ = jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_none)
    return [(_path_text(path), leaf) for path, leaf in flat]


def _is_none(x: Any) -> bool:
    return x is None


def _path_text(path: tuple) -> str:
    if len(path) >= 2 and isinstance(path[0], jax.tree_util.SequenceKey):
        head, second, rest = path[0].idx, path[1], path[2:]
        if head == 0 and isinstance(second, jax.tree_util.SequenceKey):
            return f"args[{second.idx}]" + jax.tree_util.keystr(rest)
        if head == 1 and isinstance(second, jax.tree_util.DictKey):
            return str(second.key) + jax.tree_util.keystr(rest)
    return jax.tree_util.keystr(path) or "result"


def _sharding_fields(value: Any, aval: Any) -> dict[str, str | None]:
    """The value's sharding, else its type-level sharding where that means something (an Explicit mesh axis), as
    :class:`ArgSpec` fields."""
    sharding = getattr(value, "sharding", None) if isinstance(value, (jax.ShapeDtypeStruct, jax.Array)) else None
    if sharding is None:
        sharding = type_level_sharding(aval)
    if sharding is None:
        return {}
    whole, spec, mesh = sharding_texts(sharding)
    return {"sharding": whole, "spec": spec, "mesh": mesh}


def _spec_from_aval(path: str, value: Any, donated: bool = False) -> ArgSpec:
    aval = _jax_compat.abstract_value(value)
    return ArgSpec(
        path=path,
        shape=tuple(int(d) if isinstance(d, (int, np.integer)) else d for d in getattr(aval, "shape", ())),
        dtype=_dtype_name(getattr(aval, "dtype", "?")),
        weak_type=bool(getattr(aval, "weak_type", False)),
        donated=donated,
        ref=_jax_compat.is_ref_aval(aval),
        **_sharding_fields(value, aval),
    )


def _dtype_name(dtype: Any) -> str:
    """``str(dtype)``, once per dtype: NumPy builds the name in Python (4 us), and a model's thousands of leaves share a few dtypes."""
    try:
        return _dtype_names(dtype)
    except TypeError:  # an unhashable stand-in
        return str(dtype)


_dtype_names = functools.lru_cache(maxsize=64)(str)


def traced_station(traced: Any, *, source_info: bool = False, max_lines: int | None = None) -> TracedStation:
    """Record the ``Traced`` stage: jaxpr text, signature, effects and equation counts.

    Arguments and results are named by JAX's own names (``debug_info``) and read from a flat copy of ``traced``
    (:func:`_jax_compat.flat_traced`) where those name every leaf: no pytree class of the user's is constructed or
    flattened again for the report. Else (jax <= 0.8, names JAX left out, a ``None`` in the arguments) from the pytrees."""
    closed = traced.jaxpr
    names, flat = arg_names_of(closed), _jax_compat.flat_traced(traced)
    leaves = _flat(flat.args_info) if flat is not None and names is not None and all(names) else None
    rows = list(zip(names, leaves) if leaves is not None and len(leaves) == len(names)
                else _readable_paths(names, traced.args_info))
    args = _with_placements(tuple(_spec_from_aval(path, info, donated=bool(getattr(info, "donated", False)))
                                  for path, info in rows),
                            _jax_compat.traced_argument_shardings(traced), [info is not None for _, info in rows])
    try:
        results = getattr(_jax_compat.jaxpr_debug_info(closed), "result_paths", None)
        out = _flat(flat.out_info) if flat is not None and isinstance(results, (tuple, list)) and all(results) else None
        if out is not None and len(out) == len(results):
            out_info = tuple(_spec_from_aval(str(p), v) for p, v in zip(results, out))
        else:
            out_flat = jax.tree_util.tree_flatten_with_path(traced.out_info)[0]
            out_info = tuple(_spec_from_aval("result" + jax.tree_util.keystr(p), v) for p, v in out_flat)
        notes: tuple[str, ...] = ()
    except Exception as exc:  # noqa: BLE001 - e.g. pmap's Traced.out_info on jax 0.7.0
        out_info = _outputs_of(closed)
        notes = (f"Traced.out_info failed ({type(exc).__name__}: {exc}); outputs read from the jaxpr instead",)
    return _jaxpr_station(closed, args, out_info, source_info=source_info, notes=notes, max_lines=max_lines)


def _with_placements(args: tuple[ArgSpec, ...], shardings: tuple[Any, ...] | None, inputs: list[bool]) -> tuple[ArgSpec, ...]:
    """``args`` with the mesh sharding each was placed with (one sharding per jaxpr input: the arguments whose
    ``inputs`` entry is true, not a ``None`` in the pytrees), as the hooks' Traced station shows them: under Auto mesh
    axes the traced types read ``P(None, ...)`` wherever the caller placed them."""
    if shardings is None or len(shardings) != sum(inputs):
        return args
    placed = iter(shardings)
    each = [next(placed) if is_input else None for is_input in inputs]
    return tuple(dataclasses.replace(spec, **dict(zip(("sharding", "spec", "mesh"), sharding_texts(sharding))))
                 if hasattr(sharding, "spec") else spec for spec, sharding in zip(args, each))


def traced_station_from_jaxpr(closed: Any, donated: tuple[bool, ...], *, source_info: bool = False,
                              shardings: tuple[tuple[str, str | None, str | None, str] | None, ...] | None = None,
                              max_lines: int | None = None) -> TracedStation:
    """The ``Traced`` station of the jaxpr a call traced, from its flat avals and JAX's own names.

    ``shardings`` are the call's placed argument shardings (:func:`placed_shardings`).
    Nothing is unflattened: a user pytree class is never constructed for the report.
    """
    names = arg_names_of(closed)
    avals = list(closed.in_avals)
    if names is None or len(names) != len(avals):
        names = tuple(f"args[{i}]" for i in range(len(avals)))
    if shardings is None or len(shardings) != len(avals):
        shardings = (None,) * len(avals)
    args = tuple(
        dataclasses.replace(spec, sharding=placed[0], spec=placed[1], mesh=placed[2]) if placed is not None else spec
        for spec, placed in zip(
            (_spec_from_aval(n, a, donated=bool(donated[i]) if i < len(donated) else False) for i, (n, a) in enumerate(zip(names, avals))),
            shardings))
    return _jaxpr_station(closed, args, _outputs_of(closed), source_info=source_info, max_lines=max_lines)


def _outputs_of(closed: Any) -> tuple[ArgSpec, ...]:
    avals = list(closed.out_avals)
    paths = getattr(_jax_compat.jaxpr_debug_info(closed), "result_paths", None)
    if not isinstance(paths, (tuple, list)) or len(paths) != len(avals):
        paths = [f"result[{i}]" for i in range(len(avals))]
    return tuple(_spec_from_aval(str(p), aval) for p, aval in zip(paths, avals))


def _effect_names(closed: Any, args: tuple[ArgSpec, ...]) -> tuple[str, ...]:
    """The jaxpr's effects by type, each on an input named with it: ``DebugEffect``, ``WriteEffect (r1)``,
    ``ReadEffect (a closed-over ref)``; sorted, each once."""
    names = set()
    for effect in closed.effects:
        on = _jax_compat.effect_input(effect, closed)
        where = ("a closed-over ref" if on == "const" else args[on].path if isinstance(on, int) and on < len(args)
                 else None)
        names.add(f"{type(effect).__name__} ({where})" if where else type(effect).__name__)
    return tuple(sorted(names))


def _jaxpr_text(printed: Any, left_out: int, **options: Any) -> str:
    """``printed``'s text; a shortened one ends with a line counting what it leaves out, not the variables passed on."""
    text = printed.pretty_print(use_color=False, **options)
    if not left_out:
        return text
    tail = text.rfind("\n  in (")
    return (text[:tail] if tail >= 0 else text) + "\n" + left_out_line(left_out)


def _jaxpr_station(closed: Any, args: tuple[ArgSpec, ...], out_info: tuple[ArgSpec, ...], *, source_info: bool,
                   notes: tuple[str, ...] = (), max_lines: int | None = None) -> TracedStation:
    inner = closed.jaxpr
    contents = jaxpr_contents(inner)
    counts = contents.primitive_counts
    printed, left_out = printed_part(closed, max_lines, contents.equation_weights)
    if left_out:
        notes = (*notes, f"jaxpr printed as far as the report shows it: {len(inner.eqns) - left_out:,} of "
                         f"{len(inner.eqns):,} top-level equations (jaxshow.stages() and %%jaxstages --save keep all of it)")
    return TracedStation(
        jaxpr_text=_jaxpr_text(printed, left_out),
        jaxpr_source_text=_jaxpr_text(printed, left_out, source_info=True) if source_info else None,
        args=args,
        out_info=out_info,
        effects=_effect_names(closed, args),
        equation_count=len(inner.eqns),
        primitive_counts=tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        const_count=len(getattr(closed, "consts", ()) or ()),
        ref_count=_jax_compat.closed_over_refs(closed),
        notes=notes,
        loops=contents.loops,
        dot_flops_estimate=contents.dot_flops if contents.loops else None,
        flops_by_scope=_flops_by_scope(contents),
    )


def _flops_by_scope(contents: JaxprContents) -> tuple[tuple[str, float], ...]:
    """The FLOPs by named scope, costliest first (outside any scope last of equals), where two scopes or more hold 1%
    of them each: JAX's ``jnp.einsum`` names a scope by its subscripts, which alone is no split worth a table."""
    scopes = contents.flops_by_scope
    if sum(1 for flops in scopes.values() if flops >= contents.dot_flops / 100) < 2:
        return ()
    return tuple(sorted(scopes.items(), key=lambda kv: (-kv[1], kv[0] == "", kv[0])))


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


def _missing_cost(raw: Any, otherwise: str) -> str:
    """Why ``cost_analysis()``'s answer ``raw`` gave no record: it was empty (XLA gives none for a program without
    operations, ``jax.jit(lambda x: None)``, where the backend costs every other), else ``otherwise``."""
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    return "empty: XLA gave no figure for this program" if raw is not None and not raw else otherwise


def backend_name() -> str:
    """The default backend's platform, for the reasons an analysis is unavailable."""
    try:
        return jax.default_backend()
    except Exception:  # noqa: BLE001
        return "this backend"


def lowered_station(lowered: Any, *, dialect: str = "stablehlo", debug_info: bool = False,
                    cost_max_chars: int | None = None, backend: str | None = None) -> LoweredStation:
    """Record the ``Lowered`` stage: module text and the pre-optimisation cost estimate.

    ``Lowered.cost_analysis`` converts the module to HLO first (about a second
    per MB of text); above ``cost_max_chars``, or for a module with symbolic
    dimensions, it is not computed and the station says why.
    """
    text = lowered.as_text(dialect, debug_info=debug_info)
    cost, reason = None, _cost_not_asked(lowered, text, cost_max_chars)
    if reason is None:
        cost, reason = _pre_optimisation_cost(lowered, text, backend or backend_name())
    return LoweredStation(dialect=dialect, module_text=text, debug_info=debug_info, cost=cost, cost_unavailable=reason)


def _cost_not_asked(lowered: Any, text: str, cost_max_chars: int | None) -> str | None:
    """Why XLA is not asked for a module's pre-optimisation cost (symbolic dimensions; a module over
    ``cost_max_chars``), else ``None``."""
    symbolic = _jax_compat.symbolic_dimensions(lowered)
    if symbolic:
        return (f"not computed for a module with symbolic dimensions ({', '.join(symbolic)}: jax.export's shape "
                "polymorphism): XLA's cost analysis needs every dimension known (jaxlib 0.12 ends the process on it)")
    if cost_max_chars is not None and len(text) > cost_max_chars:
        return (f"not computed for a module of {len(text):,} characters (over {cost_max_chars:,}): it needs a "
                "StableHLO-to-HLO conversion; the compiled cost is XLA's after optimisation, and "
                "jaxshow.stages() computes this one")
    return None


def _pre_optimisation_cost(lowered: Any, text: str, backend: str) -> tuple[CostAnalysis | None, str | None]:
    """``Lowered.cost_analysis`` as a record, or why there is none; kept for the last :data:`COSTS_KEPT` modules.

    Its StableHLO-to-HLO conversion costs about 2 ms even for a one-line module, so a cell
    calling a function JAX has cached would pay it again each run; the same module text
    on the same backend has the same estimate.
    """
    key = (text, backend)
    with _COSTS_LOCK:
        known = _COSTS.get(key)
        if known is not None:
            _COSTS.move_to_end(key)
            return known
    try:
        raw = lowered.cost_analysis()
        cost = normalise_cost(raw, optimized=False)
        known = (cost, None if cost else _missing_cost(raw, f"backend '{backend}' gives no cost analysis before compilation"))
    except Exception as exc:  # noqa: BLE001 - plugin backends raise here
        known = (None, f"not available before compilation: {exc}")
    if len(text) <= COSTS_KEPT_CHARS:
        with _COSTS_LOCK:
            _COSTS[key] = known
            while len(_COSTS) > COSTS_KEPT:
                _COSTS.popitem(last=False)
    return known


COSTS_KEPT = 64
"""Modules whose pre-optimisation cost is kept (each at most :data:`COSTS_KEPT_CHARS` characters of text)."""
COSTS_KEPT_CHARS = 50_000
_COSTS: OrderedDict[tuple[str, str], tuple[CostAnalysis | None, str | None]] = OrderedDict()
_COSTS_LOCK = threading.Lock()

BESIDE_FROM_EQUATIONS = 1_000
"""Equations (nested ones counted) from which XLA's memory analysis of a program is read on a thread of its own."""


def _memory_stats(raw: Any, backend: str) -> MemoryStats | None:
    """``memory_analysis()``'s object as a record; a peak of 0 beside non-empty buffers counts as not reported."""
    if raw is None:
        return None

    def field_of(name: str) -> int | None:
        value = getattr(raw, name, None)
        return int(value) if value is not None and value >= 0 else None

    peak = field_of("peak_memory_in_bytes")
    if peak == 0 and (field_of("argument_size_in_bytes") or field_of("output_size_in_bytes")):
        peak = None
    return MemoryStats(
        argument_size_bytes=field_of("argument_size_in_bytes"),
        output_size_bytes=field_of("output_size_in_bytes"),
        alias_size_bytes=field_of("alias_size_in_bytes"),
        temp_size_bytes=field_of("temp_size_in_bytes"),
        generated_code_size_bytes=field_of("generated_code_size_in_bytes"),
        host_temp_size_bytes=field_of("host_temp_size_in_bytes"),
        peak_memory_bytes=peak,
        peak_unavailable=None if peak is not None else (
            f"jax {jax.__version__} on backend '{backend}' does not report peak_memory_in_bytes"),
    )


def _flat_program(compiled: Any) -> Any:
    """``compiled`` whose shardings and formats are read as flat lists: no flatten or unflatten of a pytree class of the
    user's runs (the arguments are named from the Traced station); ``compiled`` itself where its types cannot be read."""
    try:
        return _jax_compat.flat_compiled(compiled)
    except Exception:  # noqa: BLE001 - a program whose executable gives no types: read as it is
        return compiled


def _flat(tree: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(tree, is_leaf=_is_none) if tree is not None else []


def _output_names(shardings: Any) -> list[str]:
    return ["result" + jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(shardings, is_leaf=_is_none)[0]]


def _analysis(read: Callable[[], Any]) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, why)`` when JAX cannot answer: never a failed stage."""
    try:
        value = read()
    except Exception as exc:  # noqa: BLE001 - an analysis that raises is unavailable, the stage still succeeded
        return None, f"not available: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}".rstrip(": ")
    return value, None


def _memory_read(compiled: Any, traced: TracedStation | None) -> Callable[[], tuple[Any, str | None]]:
    """``_analysis(compiled.memory_analysis)``, read on a thread of its own (:func:`_beside`) for a program of at least
    :data:`BESIDE_FROM_EQUATIONS` equations or of unknown size; a smaller one's is read now, which costs less than a
    thread (0.1 ms for 200 equations, against 0.1-1 ms to start and join one)."""
    if traced is not None and sum(n for _, n in traced.primitive_counts) < BESIDE_FROM_EQUATIONS:
        answer = _analysis(compiled.memory_analysis)
        return lambda: answer
    return _beside(compiled.memory_analysis)


def _beside(read: Callable[[], Any]) -> Callable[[], tuple[Any, str | None]]:
    """Start ``_analysis(read)`` on a thread of its own; returns the function that waits for its answer.

    For ``Compiled.memory_analysis``: C++ that releases the GIL (75 ms for a
    program of 6,000 arrays), so it runs while the caller reads the rest.
    """
    answer: list[tuple[Any, str | None]] = []
    thread = threading.Thread(target=lambda: answer.append(_analysis(read)), name="jaxshow-analysis", daemon=True)
    thread.start()

    def wait() -> tuple[Any, str | None]:
        thread.join()
        return answer[0] if answer else (None, "not available: the analysis thread stopped")
    return wait


def _program_leaves(compiled: Any, traced: TracedStation | None) -> tuple[list, list, list | None, list, list, list | None]:
    """``(names, shardings, formats)`` of the compiled program's inputs, then of its outputs, flat.

    A program that reads or writes ``jax.new_ref`` arrays has more inputs and
    outputs than the function's pytrees, and JAX's pytree-shaped properties
    raise: its flat lists are read instead, the extra leaves named by
    :func:`_ref_leaf_names`.
    """
    try:
        in_shardings, out_shardings = compiled.input_shardings, compiled.output_shardings
    except ValueError:
        flat = _jax_compat.program_placements(compiled)
        names = _ref_leaf_names(traced, len(flat.inputs), len(flat.outputs)) if flat is not None and traced is not None else None
        if names is None:
            raise
        return names[0], flat.inputs, flat.input_layouts, names[1], flat.outputs, flat.output_layouts
    in_formats, _ = _analysis(lambda: compiled.input_formats)
    out_formats, _ = _analysis(lambda: compiled.output_formats)
    arg_names = tuple(a.path for a in traced.args) if traced is not None else None
    in_pairs = _readable_paths(arg_names, in_shardings)
    out_flat = _flat(out_shardings)
    if traced is not None and len(traced.out_info) == len(out_flat):
        out_names = [o.path for o in traced.out_info]
    else:
        out_names = _output_names(out_shardings)
    return ([path for path, _ in in_pairs], [sharding for _, sharding in in_pairs], _flat(in_formats) if in_formats is not None else None,
            out_names, out_flat, _flat(out_formats) if out_formats is not None else None)


def _ref_leaf_names(traced: TracedStation, inputs: int, outputs: int) -> tuple[list[str], list[str]] | None:
    """Names for a program's ``inputs`` and ``outputs`` where they outnumber the function's own leaves: the refs it
    closes over (``closed-over ref 1``) come after its arguments, and each ref written back (``r (written back)``,
    the arguments' first) after its results; ``None`` where the counts do not add up so."""
    closed = [f"closed-over ref {i + 1}" for i in range(inputs - len(traced.args))]
    written = [a.path for a in traced.args if a.ref] + closed
    if inputs < len(traced.args) or outputs - len(traced.out_info) != len(written):
        return None
    return [a.path for a in traced.args] + closed, [o.path for o in traced.out_info] + [f"{name} (written back)" for name in written]


def compiled_station(compiled: Any, traced: TracedStation | None = None, *, backend: str | None = None) -> CompiledStation:
    """Record the ``Compiled`` stage: optimised HLO, cost, memory and its largest buffers, shardings and formats,
    collectives, loop trip counts.

    The Traced station of the same call names the inputs and outputs and
    gives their shapes, so each distinct sharding is drawn as a device grid. Each analysis is read on
    its own: one that raises (``Compiled.input_formats`` with a
    ``jax.new_ref`` closure, ``cost_analysis`` on some plugins) is "not
    available" with JAX's reason, and the others are still shown.
    """
    backend = backend or backend_name()
    memory_read = _memory_read(compiled, traced)
    hlo, hlo_why = _analysis(compiled.as_text)
    cost_raw, cost_why = _analysis(compiled.cost_analysis)
    cost = normalise_cost(cost_raw, optimized=True)
    buffers, buffer_count = entry_buffers(hlo) if hlo else ((), 0)
    placed: dict[str, Any] = {}
    try:
        in_names, in_flat, in_layouts, out_names, out_flat, out_layouts = _program_leaves(compiled, traced)
        in_shapes = _padded([a.shape for a in traced.args] if traced is not None else [], len(in_flat))
        out_shapes = _padded([o.shape for o in traced.out_info] if traced is not None else [], len(out_flat))
        shown = on_shared_mesh([*in_flat, *out_flat], [*in_shapes, *out_shapes])
        in_flat, out_flat = shown[:len(in_flat)], shown[len(in_flat):]
        views, more_views = sharding_views([*zip(in_names, in_flat, in_shapes), *zip(out_names, out_flat, out_shapes)])
        mesh, device_count = mesh_summary([*in_flat, *out_flat])
        placed = dict(
            inputs=placements(in_names, in_flat, in_layouts),
            outputs=placements(out_names, out_flat, out_layouts),
            mesh=mesh, device_count=device_count, sharding_views=views, more_sharding_views=more_views)
    except Exception as exc:  # noqa: BLE001
        placed = dict(inputs=(), outputs=(), placements_unavailable=f"shardings unavailable: {type(exc).__name__}: {exc}")
    memory_raw, memory_why = memory_read()
    memory = _memory_stats(memory_raw, backend)
    return CompiledStation(
        optimized_hlo_text=hlo,
        hlo_unavailable=None if hlo else (hlo_why or f"backend '{backend}' does not return optimised HLO text"),
        cost=cost,
        cost_unavailable=None if cost else (cost_why or _missing_cost(cost_raw, f"backend '{backend}' does not report cost analysis")),
        memory=memory,
        memory_unavailable=None if memory else (memory_why or f"backend '{backend}' does not report memory analysis"),
        collectives=collectives(hlo),
        loop_trip_counts=loop_trip_counts(hlo),
        buffers=buffers,
        buffer_count=buffer_count,
        **placed,
    )


# --- the walk -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """What to record: IR dialect, source locations, the largest module whose pre-optimisation cost is computed,
    and about how many lines of the jaxpr to print (``None``: all of it)."""

    dialect: str = "stablehlo"
    debug_info: bool = False
    lowered_cost_max_chars: int | None = None
    jaxpr_max_lines: int | None = None
    source: bool = False
    """Also build the linked source and IR views (:mod:`jaxshow.capture.linked`)."""

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {self.dialect!r}; choose one of {', '.join(DIALECTS)}")
        for name in ("debug_info", "source"):
            if type(getattr(self, name)) is not bool:  # else JAX's printer raises inside the walk, read as the call's failure
                raise TypeError(f"{name} must be True or False, got {type(getattr(self, name)).__name__}")


@dataclass
class _WalkResult:
    traced: TracedStation | None = None
    lowered: LoweredStation | None = None
    compiled: CompiledStation | None = None
    error: ErrorSummary | None = None
    stopped_at: Stage | None = None
    notes: list[str] = field(default_factory=list)
    linked: LinkedViews | None = None


def with_unused_donations(traced: TracedStation | None, lowered: LoweredStation | None, kept: tuple[int, ...] | None
                          ) -> tuple[TracedStation | None, str | None]:
    """The Traced station with each donated argument whose buffer the lowered program reuses for no output marked
    (``ArgSpec.donation_unused``), and the note that says so; ``kept``: which arguments the program kept
    (:func:`_jax_compat.kept_inputs`). Unchanged, and no note, where that is not known."""
    if traced is None or lowered is None or not any(a.donated for a in traced.args):
        return traced, None
    found = irtext.donors(lowered.module_text, lowered.dialect)
    if found is None:
        return traced, None
    count, donors = found
    kept = kept if kept is not None and len(kept) == count else tuple(range(count)) if count == len(traced.args) else None
    if kept is None:
        return traced, None
    position = {arg: at for at, arg in enumerate(kept)}
    unused = {i for i, a in enumerate(traced.args) if a.donated and i in position and position[i] not in donors}
    if not unused:
        return traced, None
    args = tuple(dataclasses.replace(a, donation_unused=True) if i in unused else a for i, a in enumerate(traced.args))
    names = ", ".join(f"{a.path} ({a.type_str})" for i, a in enumerate(traced.args) if i in unused)
    return dataclasses.replace(traced, args=args), (
        f"donation not used for {names}: JAX found no output left of the same shape, dtype and placement to take "
        f"{'its buffer' if len(unused) == 1 else 'their buffers'}, so the program does not reuse "
        f"{'it' if len(unused) == 1 else 'them'} (JAX warned: 'Some donated buffers were not usable')")


def walk_stations(fn: Any, args: tuple, kwargs: dict, options: WalkOptions,
                  file_label: FileLabel = default_file_label) -> _WalkResult:
    """Trace, lower and compile the JAX wrapper ``fn`` for ``args``, ahead of time.

    Each step is recorded as soon as it succeeds, so a failure leaves the
    stations reached and the stage that failed. ``file_label`` names a file in the linked views (``In[4]``).
    """
    result = _WalkResult()
    stage: Stage = "trace"
    try:
        trace = getattr(fn, "trace", None)  # fn is JAX's own wrapper (stageable() checked): no user attribute
        if callable(trace):
            traced = trace(*args, **kwargs)
            result.traced = traced_station(traced, source_info=options.debug_info, max_lines=options.jaxpr_max_lines)
            stage = "lower"
            lowered = traced.lower()
        else:
            result.notes.append(f"{type(fn).__name__} has no .trace(): the jaxpr station is skipped")
            stage = "lower"
            lowered = fn.lower(*args, **kwargs)
        result.lowered = lowered_station(lowered, dialect=options.dialect, debug_info=options.debug_info,
                                         cost_max_chars=options.lowered_cost_max_chars)
        result.traced, unused = with_unused_donations(result.traced, result.lowered, _jax_compat.kept_inputs(lowered))
        if unused:
            result.notes.append(unused)
        stage = "compile"
        compiled = lowered.compile()
        result.compiled = compiled_station(_flat_program(compiled), result.traced)
    except Exception as exc:  # noqa: BLE001 - recorded; the caller decides whether to raise
        if stage == "trace" and _jax_compat.dispatch_refusal(exc):  # the arguments, refused before a trace began
            stage = "call"
            result.notes.append("JAX refused the arguments before tracing: nothing was traced, lowered or compiled")
        result.error = ErrorSummary.from_exception(exc, stage)
        result.stopped_at = stage
    if options.source:
        result.linked = linked_views(traced.jaxpr if result.traced else None,
                                     located_stablehlo(lowered, result.lowered) if result.lowered else None,
                                     result.compiled.optimized_hlo_text if result.compiled else None,
                                     file_label, options.jaxpr_max_lines)
    return result
