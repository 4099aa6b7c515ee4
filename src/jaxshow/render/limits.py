"""How much of a record a report shows, and the functions that hold each shown string to it.

Every string that came from the user or JAX (names, paths, reprs, notes, messages, printed
output) reaches either form through :func:`line` or :func:`block`: ANSI escape sequences and
control characters are removed and the length is bounded, with the full length or the number
left out said where it was cut. Tables and lists show at most ``max_rows`` items and name the
attribute that holds them all. No JAX, no IPython.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, TypeVar

from jaxshow.report import plural

_T = TypeVar("_T")

MESSAGE_LINES = 20
"""Lines shown of an error message (``ErrorSummary.from_exception`` keeps the same number)."""

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate (a ``__repr__``'s ``'\\ud800'``, a file name Python decoded with ``surrogateescape``): UTF-8 has no
bytes for it, so a report holding one could not be sent to the notebook or printed."""
_ASCII_CONTROL = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F])
"""``_CONTROL``'s ASCII characters, for ``bytes.translate``: about 7 times faster than the pattern on ASCII text."""


@dataclass(frozen=True, slots=True)
class TextBudget:
    """How much a report shows before it names the attribute that holds the rest (0: no limit).

    Attributes:
        highlight_max_bytes: IR texts up to this size are highlighted; larger ones are shown plain.
        max_lines: lines shown of each IR text, JAX explanation and trace-time output.
        max_rows: rows shown of each table, and items of each list (primitives, misses).
        max_chars: characters shown of a name, path, repr, heading or table cell.
        max_line_chars: characters shown of one line of a message, note or printed output.
        max_ir_line_chars: characters shown of one line of an IR text (a program with thousands
            of inputs prints its signature as one line of hundreds of kB).
        width: columns the text form's prose and tables wrap at (0: the terminal's width, 100
            where it is unknown). IR lines never wrap.
        cwd: the folder a user's file is shown relative to ('': the current folder when rendered).
        home: the folder shown as ``~`` ('': the user's home folder).
    """

    highlight_max_bytes: int = 200_000
    max_lines: int = 500
    max_rows: int = 50
    max_chars: int = 200
    max_line_chars: int = 1_000
    max_ir_line_chars: int = 10_000
    width: int = 0
    cwd: str = ""
    home: str = ""


DEFAULT_BUDGET = TextBudget()
"""What a report shows unless the magics' options (or a caller) say otherwise."""


def clean(text: str) -> str:
    """``text`` without ANSI escape sequences, carriage returns, bidi overrides or control characters other than newline and
    tab, each lone surrogate replaced by U+FFFD (``�``)."""
    if "\x1b" in text:  # every escape sequence starts with ESC
        text = _ANSI.sub("", text)
    if not text.isascii():
        return _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))
    ascii_bytes = text.encode("ascii")
    kept = ascii_bytes.translate(None, _ASCII_CONTROL)
    return text if len(kept) == len(ascii_bytes) else kept.decode("ascii")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in an ellipsis and the full length: ``'abc… (10,000 chars)'``."""
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} chars)"


def line(value: object, budget: TextBudget) -> str:
    """A name, path, repr or table cell: clean, on one line, at most ``budget.max_chars`` characters."""
    return clip(clean(str(value)).replace("\n", " ").replace("\t", " "), budget.max_chars)


def block(text: str, budget: TextBudget, max_lines: int | None = None) -> str:
    """A message, note or printed output: clean, each line at most ``budget.max_line_chars``.

    At most ``max_lines`` lines (default ``budget.max_lines``), then one saying how many more.
    """
    shown, hidden = clip_lines(clean(text), budget.max_lines if max_lines is None else max_lines)
    out = "\n".join(clip(piece, budget.max_line_chars) for piece in shown.split("\n"))
    return f"{out}\n… {plural(hidden, 'more line')}" if hidden else out


def clip_lines(text: str, max_lines: int) -> tuple[str, int]:
    """First ``max_lines`` lines of ``text`` and how many lines were left out."""
    if max_lines <= 0:
        return text, 0
    cut = -1
    for _ in range(max_lines):
        cut = text.find("\n", cut + 1)
        if cut < 0:
            return text, 0
    rest = text.count("\n", cut + 1) + (0 if text.endswith("\n") else 1)
    return text[:cut], rest


def clip_ir(text: str, budget: TextBudget) -> tuple[str, int, int]:
    """An IR text as a report shows it: clean, its first ``budget.max_lines`` lines, each cut at ``budget.max_ir_line_chars``.

    Returns the shown text, how many lines it leaves out and how many of its lines were cut.
    """
    shown, hidden = clip_lines(text, budget.max_lines)
    shown, limit = clean(shown), budget.max_ir_line_chars
    if limit <= 0 or len(shown) <= limit:
        return shown, hidden, 0
    lines = shown.split("\n")
    long = [i for i, piece in enumerate(lines) if len(piece) > limit]
    for i in long:
        lines[i] = clip(lines[i], limit)
    return ("\n".join(lines) if long else shown), hidden, len(long)


def ir_line(text: str, budget: TextBudget) -> str:
    """One line of an IR text: clean, at most ``budget.max_ir_line_chars`` characters."""
    return clip(clean(text), budget.max_ir_line_chars)


def ir_footer(hidden: int, cut: int, budget: TextBudget) -> str | None:
    """What an IR text's shown part leaves out: ``'12 more lines not shown; 1 line cut at 10,000 characters'``."""
    parts = ([f"{plural(hidden, 'more line')} not shown"] if hidden else []) + (
        [f"{plural(cut, 'line')} cut at {budget.max_ir_line_chars:,} characters"] if cut else [])
    return "; ".join(parts) or None


def limit_rows(items: Sequence[_T], budget: TextBudget, attribute: str) -> tuple[Sequence[_T], str | None]:
    """The first ``budget.max_rows`` items, and the line for the rest: ``'… 9,950 more (all in report.traced.args)'``."""
    if budget.max_rows <= 0 or len(items) <= budget.max_rows:
        return items, None
    return items[: budget.max_rows], f"… {len(items) - budget.max_rows:,} more (all in {attribute})"


def message(text: str, budget: TextBudget) -> str:
    """A note, reason or error message: :func:`block` with at most ``MESSAGE_LINES`` lines."""
    return block(text, budget, MESSAGE_LINES)
