"""HTML and text for the ``%jaxcache`` records: misses, trace histories, clears, the persistent cache."""

from __future__ import annotations

import time

from jaxshow import render
from jaxshow.render.markup import Html, TextBudget, code_block, details, escape, join, muted, table, tag
from jaxshow.render.plain import text_table
from jaxshow.render.style import ERROR_STYLE, NOTE_STYLE
from jaxshow.report import (
    MISS_TITLES,
    CacheClearReport,
    CacheMiss,
    CacheReport,
    FunctionCacheStats,
    PersistentCacheReport,
    PersistentCompile,
    TraceHistory,
    format_bytes,
)

TRACE_TIME_NOTE = "ran at trace time: runs once per cache miss, not once per call"
DEBUG_PRINT_HINT = (
    'to print on every call, use jax.debug.print("x = {x}", x=x): the format string and the values are passed '
    "separately, never as an f-string, because the values only exist when the compiled function runs"
)
EVIDENCE_SOURCES = {
    "jax": "JAX's explanation (jax_explain_cache_misses)",
    "jaxshow": "jaxshow's diff against its recent signatures, in JAX's words",
    "none": "no evidence recorded",
}
VERDICT_WORDS = {"written": "written", "skipped": "not written", "hit": "read from disk", "not_cached": "not cached"}


def _count(n: int | None) -> str:
    return "—" if n is None else str(n)


def _headline(report: CacheReport) -> str:
    traced = sum(f.traced for f in report.functions)
    if not report.functions:
        return "no jitted function was called or traced"
    if traced == 0:
        return "no cache miss: every jitted call hit the cache"
    names = len(report.functions)
    return f"{traced} trace{'s' if traced != 1 else ''} of {names} jitted function{'s' if names != 1 else ''}"


def _function_rows(report: CacheReport) -> list[tuple[str, ...]]:
    return [
        (f.qualname, _count(f.calls), str(f.traced), _count(f.hits), _count(f.cache_size), f.defined_at or "—")
        for f in report.functions
    ]


_FUNCTION_HEADER = ("function", "calls", "traced", "hits", "cache entries", "defined at")


def _miss_title(i: int, miss: CacheMiss) -> str:
    return f"{i}. {MISS_TITLES.get(miss.category, miss.category)}"


def _compile_rows(compiles: tuple[PersistentCompile, ...]) -> list[tuple[str, str, str]]:
    """One row per distinct (module, verdict, reason), with ``×N`` where it repeats."""
    counts: dict[tuple[str, str, str], int] = {}
    for c in compiles:
        row = (c.module, VERDICT_WORDS.get(c.verdict, c.verdict), c.reason)
        counts[row] = counts.get(row, 0) + 1
    return [(f"{module} ×{n}" if n > 1 else module, verdict, reason) for (module, verdict, reason), n in counts.items()]


# --- HTML --------------------------------------------------------------------------------------


def _miss_html(i: int, miss: CacheMiss) -> Html:
    body: list[object] = [tag("div", miss.summary)]
    if miss.changes:
        body.append(table(("where", "now", "before"), [(c.where, c.now, c.before) for c in miss.changes]))
    if miss.call_site:
        body.append(tag("div", muted("called at "), miss.call_site))
    if miss.signature:
        body.append(tag("div", muted("signature traced: "), ", ".join(f"{n}: {t}" for n, t in miss.signature)))
    if miss.same_line_hint:
        body.append(tag("div", "JAX: another function was defined on the same line; it may be re-defined on every run", style=NOTE_STYLE))
    if miss.evidence:
        body.append(details(EVIDENCE_SOURCES.get(miss.evidence_source, miss.evidence_source), code_block(escape(miss.evidence))))
    return tag("div", tag("div", tag("strong", _miss_title(i, miss))), *body, style="margin: 4px 0 6px 8px;")


def _function_html(f: FunctionCacheStats) -> Html:
    body: list[object] = [_miss_html(i, m) for i, m in enumerate(f.misses, 1)]
    if f.trace_time_output:
        body.append(
            tag(
                "div",
                tag("strong", f"printed while {f.function} was being traced: {TRACE_TIME_NOTE}"),
                code_block(escape("".join(f.trace_time_output))),
                tag("div", DEBUG_PRINT_HINT),
                style=NOTE_STYLE,
            )
        )
    summary = join([f.qualname, " ", muted(f"traced {f.traced}×" + (f", {f.hits} hits" if f.hits is not None else ""))])
    return details(summary, *body, open=True)


@render.html_body.register
def _(report: CacheReport, budget: TextBudget) -> Html:
    parts: list[object] = [tag("div", tag("strong", "%jaxcache"), " — ", _headline(report), cls="js-head")]
    if report.functions:
        parts.append(table(_FUNCTION_HEADER, _function_rows(report)))
    parts.extend(_function_html(f) for f in report.functions if f.misses or f.trace_time_output)
    if report.persistent:
        parts.append(details("persistent compilation cache", table(("module", "verdict", "why"), _compile_rows(report.persistent)), open=True))
    if report.cell_error:
        parts.append(tag("div", f"the cell raised {report.cell_error.type_name}: {report.cell_error.message}", style=ERROR_STYLE))
    parts.extend(tag("div", muted(n)) for n in report.notes)
    return join(parts)


@render.html_body.register
def _(history: TraceHistory, budget: TextBudget) -> Html:
    rows = [(time.strftime("%H:%M:%S", time.localtime(e.wall_time)), ", ".join(f"{n}: {t}" for n, t in e.signature) or "—",
             MISS_TITLES.get(e.category, e.category), e.summary) for e in history.entries]
    size = _count(history.cache_size) if history.cache_size is not None else history.cache_size_unavailable
    parts: list[object] = [
        tag("div", tag("strong", f"%jaxcache {history.name}"), " — ", history.qualname, cls="js-head"),
        table(None, [("defined at", history.defined_at or "—"), ("traces observed by jaxshow", str(history.traces_observed)),
                     ("cache entries now", size or "—")]),
    ]
    if rows:
        parts.append(table(("when", "signature", "why it traced", "details"), rows))
        if history.traces_observed > len(rows):
            parts.append(muted(f"only the last {len(rows)} of {history.traces_observed} traces are kept"))
    else:
        parts.append(muted(_NO_HISTORY))
    return join(parts)


_NO_HISTORY = "jaxshow has not observed a trace of this function: it records traces in %%jaxcache cells and while %jaxcache on is active"


@render.html_body.register
def _(clear: CacheClearReport, budget: TextBudget) -> Html:
    return join([
        tag("div", tag("strong", f"%jaxcache clear {clear.name}"), cls="js-head"),
        table(None, _clear_rows(clear)),
        tag("div", "not cleared: ", "; ".join(clear.not_cleared)),
    ])


def _clear_rows(clear: CacheClearReport) -> list[tuple[str, str]]:
    return [
        ("cache entries before", _count(clear.entries_before)),
        ("cache entries after", _count(clear.entries_after)),
        ("trace history entries dropped by jaxshow", str(clear.history_entries_cleared)),
    ]


def _persistent_rows(p: PersistentCacheReport) -> list[tuple[str, str]]:
    rows = [
        ("directory", p.directory or "not set"),
        ("set by", p.directory_source),
        ("enabled", "yes" if p.enabled else "no"),
        ("opened by JAX in this process", {True: "yes", False: "not yet", None: "unknown"}[p.initialized]),
    ]
    if p.directory_in_use and p.directory_in_use != p.directory:
        rows.append(("directory JAX writes to", p.directory_in_use))
    if p.listing_unavailable:
        rows.append(("entries on disk", p.listing_unavailable))
    else:
        rows.append(("entries on disk", f"{p.entry_count} ({format_bytes(p.total_bytes)})"))
        if p.newest_entry:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(p.newest_mtime)) if p.newest_mtime else "?"
            rows.append(("newest entry", f"{p.newest_entry} ({stamp})"))
    return rows


@render.html_body.register
def _(p: PersistentCacheReport, budget: TextBudget) -> Html:
    parts: list[object] = [
        tag("div", tag("strong", "%jaxcache persistent"), " — the persistent compilation cache", cls="js-head"),
        table(None, _persistent_rows(p)),
        details("gates: when a compile is written", table(("option", "value", "meaning"), [(g.option, g.value, g.meaning) for g in p.gates]), open=True),
    ]
    if p.compiles:
        parts.append(details("compiles seen in %%jaxcache cells", table(("module", "verdict", "why"), _compile_rows(p.compiles)), open=True))
    else:
        parts.append(muted("no compile observed yet: run a cell under %%jaxcache (or %jaxcache on) to see what each compile did"))
    parts.extend(tag("div", n, style=NOTE_STYLE) for n in p.notes)
    return join(parts)


# --- text --------------------------------------------------------------------------------------


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + line for line in text.rstrip("\n").splitlines()]


def _miss_text(i: int, miss: CacheMiss) -> list[str]:
    lines = [f"    {_miss_title(i, miss)}: {miss.summary}"]
    if miss.call_site:
        lines.append(f"       called at {miss.call_site}")
    if miss.same_line_hint:
        lines.append("       JAX: another function was defined on the same line; it may be re-defined on every run")
    if miss.evidence:
        lines.append(f"       {EVIDENCE_SOURCES.get(miss.evidence_source, miss.evidence_source)}:")
        lines.extend(_indent(miss.evidence, "       | "))
    return lines


@render.text_body.register
def _(report: CacheReport, budget: TextBudget) -> str:
    lines = [f"%jaxcache — {_headline(report)}"]
    lines.extend(text_table(_function_rows(report), _FUNCTION_HEADER, indent="  ", rule=True))
    for f in report.functions:
        if not (f.misses or f.trace_time_output):
            continue
        lines.append(f"  {f.qualname}:")
        for i, miss in enumerate(f.misses, 1):
            lines.extend(_miss_text(i, miss))
        if f.trace_time_output:
            lines.append(f"    printed while {f.function} was being traced: {TRACE_TIME_NOTE}")
            lines.extend(_indent("".join(f.trace_time_output), "       > "))
            lines.append(f"    {DEBUG_PRINT_HINT}")
    if report.persistent:
        lines.append("  persistent compilation cache:")
        lines.extend(text_table(_compile_rows(report.persistent), ("module", "verdict", "why"), indent="    ", rule=True))
    if report.cell_error:
        lines.append(f"  the cell raised {report.cell_error.type_name}: {report.cell_error.message}")
    lines.extend(f"  note: {n}" for n in report.notes)
    return "\n".join(lines)


@render.text_body.register
def _(history: TraceHistory, budget: TextBudget) -> str:
    size = _count(history.cache_size) if history.cache_size is not None else (history.cache_size_unavailable or "—")
    lines = [
        f"%jaxcache {history.name} — {history.qualname}",
        f"  defined at: {history.defined_at or '—'}",
        f"  traces observed by jaxshow: {history.traces_observed}",
        f"  cache entries now: {size}",
    ]
    rows = [(time.strftime("%H:%M:%S", time.localtime(e.wall_time)), ", ".join(f"{n}: {t}" for n, t in e.signature) or "—",
             MISS_TITLES.get(e.category, e.category), e.summary) for e in history.entries]
    if rows:
        lines.extend(text_table(rows, ("when", "signature", "why it traced", "details"), indent="  ", rule=True))
        if history.traces_observed > len(rows):
            lines.append(f"  only the last {len(rows)} of {history.traces_observed} traces are kept")
    else:
        lines.append(f"  {_NO_HISTORY}")
    return "\n".join(lines)


@render.text_body.register
def _(clear: CacheClearReport, budget: TextBudget) -> str:
    lines = [f"%jaxcache clear {clear.name}"]
    lines.extend(f"  {k}: {v}" for k, v in _clear_rows(clear))
    lines.append("  not cleared: " + "; ".join(clear.not_cleared))
    return "\n".join(lines)


@render.text_body.register
def _(p: PersistentCacheReport, budget: TextBudget) -> str:
    lines = ["%jaxcache persistent — the persistent compilation cache"]
    lines.extend(f"  {k}: {v}" for k, v in _persistent_rows(p))
    lines.append("  gates (when a compile is written):")
    lines.extend(text_table([(g.option, g.value, g.meaning) for g in p.gates], ("option", "value", "meaning"), indent="    ", rule=True))
    if p.compiles:
        lines.append("  compiles seen in %%jaxcache cells:")
        lines.extend(text_table(_compile_rows(p.compiles), ("module", "verdict", "why"), indent="    ", rule=True))
    else:
        lines.append("  no compile observed yet: run a cell under %%jaxcache (or %jaxcache on) to see what each compile did")
    lines.extend(f"  note: {n}" for n in p.notes)
    return "\n".join(lines)

