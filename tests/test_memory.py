"""The memory picture of the Compiled station: XLA's figures to scale, the peak, and the largest buffers.

Real programs of known sizes (two f32[1024,1024] arguments: 4 MiB each) through
``%%jaxstages`` in a real shell and through ``jaxshow.stages()``; the drawing
from hand-built records; the HLO reader on a hand-written module.
"""

from __future__ import annotations

import dataclasses
import html.parser
import threading
import types

import jax
import jax.numpy as jnp
import pytest

import jaxshow
from jaxshow import render
from jaxshow.capture.buffers import entry_buffers, type_bytes
from jaxshow.capture.stations import _memory_stats, compiled_station
from jaxshow.render.memory import memory_text, text_widths
from jaxshow.report import BufferSpec, CompiledStation, MemoryStats
from shellrun import run_captured
from test_browser import ARTIFACTS, _Page, browser  # noqa: F401  (the module-scoped Chromium fixture)

MIB = 1 << 20
SETUP = """
import jax, jax.numpy as jnp
calls = []

def add(a, b):
    calls.append(1)
    return (a + b) * 2

add_jit = jax.jit(add)
add_donating = jax.jit(add, donate_argnums=0)
a = jnp.ones((1024, 1024), jnp.float32)
b = jnp.ones((1024, 1024), jnp.float32)
"""
FULL_BAR = "[" + "█" * 32 + "▓" * 16 + "] 12.00 MiB"
FULL_PEAK = "[" + "━" * 48 + "] peak 12.00 MiB\n      (peak_memory_in_bytes, XLA's estimate)"  # wrapped at 100 columns


@pytest.fixture
def shell(ip):
    ip.run_cell(SETUP, store_history=True)
    return ip


class _Bars(html.parser.HTMLParser):
    """The bars' segments: (bar classes, segment width style, data-bytes), in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.bar: str | None = None
        self.segments: list[tuple[str, str, int]] = []

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        classes = found.get("class") or ""
        if "js-membar" in classes:
            self.bar = classes
        elif "js-seg" in classes:
            width = next(p for p in found["style"].split(";") if p.strip().startswith("width"))
            self.segments.append((self.bar, width.split(":")[1].strip(), int(found["data-bytes"])))


def _segments(html_text: str) -> list[tuple[str, str, int]]:
    parser = _Bars()
    parser.feed(html_text)
    return parser.segments


def test_two_4_mib_arguments_draw_8_mib_of_arguments_4_mib_of_output_and_a_12_mib_peak(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = add_jit(a, b)\ny[0, 0]")
    assert result.success and float(result.result) == 4.0 and shell.user_ns["calls"] == [1]
    compiled = shell.user_ns["rep"].reports[0].compiled
    memory = compiled.memory
    assert (memory.argument_size_bytes, memory.output_size_bytes, memory.alias_size_bytes, memory.temp_size_bytes) == (8 * MIB, 4 * MIB, 0, 0)
    assert memory.peak_memory_bytes == 12 * MIB and memory.peak_unavailable is None
    assert compiled.buffer_count == 3
    assert [(b.kind, b.type_text, b.size_bytes, b.opcode == "parameter", b.detail) for b in compiled.buffers[:2]] == [
        ("parameter", "f32[1024,1024]", 4 * MIB, True, "parameter 0 (a)"),
        ("parameter", "f32[1024,1024]", 4 * MIB, True, "parameter 1 (b)"),
    ]
    output = compiled.buffers[2]
    assert (output.kind, output.type_text, output.size_bytes) == ("output", "f32[1024,1024]", 4 * MIB)
    assert output.detail.startswith(f"output, {output.opcode}")
    for buffer in compiled.buffers:
        assert f"%{buffer.name} = " in compiled.optimized_hlo_text

    text = cap.outputs[0].data["text/plain"]
    assert "    12.00 MiB in all, to scale (from the compiled program; nothing was run):\n    " + FULL_BAR + "\n    " + FULL_PEAK in text
    assert "█ arguments 8.00 MiB · ▓ outputs 4.00 MiB · ▒ temporaries 0 B · ░ generated code 0 B" in text
    assert "largest buffers (optimised HLO, entry computation: 3 values):" in text

    page = cap.outputs[0].data["text/html"]
    assert _segments(page) == [
        ("js-membar js-total", "66.667%", 8 * MIB),
        ("js-membar js-total", "33.333%", 4 * MIB),
        ("js-membar js-peak", "100%", 12 * MIB),
    ]
    assert "arguments 8.00 MiB (66.7%)" in page and "outputs 4.00 MiB (33.3%)" in page and "peak 12.00 MiB" in page


def test_a_donated_argument_is_drawn_once_as_aliased(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = add_donating(a, b)")
    assert result.success and shell.user_ns["a"].is_deleted() and shell.user_ns["calls"] == [1]
    compiled = shell.user_ns["rep"].reports[0].compiled
    memory = compiled.memory
    assert (memory.argument_size_bytes, memory.output_size_bytes, memory.alias_size_bytes, memory.peak_memory_bytes) == (8 * MIB, 4 * MIB, 4 * MIB, 8 * MIB)
    assert compiled.buffers[0].detail == "parameter 0 (a); donated: reused as the output"
    text = cap.outputs[0].data["text/plain"]
    assert "    [" + "█" * 24 + "▚" * 24 + "] 8.00 MiB\n" in text
    assert "█ arguments 4.00 MiB · ▚ aliased (donated, reused as output) 4.00 MiB · ▓ outputs 0 B" in text
    assert _segments(cap.outputs[0].data["text/html"]) == [
        ("js-membar js-total", "50%", 4 * MIB),
        ("js-membar js-total", "50%", 4 * MIB),
        ("js-membar js-peak", "100%", 8 * MIB),
    ]


def test_the_peak_line_and_the_legend_wrap_at_the_width(shell):
    """The legend ran to 139 columns and the peak line to 108 (at COLUMNS=100): the legend breaks after a ' ·', the
    peak's source goes under its bar whole."""
    run_captured(shell, "%%jaxstages -o rep\ny = add_donating(a, b)")
    report = shell.user_ns["rep"].reports[0]
    texts = {width: render.to_text(report, render.TextBudget(width=width)) for width in (100, 80)}
    for width, text in texts.items():
        picture = text[text.index("  memory analysis:"):text.index("    arguments  ")]
        assert max(len(piece) for piece in picture.splitlines()) <= width, width
    assert texts[80].split("to scale (from the compiled program; nothing was run):\n")[1].splitlines()[1:5] == [
        "    [" + "━" * 48 + "] peak 8.00 MiB",
        "      (peak_memory_in_bytes, XLA's estimate)",
        "    █ arguments 4.00 MiB · ▚ aliased (donated, reused as output) 4.00 MiB ·",
        "    ▓ outputs 0 B · ▒ temporaries 0 B · ░ generated code 0 B",
    ]
    assert ("    █ arguments 4.00 MiB · ▚ aliased (donated, reused as output) 4.00 MiB · ▓ outputs 0 B ·\n"
            "    ▒ temporaries 0 B · ░ generated code 0 B\n") in texts[100]


def test_the_bar_narrows_and_the_headings_wrap_at_a_narrow_width(shell):
    """At 60 columns the bars ran to 68 ('[' + 48 blocks + '] peak 8.00 MiB'), the caption to 74 and a sharded
    program's heading to 65: the bars narrow together (to scale, their labels whole) and the headings wrap."""
    run_captured(shell, "%%jaxstages -o rep\ny = add_donating(a, b)")
    report = shell.user_ns["rep"].reports[0]
    text = render.to_text(report, render.TextBudget(width=60))
    picture = text[text.index("  memory analysis:"):text.index("    arguments  ")].splitlines()
    assert picture[:6] == [
        "  memory analysis:",
        "    8.00 MiB in all, to scale (from the compiled program;",
        "      nothing was run):",
        "    [" + "█" * 20 + "▚" * 20 + "] 8.00 MiB",
        "    [" + "━" * 40 + "] peak 8.00 MiB",
        "      (peak_memory_in_bytes, XLA's estimate)",
    ]
    assert max(len(piece) for piece in picture) <= 60
    assert "\n".join(memory_text(report.compiled.memory, render.TextBudget(width=60), devices=8)).splitlines()[:2] == [
        "  memory analysis, per device: what each of the 8 devices",
        "    holds:",
    ]


def test_an_intermediate_matrix_is_a_4_mib_temporary_and_the_peak_is_xlas():
    x = jnp.ones((1024, 1024), jnp.float32)
    fn = jax.jit(lambda a, b: (a @ b) @ b)
    compiled = jaxshow.stages(fn, x, x).compiled
    truth = fn.lower(x, x).compile().memory_analysis()
    assert compiled.memory.temp_size_bytes == 4 * MIB
    assert compiled.memory.peak_memory_bytes == truth.peak_memory_in_bytes
    temporaries = [b for b in compiled.buffers if b.kind == "temporary"]
    assert [(b.type_text, b.size_bytes) for b in temporaries] == [("f32[1024,1024]", 4 * MIB)]
    assert temporaries[0].detail.endswith("/dot_general")


def test_a_backend_without_peak_memory_says_so_and_draws_no_peak():
    x = jnp.ones((1024, 1024), jnp.float32)
    real = jax.jit(lambda a, b: (a + b) * 2).lower(x, x).compile().memory_analysis()
    figures = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes", "generated_code_size_in_bytes")
    without_peak = types.SimpleNamespace(**{name: getattr(real, name) for name in figures})
    zero_peak = types.SimpleNamespace(**{name: getattr(real, name) for name in figures}, peak_memory_in_bytes=0)
    for raw in (without_peak, zero_peak):
        memory = _memory_stats(raw, "plugin")
        assert memory.peak_memory_bytes is None
        assert memory.peak_unavailable == f"jax {jax.__version__} on backend 'plugin' does not report peak_memory_in_bytes"
    report = _station_report(memory)
    text = render.to_text(report)
    assert "    [" + "█" * 32 + "▓" * 16 + "] 12.00 MiB\n    peak: " + memory.peak_unavailable + "\n" in text
    assert [bar for bar, _, _ in _segments(render.to_html(report))] == ["js-membar js-total"] * 2
    assert memory.peak_unavailable in render.to_html(report)


# --- drawing, from hand-built records ---------------------------------------------------------


def _station_report(memory: MemoryStats | None, buffers: tuple[BufferSpec, ...] = (), count: int = 0):
    from test_render import _report

    compiled = _report().compiled
    fields = {f: getattr(compiled, f) for f in compiled.__dataclass_fields__}
    fields.update(memory=memory, memory_unavailable=None if memory else "no memory", buffers=buffers, buffer_count=count)
    return _report(compiled=CompiledStation(**fields))


def test_text_widths_are_proportional_and_add_up():
    assert text_widths([8, 4, 0, 0], 12) == [32, 16, 0, 0]
    assert text_widths([1, 1, 1], 3) == [16, 16, 16]
    assert sum(text_widths([5, 7, 11, 13], 36)) == 48
    assert text_widths([6], 12) == [24]


def test_a_missing_figure_leaves_the_numbers_and_no_picture():
    memory = MemoryStats(argument_size_bytes=12, output_size_bytes=12, alias_size_bytes=None, temp_size_bytes=None, generated_code_size_bytes=None)
    report = _station_report(memory)
    for form in (render.to_text(report), render.to_html(report)):
        assert "no picture: memory_analysis() does not report aliased, temporaries" in form
    assert _segments(render.to_html(report)) == []


def test_buffer_names_are_escaped_and_the_rest_are_counted():
    hostile = BufferSpec(name="</td><script>x</script>", kind="temporary", type_text="f32[2]", size_bytes=8, opcode="custom-call",
                         detail='made by "<b>"')
    memory = MemoryStats(argument_size_bytes=8, output_size_bytes=8, alias_size_bytes=0, temp_size_bytes=8, generated_code_size_bytes=0,
                         peak_memory_bytes=24)
    report = _station_report(memory, (hostile,), 41)
    page = render.to_html(report)
    assert "<script>" not in page and "&lt;/td>&lt;script>x&lt;/script>" in page
    assert "… 40 smaller values not listed" in page
    text = render.to_text(report)
    assert "largest buffers (optimised HLO, entry computation: 41 values):" in text
    assert '</td><script>x</script>  temporary  f32[2]  8 B   made by "<b>"' in text


# --- the HLO reader ----------------------------------------------------------------------------

MODULE = """\
HloModule jit_step, is_scheduled=true, input_output_alias={ {1}: (2, {}, may-alias) }, entry_computation_layout={()}

%body (p: (s32[], f32[64])) -> (s32[], f32[64]) {
  %p = (s32[], f32[64]{0}) parameter(0)
  ROOT %t = (s32[], f32[64]{0}) tuple(%p)
}

ENTRY %main.9 (x.1: bf16[256,128], m.1: pred[1000], w.1: f32[8]) -> (f32[64], f32[8], u4[10]) {
  %x.1 = bf16[256,128]{1,0:T(8,128)(2,1)} parameter(0), metadata={op_name="params[\\'x\\']"}
  %m.1 = pred[1000]{0} parameter(1), metadata={op_name="m"}
  %w.1 = f32[8]{0} parameter(2), metadata={op_name="w"}
  %c = f32[64]{0} constant({...})
  %loop = (s32[], f32[64]{0}) while(%init), condition=%cond, body=%body, metadata={op_name="jit(step)/while"}
  %gte = f32[64]{0} get-tuple-element(%loop), index=1
  %bc = f32[8]{0} bitcast(%w.1)
  %packed = u4[10]{0} convert(%x.1)
  %nest = ((s32[], f32[4]{0}), f32[2]{0:T(2)(1)}) custom-call(%w.1), custom_call_target="x"
  ROOT %out = (f32[64]{0}, f32[8]{0}, u4[10]{0}) tuple(%gte, %w.1, %packed)
}
"""


def test_the_entry_computation_is_read_by_kind_size_and_donation():
    buffers, count = entry_buffers(MODULE)
    assert count == 7
    assert [(b.name, b.kind, b.type_text, b.size_bytes, b.detail) for b in buffers] == [
        ("x.1", "parameter", "bf16[256,128]", 65536, "parameter 0 (params['x'])"),
        ("m.1", "parameter", "pred[1000]", 1000, "parameter 1 (m)"),
        ("loop", "temporary", "(s32[], f32[64])", 260, "while of jit(step)/while"),
        ("c", "constant", "f32[64]", 256, "constant"),
        ("w.1", "parameter", "f32[8]", 32, "parameter 2 (w); donated: reused as output 1"),
        ("nest", "temporary", "((s32[], f32[4]), f32[2])", 28, "custom-call"),
        ("packed", "output", "u4[10]", 5, "output 2, convert"),
    ]
    assert entry_buffers(MODULE, kept=2)[0] == buffers[:2]


def test_a_tuple_type_reads_without_xlas_index_comments():
    """equinox's MNIST example under %%jaxstages: a reduce-window's six-array tuple read '(f32[64,1,24,24,3],
    s32[64,1,24,24,3], …, /*index=5*/ s32[64,1,24,24,3])' in the largest buffers' type column, XLA's count before
    every fifth element on a line of its own. It reads the arrays alone."""
    six = ", ".join(["f32[2]{0}"] * 5) + ", /*index=5*/f32[2]{0}"
    module = (f"HloModule m\n\nENTRY %main (x: f32[2]) -> f32[2] {{\n  %x = f32[2]{{0}} parameter(0)\n"
              f"  %t = ({six}) custom-call(%x), custom_call_target=\"y\"\n  ROOT %r = f32[2]{{0}} get-tuple-element(%t), index=0\n}}\n")
    buffers, _ = entry_buffers(module)
    assert [(b.type_text, b.size_bytes) for b in buffers if b.name == "t"] == [("(" + ", ".join(["f32[2]"] * 6) + ")", 48)]


def test_memory_analysis_runs_beside_the_rest_and_a_failing_one_is_said():
    compiled = jax.jit(lambda x: jnp.sin(x) @ x).trace(jnp.ones((64, 64))).lower().compile()
    threads: list[str] = []

    class Watched:  # the real Compiled, its memory analysis watched
        def __getattr__(self, name):
            return getattr(compiled, name)

        def memory_analysis(self):
            threads.append(threading.current_thread().name)
            return compiled.memory_analysis()

    class Failing(Watched):
        def memory_analysis(self):
            raise RuntimeError("UNIMPLEMENTED: no memory stats here\nsecond line")

    station = compiled_station(Watched())
    assert threads == ["jaxshow-analysis"]
    assert station == compiled_station(compiled)
    assert (station.memory.argument_size_bytes, station.memory.output_size_bytes) == (64 * 64 * 4, 64 * 64 * 4)
    failing = compiled_station(Failing())
    assert failing.memory is None
    assert failing.memory_unavailable == "not available: RuntimeError: UNIMPLEMENTED: no memory stats here"
    assert failing == dataclasses.replace(station, memory=None, memory_unavailable=failing.memory_unavailable)


def test_a_text_without_an_entry_computation_gives_nothing():
    assert entry_buffers("HloModule m\n") == ((), 0)
    assert entry_buffers("") == ((), 0)
    assert type_bytes("f32[<=16,4]") == 256 and type_bytes("token[]") == 0 and type_bytes("opaque[4]") is None


# --- in a real browser -------------------------------------------------------------------------


@pytest.mark.browser
def test_the_bar_is_drawn_to_scale_in_chromium(browser):
    x = jnp.ones((1024, 1024), jnp.float32)
    report = jaxshow.stages(jax.jit(lambda a, b: (a @ b) @ b), x, x)
    memory = report.compiled.memory
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "memory-picture.html"
    path.write_text(f"<!doctype html><meta charset=utf-8><body>{render.to_html(report)}</body>", encoding="utf-8")
    view = _Page(browser, path)
    page = view.page
    compiled = page.locator("details.js-station", has=page.locator("summary", has_text="④ Compiled")).first
    compiled.locator("summary").first.click()
    total = page.locator(".js-membar.js-total").first
    assert total.is_visible()
    bar_width = total.bounding_box()["width"]
    scale = max(16 * MIB, memory.peak_memory_bytes)
    drawn = [(seg.get_attribute("title"), seg.bounding_box()["width"]) for seg in total.locator(".js-seg").all()]
    assert [title for title, _ in drawn] == ["arguments: 8.00 MiB", "outputs: 4.00 MiB", "temporaries: 4.00 MiB"]
    for (_, width), size in zip(drawn, (8 * MIB, 4 * MIB, 4 * MIB)):
        assert width == pytest.approx(bar_width * size / scale, abs=1.0)
    peak = page.locator(".js-membar.js-peak .js-seg").first.bounding_box()["width"]
    assert peak == pytest.approx(bar_width * memory.peak_memory_bytes / scale, abs=1.0)
    page.locator("details.js-section", has=page.locator("summary", has_text="memory analysis")).first.screenshot(
        path=str(ARTIFACTS / "memory-picture.png"))
    assert view.blocked == [] and view.console_errors == [] and view.page_errors == []


def test_a_buffers_what_breaks_after_a_colon_and_squeezes_beside_a_long_name():
    """XLA joins the operations a collective merges with ':' ('dot_general:transpose(jvp())/scatter-add'): the
    row read 226 columns at 80, as did any row whose value name left too little room for the other columns."""
    reduce = BufferSpec(name="all-reduce.37", kind="temporary", type_text="(f32[256,64], f32[64], /*index=2*/f32[64])",
                        size_bytes=235776, opcode="all-reduce",
                        detail="all-reduce of jit(step)/(transpose(jvp())/dot_general:transpose(jvp())/reduce_sum")
    named = BufferSpec(name="params__layers____w1__.1", kind="parameter", type_text="f32[2,64,256]", size_bytes=131072,
                       opcode="parameter", detail="parameter 5 (params['layers']['w1']); donated: reused as output 5")
    memory = MemoryStats(argument_size_bytes=8, output_size_bytes=8, alias_size_bytes=0, temp_size_bytes=8,
                         generated_code_size_bytes=0, peak_memory_bytes=24)
    text = render.to_text(_station_report(memory, (reduce,), 1), render.TextBudget(width=80))
    assert text[text.index("    value "):].splitlines()[:7] == [
        "    value          kind       type           size        what",
        "    all-reduce.37  temporary  (f32[256,64],  230.25 KiB  all-reduce of",
        "                              f32[64],                   jit(step)/",
        "                              /*index=2*/                (transpose(jvp())/",
        "                              f32[64])                   dot_general:",
        "                                                         transpose(jvp())/",
        "                                                         reduce_sum",
    ]
    text = render.to_text(_station_report(memory, (named, reduce), 2), render.TextBudget(width=80))
    # the value name stays whole, and the other columns narrow to their longest words: 86 columns, not 175
    assert text[text.index("    value "):].splitlines()[:6] == [
        "    value                     kind       type           size        what",
        "    params__layers____w1__.1  parameter  f32[2,64,256]  128.00 KiB  parameter 5",
        "                                                                    (params['layers']",
        "                                                                    ['w1']);",
        "                                                                    donated: reused as",
        "                                                                    output 5",
    ]
