"""HTML and text for ``StagesDiff`` (``%%jaxstages --diff``) and for any ``TextDiff`` (also in ``%jaxcache``'s misses).

A diff shows its changed lines with :data:`jaxshow.irdiff.CONTEXT_LINES` lines
around them; longer unchanged runs are folded (a closed ``<details>`` in HTML,
``⋯ N unchanged lines`` in text). No JAX, no IPython.
"""

from __future__ import annotations

from jaxshow import render
from jaxshow.irdiff import folded
from jaxshow.render.limits import TextBudget, clean, clip, limit_rows, line, message
from jaxshow.render.markup import Html, code_block, details, escape_text, join, muted, table, tag
from jaxshow.render.paths import located, located_html
from jaxshow.render.plain import KEEP, paragraph, text_table
from jaxshow.render.style import NOTE_STYLE
from jaxshow.report import QuantityChange, StagesDiff, TextDiff, format_bytes, format_count, plural

# Translucent tints and no text colour, as the notes: the line keeps the theme's text colour and reads in light and dark.
_PLUS_STYLE = "background: rgba(46, 160, 67, 0.22);"
_MINUS_STYLE = "background: rgba(248, 81, 73, 0.22);"


def _same_key_parts(d: StagesDiff) -> str:
    if d.config_compared:
        return "same arguments, static values and config"
    return "same arguments and static values (the config context of a trace under a transformation is not read)"


def _quantity(value: float | None, unit: str) -> str:
    if value is None:
        return "not reported"
    return format_bytes(value) if unit == "B" else format_count(value, unit)


def _quantity_row(q: QuantityChange) -> tuple[str, str, str, str]:
    if q.before is not None and q.now is not None:
        delta = q.now - q.before
        change = ("+" if delta > 0 else "−") + _quantity(abs(delta), q.unit)
        if q.before:
            change += f" ({delta / q.before:+.0%})".replace("-", "−")  # the minus sign of the change before it
    else:
        change = "—"
    return q.name, _quantity(q.before, q.unit), _quantity(q.now, q.unit), change


def _runs(diff: TextDiff, budget: TextBudget) -> tuple[list[tuple[str, list[str]]], int]:
    """The folded runs within ``budget.max_lines`` diff lines, and how many lines were left out."""
    runs, used, left = [], 0, 0
    for kind, run in folded(diff.lines):
        room = budget.max_lines - used if budget.max_lines > 0 else len(run)
        if room <= 0:
            left += len(run)
            continue
        runs.append((kind, run[:room]))
        used += min(room, len(run))
        left += max(0, len(run) - room)
    return runs, left


def _diff_code(run: list[str], budget: TextBudget) -> Html:
    out = []
    for piece in run:
        escaped = escape_text(clip(clean(piece), budget.max_line_chars))
        style = _PLUS_STYLE if piece.startswith("+") else _MINUS_STYLE if piece.startswith("-") else None
        out.append(f'<span style="{style}">{escaped}</span>' if style else escaped)
    return code_block(Html("\n".join(out)))


def _counts(diff: TextDiff, space: str = " ") -> str:
    if diff.unavailable:
        return diff.unavailable
    return f"+{diff.added_lines:,}{space}−{diff.removed_lines:,}{space}lines" if diff.changed else "no change (after renumbering names)"


def text_diff_html(diff: TextDiff, attribute: str, budget: TextBudget, *, open: bool | None = None) -> Html:
    """One stage's diff as a ``<details>``: open when it changed, the unchanged runs folded inside."""
    summary = join([tag("b", located_html(diff.stage, budget, line)), " ", muted(_counts(diff))])
    if not diff.changed:
        return tag("div", summary, cls="js-diff")
    runs, left = _runs(diff, budget)
    body: list[object] = []
    for kind, run in runs:
        if kind == "shown":
            body.append(_diff_code(run, budget))
        else:
            body.append(details(muted(f"⋯ {plural(len(run), 'unchanged line')}"), _diff_code(run, budget)))
    if left:
        body.append(muted(f"… {plural(left, 'more diff line')} (all in {attribute}.lines)"))
    return details(summary, *body, open=diff.changed if open is None else open, cls="js-diff")


def text_diff_lines(diff: TextDiff, attribute: str, budget: TextBudget, indent: str) -> list[str]:
    """One stage's diff as text: a heading, then the changed lines and ``⋯ N unchanged lines`` between them."""
    out = [paragraph(indent, f"{located(diff.stage, budget, line)}: {_counts(diff, KEEP)}", indent + "    ", budget)]
    if not diff.changed:
        return out
    runs, left = _runs(diff, budget)
    for kind, run in runs:
        if kind == "shown":
            out.extend(f"{indent}  {clip(clean(piece), budget.max_line_chars)}" for piece in run)
        else:
            out.append(f"{indent}  ⋯ {plural(len(run), 'unchanged line')}")
    if left:
        out.append(f"{indent}  … {plural(left, 'more diff line')} (all in {attribute}.lines)")
    return out


def _headline(d: StagesDiff) -> str:
    if d.previous_missing:
        return "nothing to compare"
    if not d.changed:
        return f"{d.before} → {d.now}: no change"
    return f"{d.before} → {d.now}"


@render.html_body.register
def _(d: StagesDiff, budget: TextBudget) -> Html:
    return stages_diff_html(d, "diff", budget)


def stages_diff_html(d: StagesDiff, attribute: str, budget: TextBudget) -> Html:
    parts: list[object] = [tag("div", tag("strong", "--diff "), line(d.function, budget), " ", muted(line(_headline(d), budget)), cls="js-head")]
    if d.previous_missing:
        parts.append(tag("div", message(d.previous_missing, budget), style=NOTE_STYLE))
        return tag("div", *parts, cls="js-stages-diff")
    if d.key_changes:
        changes, more = limit_rows(d.key_changes, budget, f"{attribute}.key_changes")
        parts.append(details("what JAX keys its caches on", table(("where", "now", "before"), [(c.where, c.now, c.before) for c in changes],
                                                                 budget, more=more), open=True))
    else:
        parts.append(tag("div", muted(_same_key_parts(d))))
    parts.extend(text_diff_html(t, f"{attribute}.texts[{i}]", budget) for i, t in enumerate(d.texts))
    if d.quantities:
        parts.append(details("cost and memory", table(("figure", "before", "now", "change"), [_quantity_row(q) for q in d.quantities], budget),
                             open=True))
    parts.extend(tag("div", muted(message(n, budget))) for n in d.notes)
    return tag("div", *parts, cls="js-stages-diff")


@render.text_body.register
def _(d: StagesDiff, budget: TextBudget) -> str:
    return stages_diff_text(d, "diff", budget)


def stages_diff_text(d: StagesDiff, attribute: str, budget: TextBudget) -> str:
    out = [f"--diff {line(d.function, budget)}: {line(_headline(d), budget)}"]
    if d.previous_missing:
        out.append(paragraph("  ", message(d.previous_missing, budget), "  ", budget))
        return "\n".join(out)
    if d.key_changes:
        changes, more = limit_rows(d.key_changes, budget, f"{attribute}.key_changes")
        out.append("  what JAX keys its caches on:")
        out.extend(text_table([(c.where, c.now, c.before) for c in changes], ("where", "now", "before"), budget, indent="    ", more=more))
    else:
        out.append(f"  {_same_key_parts(d)}")
    for i, t in enumerate(d.texts):
        out.extend(text_diff_lines(t, f"{attribute}.texts[{i}]", budget, "  "))
    if d.quantities:
        out.append("  cost and memory:")
        out.extend(text_table([_quantity_row(q) for q in d.quantities], ("figure", "before", "now", "change"), budget, indent="    "))
    out.extend(paragraph("  note: ", message(n, budget), "    ", budget) for n in d.notes)
    return "\n".join(out)
