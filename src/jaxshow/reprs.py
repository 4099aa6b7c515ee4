"""A bounded ``repr`` of any value (a user's static argument, a config option's value) that never raises, nor runs a
``__repr__`` of the user's (JAX calls none for a call: the value is named by its type). No JAX, no IPython.

Python's default reprs name an object's memory address (``<function f at
0x7f…>``, ``<Foo object at 0x…>``), different in every process. A static
value's text leaves it out (``<function f>``), so saved reports and ``--diff``
do not show changes that are not; the addresses are returned apart, since they
are what tells two objects with one repr apart (JAX compares such objects by
identity).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import os
import re
import threading
import types
import weakref
from typing import Any, Callable

from jaxshow.installed import is_installed

_ADDRESS = re.compile(r" at (0x[0-9a-fA-F]+)>")


def safe_repr(value: Any, limit: int) -> str:
    """A one-line ``repr`` of ``value``, at most ``limit`` characters then its length: ``'yyy… (5,002 chars)'``.

    Enum members read ``ExplicitX64Mode.WARN``; a ``repr`` that raises or
    returns a non-string reads ``<Bad object; its repr raised RuntimeError>``.
    """
    return _bounded(_one_line(value), limit)


def stable_repr(value: Any, limit: int) -> tuple[str, tuple[str, ...]]:
    """:func:`safe_repr` without the memory addresses of default reprs, and those addresses."""
    text, addresses = stable_text(_one_line(value))
    return _bounded(text, limit), addresses


def stable_text(text: str) -> tuple[str, tuple[str, ...]]:
    """``(text without the addresses of default reprs, those addresses)``: ``<function f at 0x7f…>`` -> ``<function f>``."""
    addresses = tuple(_ADDRESS.findall(text))
    return (_ADDRESS.sub(">", text) if addresses else text), addresses


REPR_NOT_RUN = "; its repr not run"
"""In the text of an object whose ``__repr__`` is the user's, which jaxshow does not run: ``<Scale object; its repr not
run>`` (:func:`runs_users_repr`)."""
ANOTHER_OBJECT = " (another object)"
"""The mark of a changed static value's new text where it prints as before but for its addresses."""


def weak_ref(value: Any) -> weakref.ref | None:
    """A weak reference to a user's value, ``None`` where its type takes none."""
    try:
        return weakref.ref(value)
    except TypeError:
        return None


def is_a(value: Any, kinds: type | tuple[type, ...]) -> bool:
    """``isinstance(value, kinds)`` read from ``type(value)`` alone: ``isinstance`` also asks ``value.__class__``, which
    a proxy's property answers with code of its own (and may lie about)."""
    return issubclass(type(value), kinds)


def differ(new: Any, old: Any) -> bool:
    """``new != old`` by the values' own equality; a user ``__eq__`` that raises or is not a bool counts as different.

    Within :func:`each_pair_compared_once`, a pair already compared (either way round) is not compared again, and two
    tuples are compared item by item (as ``==`` compares them), so that a tuple made again around the same items (a key
    rebuilt from its parts) finds its items' pairs."""
    if getattr(_compared, "pairs", None) is None:
        return _differ(new, old)
    kind = type(new)
    if kind is type(old) and (by := _COMPARED_BY_PARTS.get(kind)) is not None:
        parts, inner, whole = by
        if whole is not None and whole(new) and whole(old):
            return _differ(new, old)
        try:
            new_parts, old_parts = parts(new), parts(old)
        except Exception:  # noqa: BLE001 - a value not of the shape its type promised: compared whole
            pass
        else:
            found = differ(new_parts, old_parts)
            if inner is not None:
                _remember(inner(new), inner(old), found)
            return found
    if kind is type(old) and issubclass(kind, tuple) and kind.__eq__ is tuple.__eq__:
        return len(new) != len(old) or any(a is not b and differ(a, b) for a, b in zip(new, old))
    return once_per_pair(_differ, *_by_id(new, old))


_COMPARED_BY_PARTS: dict[type, tuple[Callable[[Any], tuple], Callable[[Any], Any] | None, Callable[[Any], bool] | None]] = {}
"""Types whose ``==`` compares parts of two values that :func:`differ` takes apart to compare each pair of parts once
(JAX's cache-key wrappers around a user's static value: :func:`compared_by_parts`)."""


def compared_by_parts(kind: type, parts: Callable[[Any], tuple], inner: Callable[[Any], Any] | None = None,
                      whole: Callable[[Any], bool] | None = None) -> None:
    """Within :func:`each_pair_compared_once`, compare two values of ``kind`` as the tuples ``parts`` makes of them,
    which must be equal exactly where the values are (a wrapper's ``==`` compares the user's value inside, in C++ or
    per level: whole wrappers compared at several steps would run the user's ``__eq__`` at each). ``inner``: the value
    a box holds, whose pair then reads as its boxes compared (a box that tells values apart by a hash it keeps, with
    no ``__eq__`` run, answers for the values too). ``whole``: whether a value's ``==`` runs no code of the user's; two
    such values are compared whole, as taking them apart would cost more and spare no ``__eq__`` of the user's."""
    _COMPARED_BY_PARTS[kind] = parts, inner, whole


def _remember(new: Any, old: Any, found: bool) -> None:
    """Within :func:`each_pair_compared_once`, ``found`` as :func:`differ`'s answer for two values of one type."""
    pairs = getattr(_compared, "pairs", None)
    if pairs is not None and type(new) is type(old) and new is not old:
        first, second = _by_id(new, old)
        pairs.setdefault((_differ, id(first), id(second)), (found, first, second))


def _by_id(new: Any, old: Any) -> tuple[Any, Any]:
    """The pair in one order whichever way round it is asked (:func:`differ` is symmetric)."""
    return (new, old) if id(new) <= id(old) else (old, new)


def _differ(new: Any, old: Any) -> bool:
    if new is old:  # as JAX's lookups compare (PyObject_RichCompareBool): an object equals itself, no __eq__ run
        return False
    try:
        return bool(new != old)
    except Exception:  # noqa: BLE001 - a user object's __eq__/__bool__
        return True


_compared = threading.local()


def once_per_pair(compare: Callable[..., Any], new: Any, old: Any, *rest: Any, by: tuple[Any, Any] | None = None) -> Any:
    """``compare(new, old, *rest)``, computed once for the pair (or for the pair of objects ``by`` names it by: two cache
    keys by the input trees they hold, the keys themselves built anew) within :func:`each_pair_compared_once`."""
    pairs = getattr(_compared, "pairs", None)
    if pairs is None:
        return compare(new, old, *rest)
    first, second = by if by is not None else (new, old)
    found = pairs.get((compare, id(first), id(second)))
    if found is None:  # holds both: no other object takes their ids
        found = pairs[compare, id(first), id(second)] = (compare(new, old, *rest), first, second)
    return found[0]


class each_pair_compared_once:  # noqa: N801 - used as a function: ``with each_pair_compared_once():``
    """Within: :func:`differ` compares a pair of objects once (a miss compares its key with each kept one at several
    steps; a static argument's ``__eq__`` is the user's, run as often as JAX's own lookup runs it, not more)."""

    __slots__ = ("_outer",)

    def __enter__(self) -> None:
        self._outer = getattr(_compared, "pairs", None) is not None
        if not self._outer:
            _compared.pairs = {}

    def __exit__(self, *exc: object) -> None:
        if not self._outer:
            _compared.pairs = None


def changed_texts(now: tuple[str, tuple[str, ...]], before: tuple[str, tuple[str, ...]]) -> tuple[str, str]:
    """A changed static value's two texts (from :func:`stable_repr`), the new one marked where only the addresses differ."""
    (now_text, now_at), (before_text, before_at) = now, before
    if now_text == before_text and now_at != before_at:
        now_text += ANOTHER_OBJECT
    return now_text, before_text


_CONTAINERS = (tuple, list, dict, set, frozenset, functools.partial)
_MAX_PARTS = 200
"""Parts of one value looked at, at most, to tell whether its ``repr`` or ``==`` runs the user's code."""


def runs_users_repr(value: Any) -> bool:
    """Whether ``repr(value)`` would run a ``__repr__`` of the user's: one written in Python outside the installed files
    (a cell's class), on the value or, through the ``repr`` of tuples, lists, dicts, sets, ``functools.partial`` and
    dataclasses (their fields), on a part of it. Only types and instances' own slots are read: no code of the value's
    runs. Past :data:`_MAX_PARTS` parts, it is taken to."""
    return _runs_users(value, "__repr__")


def runs_users_eq(value: Any) -> bool:
    """Whether comparing ``value`` with ``==`` could run an ``__eq__`` of the user's, read as :func:`runs_users_repr`
    reads ``__repr__`` (a dataclass's made ``__eq__`` compares its fields)."""
    return _runs_users(value, "__eq__")


def _runs_users(value: Any, name: str) -> bool:
    pending, seen = [value], 0
    while pending and seen < _MAX_PARTS:
        part = pending.pop()
        seen += 1
        kind = type(part)
        method = inspect.getattr_static(kind, name, None)
        if type(method) is types.FunctionType:
            if _dataclass_made(kind, method):
                pending.extend(inspect.getattr_static(part, f.name, None) for f in dataclasses.fields(kind)
                               if (f.repr if name == "__repr__" else f.compare))
                continue
            if not is_installed(os.path.abspath(method.__code__.co_filename)):
                return True
        if is_a(part, _CONTAINERS):  # a namedtuple's repr, too, shows its items'
            pending.extend(_parts(part))
    return bool(pending)


def _parts(value: Any) -> list[Any]:
    if is_a(value, functools.partial):
        return [value.func, *value.args, *value.keywords.values()]
    return [*value.keys(), *value.values()] if is_a(value, dict) else list(value)


def _dataclass_made(kind: type, method: types.FunctionType) -> bool:
    """Whether ``method`` is the ``__repr__`` or ``__eq__`` ``@dataclass`` wrote for ``kind`` (compiled from
    ``<string>``; a ``__repr__`` in ``reprlib.recursive_repr``'s wrapper), which shows or compares the fields."""
    made = inspect.unwrap(method)
    return type(made) is types.FunctionType and made.__code__.co_filename == "<string>" and dataclasses.is_dataclass(kind)


def _quiet(value: Any) -> str:
    """``repr(value)`` where that runs no ``__repr__`` of the user's (:func:`runs_users_repr`), else the same text with
    each such part named by its type, as :func:`safe_repr` names a ``repr`` that raises: ``<Scale object; its repr not
    run>``."""
    if not runs_users_repr(value):
        return repr(value)
    kind = type(value)
    if kind is tuple or kind is list:
        items = ", ".join(_quiet(v) for v in value)
        return f"({items}{',' if len(value) == 1 else ''})" if kind is tuple else f"[{items}]"
    if kind is dict:
        return "{" + ", ".join(f"{_quiet(k)}: {_quiet(v)}" for k, v in value.items()) + "}"
    if kind is functools.partial:
        parts = [_quiet(value.func), *map(_quiet, value.args), *(f"{k}={_quiet(v)}" for k, v in value.keywords.items())]
        return f"functools.partial({', '.join(parts)})"
    method = inspect.getattr_static(kind, "__repr__", None)
    if type(method) is types.FunctionType and _dataclass_made(kind, method):
        fields = (f"{f.name}={_quiet(inspect.getattr_static(value, f.name, None))}" for f in dataclasses.fields(kind) if f.repr)
        return f"{kind.__qualname__}({', '.join(fields)})"
    return f"<{type(value).__name__} object{REPR_NOT_RUN}>"


def _one_line(value: Any) -> str:
    try:
        text = f"{type(value).__name__}.{value.name}" if is_a(value, enum.Enum) else _quiet(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except Exception as exc:  # noqa: BLE001 - a hostile __repr__
        return f"<{type(value).__name__} object; its repr raised {type(exc).__name__}>"
    return " ".join(text.split()) if "\n" in text else text


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} chars)"
