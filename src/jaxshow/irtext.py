"""Scanning IR text with brackets and quoted strings balanced: ``loc(...)``, ``metadata={...}``, ``A at B``. Pure.

Only the characters that matter (brackets, quotes, backslashes, the separator
sought) are visited, found by one regular expression, so a 10 MB module is
scanned at C speed.
"""

from __future__ import annotations

import functools
import re
from typing import Iterator

_SPECIAL = r'[\\"()\[\]{}]'
_BRACKETS = re.compile(_SPECIAL)


@functools.lru_cache(maxsize=8)
def _with_separator(separator: str) -> re.Pattern[str]:
    return re.compile(f"{re.escape(separator)}|{_SPECIAL}")


def _outside_quotes(matches: Iterator[re.Match[str]]) -> Iterator[re.Match[str]]:
    """The matches that stand outside a quoted string (a backslash in one escapes the next character)."""
    quoted, skip = False, -1
    for match in matches:
        at, found = match.start(), match.group()
        if at == skip:
            continue
        if quoted:
            if found == "\\":
                skip = at + 1
            elif found == '"':
                quoted = False
        elif found == '"':
            quoted = True
        elif found != "\\":
            yield match


def closing(text: str, i: int) -> int:
    """The index of the bracket that closes the one opened just before ``i``; ``len(text)`` when none does."""
    depth = 1
    for match in _outside_quotes(_BRACKETS.finditer(text, i)):
        depth += 1 if match.group() in "([{" else -1
        if depth == 0:
            return match.start()
    return len(text)


def split_top_level(text: str, separator: str, maxsplit: int = -1) -> list[str]:
    """``text`` split at each ``separator`` outside brackets and quoted strings (at most ``maxsplit`` times when >= 0)."""
    parts: list[str] = []
    start = depth = 0
    for match in _outside_quotes(_with_separator(separator).finditer(text)):
        found = match.group()
        if found == separator:
            if depth == 0 and len(parts) != maxsplit:
                parts.append(text[start:match.start()])
                start = match.end()
        else:
            depth += 1 if found in "([{" else -1
    return parts + [text[start:]]


HLO_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
"""The tables newer XLA prints between an optimised module's header and its computations (``stack_frame_id`` targets)."""

_TABLES_BLOCK = re.compile(rf"^(?:(?:{'|'.join(HLO_TABLES)})\n(?:\d+ [^\n]*(?:\n|$))*\n*)+", re.M)
_FIRST_INSTRUCTION = re.compile(r"^(?:%|ENTRY\b|ROOT\b)", re.M)


def hlo_frame_tables(text: str) -> tuple[int, int] | None:
    """Where an HLO module's stack-frame tables are (start and end offsets, trailing blank lines included), if it opens with them."""
    m = _TABLES_BLOCK.search(text)
    if m is None:
        return None
    first = _FIRST_INSTRUCTION.search(text)
    return (m.start(), m.end()) if first is None or m.start() < first.start() else None


_MAIN = "func.func public @main("
_HLO_ALIAS = re.compile(r"\(\s*(\d+)\s*,\s*\{[^}]*\}\s*,\s*(?:may|must)-alias\s*\)")
_HLO_DONOR = re.compile(r"\(\s*(\d+)\s*,\s*\{[^}]*\}\s*\)")


def donors(module_text: str, dialect: str) -> tuple[int, frozenset[int]] | None:
    """``(the entry's parameter count, the parameters whose buffers it may reuse)`` of a lowered module: StableHLO's
    ``@main`` arguments marked ``tf.aliasing_output`` or ``jax.buffer_donor``, HLO's ``input_output_alias`` and
    ``buffer_donor`` parameters (with ``entry_computation_layout``'s count); ``None`` where the text says neither."""
    if dialect == "hlo":
        header = module_text.split("\n", 1)[0]
        layout = re.search(r"entry_computation_layout=\{\(", header)
        if layout is None:
            return None
        count = len(split_top_level(header[layout.end():closing(header, layout.end())], ",")) if header[layout.end()] != ")" else 0
        found = set()
        for name, pattern in (("input_output_alias={", _HLO_ALIAS), ("buffer_donor={", _HLO_DONOR)):
            at = header.find(name)
            if at >= 0:
                found.update(int(m.group(1)) for m in pattern.finditer(header[at:closing(header, at + len(name))]))
        return count, frozenset(found)
    at = module_text.find(_MAIN)
    if at < 0:
        return None
    start = at + len(_MAIN)
    arguments = module_text[start:closing(module_text, start)]
    parts = [p for p in split_top_level(arguments, ",") if p.strip()]
    return len(parts), frozenset(i for i, p in enumerate(parts) if "tf.aliasing_output" in p or "jax.buffer_donor" in p)
