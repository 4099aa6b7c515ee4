"""HTML and text for ``SavedReport``: where ``--save`` wrote, file by file, and what it replaced or left there."""

from __future__ import annotations

from jaxshow import render
from jaxshow.render.limits import TextBudget, line, message
from jaxshow.render.markup import Html, join, table, tag
from jaxshow.render.plain import KEEP, paragraph, table_or_sentences
from jaxshow.render.style import ERROR_STYLE, NOTE_STYLE
from jaxshow.report import SavedReport, format_bytes, plural

KEPT_NAMES_SHOWN = 8


def _head(saved: SavedReport, budget: TextBudget) -> str:
    count = plural(len(saved.files), "file")
    if saved.error:
        return f"could not save to {line(saved.directory, budget)} ({count} written before the error)"
    replaced = sum(f.replaced for f in saved.files)
    return f"saved {count} to {line(saved.directory, budget)}" + (f" (replacing {plural(replaced, 'file')} of the same name)" if replaced else "")


def _columns(saved: SavedReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The table's header and rows; a fourth column marks the files that replaced one of the same name, when any did."""
    if any(f.replaced for f in saved.files):
        return ("file", "size", "holds", "note"), [(f.name, format_bytes(f.size_bytes), f.holds, "replaced" if f.replaced else "")
                                                   for f in saved.files]
    return ("file", "size", "holds"), [(f.name, format_bytes(f.size_bytes), f.holds) for f in saved.files]


def _kept(saved: SavedReport, budget: TextBudget) -> str | None:
    """The names already in the directory that this save left as they were (not part of this report)."""
    if not saved.kept:
        return None
    names = ", ".join(saved.kept[:KEPT_NAMES_SHOWN]) + (", …" if len(saved.kept) > KEPT_NAMES_SHOWN else "")
    return message(f"{plural(len(saved.kept), 'entry', 'entries')} already in this directory, not part of this report, "
                   f"left as they were: {names}", budget)


def _sentence(row: tuple[str, ...]) -> str:
    """A file's row as one sentence, for a terminal narrower than the table: ``f.json (6.09 KiB): signature, … · replaced``."""
    name, size, holds, *note = row
    return f"{name} ({size.replace(' ', KEEP)}): {holds}" + "".join(f" · {n}" for n in note if n)


@render.html_body.register
def _saved_html(saved: SavedReport, budget: TextBudget) -> Html:
    parts = [tag("div", tag("strong", _head(saved, budget)), cls="js-head")]
    if saved.error:
        parts.append(tag("div", message(saved.error, budget), cls="js-error", style=ERROR_STYLE))
    if saved.files:
        header, rows = _columns(saved)
        parts.append(table(header, rows, budget))
    if kept := _kept(saved, budget):
        parts.append(tag("div", kept, cls="js-note", style=NOTE_STYLE))
    return join(parts)


@render.text_body.register
def _saved_text(saved: SavedReport, budget: TextBudget) -> str:
    out = [paragraph("", _head(saved, budget) + (":" if saved.files or saved.error else ""), "    ", budget)]
    if saved.error:
        out.append(paragraph("  ", message(saved.error, budget), "    ", budget))
    out += table_or_sentences(_columns(saved)[1], None, budget, _sentence, indent="  ")
    if kept := _kept(saved, budget):
        out.append(paragraph("  note: ", kept, "    ", budget))
    return "\n".join(out)
