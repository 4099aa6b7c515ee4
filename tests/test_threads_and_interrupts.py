"""Jitted calls on other threads while a ``%%jaxstages`` cell runs, and Ctrl-C while a report is built.

Other threads: a background thread started earlier (a data loader, an async
checkpoint) and a thread pool the cell uses. The report headlines the cell's
own call, keeps the other threads' stage seconds out of the cell's time line
(they ran alongside it), and a call still under way when the cell ends is
named, never walked or misdescribed.
"""

from __future__ import annotations

import pytest

from jaxshow.render import to_text as render_text
from shellrun import run_captured

SETUP = """
import threading, time
import concurrent.futures as cf
import jax, jax.numpy as jnp
x = jnp.ones(4)
events = []
"""

BACKGROUND = """
go, done, release = threading.Event(), threading.Event(), threading.Event()

def noise(v):
    events.append("noise traced")
    if hold:
        release.wait(30)
    return jnp.tanh(v) * 3

def loader():
    go.wait(30)
    jax.jit(noise)(x).block_until_ready()
    done.set()

loader_thread = threading.Thread(target=loader, daemon=True)
loader_thread.start()
"""


@pytest.fixture
def shell(ip):
    assert ip.run_cell(SETUP).success
    return ip


def _run(shell, cell):
    result, cap = run_captured(shell, cell)
    assert result.success, result.error_in_exec
    return shell.user_ns["rep"], cap


def _first_line(rep) -> str:
    return render_text(rep).splitlines()[0]


def test_a_background_threads_compile_is_alongside_not_the_headline(shell):
    assert shell.run_cell("hold = False\n" + BACKGROUND).success
    rep, _ = _run(shell, "%%jaxstages -o rep\ngo.set(); done.wait(30)\n@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    assert [r.function for r in rep.reports] == ["step"] and not rep.reports[0].other_thread
    assert (rep.other_threads.count, rep.other_threads.names) == (1, ("noise",))
    assert rep.other_compiles.count == 0 and rep.helper_compiles.count == 0
    own = rep.reports[0].timings.total_seconds + rep.helper_compiles.seconds  # jax 0.7: a nested helper trace
    assert rep.compile_pipeline_seconds == own and rep.other_compiles.seconds == 0
    text = " ".join(render_text(rep).split())  # the line wraps at the text width
    assert ("(JAX's stages on other threads, alongside the cell and not in its time above: "
            f"{_seconds(rep.other_threads.seconds)}, 1 compile: noise)") in text
    assert "your other calls" not in _first_line(rep)
    assert shell.user_ns["events"] == ["noise traced"]


def test_the_other_threads_compiles_are_named_after_the_functions_that_compiled(shell):
    """A thread compiled one function and failed to trace another: the line read "1 compile: noise, bad", naming bad
    among the compiles though it never compiled. The compiles now name only the functions that compiled."""
    cell = ("%%jaxstages -o rep\ndef noise(v):\n    return jnp.tanh(v)\ndef bad(v):\n    return v @ jnp.ones(3)\n"
            "def work():\n    jax.jit(noise)(x)\n    try:\n        jax.jit(bad)(x)\n    except TypeError:\n"
            "        events.append('bad failed')\n"
            "worker = threading.Thread(target=work)\nworker.start(); worker.join(30)\n"
            "@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    rep, _ = _run(shell, cell)
    assert shell.user_ns["events"] == ["bad failed"]
    assert (rep.other_threads.count, rep.other_threads.names) == (1, ("noise",))
    text = " ".join(render_text(rep).split())
    assert f"{_seconds(rep.other_threads.seconds)}, 1 compile: noise)" in text


def test_the_stages_of_another_thread_that_compiled_nothing_are_named(shell):
    cell = ("%%jaxstages -o rep\ndef bad(v):\n    return v @ jnp.ones(3)\n"
            "def work():\n    try:\n        jax.jit(bad)(x)\n    except TypeError:\n        events.append('bad failed')\n"
            "worker = threading.Thread(target=work)\nworker.start(); worker.join(30)\n"
            "@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    rep, _ = _run(shell, cell)
    assert (rep.other_threads.count, rep.other_threads.names) == (0, ("bad",))
    assert f"{_seconds(rep.other_threads.seconds)}: bad)" in " ".join(render_text(rep).split())


def test_the_cells_own_library_call_headlines_before_another_threads_function(shell):
    assert shell.run_cell("import optax\nparams = {'w': jnp.ones(23)}\nopt = optax.adam(1e-3)\nstate = opt.init(params)\n"
                          "hold = False\n" + BACKGROUND).success
    rep, _ = _run(shell, "%%jaxstages -o rep\ngo.set(); done.wait(30)\nupdates, state = opt.update(params, state, params)")
    [report] = rep.reports
    assert (report.function, report.kind, report.other_thread) == ("tree_bias_correction", "library", False)
    assert rep.other_threads.names == ("noise",)


def test_a_call_still_under_way_on_another_thread_is_named_not_walked(shell):
    assert shell.run_cell("hold = True\n" + BACKGROUND).success
    rep, cap = _run(shell, "%%jaxstages -o rep\ngo.set()\nwhile not events: time.sleep(0.001)\n"
                           "@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    assert [r.function for r in rep.reports] == ["step"]
    assert "still under way on another thread when the cell ended, so not shown: noise (tracing)" in rep.notes
    assert rep.other_threads.count == 0 and not any("ahead of time" in n for r in rep.reports for n in r.notes)
    assert shell.run_cell("release.set(); loader_thread.join(30); assert done.is_set()").success
    after, cap = _run(shell, "%%jaxstages -o rep\nz = step(jnp.ones(5))")
    assert [r.function for r in after.reports] == ["step"] and after.other_threads.count == 0
    assert "noise" not in render_text(after)
    assert shell.user_ns["events"] == ["noise traced"]


def test_a_thread_pool_of_the_cells_calls_is_shown_on_another_thread(shell):
    cell = """%%jaxstages -o rep
def work(k):
    def body(v):
        return v * k
    body.__name__ = f"work{k}"
    return jax.jit(body)(x)
with cf.ThreadPoolExecutor(2) as pool:
    out = [v.tolist() for v in pool.map(work, [2, 3])]
"""
    rep, _ = _run(shell, cell)
    assert shell.user_ns["out"] == [[2.0] * 4, [3.0] * 4]
    [report] = rep.reports
    assert report.function in ("work2", "work3") and report.other_thread
    assert rep.compile_pipeline_seconds == 0.0 and rep.helper_compiles.count == 0
    assert set(rep.other_threads.names) == {"work2", "work3"} and rep.other_threads.count == 2
    assert _first_line(rep).startswith(f"cell {_seconds(rep.cell_seconds)} = the rest (running, Python) ")
    head = render_text(rep).split("\n" + report.function + ":")[1].split("\n①")[0]
    assert " ".join(head.split()).endswith(" (called at In[1]:6 in work) (on another thread)")


def _seconds(seconds: float) -> str:
    from jaxshow.report import format_seconds
    return format_seconds(seconds)


def test_jaxcache_says_which_thread_a_miss_was_on(shell):
    result, _ = run_captured(shell, "hold = False\n" + BACKGROUND.replace("target=loader,", "target=loader, name='loader',"))
    assert result.success
    cell = shell.execution_count - 1
    rep, cap = _run(shell, "%%jaxcache -o rep\ngo.set(); done.wait(30)\n@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    noise, step = rep.functions
    assert (noise.function, step.function) == ("noise", "step")
    assert [m.call_site for m in noise.misses] == [f"In[{cell}]:13 in loader (on thread loader)"]
    assert [m.call_site for m in step.misses] == [f"In[{cell + 1}]:6"]
    assert f"called at In[{cell}]:13 in loader (on thread loader)" in render_text(rep)


RACE = """
a_in, b_done = threading.Event(), threading.Event()

@jax.jit
def racer(v):
    if v.shape[0] == 1:  # thread A's trace waits inside until B's call has traced and returned
        a_in.set()
        b_done.wait(30)
    return v * 2

def race():
    a = threading.Thread(target=lambda: racer(jnp.ones(1)), name="A")
    a.start()
    a_in.wait(30)
    racer(jnp.ones(2))
    b_done.set()
    a.join(30)
"""


def _misses(rep):
    [row] = rep.functions
    return [(m.category, m.summary) for m in row.misses]


def test_a_trace_that_ended_while_another_threads_lookup_was_open_is_not_its_before(shell):
    # B's lookup of racer started after A's and its trace ended first: neither lookup found the other's key in JAX's cache
    assert run_captured(shell, RACE)[0].success
    rep, _ = _run(shell, "%%jaxcache -o rep\nrace()")
    assert _misses(rep) == [("never_seen", "first trace of racer")] * 2
    assert rep.functions[0].traced == 2


def test_a_function_traced_before_is_compared_with_the_keys_jax_held_as_each_lookup_started(shell):
    assert run_captured(shell, RACE + "racer(jnp.ones(3))")[0].success
    rep, _ = _run(shell, "%%jaxcache -o rep\nrace()")
    assert _misses(rep) == [("input_types", "v: now f32[2], before f32[3]"), ("input_types", "v: now f32[1], before f32[3]")]


def test_a_miss_on_a_pool_thread_with_no_line_of_yours_names_the_thread(shell):
    from jaxshow.retrace.miss_text import NO_SITE_HINT, THREAD_SITE_HINT
    # JAX's call site is empty too, and so its "defined on the same line" hint compares g's first trace with f's
    rep, _ = _run(shell, "%%jaxcache -o rep\nf = jax.jit(lambda v: v * 2)\ng = jax.jit(lambda v: v * 3)\n"
                         "with cf.ThreadPoolExecutor(1, thread_name_prefix='pool') as pool:\n"
                         "    a, b = pool.submit(f, x).result(), pool.submit(g, x).result()")
    misses = [m for row in rep.functions for m in row.misses]
    assert [(m.category, m.call_site, m.thread) for m in misses] == [("never_seen", None, "pool_0")] * 2
    assert render_text(rep).count("       called on thread pool_0 (no line of yours on its stack)\n") == 2
    assert "same line" in misses[1].evidence and misses[1].evidence_notes == (THREAD_SITE_HINT,)
    assert NO_SITE_HINT not in misses[0].evidence_notes


MEANWHILE = """
other = []

def meanwhile(v):
    if other == ["go"]:  # while the cell's call runs, another thread traces and compiles f for a new shape
        other.append(threading.Thread(target=lambda: f(jnp.ones(5)), name="other"))
        other[1].start()
        other[1].join(30)
    return v

@jax.jit
def f(v):
    return jax.pure_callback(meanwhile, jax.ShapeDtypeStruct(v.shape, v.dtype), v) * 2

y = f(x)
"""


def test_a_hit_while_another_thread_traces_the_same_function_is_a_hit(shell):
    """The cell's ``f(x)`` hit the cache while a thread traced and compiled ``f`` for a new shape: it was not counted as
    a hit (a trace of f had ended during the call, on any thread), or it was 'compiled without a new trace' (a compile of
    jit_f was logged meanwhile, on any thread). In a pool of f over new shapes, 100 cell calls read 62 hits."""
    assert run_captured(shell, MEANWHILE)[0].success
    rep, _ = _run(shell, "%%jaxcache -o rep\nother.append('go')\ny = f(x)\ny = f(x)")
    [row] = rep.functions
    assert (row.calls, row.traced, row.hits, row.recompiled) == (2, 1, 2, ())
    assert [(m.category, m.call_site) for m in row.misses] == [("input_types", f"In[{shell.execution_count - 2}]:5 (on thread other)")]


def test_ctrl_c_as_xla_returns_says_why_a_failed_compile_is_timed(shell, monkeypatch):
    # Python takes a Ctrl-C only once XLA's compile returns: JAX's compile event has fired, and no executable is kept
    from jax._src import compiler
    real = compiler.backend_compile_and_load

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(compiler, "backend_compile_and_load", interrupted)
    result, cap = run_captured(shell, "%%jaxstages -o rep\n@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    monkeypatch.undo()
    assert type(result.error_in_exec) is KeyboardInterrupt
    [report] = shell.user_ns["rep"].reports
    assert report.outcome == "failed while compiling" and report.timings.compile_seconds > 0
    assert report.notes[-1] == ("its compile is timed though it failed: JAX times its compile step however it ends (an XLA "
                                "error, or Ctrl-C, which Python takes only once XLA returns); JAX kept no executable, and "
                                "the program did not run")


@pytest.mark.parametrize("magic, builder", [("%%jaxstages -o rep", "jaxshow.stages_magic.cell_report"),
                                            ("%%jaxcache -o rep", "jaxshow.retrace.Session.report")],
                         ids=["jaxstages", "jaxcache"])
def test_ctrl_c_while_the_report_is_built_is_one_line_and_leaves_nothing_installed(shell, monkeypatch, magic, builder):
    import builtins

    import jax._src.pjit as pjit
    from jaxshow import timings
    from jaxshow.cellrun import INTERRUPTED

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    hooked = {name: getattr(pjit, name) for name in ("_pjit_call_impl_python", "_resolve_and_lower")}
    explaining = jax_config_flag()
    monkeypatch.setattr(builder, interrupted)
    result, cap = run_captured(shell, f"{magic}\n@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    monkeypatch.undo()
    assert result.success and shell.user_ns["y"].tolist() == [2.0] * 4 and "rep" not in shell.user_ns
    assert cap.stderr == INTERRUPTED + "\n" and "Traceback" not in cap.stdout and cap.outputs == []
    assert {name: getattr(pjit, name) for name in hooked} == hooked and not timings.listeners_registered()
    assert not any("jaxshow" in name for name in vars(builtins)) and jax_config_flag() == explaining
    rep, _ = _run(shell, f"{magic}\nz = step(jnp.ones(5))")
    shown = [r.function for r in rep.reports] if magic.startswith("%%jaxstages") else [f.function for f in rep.functions]
    assert shown == ["step"]


def test_ctrl_c_while_jaxcache_on_builds_its_report_is_one_line_and_the_session_goes_on(shell, monkeypatch):
    from jaxshow import retrace
    from jaxshow.cellrun import INTERRUPTED

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    assert run_captured(shell, "%jaxcache on")[0].success
    with monkeypatch.context() as patch:
        patch.setattr(retrace.Session, "report", interrupted)
        result, cap = run_captured(shell, "@jax.jit\ndef step(v):\n    return v + 1\ny = step(x)")
    assert result.success and cap.stderr == INTERRUPTED + "\n" and cap.outputs == []
    result, cap = run_captured(shell, "z = step(jnp.ones(5))")
    [report] = [o for o in cap.outputs if "text/html" in o.data]
    assert result.success and report.data["text/plain"].splitlines()[0] == "%jaxcache — 1 trace of 1 jitted function"
    assert "  step " in report.data["text/plain"]
    assert run_captured(shell, "%jaxcache off")[0].success


def jax_config_flag() -> bool:
    import jax
    return bool(jax.config.jax_explain_cache_misses)


@pytest.mark.parametrize("start", ["run(lambda: hit(x))", "with cf.ThreadPoolExecutor(2) as pool:\n    list(pool.map(hit, [x, x]))"])
def test_a_hit_on_another_thread_is_not_said_to_be_no_call(shell, start):
    """A cell whose jitted calls all ran on other threads and hit JAX's cache: ``%%jaxcache`` read "no jitted function
    of yours was called or traced" and ``%%jaxstages`` "no jitted call of yours in this cell", though ``hit`` was called.
    A hit runs in C++, where jaxshow sees only the cell's own top-level calls: each sentence now says what it knows. A
    trace on another thread is seen, its calls and hits not counted as the cell's."""
    shell.run_cell("@jax.jit\ndef hit(v):\n    return v * 2\ny = hit(x)\n"
                   "def run(fn):\n    t = threading.Thread(target=fn)\n    t.start()\n    t.join()")
    _, cap = run_captured(shell, f"%%jaxcache\n{start}")
    assert cap.outputs[-1].data["text/plain"] == (
        "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code")
    _, cap = run_captured(shell, f"%%jaxstages\n{start}")
    assert cap.outputs[-1].data["text/plain"].splitlines()[1:] == ["note: no jitted call of yours seen in this cell; the cell ran normally"]
    rep, cap = _run(shell, "%%jaxcache -o rep\n" + start.replace("(x)", "(jnp.ones(3))").replace("[x, x]", "[jnp.ones(3)]"))
    [row] = rep.functions
    assert (row.function, row.calls, row.traced, row.hits, row.traced_calls) == ("hit", None, 1, None, None)
    assert render_text(rep).splitlines()[0] == "%jaxcache — 1 trace of 1 jitted function"
