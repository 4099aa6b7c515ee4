"""HTML and text for ``SavedReport``: where ``--save`` wrote, file by file."""

from __future__ import annotations

from jaxshow import render
from jaxshow.render.limits import TextBudget, line, message
from jaxshow.render.markup import Html, join, table, tag
from jaxshow.render.plain import text_table
from jaxshow.render.style import ERROR_STYLE
from jaxshow.report import SavedReport, format_bytes, plural


def _head(saved: SavedReport, budget: TextBudget) -> str:
    count = plural(len(saved.files), "file")
    if saved.error:
        return f"could not save to {line(saved.directory, budget)} ({count} written before the error)"
    return f"saved {count} to {line(saved.directory, budget)}"


def _rows(saved: SavedReport) -> list[tuple[str, str, str]]:
    return [(f.name, format_bytes(f.size_bytes), f.holds) for f in saved.files]


@render.html_body.register
def _saved_html(saved: SavedReport, budget: TextBudget) -> Html:
    parts = [tag("div", tag("strong", _head(saved, budget)), cls="js-head")]
    if saved.error:
        parts.append(tag("div", message(saved.error, budget), cls="js-error", style=ERROR_STYLE))
    if saved.files:
        parts.append(table(("file", "size", "holds"), _rows(saved), budget))
    return join(parts)


@render.text_body.register
def _saved_text(saved: SavedReport, budget: TextBudget) -> str:
    out = [_head(saved, budget) + ":" if saved.files or saved.error else _head(saved, budget)]
    if saved.error:
        out.append(f"  {message(saved.error, budget)}")
    out += text_table(_rows(saved), None, budget, indent="  ")
    return "\n".join(out)
