"""A ``repr`` of any value (a user's static argument, a config option's value) that never raises. No JAX, no IPython."""

from __future__ import annotations

import enum
from typing import Any


def safe_repr(value: Any, limit: int) -> str:
    """A one-line ``repr`` of ``value``, at most ``limit`` characters then its length: ``'yyy… (5,002 chars)'``.

    Enum members read ``ExplicitX64Mode.WARN``; a ``repr`` that raises or
    returns a non-string reads ``<Bad object; its repr raised RuntimeError>``.
    """
    try:
        text = f"{type(value).__name__}.{value.name}" if isinstance(value, enum.Enum) else repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except Exception as exc:  # noqa: BLE001 - a hostile __repr__
        return f"<{type(value).__name__} object; its repr raised {type(exc).__name__}>"
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} chars)"
