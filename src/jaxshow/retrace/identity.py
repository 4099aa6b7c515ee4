"""Which part of two values that print alike compares unequal: the object compared by identity. No JAX, no IPython.

A flax ``GraphDef`` or equinox's static tuple holds a model's static
attributes; a ``functools.partial`` made anew with the model prints as the old
one did but compares by identity, so JAX's cache misses. :func:`identity_part`
walks the two values side by side (sequences, dicts, named tuples, object
attributes, ``(name, value)`` pairs) to the first unequal pair none of whose
parts differ, and names it by the nearest name on the way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from jaxshow.reprs import differ, stable_repr

MAX_PARTS = 2_000
"""Pairs of parts compared, at most."""
PART_CHARS = 160
"""Characters of the part's text shown, at most."""


def identity_part(now: Any, before: Any) -> tuple[str, str] | None:
    """The texts of the first part of ``now`` and ``before`` that compares unequal though none of its own parts does,
    with the name it is held under where it has one: ``'avg_pool = functools.partial(<function avg_pool>, …)'``
    twice where it prints alike (compared by identity), or two texts where a repr hid it (``'k = 2'``, ``'k = 1'``).
    ``None`` where the two compare equal, do not print alike, or nothing is found within :data:`MAX_PARTS`."""
    try:
        if _text(now) != _text(before):
            return None
        found = _walk(now, before, None, [MAX_PARTS])
    except Exception:  # noqa: BLE001 - a user's __eq__ or __repr__ that raises: nothing named
        return None
    if found is None:
        return None
    name, *parts = found
    now_text, before_text = (f"{name} = {_text(part)}" if name else _text(part) for part in parts)
    return now_text, before_text


def _text(value: Any) -> str:
    return stable_repr(value, PART_CHARS)[0]


def _walk(now: Any, before: Any, name: str | None, budget: list[int]) -> tuple[str | None, Any, Any] | None:
    budget[0] -= 1
    if budget[0] < 0 or now is before or type(now) is not type(before) or not differ(now, before):
        return None
    for child_name, a, b in _children(now, before, name):
        found = _walk(a, b, child_name, budget)
        if found is not None:
            return found
        if budget[0] < 0:
            return None
    return name, now, before


BOXES = frozenset({"value", "val"})
"""Attributes of a box around one value (flax's ``Static(value=…)``, JAX's ``Static(val=…)``): no part of a name."""


def _children(now: Any, before: Any, name: str | None) -> list[tuple[str | None, Any, Any]]:
    """Pairs of parts to compare, each with its name: a pair's or a dict key's, else its holder's and attribute's."""
    if isinstance(now, tuple) and hasattr(now, "_fields"):  # a NamedTuple
        return [(f"{name}.{f}" if name else f, getattr(now, f), getattr(before, f)) for f in now._fields]
    if isinstance(now, (tuple, list)) and len(now) == len(before):
        if len(now) == 2 and isinstance(now[0], str) and now[0] == before[0]:  # a (name, value) pair
            return [(now[0], now[1], before[1])]
        return [(name, a, b) for a, b in zip(now, before)]
    if isinstance(now, dict) and now.keys() == before.keys():
        return [(str(k), now[k], before[k]) for k in now]
    # an object's own attributes, read from its __dict__ or its dataclass slots: no __getattr__ or property of its runs
    now_vars, before_vars = _attributes(now), _attributes(before)
    return [(name if a in BOXES or a.startswith("_") else f"{name}.{a}" if name else a, value, before_vars[a])
            for a, value in now_vars.items() if a in before_vars]


def _attributes(value: Any) -> dict[str, Any]:
    own = getattr(value, "__dict__", None)
    if isinstance(own, dict):
        return {k: v for k, v in own.items() if not k.startswith("__")}
    if dataclasses.is_dataclass(value):
        return {f.name: object.__getattribute__(value, f.name) for f in dataclasses.fields(value)}
    return {}
