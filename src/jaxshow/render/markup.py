"""Safe HTML building blocks: every string is escaped at the leaf.

``Html`` marks text that is already markup (built here, or produced by Pygments);
anything else passed to these helpers is escaped, and table cells are bounded
(:func:`jaxshow.render.limits.line`). No JAX, no IPython.
"""

from __future__ import annotations

import html as _html
from typing import Iterable

from jaxshow.render.limits import TextBudget, line
from jaxshow.render.style import CODE_INNER_STYLE, CODE_STYLE, MUTED_STYLE


class Html(str):
    """A string that is already safe HTML."""

    __slots__ = ()


def escape(value: object) -> Html:
    """Escape any value for HTML text or attribute context."""
    if isinstance(value, Html):
        return value
    return Html(_html.escape(str(value), quote=True))


def join(parts: Iterable[object]) -> Html:
    return Html("".join(escape(p) for p in parts))


def tag(name: str, *children: object, cls: str | None = None, style: str | None = None, **attrs: str | bool) -> Html:
    """``tag("td", text)`` -> ``<td>text</td>``, children escaped unless already ``Html``."""
    attributes = ""
    if cls:
        attributes += f' class="{escape(cls)}"'
    if style:
        attributes += f' style="{escape(style)}"'
    for key, value in attrs.items():
        if value is True:
            attributes += f" {key}"
        elif value not in (False, None):
            attributes += f' {key}="{escape(value)}"'
    return Html(f"<{name}{attributes}>{join(children)}</{name}>")


def details(summary: object, *body: object, open: bool = False, cls: str = "js-section") -> Html:
    """A foldable section that works without JavaScript."""
    return tag("details", tag("summary", summary), *body, cls=cls, open=open)


def table(
    header: tuple[object, ...] | None, rows: Iterable[tuple[object, ...]], budget: TextBudget, *, more: str | None = None
) -> Html:
    """A plain table; ``header`` may be ``None``, each text cell is one bounded line, ``more`` ends it."""
    rows = list(rows)
    head = tag("thead", tag("tr", *(tag("th", h) for h in header))) if header else Html("")
    body = [tag("tr", *(tag("td", line(cell, budget)) for cell in row)) for row in rows]
    if more:
        columns = len(header or rows[0])
        body.append(tag("tr", tag("td", more, cls="js-more", style=MUTED_STYLE, colspan=str(columns))))
    return tag("table", head, tag("tbody", *body), cls="js-table")


def muted(text: object) -> Html:
    return tag("span", text, cls="js-muted", style=MUTED_STYLE)


def code_block(code: Html) -> Html:
    """A ``<pre>`` with inline essentials, legible even when ``<style>`` is stripped."""
    return tag("pre", tag("code", code, style=CODE_INNER_STYLE), cls="js-code", style=CODE_STYLE)
