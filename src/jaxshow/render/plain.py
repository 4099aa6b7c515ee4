"""Plain-text building blocks shared by the text renderers. No JAX, no IPython.

Prose (notes, messages, head lines, lists) and one column of a table wrap at
the text width (:func:`text_width`), counted in terminal columns (:func:`columns`); IR lines never do: they are code, shown
as they are, and a terminal scrolls or clips them.
"""

from __future__ import annotations

import re
import shutil
import textwrap
import unicodedata
from typing import Callable, Iterable

from jaxshow.render.limits import TextBudget, line

FALLBACK_WIDTH = 100
"""Columns of the text form where the terminal's width is unknown (a kernel, a pipe)."""


def text_width(budget: TextBudget) -> int:
    """``budget.width``, or the terminal's width (``shutil.get_terminal_size``, else 100 columns)."""
    return budget.width or shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: two for an East Asian wide or fullwidth character, none for a combining mark."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.category(c) in _ZERO_WIDTH else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


_ZERO_WIDTH = frozenset({"Mn", "Me", "Cf"})
"""Unicode categories a terminal draws over the previous character: combining marks, format characters (joiners)."""


KEEP = "\u00a0"
"""A no-break space: the words it joins stay on one line (``+1 −1 lines``); it is written as a space."""


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """``first + text`` wrapped at spaces to ``width`` terminal columns (:func:`columns`), later lines starting with
    ``rest``; a word longer than that stays whole, as do words joined by :data:`KEEP`. Where a long ``first`` leaves
    no room for the first word, ``first`` is a line of its own."""
    lead = next(filter(None, text.split(" ")), "")
    if first.strip() and columns(first) + columns(lead) > width >= columns(rest) + columns(lead):
        return [first.rstrip(), *wrap(text, width, rest, rest)]
    if text.isascii():
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                             break_on_hyphens=False) or [first + text]
    lines: list[str] = []
    current, used, words = first, columns(first), 0
    for word in filter(None, text.split(" ")):
        size = columns(word)
        if words and used + 1 + size > width:
            lines.append(current)
            current, used, words = rest, columns(rest), 0
        current, used, words = (current + " " + word, used + 1 + size, words + 1) if words else (current + word, used + size, 1)
    return [piece.replace(KEEP, " ") for piece in ([*lines, current] if words else lines or [first + text])]


def _extent(rows: list[tuple[str, ...]], widths: list[int], indent: str) -> int:
    """The columns the widest row takes, its trailing empty cells none (a header over a column left empty stays)."""
    extent = 0
    for r in rows:
        filled = [i for i, c in enumerate(r) if c]
        if filled:
            last = filled[-1]
            extent = max(extent, len(indent) + sum(w + 2 for w in widths[:last]) + columns(r[last]))
    return extent


def paragraph(first: str, text: str, rest: str, budget: TextBudget) -> str:
    """``first + text`` wrapped at the text width, every later line starting with ``rest``.

    The message's own line breaks stay; each of its lines wraps on its own. Only
    the first line gives up the room a long ``first`` takes: the lines after it
    fill the width from ``rest``.
    """
    width = text_width(budget)
    out: list[str] = []
    for number, piece in enumerate(text.split("\n")):
        prefix = first if number == 0 else rest
        if len(prefix) + columns(piece) <= width:
            out.append(prefix + piece.replace(KEEP, " "))
            continue
        out.extend(wrap(piece, width, prefix, rest))
    return "\n".join(out)


def text_table(
    rows: Iterable[tuple[object, ...]],
    header: tuple[str, ...] | None,
    budget: TextBudget,
    *,
    indent: str = "",
    rule: bool = False,
    more: str | None = None,
    squeeze: bool = False,
) -> list[str]:
    """Left-aligned columns two spaces apart, each cell one bounded line; ``rule`` underlines the header.

    Columns are aligned as a terminal draws them (:func:`columns`): ``損失`` takes four.

    A row that is a ``str`` instead of a tuple (a group's heading) is one line of
    its own, outside the columns. ``more`` (the rows left out) follows the table
    on a line of its own. A column every row leaves empty is left out, its header
    too. Where the table is wider than ``budget.width``, the last
    column wraps under itself where its words fit the room left, else the column
    that wrapping at spaces shortens most (a sharding beside a last yes/no), the
    columns after it staying aligned. Where one column cannot take it all, the
    widest columns shrink in turn (:func:`_shrink`), each cell wrapping under
    itself; a table whose names, values and file names alone are wider than the
    width keeps them whole and runs past it; ``squeeze`` then narrows every other
    column to its longest word (the largest buffers: their 'what' beside a long
    value name).
    """
    all_rows = ([header] if header else []) + [r if isinstance(r, str) else tuple(line(c, budget) for c in r) for r in rows]
    if header and (empty := _empty_columns(all_rows)):
        all_rows = [r if isinstance(r, str) else tuple(c for i, c in enumerate(r) if i not in empty) for r in all_rows]
    cells = [r for r in all_rows if not isinstance(r, str)]
    if not cells:
        return [indent + r for r in all_rows] + ([indent + more] if more else [])
    width = text_width(budget)
    natural = [max(columns(r[i]) for r in cells) for i in range(len(cells[0]))]
    widths = list(natural)
    words = [max(columns(w) for r in cells for w in r[i].split(" ")) for i in range(len(widths))]
    rooms = [width - len(indent) - sum(w + 2 for j, w in enumerate(widths) if j != i) for i in range(len(widths))]
    can = [i for i in range(len(widths)) if rooms[i] >= 20 and widths[i] > rooms[i]]
    last = len(widths) - 1
    if can and _extent(cells[1:] if header else cells, widths, indent) > width:
        # the last column where its words fit the room, else the one wrapping shortens most
        wide = last if last in can and words[last] <= rooms[last] else max(can, key=lambda i: (widths[i] - words[i], i))
        widths[wide] = max(columns(w) for r in cells for w in fold(r[wide], rooms[wide]))
    if len(indent) + sum(w + 2 for w in widths) - 2 > width and _extent(cells, natural, indent) > width:
        # only the header is too wide (over a column its rows leave empty): only the header wraps
        rows_fit = header is not None and _extent(cells[1:], natural, indent) <= width
        keep = [max((columns(r[i]) for r in cells[1:]), default=0) if rows_fit else 0 for i in range(len(natural))]
        widths = _shrink(cells, natural, width - len(indent) - 2 * last, keep, squeeze) or widths
    lines = []
    for r in all_rows:
        if isinstance(r, str):
            lines.append(indent + r)
            continue
        pieces = [fold(c, w) if columns(c) > w else [c] for c, w in zip(r, widths)]
        for n in range(max(len(p) for p in pieces)):
            row = [p[n] if n < len(p) else "" for p in pieces]
            lines.append((indent + "  ".join(c + " " * (w - columns(c)) for c, w in zip(row, widths))).rstrip())
        if r is header and rule:
            lines.append(indent + "  ".join("-" * w for w in widths))
    return lines + ([indent + more] if more else [])


def table_or_sentences(rows: list[tuple[str, ...]], header: tuple[str, ...] | None, budget: TextBudget,
                       sentence: Callable[[tuple[str, ...]], str], *, indent: str = "", rule: bool = False,
                       more: str | None = None) -> list[str]:
    """:func:`text_table` where it fits the text width with at most one line a row more than its rows take as
    sentences; else (names and values alone wider than the terminal, or a column narrowed to a word a line) each row,
    its cells as the table shows them, as ``sentence`` says it, wrapped, its later lines 4 columns further in."""
    table = text_table(rows, header, budget, indent=indent, rule=rule, more=more)
    said = [sentence(tuple(line(c, budget) for c in r)) for r in rows]
    words = "\n".join(paragraph(indent, s, indent + "    ", budget) for s in said).split("\n")
    fits = max(map(columns, table), default=0) <= text_width(budget)
    if fits and len(table) - (header is not None) - rule <= len(words) + len(rows) + bool(more):
        return table
    return words + ([indent + more] if more else [])


MIN_COLUMN = 12
"""Columns a table's column keeps at least when it shrinks to fit the width (``4.00 KiB`` never breaks)."""


_PATH = re.compile(r"[~.]*/\w")
"""A word that starts as a file path does (``/work/x.py``, ``~/x``, ``./x``), unlike HLO's ``/*index=5*/f32[64]``."""


def _empty_columns(rows: list) -> set[int]:
    """The columns every row under the header leaves empty (none where there are no rows, or all are empty)."""
    body = [r for r in rows[1:] if not isinstance(r, str)]
    empty = {i for i in range(len(rows[0])) if body and all(not r[i] for r in body)}
    return empty if len(empty) < len(rows[0]) else set()


def _soft_pieces(word: str) -> list[str]:
    """A word cut where it may break across lines: after a ``/`` (``jit(f)/while/body/add``), after a ``:`` before a
    name (XLA's ``dot_general:transpose(jvp())/reduce_sum``, never ``In[2]:1``) and between ``]`` and ``[``
    (``params['layer1']['w']``); a path stays whole."""
    return [word] if _PATH.match(word) else re.split(r"(?<=/)(?=[^/])|(?<=:)(?=[A-Za-z_(])|(?<=\])(?=\[)", word)


def fold(text: str, width: int) -> list[str]:
    """``text`` wrapped at spaces to ``width`` columns, a longer word broken where :func:`_soft_pieces` allows."""
    out: list[str] = []
    for piece in wrap(text, width):
        if columns(piece) <= width:
            out.append(piece)
            continue
        current = ""
        for part in _soft_pieces(piece):
            if current and columns(current) + columns(part) > width:
                out.append(current)
                current = ""
            current += part
        out.append(current)
    return out


def _shrink(cells: list[tuple[str, ...]], widths: list[int], room: int, keep: list[int], squeeze: bool) -> list[int] | None:
    """Column widths that fit ``room``: the widest column gives up a column at a time, none narrower than ``keep``
    (the rows' widths, where only the header is too wide), else :data:`MIN_COLUMN` (where only that fits, its longest cell
    of at most that, ``4.00 KiB``), or its longest piece that cannot break (a name, a value, a file name). Where
    those pieces alone are wider than ``room``: each column at that piece if ``squeeze``, else ``None``."""
    pieces = [max(columns(p) for r in cells for word in r[i].split(" ") for p in _soft_pieces(word)) for i in range(len(widths))]
    least = 0 if any(keep) else MIN_COLUMN  # a header's words break where its rows keep their widths
    floors = [max(k, min(w, max(least, p))) for w, k, p in zip(widths, keep, pieces)]
    short = [max([p] + [columns(r[i]) for r in cells if columns(r[i]) <= MIN_COLUMN]) for i, p in enumerate(pieces)]
    if sum(floors) > room >= sum(map(min, widths, short)):  # fits with a column under MIN_COLUMN, its short cells whole
        floors = [max(k, min(w, p)) for w, k, p in zip(widths, keep, short)]
    if sum(floors) > room:
        if not squeeze:
            return None
        room = sum(floors)
    widths = list(widths)
    while sum(widths) > room:
        widths[max((i for i in range(len(widths)) if widths[i] > floors[i]), key=lambda i: (widths[i], i))] -= 1
    return [max(columns(p) for r in cells for p in (fold(r[i], w) if columns(r[i]) > w else [r[i]])) for i, w in enumerate(widths)]
