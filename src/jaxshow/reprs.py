"""A bounded ``repr`` of any value (a user's static argument, a config option's value) that never raises. No JAX, no IPython.

Python's default reprs name an object's memory address (``<function f at
0x7f…>``, ``<Foo object at 0x…>``), different in every process. A static
value's text leaves it out (``<function f>``), so saved reports and ``--diff``
do not show changes that are not; the addresses are returned apart, since they
are what tells two objects with one repr apart (JAX compares such objects by
identity).
"""

from __future__ import annotations

import enum
import re
from typing import Any

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


ANOTHER_OBJECT = " (another object)"
"""The mark of a changed static value's new text where it prints as before but for its addresses."""


def changed_texts(now: tuple[str, tuple[str, ...]], before: tuple[str, tuple[str, ...]]) -> tuple[str, str]:
    """A changed static value's two texts (from :func:`stable_repr`), the new one marked where only the addresses differ."""
    (now_text, now_at), (before_text, before_at) = now, before
    if now_text == before_text and now_at != before_at:
        now_text += ANOTHER_OBJECT
    return now_text, before_text


def _one_line(value: Any) -> str:
    try:
        text = f"{type(value).__name__}.{value.name}" if isinstance(value, enum.Enum) else repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except Exception as exc:  # noqa: BLE001 - a hostile __repr__
        return f"<{type(value).__name__} object; its repr raised {type(exc).__name__}>"
    return " ".join(text.split()) if "\n" in text else text


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} chars)"
