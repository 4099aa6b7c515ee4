"""%jaxcache freeze / thaw and library blame in a real InteractiveShell, on real JAX."""

from __future__ import annotations

import logging
import os
import re
import sys
import sysconfig
import timeit
import types

import IPython
import pytest
from IPython.core.error import UsageError

import jaxshow
from jaxshow import _jax_compat, retrace
from jaxshow.cellrun import cell_label
from jaxshow.report import LibraryBlame
from shellrun import run_captured, unwrapped

SETUP = """
import jax, jax.numpy as jnp
from functools import partial
traces = []

@partial(jax.jit, static_argnums=1)
def step(x, n):
    traces.append(1)
    return x * n

@jax.jit
def other(x):
    return x + 1

x = jnp.ones(3)
y = step(x, 2)
"""

LIBRARY = '''
import jax
from functools import partial


@partial(jax.jit, static_argnums=1)
def _scaled(x, factor):
    return x * factor


def update(x, i):
    return _scaled(x, i % 3 + 1)
'''


@pytest.fixture
def shell(ip):
    retrace.registry.clear()
    ip.run_cell(SETUP, store_history=True)
    yield ip
    ip.run_line_magic("jaxcache", "thaw")


def test_freeze_a_loop_of_1000_hits_runs_with_no_error_and_no_trace(shell):
    run_captured(shell, "%jaxcache freeze step")
    result, cap = run_captured(shell, "for i in range(1000):\n    y = step(x, 2)\nlen(traces)")
    assert result.success and result.result == 1
    assert cap.stderr == ""


@pytest.mark.skipif(not hasattr(__import__("jax"), "new_ref"), reason="jax.new_ref arrived after jax 0.7")
def test_a_ref_functions_first_call_after_its_trace_is_not_refused(shell):
    """``accumulate.trace(counter, v)`` before ``%jaxcache freeze``, then ``accumulate(counter, v)``: JAX's tracing cache
    holds the user's trace; the call's discharge of the Ref traces only JAX's own ``_eval_jaxpr_discharge_state``
    (jax 0.12). It raised 'accumulate would trace inside a frozen region: never-seen function (first trace)'."""
    shell.run_cell("@jax.jit\ndef accumulate(ref, v):\n    ref[...] += v\n    return ref[...].sum()\n"
                   "counter = jax.new_ref(jnp.zeros(3))\nt = accumulate.trace(counter, x)", store_history=True)
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "accumulate(counter, x)")
    assert result.success, result.error_in_exec
    assert result.result.tolist() == 3.0


def test_a_refused_retrace_raises_retrace_error_naming_the_parameter_and_the_line(shell):
    # cold: jaxshow did not see step(x, 2) trace (SETUP ran before any %jaxcache); the refusal is explained
    # against the keys JAX's own cache holds, on every JAX (jax >= 0.11 and <= 0.8 give no words for it)
    _, cap = run_captured(shell, "%jaxcache freeze step")
    assert cap.stdout == ("%jaxcache freeze: step may make no new trace; a re-trace raises jaxshow.RetraceError. "
                          "%jaxcache thaw\n  to end.\n")  # wrapped at the width (100 columns)
    result, _ = run_captured(shell, "y = step(x, 2)\ny = step(x, 4)\nafter = True")
    error = result.error_in_exec
    assert type(error) is jaxshow.RetraceError and isinstance(error, RuntimeError)
    assert str(error) == (
        "step would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): different static arguments\n"
        "  n: now 4, before 2\n"
        f"  called at In[{result.execution_count}]:2\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace again."
    )
    assert (error.miss.category, error.miss.call_site) == ("static_args", f"In[{result.execution_count}]:2")
    assert [(c.where, c.now, c.before) for c in error.miss.changes] == [("n", "4", "2")]
    assert shell.user_ns["traces"] == [1], "the refused function's Python did not run"
    assert "after" not in shell.user_ns, "the cell stopped at the refused call"
    run_captured(shell, "%jaxcache thaw")
    result, _ = run_captured(shell, "y = step(x, 4)\nlen(traces)")
    assert result.result == 2, "the refused call left no trace in JAX's cache: after thaw it traces, once"


def test_a_refused_static_keyword_is_named_by_its_parameter_cold(shell):
    run_captured(shell, "@partial(jax.jit, static_argnames='mode')\ndef power(v, mode):\n    return v ** mode\nz = power(x, mode=2)")
    run_captured(shell, "%jaxcache freeze power")
    result, _ = run_captured(shell, "z = power(x, mode=3)")
    assert str(result.error_in_exec).splitlines()[:3] == [
        "power would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): different static arguments",
        "  mode: now 3, before 2",
        f"  called at In[{result.execution_count}]:1",
    ]


def test_the_traceback_points_at_the_users_line(shell):
    run_captured(shell, "%jaxcache freeze step")
    result, cap = run_captured(shell, "y = step(x, 2)\ny = step(x, 7)")
    assert type(result.error_in_exec) is jaxshow.RetraceError
    cells = [(cell_label(shell, tb.tb_frame.f_code.co_filename), tb.tb_lineno)
             for tb in _walk(result.error_in_exec.__traceback__) if cell_label(shell, tb.tb_frame.f_code.co_filename)]
    assert cells == [(f"In[{result.execution_count}]", 2)]
    assert "----> 2 y = step(x, 7)" in _plain(cap.stdout)


@pytest.mark.parametrize("magic", ["%%jaxcache -o rep\n", "%jaxcache on"])
def test_the_trace_after_thaw_of_a_refused_call_is_seen(shell, magic):
    """JAX keeps an entry for a lookup that raised and counts its next lookup a hit, though it traces then: 'step(x,
    3)' refused, '%jaxcache thaw', then 'step(x, 3)' under %%jaxcache read 'no trace, but 1 call compiled from an
    earlier trace' (traced 0) on jax 0.10 and 0.12, while step's Python ran."""
    run_captured(shell, "%jaxcache freeze step")
    assert type(run_captured(shell, "y = step(x, 3)")[0].error_in_exec) is jaxshow.RetraceError
    run_captured(shell, "%jaxcache thaw")
    if not magic.endswith("\n"):
        run_captured(shell, magic)
    try:
        result, cap = run_captured(shell, (magic if magic.endswith("\n") else "") + "y = step(x, 3)\nlen(traces)")
    finally:
        run_captured(shell, "%jaxcache off")
    assert result.result == 2
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert text.startswith("%jaxcache — 1 trace of 1 jitted function ") and "n: now 3, before 2" in text


def test_thaw_lets_it_trace_again_and_unfrozen_functions_never_raise(shell):
    run_captured(shell, "%jaxcache freeze step")
    result, _ = run_captured(shell, "z = other(jnp.ones(5))")  # not frozen: traces as usual
    assert result.success
    _, cap = run_captured(shell, "%jaxcache thaw step")
    assert cap.stdout == "%jaxcache thaw: step may trace again.\n"
    result, _ = run_captured(shell, "y = step(x, 3)\nlen(traces)")
    assert result.success and result.result == 2
    _, cap = run_captured(shell, "%jaxcache thaw")
    assert cap.stdout == "%jaxcache: nothing is frozen.\n"


def test_max_traces_allows_that_many_new_traces_then_raises(shell):
    _, cap = run_captured(shell, "%jaxcache freeze --max-traces 2 step")
    assert cap.stdout.startswith("%jaxcache freeze: step may make 2 more traces each;")
    result, _ = run_captured(shell, "y = step(x, 3)\ny = step(x, 4)\ny = step(x, 3)\nlen(traces)")
    assert result.success and result.result == 3
    result, _ = run_captured(shell, "y = step(jnp.ones(4), 4)")
    assert type(result.error_in_exec) is jaxshow.RetraceError
    assert str(result.error_in_exec).splitlines()[:3] == [
        "step would trace again inside a frozen region (%jaxcache freeze, 2 new traces allowed): different input types",
        "  x: now f32[4], before f32[3]",
        f"  called at In[{result.execution_count}]:1",
    ]
    assert shell.user_ns["traces"] == [1, 1, 1]


def test_freeze_with_no_name_covers_every_jitted_function_and_a_new_shape(shell):
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "z = other(x)\nz = other(jnp.ones(4))")
    assert str(result.error_in_exec) == (
        "other would trace inside a frozen region (%jaxcache freeze, 0 new traces allowed): never-seen function (first trace)\n"
        "  first trace of other\n"
        f"  called at In[{result.execution_count}]:1\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace."
    )
    run_captured(shell, "%jaxcache thaw")
    run_captured(shell, "z = other(x)")
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "z = other(x)\nz = other(jnp.ones(4))")
    assert str(result.error_in_exec).splitlines()[:3] == [
        "other would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): different input types",
        "  x: now f32[4], before f32[3]",
        f"  called at In[{result.execution_count}]:2",
    ]


def test_the_cell_form_freezes_that_cell_only(shell):
    result, cap = run_captured(shell, "%%jaxcache freeze step -o rep\ny = step(x, 2)\ny = step(x, 9)")
    assert type(result.error_in_exec) is jaxshow.RetraceError
    assert shell.user_ns["rep"].cell_error.type_name == "RetraceError"
    result, _ = run_captured(shell, "y = step(x, 9)\nlen(traces)")
    assert result.success and result.result == 2


@pytest.mark.parametrize(("line", "message"), [
    ("freeze nope", "'nope' is neither a subcommand nor a name in the namespace"),
    ("freeze x", "'x' is not a jitted function (it is an ArrayImpl); jax.jit it first"),
    ("freeze --max-traces=-1 step", "--max-traces must be 0 or more, got -1"),
    ("on --max-traces 2", "--max-traces goes with freeze only"),
    ("freeze --max-traces two", "argument --max-traces: invalid int value: 'two'"),
])
def test_bad_freeze_arguments_are_usage_errors(shell, line, message):
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("jaxcache", line)
    assert message in str(info.value)
    assert str(info.value).splitlines()[-2:] == [
        "%jaxcache [--max-traces N] [-o NAME] [SUBCOMMAND ...]",
        "(subcommands: on | off | persistent | clear NAME | freeze [NAME...] | thaw [NAME...] | NAME)"]


def test_a_wrapper_of_another_library_is_told_where_its_traces_are_not_to_jit_it(shell):
    shell.run_cell("class Wrapper:\n    def __call__(self, v):\n        return step(v, 2)\nwrapped = Wrapper()\ndef plain(v):\n    return v\n")
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("jaxcache", "freeze wrapped")
    assert unwrapped(str(info.value)).splitlines()[0] == (
        "'wrapped' is a __main__.Wrapper, not a jax.jit wrapper, so it has no trace history of its own: "
        "%jaxcache on (or %%jaxcache on a cell that calls it) shows the traces of what it jits")
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("jaxcache", "plain")
    assert str(info.value).splitlines()[0] == "'plain' is not a jitted function (it is a function); jax.jit it first"


def test_hits_cost_the_same_frozen_or_not(shell):
    step, x = shell.user_ns["step"], shell.user_ns["x"]

    def per_call() -> float:
        return min(timeit.repeat(lambda: step(x, 2), number=1000, repeat=5)) / 1000

    plain = per_call()
    shell.run_line_magic("jaxcache", "freeze step")
    frozen = per_call()
    print(f"1,000 hits: {plain * 1e6:.2f} us/call plain, {frozen * 1e6:.2f} us/call frozen")
    assert shell.user_ns["traces"] == [1]


def test_jaxcache_on_and_a_freeze_at_once_each_report_as_alone(shell):
    run_captured(shell, "%jaxcache on")
    run_captured(shell, "@partial(jax.jit, static_argnums=1)\ndef g(v, n):\n    return v * n\nz = g(x, 1)")
    run_captured(shell, "%jaxcache freeze --max-traces 1 g")
    result, cap = run_captured(shell, "z = g(x, 2)\nz = g(x, 2)")  # the one trace allowed, then a hit
    assert result.success
    [report] = [o.data["text/plain"] for o in cap.outputs]
    assert report.startswith("%jaxcache — 1 trace of 1 jitted function\n")
    assert f"    1. different static arguments: n: now 2, before 1\n       called at In[{result.execution_count}]:1\n" in report
    result, cap = run_captured(shell, "z = g(x.astype(jnp.int32), 2)")
    assert str(result.error_in_exec) == (
        "g would trace again inside a frozen region (%jaxcache freeze, 1 new trace allowed): different input types\n"
        "  v: now i32[3], before f32[3]\n"
        f"  called at In[{result.execution_count}]:1\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace again."
    )
    assert cap.outputs == [], "nothing traced: the session has no miss to report"
    _, cap = run_captured(shell, "%jaxcache g")
    history = [line.split() for line in cap.outputs[0].data["text/plain"].splitlines()]
    assert ["traces", "observed", "by", "jaxshow:", "2"] in history
    assert [line[1:] for line in history if line and line[0].count(":") == 2] == [
        ["v:", "f32[3]", "never-seen", "function", "(first", "trace)", "first", "trace", "of", "g"],
        ["v:", "f32[3]", "different", "static", "arguments", "n:", "now", "2,", "before", "1"],
    ]
    _, cap = run_captured(shell, "%jaxcache off")
    assert cap.stdout == "%jaxcache off.\n"


def test_a_refused_jit_made_inside_a_function_is_said_to_be_made_anew_by_that_function(shell, tmp_path, monkeypatch):
    """A lambda jitted inside make_and_run, whose earlier object a %%jaxcache saw trace, read 'never-seen function (first
    trace)' / 'first trace of <lambda>' when a freeze refused the next call's new object: the freeze asked jaxshow's
    history by object only. It now has the words of the reports; a definition in a loop at a cell's top level keeps its own."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "made_inside_frz.py").write_text("import jax\n\n\ndef make_and_run(x):\n    return jax.jit(lambda v: v * 2)(x)\n")
    loop = "for i in range(1):\n    h = jax.jit(lambda v: v - 1)\n    h(x)"
    run_captured(shell, "import made_inside_frz")
    run_captured(shell, f"%%jaxcache\nmade_inside_frz.make_and_run(x)\n{loop}")
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "made_inside_frz.make_and_run(x)")
    assert str(result.error_in_exec) == (
        "<lambda> would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): "
        "re-defined function (made anew inside make_and_run)\n"
        "  <lambda> is a new function object with the same name and source as one traced before: it is defined inside "
        "make_and_run, which makes it anew each time it runs its definition (each call, each pass of a loop); make the "
        "jitted function once, outside make_and_run\n"
        f"  called at {tmp_path / 'made_inside_frz.py'}:5 in make_and_run\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace again."
    )
    assert (result.error_in_exec.miss.made_in, result.error_in_exec.miss.same_line_hint) == ("make_and_run", False)
    result, _ = run_captured(shell, loop)
    assert str(result.error_in_exec).splitlines()[:2] == [
        "<lambda> would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): "
        "re-defined function (re-run cell or definition in a loop)",
        "  <lambda> is a new function object with the same name and source as one traced before"]


def test_a_refused_module_function_after_its_modules_reload_is_said_to_be_reloaded(shell, tmp_path, monkeypatch):
    """After importlib.reload, a freeze refused the module's new step object as 'never-seen function (first trace)',
    though a %%jaxcache saw its earlier object trace; it now says, as the reports do, that its module ran again."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "scalemod_frz.py").write_text("import jax\n\nSCALE = 2.0\n\n@jax.jit\ndef step(x):\n    return x * SCALE\n")
    run_captured(shell, "import importlib, scalemod_frz")
    run_captured(shell, "%%jaxcache\ny = scalemod_frz.step(x)")
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "importlib.reload(scalemod_frz)\ny = scalemod_frz.step(x)")
    assert str(result.error_in_exec) == (
        "step would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): "
        "re-defined function (its module reloaded or run again)\n"
        "  step is a new function object with the same name and source as one traced before: its module ran again "
        "(importlib.reload, %autoreload, %run), which makes each function in it anew\n"
        f"  called at In[{result.execution_count}]:2\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace again."
    )
    assert result.error_in_exec.miss.reloaded


def test_unload_while_frozen_puts_jax_back_and_the_call_traces_as_usual(shell):
    own = _jax_compat._trace_cache_callable()
    logger = logging.getLogger(_jax_compat.explain_logger_name())
    level, filters = logger.level, list(logger.filters)
    run_captured(shell, "%jaxcache freeze step")
    assert _jax_compat._trace_cache_callable() is not own, "the freeze wraps JAX's tracing cache"
    shell.run_line_magic("unload_ext", "jaxshow")
    assert _jax_compat._trace_cache_callable() is own, "JAX's tracing-cache function is JAX's own again"
    assert (logger.level, logger.filters) == (level, filters)
    result, _ = run_captured(shell, "y = step(x, 5)\nlen(traces)")
    assert result.success and result.result == 2, "the call that the freeze would have refused traced, once"
    shell.run_line_magic("load_ext", "jaxshow")
    _, cap = run_captured(shell, "%jaxcache thaw")
    assert cap.stdout == "%jaxcache: nothing is frozen.\n"


def _install(tmp_path, monkeypatch, folder, name):
    """``LIBRARY`` as module ``name`` in ``tmp_path/folder``, put on ``sys.path``; returns its file."""
    where = tmp_path / folder
    where.mkdir(parents=True)
    (where / f"{name}.py").write_text(LIBRARY)
    monkeypatch.syspath_prepend(str(where))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return where / f"{name}.py"


def test_library_blame_names_the_users_line_the_library_function_and_the_parameter(shell, tmp_path, monkeypatch):
    # a library is installed code: under a site-packages folder (as pip, conda and --user installs put it)
    library = _install(tmp_path, monkeypatch, "lib/python3/site-packages", "scalelib")
    run_captured(shell, "import scalelib")
    result, _ = run_captured(shell, "%%jaxcache -o rep\nfor i in range(2):\n    w = scalelib.update(x, i)")
    assert result.success
    [stats] = shell.user_ns["rep"].functions
    first, miss = stats.misses
    assert first.category == "never_seen"
    cell = f"In[{result.execution_count}]"
    assert miss.blame == LibraryBlame(
        user_line=f"{cell}:3", library_function="scalelib.update", library_line=f"{library}:12", traced_function="_scaled",
    )
    assert miss.call_site == f"{cell}:3"
    assert [(c.where, c.now, c.before) for c in miss.changes] == [("factor", "2", "1")]
    text = " ".join(str(shell.user_ns["rep"]).split())
    assert f"a library re-traced: {cell}:3 called scalelib.update ({library}:12), which passed factor differently to _scaled" in text


def test_library_blame_under_time_names_the_bodys_line(shell, tmp_path, monkeypatch):
    # Under %%time the blame read "a library re-traced: In[n]:1 called IPython.core.interactiveshell.InteractiveShell
    # .run_cell_magic (…/interactiveshell.py:2644)": the walk took %%time's <timed exec> body for no file of the user's.
    library = _install(tmp_path, monkeypatch, "lib/python3/site-packages", "scalelib")
    run_captured(shell, "import scalelib")
    body = "y = 1\nfor i in range(2):\n    w = scalelib.update(x, i)"
    result, _ = run_captured(shell, "%%jaxcache -o rep\n%%time\n" + body)
    [stats] = shell.user_ns["rep"].functions
    cell = f"In[{result.execution_count}]"
    assert stats.misses[-1].blame == LibraryBlame(
        user_line=f"{cell}:5", library_function="scalelib.update", library_line=f"{library}:12", traced_function="_scaled",
    )
    assert stats.misses[-1].call_site == f"{cell}:5"
    run_captured(shell, "%jaxcache on")
    result, cap = run_captured(shell, "%%time\n" + body.replace("range(2)", "range(2, 3)"))
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    cell = f"In[{result.execution_count}]"
    assert f"called at {cell}:4 a library re-traced: {cell}:4 called scalelib.update ({library}:12)" in text


def test_a_library_in_the_environments_own_site_packages_is_blamed(shell, monkeypatch):
    # a virtual environment's site-packages lies inside its own lib/python3.X, which sysconfig calls platstdlib:
    # a library there (numpyro's fori_collect re-tracing its _body_fn) is a library, not the standard library
    library = os.path.join(sysconfig.get_paths()["purelib"], "venvlib_blame", "api.py")
    module = types.ModuleType("venvlib_blame")
    exec(compile(LIBRARY, library, "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "venvlib_blame", module)
    run_captured(shell, "import venvlib_blame")
    result, _ = run_captured(shell, "%%jaxcache -o rep\nfor i in range(2):\n    w = venvlib_blame.update(x, i)")
    assert result.success
    [stats] = shell.user_ns["rep"].functions
    miss = stats.misses[-1]
    assert miss.blame is not None, "a library under the environment's lib/python3.X/site-packages is blamed"
    assert miss.blame.user_line == f"In[{result.execution_count}]:3"
    assert miss.blame.library_function == "venvlib_blame.update"


PER_CALL_LIBRARY = '''
import jax


def collect(x):
    @jax.jit
    def _body(x):  # a new function object on every call, as numpyro's fori_collect makes its _body_fn
        return x + 1
    return _body(x)
'''


def test_a_library_that_makes_a_new_jitted_function_per_call_is_blamed_for_that(shell, tmp_path, monkeypatch):
    folder = tmp_path / "site-packages"
    folder.mkdir()
    (folder / "percall.py").write_text(PER_CALL_LIBRARY)
    monkeypatch.syspath_prepend(str(folder))
    run_captured(shell, "import percall")
    result, _ = run_captured(shell, "%%jaxcache -o rep\nw = percall.collect(x)\nw = percall.collect(x)")
    assert result.success
    [(first, again)] = (stats.misses for stats in shell.user_ns["rep"].functions)  # two function objects, one row
    assert (first.category, again.category) == ("never_seen", "redefined")
    text = " ".join(str(shell.user_ns["rep"]).split())
    cell = f"In[{result.execution_count}]"
    assert text.count("a library re-traced:") == 1, "a first trace is not a re-trace"
    assert "2. re-defined function (a library made it again, inside a call of yours): _body is a new function object" in text
    assert (f"a library re-traced: {cell}:3 called percall.collect ({folder / 'percall.py'}:9), which made a new _body "
            "function object, so JAX's cache, which is keyed on the function object, could not find the earlier trace") in text
    assert "passed its arguments differently" not in text


def test_a_frozen_library_retrace_is_blamed_on_the_users_line_cold(shell, tmp_path, monkeypatch):
    library = _install(tmp_path, monkeypatch, "dist-packages", "scalelib2")
    run_captured(shell, "import scalelib2\nw = scalelib2.update(x, 0)")  # traced before any freeze: jaxshow did not see it
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "w = scalelib2.update(x, 0)\nw = scalelib2.update(x, 1)")
    assert str(result.error_in_exec) == (
        "_scaled would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): different static arguments\n"
        "  factor: now 2, before 1\n"
        f"  called at In[{result.execution_count}]:2, through the library function scalelib2.update ({library}:12), "
        "which passed factor differently to _scaled\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace again."
    )


def test_the_users_own_package_outside_the_notebook_folder_is_the_users_not_a_library(shell, tmp_path, monkeypatch):
    # a package installed editable (pip install -e) stays in the project's src/, outside the notebook's folder
    own = _install(tmp_path, monkeypatch, "project/src", "ownpkg")
    (tmp_path / "project" / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "project" / "notebooks")
    run_captured(shell, "import ownpkg\nw = ownpkg.update(x, 0)")
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "w = ownpkg.update(x, 1)")
    assert str(result.error_in_exec) == (
        "_scaled would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): different static arguments\n"
        "  factor: now 2, before 1\n"
        f"  called at {own}:12 in update\n"
        "JAX did not trace or compile it. %jaxcache thaw lets it trace again."
    )
    assert result.error_in_exec.miss.blame is None


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _plain(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_a_frozen_lambda_is_a_redefinition_only_of_its_own_cells(shell):
    """A lambda of a cell with the same text as another cell that traced under %jaxcache on was refused as 're-defined
    function (re-run cell or definition in a loop)'; as the front end names cells, only the cell run again is."""
    def refused(cell_id):
        result = shell.run_cell("y = jax.jit(lambda v: v * 2)(x)", store_history=True, cell_id=cell_id)
        assert isinstance(result.error_in_exec, jaxshow.RetraceError)
        return str(result.error_in_exec).splitlines()[:3]

    for line, cell_id in (("%jaxcache on", "on"), ("y = jax.jit(lambda v: v * 2)(x)", "cell-x"), ("%jaxcache off", "off"),
                          ("%jaxcache freeze", "freeze")):
        assert shell.run_cell(line, store_history=True, cell_id=cell_id).success
    number = shell.execution_count
    assert refused("cell-y") == [
        "<lambda> would trace inside a frozen region (%jaxcache freeze, 0 new traces allowed): never-seen function "
        "(first trace)", "  first trace of <lambda>", f"  called at In[{number}]:1"]
    assert refused("cell-x") == [
        "<lambda> would trace again inside a frozen region (%jaxcache freeze, 0 new traces allowed): re-defined function "
        "(re-run cell or definition in a loop)",
        "  <lambda> is a new function object with the same name and source as one traced before", f"  called at In[{number + 1}]:1"]


def test_a_refused_function_whose_code_autoreload_replaced_in_place_is_said_so(shell, tmp_path, monkeypatch):
    """A frozen function whose code %autoreload 2 replaced in place (the same object) refused at a new shape: the
    RetraceError read only the new shape (jax 0.7) or 'different debug info: same types, ...' (jax >= 0.9), as %jaxcache
    did before it said the code was replaced."""
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "codemod_frz.py"
    module.write_text("import jax.numpy as jnp\n\ndef step_fn(x):\n    return jnp.sin(x) * 2\n")
    run_captured(shell, "%load_ext autoreload\n%autoreload 2\nfrom codemod_frz import step_fn\njf = jax.jit(step_fn)")
    run_captured(shell, "%%jaxcache\ny = jf(x)")
    run_captured(shell, "%jaxcache freeze")
    module.write_text("# one\n# two\nimport jax.numpy as jnp\n\ndef step_fn(x):\n    return jnp.sin(x) * 3\n")
    os.utime(module, (module.stat().st_atime, module.stat().st_mtime + 10))
    result, _ = run_captured(shell, "y = jax.jit(step_fn)(jnp.ones(2))")
    now = shell.user_ns["step_fn"].__code__.co_firstlineno
    assert str(result.error_in_exec).splitlines()[1:3] == [
        f"  step_fn's code, replaced in place since its last trace (as %autoreload does): now at {module}:{now}, "
        f"before at {module}:3", "  x: now f32[2], before f32[3]"]
