"""HTML and text for the ``%jaxcache`` records: misses, trace histories, clears, the persistent cache."""

from __future__ import annotations

import dataclasses
import time
from typing import Sequence

from jaxshow import render
from jaxshow.render.diff import text_diff_html, text_diff_lines
from jaxshow.render.groups import SIGNATURE_LEAVES, signature_parts
from jaxshow.render.limits import TextBudget, block, limit_rows, line, message
from jaxshow.render.markup import Html, code_block, details, escape, join, muted, table, tag
from jaxshow.render.paths import Place, located, located_html
from jaxshow.render.plain import paragraph, table_or_sentences
from jaxshow.render.style import ERROR_STYLE, NOTE_STYLE
from jaxshow.report import (
    CacheClearReport,
    CacheMiss,
    CacheReport,
    FunctionCacheStats,
    PersistentCacheReport,
    PersistentCompile,
    TraceEntry,
    TraceHistory,
    format_bytes,
    miss_title,
    plural,
    told_apart,
    unseen_hits,
)

SAME_CALL_SITE_HINT = ("JAX: another function was traced for the first time from this same call site before "
                       "(a loop over functions, or an earlier definition of this one: if so, it is re-defined on every run)")
"""JAX's same-line hint, said as what JAX checks: the call site of the miss, not where the function was defined."""
NO_LINE_OF_YOURS = "(no line of yours on its stack)"
"""After the thread of a miss with no call site: a thread pool's worker called the jitted function."""
TRACE_TIME_NOTE = "ran at trace time: runs once per cache miss, not once per call"
DEBUG_PRINT_HINT = (
    'to print on every call, use jax.debug.print("x = {x}", x=x): the format string and the values are passed '
    "separately, never as an f-string, because the values only exist when the compiled function runs"
)
EVIDENCE_SOURCES = {
    "jax": "JAX's explanation (jax_explain_cache_misses)",
    "jaxshow": "jaxshow's diff against the closest earlier signature, in JAX's words",
    "none": "no evidence recorded",
}
LEFT_OUT_WORDS = {
    "never_seen": "never-seen function",
    "redefined": "re-defined function",
    "tracing_context": "different tracing context",
    "static_args": "different static arguments",
    "input_pytree": "different input pytree",
    "debug_info": "different debug info",
    "input_types": "different input types",
    "not_kept": "after a trace JAX did not keep",
    "other": "other",
}
"""How the line for the misses not kept in detail counts each category: ``985 different input types``."""

MISS_CHANGE_ROWS = 10
MISS_EVIDENCE_LINES = 40
"""Rows of changed values and lines of evidence shown per miss (fewer if the budget says so); the record holds them all."""

VERDICT_WORDS = {"written": "written", "skipped": "not written", "hit": "read from disk", "not_cached": "not cached", "unknown": "not known"}


NOT_TRACED_NOR_CALLED = "no jitted function of yours was traced, nor called by the cell's top-level code"
"""A cell's headline where none traced: its own calls (outside a ``def``, ``lambda`` or class) are all jaxshow sees of the
calls that hit JAX's cache; one inside a function of the user's, or on another thread, hits in C++, unseen."""


def _count(n: int | None) -> str:
    return "—" if n is None else str(n)


def _headline(report: CacheReport) -> str:
    traced = sum(f.traced for f in report.functions)
    if not report.functions and report.jit_disabled:
        return "no jitted call seen: jit was disabled in this cell (see the note)"
    if not report.functions:  # a call that raised is not counted (it never returned), so a raising cell says only this
        if report.cell_error:
            return "no jitted function of yours was traced"
        if not report.hits_counted:  # jaxshow.explain(): only traces are seen
            return "no jitted function of yours was traced"
        return NOT_TRACED_NOR_CALLED
    untracked = sum(f.untracked_calls for f in report.functions)
    if traced == 0 and untracked:
        return f"no trace seen: {plural(untracked, 'call')} of jax.pmap, whose traces and hits jaxshow does not see (see the note)"
    recompiled = sum(len(f.recompiled) for f in report.functions)
    if traced == 0 and recompiled:
        return f"no trace, but {plural(recompiled, 'call')} compiled from an earlier trace (see the note)"
    disabled = sum(f.jit_disabled for f in report.functions)
    compiled = sum(f.compiled_calls for f in report.functions)
    refused = sum(f.refused for f in report.functions)
    if traced == 0 and (disabled or compiled or refused):
        hits = sum(f.hits or 0 for f in report.functions)
        ran = ", ".join(([f"{plural(disabled, 'call')} ran op by op under jax.disable_jit()"] if disabled else [])
                        + ([f"{plural(compiled, 'call')} ran a jax.stages.Compiled"] if compiled else [])
                        + ([f"{plural(refused, 'call')} refused by jax.no_tracing()"] if refused else [])) + " (see the note)"
        lead = "no trace" if refused else "no cache miss"  # a refused call missed JAX's C++ cache
        return f"{lead}: {plural(hits, 'call')} hit the cache, {ran}" if hits else f"no trace: {ran}"
    if traced == 0:
        return "no cache miss: every jitted call hit the cache"
    tracing = [f for f in report.functions if f.traced]  # the rows of functions every call of which hit are not theirs
    names = len(tracing)
    objects = sum(f.objects for f in tracing)
    head = f"{plural(traced, 'trace')} of {plural(names, 'jitted function')}"
    return f"{head} ({plural(objects, 'function object')})" if objects > names else head


def _unseen_note(report: CacheReport) -> str | None:
    """What the counts leave out: a row's traces made by calls not written in the cell, and, where the cell called
    functions of the user's that may make jitted calls, that those calls' hits are unseen (said beside a row whose
    calls are not counted, or no row at all)."""
    if report.jit_disabled:
        return None
    elsewhere = [(f, n) for f in report.functions if f.traced_calls is not None and (n := f.traced - f.traced_calls - f.traced_ahead) > 0]
    unseen = report.unseen_inside and (elsewhere or not report.functions or any(f.calls is None for f in report.functions))
    if not elsewhere:
        return unseen_hits(report.unseen_inside) if unseen else None
    traces = ", ".join(f"{told_apart(f, report.functions)}'s {plural(n, 'trace')} made by {'a call' if n == 1 else 'calls'} elsewhere"
                       for f, n in elsewhere)
    counted = f"calls and hits count the calls written in the cell, not {traces}"
    return f"{counted}. {unseen_hits(report.unseen_inside, capital=True)}" if unseen else counted


def _notes(report: CacheReport) -> tuple[str, ...]:
    return report.notes if (unseen := _unseen_note(report)) is None else (unseen, *report.notes)


def _named(f: FunctionCacheStats, budget: TextBudget) -> str:
    """The row's function: ``body (120 function objects)`` for a folded row."""
    name = line(f.qualname, budget)
    return f"{name} ({plural(f.objects, 'function object')})" if f.objects > 1 else name


def _heading(f: FunctionCacheStats, report: CacheReport, budget: TextBudget, place: Place = located) -> list[str]:
    """A function's section heading: :func:`_named`, and where another row has its name, where it was defined."""
    if told_apart(f, report.functions) == f.qualname:
        return [_named(f, budget)]
    return [_named(f, budget), " (defined at ", place(f.defined_at, budget, line), ")"]


def _function_rows(functions: Sequence[FunctionCacheStats], budget: TextBudget, place: Place = located) -> list[tuple[str, ...]]:
    return [(_named(f, budget), _count(f.calls), str(f.traced), _count(f.hits), _count(f.cache_size),
             place(f.defined_at, budget, line) if f.defined_at else "—") for f in functions]


_FUNCTION_HEADER = ("function", "calls", "traced", "hits", "cache entries", "defined at")


def _function_sentence(row: tuple[str, ...]) -> str:
    """A row of the functions' table as a sentence, for a terminal narrower than the table (a library's long names and
    paths): ``JAXTrainer.train_step: traced 1 · defined at /…/keras/src/backend/jax/trainer.py:73``."""
    name, calls, traced, hits, entries, where = row
    counts = [f"{label} {value}" for label, value in (("calls", calls), ("traced", traced), ("hits", hits),
                                                        ("cache entries", entries)) if value != "—"]
    return f"{name}: {', '.join(counts)}" + (f" · defined at {where}" if where != "—" else "")
_COMPILE_HEADER = ("module", "verdict", "why")
_HISTORY_HEADER = ("when", "signature", "why it traced", "details")
_GATE_HEADER = ("option", "value", "meaning")


def _miss_title(i: int, miss: CacheMiss, budget: TextBudget) -> str:
    return f"{i}. {miss_title(miss.category, miss.blame is not None, miss.reloaded, miss.made_in, miss.made_by) or line(miss.category, budget)}"


def _evidence_source(miss: CacheMiss, budget: TextBudget) -> str:
    return EVIDENCE_SOURCES.get(miss.evidence_source) or line(miss.evidence_source, budget)


def _compile_rows(compiles: tuple[PersistentCompile, ...]) -> list[tuple[str, str, str]]:
    """One row per distinct (module, verdict, reason), with ``×N`` where it repeats."""
    counts: dict[tuple[str, str, str], int] = {}
    for c in compiles:
        row = (c.module, VERDICT_WORDS.get(c.verdict, c.verdict), c.reason)
        counts[row] = counts.get(row, 0) + 1
    return [(f"{module} ×{n}" if n > 1 else module, verdict, reason) for (module, verdict, reason), n in counts.items()]


def _history_rows(entries: Sequence[TraceEntry], budget: TextBudget, place: Place = located) -> list[tuple[str, str, str, str]]:
    return [
        (time.strftime("%H:%M:%S", time.localtime(e.wall_time)), _signature(e.signature) or "—",
         miss_title(e.category, False, e.reloaded, e.made_in, e.made_by) or e.category, place(e.summary, budget, line))
        for e in entries
    ]


def _signature(signature: tuple[tuple[str, str], ...]) -> str:
    """Leaf by leaf, or past :data:`SIGNATURE_LEAVES` leaves by argument (``model: 16 arrays (f32, 576 values)``)."""
    return ", ".join(signature_parts(signature))


def _all_leaves(signature: tuple[tuple[str, str], ...]) -> str | None:
    """``'all 17 leaves'`` for a signature said by argument, else ``None``."""
    return f"all {len(signature):,} leaves" if len(signature) > SIGNATURE_LEAVES else None


def _numbered(f: FunctionCacheStats, misses: Sequence[CacheMiss]) -> list[tuple[int, CacheMiss]]:
    """Each shown miss with its number among all the function's misses (those left out keep their numbers)."""
    return [(j + 1 if j < f.left_out_after or not f.misses_left_out else j + 1 + f.misses_left_out, m) for j, m in enumerate(misses)]


def _left_out(f: FunctionCacheStats, budget: TextBudget) -> str:
    """``… 990 more misses of f, counted but not kept: 985 different input types, 5 different static arguments``;
    of a folded row, ``… 118 more function objects of body, each traced once as in 2.: called at In[2]:4 ×118``."""
    if f.objects > 1:
        return (f"… {plural(f.misses_left_out, 'more function object')} of {line(f.qualname, budget)}, each traced once "
                f"as in {f.left_out_after}.: called at {_sites(f.folded_sites, budget)}")
    counts = ", ".join(f"{n:,} {LEFT_OUT_WORDS.get(c) or line(c, budget)}" for c, n in f.left_out_by_category)
    more = f"… {plural(f.misses_left_out, 'more miss', 'more misses')} of {line(f.qualname, budget)}, counted but not kept"
    return f"{more}: {counts}" if counts else more


FOLDED_SITES_NAMED = 3
"""Call sites named on a folded row's line; the others are counted."""


def _sites(sites: Sequence[tuple[str, int]], budget: TextBudget) -> str:
    """``In[2]:4 ×60, In[2]:9 ×58, and 2 more call sites ×2``."""
    named = ", ".join(f"{line(site, budget)} ×{n:,}" for site, n in sites[:FOLDED_SITES_NAMED])
    others = sites[FOLDED_SITES_NAMED:]
    if not others:
        return named
    return f"{named}, and {plural(len(others), 'more call site')} ×{sum(n for _, n in others):,}"


def _miss_budget(budget: TextBudget) -> TextBudget:
    """The budget of one miss: at most :data:`MISS_CHANGE_ROWS` changes and :data:`MISS_EVIDENCE_LINES` lines of evidence."""
    rows = MISS_CHANGE_ROWS if budget.max_rows <= 0 else min(budget.max_rows, MISS_CHANGE_ROWS)
    lines = MISS_EVIDENCE_LINES if budget.max_lines <= 0 else min(budget.max_lines, MISS_EVIDENCE_LINES)
    return dataclasses.replace(budget, max_rows=rows, max_lines=lines)


def _misses_of(report: CacheReport) -> list[tuple[int, FunctionCacheStats]]:
    """The functions that get a section of their own, with their index in ``report.functions``."""
    return [(k, f) for k, f in enumerate(report.functions) if f.misses or f.misses_left_out or f.trace_time_output]


# --- HTML --------------------------------------------------------------------------------------


def _miss_html(i: int, miss: CacheMiss, attribute: str, budget: TextBudget) -> Html:
    budget = _miss_budget(budget)
    body: list[object] = [tag("div", located_html(miss.summary, budget, message))]
    if miss.changes:
        changes, more = limit_rows(miss.changes, budget, f"{attribute}.changes")
        body.append(table(("where", "now", "before"), [(c.where, c.now, c.before) for c in changes], budget, more=more))
    if miss.call_site:
        body.append(tag("div", muted("called at "), located_html(miss.call_site, budget, line)))
    elif miss.thread:
        body.append(tag("div", muted("called on thread "), line(miss.thread, budget), f" {NO_LINE_OF_YOURS}"))
    if miss.trace_error is not None:
        body.append(tag("div", muted("the trace raised "), _trace_error(miss, budget), style=ERROR_STYLE))
    if (blamed := _blame(miss)) is not None:
        body.append(tag("div", muted("a library re-traced: "), located_html(blamed, budget, message)))
    if miss.signature:
        body.append(tag("div", muted("signature traced: "), message(_signature(miss.signature), budget)))
        if (leaves := _all_leaves(miss.signature)) is not None:
            listed = ", ".join(f"{name}: {type_}" for name, type_ in miss.signature)
            body.append(details(f"{leaves} ({attribute}.signature)", tag("div", message(listed, budget))))
    if miss.same_line_hint:
        body.append(tag("div", SAME_CALL_SITE_HINT, style=NOTE_STYLE))
    if miss.evidence:
        body.append(details(_evidence_source(miss, budget), code_block(located_html(miss.evidence, budget, block))))
    body.extend(tag("div", located_html(note, budget, block), style=NOTE_STYLE) for note in miss.evidence_notes)
    if miss.jaxpr_diff is not None:
        body.append(text_diff_html(miss.jaxpr_diff, f"{attribute}.jaxpr_diff", budget, open=False))
    return tag("div", tag("div", tag("strong", _miss_title(i, miss, budget))), *body, style="margin: 4px 0 6px 8px;")


def _function_html(k: int, f: FunctionCacheStats, report: CacheReport, budget: TextBudget) -> Html:
    misses, more = limit_rows(f.misses, budget, f"report.functions[{k}].misses")
    body: list[object] = []
    for j, (i, m) in enumerate(_numbered(f, misses)):
        if f.misses_left_out and j == f.left_out_after:
            body.append(tag("div", muted(located_html(_left_out(f, budget), budget))))
        body.append(_miss_html(i, m, f"report.functions[{k}].misses[{j}]", budget))
    if more:
        body.append(muted(more))
    if f.misses_left_out and f.left_out_after >= len(misses):
        body.append(tag("div", muted(located_html(_left_out(f, budget), budget))))
    if f.trace_time_output:
        body.append(
            tag(
                "div",
                tag("strong", f"printed while {line(f.function, budget)} was being traced: {TRACE_TIME_NOTE}"),
                code_block(escape(block("".join(f.trace_time_output), budget))),
                tag("div", DEBUG_PRINT_HINT),
                style=NOTE_STYLE,
            )
        )
    summary = join([*_heading(f, report, budget, located_html), " ", muted(f"traced {f.traced}×" + (f", {plural(f.hits, 'hit')}" if f.hits is not None else ""))])
    return details(summary, *body, open=True)


@render.html_body.register
def _(report: CacheReport, budget: TextBudget) -> Html:
    parts: list[object] = [tag("div", tag("strong", "%jaxcache"), " — ", _headline(report), cls="js-head")]
    if report.functions:
        functions, more = limit_rows(report.functions, budget, "report.functions")
        parts.append(table(_FUNCTION_HEADER, _function_rows(functions, budget, located_html), budget, more=more))
    sections, more_sections = limit_rows(_misses_of(report), budget, "report.functions")
    parts.extend(_function_html(k, f, report, budget) for k, f in sections)
    if more_sections:
        parts.append(muted(more_sections))
    if report.persistent:
        compiles, more = limit_rows(_compile_rows(report.persistent), budget, "report.persistent")
        parts.append(details("persistent compilation cache", table(_COMPILE_HEADER, compiles, budget, more=more),
                             *(tag("div", message(m, budget), style=NOTE_STYLE) for m in _missed(report.persistent)), open=True))
    if report.cell_error:
        parts.append(tag("div", _raised(report, budget), style=ERROR_STYLE))
    parts.extend(tag("div", muted(located_html(n, budget, message))) for n in _notes(report))
    return join(parts)


def _trace_error(miss: CacheMiss, budget: TextBudget) -> str:
    """What a trace raised, in one line: its type and its message's first line (the cell's traceback has the rest)."""
    error = miss.trace_error
    first = error.message.splitlines()[0] if error.message else ""
    return line(error.type_name, budget) + (f": {message(first, budget)}" if first else "")


def _raised(report: CacheReport, budget: TextBudget) -> str:
    error = report.cell_error
    return f"the cell raised {line(error.type_name, budget)}" + (f": {message(error.message, budget)}" if error.message else "")


@render.html_body.register
def _(history: TraceHistory, budget: TextBudget) -> Html:
    entries, more = limit_rows(history.entries, budget, "report.entries")
    parts: list[object] = [
        tag("div", tag("strong", f"%jaxcache {line(history.name, budget)}"),
            *((" — ", line(history.qualname, budget)) if history.qualname != history.name else ()), cls="js-head"),
        table(None, _history_facts(history, budget, located_html), budget),
    ]
    if entries:
        parts.append(table(_HISTORY_HEADER, _history_rows(entries, budget, located_html), budget, more=more))
        if history.traces_observed > len(history.entries):
            parts.append(muted(_only_last(history)))
    else:
        parts.append(muted(_NO_HISTORY))
    return join(parts)


_NO_HISTORY = "jaxshow has not observed a trace of this function: it records traces in %%jaxcache cells and while %jaxcache on is active"


def _history_facts(history: TraceHistory, budget: TextBudget, place: Place = located) -> list[tuple[str, str]]:
    size = _count(history.cache_size) if history.cache_size is not None else history.cache_size_unavailable
    facts = [
        ("defined at", place(history.defined_at, budget, line) if history.defined_at else "—"),
        ("traces observed by jaxshow", str(history.traces_observed) + (" (of this function object)" if history.objects > 1 else "")),
        ("cache entries now", size or "—"),
    ]
    if history.objects > 1:
        facts.insert(2, ("function objects of this definition", (
            f"{history.objects}, {plural(history.objects_traced, 'trace')} in all ({history.made}; a %jaxcache report "
            f"folds them into one row, '{history.qualname} ({history.objects} function objects)')")))
    return facts


def _only_last(history: TraceHistory) -> str:
    return f"only the last {len(history.entries):,} of {plural(history.traces_observed, 'trace')} are kept"


@render.html_body.register
def _(clear: CacheClearReport, budget: TextBudget) -> Html:
    return join([
        tag("div", tag("strong", f"%jaxcache clear {line(clear.name, budget)}"), cls="js-head"),
        table(None, _clear_rows(clear), budget),
        tag("div", "not cleared: ", _not_cleared(clear, budget)),
    ])


def _clear_rows(clear: CacheClearReport) -> list[tuple[str, str]]:
    return [
        ("cache entries before", _count(clear.entries_before)),
        ("cache entries after", _count(clear.entries_after)),
        ("trace history entries dropped by jaxshow", str(clear.history_entries_cleared)),
    ]


def _not_cleared(clear: CacheClearReport, budget: TextBudget) -> str:
    return "; ".join(message(reason, budget) for reason in clear.not_cleared)


def _persistent_rows(p: PersistentCacheReport) -> list[tuple[str, str]]:
    facts = [
        ("directory", p.directory or "not set"),
        ("set by", p.directory_source),
        ("enabled", "yes" if p.enabled else "no"),
        ("opened by JAX in this process", f"no: {p.not_opened}" if p.not_opened else {True: "yes", False: "not yet", None: "unknown"}[p.initialized]),
    ]
    if p.directory_in_use and p.directory_in_use != p.directory:
        facts.append(("directory JAX writes to", p.directory_in_use))
    if p.listing_unavailable:
        facts.append(("entries on disk", p.listing_unavailable))
    else:
        facts.append(("entries on disk", f"{p.entry_count} ({format_bytes(p.total_bytes)})"))
        if p.newest_entry:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(p.newest_mtime)) if p.newest_mtime else "?"
            facts.append(("newest entry", f"{p.newest_entry} ({stamp})"))
    if p.key_store:
        facts.append(("key parts kept by jaxshow", p.key_store))
    return facts


@render.html_body.register
def _(p: PersistentCacheReport, budget: TextBudget) -> Html:
    gates, more_gates = limit_rows(p.gates, budget, "report.gates")
    parts: list[object] = [
        tag("div", tag("strong", "%jaxcache persistent"), " — the persistent compilation cache", cls="js-head"),
        table(None, _persistent_rows(p), budget),
        details("gates: when a compile is written", table(_GATE_HEADER, [(g.option, g.value, g.meaning) for g in gates], budget, more=more_gates), open=True),
    ]
    if p.compiles:
        compiles, more = limit_rows(_compile_rows(p.compiles), budget, "report.compiles")
        parts.append(details("compiles seen in %%jaxcache cells", table(_COMPILE_HEADER, compiles, budget, more=more),
                             *(tag("div", message(m, budget), style=NOTE_STYLE) for m in _missed(p.compiles)), open=True))
    else:
        parts.append(muted(_NO_COMPILE))
    parts.extend(tag("div", message(n, budget), style=NOTE_STYLE) for n in p.notes)
    return join(parts)


_NO_COMPILE = "no compile observed yet: run a cell under %%jaxcache (or %jaxcache on) to see what each compile did"


# --- text --------------------------------------------------------------------------------------


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + piece for piece in text.rstrip("\n").splitlines()]


def _quoted(text: str, prefix: str, budget: TextBudget) -> list[str]:
    """Lines of text (JAX's words, or jaxshow's note on them) under ``prefix``, each line wrapped at the width four columns inside its own indent (JAX nests by
    two)."""
    out: list[str] = []
    for piece in text.rstrip("\n").splitlines():
        lead = prefix + piece[:len(piece) - len(piece.lstrip())]
        out.extend(paragraph(lead, piece.lstrip(), lead + "    ", budget).split("\n"))
    return out


def _blame(miss: CacheMiss) -> str | None:
    """``In[5]:2 called mylib.update (mylib.py:12), which passed factor differently to _scaled``; ``None`` for a
    first trace, which no library made again."""
    b = miss.blame
    effect = b.effect(miss.category, miss.changes) if b is not None else None
    return f"{b.user_line} called {b.library_function} ({b.library_line}), {effect}" if effect else None


def _left_out_text(f: FunctionCacheStats, budget: TextBudget) -> str:
    """The line for the misses left out, wrapped where it names call sites (a folded row's)."""
    left_out = located(_left_out(f, budget), budget)
    return paragraph("    ", left_out, "      ", budget) if f.objects > 1 else f"    {left_out}"


def _miss_text(i: int, miss: CacheMiss, attribute: str, budget: TextBudget) -> list[str]:
    budget = _miss_budget(budget)
    lines = [paragraph("    ", f"{_miss_title(i, miss, budget)}: {located(miss.summary, budget, message)}", "       ", budget)]
    if miss.call_site:
        lines.append(f"       called at {located(miss.call_site, budget, line)}")
    elif miss.thread:
        lines.append(f"       called on thread {line(miss.thread, budget)} {NO_LINE_OF_YOURS}")
    if miss.trace_error is not None:
        lines.append(paragraph("       the trace raised ", _trace_error(miss, budget), "         ", budget))
    if (blamed := _blame(miss)) is not None:
        lines.append(paragraph("       a library re-traced: ", located(blamed, budget, message), "         ", budget))
    if miss.signature:
        leaves = _all_leaves(miss.signature)
        said = _signature(miss.signature) + (f" ({leaves} in {attribute}.signature)" if leaves else "")
        lines.append(paragraph("       signature traced: ", message(said, budget), "         ", budget))
    if miss.same_line_hint:
        lines.append(paragraph("       ", SAME_CALL_SITE_HINT, "         ", budget))
    if miss.evidence:
        lines.append(f"       {_evidence_source(miss, budget)}:")
        lines.extend(_quoted(located(miss.evidence, budget, block), "       | ", budget))
    for note in miss.evidence_notes:
        lines.extend(_quoted(located(note, budget, block), "       ", budget))
    if miss.jaxpr_diff is not None:
        lines.extend(text_diff_lines(miss.jaxpr_diff, f"{attribute}.jaxpr_diff", budget, "       "))
    return lines


def _missed(compiles: Sequence[PersistentCompile]) -> list[str]:
    """For each module whose lookup found no entry though others of it are in the directory, why (once per text)."""
    return list(dict.fromkeys(f"{c.module}: not found, though {c.missed}" for c in compiles if c.missed))


def _compile_lines(rows: list[tuple[str, str, str]], budget: TextBudget, more: str | None) -> list[str]:
    """The persistent cache's verdicts as a table, or a sentence each where the table is wider than the terminal."""
    return table_or_sentences(rows, _COMPILE_HEADER, budget, lambda r: f"{r[0]}: {r[1]} · {r[2]}", indent="    ", rule=True, more=more)


@render.text_body.register
def _(report: CacheReport, budget: TextBudget) -> str:
    lines = [paragraph("%jaxcache — ", _headline(report), "  ", budget)]
    functions, more = limit_rows(report.functions, budget, "report.functions")
    if functions:
        lines.extend(table_or_sentences(_function_rows(functions, budget), _FUNCTION_HEADER, budget, _function_sentence,
                                        indent="  ", rule=True, more=more))
    sections, more_sections = limit_rows(_misses_of(report), budget, "report.functions")
    for k, f in sections:
        lines.append(f"  {''.join(_heading(f, report, budget))}:")
        misses, more_misses = limit_rows(f.misses, budget, f"report.functions[{k}].misses")
        for j, (i, miss) in enumerate(_numbered(f, misses)):
            if f.misses_left_out and j == f.left_out_after:
                lines.append(_left_out_text(f, budget))
            lines.extend(_miss_text(i, miss, f"report.functions[{k}].misses[{j}]", budget))
        if more_misses:
            lines.append(f"    {more_misses}")
        if f.misses_left_out and f.left_out_after >= len(misses):
            lines.append(_left_out_text(f, budget))
        if f.trace_time_output:
            lines.append(paragraph("    ", f"printed while {line(f.function, budget)} was being traced: {TRACE_TIME_NOTE}", "      ", budget))
            lines.extend(_indent(block("".join(f.trace_time_output), budget), "       > "))
            lines.append(paragraph("    ", DEBUG_PRINT_HINT, "      ", budget))
    if more_sections:
        lines.append(f"  {more_sections}")
    if report.persistent:
        compiles, more = limit_rows(_compile_rows(report.persistent), budget, "report.persistent")
        lines.append("  persistent compilation cache:")
        lines.extend(_compile_lines(compiles, budget, more))
        lines.extend(paragraph("    ", message(m, budget), "      ", budget) for m in _missed(report.persistent))
    if report.cell_error:
        lines.append(paragraph("  ", _raised(report, budget), "    ", budget))
    lines.extend(paragraph("  note: ", located(n, budget, message), "    ", budget) for n in _notes(report))
    return "\n".join(lines)


@render.text_body.register
def _(history: TraceHistory, budget: TextBudget) -> str:
    lines = ([paragraph(f"%jaxcache {line(history.name, budget)} — ", line(history.qualname, budget), "  ", budget)]
             if history.qualname != history.name else [f"%jaxcache {line(history.name, budget)}"])
    lines.extend(paragraph(f"  {label}: ", line(value, budget), "    ", budget) for label, value in _history_facts(history, budget))
    entries, more = limit_rows(history.entries, budget, "report.entries")
    if entries:
        lines.extend(table_or_sentences(_history_rows(entries, budget), _HISTORY_HEADER, budget,
                                        lambda r: f"{r[0]} {r[2]}: {r[3]}\nsignature: {r[1]}", indent="  ", rule=True, more=more))
        if history.traces_observed > len(history.entries):
            lines.append(paragraph("  ", _only_last(history), "    ", budget))
    else:
        lines.append(paragraph("  ", _NO_HISTORY, "    ", budget))
    return "\n".join(lines)


@render.text_body.register
def _(clear: CacheClearReport, budget: TextBudget) -> str:
    lines = [f"%jaxcache clear {line(clear.name, budget)}"]
    lines.extend(paragraph(f"  {k}: ", v, "    ", budget) for k, v in _clear_rows(clear))
    lines.append(paragraph("  not cleared: ", _not_cleared(clear, budget), "    ", budget))
    return "\n".join(lines)


@render.text_body.register
def _(p: PersistentCacheReport, budget: TextBudget) -> str:
    lines = ["%jaxcache persistent — the persistent compilation cache"]
    lines.extend(paragraph(f"  {k}: ", line(v, budget), "    ", budget) for k, v in _persistent_rows(p))
    gates, more_gates = limit_rows(p.gates, budget, "report.gates")
    lines.append("  gates (when a compile is written):")
    rows = [(g.option, g.value, g.meaning) for g in gates]
    lines.extend(table_or_sentences(rows, _GATE_HEADER, budget, lambda r: f"{r[0]}: {r[1]} · {r[2]}", indent="    ", rule=True,
                                    more=more_gates))
    if p.compiles:
        compiles, more = limit_rows(_compile_rows(p.compiles), budget, "report.compiles")
        lines.append("  compiles seen in %%jaxcache cells:")
        lines.extend(_compile_lines(compiles, budget, more))
        lines.extend(paragraph("    ", message(m, budget), "      ", budget) for m in _missed(p.compiles))
    else:
        lines.append(paragraph("  ", _NO_COMPILE, "    ", budget))
    lines.extend(paragraph("  note: ", message(n, budget), "    ", budget) for n in p.notes)
    return "\n".join(lines)
