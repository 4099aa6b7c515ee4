"""Scanning IR text with brackets and quoted strings balanced: ``loc(...)``, ``metadata={...}``, ``A at B``. Pure."""

from __future__ import annotations

from typing import Iterator

_OPENING, _CLOSING = "([{", ")]}"


def _scan(text: str, i: int, depth: int) -> Iterator[tuple[int, int]]:
    """``(index, depth)`` of each character outside a quoted string, the depth counted after it."""
    quoted = False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        else:
            depth += (c in _OPENING) - (c in _CLOSING)
            yield i, depth
        i += 1


def closing(text: str, i: int) -> int:
    """The index of the bracket that closes the one opened just before ``i``; ``len(text)`` when none does."""
    return next((j for j, depth in _scan(text, i, 1) if depth == 0), len(text))


def top_level(text: str) -> Iterator[int]:
    """The indexes of ``text``'s characters outside every bracket and quoted string."""
    return (i for i, depth in _scan(text, 0, 0) if depth == 0 and text[i] not in _CLOSING)


def split_top_level(text: str, separator: str, maxsplit: int = -1) -> list[str]:
    """``text`` split at each ``separator`` outside brackets and quoted strings (at most ``maxsplit`` times when >= 0)."""
    parts: list[str] = []
    start = 0
    for i in top_level(text):
        if len(parts) == maxsplit:
            break
        if i >= start and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i + len(separator)
    return parts + [text[start:]]
