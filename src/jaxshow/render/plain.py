"""Plain-text building blocks shared by the text renderers. No JAX, no IPython."""

from __future__ import annotations

from typing import Iterable

from jaxshow.render.limits import TextBudget, line


def text_table(
    rows: Iterable[tuple[object, ...]],
    header: tuple[str, ...] | None,
    budget: TextBudget,
    *,
    indent: str = "",
    rule: bool = False,
    more: str | None = None,
) -> list[str]:
    """Left-aligned columns two spaces apart, each cell one bounded line; ``rule`` underlines the header.

    ``more`` (the rows left out) follows the table on a line of its own.
    """
    all_rows = ([header] if header else []) + [tuple(line(c, budget) for c in r) for r in rows]
    if not all_rows:
        return []
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(all_rows[0]))]
    lines = [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in all_rows]
    if header and rule:
        lines.insert(1, indent + "  ".join("-" * w for w in widths))
    if more:
        lines.append(indent + more)
    return lines


def hang(text: str, indent: str) -> str:
    """``text`` with every line after the first indented, so a message's own lines stay under its label."""
    return text.replace("\n", "\n" + indent)
