"""Plain-text building blocks shared by the text renderers. No JAX, no IPython."""

from __future__ import annotations

from typing import Iterable


def text_table(
    rows: Iterable[tuple[object, ...]], header: tuple[str, ...] | None = None, *, indent: str = "", rule: bool = False
) -> list[str]:
    """Left-aligned columns two spaces apart; ``rule`` underlines the header with dashes."""
    all_rows = ([header] if header else []) + [tuple(str(c) for c in r) for r in rows]
    if not all_rows:
        return []
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(all_rows[0]))]
    lines = [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in all_rows]
    if header and rule:
        lines.insert(1, indent + "  ".join("-" * w for w in widths))
    return lines
