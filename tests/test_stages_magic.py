"""%%jaxstages in a real InteractiveShell: the cell runs once, as IPython would, and the report matches JAX."""

from __future__ import annotations

import re
import gc
import html.parser
import warnings

import jax
import pytest
from IPython.core.error import UsageError

from jaxshow import _jax_compat
from jaxshow.cellrun import label_cells
from jaxshow.report import CellReport
from shellrun import run_captured, unwrapped

SETUP = """
import jax, jax.numpy as jnp
from functools import partial
runs = []

@jax.jit
def f(x):
    runs.append(1)
    return jnp.sin(x) * 2

@jax.jit
def g(x, y):
    return x @ y

x = jnp.ones(3)
"""


@pytest.fixture
def shell(ip):
    ip.run_cell(SETUP, store_history=True)
    return ip




def _report(cap) -> CellReport:
    reports = [o for o in cap.outputs if "text/html" in o.data]
    assert reports, "no report was displayed"
    return reports[-1]


def test_cell_runs_once_value_becomes_out_and_assignments_land(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\ncounter = len(runs) + 1\ny = f(x)\ny + counter")
    assert result.success
    assert shell.user_ns["runs"] == [1], "the jitted function traced exactly once"
    assert shell.user_ns["counter"] == 1
    assert float(result.result[0]) == pytest.approx(float(jax.numpy.sin(1.0) * 2 + 1))
    rep = shell.user_ns["rep"]
    assert isinstance(rep, CellReport) and [r.function for r in rep.reports] == ["f"]
    assert "① jax.jit wrapper" in cap.outputs[0].data["text/plain"]
    assert 'class="jaxshow"' in cap.outputs[0].data["text/html"]


def test_report_matches_jax_objects_for_the_same_call(shell):
    result = shell.run_cell("%%jaxstages -o rep\ny = f(x)", store_history=True)
    report = shell.user_ns["rep"].reports[0]
    f, x = shell.user_ns["f"], shell.user_ns["x"]
    lowered = f.lower(x)
    compiled = lowered.compile()
    assert report.lowered.module_text == lowered.as_text()
    assert report.compiled.optimized_hlo_text == label_cells(shell, compiled.as_text())
    assert dict(report.compiled.cost.entries) == pytest.approx(compiled.cost_analysis())
    assert report.compiled.memory.output_size_bytes == compiled.memory_analysis().output_size_in_bytes
    assert report.traced.jaxpr_text == f.trace(x).jaxpr.pretty_print(use_color=False)
    assert (report.call_site.file, report.call_site.line) == (f"In[{result.execution_count}]", 2)


def test_nothing_is_compiled_twice(shell):
    compiles = []

    def listener(event, duration, **kw):
        if event.endswith("backend_compile_duration") and kw.get("fun_name") == "jit(h)":
            compiles.append(duration)

    shell.run_cell("@jax.jit\ndef h(v):\n    return v * 3 + 1")
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        result, cap = run_captured(shell, "%%jaxstages -o rep\nout = h(x)")
    finally:
        _jax_compat.unregister_duration_listener(listener)
    assert result.success
    assert len(compiles) == 1
    timings = shell.user_ns["rep"].reports[0].timings
    assert timings.compile_seconds == pytest.approx(compiles[0])
    assert timings.trace_seconds is not None and timings.lowering_seconds is not None


def test_cached_call_reports_cache_hit(shell):
    shell.run_cell("y = f(x)")
    run_captured(shell, "%%jaxstages -o rep\ny = f(x)")
    report = shell.user_ns["rep"].reports[0]
    assert report.timings.stages_run == ()
    assert report.compiled is not None
    assert "cache hit" in str(report)


def test_hits_inside_the_users_functions_are_said_to_be_unseen_not_absent(shell):
    # 'def loop(v): ... f(v)' then '%%jaxstages loop(x)' with every call a hit read 'no jitted call of yours in this
    # cell': the cell made three, in JAX's C++ fast path, where no hook runs
    shell.run_cell("y = f(x)\nclass Runner:\n    def go(self, v):\n        return f(v)\n"
                   "def loop(v):\n    for _ in range(3):\n        v = f(v)\n    return v", store_history=True)
    run_captured(shell, "%%jaxstages -o rep\nz = loop(x)\nw = Runner().go(x)\nprint(len(z))")
    assert shell.user_ns["rep"].reports == () and shell.user_ns["runs"] == [1]
    assert shell.user_ns["rep"].notes == (
        "no jitted call of yours seen in this cell; the cell ran normally. Jitted calls inside loop or Runner.go that hit "
        "JAX's cache are not seen: JAX serves a hit in C++, where jaxshow does not look; a call in the cell's top-level code is seen",)
    # a function of yours that loads no jitted function (its globals, closure, modules' and self's attributes, three
    # levels of your functions deep) is not named: 'plain' would make the note noise on every eager cell. (A jitted
    # attribute of an argument, helper's 't.step', is not followed: docs/architecture.md, what cannot be seen)
    shell.run_cell("def plain(v):\n    return jnp.sin(v) + len(runs)\nclass Trainer:\n    def __init__(self):\n"
                   "        self.step = f\n"
                   "def helper(t, v):\n    return t.step(v)\ndef outer(v):\n    return inner(v)\ndef inner(v):\n    return f(v)\n"
                   "_ = plain(x)",
                   store_history=True)
    run_captured(shell, "%%jaxstages -o rep\nz = plain(x)")
    assert shell.user_ns["rep"].notes == ("no jitted call of yours seen in this cell; the cell ran normally",)
    run_captured(shell, "%%jaxstages -o rep\nz = outer(x)")
    assert "Jitted calls inside outer that hit" in shell.user_ns["rep"].notes[0]
    run_captured(shell, "%%jaxstages -o rep\nt = Trainer()\nz = t.step(x) + helper(t, x)")
    assert [r.function for r in shell.user_ns["rep"].reports] == ["f"]  # the cell's own call: no note needed


def test_a_helper_is_not_said_to_hide_hits_while_no_jitted_function_but_jaxs_was_ever_traced(shell):
    # autodiff_cookbook: 'def loss(W, b): ...' (jnp only, no jit anywhere yet) then 'grad(loss)(W, b)' read 'no jitted
    # call of yours seen in this cell ... Jitted calls inside loss that hit JAX's cache are not seen': no function
    # but JAX's own was ever traced, so no call inside loss could hit JAX's cache for a jitted function of the user's
    shell.run_cell("jax.clear_caches()\ndef loss(v):\n    return jnp.sum(jnp.sin(v))", store_history=True)
    run_captured(shell, "%%jaxstages -o rep\nl = jax.grad(loss)(x)\nm = loss(x)")
    assert shell.user_ns["rep"].notes[0].startswith("no jitted call of yours seen in this cell; the cell ran normally")
    assert "not seen" not in " ".join(shell.user_ns["rep"].notes)
    shell.run_cell("y = f(x)\ndef run(v):\n    return f(v)", store_history=True)
    run_captured(shell, "%%jaxstages -o rep\nz = run(x)")
    assert shell.user_ns["rep"].notes == (
        "no jitted call of yours seen in this cell; the cell ran normally. Jitted calls inside run that hit JAX's cache "
        "are not seen: JAX serves a hit in C++, where jaxshow does not look; a call in the cell's top-level code is seen",)


def test_a_class_bodys_calls_are_the_cells_and_a_generator_expressions_are_said_unseen(shell):
    """A class body runs as the cell defines it: 'class A: z = f(x)' read 'no jitted call of yours seen in this cell;
    the cell ran normally', though the cell called f (a cache hit). Its calls are seen now, its methods left alone. A
    generator expression runs as it is consumed, maybe after the cell, so its calls stay unrewritten: the note named
    nothing, and now names it."""
    shell.run_cell("y = f(x)", store_history=True)
    result, _ = run_captured(shell, "%%jaxstages -o rep\nclass A:\n    z = f(x)\n    def m(self):\n        return f(x)\nw = A().m()")
    assert result.success, result.error_in_exec
    [report] = shell.user_ns["rep"].reports
    site = report.call_site
    assert (report.function, report.cache_hit, site.file, site.line) == ("f", True, f"In[{result.execution_count}]", 3)
    assert report.repeat_hits == 0  # the method's call, inside a def, is unseen
    result, _ = run_captured(shell, "%%jaxstages -o rep\ngen = (f(v) for v in [x])\nw = next(gen)")
    assert shell.user_ns["rep"].notes == (
        "no jitted call of yours seen in this cell; the cell ran normally. Jitted calls inside a generator expression that "
        "hit JAX's cache are not seen: JAX serves a hit in C++, where jaxshow does not look; a call in the cell's "
        "top-level code is seen",)
    assert float(next(shell.user_ns["gen"], 0)) == 0  # consumed in the cell; a generator left for later runs unhooked
    shell.run_cell("%%jaxstages\nlater = (f(v) for v in [x])")
    assert float(next(shell.user_ns["later"])[0]) == float(shell.user_ns["y"][0])  # consumed after the cell: no hook needed


def test_a_constructor_or_a_models_call_that_may_hide_hits_is_named(shell):
    """'model(x)' where the model's class's __call__ calls a jitted function, or 'E()' whose __init__ does: a hit in
    there runs in C++, unseen, and the note said only 'no jitted call of yours seen in this cell; the cell ran
    normally', as if nothing had been called. The note names the method, read from the class (none of its code run),
    and the function a functools.partial calls; a class whose methods call no jitted function is not named."""
    shell.run_cell("import functools\ny = f(x)\nclass E:\n    def __init__(self):\n        self.a = f(x)\n"
                   "class Model:\n    def __call__(self, v):\n        return f(v)\nmodel = Model()\n"
                   "class Plain:\n    def __init__(self, k):\n        self.k = k\n"
                   "def step(k, v):\n    return f(v)\nstep2 = functools.partial(step, 2)", store_history=True)
    unseen = ("no jitted call of yours seen in this cell; the cell ran normally. Jitted calls inside {} that hit JAX's "
              "cache are not seen: JAX serves a hit in C++, where jaxshow does not look; a call in the cell's top-level "
              "code is seen")
    for cell, named in (("e = E()", "E.__init__"), ("z = model(x)", "Model.__call__"), ("z = step2(x)", "step"),
                        ("ps = [Plain(i) for i in range(3)]\ne = E()\nz = model(x)", "E.__init__ or Model.__call__")):
        run_captured(shell, "%%jaxstages -o rep\n" + cell)
        assert shell.user_ns["rep"].notes == (unseen.format(named),), cell
    run_captured(shell, "%%jaxstages -o rep\nps = [Plain(i) for i in range(3)]")
    assert shell.user_ns["rep"].notes == ("no jitted call of yours seen in this cell; the cell ran normally",)


def test_a_new_jit_wrapper_of_a_traced_function_is_a_cache_hit_with_no_read_back_note(shell):
    # jax.jit(hmc.step) made again (a re-run cell): JAX's C++ cache is shared by function, so the call is a hit, and
    # the read-back finds the jaxpr in JAX's tracing cache, which publishes a trace event for the lookup all the same
    run_captured(shell, "def make():\n    def step_fn(x):\n        runs.append(1)\n        return x * 2\n    return step_fn\n"
                        "step_fn = make()\ny = jax.jit(step_fn)(x)")
    before = len(shell.user_ns["runs"])
    result, _ = run_captured(shell, "%%jaxstages -o rep\nstep2 = jax.jit(step_fn)\ny = step2(x)")
    assert result.success
    [report] = shell.user_ns["rep"].reports
    assert report.cache_hit
    assert len(shell.user_ns["runs"]) == before, "nothing of the user's was traced again"
    assert not any("ran JAX's trace again" in n for n in report.notes), report.notes


def test_the_wrapper_station_shows_the_jit_options_the_user_set(shell):
    # station ① showed static and donated arguments only: a jax.jit(..., in_shardings=..., keep_unused=True,
    # compiler_options=...) read as a plain jax.jit
    shell.run_cell("from jax.sharding import AxisType, NamedSharding, PartitionSpec as P\n"
                   "mesh = jax.make_mesh((1,), ('x',), axis_types=(AxisType.Auto,))\n"
                   "opts = jax.jit(lambda a, b: a * 2, in_shardings=(NamedSharding(mesh, P('x')), None),\n"
                   "               out_shardings=NamedSharding(mesh, P()), keep_unused=True,\n"
                   "               compiler_options={'xla_cpu_enable_fast_math': True})")
    _, cap = run_captured(shell, "%%jaxstages -o rep\ny = opts(x, x)")
    [report] = shell.user_ns["rep"].reports
    on = " on Mesh('x': 1, axis_types=(Auto,))"
    assert report.wrapper.options == (("in_shardings", "(P('x'), None)" + on), ("out_shardings", "P()" + on),
                                      ("keep_unused", "True"), ("compiler_options", "{'xla_cpu_enable_fast_math': True}"))
    text = _report(cap).data["text/plain"]
    assert ("    donate_argnums    none\n"
            "    in_shardings      (P('x'), None) on Mesh('x': 1, axis_types=(Auto,))\n"
            "    out_shardings     P() on Mesh('x': 1, axis_types=(Auto,))\n"
            "    keep_unused       True\n"
            "    compiler_options  {'xla_cpu_enable_fast_math': True}\n") in text
    assert "<td>compiler_options</td>" in _report(cap).data["text/html"]
    run_captured(shell, "%%jaxstages -o rep\ny = f(x)")
    assert shell.user_ns["rep"].reports[0].wrapper.options == (), "a plain jax.jit has no option to show"


def test_a_new_wrapper_with_other_compiler_options_is_compiled_without_a_trace(shell):
    # jax >= 0.9 times its cached trace_to_jaxpr: the lookup of mul's jaxpr for the new wrapper read 'trace 11 µs'
    # in the head line and the cell line, while %%jaxcache said traced 0
    shell.run_cell("def mul(v):\n    runs.append(1)\n    return v * 2\ny = jax.jit(mul)(x)")
    before = len(shell.user_ns["runs"])
    _, cap = run_captured(shell, "%%jaxstages -o rep\ng = jax.jit(mul, compiler_options={'xla_cpu_enable_fast_math': True})\n"
                                 "y = g(x)")
    [report] = shell.user_ns["rep"].reports
    assert len(shell.user_ns["runs"]) == before, "JAX traced nothing"
    assert report.timings.trace_seconds is None
    assert report.timings.compile_seconds is not None
    text = _report(cap).data["text/plain"]
    assert "trace" not in text.splitlines()[0] and "mul: compile " in text and "mul: trace" not in text


KEEP_UNUSED_KEYED = jax.__version_info__ >= (0, 12, 1)
"""jax 0.12.1 keys its C++ cache on keep_unused (pxla.JitGlobalCppCacheKeys); earlier releases shared an executable
between two wrappers of one function that differ there, as every release checked does for inline."""


@pytest.mark.skipif(KEEP_UNUSED_KEYED, reason=f"jax {jax.__version__} keys its C++ cache on keep_unused")
def test_a_hit_on_an_executable_another_wrapper_compiled_shows_that_program(shell):
    # JAX's C++ cache does not key on keep_unused: jax.jit(first)'s call ran the executable jax.jit(first,
    # keep_unused=True) compiled, and the read-back lowered and compiled a program that never ran (b pruned, 12 B)
    shell.run_cell("def first(a, b):\n    return a * 2\nkeep = jax.jit(first, keep_unused=True)\nplain = jax.jit(first)\n"
                   "y = keep(x, x)")
    _, cap = run_captured(shell, "%%jaxstages -o rep\ny = plain(x, x)")
    [report] = shell.user_ns["rep"].reports
    assert report.cache_hit
    assert report.compiled.memory.argument_size_bytes == 24, "both arguments, as keep_unused=True compiled them"
    assert ("JAX ran the executable it compiled for another jax.jit wrapper of first, one with keep_unused=True: JAX's C++ "
            "cache does not key a call on keep_unused or inline, so wrappers that differ only there share executables; ③ "
            "and ④ are that program") in report.notes
    assert not any("compile again" in n for n in report.notes), report.notes
    assert "one with keep_unused=True" in unwrapped(_report(cap).data["text/plain"])


@pytest.mark.skipif(not KEEP_UNUSED_KEYED, reason=f"jax {jax.__version__} shares executables across keep_unused")
def test_a_wrapper_with_another_keep_unused_compiles_its_own_program_where_jax_keys_it(shell):
    shell.run_cell("def first(a, b):\n    return a * 2\nkeep = jax.jit(first, keep_unused=True)\nplain = jax.jit(first)\n"
                   "y = keep(x, x)")
    _, cap = run_captured(shell, "%%jaxstages -o rep\ny = plain(x, x)")
    [report] = shell.user_ns["rep"].reports
    assert not report.cache_hit and report.compiled.memory.argument_size_bytes == 12, "b pruned: its own program"
    assert not any("another jax.jit wrapper" in n for n in report.notes), report.notes


def test_a_hit_whose_executable_jaxshow_cannot_find_shows_no_lowered_or_compiled_station(shell, monkeypatch):
    shell.run_cell("def second(a, b):\n    return a * 2\ny = jax.jit(second, inline=True)(x, x)")
    # as where JAX's lowering cache let the program that ran go: no lowering it holds has an executable
    monkeypatch.setattr(_jax_compat, "computation_compiled", lambda computation: False)
    run_captured(shell, "%%jaxstages -o rep\ny = jax.jit(second)(x, x)")
    [report] = shell.user_ns["rep"].reports
    assert report.cache_hit and report.traced is not None and report.lowered is None and report.compiled is None
    assert any(n.startswith("JAX ran an executable it had compiled before, and its lowering cache holds no compiled lowering "
                            "of this call with this wrapper's options") for n in report.notes), report.notes


def test_jax_export_and_a_call_of_the_exported_are_the_users_function(shell):
    # export.export(f)(spec) read 'lowered ahead of time in the cell (.lower())', which the cell never wrote, and
    # exp.call(x) 'no jitted call of yours in this cell', its compile folded away as JAX's own helper call_exported
    shell.run_cell("from jax import export\ndef mul(v):\n    return v * 2")
    _, cap = run_captured(shell, "%%jaxstages -o rep\nexp = export.export(jax.jit(mul))(jax.ShapeDtypeStruct((3,), jnp.float32))")
    [report] = shell.user_ns["rep"].reports
    assert report.function == "mul" and report.lowered is not None and report.compiled is None
    assert "exported with jax.export in the cell (traced and lowered); not compiled" in report.notes
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = exp.call(x)")
    [report] = shell.user_ns["rep"].reports
    assert (report.function, report.kind, report.wrapper.kind, report.wrapper.qualname) == (
        "mul", "user", "jax.export (Exported.call)", "mul")
    assert (report.call_site.file, report.call_site.line) == (f"In[{result.execution_count}]", 2)
    assert report.compiled is not None and report.timings.compile_seconds is not None
    assert ("the program of mul, exported with jax.export, run by Exported.call outside jit: JAX compiled it inside a "
            "program of its own, call_exported") in report.notes
    assert "no jitted call of yours" not in _report(cap).data["text/plain"]


def test_helper_compiles_are_counted_but_folded(shell):
    compiled = []

    def listener(event, duration, **kw):
        if event.endswith("backend_compile_duration") and kw.get("fun_name") != "jit(f)":
            compiled.append(kw.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        run_captured(shell, "%%jaxstages -o rep\nz = jnp.full((5, 23), 7.0)\ny = f(z)")
    finally:
        _jax_compat.unregister_duration_listener(listener)
    rep = shell.user_ns["rep"]
    assert [r.function for r in rep.reports] == ["f"]
    assert compiled, "a new shape compiles JAX's own helpers"
    assert rep.helper_compiles.count == len(compiled) and "f" not in rep.helper_compiles.names
    assert list(rep.helper_compiles.names) == list(dict.fromkeys(n.removeprefix("jit(").removesuffix(")") for n in compiled))
    assert rep.cell_seconds >= rep.compile_pipeline_seconds


def test_a_helper_that_compiled_twice_is_named_once_with_its_count(shell):
    # it read '(4 compiles of JAX's own helpers folded away: convert_element_type, broadcast_in_dim, add)': four
    # compiles, three names (broadcast_in_dim compiled for both shapes)
    jax.clear_caches()  # the helpers compile here whatever the tests before compiled
    result, cap = run_captured(shell, "%%jaxstages -o rep\nz = jnp.zeros((3, 3)) + jnp.ones(3)")
    assert result.success
    assert cap.outputs[-1].data["text/plain"].splitlines()[1:] == [
        "(4 compiles of JAX's own helpers folded away: convert_element_type, broadcast_in_dim ×2, add)",
        "note: no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers",
        "  (eager jax.numpy operations)",
    ]
    assert shell.user_ns["rep"].helper_compiles.repeated == (("broadcast_in_dim", 2),)


def test_helpers_compiled_while_the_shown_call_traced_are_not_counted_twice(shell):
    # diffrax's diffeqsolve runs eager operations on concrete values while it traces: their compiles were added to the
    # cell line as 'JAX's own helpers' though JAX's trace time of diffeqsolve already held them ('the rest 0 µs')
    run_captured(shell, "@jax.jit\ndef concrete(v):\n    with jax.ensure_compile_time_eval():\n"
                        "        c = jnp.tanh(jnp.arange(3.0) * 2.5)\n    return v + c")
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = concrete(x)")
    assert result.success
    rep = shell.user_ns["rep"]
    [report] = rep.reports
    helpers = rep.helper_compiles
    assert helpers.count >= 1 and "tanh" in helpers.names
    assert helpers.seconds == 0.0 and helpers.inside_seconds > 0, "they are inside the trace time, and counted once"
    assert helpers.inside_seconds <= report.timings.trace_seconds
    assert rep.compile_pipeline_seconds <= rep.cell_seconds
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert "JAX's own helpers" not in text.split("(")[0], "the cell line: no helper seconds outside the trace"
    assert "of them while concrete traced, in its trace time)" in text


def test_a_helper_compiled_by_a_host_callback_is_named_and_not_put_in_the_trace(shell):
    """A ``jax.debug.callback`` whose host function runs a jax.numpy operation compiles it while the call runs. The fold
    read '(1 compile of JAX's own helpers folded away: )' (jax 0.10, 0.12), and on jax 0.7 '…: ; 10.6 ms of them while
    dcb traced, in its trace time', though it compiled after dcb's trace, lowering and compile: the trace events of the
    jax.numpy functions dcb's trace inlined (``multiply``), which compile nothing, were taken for compiles in the trace."""
    run_captured(shell, "jax.clear_caches()\nseen = []\n@jax.jit\ndef dcb(v):\n"
                        "    jax.debug.callback(lambda h: seen.append(int(h.sum())), v)\n    return v * 2\nv = jnp.arange(3)")
    result, cap = run_captured(shell, "%%jaxstages -o rep\ndcb(v)")
    assert result.success and shell.user_ns["seen"] == [3]
    [fold] = [line for line in cap.outputs[-1].data["text/plain"].splitlines() if "folded away" in line]
    assert fold == "(1 compile of JAX's own helpers folded away: _reduce_sum)"
    assert shell.user_ns["rep"].helper_compiles.inside_seconds == 0.0


def test_an_eager_lax_loop_in_a_cell_without_jitted_calls_is_said_to_run_the_users_code(shell):
    # numpyro's svi.run and Predictive run jax.lax.fori_loop / lax.map outside jit: the whole model compiled inside
    # JAX's eager scan, which the note listed as one of 'its own … (eager jax.numpy operations)', after 8 other names
    run_captured(shell, "def body(c, k):\n    return c * 1.5 + k, c")
    result, cap = run_captured(shell, "%%jaxstages -o rep\nc, ys = jax.lax.scan(body, 0.5, jnp.linspace(0.0, 1.0, 9))")
    assert result.success
    rep = shell.user_ns["rep"]
    # the folded lines name the scan with the function it ran and JAX's helpers; the note says what they were, once
    assert str(rep).splitlines()[2:] == [
        "(1 compile of an eager jax.lax loop or branch, with the functions it runs: scan running body",
        " (In[2]:1))",
        "(1 compile of JAX's own helpers folded away: _linspace)",
        "note: no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers",
        "  (eager jax.numpy operations)",
    ]
    # its seconds are the cell line's own part, the scan named with the function it ran; not among JAX's own helpers
    assert rep.eager_loops.names == ("scan running body (In[2]:1)",) and rep.eager_loops.seconds > 0
    assert rep.helper_compiles.names == ("_linspace",)


def test_an_eager_shard_map_in_a_cell_without_jitted_calls_is_said_to_run_the_users_code(shell):
    # JAX's shard_map notebook: c = matmul_basic(a, b) of a @jax.shard_map function, outside jit, read 'JAX compiled
    # its own iota, reshape, _unmatch, _prim_applier, _match (eager jax.numpy operations)': the user's function ran,
    # one operation at a time on each block
    run_captured(shell, "from jax.sharding import PartitionSpec as P\nmesh = jax.make_mesh((1,), ('i',))\n"
                        "@jax.shard_map(mesh=mesh, in_specs=P('i'), out_specs=P('i'))\ndef double(v):\n    return 2 * v\n"
                        "v = jax.device_put(jnp.ones(4), jax.NamedSharding(mesh, P('i')))")
    result, _ = run_captured(shell, "%%jaxstages -o rep\nw = double(v)")
    assert result.success
    [note] = [n for n in shell.user_ns["rep"].notes if n.startswith("no jitted call of yours")]
    assert note == ("no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers "
                    "(_prim_applier, _match, _unmatch: jax.shard_map run "
                    "outside jit, which runs the function it maps (yours too, if any) one operation at a time on each "
                    "device's block and splits and joins the arrays; under jax.jit it compiles as one program)")


def test_no_call_note_names_only_what_compiled_and_never_says_a_raising_cell_ran_normally(shell):
    # Found running JAX's vmapped_log_probs.ipynb and convolutions.ipynb under %%jaxstages: a multiply
    # that failed while tracing (caught by the cell) and a subtract under jax.vmap that hit JAX's cache
    # were named as "JAX compiled its own ...", and a cell that raised was said to have "ran normally".
    shell.run_cell("m = jnp.ones((4, 3))\nv = jax.vmap(lambda r: r - 1.0)(m)", store_history=True)
    run_captured(shell, "%%jaxstages -o rep\ntry:\n    jnp.ones((2, 3)) * jnp.ones((4, 5))\n"
                        "except (TypeError, ValueError):\n    pass\nv = jax.vmap(lambda r: r - 1.0)(m)")
    rep = shell.user_ns["rep"]
    note = next(n for n in rep.notes if n.startswith("no jitted call of yours"))
    assert rep.helper_compiles.names == ("broadcast_in_dim",)
    assert note == "no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers (eager jax.numpy operations)"
    result, cap = run_captured(shell, "%%jaxstages -o rep\nw = m + 1.0\nraise KeyError('boom')")
    assert not result.success
    rep = shell.user_ns["rep"]
    note = next(n for n in rep.notes if n.startswith("no jitted call of yours"))
    assert "ran normally" not in note and "the cell raised KeyError" in str(rep)


def test_odeints_solver_is_said_to_run_the_users_function_not_to_be_a_numpy_operation(shell):
    # jax.experimental.ode.odeint jits its solver, _odeint_wrapper, with the user's function as a static argument: its
    # compiles (the cell's longest) were folded with the note 'JAX compiled its own helpers (eager jax.numpy operations)'
    shell.run_cell("from jax.experimental.ode import odeint\ndef decay(y, t, k):\n    return -k * y\nts = jnp.linspace(0., 1., 5)\n"
                   "y4 = jnp.ones(4)", store_history=True)
    run_captured(shell, "%%jaxstages -o rep\nys = odeint(decay, jnp.ones(2), ts, 0.5)\nys = odeint(decay, jnp.ones(3), ts, 0.5)")
    rep = shell.user_ns["rep"]
    assert dict(rep.helper_compiles.repeated)["_odeint_wrapper"] == 2
    note = next(n for n in rep.notes if n.startswith("no jitted call of yours"))
    assert note == ("no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers (eager "
                    "jax.numpy operations; _odeint_wrapper: jax.experimental.ode.odeint's solver, which JAX jits with your "
                    "function in it)")
    run_captured(shell, "%%jaxcache -o rep\nys = odeint(decay, y4, ts, 0.5)\ny = f(x)")
    assert ("JAX also compiled _odeint_wrapper once (jax.experimental.ode.odeint's solver, which JAX jits with your function "
            "in it); not shown") in shell.user_ns["rep"].notes


def test_jnp_piecewise_is_said_to_run_the_users_functions(shell):
    # jnp.piecewise jits _piecewise with the user's functions as a static argument: said as an eager jax.numpy operation
    shell.run_cell("def neg(v):\n    return -v * 2\nxs = jnp.linspace(-1.0, 1.0, 5)", store_history=True)
    run_captured(shell, "%%jaxstages -o rep\nys = jnp.piecewise(xs, [xs < 0], [neg, lambda v: v ** 2])")
    note = next(n for n in shell.user_ns["rep"].notes if n.startswith("no jitted call of yours"))
    assert note == ("no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers (eager "
                    "jax.numpy operations; _piecewise: jnp.piecewise's body, which JAX jits with your functions in it)")


def test_a_cell_that_raised_systemexit_is_not_said_to_show_its_traceback(shell):
    # IPython prints 'An exception has occurred, use %tb to see the full traceback.' and 'SystemExit: 3', no traceback
    with pytest.warns(UserWarning, match="To exit: use 'exit'"):  # IPython's, as without the magic
        result, cap = run_captured(shell, "%%jaxstages\ny = f(x)\nraise SystemExit(3)")
    assert type(result.error_in_exec) is SystemExit and "use %tb to see the full traceback" in cap.stdout
    text = cap.outputs[-1].data["text/plain"]
    assert "the cell raised SystemExit: 3 (IPython showed it without its traceback: %tb prints that)" in text
    assert "its traceback is in the cell's output" not in text


@pytest.mark.parametrize("raised, said", [
    ("raise KeyboardInterrupt", "the cell raised KeyboardInterrupt (its traceback is in the cell's output)"),
    ("raise SystemExit", "the cell raised SystemExit (IPython showed it without its traceback: %tb prints that)"),
])
def test_an_exception_with_no_message_is_named_alone(shell, raised, said):
    """'the cell raised KeyboardInterrupt:  (its traceback is in the cell's output)': a colon before nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # IPython's 'To exit: use 'exit'' after a SystemExit
        result, cap = run_captured(shell, f"%%jaxstages\ny = f(x)\n{raised}")
    assert not result.success
    assert said in cap.outputs[-1].data["text/plain"].splitlines()


def test_a_call_stopped_by_an_exception_with_no_message_names_it_alone(shell):
    """'g: failed while tracing' over 'KeyboardInterrupt: ', a colon before nothing."""
    shell.run_cell("def stop(v):\n    raise KeyboardInterrupt\nstopping = jax.jit(stop)", store_history=True)
    result, cap = run_captured(shell, "%%jaxstages\ny = stopping(x)")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    lines = cap.outputs[-1].data["text/plain"].splitlines()
    head = next(i for i, text in enumerate(lines) if text.startswith("stop: failed while tracing"))
    assert lines[head + 1] == "  KeyboardInterrupt"
    assert "the cell raised this KeyboardInterrupt (its traceback is in the cell's output)" in lines


def test_another_signature_is_named_by_the_arguments_that_set_it_apart(shell):
    # jax 0.12, flax nnx: 'also called: fwd with another signature (f32[8], f32[4,8], f32[1], f32[8,1], … (5 in all))',
    # the four parameters both calls share, not the x that changed.
    shell.run_cell("@jax.jit\ndef fwd(params, x):\n    return sum(params.values()).sum() + x.sum()\n"
                   "params = {k: jnp.ones(3) for k in 'abcd'}")
    run_captured(shell, "%%jaxstages -o last\nfwd(params, jnp.ones((8, 4)))\nfwd(params, jnp.ones(2))\nfwd(params, x)")
    assert shell.user_ns["last"].notes == (
        "also called: fwd with 2 other signatures (x: f32[8,4]; x: f32[2]) (use --all or --name to show them)",)


def test_all_and_name_options(shell):
    cell = "a = f(x)\nb = g(x, x)\nc = f(x)\nd = f(jnp.ones(4))"
    run_captured(shell, "%%jaxstages -o last\n" + cell)
    assert [r.function for r in shell.user_ns["last"].reports] == ["f"]
    # It read "also called: f, g", as if another function f had been called beside the f shown.
    assert shell.user_ns["last"].notes == ("also called: f with another signature (f32[3]), g (use --all or --name to show them)",)
    run_captured(shell, "%%jaxstages --all -o every\n" + cell)
    reports = shell.user_ns["every"].reports
    assert [(r.function, r.traced.args[0].type_str) for r in reports] == [("f", "f32[3]"), ("g", "f32[3]"), ("f", "f32[4]")]
    assert any("called 2 times" in n for n in reports[0].notes)
    run_captured(shell, "%%jaxstages --name g -o only\n" + cell)
    assert [r.function for r in shell.user_ns["only"].reports] == ["g"]
    shell.run_cell("h = jax.jit(lambda v, n: v * n, static_argnums=1)", store_history=True)
    run_captured(shell, "%%jaxstages -o statics\nh(x, 2)\nh(x, 3)\nh(x, 4)\nh(x, 5)")
    assert shell.user_ns["statics"].notes == (
        "also called: <lambda> with 3 other sets of static arguments (n=2; n=3; n=4) (use --all or --name to show them)",)
    number = shell.execution_count
    others = "h(x, 2)\ny = f(1.0)\n@jax.jit\ndef f(v):\n    return v + 1\ny = f(x)\ntry:\n    f(x, x)\nexcept TypeError:\n    pass\nf(x)"
    run_captured(shell, "%%jaxstages -o named\n" + others)
    assert [(r.function, r.call_site.line) for r in shell.user_ns["named"].reports] == [("f", 7)]
    assert shell.user_ns["named"].notes == (
        f"also called: <lambda>, f, another function of that name (called at In[{number}]:3), f, a call that raised "
        "(use --all or --name to show them)",)


def test_a_call_traced_again_after_jax_clear_caches_is_not_said_to_have_another_pytree(shell):
    """The cell cleared JAX's caches between two calls of one signature, so JAX traced the second again: 'also called'
    read 'k with another input pytree (the same argument types, traced again)', though the pytree was the same. A
    jax.clear_caches() between them is now said (jaxshow hears it); two traces that made the same jaxpr otherwise say
    only what jaxshow can tell."""
    run_captured(shell, "%%jaxstages -o rep\nk = jax.jit(lambda v: v * 3)\ny = k(x)\njax.clear_caches()\ny = k(x)")
    rep = shell.user_ns["rep"]
    assert [(r.function, r.call_site.line) for r in rep.reports] == [("<lambda>", 5)]
    assert rep.notes == ("also called: <lambda> traced again after jax.clear_caches() emptied JAX's cache (use --all or "
                         "--name to show them)",)
    run_captured(shell, "%%jaxstages -o rep\nk = jax.jit(lambda v: v * 3)\ny = k(x)\nk.clear_cache()\ny = k(x)")
    assert shell.user_ns["rep"].notes == ("also called: <lambda> traced again with the same signature and jaxpr (its "
                                          "clear_cache() emptied its cache, or another input pytree) (use --all or --name "
                                          "to show them)",)


def test_a_call_that_clears_jaxs_caches_in_its_own_trace_has_its_trace_time(shell):
    """jax.clear_caches() inside the trace emptied the miss counter by which jaxshow tells a trace from a lookup that
    found its jaxpr, so the headline call read 'k: lower … · compile …', no trace, though JAX traced it (and timed it)."""
    cell = ("%%jaxstages -o rep\n@jax.jit\ndef clearing(v):\n    jax.clear_caches()\n    return v * 2\n"
            "y = clearing(x)\ny = clearing(x)")
    _, cap = run_captured(shell, cell)
    (report,) = shell.user_ns["rep"].reports
    assert (report.function, report.call_site.line, report.cache_hit) == ("clearing", 7, False)
    assert report.timings.trace_seconds is not None
    assert cap.outputs[-1].data["text/plain"].split("\n\n")[1].startswith("clearing: trace ")


def test_calls_jax_traced_apart_are_reports_apart_though_their_types_are_equal(shell):
    # JAX's jit guide (201/jit.md): a pytree's metadata changed between two calls of equal argument types, and JAX
    # traced again; %%jaxstages read 'called 3 times with this signature' under the first call's jaxpr and line (a
    # config context likewise: the call outside jax.default_matmul_precision read as the one inside it).
    shell.run_cell("import dataclasses\n@partial(jax.tree_util.register_dataclass, data_fields=['v'], meta_fields=['mul'])\n"
                   "@dataclasses.dataclass\nclass C:\n    v: object\n    mul: bool\n"
                   "@jax.jit\ndef calc(c, y):\n    return c.v * y if c.mul else y\n"
                   "mm = jax.jit(lambda a, b: a @ b)\nm = jnp.ones((2, 2))", store_history=True)
    number = shell.execution_count
    run_captured(shell, "%%jaxstages --all -o rep\na = calc(C(2, True), 3)\nb = calc(C(2, False), 3)\nc = calc(C(2, True), 4)")
    reports = shell.user_ns["rep"].reports
    assert [(r.call_site.line, r.traced.jaxpr_text, r.notes) for r in reports] == [
        (2, "{ lambda ; a:i32[] b:i32[]. let c:i32[] = mul a b in (c,) }", ("called 2 times with this signature in the cell",)),
        (3, "{ lambda ; a:i32[] b:i32[]. let  in (b,) }", ())]
    run_captured(shell, "%%jaxstages -o rep\na = calc(C(2, True), 3)\nb = calc(C(2, False), 3)")
    (report,) = shell.user_ns["rep"].reports
    assert (report.call_site.file, report.call_site.line, report.cache_hit) == (f"In[{number + 1}]", 3, True)
    assert shell.user_ns["rep"].notes == ("also called: calc with another input pytree (c: CustomNode(C[(True,)], [*]), by "
                                          "position) (use --all or --name to show them)",)
    run_captured(shell, "%%jaxstages -o rep\nwith jax.default_matmul_precision('highest'):\n    y = mm(m, m)\ny = mm(m, m)")
    (report,) = shell.user_ns["rep"].reports
    assert (report.call_site.line, report.notes) == (4, ())
    assert report.timings.stages_run == ("trace", "lower", "compile")
    assert shell.user_ns["rep"].notes == ("also called: <lambda> in another config context "
                                          "(jax_default_matmul_precision='highest') (use --all or --name to show them)",)


def test_a_jit_of_a_transformed_function_bound_to_its_own_name_counts_its_hits(shell):
    """'loss = jax.jit(jax.grad(loss))' called twice showed no 'called 2 times': jax.grad's function carries loss's name
    and module, and the notebook holds the jit under that name, as a JAX module holds jnp.sin's, whose calls are JAX's."""
    run_captured(shell, "%%jaxstages -o rep\ndef loss(v):\n    return jnp.sin(v).sum()\nloss = jax.jit(jax.grad(loss))\n"
                        "g = loss(jnp.ones(3))\ng = loss(jnp.ones(3))")
    (report,) = shell.user_ns["rep"].reports
    assert (report.wrapper.qualname, report.call_site.line, report.notes) == (
        "grad(loss)", 5, ("called 2 times with this signature in the cell",))


def test_a_grouped_tables_line_for_the_rest_counts_rows_and_arrays(shell):
    # A model output of 64 layers of 2 arrays (flax's key-concepts guide) showed 50 rows "result['blocks'][i] — 2 arrays"
    # and then "… 28 more": 28 arrays, 14 rows.
    shell.run_cell("@jax.jit\ndef layers(v):\n    return {'blocks': [{'w': v, 'b': v + 1} for _ in range(64)]}", store_history=True)
    _, cap = run_captured(shell, "%%jaxstages\ny = layers(x)")
    text, page = _report(cap).data["text/plain"], _report(cap).data["text/html"]
    assert "    result['blocks'][49] — 2 arrays, 24 B\n    … 14 more rows, 28 arrays (all in report.traced.out_info)\n" in text
    assert "result['blocks'][50] — " not in text + page
    assert page.count("… 14 more rows, 28 arrays (all in report.traced.out_info)") == 1


def test_name_may_be_the_variable_a_jit_wrapper_is_bound_to(shell):
    shell.run_cell("def loss(v):\n    return (v ** 2).sum()\ntrain = jax.jit(loss)\n"
                   "class Scale:\n    def __call__(self, v):\n        return v * 3\nscale = jax.jit(Scale())\n", store_history=True)
    cell = "a = train(x)\nb = scale(x)\nc = f(x)"
    run_captured(shell, "%%jaxstages --name train -o by_variable\n" + cell)
    assert [r.function for r in shell.user_ns["by_variable"].reports] == ["loss"]
    run_captured(shell, "%%jaxstages --name scale -o callable_object\n" + cell)
    (report,) = shell.user_ns["callable_object"].reports
    assert report.function == "Scale" and report.call_site.line == 3  # the magic line is line 1
    run_captured(shell, "%%jaxstages --name loss -o by_function\n" + cell)
    assert [r.function for r in shell.user_ns["by_function"].reports] == ["loss"]


def test_a_jitted_method_or_partial_is_named_by_its_qualname_as_jaxcache_names_it(shell):
    # ① read 'function  cm' for jax.jit(K.cm) and 'function  apply' for jax.jit(nt.apply), where %jaxcache's table
    # reads K.cm and NT.apply (and jax.jit(K.sm), a plain function, read K.sm); --name NT.apply matched nothing.
    shell.run_cell("from typing import NamedTuple\nclass K:\n    @classmethod\n    def cm(cls, v):\n        return v * 4\n"
                   "class NT(NamedTuple):\n    w: float\n    def apply(self, v):\n        return v * self.w\n"
                   "def base(a, b):\n    return a * b\n", store_history=True)
    cell = "a = jax.jit(K.cm)(x)\nb = jax.jit(NT(2.0).apply)(x)\nc = jax.jit(partial(base, 2.0))(x)"
    _, cap = run_captured(shell, "%%jaxstages --all -o rep\n" + cell)
    assert [r.wrapper.qualname for r in shell.user_ns["rep"].reports] == ["K.cm", "NT.apply", "base"]
    assert "    function         NT.apply\n" in _report(cap).data["text/plain"]
    run_captured(shell, "%%jaxstages --name NT.apply -o only\n" + cell)
    assert [r.function for r in shell.user_ns["only"].reports] == ["apply"]


def test_names_in_any_script_are_names_for_name_save_and_jaxcache(shell, tmp_path):
    """``--name 損失`` was "needs a function name", ``--save`` wrote ``function.json`` for it, and
    ``%jaxcache f̃`` (a combining mark) was "unknown subcommand"; a name typed in fullwidth is the
    one Python reads (NFKC)."""
    defined = shell.run_cell("@jax.jit\ndef 損失(v):\n    return v * 2\n@jax.jit\ndef f̃(v):\n    return v + 1", store_history=True)
    cell = "a = 損失(x)\nb = f̃(x)\nc = f(x)"
    result, _ = run_captured(shell, f"%%jaxstages --name 損失 --save {tmp_path} -o by_name\n" + cell)
    assert result.success, result.error_in_exec
    assert [r.function for r in shell.user_ns["by_name"].reports] == ["損失"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "損失.compiled.hlo.txt", "損失.json",
                                                          "損失.lowered.stablehlo.mlir", "損失.traced.jaxpr.txt"]
    result, _ = run_captured(shell, "%%jaxstages --name ｆ -o fullwidth\n" + cell)
    assert [r.function for r in shell.user_ns["fullwidth"].reports] == ["f"]
    result, cap = run_captured(shell, "%jaxcache f̃")
    assert result.success, result.error_in_exec
    history = cap.outputs[0].data["text/plain"]
    assert history.splitlines()[:2] == ["%jaxcache f̃", f"  defined at: In[{defined.execution_count}]:4"]


def test_hlo_and_debug_info_options(shell):
    result, _ = run_captured(shell, "%%jaxstages --hlo --debug-info -o rep\ny = f(x)")
    report = shell.user_ns["rep"].reports[0]
    assert report.lowered.dialect == "hlo" and report.lowered.module_text.startswith("HloModule")
    setup_cell = result.execution_count - 1
    assert f"In[{setup_cell}]:" in report.traced.jaxpr_source_text
    assert f'"In[{setup_cell}]"' in report.lowered.module_text  # HLO's FileNames table
    assert "<ipython-input-" not in report.traced.jaxpr_source_text + report.lowered.module_text
    assert report.wrapper.defined_at.file == f"In[{setup_cell}]"


def test_a_donation_jax_could_not_use_is_said(shell):
    # 'c  f32[4]  —  yes' with no note: JAX warned 'Some donated buffers were not usable: float32[4]', and only the
    # memory picture's aliased bytes hinted that c's buffer was not reused
    shell.run_cell("step = jax.jit(lambda a, c: ((c + 1).sum(), a * 2), donate_argnums=(0, 1))")
    with pytest.warns(UserWarning, match="Some donated buffers were not usable"):  # JAX's, as without jaxshow
        _, cap = run_captured(shell, "%%jaxstages -o rep\ny = step(x, jnp.ones(4))")
    [report] = shell.user_ns["rep"].reports
    assert [(a.path, a.donated, a.donation_unused) for a in report.traced.args] == [("a", True, False), ("c", True, True)]
    assert ("donation not used for c (f32[4]): JAX found no output left of the same shape, dtype and placement to take its "
            "buffer, so the program does not reuse it (JAX warned: 'Some donated buffers were not usable')") in report.notes
    text = _report(cap).data["text/plain"]
    assert "    a         f32[3]  —         yes\n    c         f32[4]  —         yes, not used\n" in text
    import jax.numpy as jnp
    import jaxshow

    hlo = jaxshow.stages_with(dialect="hlo")(shell.user_ns["step"], jnp.ones(3), jnp.ones(4))
    assert [a.donation_unused for a in hlo.traced.args] == [False, True]
    run_captured(shell, "%%jaxstages -o rep\ny = jax.jit(lambda a: a * 2, donate_argnums=0)(x)")
    assert not any(a.donation_unused for a in shell.user_ns["rep"].reports[0].traced.args)


def test_donated_argument_is_walked_after_deletion(shell):
    shell.run_cell("step = jax.jit(lambda p, s: p - 0.1 * s, donate_argnums=0)\np = jnp.ones(8)")
    result, _ = run_captured(shell, "%%jaxstages -o rep\nold = p\np = step(p, 2.0)\nold.is_deleted()")
    assert result.success and result.result is True
    report = shell.user_ns["rep"].reports[0]
    assert [a.donated for a in report.traced.args] == [True, False]
    assert report.traced.args[1].weak_type
    assert report.compiled.memory.alias_size_bytes == 32


DONATED_STATE = """
@jax.tree_util.register_pytree_node_class
class State:
    def __init__(self, w):
        print("State built")
        self.w = w
    def tree_flatten(self):
        return (self.w,), None
    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

step = jax.jit(lambda s: s.w * 2, donate_argnums=0)
"""


@pytest.mark.parametrize("warm", [False, True])
def test_a_donated_pytree_of_the_users_is_not_rebuilt_for_the_report(shell, warm):
    # jaxshow replaced a donated argument by its ShapeDtypeStructs before the call (jax.tree_util.tree_map), which
    # rebuilt the user's State: its __init__ ran once more, and the cell printed "State built" twice.
    shell.run_cell(DONATED_STATE + ("step(State(jnp.ones(2)))" if warm else ""), store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ns = State(jnp.ones(2))\ny = step(s)\nprint(s.w.is_deleted())")
    built = 1 if warm else 2  # the cell's State, and (cold) the one of tracers JAX builds to trace step
    assert result.success and cap.stdout == "State built\n" * built + "True\n"
    [report] = shell.user_ns["rep"].reports
    assert report.cache_hit is warm
    if warm:  # looking the hit up in JAX's caches would run State.tree_flatten again
        assert report.traced is None and "would run your State.tree_flatten a second time" in report.notes[-1]
        return
    assert [(a.path, a.donated) for a in report.traced.args] == [("s[0]", True)]
    assert report.compiled.memory.alias_size_bytes == 8


def test_static_argument_call(shell):
    shell.run_cell("@partial(jax.jit, static_argnames='n')\ndef power(v, n):\n    return v ** n")
    run_captured(shell, "%%jaxstages -o rep\nr = power(x, n=3)")
    report = shell.user_ns["rep"].reports[0]
    assert report.wrapper.static_argnames == ("n",) and ("n", "3") in report.wrapper.static_args
    assert dict(report.traced.primitive_counts).get("integer_pow") == 1


def test_failure_while_tracing_raises_user_error_and_reports_stop(shell):
    shell.run_cell("@jax.jit\ndef bad(v):\n    runs.append('bad')\n    return v.reshape(7)")
    result, cap = run_captured(shell, "%%jaxstages -o rep\nbefore = 1\nr = bad(x)\nafter = 1")
    assert not result.success and isinstance(result.error_in_exec, TypeError)
    assert "reshape" in str(result.error_in_exec)
    assert shell.user_ns["before"] == 1 and "after" not in shell.user_ns
    assert shell.user_ns["runs"].count("bad") == 1, "the failing function ran once, not again for the report"
    report = shell.user_ns["rep"].reports[0]
    assert report.stopped_at == "trace" and report.traced is None
    assert report.error.type_name == "TypeError"
    text = _report(cap).data["text/plain"]
    assert "bad: failed while tracing" in text and "TypeError: cannot reshape" in text


def test_failure_while_lowering_shows_traced_station(shell):
    shell.run_cell(
        "from jax.extend.core import Primitive\nnolow = Primitive('nolow')\n"
        "nolow.def_abstract_eval(lambda v: v)\n"
        "@jax.jit\ndef lowfail(v):\n    runs.append('lowfail')\n    return nolow.bind(v) + 1"
    )
    result, _ = run_captured(shell, "%%jaxstages -o rep\nr = lowfail(x)")
    assert isinstance(result.error_in_exec, NotImplementedError)
    report = shell.user_ns["rep"].reports[0]
    assert report.stopped_at == "lower" and report.traced is not None and report.lowered is None
    assert shell.user_ns["runs"].count("lowfail") == 1


def test_failure_while_compiling_shows_lowered_station(shell):
    shell.run_cell("cfail = jax.jit(lambda v: v + 1, compiler_options={'xla_jaxshow_no_such_option': True})")
    result, _ = run_captured(shell, "%%jaxstages -o rep\nr = cfail(x)")
    assert not result.success
    report = shell.user_ns["rep"].reports[0]
    assert report.stopped_at == "compile" and report.lowered is not None and report.compiled is None


def test_error_after_the_jitted_call_keeps_report_and_raises(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = f(x)\nraise KeyError('later')")
    assert isinstance(result.error_in_exec, KeyError)
    rep = shell.user_ns["rep"]
    assert rep.reports[0].compiled is not None and rep.cell_error.type_name == "KeyError"


def test_cell_without_jitted_call_runs_normally(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\nplain = [i * 2 for i in range(3)]\nsum(plain)")
    assert result.success and result.result == 6
    assert shell.user_ns["rep"].reports == ()
    assert "no jitted call" in _report(cap).data["text/plain"]


def test_a_call_through_a_helper_has_its_own_report_at_the_helper_line(shell):
    shell.run_cell("def outer(v):\n    return jax.jit(lambda w: w * 5)(v)", store_history=True)
    helper_cell = shell.execution_count - 1
    result, _ = run_captured(shell, "%%jaxstages -o rep\nr = outer(x)")
    [report] = shell.user_ns["rep"].reports
    assert report.function == "<lambda>" and report.kind == "user"
    assert (report.call_site.file, report.call_site.line) == (f"In[{helper_cell}]", 2)
    assert (report.cell_site.file, report.cell_site.line) == (f"In[{result.execution_count}]", 2)


def test_a_call_inside_a_lambda_on_the_cells_line_names_that_line_once(shell):
    """'(called at In[5]:2 in <lambda>) (from In[5]:2)' named one line twice: the lambda is on the cell's own line."""
    result, cap = run_captured(shell, "%%jaxstages --all -o rep\ng = jax.grad(lambda v: f(v).sum())(x)")
    n = result.execution_count
    report = shell.user_ns["rep"].reports[0]  # the trace of f itself, inside the lambda; then the programs compiled
    assert (report.call_site.file, report.call_site.line, report.call_site.function, report.cell_site) == (
        f"In[{n}]", 2, "<lambda>", None)
    text = unwrapped(_report(cap).data["text/plain"])
    head = next(piece for piece in text.splitlines() if piece.startswith("f: ")).split(" note: ")[0]
    # 'f: reached inside jax.grad: JAX reports no stage timings there (called at ...)'; jax 0.7 times that trace
    assert head.startswith("f: ") and head.endswith(f" (called at In[{n}]:2 in <lambda>)") and "(from" not in head


def test_calls_inside_functions_defined_in_the_cell_still_work_later(shell):
    result, _ = run_captured(shell, "%%jaxstages\ndef later(v):\n    return f(v) + 1\ngen = (f(v) for v in [x])")
    assert result.success
    result = shell.run_cell("later(x); next(gen)")
    assert result.success, result.error_in_exec
    assert "__jaxshow_call__" not in shell.user_ns


def test_unknown_option_prints_usage_and_runs_nothing(shell):
    with pytest.raises(UsageError, match="unrecognized arguments: --bogus") as info:
        shell.run_cell_magic("jaxstages", "--bogus", "sentinel = 1")
    assert str(info.value).splitlines()[-2:] == [  # wrapped at the width (100 columns), each option whole
        "%%jaxstages [--all] [-n FUNCTION] [--hlo] [--debug-info] [--source] [--save DIR] [--all-processes]",
        "            [--diff] [-o NAME]",
    ]
    assert unwrapped(str(info.value)).splitlines()[-1] == USAGE
    assert "sentinel" not in shell.user_ns


USAGE = "%%jaxstages [--all] [-n FUNCTION] [--hlo] [--debug-info] [--source] [--save DIR] [--all-processes] [--diff] [-o NAME]"


@pytest.mark.parametrize("question", ["%%jaxstages?", "%jaxstages?", "jaxstages?"])
def test_every_way_of_asking_shows_the_manual_with_the_cell_prefix(ip, question):
    result, cap = run_captured(ip, question)
    assert result.success
    shown = cap.stdout + "".join(str(o.data.get("text/plain", "")) for o in cap.outputs)
    assert "Object `%jaxstages` not found" not in shown
    assert " ".join(shown.split()).count(USAGE) == 1
    assert "Run the cell once, as IPython would; show what JAX did for its jits." in shown


def test_the_line_form_only_says_it_is_a_cell_magic(ip):
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("jaxstages", "--all")
    assert unwrapped(str(info.value)).splitlines() == [
        "%%jaxstages is a cell magic: write it on the first line of a cell, with the code under it (%%jaxstages? shows the manual)",
        USAGE,
    ]


def test_a_malformed_name_is_rejected_before_running(shell):
    for bad in ("grad(f", "grad()", "(f)", "grad(1f)"):
        with pytest.raises(UsageError) as info:
            shell.run_cell_magic("jaxstages", f"--name '{bad}'", "sentinel = 1")
        assert str(info.value).splitlines()[0] == f"--name needs a function name (f, model.step, grad(f)), got {bad!r}"
    assert "sentinel" not in shell.user_ns


def test_a_name_found_nowhere_runs_the_cell_and_says_what_it_called(shell):
    """A name in neither the namespace nor the cell may be a library's or a module's jitted function (``-n train_step``
    for ``trainer.fit()``): the cell runs, and for a typo the report names the jitted functions it did call. The check
    that refused such a name read the whole cell, the magic line with the name too, so it ran only for
    ``run_cell_magic``."""
    result, cap = run_captured(shell, "%%jaxstages -n nowhere\nsentinel = 1\ny = f(x)")
    assert result.success and shell.user_ns["sentinel"] == 1
    assert "note: nowhere made no jitted call in this cell; the cell called f" in " ".join(cap.outputs[-1].data["text/plain"].split())
    shell.run_cell("import types\nlib = types.ModuleType('lib')\nexec('import jax\\n@jax.jit\\ndef hidden(v):\\n    return v + 1', "
                   "lib.__dict__)")
    result, cap = run_captured(shell, "%%jaxstages -n hidden\ny = lib.hidden(x)")
    assert result.success
    assert cap.outputs[-1].data["text/plain"].splitlines()[2].startswith("hidden: ")


def test_trailing_semicolon_silences_the_value(shell):
    result, cap = run_captured(shell, "%%jaxstages\nf(x);")
    assert result.success
    assert "Out[" not in cap.stdout


def test_report_keeps_no_user_arrays_alive(shell):
    shell.run_cell("import weakref\nbig = jnp.ones((64, 64))\nref = weakref.ref(big)")
    run_captured(shell, "%%jaxstages -o rep\nout = g(big, big)")
    shell.run_cell("del big, out")
    gc.collect()
    assert shell.user_ns["ref"]() is None, "the report (or the hook) kept the argument alive"


class _Collect(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_html_escapes_user_strings(shell):
    shell.run_cell(
        "@jax.jit\ndef hostile(v):\n    raise ValueError('</pre><script>alert(1)</script> & \"q\"')"
    )
    result, cap = run_captured(shell, "%%jaxstages\nhostile(x)")
    assert isinstance(result.error_in_exec, ValueError)
    page = _report(cap).data["text/html"]
    parser = _Collect()
    parser.feed(page)
    assert "script" not in parser.tags
    assert "</pre><script>alert(1)</script>" in "".join(parser.text)
    _, cap = run_captured(shell, "%%jaxstages\njax.jit(lambda v: v * 2)(x)")
    page = _report(cap).data["text/html"]
    assert "&lt;lambda>" in page and "<lambda>" not in page


def test_unload_restores_listeners_and_removes_magics(ip):
    from jax._src import monitoring

    ip.run_line_magic("unload_ext", "jaxshow")
    before = (list(monitoring._event_listeners), list(monitoring._event_duration_secs_listeners))
    ip.run_line_magic("load_ext", "jaxshow")
    ip.run_cell("import jax\nf = jax.jit(lambda v: v + 1)")
    ip.run_cell("%%jaxstages\nf(1.0)")
    ip.run_line_magic("unload_ext", "jaxshow")
    after = (list(monitoring._event_listeners), list(monitoring._event_duration_secs_listeners))
    assert before == after
    assert "jaxstages" not in ip.magics_manager.magics["cell"]
    ip.run_line_magic("load_ext", "jaxshow")
    assert "jaxstages" in ip.magics_manager.magics["cell"]


def test_configurable_budget_clips_ir_text(shell):
    shell.run_line_magic("config", "StagesMagics.max_lines = 2")
    try:
        _, cap = run_captured(shell, "%%jaxstages\ny = f(x)")
        text = _report(cap).data["text/plain"]
        assert "more lines not shown; full text in report.compiled.optimized_hlo_text" in text
    finally:
        shell.run_line_magic("config", "StagesMagics.max_lines = 500")


def test_bound_methods_and_partials_of_jitted_functions(shell):
    shell.run_cell(
        "class Model:\n    scale = 3.0\n"
        "    @partial(jax.jit, static_argnums=0)\n    def apply(self, v):\n        return v * self.scale\n"
        "model = Model()\nadd = partial(jax.jit(lambda a, b: a + b), 1.0)"
    )
    result, _ = run_captured(shell, "%%jaxstages --all -o rep\nm = model.apply(x)\np = add(x)")
    assert result.success
    reports = shell.user_ns["rep"].reports
    assert [r.function for r in reports] == ["apply", "<lambda>"]
    assert all(r.compiled is not None and r.error is None for r in reports)
    assert reports[0].wrapper.static_argnums == (0,)
    assert [a.type_str for a in reports[1].traced.args] == ["f32[]", "f32[3]"]


def test_named_plain_function_gets_a_clear_message(shell):
    shell.run_cell("def plain(v):\n    return v + 1")
    result, cap = run_captured(shell, "%%jaxstages --name plain -o rep\nr = plain(x)")
    assert result.success and "r" in shell.user_ns
    note = " ".join(shell.user_ns["rep"].notes)
    assert "plain is a function, not a jax.jit wrapper" in note and "jaxshow.stages(plain" in note


@pytest.mark.parametrize("value, said", [
    ("3", "n is an int, not a jax.jit wrapper: JAX has no stages to show for it"),
    ("jnp.ones(2)", "n is an ArrayImpl, not a jax.jit wrapper: JAX has no stages to show for it"),
    ("lambda v: v", "n is a function, not a jax.jit wrapper: JAX has no stages to show for it. Wrap it with jax.jit, or call "
                    "jaxshow.stages(n, ...), which jits it and says so"),
])
def test_a_named_value_that_is_no_jit_wrapper_is_said_with_its_article_and_advice_only_if_callable(shell, value, said):
    """``--name n`` of an int read 'n is a int, … Wrap it with jax.jit, or call jaxshow.stages(n, ...)': neither can be."""
    shell.run_cell(f"n = {value}")
    result, _ = run_captured(shell, "%%jaxstages --name n -o rep\nr = f(x)")
    assert result.success and said in shell.user_ns["rep"].notes


def test_pre_optimisation_cost_is_budgeted_by_module_size(shell):
    shell.run_line_magic("config", "StagesMagics.lowered_cost_max_chars = 100")
    try:
        run_captured(shell, "%%jaxstages -o rep\ny = f(x)")
        lowered = shell.user_ns["rep"].reports[0].lowered
        size = len(lowered.module_text)
        assert lowered.cost is None and lowered.cost_unavailable == (
            f"not computed for a module of {size:,} characters (over 100): it needs a StableHLO-to-HLO conversion; "
            "the compiled cost is XLA's after optimisation, and jaxshow.stages() computes this one")
    finally:
        shell.run_line_magic("config", "StagesMagics.lowered_cost_max_chars = 50000")
    run_captured(shell, "%%jaxstages -o rep\ny = f(x)")
    assert shell.user_ns["rep"].reports[0].lowered.cost.flops == 3.0  # sin and mul of f32[3]: XLA counts the 3 multiplies


def test_only_process_zero_shows_the_report_unless_all_processes(shell, monkeypatch, tmp_path):
    from jaxshow import stages_magic

    monkeypatch.setattr(stages_magic, "process_index", lambda: 1)  # as on the second host of a jax.distributed run
    result, cap = run_captured(shell, f"%%jaxstages --save {tmp_path} -o quiet\ny = f(x)")
    assert result.success and cap.outputs == [] and not any(tmp_path.iterdir())
    assert shell.user_ns["quiet"].reports[0].function == "f"  # the record is still there
    result, cap = run_captured(shell, "%%jaxstages --all-processes\ny = f(x)")
    assert result.success and len(cap.outputs) == 1 and cap.outputs[0].data["text/plain"].startswith("cell ")


def test_process_index_never_starts_a_backend():
    import subprocess
    import sys

    script = ("import jax\nfrom jaxshow.capture.placement import process_index\nfrom jaxshow import _jax_compat\n"
              "print(process_index(), _jax_compat.backends_initialized()[0])")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["0", "False"], out.stderr[-2000:]


def test_timeit_inside_the_cell_times_the_users_calls_alone(shell):
    from jaxshow.stages_magic import TIMEIT_NOTE

    shell.run_cell("import builtins\nhooked = []\n")
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = f(x)\n%timeit -n 5 -r 1 f(x)")
    assert result.success
    [report] = shell.user_ns["rep"].reports
    assert report.function == "f" and report.repeat_hits == 0  # the cell's own call; not the 5 timed ones
    assert TIMEIT_NOTE in shell.user_ns["rep"].notes


@pytest.mark.parametrize("cell", ["%%prun -q\n{magic} -o rep\nf(x)", "{magic} -o rep\n%prun -q f(x)"], ids=["cell", "line"])
def test_prun_says_its_cache_hits_are_not_seen(shell, cell):
    """%prun compiles its statement itself, so the cell's call that hit JAX's cache reaches no hook. The report said
    'no jitted call of yours in this cell; the cell ran normally' (and %%jaxcache 'no jitted function was called or
    traced') and nothing more, about a cell that called f."""
    shell.run_cell("f(x)")
    result, _ = run_captured(shell, cell.format(magic="%%jaxstages"))
    assert result.success and shell.user_ns["rep"].notes[-1] == (
        "%prun compiles its statement itself, without jaxshow's call hook: the traces and compiles it caused are "
        "reported, its cache hits are not listed")
    result, _ = run_captured(shell, cell.format(magic="%%jaxcache"))
    assert result.success and shell.user_ns["rep"].notes[-1] == (
        "%prun's statement runs without jaxshow's call hook: the traces it caused are shown, its calls that hit the "
        "cache are not counted")


def test_run_says_its_scripts_cache_hits_are_not_seen(shell, tmp_path):
    """%run executes a script of the user's outside the cell's rewrite, so the script's call that hit JAX's cache reaches
    no hook. The report said 'no jitted call of yours in this cell; the cell ran normally' (and %%jaxcache 'no jitted
    function of yours was called or traced') and nothing more, about a cell whose script called f and printed."""
    script = tmp_path / "train_run.py"
    script.write_text("y = f(x)\nprint('ran', y.shape)\n")
    shell.run_cell("f(x)")
    result, cap = run_captured(shell, f"%%jaxstages -o rep\n%run -i {script}")
    assert result.success and cap.stdout == "ran (3,)\n"
    assert shell.user_ns["rep"].notes[-1] == (
        "%run runs its script without jaxshow's call hook: the traces and compiles its calls caused are reported, "
        "its cache hits are not listed")
    result, cap = run_captured(shell, f"%%jaxcache -o rep\n%run -i {script}")
    assert result.success and cap.stdout == "ran (3,)\n" and shell.user_ns["rep"].notes[-1] == (
        "%run's script runs without jaxshow's call hook: the traces it caused are shown, its calls that hit the "
        "cache are not counted")


def test_a_call_at_the_top_of_a_run_script_is_said_to_be_inside_the_script(shell, tmp_path):
    """A call the script made that traced is reported at the script's line, and the calls it may have made that hit
    JAX's cache are said to be the script's. The note read '(calls from inside <module> that hit JAX's cache are not
    seen)', <module> being the name Python gives any file's top level."""
    script = tmp_path / "train_run2.py"
    script.write_text("import jax.numpy as jnp\nfor _ in range(2):\n    y = f(jnp.ones(5))\n")
    shell.run_cell("z = jnp.ones(5)")  # JAX's own helper compiles happen here
    result, cap = run_captured(shell, f"%%jaxstages -o rep\n%run -i {script}")
    assert result.success and cap.stdout == ""
    [report] = shell.user_ns["rep"].reports
    assert (report.call_site.file, report.call_site.line, report.cell_site.line) == (str(script), 3, 2)
    assert report.notes[-1] == ("called at least once with this signature in the cell (calls from inside train_run2.py "
                                "that hit JAX's cache are not seen)")


def test_the_stack_frame_tables_that_open_an_optimised_module_are_folded_in_html_and_left_out_of_text(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = f(x)")
    assert result.success
    hlo = shell.user_ns["rep"].reports[0].compiled.optimized_hlo_text
    page = cap.outputs[-1].data["text/html"]
    if "\nFileNames\n" not in hlo:  # jax 0.7's XLA prints no tables
        assert "stack-frame tables" not in page
        return
    tables = hlo[hlo.index("FileNames\n"):hlo.index("\n%")]
    assert (f"<summary>stack-frame tables ({tables.count(chr(10)) + 1} lines: FileNames, FunctionNames, FileLocations, StackFrames, "
            "the source of each instruction's stack_frame_id)</summary>") in page
    folded = page.split("<summary>stack-frame tables", 1)[1].split("</details>", 1)
    assert '"&lt;module>"' in folded[0] and "ENTRY" not in folded[0], "the tables, and only they, are in the fold"
    assert "<b class=k>ENTRY</b>" in folded[1] and "<b class=k>HloModule</b>" in page.split("<summary>stack-frame tables", 1)[0]
    text = cap.outputs[-1].data["text/plain"]  # the text form leaves them out in one line (it printed them all)
    lines = text.splitlines()
    at = lines.index(f"    (stack-frame tables, {tables.count(chr(10)) + 1} lines: FileNames … StackFrames, the source of each "
                     "stack_frame_id; left")  # wrapped at the width, as prose is (it ran to 109 columns at 100)
    assert lines[at + 1] == "     out here)"
    assert "\n    FileNames\n" not in text and "\n    ENTRY %main" in text


def test_a_call_jax_refuses_before_tracing_is_the_report_with_its_static_value(shell):
    # An unhashable static argument makes JAX's C++ dispatch raise before any trace: no hook sees the call.
    # The report said "no jitted call of yours in this cell" above the cell's ValueError.
    shell.run_cell("@partial(jax.jit, static_argnames='n')\ndef power(v, n):\n    runs.append('power')\n    return v ** len(n)",
                   store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\nbefore = 1\nr = power(x, n=[1, 2])\nafter = 1")
    assert isinstance(result.error_in_exec, ValueError) and "Non-hashable static arguments" in str(result.error_in_exec)
    assert shell.user_ns["runs"] == [] and "after" not in shell.user_ns
    report = shell.user_ns["rep"]
    assert [r.function for r in report.reports] == ["power"]
    power = report.reports[0]
    assert power.stopped_at == "call" and power.traced is None and power.error.type_name == "ValueError"
    assert ("n", "[1, 2]") in power.wrapper.static_args
    text = _report(cap).data["text/plain"]
    assert "power: failed while dispatching, before any trace (called at In[3]:3)" in text
    assert "note: JAX refused the call before tracing it: nothing was traced, lowered or compiled" in text
    assert "no jitted call of yours" not in text


REFUSING = """
class NoHash:
    def __hash__(self):
        raise RuntimeError("no hash")

class NoEq:
    def __hash__(self):
        return 1
    def __eq__(self, other):
        raise RuntimeError("no eq")

@jax.tree_util.register_pytree_node_class
class NoFlatten:
    def tree_flatten(self):
        raise ValueError("flatten boom")
    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls()

@jax.tree_util.register_pytree_node_class
class Meta:
    def __init__(self, v, aux):
        self.v, self.aux = v, aux
    def tree_flatten(self):
        return (self.v,), self.aux
    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)

@partial(jax.jit, static_argnums=1)
def scaled(v, s):
    return v * 2

@jax.jit
def first(m):
    return m.v + 1
"""


@pytest.mark.parametrize(("before", "call", "error"), [
    ("", "scaled(x, NoHash())", "RuntimeError: no hash"),
    ("scaled(x, NoEq())", "scaled(x, NoEq())", "ValueError: static arguments should be comparable using __eq__"),
    ("", "first(NoFlatten())", "ValueError: flatten boom"),
    ("first(Meta(x, NoEq()))", "first(Meta(x, NoEq()))", "ValueError: Exception raised while checking equality of metadata"),
])
def test_a_call_refused_over_the_users_hash_eq_or_flatten_is_not_a_cache_hit(shell, before, call, error):
    # JAX's C++ dispatch runs a static value's __hash__/__eq__, a pytree's flatten and its metadata's __eq__ before any
    # cache lookup. When they raised, the report read 'cache hit: JAX did not trace, lower or compile this call' with
    # 'JAX served this call from its cache ... and the call raised: while its program ran', and %%jaxcache counted a hit.
    shell.run_cell(REFUSING + before, store_history=True)
    result, cap = run_captured(shell, f"%%jaxstages -o rep\ny = {call}")
    assert f"{type(result.error_in_exec).__name__}: {result.error_in_exec}".startswith(error)
    report = shell.user_ns["rep"].reports[-1]
    assert report.stopped_at == "call" and not report.cache_hit and report.error.type_name == error.split(":")[0]
    text = _report(cap).data["text/plain"]
    assert f"{call.split('(')[0]}: failed while dispatching, before any trace (called at In[3]:2)" in text
    assert "note: JAX refused the call before tracing it: nothing was traced, lowered or compiled" in text
    assert "cache hit" not in text and "JAX served this call from its cache" not in text
    run_captured(shell, f"%%jaxcache -o crep\ny = {call}")
    assert [(s.function, s.calls, s.hits) for s in shell.user_ns["crep"].functions] == []


@pytest.mark.parametrize(("call", "error", "why"), [  # why: the user's code JAX ran, or why it refuses the call for certain
    ("scaled(x, NoHash())", "RuntimeError", "NoHash.__hash__"),
    ("first(NoFlatten())", "ValueError", "NoFlatten.tree_flatten"),
    ("scaled(x, jnp.ones(2))", "ValueError", "s is a JAX array, whose hash raises"),
    ("scaled(x, [1, 2])", "ValueError", "s is a list, which has no hash"),
])
def test_a_call_that_raised_an_error_the_cell_caught_is_not_called_a_cache_hit(shell, call, error, why):
    # The cell caught the refusal, so jaxshow never saw its error: the call read 'cache hit: JAX did not trace, lower or
    # compile this call' with 'JAX served this call from its cache ... and the call raised', and %%jaxcache counted a hit.
    shell.run_cell(REFUSING + "scaled(x, 2); first(Meta(x, 1))", store_history=True)
    result, cap = run_captured(shell, f"%%jaxstages -o rep\ntry:\n    y = {call}\nexcept {error}:\n    pass")
    assert result.success and "y" not in shell.user_ns
    text = _report(cap).data["text/plain"]
    assert "cache hit:" not in text and "JAX served this call from its cache" not in text
    [report] = shell.user_ns["rep"].reports
    if why.startswith("s is "):
        # It read 'no jitted call of yours in this cell', though JAX refuses this call, caught or not, before any trace.
        assert report.caught_refusal and report.error is None and not report.raised_unseen and report.traced is None
        assert ("scaled: failed while dispatching, before any trace; the cell caught the error (called at In[3]:3)\n"
                f"  note: JAX refused the call before tracing it, as it refuses every call whose static argument {why}: "
                "nothing was traced, lowered or compiled") in text.replace("\n    ", " ")
    else:
        assert report.raised_unseen and not report.cache_hit and report.traced is None
        name = call.split("(")[0]
        assert (f"{name}: raised, and the cell caught the error: refused before any trace, or a cache hit that raised "
                f"(called at In[3]:3)") in " ".join(text.split())
        assert report.notes == (f"jaxshow does not see an error the cell catches: JAX refused the call if your {why} raised "
                                "before its cache lookup, else the call hit the cache and raised while running; telling "
                                f"which would run your {why} again",)
    run_captured(shell, f"%%jaxcache -o crep\ntry:\n    y = {call}\nexcept {error}:\n    pass")
    assert shell.user_ns["crep"].functions == ()


def test_a_refused_calls_error_line_leaves_out_the_traceback_jax_wrote_into_its_message(shell):
    # A static value's __hash__ that raised TypeError: JAX's ValueError embeds that error's whole traceback (the cell's
    # IPython frames among them), and the report's error line repeated it, a dozen lines the cell's own traceback shows.
    shell.run_cell("class Hashless:\n    def __hash__(self):\n        raise TypeError('no hash here')\n"
                   "@partial(jax.jit, static_argnums=1)\ndef scaled(v, s):\n    return v * 2", store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = scaled(x, Hashless())")
    assert "Traceback (most recent call last):" in str(result.error_in_exec)
    [report] = shell.user_ns["rep"].reports
    assert report.error.message.startswith("Non-hashable static arguments are not supported.")
    assert report.error.message.endswith(". The error was:\nTypeError: no hash here")
    text = _report(cap).data["text/plain"]
    assert "Traceback" not in text and "interactiveshell.py" not in text


def test_a_call_jax_no_tracing_refused_is_no_cache_hit_but_a_refusal_before_any_trace(shell):
    """``jax.no_tracing()`` raises in JAX's C++ cache miss, before its traces are looked up: the report read 'cache hit:
    JAX did not trace, lower or compile this call', with a note that the hit raised while it ran (jax 0.12)."""
    run_captured(shell, "y = f(x)")
    result, cap = run_captured(shell, "%%jaxstages -o rep\nz = jnp.ones(7)\nwith jax.no_tracing():\n    y = f(x)\n    y = f(z)")
    assert type(result.error_in_exec) is RuntimeError and str(result.error_in_exec).endswith("but 'no_tracing' is set")
    assert shell.user_ns["runs"] == [1]
    refused = shell.user_ns["rep"].reports[-1]
    assert (refused.function, refused.stopped_at, refused.traced) == ("f", "call", None)
    text = " ".join(_report(cap).data["text/plain"].split())
    assert ("f: failed while dispatching, before any trace (called at In[3]:5) RuntimeError: re-tracing function f at "
            "In[1]:5 for `jit`, but 'no_tracing' is set note: JAX refused the call before tracing it: jax.no_tracing() was "
            "in effect, and the call missed JAX's C++ dispatch cache (JAX raised before it looked up its traces, so it says "
            "neither whether it would have traced nor why; %jaxcache freeze refuses traces as jax.no_tracing() does, and says "
            "what changed): nothing was traced, lowered or compiled") in text, text
    assert "cache hit" not in text
    # refused inside the trace of the cell's call (a jitted call in a no_tracing block of its body): that call traced
    shell.run_cell("inner = jax.jit(lambda v: v * 2)\n@jax.jit\ndef outer(v):\n    with jax.no_tracing():\n"
                   "        return inner(v) + 1", store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = outer(z)")
    assert type(result.error_in_exec) is RuntimeError
    [outer] = shell.user_ns["rep"].reports
    assert (outer.function, outer.stopped_at, outer.notes) == ("outer", "trace", ())


@pytest.mark.skipif(not hasattr(jax, "no_execution"), reason="jax.no_execution is new in jax 0.8")
def test_a_program_jax_no_execution_kept_from_running_is_said_so(shell):
    """``jax.no_execution()`` lets JAX trace, lower and compile, then refuses to run the program. The note read 'it failed
    while running or while its arguments were placed (a callback, a runtime check, memory, a deleted input, ...)'."""
    result, cap = run_captured(shell, "%%jaxstages -o rep\nz = jnp.ones(5)\nwith jax.no_execution():\n    y = f(z)")
    assert type(result.error_in_exec) is RuntimeError and "no_execution" in str(result.error_in_exec)
    assert shell.user_ns["runs"] == [1] and "y" not in shell.user_ns
    [report] = shell.user_ns["rep"].reports
    assert (report.function, report.stopped_at, report.traced is not None, report.compiled is not None) == ("f", "run", True, True)
    assert report.notes == ("the program compiled; JAX did not run it: jax.no_execution() was in effect",)


def test_a_refused_call_the_cell_caught_is_not_blamed_for_the_cells_later_error(shell):
    shell.run_cell("@partial(jax.jit, static_argnames='n')\ndef power(v, n):\n    return v ** len(n)", store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ntry:\n    power(x, n=[1])\nexcept ValueError:\n    pass\n{}['k']")
    assert isinstance(result.error_in_exec, KeyError)
    report = shell.user_ns["rep"]
    [refused] = report.reports
    assert (refused.function, refused.error, refused.outcome) == (
        "power", None, "failed while dispatching, before any trace; the cell caught the error")
    assert report.cell_error.type_name == "KeyError"


def test_a_cache_hit_whose_callback_raises_is_the_cells_call_and_not_called_refused(shell):
    # JAX's C++ fast path runs the cached program and its callback raises: no hook sees this call either.
    # The report said "no jitted call of yours in this cell"; its static argument is hashable, so it was not refused.
    shell.run_cell("def check(v):\n    if v > 0:\n        raise ValueError('positive')\n    return v\n"
                   "@partial(jax.jit, static_argnames='n')\ndef guarded(v, n):\n"
                   "    return jax.pure_callback(check, jax.ShapeDtypeStruct((), v.dtype), v) * n\n"
                   "guarded(jnp.float32(0), n=2)", store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\nguarded(jnp.float32(1), n=2)")
    assert result.error_in_exec is not None and "positive" in str(result.error_in_exec)
    text = _report(cap).data["text/plain"]
    assert "no jitted call of yours" not in text and "JAX refused the call" not in text
    [report] = shell.user_ns["rep"].reports
    assert report.function == "guarded"
    if jax.__version_info__ < (0, 8):  # jax 0.7 re-runs a failed fast-path call through its Python path: hooks see it
        assert report.stopped_at == "run" and report.traced is not None
        return
    assert report.cache_hit and "guarded: cache hit: JAX did not trace, lower or compile this call (called at In[3]:2)" in text
    assert "② Traced: not read from JAX's caches (see the note)" in text


DEBUG_NANS = """
import jax, jax.numpy as jnp
runs = []

@jax.jit
def lg(x):
    runs.append(1)
    return jnp.log(x) * 2

ok, bad = jnp.array([1.0, 2.0]), jnp.array([-1.0, 2.0])
"""


@pytest.mark.parametrize("caught", [False, True])
def test_a_cached_call_that_raises_under_debug_nans_is_the_cells_call(ip, caught):
    """A call JAX served from its cache whose output held a nan: jax_debug_nans raises FloatingPointError from JAX's
    de-optimized re-run, after the call. It is the cell's call of lg, counted in %%jaxcache, not 'no jitted call of yours'."""
    ip.run_cell(DEBUG_NANS + "lg(ok)", store_history=True)
    call = "with jax.debug_nans(True):\n    lg(bad)"
    body = f"try:\n    {call.replace(chr(10), chr(10) + '    ')}\nexcept FloatingPointError as e:\n    caught = e" if caught else call
    plain = ip.run_cell(body, store_history=True)
    runs = len(ip.user_ns["runs"])
    result, cap = run_captured(ip, "%%jaxstages -o rep\n" + body)
    assert (result.success, type(result.error_in_exec)) == (plain.success, type(plain.error_in_exec))
    assert len(ip.user_ns["runs"]) - runs == runs - 1, "JAX's de-optimized re-run ran lg's Python once, as without jaxshow"
    rep = ip.user_ns["rep"]
    assert [r.function for r in rep.reports] == ["lg"] and rep.jitted_calls == 1
    assert rep.reports[0].cache_hit and any("the call raised" in n for n in rep.reports[0].notes)
    assert not any("no jitted call" in n for n in rep.notes)
    assert "② Traced: not read from JAX's caches (see the note)" in cap.outputs[-1].data["text/plain"]
    assert "not reached" not in cap.outputs[-1].data["text/html"]
    result, cap = run_captured(ip, "%%jaxcache -o crep\n" + body)
    [stats] = ip.user_ns["crep"].functions
    assert (stats.function, stats.calls, stats.traced, stats.hits) == ("lg", 1, 0, 1)


def test_an_output_keyed_by_an_object_is_named_by_its_type(shell):
    """checkify's error is a dict keyed by ``ErrorEffect`` objects: the Traced station's output table read
    'result[0][0][ErrorEffect(error_type=<class' / ''jax._src.checkify.FailedCheckError'>,' /
    'shape_dtypes=(ShapeDtypeStruct(shape=(), dtype=float32),))]', three lines of JAX's repr per output. Each reads by
    the key's type, and where two would then read alike, by its first field too."""
    shell.run_cell("from jax.experimental import checkify\ndef positive_log(v):\n"
                   "    checkify.check(jnp.all(v > 0), 'x must be positive, got {}', v[0])\n    return jnp.log(v)\n"
                   "checked = jax.jit(checkify.checkify(positive_log, errors=checkify.user_checks | checkify.nan_checks))")
    result, cap = run_captured(shell, "%%jaxstages -o rep\nerr, out = checked(jnp.array([-1.0, 2.0]))")
    assert result.success
    [report] = shell.user_ns["rep"].reports
    assert report.traced.out_info[0].path.startswith("result[0][0][ErrorEffect(error_type=<class 'jax._src.checkify."), "kept whole"
    text = cap.outputs[-1].data["text/plain"]
    table = text[text.index("    output "):text.index("  effects:")].splitlines()[1:]
    assert [re.split(r"\s{2,}", row.strip())[0] for row in table] == [
        "result[0][0][ErrorEffect(error_type=FailedCheckError, …)]", "result[0][0][ErrorEffect(error_type=NaNError, …)]",
        "result[0][1][ErrorEffect(error_type=FailedCheckError, …)]", "result[0][1][ErrorEffect(error_type=NaNError, …)]",
        "result[0][2][ErrorEffect(…)][0]", "result[1]"]


def test_a_call_of_a_donated_input_says_where_it_can_have_failed(shell):
    """A second call on an input the first donated raises before its program runs. On jax 0.7 and 0.10 (a cache hit)
    the note read 'the call raised: while its program ran, or in a check JAX makes after it (jax_debug_nans,
    jax_debug_infs)', neither of which it was; jax 0.12 fails it in its Python dispatch ('failed while running')."""
    shell.run_cell("@partial(jax.jit, donate_argnums=0)\ndef bump(v):\n    return v + 1\nbuf = jnp.ones(8)")
    result, _ = run_captured(shell, "%%jaxstages --all -o rep\ny = bump(buf)\nz = bump(buf)")
    assert "deleted" in str(result.error_in_exec)
    first, second = shell.user_ns["rep"].reports
    assert (first.function, second.function, first.error) == ("bump", "bump", None)
    if jax.__version_info__ < (0, 11):
        assert second.cache_hit and second.notes == (
            "JAX served this call from its cache (it did not trace, lower or compile it), and the call raised: while its "
            "arguments were placed (a deleted or donated input, a transfer jax.transfer_guard disallows), while its program "
            "ran, or in a check JAX makes after it (jax_debug_nans, jax_debug_infs); jaxshow reads a cache hit's stations "
            "only once the call returns, so none are shown",)
    else:
        assert second.stopped_at == "run" and second.notes == (
            "the program compiled; it failed while running or while its arguments were placed (a callback, a runtime "
            "check, memory, a deleted input, a transfer jax.transfer_guard disallows)",)


@pytest.mark.parametrize("flag, value, bad", [("debug_nans", "nan", "bad"), ("debug_infs", "inf", "jnp.zeros(2)")])
def test_a_cached_call_that_jax_re_ran_after_a_nan_says_so(ip, flag, value, bad):
    """The cached call ran, JAX's check found a nan (an inf) in its output and re-ran lg de-optimized: the note says
    that, not 'raised while its program ran, or in a check JAX makes after it', and the user's error is unchanged."""
    ip.run_cell(DEBUG_NANS + "lg(ok)", store_history=True)
    cell = f"with jax.{flag}(True):\n    lg({bad})"
    plain = ip.run_cell(cell, store_history=True)
    result, _ = run_captured(ip, "%%jaxstages -o rep\n" + cell)
    assert (type(result.error_in_exec), str(result.error_in_exec)) == (type(plain.error_in_exec), str(plain.error_in_exec))
    [report] = ip.user_ns["rep"].reports
    assert report.cache_hit and report.outcome == "cache hit: JAX did not trace, lower or compile this call"
    assert report.notes[0] == (
        f"JAX served this call from its cache (it did not trace, lower or compile it) and ran it, and the call raised: "
        f"jax_{flag}'s check found {value} in its output after it ran, so JAX ran lg again de-optimized (its "
        f"Python, each operation dispatched on its own) to find the operation, and raised FloatingPointError from there; "
        f"jaxshow reads a cache hit's stations only once the call returns, so none are shown")


def test_a_nan_found_by_debug_nans_on_a_first_call_is_named_not_jaxs_internal_error(ip):
    ip.run_cell(DEBUG_NANS, store_history=True)
    result, cap = run_captured(ip, "%%jaxstages -o rep\nwith jax.debug_nans(True):\n    lg(bad)")
    assert type(result.error_in_exec) is FloatingPointError
    [report] = ip.user_ns["rep"].reports
    assert report.stopped_at == "run" and report.compiled is not None
    assert report.error.type_name == "nan in the output" and "jax_debug_nans's check found nan in the output of jit(lg)" in report.error.message
    assert "InternalFloatingPointError" not in cap.outputs[-1].data["text/plain"]
    assert any("run lg again de-optimized" in n for n in report.notes)


@pytest.mark.parametrize("cached", [False, True])
def test_the_jitted_calls_of_jaxs_de_optimized_rerun_do_not_headline_the_cell(ip, cached):
    """jax_debug_nans re-runs outer's Python after a nan, and outer's jitted inner compiles and runs on its own there:
    the cell's call is still outer (headlined, with the nan), and inner is named as the re-run's call, shown by --all."""
    ip.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef inner(x):\n    return jnp.log(x)\n"
                "@jax.jit\ndef outer(x):\n    return inner(x) * 2 + 1\n" + ("outer(jnp.ones(2))" if cached else ""), store_history=True)
    cell = "with jax.debug_nans(True):\n    outer(-jnp.ones(2))"
    result, cap = run_captured(ip, "%%jaxstages -o rep\n" + cell)
    assert type(result.error_in_exec) is FloatingPointError
    rep = ip.user_ns["rep"]
    assert [r.function for r in rep.reports] == ["outer"]
    assert ("JAX's de-optimized re-run of outer (jax_debug_nans, jax_debug_infs) called its jitted functions each on its own: "
            "inner (use --all or --name to show them)") in rep.notes
    assert not any(n.startswith("also called") for n in rep.notes)
    run_captured(ip, "%%jaxstages --all -o rep\n" + cell)
    assert [r.function for r in ip.user_ns["rep"].reports] == ["outer", "inner"], "in the order the calls were made"


def test_a_sharded_argument_table_names_the_mesh_once_and_fits_the_terminal(shell, monkeypatch):
    # JAX's shard_map notebook in a terminal: the argument table's sharding column (a NamedSharding's repr, 120
    # characters) ran past the width; the mesh is now said once above the table and each row gives its spec
    monkeypatch.setenv("COLUMNS", "80")
    shell.run_cell("from jax.sharding import NamedSharding, PartitionSpec as P\nmesh = jax.make_mesh((1,), ('batch',))\n"
                   "xs = jax.device_put(x, NamedSharding(mesh, P('batch')))")
    _, cap = run_captured(shell, "%%jaxstages\ny = f(xs)")
    text = cap.outputs[-1].data["text/plain"].splitlines()
    start = text.index(next(t for t in text if t.startswith("  mesh ")))
    end = text.index(next(t for t in text if t.startswith("    output")))
    axis_type = repr(shell.user_ns["mesh"].axis_types[0])
    *mesh_line, header, row = text[start:end]  # the mesh's line wraps at 80 columns where its axis type is long
    assert " ".join(piece.strip() for piece in mesh_line) == (
        f"mesh Mesh('batch': 1, axis_types=({axis_type},)) (each sharding below is a spec on it)")
    assert max(len(piece) for piece in mesh_line) <= 80
    assert [header, row] == ["    argument  type    sharding    donated", "    x         f32[3]  P('batch')  no"]


def test_leaves_placed_alike_in_default_layouts_are_one_line_not_a_table_per_leaf(shell):
    """A program on one device listed every input and output with the whole sharding and layout, about 150 characters a
    row (`SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)  Layout(major_to_minor=(0, 1), tiling=(), …)`),
    18 rows for a 4-layer MLP's value_and_grad. Leaves placed alike in XLA's default layout are now one line."""
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = g(jnp.ones((2, 3)), jnp.ones((3, 4)))")
    assert result.success
    device = shell.user_ns["rep"].reports[0].compiled.inputs[0].sharding
    assert device.startswith("SingleDeviceSharding(")
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert f"shardings and formats: both inputs and the output alike, {device}, in default layouts (row-major)" in text
    assert "Layout(major_to_minor" not in text and "Layout(major_to_minor" not in cap.outputs[0].data["text/html"]
    assert [(p.path, p.default_layout) for p in shell.user_ns["rep"].reports[0].compiled.inputs] == [("x", True), ("y", True)]

    # an unused input, pruned from the program, made a table of every leaf (a flax train step's unused batch['label']:
    # about 35 leaves of two lines each, all on one device): it is named after the one line
    result, cap = run_captured(shell, "%%jaxstages\nz = jax.jit(lambda used, unused: used * 2)(x, x)")
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert (f"shardings and formats: the used input and the output alike, {device}, in default layouts (row-major); "
            "unused is unused (pruned from the program)") in text
    result, cap = run_captured(shell, "%%jaxstages\nz = jax.jit(lambda a, b, c, d, e: (a * 2, b))(x, x, x, x, x)")
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert (f"shardings and formats: both used inputs and both outputs alike, {device}, in default layouts (row-major); "
            "c, d, e are unused (pruned from the program)") in text


def test_a_call_whose_argument_placements_cannot_be_read_is_still_the_users_call(shell, monkeypatch):
    # A sharding jaxshow could not read (a PartitionSpec with reduced axes, before jaxshow read its partitions) broke
    # the record of the call as it traced: its dispatch then read as a program compiled "for <unknown> under a
    # transformation", and the report said "jaxshow could not read the stations of <unknown>".
    from jaxshow.capture import calls

    def unreadable(args_flat):
        raise ValueError("a sharding of another kind")

    monkeypatch.setattr(calls, "placed_shardings", unreadable)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = f(jnp.ones(5))")
    assert result.success and shell.user_ns["runs"] == [1]
    (report,) = shell.user_ns["rep"].reports
    assert (report.function, report.call_site.file, report.call_site.line) == ("f", f"In[{result.execution_count}]", 2)
    assert "jaxshow could not read where this call's arguments are placed: ValueError: a sharding of another kind" in report.notes
    text = cap.outputs[0].data["text/plain"]
    assert "<unknown>" not in text and "under a transformation" not in text


@pytest.mark.parametrize("question", ["%%jaxstages?", "%jaxcache?", "%jaxconfig?", "%jaxdump?"])
def test_each_manual_fits_an_80_column_terminal_where_argparse_does_not_wrap_it(ip, question):
    result, cap = run_captured(ip, question)
    shown = cap.stdout + "".join(str(o.data.get("text/plain", "")) for o in cap.outputs)
    assert result.success and "Docstring:" in shown
    manual = shown[shown.index("Docstring:"):]
    usage = re.search(r"::\n\n.*?\n\n", manual, re.S).group()  # argparse's, at the width it found
    written = re.split(r"\n(?:positional arguments|options):\n", manual.replace(usage, ""))[0]
    assert max(len(line) for line in written.splitlines()) <= 80, max(written.splitlines(), key=len)


def test_python_api_in_a_shell_names_cells_as_the_magics_do(ip):
    """``jaxshow.stages()`` and ``jaxshow.explain()`` called in a notebook named a cell by the file IPython compiled it
    to (``<ipython-input-2-…>``; ``/tmp/ipykernel_…/….py`` in Jupyter) where ``%%jaxstages`` and ``%jaxcache`` say
    ``In[2]``: in the definition, the call site, the linked source, JAX's quoted explanation and the HLO's metadata."""
    ip.run_cell("import jax, jax.numpy as jnp, jaxshow", store_history=True)
    ip.run_cell("@jax.jit\ndef f(x):\n    return x * 2", store_history=True)
    assert ip.run_cell("rep = jaxshow.stages_with(source=True)(f, jnp.ones(3))", store_history=True).success
    rep = ip.user_ns["rep"]
    assert str(rep.wrapper.defined_at) == "In[2]:1 (f)"
    assert [source.name for source in rep.linked.sources] == ["In[2]"]
    hlo = rep.compiled.optimized_hlo_text
    assert ('"In[2]"' in hlo) and "ipython-input" not in hlo  # source_file="In[2]", or the FileNames table (jax >= 0.8)
    assert ip.run_cell("with jaxshow.explain() as ex:\n    f(jnp.ones(4))", store_history=True).success
    stats, = ip.user_ns["ex"].report.functions
    miss, = stats.misses
    assert (stats.defined_at, miss.call_site, miss.category) == ("In[2]:1", "In[4]:2", "input_types")
    assert "TRACING CACHE MISS at In[4]:2:4 (<module>)" in miss.evidence and "for f defined at In[2]:1" in miss.evidence
    assert "ipython-input" not in miss.evidence
    # outside a shell, the files are named as Python names them
    assert jaxshow_outside_a_shell() == "<string>:2 (g)"


def jaxshow_outside_a_shell() -> str:
    import subprocess
    import sys
    script = ("import jax, jaxshow\nexec(compile('import jax\\ndef g(x):\\n    return x', '<string>', 'exec'))\n"
              "print(jaxshow.stages(jax.jit(g), 1.0).wrapper.defined_at)")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
