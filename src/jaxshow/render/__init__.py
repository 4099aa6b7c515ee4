"""Render report records as HTML (notebooks) and plain text (terminals, exports).

``to_html`` and ``to_text`` dispatch on the record type; each feature module
(``stages``, ``cache``, ``config``) registers its own bodies. Every call takes the
``TextBudget`` to render with; nothing is kept between calls but the last few
IR texts rendered (:func:`prepare_ir` renders a call's ahead of its report). Importing this
package fills :data:`jaxshow.report.RENDERERS`, through which the records'
own display methods find their renderers. Rendering never imports JAX or
IPython, and never changes a record.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import singledispatch

from jaxshow import report
from jaxshow.render.limits import DEFAULT_BUDGET, TextBudget
from jaxshow.render.markup import Html, tag
from jaxshow.render.plain import text_width
from jaxshow.render.style import ROOT_STYLE, STYLE_ELEMENT

__all__ = ["DEFAULT_BUDGET", "Rendered", "TextBudget", "html_body", "prepare_ir", "text_body", "to_html", "to_text"]


@singledispatch
def html_body(record: object, budget: TextBudget) -> Html:
    """The HTML of one record, without the root ``div`` and stylesheet."""
    raise TypeError(f"jaxshow cannot render {type(record).__name__} as HTML")


@singledispatch
def text_body(record: object, budget: TextBudget) -> str:
    """The plain-text form of one record."""
    raise TypeError(f"jaxshow cannot render {type(record).__name__} as text")


def to_html(record: object, budget: TextBudget = DEFAULT_BUDGET) -> str:
    """A self-contained HTML fragment: one ``.jaxshow`` root, scoped style, no scripts.

    The ``<style>`` comes last: where a sanitiser prints the element as text, its
    two tags end the report instead of heading it (the rules themselves are an
    HTML comment there, see :mod:`jaxshow.render.style`).
    """
    return tag("div", html_body(record, budget), Html(STYLE_ELEMENT), cls="jaxshow", style=ROOT_STYLE)


def to_text(record: object, budget: TextBudget = DEFAULT_BUDGET) -> str:
    """The plain-text form of a record, for terminals, ``print()`` and exports."""
    if not budget.width:  # the terminal's width, read once, not at each table and paragraph
        budget = dataclasses.replace(budget, width=text_width(budget))
    return text_body(record, budget).rstrip("\n")


@dataclass(frozen=True, slots=True)
class Rendered:
    """A record shown with a given budget: what the magics ``display()``.

    The records' own display methods use the default budget; this wrapper
    carries the budget a user configured, for one display.
    """

    record: object
    budget: TextBudget = DEFAULT_BUDGET

    def _repr_html_(self) -> str:
        return to_html(self.record, self.budget)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self) if cycle else to_text(self.record, self.budget))

    def __repr__(self) -> str:
        return repr(self.record)

    def __str__(self) -> str:
        return to_text(self.record, self.budget)


from jaxshow.render import stages as _stages  # noqa: E402,F401  (registers renderers)
from jaxshow.render.stages import prepare_ir  # noqa: E402
from jaxshow.render import cache as _cache  # noqa: E402,F401  (registers renderers)
from jaxshow.render import saved as _saved  # noqa: E402,F401  (registers renderers)
from jaxshow.render import config as _config  # noqa: E402,F401  (registers renderers)
from jaxshow.render import dump as _dump  # noqa: E402,F401  (registers renderers)
from jaxshow.render import diff as _diff  # noqa: E402,F401  (registers renderers)

report.RENDERERS.update(
    {cls: report.Renderers(html=to_html, text=to_text) for cls in html_body.registry if cls is not object}
)
