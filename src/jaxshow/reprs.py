"""Bounded, stable ``repr`` of a user's value (a static argument): standard library only.

Python's default reprs name an object's memory address (``<function f at
0x7f…>``, ``<Foo object at 0x…>``), different in every process. The text shown
leaves it out (``<function f>``), so saved reports and ``--diff`` do not show
changes that are not; the addresses are returned apart, since they are what
tells two objects with one repr apart (JAX compares such objects by identity).
"""

from __future__ import annotations

import re
from typing import Any

_ADDRESS = re.compile(r" at (0x[0-9a-fA-F]+)>")


def stable_repr(value: Any, limit: int) -> tuple[str, tuple[str, ...]]:
    """``(repr(value) without addresses, bounded to limit characters; the addresses left out)``.

    A ``repr`` that raises, or returns something other than a string, is
    named by the value's type; its error never propagates.
    """
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 - a user object's repr
        return f"<{type(value).__name__} object; its repr raised {type(exc).__name__}>", ()
    if not isinstance(text, str):
        return f"<{type(value).__name__} object>", ()
    text, addresses = stable_text(text)
    return (text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text):,} characters)"), addresses


def stable_text(text: str) -> tuple[str, tuple[str, ...]]:
    """``(text without the addresses of default reprs, those addresses)``: ``<function f at 0x7f…>`` -> ``<function f>``."""
    addresses = tuple(_ADDRESS.findall(text))
    return (_ADDRESS.sub(">", text) if addresses else text), addresses


def changed_texts(now: tuple[str, tuple[str, ...]], before: tuple[str, tuple[str, ...]]) -> tuple[str, str]:
    """A changed static value's two texts (from :func:`stable_repr`), the new one marked where only the addresses differ."""
    (now_text, now_at), (before_text, before_at) = now, before
    if now_text == before_text and now_at != before_at:
        now_text += " (another object)"
    return now_text, before_text
