"""HTML and text for :class:`~jaxshow.report.LinkedViews`: source, jaxpr, StableHLO and optimised HLO side by side.

Every line carries its source label (``In[4]:2``) as text, so the view reads
the same with styles and scripts stripped. In a browser, hovering a line
highlights every line with its label, in every pane, in the label's colour;
clicking one keeps it highlighted until the user clicks elsewhere. Both use CSS
only: each labelled line is a ``<span tabindex="-1">`` (focusable by a click,
outside the Tab order), and one rule per label selects
``.js-linked:has(.js-sN:hover)`` or ``:has(.js-sN:focus)``. Only ``<span>``,
``<pre>``, ``<code>``, ``<div>`` and ``<b>`` are used, so a sanitiser that
escapes unknown tags (nbconvert's ``--sanitize-html``) leaves labelled text.
Long lines wrap with a hanging indent past the label. No script, no ids. No
JAX, no IPython.
"""

from __future__ import annotations

from jaxshow.render.limits import TextBudget, ir_line, line
from jaxshow.render.markup import Html, escape_text, muted, tag
from jaxshow.render.paths import located, places, shown_path
from jaxshow.render.style import CODE_INNER_STYLE, CODE_STYLE, LINK_COLOURS
from jaxshow.report import LinkedViews, plural

HINT = ("hover over a line, or click it to keep it lit (click elsewhere to clear): "
        "its source line and every IR line it made light up in one colour")
PANES_STYLE = "display: flex; flex-wrap: wrap; gap: 8px; align-items: flex-start;"
PANE_STYLE = "flex: 1 1 0; min-width: 26em; max-width: 100%;"
HANG_CHARS = 4
"""How far a wrapped IR line's continuation is indented past its label."""


def link_classes(views: LinkedViews) -> dict[str, int]:
    """Each source label -> its number (``js-s{n}``), in source order; its colour is ``n % len(LINK_COLOURS)``."""
    labels = [s.label(i) for s in views.sources for i in range(len(s.lines))]
    labels += [label for ir in views.irs for label in ir.sources if label is not None]
    return {label: n for n, label in enumerate(dict.fromkeys(labels))}


def _panes(views: LinkedViews, budget: TextBudget) -> list[tuple[str, str | None, list[tuple[str | None, str]], int, str]]:
    """``(title, whole path or None, [(label, text)], lines in all, attribute)`` per pane: each source (its file's path
    shortened, as :func:`~jaxshow.render.paths.shown_path` shows it), then each IR."""
    cwd, home = places(budget)
    panes = [(f"source {line(shown_path(s.name, cwd, home), budget)}",
              line(s.name, budget) if shown_path(s.name, cwd, home) != s.name else None,
              [(s.label(i), t) for i, t in enumerate(s.lines)], len(s.lines), f"report.linked.sources[{k}].lines")
             for k, s in enumerate(views.sources)]
    panes += [(line(ir.title, budget), None, list(zip(ir.sources, ir.lines)), len(ir.lines), f"{ir.attribute}.lines")
              for ir in views.irs]
    return panes


def _shown_labels(views: LinkedViews, budget: TextBudget) -> dict[str | None, str]:
    """Each label as the panes show it, its file's path shortened (``model.py:5``); no label, an empty one."""
    return {None: "", **{label: located(label, budget, line) for label in link_classes(views)}}


def _shown(lines: list, budget: TextBudget) -> tuple[list, int]:
    if budget.max_lines <= 0 or len(lines) <= budget.max_lines:
        return lines, 0
    return lines[: budget.max_lines], len(lines) - budget.max_lines


def linked_html(views: LinkedViews, budget: TextBudget) -> Html:
    """The panes side by side (stacked where the page is narrow or the styles are stripped), with their CSS."""
    classes, labels = link_classes(views), _shown_labels(views, budget)
    panes = []
    for title, whole, lines, total, attribute in _panes(views, budget):
        shown, hidden = _shown(lines, budget)
        width = max((len(labels[label]) for label, _ in shown if label), default=0)
        rows = []
        for label, text in shown:
            shown_line = escape_text(f"{labels[label].ljust(width)}  {ir_line(text, budget)}".rstrip() if width else ir_line(text, budget)) + "\n"
            if label is None:
                rows.append(f"<span>{shown_line}</span>")
            else:
                n = classes[label]
                rows.append(f'<span class="js-s{n} js-c{n % len(LINK_COLOURS)}" tabindex="-1">{shown_line}</span>')
        hang = f"--js-hang:{width + 2 + HANG_CHARS if width else HANG_CHARS}ch;"
        code = tag("pre", tag("code", Html("".join(rows)), style=hang + CODE_INNER_STYLE), cls="js-code", style=CODE_STYLE)
        more = [muted(f"{plural(hidden, 'more line')} not shown; all {total:,} in {attribute}")] if hidden else []
        panes.append(tag("div", tag("div", tag("b", title, title=whole)), code, *more, cls="js-pane", style=PANE_STYLE))
    rules = "".join(f".jaxshow .js-linked:has(.js-s{n}:hover) .js-s{n},.jaxshow .js-linked:has(.js-s{n}:focus) .js-s{n}"
                    "{background:var(--js-lit);outline:1px solid var(--js-lit)}" for n in classes.values())
    notes = [tag("div", muted(note)) for note in views.notes]
    linked = tag("div", *panes, Html(f"<style><!--\n{rules}\n--></style>"), cls="js-linked", style=PANES_STYLE)
    return tag("div", muted(HINT), *notes, linked)


def linked_text(views: LinkedViews, budget: TextBudget) -> str:
    """Each pane in turn, every line after its source label."""
    out, labels = [], _shown_labels(views, budget)
    for title, _, lines, total, attribute in _panes(views, budget):
        shown, hidden = _shown(lines, budget)
        width = max((len(labels[label]) for label, _ in shown if label), default=0)
        out.append(f"  {title}:")
        out.extend(f"    {labels[label].ljust(width)}  {ir_line(text, budget)}".rstrip() for label, text in shown)
        if hidden:
            out.append(f"    … {plural(hidden, 'more line')}; all {total:,} in {attribute}")
    out.extend(f"  {note}" for note in views.notes)
    return "\n".join(out)

