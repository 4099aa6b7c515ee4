"""The user's parameter names for the leaves ``eqx.filter_jit`` passes to its own jitted function.

equinox (``equinox/_jit.py``) binds a call to the user's function's signature,
splits the first argument from the rest, ``(rest_args + (None,), kwargs)``,
and passes their array leaves to its ``fun_wrapped``, which JAX names
``dynamic_nodonate['first'][k]`` and ``dynamic_nodonate['rest'][k]``
(``dynamic_donate`` where donated): ``k`` counts that part's leaves as
``jax.tree.leaves`` does. Its one static argument, ``(static_fun, static_first,
static_rest)``, holds each part's non-array leaves and treedef. Where
``static_fun`` is the user's function itself, each leaf is named by the user's
parameter and its path in that argument, as ``jax.tree_util.keystr`` writes it:
``v``, ``model.layers[0].weight``, ``opt_state[0].mu['w']``. Treedefs are
read (``children``, ``node_data``), never unflattened; anything else leaves
equinox's names. No IPython.
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import re
import sys
import types
from typing import Any, Iterable

from jax.tree_util import PyTreeDef

from jaxshow import _jax_compat
from jaxshow.reprs import differ, safe_repr

_LEAF = re.compile(r"^dynamic_(?:no)?donate\['(first|rest)'\]\[(\d+)\]$")


def user_names(names: Iterable[str], key: Any, name: str) -> dict[str, str]:
    """``{equinox's leaf name: the user's}`` for a trace of the function ``name`` with tracing-cache key ``key``;
    empty unless every one of ``names`` is an equinox leaf that can be named so."""
    return named_leaves(names, leaf_labels(_jax_compat.static_arg_values(key)), name)


LeafLabels = tuple[str, dict[str, dict[int, str]]]
"""The name of the user's function ``eqx.filter_jit`` jits, and the labels of its ``first`` and ``rest`` leaves by index."""


def leaf_labels(statics: tuple[Any, ...]) -> LeafLabels | None:
    """:data:`LeafLabels` from the static argument values of a call of equinox's jitted function, ``None`` where they
    are not equinox's. Never raises."""
    try:
        return _leaf_labels(statics)
    except Exception:  # noqa: BLE001 - another shape than equinox's: its names stand
        return None


def named_leaves(names: Iterable[str], labels: LeafLabels | None, name: str) -> dict[str, str]:
    """``{equinox's leaf name: the user's}`` for the leaves ``names`` of a call of the function ``name``; empty unless
    ``labels`` are that function's and every one of ``names`` is an equinox leaf that can be named so."""
    names = tuple(names)
    matches = [_LEAF.match(n) for n in names]
    if labels is None or labels[0] != name or not names or not all(matches):
        return {}
    found = {n: labels[1][m.group(1)].get(int(m.group(2))) for n, m in zip(names, matches) if m}
    return found if all(found.values()) else {}  # type: ignore[return-value]


EQUINOX_STATIC = "static"
"""The parameter of equinox's jitted function that holds the non-array leaves of the user's function and arguments."""


def static_leaf_changes(key: Any, old: Any, name: str) -> tuple[tuple[str, Any, Any], ...]:
    """``(the user's label, now, before)`` for each non-array leaf of the user's arguments that differs between two
    tracing-cache keys of ``eqx.filter_jit``'s jitted function for ``name`` (``scale``: ``3.0``, ``2.0``), the values
    untouched: equinox passes them in its one static value, which JAX compares whole; a side is :data:`TRACED` where the
    leaf was an array, :data:`NOT_PASSED` where its argument was not passed. Empty where the keys are not both
    equinox's for the same function, a pytree argument's structure changed, or no such leaf differs."""
    try:
        return _static_leaf_changes(*map(_jax_compat.static_arg_values, (key, old)), name)
    except Exception:  # noqa: BLE001 - another shape than equinox's: JAX's words on its static value stand
        return ()


def static_leaves(statics: tuple[Any, ...]) -> tuple[tuple[str, Any], ...] | None:
    """``(the user's label, value)`` of each non-array leaf of the user's arguments in the static argument values
    ``statics`` of a call of equinox's jitted function (``model.activation``, ``scale``), the values untouched, in
    argument order; ``None`` where the statics are not equinox's. Never raises."""
    try:
        labels = leaf_labels(statics)
        if labels is None:
            return None
        (_, *parts), = statics
        return tuple((label, leaf) for label, leaf in _by_label(parts, labels).items() if leaf is not TRACED)
    except Exception:  # noqa: BLE001 - another shape than equinox's: its static value stands
        return None


class Side(str):
    """A side of a static leaf's change that is no value of the user's (told apart from one by identity)."""


TRACED = Side("traced")
"""The leaf was an array: equinox traced it (its type is the signature's)."""
NOT_PASSED = Side("not passed")
"""Its argument was not passed (its default taken)."""
_ARGUMENT = re.compile(r"^[A-Za-z_]\w*$")


def _static_leaf_changes(statics: tuple[Any, ...], old_statics: tuple[Any, ...], name: str) -> tuple[tuple[str, Any, Any], ...]:
    labels, old_labels = leaf_labels(statics), leaf_labels(old_statics)
    if labels is None or old_labels is None or labels[0] != name:
        return ()
    (fun, *parts), = statics
    (old_fun, *old_parts), = old_statics
    if fun[0][0] is not old_fun[0][0]:
        return ()  # another function: JAX's words say how
    now, before = _by_label(parts, labels), _by_label(old_parts, old_labels)
    if any(not _ARGUMENT.match(label) for label in now.keys() ^ before.keys()):
        return ()  # a pytree argument of another structure: JAX's words say how
    changed = []
    for label in [*now, *(label for label in before if label not in now)]:
        sides = now.get(label, NOT_PASSED), before.get(label, NOT_PASSED)
        if label not in now or label not in before or (sides[0] is TRACED) != (sides[1] is TRACED):
            changed.append((label, *sides))
        elif sides[0] is not TRACED and sides[0] is not sides[1] and differ(*sides):
            changed.append((label, *sides))
    return tuple(changed)


def _by_label(parts: list[tuple[tuple, Any]], labels: LeafLabels) -> dict[str, Any]:
    """Each leaf of the user's arguments by its label: its value where equinox holds it static, else :data:`TRACED`."""
    return {labels[1][part][i]: TRACED if leaf is None else leaf
            for part, (leaves, _) in zip(("first", "rest"), parts) for i, leaf in enumerate(leaves)}


EQUINOX_MARKER = "(equinox's own marker)"
"""What ``result[0]`` of equinox's jitted function is: an ``i32[]`` it returns before the user's result."""


def output_names(names: Iterable[str]) -> dict[str, str]:
    """``{JAX's name of an output: the user's}`` for equinox's jitted function, which returns ``(marker, the array
    leaves of the user's result, Static(the rest))``: ``result[1][0]`` is the user's ``result[0]``, ``result[0]``
    equinox's marker. Empty where the outputs are not shaped so."""
    names = tuple(names)
    if not names or names[0] != "result[0]" or not all(n.startswith("result[1]") for n in names[1:]):
        return {}
    return {"result[0]": EQUINOX_MARKER, **{n: "result" + n[len("result[1]"):] for n in names[1:]}}


def _leaf_labels(statics: tuple[Any, ...]) -> LeafLabels | None:
    """:data:`LeafLabels`, or ``None`` where the static part is not equinox's: tuples as equinox makes them (a static
    value of the user's is never unpacked nor read, which would run its ``__iter__`` or ``__getattr__``)."""
    if not (_tuple_of(statics, 1) and _tuple_of(statics[0], 3) and all(_tuple_of(part, 2) and type(part[1]) is PyTreeDef for part in statics[0])):
        return None
    ((fun_leaves, fun_def), (_, first_def), (_, rest_def)), = statics
    if (type(fun_leaves) is not tuple or len(fun_leaves) != 1 or type(fun_leaves[0]) is not types.FunctionType
            or fun_def.num_nodes != 1 or rest_def.node_data() != (tuple, None)):
        return None
    parameters = list(inspect.signature(fun_leaves[0]).parameters.values())
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_positional = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None)
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    has_var_keyword = any(p.kind == p.VAR_KEYWORD for p in parameters)
    args_def, kwargs_def = rest_def.children()
    rest = args_def.children()
    if args_def.node_data() != (tuple, None) or kwargs_def.node_data()[0] is not dict:
        return None
    if rest and rest[-1].node_data() != (type(None), None):  # equinox's dummy last argument
        return None
    arguments = [first_def, *rest[:-1]] if rest else []  # no rest: the first is the dummy, no argument was passed by position
    if len(arguments) > len(positional) and var_positional is None:
        return None
    labels = [positional[i] if i < len(positional) else f"{var_positional}[{i - len(positional)}]" for i in range(len(arguments))]
    keywords = kwargs_def.node_data()[1]
    if any(k not in named and not has_var_keyword for k in keywords):
        return None
    return fun_leaves[0].__name__, {"first": _numbered(zip(labels[:1], arguments[:1])),
                                    "rest": _numbered([*zip(labels[1:], arguments[1:]), *zip(map(str, keywords), kwargs_def.children())])}


def _tuple_of(value: Any, length: int) -> bool:
    return type(value) is tuple and len(value) == length


def _numbered(arguments: Iterable[tuple[str, Any]]) -> dict[int, str]:
    """Each leaf's label by its index among all the arguments' leaves: ``v``, ``model.layers[0].weight``."""
    found: dict[int, str] = {}
    for label, treedef in arguments:
        start = len(found)
        found.update((start + j, label + path) for j, path in enumerate(_leaf_paths(treedef)))
    return found


KEY_CHARS = 80
"""Characters of a dict key's text in a leaf's path, at most."""


def _leaf_paths(treedef: PyTreeDef) -> list[str]:
    """Each leaf's path below ``treedef`` as ``jax.tree_util.keystr`` writes it (``''`` for a leaf itself), read from
    its nodes' types and data alone; a child of a node of another kind, whose keys would need the object, by its
    place, as JAX writes a child of a node registered without keys (``[<flat index 1>]``)."""
    if treedef.num_nodes == 1:
        return [""] * treedef.num_leaves  # a leaf, or a node without children (None, ())
    kind, data = treedef.node_data()
    children = treedef.children()
    keys = _node_keys(kind, data, len(children))
    if keys is None or len(keys) != len(children):
        keys = [f"[<flat index {i}>]" for i in range(len(children))]
    return [key + path for key, child in zip(keys, children) for path in _leaf_paths(child)]


def _node_keys(kind: type, data: Any, count: int) -> list[str] | None:
    """The keys of a node's children as ``keystr`` writes them: ``[0]`` in a tuple or list, ``['w']`` in a dict,
    ``.mu`` in a namedtuple (optax's states) or an equinox module (its fields that are not static), of its ``count``."""
    if kind in (tuple, list):
        return [f"[{i}]" for i in range(count)]
    if kind in (dict, collections.OrderedDict):
        return [f"[{safe_repr(key, KEY_CHARS)}]" for key in data]  # a key of the user's class: no repr of theirs runs
    if kind is collections.defaultdict:
        return [f"[{safe_repr(key, KEY_CHARS)}]" for key in data[1]]
    if issubclass(kind, tuple) and isinstance(getattr(kind, "_fields", None), tuple):
        return [f".{field}" for field in kind._fields]
    equinox = sys.modules.get("equinox")
    if equinox is not None and issubclass(kind, equinox.Module) and dataclasses.is_dataclass(kind):
        return [f".{f.name}" for f in dataclasses.fields(kind) if not f.metadata.get("static", False)]
    return None
