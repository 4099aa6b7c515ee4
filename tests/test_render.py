"""Renderers on hand-built records: exact text, HTML structure, escaping, budgets. No JAX."""

from __future__ import annotations

import dataclasses
import html.parser
import re
import textwrap

import pytest

from jaxshow import render
from jaxshow.render import limits
from jaxshow.render.highlight import code_html, highlight_html
from jaxshow.render.limits import clip_ir, clip_lines
from jaxshow.render.markup import escape, tag
from jaxshow.report import (
    ArgChange,
    ArgSpec,
    CacheClearReport,
    CacheMiss,
    CacheReport,
    CellReport,
    CompiledStation,
    CostAnalysis,
    DumpDiff,
    DumpFile,
    ErrorSummary,
    FunctionCacheStats,
    HelperCompiles,
    LinkedIR,
    LinkedViews,
    LoweredStation,
    MemoryStats,
    PersistentCacheReport,
    PersistentCompile,
    PersistentGate,
    PlacementSpec,
    SourceLocation,
    SourceText,
    StageTimings,
    StagesReport,
    TextDiff,
    TraceEntry,
    TraceHistory,
    TracedStation,
    WrapperStation,
    format_bytes,
    format_count,
    format_seconds,
)

HOSTILE = '</pre><script>alert("x")</script> & <b>'
WIDE = render.TextBudget(width=100_000)
"""A budget whose text form never wraps: for the tests of clipping."""


def _wrapper(name="step"):
    return WrapperStation(name=name, qualname=name, kind="jax.jit", defined_at=SourceLocation("model.py", 12, name))


def _report(**changes) -> StagesReport:
    fields = dict(
        function="step",
        wrapper=_wrapper(),
        traced=TracedStation(
            jaxpr_text="{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }",
            jaxpr_source_text=None,
            args=(ArgSpec("x", (3,), "float32", donated=True),),
            out_info=(ArgSpec("result", (3,), "float32"),),
            effects=(),
            equation_count=1,
            primitive_counts=(("sin", 1),),
        ),
        lowered=LoweredStation(
            dialect="stablehlo",
            module_text="module @jit_step {\n  %0 = stablehlo.sine %arg0 : tensor<3xf32>\n}",
            debug_info=False,
            cost=CostAnalysis(flops=3.0, transcendentals=3.0, bytes_accessed=24.0, entries=(("flops", 3.0),), optimized=False),
        ),
        compiled=CompiledStation(
            optimized_hlo_text="HloModule jit_step\nENTRY main {\n  ROOT s = f32[3]{0} sine(p)\n}",
            hlo_unavailable=None,
            cost=None,
            cost_unavailable="backend 'gpu' does not report cost analysis",
            memory=None,
            memory_unavailable="backend 'gpu' does not report memory analysis",
            inputs=(PlacementSpec("x", "SingleDeviceSharding(cpu:0)", "{0}"),),
            outputs=(PlacementSpec("result", "SingleDeviceSharding(cpu:0)", "{0}"),),
        ),
        timings=StageTimings(trace_seconds=0.002, lowering_seconds=0.004, compile_seconds=0.030),
    )
    fields.update(changes)
    return StagesReport(**fields)


def test_text_form_reads_on_its_own():
    text = render.to_text(_report())
    expected_head = textwrap.dedent(
        """\
        step: trace 2.0 ms · lower 4.0 ms · compile 30.0 ms
        ① jax.jit wrapper
            function         step
            wrapper          jax.jit
            defined at       model.py:12 (step)
            static_argnums   none
            static_argnames  none
            donate_argnums   none
        ② Traced: 1 equation, 1 input → 1 output
            argument  type    sharding  donated
            x         f32[3]  —         yes
            output  type    sharding
            result  f32[3]  —
          effects: none (pure)
          primitives, nested jaxprs included: sin×1"""
    )
    assert text.startswith(expected_head)
    assert "cost analysis, estimated before compiler optimisations (Lowered.cost_analysis):" in text
    assert "memory analysis: backend 'gpu' does not report memory analysis" in text
    assert "cost analysis: backend 'gpu' does not report cost analysis" in text


def test_unavailable_figures_are_never_zero():
    report = _report()
    for form in (render.to_text(report), render.to_html(report)):
        assert "does not report memory analysis" in form
        assert "0 B" not in form


def test_memory_fields_not_reported_say_so():
    memory = MemoryStats(argument_size_bytes=12, output_size_bytes=12, alias_size_bytes=None, temp_size_bytes=0, generated_code_size_bytes=None)
    compiled = _report().compiled
    report = _report(compiled=CompiledStation(**{**{f: getattr(compiled, f) for f in compiled.__dataclass_fields__}, "memory": memory, "memory_unavailable": None}))
    text = render.to_text(report)
    assert re.search(r"aliased \(donated, reused as output\)\s+not reported", text)
    assert re.search(r"estimate: arguments \+ outputs \+ temporaries − aliased\s+unknown", text)
    assert memory.estimated_total_bytes is None


class _Structure(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.starts: list[tuple[str, dict]] = []
        self.depth = 0
        self.roots = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.depth == 0:
            self.roots += 1
        self.starts.append((tag, attrs))
        self.depth += 1

    def handle_endtag(self, tag):
        self.depth -= 1

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Structure:
    parser = _Structure()
    parser.feed(page)
    return parser


def test_html_structure_one_root_stations_and_tables():
    parser = _parse(render.to_html(_report()))
    assert parser.roots == 1
    tags = [t for t, _ in parser.starts]
    assert parser.starts[0] == ("div", {"class": "jaxshow", "style": parser.starts[0][1]["style"]})
    stations = [a for t, a in parser.starts if t == "details" and "js-station" in a.get("class", "")]
    assert len(stations) == 4
    assert tags.count("table") >= 4
    assert "pre" in tags and "id" not in {k for _, a in parser.starts for k in a}


def test_html_is_self_contained():
    page = render.to_html(_report(error=ErrorSummary("ValueError", "bad", "lower"), stopped_at="lower"))
    for forbidden in ("<script", "<link", "@import", "url(", "<img", "<iframe", "http://", "https://"):
        assert forbidden not in page.lower()


def test_hostile_strings_are_escaped_everywhere():
    hostile_report = _report(
        function=HOSTILE,
        wrapper=_wrapper(HOSTILE),
        error=ErrorSummary("ValueError", HOSTILE, "trace"),
        stopped_at="trace",
        traced=None,
        lowered=None,
        compiled=None,
        notes=(HOSTILE,),
        call_site=SourceLocation(HOSTILE, 1),
    )
    page = render.to_html(CellReport(reports=(hostile_report,), cell_seconds=0.1, jitted_calls=1, notes=(HOSTILE,)))
    parser = _parse(page)
    assert "script" not in [t for t, _ in parser.starts]
    assert HOSTILE in "".join(parser.text)
    assert page.count("&lt;script>") >= 4


def test_highlighted_ir_is_escaped_markup():
    hostile_ir = 'module @m { %0 = "stablehlo.custom"() {x = "</code></pre><script>"} : () -> tensor<3xf32> }'
    out = highlight_html(hostile_ir, "stablehlo")
    assert "<script>" not in out and '"&lt;/code>&lt;/pre>&lt;script>"' in out
    assert out == ('<b class=k>module</b> <b class=f>@m</b> { %0 = "stablehlo.custom"() {x = "&lt;/code>&lt;/pre>&lt;script>"} : () -> '
                   "<i>tensor&lt;3xf32></i> }"), "a string is matched whole and left plain: no token inside it is marked"
    for language, sample in (("jaxpr", "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"), ("hlo", "ROOT s = f32[3]{0} sine(f32[3]{0} p), metadata={op_name=\"x\"}")):
        plain = re.sub(r"<[^>]+>", "", highlight_html(sample, language))
        assert plain.replace("&lt;", "<").replace("&amp;", "&") == sample


def test_budget_falls_back_to_plain_text_and_clips_lines():
    big = "\n".join(f"%{i} = stablehlo.add %a, %b : tensor<4xf32>" for i in range(50))
    assert "<b>" not in code_html(big, "stablehlo", max_highlight_bytes=100)
    assert "<b>stablehlo.add</b>" in code_html(big, "stablehlo", max_highlight_bytes=10_000)
    shown, hidden = clip_lines(big, 10)
    assert shown.count("\n") == 9 and hidden == 40
    assert clip_lines("a\nb", 5) == ("a\nb", 0)
    report = _report(lowered=LoweredStation("stablehlo", big, False, None, "n/a"))
    budget = render.TextBudget(max_lines=2)
    assert ("48 more lines not shown; full text in report.lowered.module_text "
            "(%%jaxstages --save DIR writes every station to files)") in render.to_html(report, budget)
    assert ("    … 48 more lines not shown; full text in report.lowered.module_text (%%jaxstages --save DIR\n"
            "      writes every station to files)\n") in render.to_text(report, budget)
    assert "more lines" not in render.to_text(report) + render.to_html(report)


def test_a_signature_line_of_thousands_of_inputs_is_cut_and_said():
    signature = "func.func public @main(" + ", ".join(f"%arg{i}: tensor<4xf32>" for i in range(4000)) + ") -> tensor<4xf32> {"
    module = "\n".join(["module @jit_f {", signature, "  return %arg0 : tensor<4xf32>", "}"])
    shown, hidden, cut = clip_ir(module, render.TextBudget())
    assert (hidden, cut) == (0, 1)
    assert shown.split("\n")[1] == signature[:10_000] + f"… ({len(signature):,} chars)"
    assert shown.split("\n")[2:] == ["  return %arg0 : tensor<4xf32>", "}"]
    report = _report(lowered=LoweredStation("stablehlo", module, False, None, "n/a"))
    html, text = render.to_html(report), render.to_text(report)
    assert len(html) < 40_000 and len(text) < 20_000 and len(signature) == 98_931
    assert "%arg3999" not in html + text and "%arg419:" in html and "%arg419:" in text
    assert ("1 line cut at 10,000 characters; full text in report.lowered.module_text "
            "(%%jaxstages --save DIR writes every station to files)") in html
    assert "    … 1 line cut at 10,000 characters; full text in report.lowered.module_text" in text
    whole = render.TextBudget(max_ir_line_chars=0)
    assert "%arg3999: tensor<4xf32>) -> tensor<4xf32> {" in render.to_text(report, whole)
    assert "cut at" not in render.to_text(report, whole) + render.to_html(report, whole)


def test_cell_report_breakdown_sums_to_cell_time():
    cell = CellReport(reports=(_report(),), cell_seconds=0.1, jitted_calls=3,
                      helper_compiles=HelperCompiles(2, 0.01, ("convert_element_type",), (("convert_element_type", 2),)))
    text = render.to_text(cell)
    assert text.splitlines()[:2] == [
        "cell 100.0 ms = trace 2.0 ms + lower 4.0 ms + compile 30.0 ms + JAX's own helpers 10.0 ms + the rest",
        "  (running, Python) 54.0 ms",
    ]
    assert "2 compiles of JAX's own helpers folded away: convert_element_type ×2" in text
    assert repr(cell) == "<CellReport 'step'; cell 100.0 ms>"
    assert repr(_report()) == "<StagesReport 'step': traced, lowered, compiled; 36.0 ms>"


def test_eager_loops_are_their_own_part_of_the_cell_line_and_bar():
    cell = CellReport(reports=(_report(),), cell_seconds=0.1, jitted_calls=1,
                      eager_loops=HelperCompiles(2, 0.02, ("scan running step (In[3]:2)", "cond")),
                      helper_compiles=HelperCompiles(1, 0.01, ("iota",)))
    text = render.to_text(cell, render.TextBudget(width=200))
    assert text.splitlines()[:4] == [
        "cell 100.0 ms = trace 2.0 ms + lower 4.0 ms + compile 30.0 ms + eager jax.lax loops 20.0 ms + JAX's own helpers "
        "10.0 ms + the rest (running, Python) 34.0 ms",
        "(2 compiles of eager jax.lax loops and branches, with the functions they run: scan running step (In[3]:2), cond)",
        "(1 compile of JAX's own helpers folded away: iota)",
        "",
    ]
    html = render.to_html(cell)
    assert 'title="eager jax.lax loops: 20.0 ms"' in html and 'title="JAX\'s own helpers: 10.0 ms"' in html
    assert cell.compile_pipeline_seconds == pytest.approx(0.066)


def test_missing_stations_say_where_the_call_stopped():
    report = _report(lowered=None, compiled=None, stopped_at="lower", error=ErrorSummary("NotImplementedError", "no rule", "lower"))
    text = render.to_text(report)
    assert text.splitlines()[:2] == ["step: failed while lowering", "  NotImplementedError: no rule"]
    assert "③ Lowered: not reached (failed while lowering)" in text
    assert "not reached: the call failed while lowering" in render.to_html(report)


@pytest.mark.parametrize(
    "value, expected",
    [(None, "—"), (0.5e-3, "500 µs"), (0.0123, "12.3 ms"), (2.5, "2.50 s")],
)
def test_format_seconds(value, expected):
    assert format_seconds(value) == expected


def test_format_units():
    assert format_bytes(None) == "—" and format_bytes(512) == "512 B" and format_bytes(1536) == "1.50 KiB"
    assert format_bytes(3 * 1024**3) == "3.00 GiB"
    assert format_count(4.2e9, "FLOP") == "4.20 GFLOP" and format_count(12, "FLOP") == "12 FLOP"


def test_markup_helpers_escape_leaves():
    assert escape('<a href="x">') == '&lt;a href="x">', "in element content only & and < start markup"
    assert escape("a & b < c > d 'q'") == "a &amp; b &lt; c > d 'q'"
    assert tag("td", "<b>", cls='c"', title='"x" & <y>') == '<td class="c&quot;" title="&quot;x&quot; &amp; &lt;y>">&lt;b></td>'
    assert tag("details", "s", open=True) == "<details open>s</details>"


def test_terminal_ipython_uses_the_text_form():
    from IPython.lib.pretty import pretty

    report = _report()
    assert pretty(report) == render.to_text(report)
    cell = CellReport(reports=(report,), cell_seconds=0.1, jitted_calls=1)
    assert pretty(cell) == render.to_text(cell) == str(cell)


def test_cell_error_is_not_repeated_when_a_report_shows_it():
    error = ErrorSummary("ValueError", "bad shape", "trace")
    failed = _report(error=error, stopped_at="trace", traced=None, lowered=None, compiled=None)
    same = CellReport(reports=(failed,), cell_seconds=0.1, jitted_calls=1, cell_error=ErrorSummary("ValueError", "bad shape"))
    for form in (render.to_text(same), render.to_html(same)):
        assert form.count("bad shape") == 1 and "the cell raised this ValueError" in form
    later = CellReport(reports=(_report(),), cell_seconds=0.1, jitted_calls=1, cell_error=ErrorSummary("KeyError", "'k'"))
    assert "the cell raised KeyError: 'k'" in render.to_text(later)


def test_repeated_persistent_verdicts_fold_into_one_row():
    skipped = PersistentCompile("jit_step", "skipped", "took < 1.00 s to compile (0.02 s)")
    report = CacheReport(functions=(), persistent=(skipped, skipped, skipped, PersistentCompile("jit_big", "written")))
    text = render.to_text(report)
    assert "jit_step ×3" in text and text.count("jit_step") == 1 and "jit_big " in text
    assert "jit_step ×3" in render.to_html(report)


def test_budget_is_a_parameter_not_module_state():
    assert not hasattr(render, "budget") and not hasattr(render, "set_budget")
    report = _report()
    shown = render.Rendered(report, render.TextBudget(max_lines=0))
    assert shown._repr_html_() == render.to_html(report, render.TextBudget(max_lines=0))
    assert repr(shown) == repr(report) == "<StagesReport 'step': traced, lowered, compiled; 36.0 ms>"


def test_rendered_applies_its_budget_in_both_forms():
    from IPython.lib.pretty import pretty

    big = "\n".join(f"%{i} = stablehlo.add %a, %b : tensor<4xf32>" for i in range(50))
    report = _report(lowered=LoweredStation("stablehlo", big, False, None, "n/a"))
    shown = render.Rendered(report, render.TextBudget(max_lines=10))
    assert "40 more lines not shown; full text in report.lowered.module_text" in shown._repr_html_()
    assert pretty(shown) == str(shown) == render.to_text(report, render.TextBudget(max_lines=10))
    assert "… 40 more lines not shown; full text in report.lowered.module_text" in str(shown)
    assert "more lines" not in report._repr_html_() + str(report)


def test_report_module_never_imports_render():
    import ast
    import inspect

    from jaxshow import report

    imported = set()
    for node in ast.walk(ast.parse(inspect.getsource(report))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    assert imported == {
        "__future__.annotations", "dataclasses.dataclass", "dataclasses.field",
        "typing.Callable", "typing.Literal", "typing.NamedTuple", "typing.Sequence",
    }


def test_importing_jaxshow_fills_the_registry_without_jax_or_ipython():
    import os
    import subprocess
    import sys

    probe = (
        "import sys, jaxshow\n"
        "from jaxshow.report import RENDERERS, CacheReport, CellReport, StagesReport, TraceHistory\n"
        "print(all(t in RENDERERS for t in (CacheReport, CellReport, StagesReport, TraceHistory)),"
        " 'jax' in sys.modules, 'IPython' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["True", "False", "False"]


def test_without_a_registered_renderer_every_form_is_the_one_line_repr(monkeypatch):
    from IPython.lib.pretty import pretty

    from jaxshow import report as report_module

    monkeypatch.setattr(report_module, "RENDERERS", {})
    report = _report()
    line = "<StagesReport 'step': traced, lowered, compiled; 36.0 ms>"
    assert report._repr_html_() is None
    assert str(report) == pretty(report) == repr(report) == line


# --- every user-derived string is clean and bounded; every table is budgeted -------------------

TERMINAL_HOSTILE = '\x1b[31mred\x1b[0m\x1b]0;title\x07 </pre><script>alert("x")</script> &amp; \'q\' \x00\x07\x08\r\u202eevil\ud800'
"""Colour, a terminal-title sequence, markup, an entity, quotes, NUL, bell, backspace, CR, a bidi override, a lone
surrogate (UTF-8 cannot encode it: a kernel failed to send the report, 'UnicodeEncodeError: ... surrogates not allowed')."""
TERMINAL_HOSTILE_CLEAN = 'red </pre><script>alert("x")</script> &amp; \'q\' evil\ufffd'
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


IR_FIELDS = frozenset({"jaxpr_text", "jaxpr_source_text", "module_text", "optimized_hlo_text", "lines"})  # "lines": linked views, diffs


def _with_every_string(record, value: str, *, keep: frozenset[str] = frozenset()):
    """``record`` with every string field, at any depth, replaced by ``value`` (except the fields named in ``keep``)."""

    def swap(x):
        if isinstance(x, str):
            return value
        if isinstance(x, tuple):
            return tuple(swap(item) for item in x)
        if dataclasses.is_dataclass(x):
            changes = {f.name: swap(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init and f.name not in keep}
            return dataclasses.replace(x, **changes)
        return x

    return swap(record)


def _cache_records():
    miss = CacheMiss(
        function="f", category="input_types", summary="x changed", changes=(ArgChange("x", "f32[4]", "f32[3]"),),
        evidence="JAX says\nmore", evidence_source="jax", call_site="In[3]:2", signature=(("x", "f32[4]"),), same_line_hint=True,
        jaxpr_diff=TextDiff("jaxpr against the previous definition of f", "jaxpr", (" a", "-b", "+c"), 1, 1),
    )
    stats = FunctionCacheStats("f", "f", "In[1]:1", traced=2, calls=3, hits=1, cache_size=2, misses=(miss,), trace_time_output=("hello\n",))
    compile_ = PersistentCompile("jit_f", "skipped", "took < 1.00 s to compile")
    return (
        CacheReport(functions=(stats,), persistent=(compile_,), notes=("a note",), cell_error=ErrorSummary("ValueError", "bad")),
        TraceHistory("f", "f", "In[1]:1", (TraceEntry((("x", "f32[3]"),), 0.0, "never_seen", "first trace"),), 1, 1, "n/a", 8),
        CacheClearReport("f", 2, 0, 1, ("the persistent compilation cache on disk",)),
        PersistentCacheReport(
            directory="/tmp/c", directory_source="jax_compilation_cache_dir", directory_in_use="/tmp/d", enabled=True, initialized=True,
            gates=(PersistentGate("jax_enable_compilation_cache", "True", "False turns the cache off"),), entry_count=1, total_bytes=10,
            newest_entry="jit_f-abc", newest_mtime=0.0, listing_unavailable=None, compiles=(compile_,), notes=("a note",),
        ),
    )


def _stages_records():
    report = _report(
        error=ErrorSummary("ValueError", "bad", "compile"), stopped_at="compile", notes=("a note",), call_site=SourceLocation("cell.py", 3),
        wrapper=dataclasses.replace(_wrapper(), static_args=(("n", "3"),)),
        traced=dataclasses.replace(_report().traced, effects=("IOEffect",), notes=("a traced note",)),
        linked=LinkedViews((SourceText("/tmp/m.py", 1, ("y = v * 2",)),), (LinkedIR("jaxpr", ("a",), ("/tmp/m.py:1",), "a"),)),
    )
    cell = CellReport((report,), 0.1, 1, HelperCompiles(1, 0.01, ("convert_element_type",)), ("a cell note",), ErrorSummary("KeyError", "k"))
    missing = _report(traced=None, lowered=None, compiled=None, stopped_at="trace", error=ErrorSummary("TypeError", "no", "trace"))
    unavailable = _report(
        lowered=LoweredStation("stablehlo", "m", False, None, "no cost here"),
        compiled=CompiledStation(None, "no HLO here", None, "no cost", None, "no memory", (), (), "no placements"),
    )
    return (report, cell, missing, unavailable)


ALL_RECORDS = _stages_records() + _cache_records()


@pytest.mark.parametrize("record", ALL_RECORDS, ids=lambda r: type(r).__name__)
def test_terminal_escapes_and_control_characters_never_reach_either_form(record):
    hostile = _with_every_string(record, TERMINAL_HOSTILE)
    text, page = render.to_text(hostile), render.to_html(hostile)
    assert not CONTROL.search(text) and not CONTROL.search(page)
    text.encode("utf-8"), page.encode("utf-8")
    assert TERMINAL_HOSTILE_CLEAN in text
    parser = _parse(page)
    assert "script" not in [t for t, _ in parser.starts]
    assert TERMINAL_HOSTILE_CLEAN in "".join(parser.text)
    assert "&amp;amp;" in page and "&lt;script>" in page and 'alert("x")' in page


@pytest.mark.parametrize("record", ALL_RECORDS, ids=lambda r: type(r).__name__)
def test_ten_thousand_character_strings_are_cut_with_their_length_noted(record):
    """IR texts are left short here: they keep their own line and byte budget. The text is not wrapped here."""
    long_record = _with_every_string(record, "n" * 10_000, keep=IR_FIELDS)
    budget = WIDE
    for form in (render.to_text(long_record, budget), render.to_html(long_record)):
        runs = [len(run) for run in re.findall("n{2,}", form)]
        assert runs and max(runs) <= budget.max_line_chars
        assert "… (10,000 chars)" in form
    assert len(render.to_text(long_record)) < 60_000
    assert len(render.to_html(long_record)) < 90_000


def test_a_long_name_shows_two_hundred_characters_then_its_length():
    name = "very_long_function_name_" * 500
    report = _report(function=name, wrapper=_wrapper(name))
    text = render.to_text(report, WIDE)
    assert text.splitlines()[0] == f"{name[:200]}… (12,000 chars): trace 2.0 ms · lower 4.0 ms · compile 30.0 ms"
    assert f"    function         {name[:200]}… (12,000 chars)\n" in text
    parser = _parse(render.to_html(report))
    assert f"{name[:200]}… (12,000 chars)" in parser.text and name not in "".join(parser.text)


def test_error_messages_keep_twenty_lines_each_bounded():
    lines = [f"line {i}: " + "e" * 2_000 for i in range(30)]
    report = _report(error=ErrorSummary("ValueError", "\n".join(lines), "lower"), stopped_at="lower", lowered=None, compiled=None)
    text = render.to_text(report, WIDE)
    shown = text.splitlines()[1:23]
    assert shown[0] == f"  ValueError: {lines[0][:1000]}… (2,008 chars)"
    assert shown[1:20] == [f"    {line[:1000]}… ({len(line):,} chars)" for line in lines[1:20]]
    assert shown[20] == "    … 10 more lines"
    assert "line 20:" not in text and "line 20:" not in render.to_html(report)


def test_text_messages_keep_their_lines_indented_under_their_label():
    report = _report(notes=("first\n② Traced: forged heading",))
    assert "  note: first\n    ② Traced: forged heading\n" in render.to_text(report)


def _many_leaves(n: int) -> StagesReport:
    report = _report()
    args = tuple(ArgSpec(f"params['layer_{i}']['w']", (128, 256), "float32", sharding="SingleDeviceSharding(cpu:0)") for i in range(n))
    inputs = tuple(PlacementSpec(f"params['layer_{i}']['w']", "SingleDeviceSharding(cpu:0)", "{1,0}") for i in range(n))
    return dataclasses.replace(
        report,
        traced=dataclasses.replace(report.traced, args=args, out_info=args, primitive_counts=tuple((f"op_{i}", 1) for i in range(n))),
        compiled=dataclasses.replace(report.compiled, inputs=inputs, outputs=inputs),
        wrapper=dataclasses.replace(report.wrapper, static_args=tuple((f"s{i}", repr(i)) for i in range(n))),
    )


def test_ten_thousand_leaves_give_a_small_report_that_says_where_the_rest_is():
    report = _many_leaves(10_000)
    text, page = render.to_text(report), render.to_html(report)
    assert len(page.encode()) < 60_000 and len(text.encode()) < 30_000
    for attribute in ("traced.args", "traced.out_info", "compiled.inputs", "compiled.outputs", "wrapper.static_args"):
        assert f"\n    … 9,950 more (all in report.{attribute})\n" in text
        assert f"… 9,950 more (all in report.{attribute})" in page
    assert "op_49×1, … 9,950 more (all in report.traced.primitive_counts)\n" in text
    assert "params['layer_49']" in text and "params['layer_50']" not in text + page
    more_cells = [a for t, a in _parse(page).starts if t == "td" and a.get("class") == "js-more"]
    assert [a["colspan"] for a in more_cells] == ["2", "1", "1", "1", "1"], "columns every row shares are said once"
    for said in ("type (all 10,000): f32[128,256]", "sharding (all 10,000): SingleDeviceSharding(cpu:0)", "donated (all 10,000): no",
                 "layout (all 10,000): {1,0}"):
        assert said in text and said in page


def test_max_rows_is_part_of_the_budget():
    report = _many_leaves(3)
    text = render.to_text(report, render.TextBudget(max_rows=2))
    expected = (
        "    argument                type          sharding                     donated\n"
        "    params['layer_0']['w']  f32[128,256]  SingleDeviceSharding(cpu:0)  no\n"
        "    params['layer_1']['w']  f32[128,256]  SingleDeviceSharding(cpu:0)  no\n"
        "    … 1 more (all in report.traced.args)\n"
    )
    assert expected in text
    assert "… 1 more" not in render.to_text(report) and "… 1 more" not in render.to_text(report, render.TextBudget(max_rows=0))


def test_jaxcache_tables_and_misses_are_budgeted():
    report, history, _, persistent = _cache_records()
    stats = report.functions[0]
    many = CacheReport(
        functions=tuple(dataclasses.replace(stats, qualname=f"f{i}", misses=stats.misses * 60) for i in range(60)),
        persistent=tuple(PersistentCompile(f"jit_{i}", "written") for i in range(60)),
    )
    text, page = render.to_text(many), render.to_html(many)
    for form in (text, page):
        assert "… 10 more (all in report.functions)" in form and "… 10 more (all in report.persistent)" in form
        assert "… 10 more (all in report.functions[0].misses)" in form
        assert "… 10 more (all in report.functions[49].misses)" in form and "report.functions[50].misses" not in form
    assert "\n  … 10 more (all in report.functions)\n" in text
    long_history = dataclasses.replace(history, entries=history.entries * 60, traces_observed=60)
    long_persistent = dataclasses.replace(persistent, gates=persistent.gates * 60, compiles=tuple(PersistentCompile(f"m{i}", "hit") for i in range(60)))
    for record, attributes in ((long_history, ("report.entries",)), (long_persistent, ("report.gates", "report.compiles"))):
        for attribute in attributes:
            assert f"… 10 more (all in {attribute})" in render.to_text(record)
            assert f"… 10 more (all in {attribute})" in render.to_html(record)


def test_jaxcache_evidence_and_trace_time_output_are_clean_and_clipped():
    report = _cache_records()[0]
    stats = report.functions[0]
    printed = tuple(f"\x1b[32mstep {i}\x1b[0m\r\n" for i in range(600))
    noisy = dataclasses.replace(report, functions=(dataclasses.replace(stats, trace_time_output=printed),))
    text = render.to_text(noisy)
    assert "       > step 0\n" in text and "       > step 499\n       > … 100 more lines\n" in text
    assert "step 500" not in text and "\x1b" not in text and "\r" not in text
    page = render.to_html(noisy)
    assert "step 499\n… 100 more lines" in page and "\x1b" not in page


def test_one_line_left_out_reads_in_the_singular():
    """A trace-time output, a miss's jaxpr diff and a %jaxdump diff one line over the budget read '… 1 more lines'."""
    report = _cache_records()[0]
    stats, miss = report.functions[0], report.functions[0].misses[0]
    diff = TextDiff("jaxpr against the previous trace", "jaxpr", ("-a", "+b", "-c", "+d"), 2, 2)
    one_over = dataclasses.replace(report, functions=(dataclasses.replace(
        stats, trace_time_output=("step 0\nstep 1\nstep 2\nstep 3\n",), misses=(dataclasses.replace(miss, jaxpr_diff=diff),)),))
    budget = render.TextBudget(max_lines=3)
    text, page = render.to_text(one_over, budget), render.to_html(one_over, budget)
    assert "       > step 2\n       > … 1 more line\n" in text and "step 2\n… 1 more line</code>" in page
    assert "         +b\n         -c\n         … 1 more diff line (all in report.functions[0].misses[0].jaxpr_diff.lines)\n" in text
    assert "… 1 more diff line (all in report.functions[0].misses[0].jaxpr_diff.lines)</span>" in page
    files = [DumpFile(f"jax_ir000{n}_jit_f_compile.mlir", "stablehlo", n, "jit_f", "f", "compile", 10, 0.0) for n in (1, 2)]
    dump_diff = DumpDiff("/tmp/dump", *files, "stablehlo", "@@ -1,2 +1,2 @@\n-x\n+y\n z", 1, 1)
    assert render.to_text(dump_diff, budget).endswith("  @@ -1,2 +1,2 @@\n  -x\n  +y\n  … 1 more line (all in report.diff_text)")
    assert "… 1 more line (all in report.diff_text)</span>" in render.to_html(dump_diff, budget)


def test_a_dump_diffs_text_counts_its_lines_as_its_html_does():
    """``%jaxdump --diff``'s text read '(+1 -1 lines)' with an ASCII minus, the HTML '+1 −1 lines' as every other diff."""
    files = [DumpFile(f"jax_ir000{n}_jit_f_compile.mlir", "stablehlo", n, "jit_f", "f", "compile", 10, 0.0) for n in (1, 2)]
    dump_diff = DumpDiff("/tmp/dump", *files, "stablehlo", "@@ -1 +1 @@\n-x\n+y", 1, 1)
    assert render.to_text(dump_diff).splitlines()[0] == (
        "%jaxdump --diff jax_ir0001_jit_f_compile.mlir → jax_ir0002_jit_f_compile.mlir  (+1 −1 lines)")
    assert "+1 −1 lines</span>" in render.to_html(dump_diff)
    large = dataclasses.replace(dump_diff, added_lines=1_234, removed_lines=5_678)
    assert render.to_text(large).splitlines()[0].endswith("  (+1,234 −5,678 lines)")
    assert "+1,234 −5,678 lines</span>" in render.to_html(large)


def test_limits_clean_clip_and_block():
    assert limits.clean("\x1b[1;31mred\x1b[0m\tok\r\n\x00x\u202e") == "red\tok\nx"
    assert limits.clip("abcdef", 3) == "abc… (6 chars)" and limits.clip("abc", 3) == "abc" and limits.clip("abcdef", 0) == "abcdef"
    budget = render.TextBudget(max_chars=5, max_line_chars=4)
    assert limits.line("a\nb\tc\x07def", budget) == "a b c… (8 chars)"
    assert limits.block("one\ntwo\nthree\nfour", budget, 2) == "one\ntwo\n… 2 more lines"
    assert limits.block("abcdefg", budget, 2) == "abcd… (7 chars)"
    assert limits.limit_rows((1, 2, 3), render.TextBudget(max_rows=2), "report.x") == ((1, 2), "… 1 more (all in report.x)")
    assert limits.limit_rows((1, 2), render.TextBudget(max_rows=2), "report.x") == ((1, 2), None)


def test_text_says_what_the_html_says():
    traced = dataclasses.replace(_report().traced, const_count=2, jaxpr_source_text="{ lambda ; a:f32[3]. let b:f32[3] = sin a  # cell.py:3\n in (b,) }")
    report = _report(executed=False, traced=traced)
    text, page = render.to_text(report), render.to_html(report)
    for fact in ("walked ahead of time, not executed", "2 closed-over constants baked into the jaxpr", "jaxpr with source locations", "# cell.py:3"):
        assert fact in text and fact in page
    assert "  jaxpr with source locations (2 lines):\n    { lambda ; a:f32[3]. let b:f32[3] = sin a  # cell.py:3\n" in text
    helpers = HelperCompiles(9, 0.01, tuple(f"h{i}" for i in range(9)))
    cell = CellReport((report,), 0.1, 1, helpers)
    for form in (render.to_text(cell), render.to_html(cell)):
        assert "h6, h7…" in form and "h8" not in form
    miss = _cache_records()[0]
    for form in (render.to_text(miss), render.to_html(miss)):
        assert "signature traced: x: f32[4]" in re.sub("<[^>]+>", "", form)
    assert render.to_text(CacheReport(functions=())) == "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code"


def test_what_a_frontend_receives_for_a_rendered_record_and_for_a_bare_one(monkeypatch):
    from IPython.core.formatters import DisplayFormatter

    from jaxshow import report as report_module

    big = "\n".join(f"%{i} = stablehlo.add %a, %b : tensor<4xf32>" for i in range(50))
    report = _report(lowered=LoweredStation("stablehlo", big, False, None, "n/a"))
    budget = render.TextBudget(max_lines=10)
    data, _ = DisplayFormatter().format(render.Rendered(report, budget))
    assert data == {"text/plain": render.to_text(report, budget), "text/html": render.to_html(report, budget)}
    data, _ = DisplayFormatter().format(report)
    assert data == {"text/plain": render.to_text(report), "text/html": render.to_html(report)}
    monkeypatch.setattr(report_module, "RENDERERS", {})
    data, _ = DisplayFormatter().format(report)
    assert data == {"text/plain": "<StagesReport 'step': traced, lowered, compiled; 36.0 ms>"}


def test_head_line_says_where_whose_and_which_thread_in_both_forms():
    report = _report(
        call_site=SourceLocation("In[1]", 7, "helper"),
        cell_site=SourceLocation("In[3]", 2, "<module>"),
        kind="library",
        other_thread=True,
    )
    first = render.to_text(report, WIDE).splitlines()[0]
    assert first == ("step: trace 2.0 ms · lower 4.0 ms · compile 30.0 ms (called at In[1]:7 in helper) (from In[3]:2) "
                     "(a library's function) (on another thread)")
    assert render.to_text(report).splitlines()[:2] == [
        "step: trace 2.0 ms · lower 4.0 ms · compile 30.0 ms (called at In[1]:7 in helper) (from In[3]:2) (a",
        "  library's function) (on another thread)",
    ]
    page = render.to_html(report)
    for bit in ("· called at In[1]:7 in helper", "· from In[3]:2", "· a library's function", "· on another thread"):
        assert bit in page


def test_disable_jit_and_failures_are_never_headed_cache_hit():
    assert render.to_text(_report(jit_disabled=True)).splitlines()[0] == (
        "step: ran op by op: jax.disable_jit() was in effect, so JAX did not trace, lower or compile it")
    failed = _report(traced=None, lowered=None, compiled=None, stopped_at="trace", error=ErrorSummary("TypeError", "bad", "trace"),
                     timings=StageTimings())
    assert repr(failed) == "<StagesReport 'step': no station; failed while tracing; no stage timings>"
    assert render.to_text(failed).splitlines()[:2] == ["step: failed while tracing", "  TypeError: bad"]


# --- real-model scale: small HTML, grouped tables, folded pieces, themes, wrapping, plurals ------------


def _model_paths() -> list[str]:
    """The 150 argument paths of a 12-layer transformer-ish model."""
    subs = ("['attn']['wk']", "['attn']['wo']", "['attn']['wq']", "['attn']['wv']", "['ln1']['bias']", "['ln1']['scale']",
            "['ln2']['bias']", "['ln2']['scale']", "['mlp']['b1']", "['mlp']['b2']", "['mlp']['w1']", "['mlp']['w2']")
    return ["params['embed']", *(f"params['layer{i}']{s}" for i in range(12) for s in subs), "params['pos']", "tokens"]


def _model_report(lines: int = 3_000) -> StagesReport:
    """A big module's report, built by hand: 147 inputs, ``lines`` lines of jaxpr, StableHLO and HLO."""
    paths = _model_paths()
    args = tuple(ArgSpec(p, (4, 32), "int32") if p == "tokens" else ArgSpec(p, (64,) if p.endswith(("b1']", "b2']", "bias']", "scale']")) else (64, 64), "float32")
                 for p in paths)
    stablehlo = "module @jit_loss attributes {mhlo.num_partitions = 1 : i32} {\n  func.func public @main(%arg0: tensor<64x64xf32>) -> (tensor<f32>) {\n" + "\n".join(
        f"    %{i} = stablehlo.dot_general %{i - 1}, %arg{i % 150}, contracting_dims = [1] x [0] : (tensor<4x32x64xf32>, tensor<64x64xf32>) -> tensor<4x32x64xf32>"
        if i % 2 else f"    %{i} = stablehlo.add %{i - 1}, %cst_{i} : tensor<4x32x64xf32>" for i in range(1, lines)
    ) + "\n    return %0 : tensor<f32>\n  }\n}"
    hlo = "HloModule jit_loss\n\nENTRY %main.1 (Arg_0.1: f32[64,64]) -> f32[] {\n" + "\n".join(
        f'  %add.{i} = f32[4,32,64]{{2,1,0}} add(f32[4,32,64]{{2,1,0}} %dot.{i}, f32[4,32,64]{{2,1,0}} %b.{i}), '
        f'metadata={{op_name="jit(loss)/add" source_file="model.py" source_line={i}}}' for i in range(lines)
    ) + "\n}"
    jaxpr = "{ lambda ; a:f32[64,64]. let\n" + "\n".join(
        f"    b{i}:f32[4,32,64] = dot_general[dimension_numbers=(([2], [0]), ([], []))] a{i} c{i}" for i in range(lines)
    ) + "\n  in (b,) }"
    placements = tuple(PlacementSpec(p, "SingleDeviceSharding(cpu:0)", "{1,0}") for p in paths)
    return _report(
        traced=TracedStation(jaxpr, None, args, args[:1], (), lines, (("dot_general", lines),)),
        lowered=LoweredStation("stablehlo", stablehlo, False, None, "not reported"),
        compiled=CompiledStation(hlo, None, None, "not reported", None, "not reported", placements, placements[:1]),
    )


def test_a_big_modules_html_is_at_most_1_35_times_its_text():
    report = _model_report()
    page = render.to_html(report).encode()
    text = render.to_text(report, render.TextBudget(width=100)).encode()
    assert len(text) == 186_946
    assert len(page) <= 1.35 * len(text), f"{len(page):,} bytes of HTML for {len(text):,} of text"
    assert page.count(b"&#x27;") == page.count(b"&quot;") == page.count(b"&gt;") == 0, "text nodes escape & and < only"


def test_only_ops_types_keywords_symbols_and_comments_are_marked():
    assert highlight_html("%0 = stablehlo.add %a, %cst_1 : tensor<4xf32> loc(#loc3)", "stablehlo") == (
        "%0 = <b>stablehlo.add</b> %a, %cst_1 : <i>tensor&lt;4xf32></i> <i class=c>loc</i>(<i class=c>#loc3</i>)")
    assert highlight_html("  %a.1 = f32[3]{0} add(f32[3]{0} %x, f32[3]{0} %y), metadata={op_name=\"jit(f)/add\" source_line=3}", "hlo") == (
        "  %a.1 = <i>f32[3]{0}</i> <b>add</b>(<i>f32[3]{0}</i> %x, <i>f32[3]{0}</i> %y), "
        "<i class=c>metadata={op_name=\"jit(f)/add\" source_line=3}</i>")
    assert highlight_html("let b:f32[3] = mul a 2.0:f32[] in (b,)", "jaxpr") == (
        "<b class=k>let</b> b:<i>f32[3]</i> = <b>mul</b> a 2.0:<i>f32[]</i> <b class=k>in</b> (b,)")


def test_path_parts_and_groups():
    from jaxshow.render.groups import Group, Hidden, group_rows, path_parts

    assert path_parts("params['a]b'][0].w") == ["params", "['a]b']", "[0]", ".w"]
    assert path_parts("x") == ["x"] and path_parts("[0]") == ["[0]"] and path_parts("a[unclosed") == ["a[unclosed"]
    assert group_rows([f"x[{i}]" for i in range(24)]) is None, "24 rows stay flat"
    assert group_rows([f"params['layer_{i}']['w']" for i in range(100)]) is None, "no two leaves share a prefix: nothing to group"
    blocks, hidden = group_rows(_model_paths())
    assert [b.prefix if isinstance(b, Group) else b for b in blocks] == ["params", 146] and hidden == Hidden(0, 0)
    inner = blocks[0].blocks
    assert [b.prefix if isinstance(b, Group) else b for b in inner] == [0, *(f"params['layer{i}']" for i in range(12)), 145]
    assert inner[1].blocks == tuple(range(1, 13)) and inner[1].indices == tuple(range(1, 13))
    blocks, hidden = group_rows(_model_paths(), max_blocks=3)
    assert [b.prefix if isinstance(b, Group) else b for b in blocks] == ["params", 146] and hidden == Hidden(0, 0)
    assert [b.prefix if isinstance(b, Group) else b for b in blocks[0].blocks] == [0, "params['layer0']", "params['layer1']"]
    assert blocks[0].hidden == Hidden(rows=10 + 1, arrays=146 - 25) and len(blocks[0].indices) == 146, "layer2…11 and pos"


def test_a_group_holding_a_prng_key_says_its_size():
    """A flax NNX model with dropout holds its rng key (``key<fry>[]``): its group read 'model — 10 arrays', no size,
    beside 'optimizer — 14 arrays, 1.15 KiB'. A typed key of JAX's own implementations has a fixed size."""
    from jaxshow.render.groups import leaf_bytes

    assert [leaf_bytes("key<fry>", ()), leaf_bytes("key<rbg>", (4,)), leaf_bytes("key<custom>", ())] == [8, 64, None]


def test_long_argument_tables_are_grouped_by_pytree_prefix_in_both_forms():
    report = _model_report(lines=10)
    page = render.to_html(report)
    assert '<details class="js-group" open><summary>params — 146 arrays, 1.17 MiB</summary>' in page
    assert page.count('<details class="js-group"><summary>[\'layer') == 24, "groups of leaves start closed (args_info and compiled inputs)"
    assert "<summary>['layer3'] — 12 arrays, 97.50 KiB</summary>" in page
    assert "<tr><td>['attn']['wq']</td><td>f32[64,64]</td></tr>" in page
    assert "sharding (all 147): —" in page and "donated (all 147): no" in page
    stations = re.findall(r'<details class="js-station"( open)?><summary><span>(.) ', page)
    assert stations == [("", "①"), ("", "②"), ("", "③"), ("", "④")], "a 147-row argument table keeps the Traced station closed"
    assert re.findall(r'<details class="js-station"( open)?><summary><span>②', render.to_html(_report())) == [" open"]
    text = render.to_text(report, render.TextBudget(width=100))
    expected = "\n".join([
        "② Traced: 10 equations, 147 inputs → 1 output",
        "    sharding (all 147): —",
        "    donated (all 147): no",
        "    argument     type",
        "    params — 146 arrays, 1.17 MiB",
        "      ['embed']  f32[64,64]",
        *(f"      ['layer{i}'] — 12 arrays, 97.50 KiB" for i in range(12)),
        "      ['pos']    f32[64,64]",
        "    tokens       i32[4,32]",
        "    (each array: report.traced.args)",
    ])
    assert expected in text


def test_big_ir_with_no_line_budget_is_shown_whole_in_folded_pieces():
    from jaxshow.render.stages import CHUNK_LINES

    report = _model_report(lines=5_000)
    page = render.to_html(report, render.TextBudget(max_lines=0))
    hlo = report.compiled.optimized_hlo_text
    section = page[page.index("optimised HLO — 5,004 lines"):]
    pieces = re.findall(r"<details class=\"js-section\"><summary>lines ([\d,]+)–([\d,]+)</summary><pre[^>]*><code[^>]*>(.*?)</code></pre></details>",
                        section, re.S)
    assert [(a, b) for a, b, _ in pieces] == [("1", "2,000"), ("2,001", "4,000"), ("4,001", "5,004")]
    assert CHUNK_LINES == 2_000
    whole = "\n".join(body for _, _, body in pieces)
    assert whole.replace("&lt;", "<").replace("&amp;", "&") == hlo, "every line is there, unhighlighted (past the byte budget)"
    shown = render.to_html(report)
    assert ("4,504 more lines not shown; full text in report.compiled.optimized_hlo_text "
            "(%%jaxstages --save DIR writes every station to files)") in shown


def test_stylesheet_follows_the_theme_and_hides_from_sanitisers():
    from jaxshow.render.style import STYLE_ELEMENT, STYLESHEET

    page = render.to_html(_report())
    assert page.endswith(f"{STYLE_ELEMENT}</div>") and STYLE_ELEMENT.startswith("<style><!--\n") and STYLE_ELEMENT.endswith("\n--></style>")
    for variable in ("--jp-layout-color0", "--jp-ui-font-color0", "--vscode-editor-background", "--vscode-editor-foreground",
                     "--jp-mirror-editor-keyword-color", "@media (prefers-color-scheme:dark)"):
        assert variable in STYLESHEET
    root_style = _parse(page).starts[0][1]["style"]
    assert "color" not in root_style and "background" not in root_style, "no fixed colours: a dark page never gets a white card"
    nbconvert = pytest.importorskip("nbconvert.filters.strings")
    cleaned = nbconvert.clean_html(page)
    assert "--js-" not in cleaned and ".jaxshow" not in cleaned and "prefers-color-scheme" not in cleaned
    assert "&lt;thead" not in cleaned and "&lt;th&gt;" not in cleaned, "header rows are tr/td, which the sanitiser keeps"


def test_text_wraps_prose_and_tables_at_the_width_but_never_ir():
    from jaxshow.render.plain import columns, paragraph, text_table

    budget = render.TextBudget(width=40)
    assert paragraph("  note: ", "one two three four five six seven eight nine ten", "    ", budget).splitlines() == [
        "  note: one two three four five six",
        "    seven eight nine ten",
    ]
    # A long first prefix shortens the first line only; the lines after it fill the width (they were
    # cut to the first line's room, a thin column under a long miss title).
    assert paragraph("    1. a long category title: ", "one two three four five six seven eight", "       ", budget).splitlines() == [
        "    1. a long category title: one two",
        "       three four five six seven eight",
    ]
    rows = [("x", "a short one"), ("longer", "this cell is far too long for forty columns")]
    assert text_table(rows, ("name", "what"), budget, indent="  ") == [
        "  name    what",
        "  x       a short one",
        "  longer  this cell is far too long for",
        "          forty columns",
    ]
    # The column wrapping shortens most wraps, not the last: a sharding beside yes/no, prose beside a file name.
    rows = [("x", "NamedSharding(mesh=Mesh('data': 8), spec=P('data'))", "no")]
    assert text_table(rows, ("arg", "sharding", "donated"), budget) == [
        "arg  sharding                         donated",
        "x    NamedSharding(mesh=Mesh('data':  no",
        "     8), spec=P('data'))",
    ]
    # ... but the last column wraps where its words fit: a %jaxdump file's note, not its description
    rows = [("f.mlir", "module jit_f, stage compile (handed to XLA)", "a hit, served from the persistent cache")]
    assert text_table(rows, None, render.TextBudget(width=80)) == [
        "f.mlir  module jit_f, stage compile (handed to XLA)  a hit, served from the",
        "                                                     persistent cache",
    ]
    rows = [("jax_ir0001_jit_f_compile.mlir", "module jit_f, stage compile (handed to XLA)")]
    assert text_table(rows, None, render.TextBudget(width=60)) == [
        "jax_ir0001_jit_f_compile.mlir  module jit_f, stage compile",
        "                               (handed to XLA)",
    ]
    # Where one column's wrap is not enough, the widest columns shrink in turn, each cell wrapping under itself: an
    # operation's name after a '/', a pytree path between ']' and '[', HLO's '/*index=2*/' (no file path) alike.
    rows = [("ynn_fusion.4", "temporary", "f32[4096,32]", "512.00 KiB", "fusion of jit(train_step)/transpose(jvp())/dot_general"),
            ("while.3", "temporary", "(s32[], f32[4,16,64], /*index=2*/f32[2,256])", "1.90 MiB", "parameter 3 (params['layers']['w1'])")]
    assert text_table(rows, ("value", "kind", "type", "size", "what"), render.TextBudget(width=74), indent="    ") == [
        "    value         kind       type           size        what",
        "    ynn_fusion.4  temporary  f32[4096,32]   512.00 KiB  fusion of",
        "                                                        jit(train_step)/",
        "                                                        transpose(jvp())/",
        "                                                        dot_general",
        "    while.3       temporary  (s32[],        1.90 MiB    parameter 3",
        "                             f32[4,16,64],              (params['layers']",
        "                             /*index=2*/                ['w1'])",
        "                             f32[2,256])",
    ]
    # A terminal draws CJK characters two columns wide and a combining mark over the letter before it.
    assert text_table([("損失", "f32[3]"), ("f̃", "f32[2]"), ("loss", "f32[]")], ("name", "type"), budget, rule=True) == [
        "name  type",
        "----  ------",
        "損失  f32[3]",
        "f̃     f32[2]",
        "loss  f32[]",
    ]
    # ... and wraps prose and a table's last column by those columns: 損失 is 4 wide, not 2
    wide = "損失 " * 12
    assert [columns(piece) for piece in paragraph("note: ", wide, "  ", budget).splitlines()] == [40, 26]
    assert text_table([("x", wide)], None, budget) == ["x  損失 損失 損失 損失 損失 損失 損失", "   損失 損失 損失 損失 損失"]
    ir = "    %0 = stablehlo.add " + "%a, " * 60 + "%b : tensor<4xf32>"
    report = _report(lowered=LoweredStation("stablehlo", ir.strip(), False, None, "not reported"))
    assert ir in render.to_text(report, budget).splitlines()
    assert max(len(piece) for piece in render.to_text(_report(notes=("word " * 60,)), budget).splitlines() if "word" in piece) <= 40


def test_a_wrapped_columns_rule_is_as_wide_as_what_it_holds():
    # At 100 columns a verdict's 'why' wrapped to 42 columns under a rule of 75: the column took the room it was given,
    # not the width of its lines.
    from jaxshow.render.plain import text_table

    rows = [("jit_f", "not written", "took < 1.00 s to compile (0.03 s); jax_persistent_cache_min_compile_time_secs")]
    assert text_table(rows, ("module", "verdict", "why"), render.TextBudget(width=100), indent="    ", rule=True) == [
        "    module  verdict      why",
        "    ------  -----------  ------------------------------------------",
        "    jit_f   not written  took < 1.00 s to compile (0.03 s);",
        "                         jax_persistent_cache_min_compile_time_secs",
    ]


def test_counts_read_in_the_singular_and_plural():
    from jaxshow.report import SavedFile, SavedReport, plural

    assert [plural(n, "input") for n in (0, 1, 2, 12_345)] == ["0 inputs", "1 input", "2 inputs", "12,345 inputs"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"
    one = _report()
    assert "1 equation · 1 input → 1 output" in render.to_html(one)
    assert "② Traced: 1 equation, 1 input → 1 output" in render.to_text(one)
    assert "1 top-level equation; primitives" in render.to_html(one) and "jaxpr — 1 line, 51 B" in render.to_html(one)
    two = _report(traced=dataclasses.replace(one.traced, equation_count=2, args=one.traced.args * 2, out_info=one.traced.out_info * 3, const_count=1))
    assert "② Traced: 2 equations, 2 inputs → 3 outputs" in render.to_text(two)
    assert "1 closed-over constant baked into the jaxpr" in render.to_text(two)
    saved = SavedReport("out", (SavedFile("a.txt", "jaxpr", 3),), None)
    assert render.to_text(saved).splitlines()[0] == "saved 1 file to out:" and repr(saved).endswith("1 file in out>")
    assert _headline_of(CacheReport(functions=(FunctionCacheStats("f", "f", 1, 1, 0, 1, None, (), ()),))) == "%jaxcache — 1 trace of 1 jitted function"


def _headline_of(report: CacheReport) -> str:
    return render.to_text(report).splitlines()[0]


def test_jaxcache_misses_left_out_are_one_line_and_the_shown_keep_their_numbers():
    report = _cache_records()[0]
    stats = report.functions[0]
    first, last = stats.misses[0], dataclasses.replace(stats.misses[0], summary="x: now f32[9], before f32[8]")
    many = dataclasses.replace(report, functions=(dataclasses.replace(
        stats, traced=1000, misses=(first, last), misses_left_out=998, left_out_after=1,
        left_out_by_category=(("static_args", 4), ("input_types", 994))),))
    line = "… 998 more misses of f, counted but not kept: 4 different static arguments, 994 different input types"
    text, page = render.to_text(many), render.to_html(many)
    assert "    1. different input types: x changed\n" in text
    assert f"\n    {line}\n    1000. different input types: x: now f32[9], before f32[8]\n" in text
    assert line in page and page.index("<strong>1. ") < page.index(line) < page.index("<strong>1000. ")
    one_row = render.TextBudget(max_rows=1)  # the line is shown even where the budget cuts the misses shown
    assert line in render.to_text(many, one_row) and line in render.to_html(many, one_row)
    none_kept = dataclasses.replace(many, functions=(dataclasses.replace(many.functions[0], misses=(), left_out_after=0, misses_left_out=1000,
                                                                          trace_time_output=()),))
    assert "… 1,000 more misses of f, counted but not kept" in render.to_text(none_kept)


def test_jaxcache_one_left_out_reads_in_the_singular():
    stats = _cache_records()[0].functions[0]
    first = dataclasses.replace(stats.misses[0], summary="x: now f32[2], before f32[1]")
    one_miss = dataclasses.replace(stats, misses=(first,), misses_left_out=1, left_out_after=1, left_out_by_category=(("input_types", 1),))
    assert "    … 1 more miss of f, counted but not kept: 1 different input types\n" in render.to_text(CacheReport(functions=(one_miss,)))
    one_object = dataclasses.replace(one_miss, qualname="<lambda>", objects=3, folded_sites=(("In[2]:4", 1),))
    line = "    … 1 more function object of <lambda>, each traced once as in 1.: called at In[2]:4 ×1\n"
    assert line in render.to_text(CacheReport(functions=(one_object,)))


def test_hlo_frame_tables_are_found_only_where_they_open_the_module():
    from jaxshow.irtext import hlo_frame_tables

    head = "HloModule jit_f\n\n"
    tables = 'FileNames\n1 "a.py"\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n\n'
    body = "ENTRY %main (x: f32[3]) -> f32[3] {\n  ROOT %x = f32[3]{0} parameter(0)\n}\n"
    assert hlo_frame_tables(head + tables + body) == (len(head), len(head) + len(tables))
    assert hlo_frame_tables(head + body) is None
    assert hlo_frame_tables(head + body + tables) is None, "tables after the first instruction are left where they are"
    assert hlo_frame_tables(head + 'FileNames\n1 "a.py"\n2 "b.py"') == (len(head), len(head) + len('FileNames\n1 "a.py"\n2 "b.py"')), \
        "cut by the line budget inside the tables"


def test_a_value_every_row_shares_wraps_at_the_text_width_like_the_rest():
    sharding = "NamedSharding(mesh=Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)), spec=PartitionSpec('data', None), memory_kind=device)"
    report = _model_report(lines=10)
    report = dataclasses.replace(report, traced=dataclasses.replace(
        report.traced, args=tuple(dataclasses.replace(a, sharding=sharding) for a in report.traced.args)))
    lines = render.to_text(report, render.TextBudget(width=100)).splitlines()
    at = lines.index("② Traced: 10 equations, 147 inputs → 1 output")
    assert lines[at + 1:at + 4] == [
        "    sharding (all 147): NamedSharding(mesh=Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)),",
        "      spec=PartitionSpec('data', None), memory_kind=device)",
        "    donated (all 147): no",
    ]


def test_a_cache_report_of_a_raising_cell_does_not_say_nothing_was_called():
    # %%jaxcache of power(x, n=[1, 2]) (JAX refuses an unhashable static argument before any trace) said
    # "no jitted function of yours was called or traced": a call that raises never returns, so it is not counted.
    error = ErrorSummary(type_name="ValueError", message="Non-hashable static arguments are not supported.")
    assert render.to_text(CacheReport(functions=(), cell_error=error)).splitlines()[0] == "%jaxcache — no jitted function of yours was traced"


@pytest.mark.parametrize("n_in, n_out, words", [
    (1, 1, "the input and the output"),
    (2, 1, "both inputs and the output"),
    (1, 2, "the input and both outputs"),
    (8, 7, "all 8 inputs and 7 outputs"),
    (3, 2, "all 3 inputs and both outputs"),
])
def test_one_placement_line_counts_its_leaves_in_words(n_in, n_out, words):
    """'all 2 inputs and the output alike' and, under jax.grad, 'all the input and 2 outputs alike' read wrong."""
    from jaxshow.render.placement import one_placement_line

    def leaves(name, n):
        return tuple(PlacementSpec(f"{name}{i}", "SingleDeviceSharding(cpu:0)", "{0}", default_layout=True) for i in range(n))

    compiled = dataclasses.replace(_report().compiled, inputs=leaves("x", n_in), outputs=leaves("r", n_out))
    assert one_placement_line(compiled) == (f"shardings and formats: {words} alike, SingleDeviceSharding(cpu:0), "
                                            "in default layouts (row-major)")


def test_pruned_inputs_are_named_after_the_one_line_and_rows_in_a_table():
    """A flax train step's unused batch['label'] (pruned) turned a one-line placement into ~35 table rows."""
    from jaxshow.render.placement import one_placement_line, placement_text

    alike = PlacementSpec("x", "SingleDeviceSharding(cpu:0)", "{0}", default_layout=True)
    pruned = tuple(PlacementSpec(f"batch['{k}']", None, None) for k in ("label", "mask", "w", "z"))
    compiled = dataclasses.replace(_report().compiled, inputs=(alike, *pruned), outputs=(alike,))
    assert one_placement_line(compiled) == (
        "shardings and formats: the used input and the output alike, SingleDeviceSharding(cpu:0), in default layouts "
        "(row-major); batch['label'], batch['mask'], batch['w'] and 1 more are unused (pruned from the program)")
    other = PlacementSpec("y", "SingleDeviceSharding(cpu:1)", "{0}", default_layout=True)
    table = dataclasses.replace(compiled, inputs=(alike, other, pruned[0]))
    assert one_placement_line(table) is None
    assert "    batch['label']  — (argument unused, pruned)  —" in placement_text(table, render.TextBudget(width=100))


def test_a_column_every_row_leaves_empty_is_left_out_of_the_text():
    """%jaxdump's file table ran to 101 columns at 100: its rows fit, but the header 'note' over a column they all left
    empty did not, and a one-word header cannot wrap. That column, which says nothing, is left out of the text."""
    from jaxshow.render.plain import text_table

    rows = [("In[2]", "jax_ir0000_jit_q_compile.mlir", "module jit_q, stage compile (handed to XLA)", "1.00 KiB", ""),
            ("In[2]", "jax_000001_q.jaxpr.txt", "jaxpr of q, written when it was lowered", "200 B", "")]
    assert text_table(rows, ("cell", "file", "what", "size", "note"), render.TextBudget(width=100), indent="    ") == [
        "    cell   file                           what                                         size",
        "    In[2]  jax_ir0000_jit_q_compile.mlir  module jit_q, stage compile (handed to XLA)  1.00 KiB",
        "    In[2]  jax_000001_q.jaxpr.txt         jaxpr of q, written when it was lowered      200 B",
    ]
    rows[1] = rows[1][:4] + ("persistent-cache hit",)
    assert text_table(rows, ("cell", "file", "what", "size", "note"), render.TextBudget(width=100), indent="    ")[0].endswith("note")
