"""Load and unload: ten cycles leave what one leaves, and unload undoes whatever ran in between."""

from __future__ import annotations

import builtins
import logging

import jax
import pytest
from IPython.core.error import UsageError

from jaxshow import _jax_compat, persistent
from shellrun import run_captured, unwrapped

LOGGERS = (_jax_compat.explain_logger_name(), *persistent.LOGGER_NAMES)


def _pjit_hooks():
    from jax._src import api_util, compiler, pjit

    names = ("_infer_params", "_trace_for_jit", "_pjit_call_impl_python", "_resolve_and_lower")
    return (*(getattr(pjit, n, None) for n in names), compiler.backend_compile_and_load, api_util.maybe_recursive_nan_check)


def _footprint(shell):
    """Everything jaxshow may touch, in the shell and in JAX."""
    from jax._src import monitoring

    events = shell.events.callbacks
    return {
        "configurables": [type(c).__name__ for c in shell.configurables],
        "cleanup_transforms": list(shell.input_transformers_cleanup),
        "ast_transformers": list(shell.ast_transformers),
        "pre_run_cell": list(events["pre_run_cell"]),
        "post_run_cell": list(events["post_run_cell"]),
        "pre_execute": list(events["pre_execute"]),
        "post_execute": list(events["post_execute"]),
        "post_transformers": list(shell.input_transformers_post),
        "cell_magics": sorted(shell.magics_manager.magics["cell"]),
        "line_magics": sorted(shell.magics_manager.magics["line"]),
        "registry": sorted(shell.magics_manager.registry),
        "builtins": sorted(n for n in vars(builtins) if "jaxshow" in n),
        "user_ns": sorted(n for n in shell.user_ns if "jaxshow" in n),
        "config": dict(jax.config.values),
        "loggers": [(n, lg.level, tuple(lg.handlers), tuple(lg.filters)) for n in LOGGERS for lg in [logging.getLogger(n)]],
        "listeners": (tuple(monitoring.get_event_listeners()), tuple(monitoring.get_event_duration_listeners())),
        "trace_cache": _jax_compat._trace_cache_callable(),
        "pjit_hooks": _pjit_hooks(),
    }


CELLS = (
    "import jax, jax.numpy as jnp\nf = jax.jit(lambda v: v * 2)",
    "%%jaxstages\nf(jnp.ones(3))",
    "%%jaxcache\nf(jnp.ones(4))",
    "%jaxcache on",
    "f(jnp.ones(5))",
    "%%jaxcache\n%jaxcache off\nf(jnp.ones(6))",
    "%jaxconfig x64 -o jaxconfig_report",
    "%jaxdump -o dumps_seen",
)


def test_ten_load_unload_cycles_leave_what_one_leaves(ip):
    ip.run_line_magic("unload_ext", "jaxshow")
    before = _footprint(ip)
    ip.run_line_magic("load_ext", "jaxshow")
    once = _footprint(ip)
    ip.run_line_magic("unload_ext", "jaxshow")
    assert _footprint(ip) == before
    for _ in range(10):
        ip.run_line_magic("load_ext", "jaxshow")
        for cell in CELLS:
            assert ip.run_cell(cell, store_history=True).success, cell
        ip.run_line_magic("unload_ext", "jaxshow")
        assert _footprint(ip) == before
    ip.run_line_magic("load_ext", "jaxshow")
    assert _kinds(_footprint(ip)) == _kinds(once)


def _kinds(footprint):
    """The footprint with each installed object replaced by its kind (a new load makes new objects)."""
    def kind(value):
        return getattr(value, "__qualname__", None) or type(value).__qualname__

    kinds = {key: [kind(v) for v in value] if key in ("cleanup_transforms", "post_transformers", "pre_run_cell", "post_run_cell", "pre_execute", "post_execute") else value
             for key, value in footprint.items()}
    kinds["listeners"] = tuple(tuple(kind(v) for v in group) for group in footprint["listeners"])
    return kinds


def test_unload_inside_nested_sessions_restores_jax(ip):
    ip.run_line_magic("unload_ext", "jaxshow")
    before = _footprint(ip)
    ip.run_line_magic("load_ext", "jaxshow")
    ip.run_cell(CELLS[0], store_history=True)
    assert ip.run_cell("%%jaxcache\nget_ipython().run_line_magic('jaxcache', 'on')\nf(jnp.ones(7))", store_history=True).success
    assert ip.run_cell("%%jaxstages\nf(jnp.ones(8))", store_history=True).success
    ip.run_line_magic("unload_ext", "jaxshow")
    assert _footprint(ip) == before
    ip.run_line_magic("load_ext", "jaxshow")


def test_reload_ext_is_one_installation(ip):
    ip.run_line_magic("reload_ext", "jaxshow")
    ip.run_line_magic("reload_ext", "jaxshow")
    assert [type(c).__name__ for c in ip.configurables].count("StagesMagics") == 1
    assert [type(c).__name__ for c in ip.configurables].count("JaxConfigMagics") == 1
    assert type(ip.magics_manager.registry["ConfigMagics"]).__module__ == "IPython.core.magics.config"  # %config's own
    assert sum(1 for t in ip.input_transformers_cleanup if type(t).__name__ == "_FirstLineTransform") == 1
    result = ip.run_cell("%%jaxstages -o rep\nimport jax\njax.jit(lambda v: v + 1)(1.0)", store_history=True)
    assert result.success and len(ip.user_ns["rep"].reports) == 1


def test_unload_with_jaxcache_on_forgets_every_trace_and_leaves_a_plain_cell(ip):
    ip.run_line_magic("unload_ext", "jaxshow")
    ip.run_cell("import jax, jax.numpy as jnp\nx = jnp.ones(3)", store_history=True)
    before = _footprint(ip)
    for cell in ("%load_ext jaxshow", "%jaxcache on", "cb2 = jax.jit(lambda v: v+1); cb2(x)", "%unload_ext jaxshow"):
        assert ip.run_cell(cell, store_history=True).success, cell
    assert _footprint(ip) == before
    result, cap = run_captured(ip, "y = cb2(jnp.ones(4))")
    assert result.success and cap.outputs == [] and cap.stdout == ""
    run_captured(ip, "%load_ext jaxshow")
    result, cap = run_captured(ip, "%jaxcache cb2")
    text = cap.outputs[0].data["text/plain"]
    assert "traces observed by jaxshow: 0\n" in text
    assert "jaxshow has not observed a trace of this function" in text
    assert "never-seen function" not in text


def test_reload_or_unload_says_which_modes_it_ended(ip, monkeypatch):
    """%reload_ext jaxshow with %jaxcache on (or a freeze) loads jaxshow afresh, with neither: the cells after it got no
    report and re-traced freely, and nothing said so. The unload names what it ended; with neither on it says nothing."""
    monkeypatch.setenv("COLUMNS", "200")
    run_captured(ip, "%jaxcache on")
    _, cap = run_captured(ip, "%reload_ext jaxshow")
    assert cap.stdout == ("%jaxcache on ended: jaxshow was unloaded (%unload_ext or %reload_ext); run %jaxcache on again "
                          "to go on.\n")
    run_captured(ip, "%jaxcache on")
    run_captured(ip, "%jaxcache freeze")
    _, cap = run_captured(ip, "%unload_ext jaxshow")
    assert cap.stdout == ("%jaxcache on and %jaxcache freeze ended: jaxshow was unloaded (%unload_ext or %reload_ext); run "
                          "%jaxcache on and %jaxcache freeze again to go on.\n")
    run_captured(ip, "%load_ext jaxshow")
    _, cap = run_captured(ip, "%reload_ext jaxshow")
    assert cap.stdout == ""


@pytest.mark.parametrize("magic", ["%%jaxstages", "%%jaxcache"])
def test_a_report_cut_short_by_an_unload_in_its_cell_says_so(ip, magic):
    """%unload_ext jaxshow inside a %%jaxstages or %%jaxcache cell ends its capture there: the report showed the calls
    before it as the cell's all ('cell 36.2 ms = …', '1 trace of 1 jitted function'), though the cell went on to trace
    again after it. The report now says where it ends."""
    ip.run_cell("import jax, jax.numpy as jnp\nk = jax.jit(lambda v: v * 3)", store_history=True)
    result, cap = run_captured(ip, f"{magic} -o rep\ny = k(jnp.ones(3))\n%unload_ext jaxshow\ny = k(jnp.ones(2))\ny.tolist()")
    assert result.success, result.error_in_exec
    assert result.result == [3.0, 3.0]
    note = ("jaxshow was unloaded inside this cell (%unload_ext or %reload_ext jaxshow): the report ends there; what the "
            "cell did after it is not in it")
    assert ip.user_ns["rep"].notes[-1] == note
    assert note in unwrapped(cap.outputs[-1].data["text/plain"])
    ip.run_line_magic("load_ext", "jaxshow")


def test_messages_and_usage_errors_wrap_at_the_terminals_width(ip, monkeypatch):
    """'%jaxcache on' printed a line of 102 columns, a usage error of %%jaxstages one of 133 and its usage 117: what
    jaxshow writes to the terminal wraps at its width, after IPython's 'UsageError: ', each option whole."""
    cells = ("%jaxstages --all", "%%jaxstages --bogus\nx = 1", "%jaxcache frobnicate", "%jaxconfig --bogus",
             "%jaxcache on", "%jaxcache freeze", "%jaxcache thaw", "%jaxcache off")
    for columns in (100, 80):
        monkeypatch.setenv("COLUMNS", str(columns))
        for cell in cells:
            result, cap = run_captured(ip, cell)
            error = f"UsageError: {result.error_in_exec}" if isinstance(result.error_in_exec, UsageError) else ""
            assert max(len(piece) for piece in (cap.stdout + cap.stderr + error).splitlines()) <= columns, (columns, cell)
    monkeypatch.setenv("COLUMNS", "80")
    _, cap = run_captured(ip, "%jaxcache on")
    assert cap.stdout == ("%jaxcache on: every following cell that traces a jitted function gets a report;\n"
                          "  %jaxcache off to stop.\n")
    result, _ = run_captured(ip, "%jaxstages --all")
    assert f"UsageError: {result.error_in_exec}".splitlines() == [
        "UsageError: %%jaxstages is a cell magic: write it on the first line of a cell,",
        "  with the code under it (%%jaxstages? shows the manual)",
        "%%jaxstages [--all] [-n FUNCTION] [--hlo] [--debug-info] [--source] [--save DIR]",
        "            [--all-processes] [--diff] [-o NAME]",
    ]
    run_captured(ip, "%jaxcache off")


@pytest.mark.parametrize("cell, said", [
    ("%%jaxstages -h\nran = 1", "unrecognized arguments: -h (%%jaxstages? shows the manual)"),
    ("%%jaxcache --help\nran = 1", "unrecognized arguments: --help (%jaxcache? shows the manual)"),
    ("%jaxcache -h", "unrecognized arguments: -h (%jaxcache? shows the manual)"),
    ("%jaxconfig x64 --help", "unrecognized arguments: --help (%jaxconfig? shows the manual)"),
    ("%jaxdump -h", "unrecognized arguments: -h (%jaxdump? shows the manual)"),
])
def test_asking_for_help_with_h_says_where_the_manual_is_and_nothing_runs(ip, cell, said):
    """``-h`` read 'unrecognized arguments: -h' and the usage line, with no word of ``%%jaxstages?``, where the manual is."""
    result, cap = run_captured(ip, cell)
    assert type(result.error_in_exec) is UsageError and str(result.error_in_exec).splitlines()[0] == said
    assert "ran" not in ip.user_ns and not cap.outputs


@pytest.mark.parametrize("cell, said", [
    ("%%jaxstages --save runs/a --save runs/b\nran = f(x)", "argument --save: given twice, 'runs/a' and 'runs/b'; give it once"),
    ("%%jaxstages -n f --name g\nran = f(x)", "argument -n/--name: given twice, 'f' and 'g'; give it once"),
    ("%%jaxstages --hlo --hlo -o r1 -o r2\nran = f(x)", "argument -o/--output: given twice, 'r1' and 'r2'; give it once"),
    ("%%jaxcache -o a -o b\nran = f(x)", "argument -o/--output: given twice, 'a' and 'b'; give it once"),
    ("%jaxcache freeze f --max-traces 1 --max-traces 2", "argument --max-traces: given twice, '1' and '2'; give it once"),
    ("%jaxdump --dir /tmp --dir /var", "argument --dir: given twice, '/tmp' and '/var'; give it once"),
    ("%jaxdump --diff 1 2 --diff 3 4", "argument --diff: given twice, '1 2' and '3 4'; give it once"),
    ("%jaxconfig x64 -o a -o b", "argument -o/--output: given twice, 'a' and 'b'; give it once"),
])
def test_an_option_given_twice_with_two_values_is_a_usage_error_and_nothing_runs(ip, cell, said):
    """argparse kept the last value without a word: ``--save a --save b`` saved to b, ``-n f -n g`` showed g, and the
    cell ran. Every magic now refuses it before anything runs, naming both values."""
    ip.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda v: v + 1)\ng = jax.jit(lambda v: v * 2)\nx = jnp.ones(3)")
    result, cap = run_captured(ip, cell)
    assert type(result.error_in_exec) is UsageError and str(result.error_in_exec).splitlines()[0] == said
    assert "ran" not in ip.user_ns and not cap.outputs and not any(k in ip.user_ns for k in ("a", "b", "r1", "r2"))
    assert run_captured(ip, "%jaxcache thaw")[1].stdout == "%jaxcache: nothing is frozen.\n"


@pytest.mark.parametrize("cell", ["%%jaxstages --hlo --hlo -o rep\nran = f(x)", "%%jaxstages --save {d} --save '{d}' -o rep\nran = f(x)",
                                  "%%jaxstages --all -n f -o rep\nran = f(x)\ng(x)"])
def test_a_flag_or_the_same_value_given_twice_counts_once(ip, cell, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda v: v + 1)\ng = jax.jit(lambda v: v * 2)\nx = jnp.ones(3)")
    result, _ = run_captured(ip, cell.replace("{d}", str(tmp_path)))
    assert result.success and "ran" in ip.user_ns
    [report] = ip.user_ns["rep"].reports
    assert "add" in report.traced.jaxpr_text and "mul" not in report.traced.jaxpr_text  # f's, not g's


@pytest.mark.parametrize("cell, saved", [("%%jaxstages --save {d}/runs --save {d}/./runs/ -o rep\nran = f(x)", "runs"),
                                         ("%%jaxstages --save=~/runs --save ~/runs/ -o rep\nran = f(x)", "runs"),
                                         ("%%jaxstages -n f --name \uff46 -o rep\nran = f(x)\ng(x)", None),
                                         ("%%jaxstages -n 'f' --name=f -o rep\nran = f(x)\ng(x)", None)])
def test_the_same_value_spelled_two_ways_counts_once(ip, cell, saved, tmp_path, monkeypatch):
    """``--save runs --save ./runs/`` (one directory) and ``-n f -n ｆ`` (one name, as Python reads it) read "given twice,
    'runs' and './runs/'; give it once" and the cell did not run: the two values were compared as typed, not as meant."""
    monkeypatch.setenv("HOME", str(tmp_path))
    ip.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda v: v + 1)\ng = jax.jit(lambda v: v * 2)\nx = jnp.ones(3)")
    result, _ = run_captured(ip, cell.replace("{d}", str(tmp_path)))
    assert result.success and "ran" in ip.user_ns
    [report] = ip.user_ns["rep"].reports
    assert "add" in report.traced.jaxpr_text and "mul" not in report.traced.jaxpr_text  # f's, not g's
    assert sorted(p.name for p in tmp_path.iterdir()) == ([saved] if saved else [])


def test_dump_counters_spelled_two_ways_count_once(ip):
    """``%jaxdump --diff 1 2 --diff 01 2`` names one pair of dump files (counter 01 is 1), and read "given twice"."""
    result, _ = run_captured(ip, "%jaxdump --diff 1 2 --diff 01 2")
    assert str(result.error_in_exec).splitlines()[0] == ("dumping is off (jax_dump_ir_to is empty); give --dir DIR to diff "
                                                         "the files of another")
