"""Safe HTML building blocks: every string is escaped at the leaf.

``Html`` marks text that is already markup (built here, or by the highlighter);
anything else passed to these helpers is escaped, and table cells are bounded
(:func:`jaxshow.render.limits.line`). Text is escaped for where it goes: in
element content only ``&`` and ``<`` can start markup, so only they are
escaped (IR and pytree paths are full of ``>``, ``'`` and ``"``); attribute
values, always double-quoted, also escape ``"``. Tables use ``tr``/``td`` only
(the header row is ``tr.js-th``): nbconvert's sanitiser keeps those and prints
``thead``, ``th`` and ``tbody`` as text. No JAX, no IPython.
"""

from __future__ import annotations

import re
from typing import Iterable

from jaxshow.render.limits import TextBudget, line
from jaxshow.render.style import CODE_INNER_STYLE, CODE_STYLE, MUTED_STYLE, TABLE_STYLE


class Html(str):
    """A string that is already safe HTML."""

    __slots__ = ()


def escape_text(text: str) -> str:
    """``text`` for element content: ``&`` and ``<`` escaped, nothing else needs it."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def escape(value: object) -> Html:
    """Escape any value for element content (``Html`` passes through)."""
    if isinstance(value, Html):
        return value
    return Html(escape_text(str(value)))


def escape_attribute(value: object) -> str:
    """Escape a value for a double-quoted attribute: ``&``, ``<`` and ``"``."""
    return escape_text(str(value)).replace('"', "&quot;")


def join(parts: Iterable[object]) -> Html:
    return Html("".join(escape(p) for p in parts))


def tag(name: str, *children: object, cls: str | None = None, style: str | None = None, **attrs: str | bool) -> Html:
    """``tag("td", text)`` -> ``<td>text</td>``, children escaped unless already ``Html``."""
    attributes = ""
    if cls:
        attributes += f' class="{escape_attribute(cls)}"'
    if style:
        attributes += f' style="{escape_attribute(style)}"'
    for key, value in attrs.items():
        if value is True:
            attributes += f" {key}"
        elif value not in (False, None):
            attributes += f' {key}="{escape_attribute(value)}"'
    return Html(f"<{name}{attributes}>{join(children)}</{name}>")


def details(summary: object, *body: object, open: bool = False, cls: str = "js-section") -> Html:
    """A foldable section that works without JavaScript."""
    return tag("details", tag("summary", summary), *body, cls=cls, open=open)


def table(
    header: tuple[object, ...] | None, rows: Iterable[tuple[object, ...]], budget: TextBudget, *, more: str | None = None,
    inline: bool = True,
) -> Html:
    """A plain table; ``header`` may be ``None``, each text cell is one bounded line (an ``Html`` cell is taken as it is),
    ``more`` ends it.

    A row that is ``Html`` instead of a tuple (a folded group) spans every column.
    ``inline=False`` leaves out the inline style (a table nested in another one).
    """
    rows = list(rows)
    columns = len(header) if header else max((len(r) for r in rows if not isinstance(r, Html)), default=1)
    body = [tag("tr", *(tag("td", tag("b", h)) for h in header), cls="js-th")] if header else []
    for row in rows:
        if isinstance(row, Html):
            body.append(Html(f'<tr><td colspan="{columns}">{row}</td></tr>'))
        else:
            body.append(Html("<tr>" + "".join(_cell(cell, budget) for cell in row) + "</tr>"))
    if more:
        body.append(tag("tr", tag("td", more, cls="js-more", style=MUTED_STYLE, colspan=str(columns))))
    return tag("table", *body, cls="js-table", style=TABLE_STYLE if inline else None)



LONG_WORD_CHARS = 30
"""Characters of a table cell's longest word above which it may break anywhere (class ``js-long``): a long name or
value then wraps in its cell, so that its table fits the page; a soft wrap, which copying leaves whole."""


def _cell(cell: object, budget: TextBudget) -> str:
    """One ``<td>``: ``Html`` as it is, anything else one bounded, escaped line; marked ``js-long`` where a word of its
    text is longer than :data:`LONG_WORD_CHARS`."""
    html = cell if isinstance(cell, Html) else escape_text(line(cell, budget))
    words = _TAGS.sub(" ", html).split()
    return f'<td class="js-long">{html}</td>' if max(map(len, words), default=0) > LONG_WORD_CHARS else f"<td>{html}</td>"


_TAGS = re.compile(r"<[^>]*>")


def muted(text: object) -> Html:
    return tag("span", text, cls="js-muted", style=MUTED_STYLE)


def code_block(code: Html) -> Html:
    """A ``<pre>`` with inline essentials, legible even when ``<style>`` is stripped."""
    return tag("pre", tag("code", code, style=CODE_INNER_STYLE), cls="js-code", style=CODE_STYLE)
