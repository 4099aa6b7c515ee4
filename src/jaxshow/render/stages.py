"""HTML and text for ``StagesReport`` and ``CellReport``: four stations and the timings."""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterable, NamedTuple, Sequence

from jaxshow import render
from jaxshow.irtext import HLO_TABLES, hlo_frame_tables
from jaxshow.render.diff import stages_diff_html, stages_diff_text
from jaxshow.render.groups import FOLD_ROWS, grouped_html, grouped_text, leaf_bytes, shown_paths
from jaxshow.render.highlight import code_html
from jaxshow.render.limits import TextBudget, clip_ir, ir_footer, limit_rows, line, message
from jaxshow.render.paths import Place, located, located_html
from jaxshow.render.memory import buffers_html, buffers_text, memory_html, memory_text
from jaxshow.render.linked import linked_html, linked_text
from jaxshow.render.markup import Html, code_block, details, join, muted, table, tag
from jaxshow.render.placement import placement_html, placement_text
from jaxshow.render.plain import paragraph, table_or_sentences, text_table
from jaxshow.render.style import ERROR_STYLE, NOTE_STYLE
from jaxshow.report import (
    NO_SCOPE,
    ArgSpec,
    CellReport,
    CompiledStation,
    CostAnalysis,
    ErrorSummary,
    HelperCompiles,
    LoweredStation,
    MemoryStats,
    StagesReport,
    TracedStation,
    WrapperStation,
    format_bytes,
    format_count,
    format_seconds,
    plural,
)

DIALECT_NAMES = {"stablehlo": "StableHLO", "hlo": "HLO"}
COST_CAVEAT_LOWERED = "estimated before compiler optimisations (Lowered.cost_analysis)"
COST_CAVEAT_COMPILED = "after XLA optimisations (Compiled.cost_analysis)"
SHARD_MAP_COST = " except inside shard_map, counted there at one shard's shapes"
"""Said after a partitioned program's Lowered cost where it holds a ``jax.shard_map``, whose body is lowered per shard."""
CHUNK_LINES = 2_000
"""An IR text shown with more lines than this is cut into folded pieces of this many lines:
a browser lays out only the piece that is opened, so a 12 MB module does not freeze the page."""
SAVE_HINT = "%%jaxstages --save DIR writes every station to files"
IR_KEPT = 4
"""IR texts kept rendered per form (a call's jaxpr, jaxpr with source locations, module and optimised HLO): see :func:`prepare_ir`."""
NOT_READ_FROM_CACHES = "not read from JAX's caches (see the note)"
"""A station a cache hit that raised does not show (both forms)."""
NOT_READ_BACK = "not read back (see the note)"
"""A station whose stage JAX timed, never read (jax 0.7's ``jax.pmap``; both forms)."""
_STAGE_OF = {"Traced": "trace", "Lowered": "lower", "Compiled": "compile"}
SCOPE_HEADER = ("scope", "FLOPs", "share")
SCOPE_ROWS = 12
"""Named scopes shown by their FLOPs; the rest are summed in one line."""
ARG_HEADER = ("argument", "type", "sharding", "donated")
OUT_HEADER = ("output", "type", "sharding")
MEMORY_ROWS = (
    ("arguments", "argument_size_bytes"),
    ("outputs", "output_size_bytes"),
    ("aliased (donated, reused as output)", "alias_size_bytes"),
    ("temporaries", "temp_size_bytes"),
    ("generated code", "generated_code_size_bytes"),
    ("host temporaries", "host_temp_size_bytes"),
    ("peak (reported by XLA)", "peak_memory_bytes"),
)


# --- shared wording ---------------------------------------------------------------------------


def _wrapper_rows(w: WrapperStation, budget: TextBudget, place: Place = located) -> tuple[list[tuple[str, str]], str | None]:
    """The wrapper's table rows (static argument values budgeted) and the line for those left out."""
    table_rows = [("function", w.qualname), ("wrapper", w.kind)]
    table_rows.append(("defined at", place(str(w.defined_at), budget, line) if w.defined_at else "unknown (no Python source)"))
    if w.options_unavailable:
        table_rows.append(("jit options", w.options_unavailable))
    else:
        table_rows.append(("static_argnums", str(w.static_argnums) if w.static_argnums else "none"))
        table_rows.append(("static_argnames", str(w.static_argnames) if w.static_argnames else "none"))
        table_rows.append(("donate_argnums", str(w.donate_argnums) if w.donate_argnums else "none"))
        if w.donate_argnames:
            table_rows.append(("donate_argnames", str(w.donate_argnames)))
        table_rows.extend(w.options)
    static_args, more = limit_rows(w.static_args, budget, "report.wrapper.static_args")
    table_rows.extend((f"static {name}", value) for name, value in static_args)
    return table_rows, more


def _traced_mesh(t: TracedStation) -> str | None:
    """The one mesh every sharded input and output of the Traced station is on: named once above its tables, which then
    give each leaf's spec."""
    sharded = [s for s in (*t.args, *t.out_info) if s.sharding is not None]
    meshes = {s.mesh for s in sharded}
    return meshes.pop() if sharded and len(meshes) == 1 and None not in meshes else None


def _constants(t: TracedStation) -> list[str]:
    """What the function closes over: constants baked into the jaxpr, and ``jax.new_ref`` refs, which are not."""
    baked, refs = t.const_count - t.ref_count, t.ref_count
    said = [f"{plural(baked, 'closed-over constant')} baked into the jaxpr"] if baked else []
    if refs:
        said.append(f"{plural(refs, 'closed-over ref')} (jax.new_ref), not baked in: "
                    f"{'an input' if refs == 1 else 'inputs'} of the compiled program")
    return said


def _arg_rows(specs: Sequence[ArgSpec], *, with_donation: bool, mesh: str | None) -> list[tuple[str, ...]]:
    rows = []
    for s, path in zip(specs, shown_paths([s.path for s in specs])):
        where = s.spec if mesh is not None and s.spec is not None else s.sharding
        row = (path, s.type_str + ("{weak_type}" if s.weak_type else ""), where or "—")
        donated = ("yes, not used" if s.donation_unused else "yes") if s.donated else "no"
        rows.append(row + (donated,) if with_donation else row)
    return rows


def _arg_facts(specs: Sequence[ArgSpec]):
    """A group heading's size: the bytes of its arrays, where every dtype has a bit width."""
    @functools.lru_cache(maxsize=None)
    def size(i: int) -> int | None:
        return leaf_bytes(specs[i].dtype, specs[i].shape)

    def facts(indices: Sequence[int]) -> str:
        sizes = [size(i) for i in indices]
        return "" if None in sizes else format_bytes(sum(sizes))
    return facts


def _cost_rows(cost: CostAnalysis) -> list[tuple[str, str]]:
    rows = [
        ("FLOPs", format_count(cost.flops, "FLOP") if cost.flops is not None else "not reported"),
        ("transcendentals", format_count(cost.transcendentals) if cost.transcendentals is not None else "not reported"),
        ("bytes accessed", format_bytes(cost.bytes_accessed) if cost.bytes_accessed is not None else "not reported"),
    ]
    return rows


def _memory_rows(memory: MemoryStats) -> list[tuple[str, str]]:
    rows = [(label, format_bytes(getattr(memory, attr)) if getattr(memory, attr) is not None else "not reported") for label, attr in MEMORY_ROWS]
    total = memory.estimated_total_bytes
    rows.append(("estimate: arguments + outputs + temporaries − aliased", format_bytes(total) if total is not None else "unknown"))
    return rows


def _loop_warning(report: StagesReport) -> str | None:
    """Loops make XLA's cost analysis count their bodies once, not once per iteration: say which, and estimate."""
    if report.traced is None or not report.traced.loops:
        return None
    found = []
    for loop in report.traced.loops:
        times = f" ×{loop.count}" if loop.count > 1 else ""
        found.append(f"scan{times} of length {loop.trip_count:,}" if loop.primitive == "scan"
                     else f"while{times} (trip count unknown before compiling)")
    trips = report.compiled.loop_trip_counts if report.compiled else ()
    if trips:
        found.append("XLA's loops run " + ", ".join(f"{n:,}" for n in trips) + " times (known_trip_count)")
    text = (f"the program has loops ({'; '.join(found)}): XLA's cost analysis counts each loop body once, "
            "not once per iteration, so its FLOPs and bytes leave out the repeats")
    if report.traced.dot_flops_estimate:
        text += (f". Counting each body by its trip count, the matrix multiplies and convolutions alone come to about "
                 f"{format_count(report.traced.dot_flops_estimate, 'FLOP')} (an estimate from the jaxpr, whole program"
                 f"{'; while loops counted once' if any(loop.primitive == 'while' for loop in report.traced.loops) else ''})")
    return text


def _cost_caveat(report: StagesReport, station: str) -> str:
    """Where a cost figure comes from, and for a partitioned program whether it is one device's or the whole program's."""
    compiled = report.compiled
    if station == "lowered":
        whole = f", for the whole program (all {compiled.device_count} devices)" if compiled and compiled.per_device else ""
        if whole and report.traced and "shard_map" in dict(report.traced.primitive_counts):
            whole += SHARD_MAP_COST  # JAX lowers a shard_map's body at one shard's shapes
        return COST_CAVEAT_LOWERED + whole
    per_device = f", per device: one of {compiled.device_count} devices' share" if compiled and compiled.per_device else ""
    return COST_CAVEAT_COMPILED + per_device


def _whereabouts(report: StagesReport, budget: TextBudget, place: Place = located) -> list[list[str]]:
    """The head line's facts after the outcome, the same in both forms: where it was called, whose, which thread.
    Each fact is a list of pieces; ``place`` shows a file's place (:func:`located` or :func:`located_html`)."""
    bits = []
    site = report.call_site
    if site:
        inside = f" in {site.function}" if site.function and site.function != "<module>" else ""
        bits.append(["called at ", place(f"{site.file}:{site.line}", budget, line), line(inside, budget)])
    if report.cell_site:
        bits.append(["from ", place(f"{report.cell_site.file}:{report.cell_site.line}", budget, line)])
    if report.kind != "user":
        bits.append(["a library's function" if report.kind == "library" else "JAX's own function"])
    if report.other_thread:
        bits.append(["on another thread"])
    if not report.executed and report.error is None:
        bits.append(["walked ahead of time, not executed"])
    return bits


def _error_text(error: ErrorSummary, budget: TextBudget) -> str:
    """An error as one line (under a call's head line, which says where the call stopped, or the cell's): ``KeyError:
    'k'``, or the type alone where the message is empty (``raise KeyboardInterrupt``)."""
    said = f": {message(error.message, budget)}" if error.message else ""
    return f"{line(error.type_name, budget)}{said}"


def _dialect(lo: LoweredStation, budget: TextBudget) -> str:
    return DIALECT_NAMES.get(lo.dialect) or line(lo.dialect, budget)


def _not_reached(report: StagesReport, budget: TextBudget, station: str = "") -> str:
    if _before_continued(report, station):
        return f"not kept in the jax.stages.{report.continued} made before this cell"
    if report.cache_hit or report.raised_unseen:
        return NOT_READ_FROM_CACHES
    if _ran_unread(report, station):
        return NOT_READ_BACK
    return f"not reached ({line(report.outcome, budget)})" if report.stopped_at else "not reached"


def _ran_unread(report: StagesReport, station: str) -> bool:
    """Whether JAX timed the stage that makes ``station`` while jaxshow read no station back (jax 0.7's ``jax.pmap``)."""
    return not report.stopped_at and _STAGE_OF.get(station) in report.timings.stages_run


def _folded_lines(cell: CellReport, budget: TextBudget) -> list[str]:
    """One line per group of compiles not shown as reports: eager loops, JAX's own helpers, and the cell's other calls."""
    out = []
    others = f"of {_your(cell)}other jitted calls (--all shows them)"
    if cell.eager_loops.count:
        what = ("an eager jax.lax loop or branch, with the functions it runs" if cell.eager_loops.count == 1 else
                "eager jax.lax loops and branches, with the functions they run")
        out.append(f"{plural(cell.eager_loops.count, 'compile')} of {what}: {_names(cell.eager_loops, budget)}")
    for folded, whose in ((cell.helper_compiles, "of JAX's own helpers"), (cell.other_compiles, others)):
        if folded.count:
            inside = (f"; {format_seconds(folded.inside_seconds)} of them while {_names_of(folded.inside_of, budget)} traced, "
                      "in its trace time") if folded.inside_seconds else ""
            out.append(f"{plural(folded.count, 'compile')} {whose} folded away: {_names(folded, budget, counted=True)}{inside}")
    alongside = cell.other_threads
    if alongside.seconds:
        compiles = f", {plural(alongside.count, 'compile')}" if alongside.count else ""
        out.append(f"JAX's stages on other threads, alongside the cell and not in its time above: "
                   f"{format_seconds(alongside.seconds)}{compiles}: {_names(alongside, budget)}")
    return out


def _names_of(names: tuple[str, ...], budget: TextBudget) -> str:
    return " and ".join(line(name, budget) for name in names[:3]) + (" …" if len(names) > 3 else "") or "a shown call"


def _names(folded: HelperCompiles, budget: TextBudget, counted: bool = False) -> str:
    """The first names of a group; ``counted``: each that compiled more than once with how often (``add ×2``)."""
    times = dict(folded.repeated) if counted else {}
    return ", ".join(line(name, budget) + (f" ×{times[name]}" if name in times else "") for name in folded.names[:8]) + (
        "…" if len(folded.names) > 8 else "")


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0


def _all_lines(text: str, shown: str, hidden: int) -> int:
    """The lines of an IR text, from what :func:`clip_ir` showed of it and left out (no second pass over a 10 MB text)."""
    return shown.count("\n") + 1 + hidden if hidden else _line_count(text)


# --- HTML ------------------------------------------------------------------------------------


def _ir_html(title: str, text: str, language: str, attribute: str, budget: TextBudget) -> Html:
    shown = _shown_ir_html(text, language, budget)
    body = list(shown.body)
    if footer := ir_footer(shown.hidden, shown.cut, budget):
        body.append(muted(f"{footer}; full text in {attribute} ({SAVE_HINT})"))
    summary = f"{title} — {plural(shown.lines, 'line')}, {format_bytes(shown.size)}"
    return details(summary, *body, open=shown.lines - shown.table_lines <= 60)


class _ShownIr(NamedTuple):
    """The costly part of showing an IR text: what is shown of it, in one form, and what its summary and footer count."""

    body: tuple[Html, ...] | str
    hidden: int
    cut: int
    lines: int
    size: int = 0
    table_lines: int = 0
    tables_note: str = ""


@functools.lru_cache(maxsize=IR_KEPT)
def _shown_ir_html(text: str, language: str, budget: TextBudget) -> _ShownIr:
    shown, hidden, cut = clip_ir(text, budget)
    highlight = budget.highlight_max_bytes if len(shown) <= budget.highlight_max_bytes else 0
    tables = hlo_frame_tables(shown) if language == "hlo" else None
    pieces = _pieces(shown)
    if len(pieces) == 1:
        body = _code_html(shown, language, highlight, tables)
    else:
        body = [details(f"lines {first:,}–{last:,}", *_code_html(piece, language, highlight, tables if first == 1 else None))
                for first, last, piece in pieces]
    table_lines = shown.count("\n", *tables) if tables else 0
    return _ShownIr(tuple(body), hidden, cut, _all_lines(text, shown, hidden), len(text.encode("utf-8", "ignore")), table_lines)


@functools.lru_cache(maxsize=IR_KEPT)
def _shown_ir_text(text: str, budget: TextBudget) -> _ShownIr:
    shown, hidden, cut = clip_ir(text, budget)
    tables = hlo_frame_tables(shown) if text.startswith("HloModule") else None
    note = ""
    if tables is not None:  # one line for them, as the HTML folds them
        start, end = tables
        note = _TABLES_LEFT_OUT.format(lines=plural(shown.count(chr(10), start, end), 'line'))
        shown = f"{shown[:start]}{note}\n\n{shown[end:]}"
    body = "\n".join("    " + piece for piece in shown.splitlines())
    return _ShownIr(body, hidden, cut, _all_lines(text, shown, hidden), tables_note=note)


def prepare_ir(stations: Iterable[TracedStation | LoweredStation | CompiledStation | None], budget: TextBudget) -> None:
    """Render the IR texts of one call's stations in both forms ahead of its report, which then finds them ready.

    The magics call this on the thread that reads the stations while JAX compiles the call and
    runs its program; the last :data:`IR_KEPT` texts per form are kept.
    """
    for station in stations:
        if isinstance(station, TracedStation):
            _shown_ir_html(station.jaxpr_text, "jaxpr", budget)
            if station.jaxpr_source_text:
                _shown_ir_html(station.jaxpr_source_text, "jaxpr", budget)
            _shown_ir_text(station.jaxpr_source_text or station.jaxpr_text, _any_width(budget))
        elif isinstance(station, LoweredStation):
            _shown_ir_html(station.module_text, station.dialect, budget)
            _shown_ir_text(station.module_text, _any_width(budget))
        elif isinstance(station, CompiledStation) and station.optimized_hlo_text:
            _shown_ir_html(station.optimized_hlo_text, "hlo", budget)
            _shown_ir_text(station.optimized_hlo_text, _any_width(budget))


def _any_width(budget: TextBudget) -> TextBudget:
    """``budget`` for :func:`_shown_ir_text`: IR lines never wrap, so one cached text serves every width."""
    return dataclasses.replace(budget, width=0) if budget.width else budget


_TABLES_LEFT_OUT = f"(stack-frame tables, {{lines}}: {HLO_TABLES[0]} … {HLO_TABLES[-1]}, the source of each stack_frame_id; left out here)"


def _code_html(text: str, language: str, highlight: int, tables: tuple[int, int] | None) -> list[Html]:
    """``text`` as code; an HLO module's stack-frame tables (tens of lines of the notebook's frames) folded where they open it."""
    if tables is None or tables[1] > len(text):
        return [code_block(code_html(text, language, highlight))]
    start, end = tables
    folded = details(f"stack-frame tables ({plural(text.count(chr(10), start, end), 'line')}: "
                     f"{', '.join(HLO_TABLES)}, the source of each instruction's stack_frame_id)",
                     code_block(code_html(text[start:end].rstrip("\n"), language, highlight)))
    return [code_block(code_html(text[:start].rstrip("\n"), language, highlight)), folded,
            code_block(code_html(text[end:], language, highlight))]


def _pieces(text: str) -> list[tuple[int, int, str]]:
    """``text`` in pieces of ``CHUNK_LINES`` lines, with their first and last line numbers."""
    lines = text.split("\n")
    if len(lines) <= CHUNK_LINES:
        return [(1, len(lines), text)]
    return [(i + 1, min(i + CHUNK_LINES, len(lines)), "\n".join(lines[i : i + CHUNK_LINES])) for i in range(0, len(lines), CHUNK_LINES)]


def _station(number: str, title: str, summary: str, body: list, *, failed: bool = False, open: bool = True) -> Html:
    cls = "js-station js-failed" if failed else "js-station"
    return details(join([tag("span", f"{number} {title}"), " ", muted(summary)]), *body, open=open, cls=cls)


def _wrapper_html(w: WrapperStation, budget: TextBudget) -> Html:
    summary = line(w.name, budget) + (" (wrapped in jax.jit by jaxshow)" if w.wrapped_by_jaxshow else "")
    table_rows, more = _wrapper_rows(w, budget, located_html)
    return _station("①", "jax.jit wrapper", summary, [table(None, table_rows, budget, more=more)], open=False)


def _traced_html(t: TracedStation, budget: TextBudget) -> Html:
    primitives, more_primitives = limit_rows(t.primitive_counts, budget, "report.traced.primitive_counts")
    chips = [tag("span", f"{line(name, budget)} ×{n}", cls="js-chip") for name, n in primitives]
    if more_primitives:
        chips.append(muted(more_primitives))
    mesh = _traced_mesh(t)
    body = [
        tag("div", "arguments (args_info)"),
        grouped_html(ARG_HEADER, _arg_rows(t.args, with_donation=True, mesh=mesh), budget, "report.traced.args",
                     _arg_facts(t.args)) if t.args else muted("no array arguments"),
        tag("div", "outputs (out_info)"),
        grouped_html(OUT_HEADER, _arg_rows(t.out_info, with_donation=False, mesh=mesh), budget, "report.traced.out_info",
                     _arg_facts(t.out_info)) if t.out_info else muted("no outputs"),
        tag("div", "effects: ", line(", ".join(t.effects), budget) if t.effects else muted("none (pure)")),
        tag("div", f"{plural(t.equation_count, 'top-level equation')}; primitives, nested jaxprs included: ", Html(" ".join(chips)) if chips else "none"),
        *([_scopes_html(t, budget)] if t.flops_by_scope else []),
        _ir_html("jaxpr", t.jaxpr_text, "jaxpr", "report.traced.jaxpr_text", budget),
    ]
    for i, said in enumerate(_constants(t)):
        body.insert(4 + i, tag("div", said))
    if mesh is not None:
        body.insert(0, tag("div", line(f"mesh {mesh} (each sharding below is a spec on it)", budget)))
    body[:0] = [tag("div", message(note, budget), cls="js-note", style=NOTE_STYLE) for note in t.notes]
    if t.jaxpr_source_text:
        body.append(_ir_html("jaxpr with source locations", t.jaxpr_source_text, "jaxpr", "report.traced.jaxpr_source_text", budget))
    return _station("②", "Traced", _traced_summary(t), body, open=max(len(t.args), len(t.out_info)) <= FOLD_ROWS)


def _scope_table(t: TracedStation) -> tuple[str, list[tuple[str, str, str]], str | None]:
    """The title, rows and closing line of the FLOPs by named scope, the same in both forms."""
    total = sum(flops for _, flops in t.flops_by_scope)
    title = (f"matrix multiplies and convolutions by named scope, {format_count(total, 'FLOP')} in all (an estimate from "
             f"the jaxpr: 2·M·N·K per matrix multiply, every kernel tap of a convolution, each loop body times its trip count)")

    def share(flops: float) -> str:
        return f"{flops / total:.0%}" if flops >= total / 100 else "<1%"

    rows = [(where or NO_SCOPE, format_count(flops, "FLOP"), share(flops)) for where, flops in t.flops_by_scope[:SCOPE_ROWS]]
    rest = t.flops_by_scope[SCOPE_ROWS:]
    more = None
    if rest:
        flops = sum(f for _, f in rest)
        more = (f"… {len(rest):,} more scopes, {format_count(flops, 'FLOP')} ({share(flops)}) "
                "(all in report.traced.flops_by_scope)")
    return title, rows, more


def _scope_legend(t: TracedStation) -> str | None:
    """What JAX's names for the two passes of a derivative mean, where the scopes shown carry them."""
    if not any("jvp(" in where for where, _ in t.flops_by_scope[:SCOPE_ROWS]):
        return None
    return "jvp(…): the forward pass of a jax.grad, jax.vjp or jax.jvp; transpose(jvp(…)): the backward pass of a jax.grad or jax.vjp"


def _scopes_html(t: TracedStation, budget: TextBudget) -> Html:
    title, rows, more = _scope_table(t)
    legend = _scope_legend(t)
    return details(line(title, budget), table(SCOPE_HEADER, rows, budget, more=more), *([muted(legend)] if legend else []),
                   open=True)


def _traced_summary(t: TracedStation) -> str:
    return f"{plural(t.equation_count, 'equation')} · {plural(len(t.args), 'input')} → {plural(len(t.out_info), 'output')}"


def _cost_html(caveat: str, cost: CostAnalysis, loops: str | None, budget: TextBudget) -> Html:
    warning = [tag("div", loops, cls="js-note", style=NOTE_STYLE)] if loops else []
    return details(f"cost analysis — {caveat}", *warning, table(None, _cost_rows(cost), budget), open=True)


def _lowered_html(lo: LoweredStation, loops: str | None, caveat: str, budget: TextBudget) -> Html:
    name = _dialect(lo, budget) + (" with source locations" if lo.debug_info else "")
    if lo.cost:
        cost = _cost_html(caveat, lo.cost, loops, budget)
    else:
        cost = tag("div", "cost analysis: ", muted(message(lo.cost_unavailable or "not reported", budget)))
    body = [cost, _ir_html(name, lo.module_text, lo.dialect, "report.lowered.module_text", budget)]
    flops = f" · {format_count(lo.cost.flops, 'FLOP')} (pre-optimisation)" if lo.cost and lo.cost.flops is not None else ""
    return _station("③", "Lowered", f"{name}, {plural(_line_count(lo.module_text), 'line')}{flops}", body, open=False)


def _compiled_html(c: CompiledStation, loops: str | None, caveat: str, budget: TextBudget) -> Html:
    body = []
    if c.cost:
        body.append(_cost_html(caveat, c.cost, loops, budget))
    else:
        body.append(tag("div", "cost analysis: ", muted(message(c.cost_unavailable or "not reported", budget))))
    if c.memory:
        body.append(memory_html(c.memory, table(None, _memory_rows(c.memory), budget), budget, c.device_count if c.per_device else None))
    else:
        body.append(tag("div", "memory analysis: ", muted(message(c.memory_unavailable or "not reported", budget))))
    if c.buffers:
        body.append(buffers_html(c, budget))
    body.append(placement_html(c, budget))
    if c.optimized_hlo_text:
        body.append(_ir_html("optimised HLO", c.optimized_hlo_text, "hlo", "report.compiled.optimized_hlo_text", budget))
    else:
        body.append(tag("div", "optimised HLO: ", muted(message(c.hlo_unavailable or "not reported", budget))))
    bits = []
    if c.cost and c.cost.flops is not None:
        bits.append(format_count(c.cost.flops, "FLOP") + (" per device" if c.per_device else ""))
    if c.collectives:
        bits.append(plural(sum(k.count for k in c.collectives), "collective"))
    if c.memory and c.memory.temp_size_bytes is not None:
        bits.append(f"{format_bytes(c.memory.temp_size_bytes)} temporaries")
    return _station("④", "Compiled", " · ".join(bits) or "executable", body, open=False)


def _before_continued(report: StagesReport, station: str) -> bool:
    """Whether ``station`` comes before the stage object made before the cell that ``report``'s call went on from."""
    order = ("Traced", "Lowered", "Compiled")
    return report.continued is not None and station in order and order.index(station) < order.index(report.continued)


def _missing_station(number: str, title: str, report: StagesReport, budget: TextBudget) -> Html:
    if _before_continued(report, title):
        reason = f"not kept in the jax.stages.{report.continued} made before this cell"
    elif report.cache_hit or report.raised_unseen:
        reason = NOT_READ_FROM_CACHES
    elif _ran_unread(report, title):
        reason = NOT_READ_BACK
    else:
        reason = f"not reached: the call {line(report.outcome, budget)}" if report.stopped_at else "skipped"
    return tag("div", f"{number} {title} — ", muted(reason), cls="js-station-missing")


@render.html_body.register
def _stages_html(report: StagesReport, budget: TextBudget) -> Html:
    head = [tag("b", line(report.function, budget)), " ", muted(line(report.outcome, budget))]
    head += [item for bit in _whereabouts(report, budget, located_html) for item in (" ", muted(join(["· ", *bit])))]
    parts: list[Html] = [tag("div", *head, cls="js-head")]
    if report.error:
        parts.append(tag("div", _error_text(report.error, budget), cls="js-error", style=ERROR_STYLE))
    parts.extend(tag("div", located_html(note, budget, message), cls="js-note", style=NOTE_STYLE) for note in report.notes)
    parts.append(_wrapper_html(report.wrapper, budget))
    parts.append(_traced_html(report.traced, budget) if report.traced else _missing_station("②", "Traced", report, budget))
    loops = _loop_warning(report)
    parts.append(_lowered_html(report.lowered, loops, _cost_caveat(report, "lowered"), budget) if report.lowered
                 else _missing_station("③", "Lowered", report, budget))
    parts.append(_compiled_html(report.compiled, loops, _cost_caveat(report, "compiled"), budget) if report.compiled
                 else _missing_station("④", "Compiled", report, budget))
    if report.linked is not None:
        parts.append(_station("⇄", "Linked views", "source ↔ jaxpr ↔ StableHLO ↔ optimised HLO", [linked_html(report.linked, budget)]))
    return tag("div", *parts, cls="js-report")


def _cell_breakdown(cell: CellReport, budget: TextBudget) -> list[tuple[str, float]]:
    """The cell's wall time by what its own thread did (other threads' stages ran alongside: :func:`_folded_lines`)."""
    t = [r.timings for r in cell.reports if not r.other_thread]
    trace = sum(x.trace_seconds or 0 for x in t)
    lower = sum(x.lowering_seconds or 0 for x in t)
    compile_ = sum(x.compile_seconds or 0 for x in t)
    parts = [("trace", trace), ("lower", lower), ("compile", compile_),
             (f"more programs for {_names(cell.more_programs, budget)}", cell.more_programs.seconds),
             ("eager jax.lax loops", cell.eager_loops.seconds), ("JAX's own helpers", cell.helper_compiles.seconds),
             (f"{_your(cell)}other calls", cell.other_compiles.seconds), ("ahead of time, not called", cell.ahead_of_time.seconds)]
    return [*parts, ("the rest (running, Python)", max(cell.cell_seconds - sum(s for _, s in parts), 0.0))]


def _your(cell: CellReport) -> str:
    """``"your "`` where the calls not shown are all the user's; a library's (treescope's, flax's) are not."""
    return "your " if cell.other_compiles.yours else ""


def _cell_error_line(cell: CellReport, budget: TextBudget) -> str | None:
    """The cell's exception, unless a report already shows it as the call's error."""
    error = cell.cell_error
    if error is None:
        return None
    shown = ("IPython showed it without its traceback: %tb prints that" if error.type_name == "SystemExit" else
             "its traceback is in the cell's output")
    if any(r.error and (r.error.type_name, r.error.message) == (error.type_name, error.message) for r in cell.reports):
        return f"the cell raised this {line(error.type_name, budget)} ({shown})"
    return f"the cell raised {_error_text(error, budget)} ({shown})"


_BAR_COLOURS = ("#0969da", "#8250df", "#bf3989", "#cf222e", "#bc4c00", "#9a6700", "#1a7f37", "#57606a", "#8c959f")


@render.html_body.register
def _cell_html(cell: CellReport, budget: TextBudget) -> Html:
    breakdown = _cell_breakdown(cell, budget)
    phrase = " + ".join(f"{label} {format_seconds(s)}" for label, s in breakdown if s > 0 or label == "the rest (running, Python)")
    parts: list[Html] = [tag("div", tag("b", f"cell {format_seconds(cell.cell_seconds)}"), " = ", phrase, cls="js-head")]
    if cell.cell_seconds > 0:
        segments = [
            tag("span", "", style=f"width: {100 * s / cell.cell_seconds:.2f}%; background: {colour};", title=f"{label}: {format_seconds(s)}")
            for (label, s), colour in zip(breakdown, _BAR_COLOURS)
            if s > 0
        ]
        parts.append(tag("div", *segments, cls="js-bar"))
    parts.extend(tag("div", muted(text)) for text in _folded_lines(cell, budget))
    parts.extend(tag("div", located_html(note, budget, message), cls="js-note", style=NOTE_STYLE) for note in cell.notes)
    error_line = _cell_error_line(cell, budget)
    if error_line:
        parts.append(tag("div", error_line, cls="js-error", style=ERROR_STYLE))
    parts.extend(_stages_html(r, budget) for r in cell.reports)
    parts.extend(stages_diff_html(d, f"report.diffs[{i}]", budget) for i, d in enumerate(cell.diffs))
    return tag("div", *parts, cls="js-cell")


# --- text ------------------------------------------------------------------------------------


def _text_ir(title: str, text: str, attribute: str, budget: TextBudget) -> str:
    shown = _shown_ir_text(text, _any_width(budget))
    body = shown.body
    if shown.tables_note:  # wrapped here, not in the cached text, which serves every width
        body = body.replace(f"    {shown.tables_note}\n", paragraph("    ", shown.tables_note, "     ", budget) + "\n", 1)
    out = f"  {title} ({plural(shown.lines, 'line')}):\n{body}\n"
    if footer := ir_footer(shown.hidden, shown.cut, budget):
        out += paragraph("    … ", f"{footer}; full text in {attribute} ({SAVE_HINT})", "      ", budget) + "\n"
    return out


def _text_rows(header: tuple[str, ...] | None, table_rows: list[tuple[str, ...]], budget: TextBudget, more: str | None = None) -> str:
    return "\n".join(text_table(table_rows, header, budget, indent="    ", more=more))


def _cost_text(report: StagesReport, station: str, cost: CostAnalysis | None, unavailable: str | None,
               budget: TextBudget) -> list[str]:
    """A station's cost analysis as text (the text form of :func:`_cost_html`), or why there is none."""
    if cost is None:
        return [paragraph("  cost analysis: ", message(unavailable or "not reported", budget), "    ", budget)]
    loops = _loop_warning(report)
    return [paragraph("  ", f"cost analysis, {_cost_caveat(report, station)}:", "    ", budget),
            *([paragraph("  note: ", loops, "    ", budget)] if loops else []),
            _text_rows(None, _cost_rows(cost), budget)]


@render.text_body.register
def _stages_text(report: StagesReport, budget: TextBudget) -> str:
    head = f"{line(report.function, budget)}: {line(report.outcome, budget)}" + "".join(f" ({''.join(bit)})" for bit in _whereabouts(report, budget))
    out = [paragraph("", head, "  ", budget)]
    if report.error:
        out.append(paragraph("  ", _error_text(report.error, budget), "    ", budget))
    out.extend(paragraph("  note: ", located(n, budget, message), "    ", budget) for n in report.notes)
    out.append("① jax.jit wrapper")
    wrapper_rows, more_static = _wrapper_rows(report.wrapper, budget)
    out.append(_text_rows(None, wrapper_rows, budget, more_static))
    t = report.traced
    if t:
        out.append(f"② Traced: {_traced_summary(t).replace(' · ', ', ')}")
        mesh = _traced_mesh(t)
        if mesh is not None:
            out.append(paragraph("  mesh ", f"{line(mesh, budget)} (each sharding below is a spec on it)", "    ", budget))
        if t.args:
            out.append("\n".join(grouped_text(ARG_HEADER, _arg_rows(t.args, with_donation=True, mesh=mesh), budget, "report.traced.args",
                                              _arg_facts(t.args))))
        if t.out_info:
            out.append("\n".join(grouped_text(OUT_HEADER, _arg_rows(t.out_info, with_donation=False, mesh=mesh), budget,
                                              "report.traced.out_info", _arg_facts(t.out_info))))
        out.extend(paragraph("  note: ", message(note, budget), "    ", budget) for note in t.notes)
        out.extend(f"  {said}" for said in _constants(t))
        out.append(paragraph("  effects: ", line(', '.join(t.effects), budget) if t.effects else 'none (pure)', "    ", budget))
        primitives, more_primitives = limit_rows(t.primitive_counts, budget, "report.traced.primitive_counts")
        out.append(paragraph("  primitives, nested jaxprs included: ", ", ".join([f"{line(name, budget)}×{n}" for name, n in primitives] + ([more_primitives] if more_primitives else [])) or "none", "    ", budget))
        if t.flops_by_scope:
            title, rows, more = _scope_table(t)
            out.append(paragraph("  ", title + ":", "    ", budget))
            out.extend(table_or_sentences(rows, SCOPE_HEADER, budget, lambda r: f"{r[0]}: {r[1]}, {r[2]}", indent="    ",
                                          more=more))
            if (legend := _scope_legend(t)) is not None:
                out.append(paragraph("    ", legend, "      ", budget))
        if t.jaxpr_source_text:
            out.append(_text_ir("jaxpr with source locations", t.jaxpr_source_text, "report.traced.jaxpr_source_text", budget).rstrip("\n"))
        else:
            out.append(_text_ir("jaxpr", t.jaxpr_text, "report.traced.jaxpr_text", budget).rstrip("\n"))
    else:
        out.append(f"② Traced: {_not_reached(report, budget, 'Traced')}")
    lo = report.lowered
    if lo:
        name = _dialect(lo, budget)
        out.append(f"③ Lowered: {name}{' with source locations' if lo.debug_info else ''}")
        out += _cost_text(report, "lowered", lo.cost, lo.cost_unavailable, budget)
        out.append(_text_ir(name, lo.module_text, "report.lowered.module_text", budget).rstrip("\n"))
    else:
        out.append(f"③ Lowered: {_not_reached(report, budget, 'Lowered')}")
    c = report.compiled
    if c:
        out.append("④ Compiled")
        out += _cost_text(report, "compiled", c.cost, c.cost_unavailable, budget)
        if c.memory:
            out += memory_text(c.memory, budget, c.device_count if c.per_device else None)
            out.append(_text_rows(None, _memory_rows(c.memory), budget))
        else:
            out.append(paragraph("  memory analysis: ", message(c.memory_unavailable or 'not reported', budget), "    ", budget))
        if c.buffers:
            out += buffers_text(c, budget)
        out += placement_text(c, budget)
        if c.optimized_hlo_text:
            out.append(_text_ir("optimised HLO", c.optimized_hlo_text, "report.compiled.optimized_hlo_text", budget).rstrip("\n"))
        else:
            out.append(paragraph("  optimised HLO: ", message(c.hlo_unavailable or 'not reported', budget), "    ", budget))
    else:
        out.append(f"④ Compiled: {_not_reached(report, budget, 'Compiled')}")
    if report.linked is not None:
        out.append("⇄ Linked views: each line after the source line that made it")
        out.append(linked_text(report.linked, budget))
    return "\n".join(piece for piece in out if piece) + "\n"


@render.text_body.register
def _cell_text(cell: CellReport, budget: TextBudget) -> str:
    breakdown = _cell_breakdown(cell, budget)
    head = f"cell {format_seconds(cell.cell_seconds)} = " + " + ".join(f"{label} {format_seconds(s)}" for label, s in breakdown if s > 0 or label.startswith("the rest"))
    out = [paragraph("", head, "  ", budget)]
    out.extend(paragraph("(", f"{text})", " ", budget) for text in _folded_lines(cell, budget))
    out.extend(paragraph("note: ", located(n, budget, message), "  ", budget) for n in cell.notes)
    error_line = _cell_error_line(cell, budget)
    if error_line:
        out.append(paragraph("", error_line, "  ", budget))
    for report in cell.reports:
        out.append("")
        out.append(_stages_text(report, budget).rstrip("\n"))
    for i, d in enumerate(cell.diffs):
        out.append("")
        out.append(stages_diff_text(d, f"report.diffs[{i}]", budget))
    return "\n".join(out) + "\n"
