"""Render report records as HTML (notebooks) and plain text (terminals, exports).

``to_html`` and ``to_text`` dispatch on the record type; each feature module
(``stages``, ``cache``) registers its own bodies. Rendering never imports JAX
or IPython, and never changes a record. Budgets for long IR texts live in
``budget`` and are set by the magics' configurable options.
"""

from __future__ import annotations

from functools import singledispatch

from jaxshow.render.markup import Html, TextBudget, tag
from jaxshow.render.style import ROOT_STYLE, STYLESHEET

budget = TextBudget()


def set_budget(*, highlight_max_bytes: int | None = None, max_lines: int | None = None) -> None:
    """Change how much IR text reports show (``None`` keeps the current value)."""
    global budget
    budget = TextBudget(
        highlight_max_bytes=budget.highlight_max_bytes if highlight_max_bytes is None else highlight_max_bytes,
        max_lines=budget.max_lines if max_lines is None else max_lines,
    )


@singledispatch
def html_body(record: object) -> Html:
    """The HTML of one record, without the root ``div`` and stylesheet."""
    raise TypeError(f"jaxshow cannot render {type(record).__name__} as HTML")


@singledispatch
def text_body(record: object) -> str:
    """The plain-text form of one record."""
    raise TypeError(f"jaxshow cannot render {type(record).__name__} as text")


def to_html(record: object) -> str:
    """A self-contained HTML fragment: one ``.jaxshow`` root, scoped style, no scripts."""
    return tag("div", Html(f"<style>{STYLESHEET}</style>"), html_body(record), cls="jaxshow", style=ROOT_STYLE)


def to_text(record: object) -> str:
    return text_body(record).rstrip("\n")


from jaxshow.render import stages as _stages  # noqa: E402,F401  (registers renderers)
from jaxshow.render import cache as _cache  # noqa: E402,F401  (registers renderers)
