"""Diffs across stages: ``%%jaxstages --diff`` and the jaxpr diff of each ``%jaxcache`` miss, in a real shell."""

from __future__ import annotations

import IPython
import jax
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from jaxshow import irdiff, render
from jaxshow.report import ArgChange, QuantityChange
from jaxshow.stagesdiff import SAME_KEY_PARTS
from shellrun import DEFINES_NO_OPTION, DEFINES_OPTION, run_captured
from test_browser import ARTIFACTS, EFFECTIVE_COLOURS, VSCODE_DARK, _lab_theme, _lowest_contrast, browser  # noqa: F401 (Chromium fixture)

SETUP = """
import jax, jax.numpy as jnp
from functools import partial

@partial(jax.jit, static_argnums=1)
def f(x, n):
    return jnp.sin(x) * n

@jax.jit
def mm(x):
    return x @ x
"""


@pytest.fixture
def shell(ip):
    ip.run_cell(SETUP, store_history=True)  # In[1]
    return ip


def _diff(shell, cell):
    result, cap = run_captured(shell, cell)
    assert result.success, result.error_in_exec
    report = shell.user_ns["rep"]
    assert len(report.diffs) == 1
    return report.diffs[0], cap.outputs[-1].data


def test_a_figure_that_shrank_says_its_change_with_one_minus_sign(shell):
    """'−4 B (-25%)': the change in a minus sign, its percentage in a hyphen, in one cell of the table."""
    run_captured(shell, "%%jaxstages\ny = f(jnp.ones(4), 2)")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = f(jnp.ones(3), 2)")
    assert QuantityChange("memory: arguments", 16, 12, "B") in diff.quantities
    assert "memory: arguments  16 B    12 B    −4 B (−25%)" in data["text/plain"]
    assert "<td>−4 B (−25%)</td>" in data["text/html"]


SCOPED = """
@jax.jit
def net(x, w):
    with jax.named_scope("encoder"):
        x = x @ w
    with jax.named_scope("head"):
        return x @ w
"""


def test_the_named_scopes_whose_flops_changed_are_figures_of_the_diff(shell):
    """A wider encoder input: the FLOPs of each scope, before and now, beside XLA's one figure for the module."""
    shell.run_cell(SCOPED, store_history=True)
    run_captured(shell, "%%jaxstages\ny = net(jnp.ones((4, 8)), jnp.ones((8, 8)))")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = net(jnp.ones((6, 8)), jnp.ones((8, 8)))")
    assert [q for q in diff.quantities if q.name.startswith("FLOPs in")] == [
        QuantityChange("FLOPs in encoder (estimate)", 512, 768, "FLOP"), QuantityChange("FLOPs in head (estimate)", 512, 768, "FLOP")]
    assert "FLOPs in encoder (estimate)  512 FLOP    768 FLOP    +256 FLOP (+50%)" in data["text/plain"]
    assert "<td>FLOPs in head (estimate)</td>" in data["text/html"]


def _changed(diff):
    return [piece for piece in diff.lines if piece[:1] in "+-"]


def test_shape_change(shell):
    run_captured(shell, "%%jaxstages\ny = f(jnp.ones(3), 2)")  # In[2]
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = f(jnp.ones(4), 2)")  # In[3]
    assert (diff.function, diff.before, diff.now) == ("f", "In[2]:2", "In[3]:2")
    assert diff.key_changes == (ArgChange("x", "f32[4]", "f32[3]"),)
    jaxpr, stablehlo, hlo = diff.texts
    assert _changed(jaxpr) == ["-{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }",
                               "+{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 2.0:f32[] in (c,) }"]
    assert "-    %0 = stablehlo.sine %arg0 : tensor<3xf32>" in _changed(stablehlo)
    assert "+    %0 = stablehlo.sine %arg0 : tensor<4xf32>" in _changed(stablehlo)
    assert (stablehlo.added_lines, stablehlo.removed_lines) == (5, 5)
    assert "-%fused_computation (param_0.0: f32[3]) -> f32[3] {" in _changed(hlo)
    assert "+%fused_computation (param_0.0: f32[4]) -> f32[4] {" in _changed(hlo)
    assert (hlo.added_lines, hlo.removed_lines) == (9, 9)
    assert QuantityChange("memory: arguments", 12, 16, "B") in diff.quantities
    assert "x      f32[4]  f32[3]" in data["text/plain"]
    assert "memory: arguments  12 B    16 B    +4 B (+33%)" in data["text/plain"]
    assert "<summary><b>StableHLO</b> <span" in data["text/html"]


def test_static_argument_change(shell):
    run_captured(shell, "%%jaxstages\ny = f(jnp.ones(4), 2)")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = f(jnp.ones(4), 3)")
    assert diff.key_changes == (ArgChange("static n", "3", "2"),)
    jaxpr, stablehlo, hlo = diff.texts
    assert _changed(jaxpr) == ["-{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 2.0:f32[] in (c,) }",
                               "+{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 3.0:f32[] in (c,) }"]
    assert _changed(stablehlo) == ["-    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
                                   "+    %cst_0 = stablehlo.constant dense<3.000000e+00> : tensor<f32>"]
    assert _changed(hlo) == ["-  %constant.0 = f32[] constant(2)", "+  %constant.0 = f32[] constant(3)"]
    assert diff.quantities == ()
    assert "    -  %constant.0 = f32[] constant(2)\n    +  %constant.0 = f32[] constant(3)" in data["text/plain"]
    assert "  ⋯ 6 unchanged lines" in data["text/plain"]


def test_a_change_in_an_arguments_pytree_metadata_is_the_change_the_diff_names(shell):
    # A dataclass's meta field (flax NNX's static attributes in the GraphDef nnx.jit passes, a TrainState's tx) is pytree
    # metadata: model.scale = 2.0 re-traced h, and --diff listed no key change and blamed only static values' == and
    # re-defined functions. The argument's structure, which JAX's key holds, now shows it.
    shell.run_cell("import dataclasses\n@partial(jax.tree_util.register_dataclass, data_fields=['w'], meta_fields=['scale'])\n"
                   "@dataclasses.dataclass\nclass Model:\n    w: jax.Array\n    scale: float\n"
                   "@jax.jit\ndef h(m, x):\n    return m.w * x * m.scale\n")
    run_captured(shell, "%%jaxstages\ny = h(Model(jnp.ones(2), 1.0), jnp.ones(2))")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = h(Model(jnp.ones(2), 2.0), jnp.ones(2))")
    assert diff.key_changes == (ArgChange("pytree m", "CustomNode(Model[(2.0,)], [*]), by position",
                                          "CustomNode(Model[(1.0,)], [*]), by position"),)
    assert diff.notes == ()


def test_how_the_arguments_were_passed_is_the_change_the_diff_names(shell):
    """JAX keys a call on the pytree of its (args, kwargs): f(x) then f(x=x), f(x, None) or f(x, ()) each trace again.
    --diff read 'no change: same arguments, static values and config' for each, and guessed at pytree metadata."""
    shell.run_cell("@jax.jit\ndef k(x, y=None):\n    return x * 2\nz = jnp.ones(3)", store_history=True)
    run_captured(shell, "%%jaxstages\ny = k(z)")
    cells = {"k(x=z)": [("pytree x", "by keyword", "by position")],
             "k(z, None)": [("pytree x", "by position", "by keyword"), ("pytree y", "None, by position", "(not passed)")],
             "k(z, y=None)": [("pytree y", "None, by keyword", "None, by position")],
             "k(z, ())": [("pytree y", "(), by position", "None, by keyword")]}
    for call, changes in cells.items():
        diff, data = _diff(shell, f"%%jaxstages --diff -o rep\ny = {call}")
        assert diff.key_changes == tuple(ArgChange(*c) for c in changes), call
        assert diff.notes == (), call
    assert "    pytree y  (), by position  None, by keyword\n" in data["text/plain"]
    result, cap = run_captured(shell, "%%jaxstages\ny = k(z, None)\ny = k(z, [])")  # in one cell: the note on the other call
    assert result.success, result.error_in_exec
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert ("note: also called: k with another input pytree (y: None, by position) (use --all or --name to show them) k: "
            "trace") in text, text


def test_a_long_pytree_change_is_shown_around_where_the_two_first_differ():
    """A flax NNX module's GraphDef is thousands of characters: the row showed the first 300 of each, alike, and the
    difference past them was out of sight."""
    from jaxshow.stagesdiff import PYTREE_EXCERPT, _around_first_difference

    head = "CustomNode(GraphDef[" + "NodeDef(type='Linear'), " * 40
    now, before = head + "num_attributes=14, " + "x" * 500, head + "num_attributes=13, " + "x" * 500
    change = _around_first_difference(ArgChange("pytree m", now, before))
    start = len(head) + len("num_attributes=1") - PYTREE_EXCERPT // 3
    assert (change.now, change.before) == ("…" + now[start:start + PYTREE_EXCERPT] + "…", "…" + before[start:start + PYTREE_EXCERPT] + "…")
    assert "num_attributes=14" in change.now and "num_attributes=13" in change.before
    short = ArgChange("pytree y", "(), by position", "None, by keyword")
    assert _around_first_difference(short) is short


def test_a_static_value_whose_repr_hides_the_change_is_not_called_the_same(shell):
    shell.run_cell("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass Cfg:\n    scale: int = dataclasses.field(repr=False)\n"
                   "@partial(jax.jit, static_argnums=1)\ndef g(x, cfg):\n    return x * cfg.scale\n")
    run_captured(shell, "%%jaxstages\ny = g(jnp.ones(2), Cfg(2))")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = g(jnp.ones(2), Cfg(3))")
    assert diff.key_changes == ()
    assert diff.notes == (SAME_KEY_PARTS,)
    assert "  note: JAX traced again, though the arguments, how they were passed, the static values as printed\n" in data["text/plain"]
    _, cap = run_captured(shell, "%%jaxstages --diff -o rep\ny = g(jnp.ones(2), Cfg(3))")
    assert shell.user_ns["rep"].diffs[0].notes[0].startswith("this call was a cache hit"), "a hit says so instead"
    assert len(shell.user_ns["rep"].diffs[0].notes) == 1


def test_config_change(shell):
    run_captured(shell, "%%jaxstages\ny = mm(jnp.ones((2, 2)))")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\nwith jax.default_matmul_precision('highest'):\n    y = mm(jnp.ones((2, 2)))")
    assert diff.key_changes == (ArgChange("config jax_default_matmul_precision", "'highest'", "None"),)
    jaxpr, stablehlo, _ = diff.texts
    assert _changed(jaxpr) == ["+      precision=(Precision.HIGHEST, Precision.HIGHEST)"]
    dot = ("    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0], precision = [{0}, {0}] : "
           "(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>")
    assert _changed(stablehlo) == ["-" + dot.format("DEFAULT"), "+" + dot.format("HIGHEST")]
    assert "config jax_default_matmul_precision  'highest'  None" in data["text/plain"]



def test_a_context_no_config_option_names_is_the_change_the_diff_and_the_note_name(shell):
    """``jax.experimental.xla_metadata.set_xla_metadata`` sets a value of JAX's trace context that no option of
    jax.config names (so do ``compute_on``, a ``with mesh:`` and Pallas's states): JAX traces again. jaxshow read only
    the options: --diff read 'same arguments, static values and config' and guessed at pytree metadata, and a second
    call in the cell read 'traced again with the same signature and jaxpr (its clear_cache() emptied its cache, ...)'."""
    shell.run_cell("from jax.experimental.xla_metadata import set_xla_metadata", store_history=True)
    run_captured(shell, "%%jaxstages\ny = mm(jnp.ones((2, 2)))")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\nwith set_xla_metadata(foo='bar'):\n    y = mm(jnp.ones((2, 2)))")
    assert diff.key_changes == (ArgChange("config xla_metadata_context_manager", "{'foo': 'bar'}", "None"),)
    assert diff.notes == ()
    assert "    config xla_metadata_context_manager  {'foo': 'bar'}  None\n" in data["text/plain"]
    result, cap = run_captured(shell, "%%jaxstages\nz = jnp.ones(3)\ny = mm(z)\nwith set_xla_metadata(foo='bar'):\n    y = mm(z)")
    assert result.success, result.error_in_exec
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert ("note: also called: mm in another config context (xla_metadata_context_manager=None) (use --all or --name to "
            "show them) mm: trace") in text, text


@pytest.mark.skipif(not hasattr(jax, "make_user_context"), reason="jax.make_user_context is new in jax 0.8")
def test_each_user_context_is_its_own_change_in_the_diff_and_in_jaxcache():
    """Each ``jax.make_user_context`` adds a value to JAX's trace context, every one named ``user_context`` (JAX makes
    one of its own on jax >= 0.10). --diff of a call under another value of one read 'same arguments, static values and
    config'; %jaxcache read 'user_context: now None, before 1; user_context: now 5, before 0'. The second and later
    of a name are numbered; jax 0.8 and 0.9 cannot name a user's context, whose position is shown. In a kernel of its
    own: the contexts stay in JAX's trace context."""
    from shellrun import in_a_real_kernel

    _, nb = in_a_real_kernel(
        "%load_ext jaxshow\nimport jax, jax.numpy as jnp\nfrom jax._src import config as C\nf = jax.jit(lambda v: v * 2)\n"
        "g = jax.jit(lambda v: v + 1)\nx = jnp.ones(3)\nn = len(C.trace_context())\n"
        "mine = jax.make_user_context(default_value=None)\nyours = jax.make_user_context(default_value=0)\n"
        "y = g(x)\nprint(n, hasattr(C, 'trace_context_names'))",
        "%%jaxstages\nwith mine(1):\n    y = f(x)", "%%jaxstages --diff\nwith mine(2), yours(5):\n    y = f(x)",
        "%%jaxcache\nwith mine(1), yours(5):\n    y = g(x)")
    n, listed = nb.cells[0].outputs[0]["text"].split()
    names = ("user_context 2", "user_context 3") if listed == "True" else (f"trace context [{n}]", f"trace context [{int(n) + 1}]")
    lines = nb.cells[2].outputs[-1]["data"]["text/plain"].splitlines()
    start = lines.index("--diff <lambda>: In[2]:3 → In[3]:3")
    assert lines[start + 1:start + 5] == [
        "  what JAX keys its caches on:",
        f"    where{' ' * (len(names[0]) + 4)}now  before",
        f"    config {names[0]}  2    1",
        f"    config {names[1]}  5    0"], lines[start:]
    text = " ".join(nb.cells[3].outputs[-1]["data"]["text/plain"].split())
    assert (f"1. different tracing context (a config option or context manager): {names[0]}: now 1, before None; "
            f"{names[1]}: now 5, before 0 called at In[4]:3") in text, text


@DEFINES_NO_OPTION
def test_options_a_module_defined_between_two_calls_are_the_change_the_note_and_the_diff_name():
    """A module imported between two calls that defines trace-context options (Pallas on jax 0.12) makes JAX trace
    again. jaxshow read the list of options once: the second call's note read 'traced again with the same signature and
    jaxpr (its clear_cache() emptied its cache, ...)' and --diff had no change. A value that no option of jax.config
    names (jaxshow_three, a bare State as Pallas's fuser defines while a call lowers) was never read: --diff left it out.
    In a kernel of its own: the options stay."""
    from shellrun import in_a_real_kernel

    _, nb = in_a_real_kernel(
        "%load_ext jaxshow\nimport jax, jax.numpy as jnp\nf = jax.jit(lambda v: v * 2)\nx = jnp.ones(3)", DEFINES_OPTION,
        "%%jaxstages\ny = f(x)\ndefine('jaxshow_one')\ny = f(x)", "define('jaxshow_two')\ndefine_state('jaxshow_three')",
        "%%jaxstages --diff\ny = f(x)")
    text = " ".join(nb.cells[2].outputs[-1]["data"]["text/plain"].split())
    assert ("note: also called: <lambda> in another config context (without jaxshow_one, which a module imported "
            "between the calls defined) (use --all or --name to show them) <lambda>: trace") in text, text
    lines = nb.cells[4].outputs[-1]["data"]["text/plain"].splitlines()
    start = lines.index("--diff <lambda>: In[3]:4 → In[5]:2")
    assert lines[start + 1:start + 6] == [
        "  what JAX keys its caches on:",
        "    where                 now    before",
        "    config jaxshow_three  False  (not defined)",
        "    config jaxshow_two    False  (not defined)",
        "  jaxpr: no change (after renumbering names)"], lines[start:]


def test_a_trace_under_a_transformation_is_compared_by_argument_position_and_not_on_config(shell):
    """``jax.grad(total)`` traces total again under the transformation, with its arguments unnamed (``args[0]``) and its
    config context unread. --diff read 'args[0]  f32[3]  (absent)', 'v  (absent)  f32[3]' and a row per config option,
    'config jax_enable_x64  (not defined)  False', …: changes that did not happen."""
    shell.run_cell("@jax.jit\ndef total(v):\n    return jnp.sum(v * 2)\nv = jnp.ones(3)", store_history=True)
    run_captured(shell, "%%jaxstages\ny = total(v)")
    result, cap = run_captured(shell, "%%jaxstages --all --diff -o rep\ng = jax.grad(total)(v)")
    assert result.success, result.error_in_exec
    called, traced = shell.user_ns["rep"].diffs[:2]  # total called by jax.grad; its trace under the transformation
    assert (called.key_changes, called.config_compared) == ((), True)
    assert (traced.key_changes, traced.config_compared, traced.notes) == ((), False, ())
    lines = cap.outputs[-1].data["text/plain"].splitlines()
    start = lines.index("--diff total: In[4]:2 → In[4]:2: no change")
    assert lines[start + 1] == ("  same arguments and static values (the config context of a trace under a transformation "
                                "is not read)")


def test_no_previous_compile_says_so(shell):
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = f(jnp.ones(3), 2)")
    assert diff.previous_missing.startswith("no earlier compile of f in this session")
    assert diff.texts == () and "--diff f: nothing to compare" in data["text/plain"]


@pytest.mark.parametrize(("call", "outcome"), [("f(jnp.ones(3), [2])", "failed while dispatching, before any trace"),
                                             ("f(object(), 2)", "failed while tracing")])
def test_a_call_that_made_no_trace_has_nothing_to_compare(shell, call, outcome):
    # A call JAX refused or failed to trace read as a change of everything: 'x (absent) f32[3]', and for a refused
    # one every config option JAX keys on, '(absent)' beside its value, 35 rows.
    run_captured(shell, "%%jaxstages\ny = f(jnp.ones(3), 2)")  # In[2]
    result, cap = run_captured(shell, f"%%jaxstages --diff -o rep\ny = {call}")
    assert not result.success
    (diff,) = shell.user_ns["rep"].diffs
    assert (diff.key_changes, diff.texts) == ((), ())
    assert diff.previous_missing == (f"this call has no trace of its own ({outcome}): nothing of it to set beside the "
                                     "previous compile of f at In[2]:2")
    assert "(absent)" not in cap.outputs[-1].data["text/plain"]


def test_a_lambda_is_compared_with_an_earlier_compile_of_the_same_lambda_only(shell):
    # Every lambda is named '<lambda>': a jitted lambda of another cell, another function altogether, was taken for
    # the previous compile ('--diff <lambda>: In[2]:1 → In[3]:2' with its argument 'v (absent) f32[3]').
    run_captured(shell, "%%jaxstages\ny = jax.jit(lambda v: v * 2)(jnp.ones(3))")  # In[2]
    run_captured(shell, "g = jax.jit(lambda u, w: u + w)")  # In[3]
    run_captured(shell, "%%jaxstages --diff -o rep\ny = g(jnp.ones(3), 1.0)")  # In[4]
    (diff,) = shell.user_ns["rep"].diffs
    assert diff.previous_missing.startswith("no earlier compile of <lambda> in this session")
    diff, _ = _diff(shell, "%%jaxstages --diff -o rep\ny = g(jnp.ones(4), 1.0)")  # In[5]
    assert (diff.before, diff.now) == ("In[4]:2", "In[5]:2")
    assert diff.key_changes == (ArgChange("u", "f32[4]", "f32[3]"),)


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_a_lambda_in_a_cell_edited_and_run_again_is_compared_with_its_earlier_version(shell):
    """A lambda was keyed by its cell's label and line, and an edited cell run again is a new cell (In[3], not In[2]):
    'nothing to compare'. JupyterLab and VS Code name each cell by an id that an edit keeps; another cell's lambda on
    the same line is still no earlier version of it."""
    def run(text, cell_id):
        with capture_output() as cap:
            assert shell.run_cell("%%jaxstages --diff -o rep\n" + text, store_history=True, cell_id=cell_id).success
        (diff,) = shell.user_ns["rep"].diffs
        return diff, cap.outputs[-1].data["text/plain"]

    first = shell.execution_count
    run("y = jax.jit(lambda v: jnp.sin(v))(jnp.ones(3))", "cell-a")
    diff, _ = run("y = jax.jit(lambda v: v * 2)(jnp.ones(3))", "cell-b")
    assert diff.previous_missing.startswith("no earlier compile of <lambda> in this session")
    diff, text = run("y = jax.jit(lambda v: jnp.cos(v))(jnp.ones(3))", "cell-a")
    assert (diff.before, diff.now) == (f"In[{first}]:2", f"In[{first + 2}]:2")
    assert _changed(diff.texts[0]) == ["-{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }",
                                      "+{ lambda ; a:f32[3]. let b:f32[3] = cos a in (b,) }"]
    assert f"--diff <lambda>: In[{first}]:2 → In[{first + 2}]:2" in text


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_lambdas_moved_down_by_an_edit_of_their_cell_are_each_compared_with_their_own_earlier_compile(shell):
    """A line added at the top of a cell with two lambdas: the first lambda, now on the second's line, was compared with
    the second ('--diff <lambda>: In[2]:3 → In[3]:3', v * 2 against sin) and the second with nothing. As the front end
    names cells, a line keeps its place across edits of its cell."""
    lines = ["fa = jax.jit(lambda v: jnp.sin(v)); a = fa(jnp.ones(3))", "fb = jax.jit(lambda v: v * 2); b = fb(jnp.ones(3))"]

    def run(*body):
        with capture_output():
            assert shell.run_cell("\n".join(["%%jaxstages --diff --all -o rep", *body]), store_history=True,
                                  cell_id="cell-a").success
        return shell.user_ns["rep"].diffs

    first = shell.execution_count
    run(*lines)
    assert [(d.before, d.now, [_changed(t) for t in d.texts]) for d in run("c = 1", *lines)] == [
        (f"In[{first}]:2", f"In[{first + 1}]:3", [[]] * 3), (f"In[{first}]:3", f"In[{first + 1}]:4", [[]] * 3)]


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_run_all_again_compares_each_cells_function_with_that_cells_own_earlier_compile(shell):
    """Two cells each define and call a jitted f, and the notebook runs twice ("Run All"): the first cell's f was
    compared with the second cell's ('--diff f: In[3]:5 → In[4]:5' with '-mul a 2.0' '+sin a'), another function.
    Each is compared with its own cell's earlier compile; a cell that defines f anew still replaces the last one."""
    cells = [("cell-a", "@jax.jit\ndef f(x):\n    return jnp.sin(x)\ny = f(jnp.ones(3))"),
             ("cell-b", "@jax.jit\ndef f(x):\n    return x * 2\ny = f(jnp.ones(3))")]
    first, seen = shell.execution_count, []
    for _ in range(2):
        for cell_id, body in cells:
            with capture_output() as cap:
                assert shell.run_cell("%%jaxstages --diff -o rep\n" + body, store_history=True, cell_id=cell_id).success
            seen.append([line for line in cap.outputs[-1].data["text/plain"].splitlines() if line.startswith("--diff")
                         or line.lstrip().startswith(("-{", "+{"))])
    assert seen == [["--diff f: nothing to compare"],
                    [f"--diff f: In[{first}]:5 → In[{first + 1}]:5",
                     "    -{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }",
                     "    +{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"],
                    [f"--diff f: In[{first}]:5 → In[{first + 2}]:5: no change"],
                    [f"--diff f: In[{first + 1}]:5 → In[{first + 3}]:5: no change"]]


def test_a_function_of_another_module_with_the_same_name_is_no_earlier_version_of_it(shell, tmp_path, monkeypatch):
    """Two modules' jitted step: the second was compared with the first ('--diff step: In[2]:2 → In[3]:2', sin against
    mul), as if one were an earlier compile of the other. A function is compared with the last compile of its name in
    its own file (in any cell, for a cell's: a cell that defines the name anew replaces it)."""
    for name, body in (("stepa", "jnp.sin(v)"), ("stepb", "v * 7")):
        (tmp_path / f"{name}.py").write_text(f"import jax, jax.numpy as jnp\n@jax.jit\ndef step(v):\n    return {body}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    run_captured(shell, "import stepa, stepb")
    _diff(shell, "%%jaxstages --diff -o rep\ny = stepa.step(jnp.ones(3))")
    diff, _ = _diff(shell, "%%jaxstages --diff -o rep\ny = stepb.step(jnp.ones(3))")
    assert diff.previous_missing.startswith("no earlier compile of step in this session"), diff
    diff, _ = _diff(shell, "%%jaxstages --diff -o rep\ny = stepa.step(jnp.ones(4))")
    assert _changed(diff.texts[0]) == ["-{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }",
                                      "+{ lambda ; a:f32[4]. let b:f32[4] = sin a in (b,) }"]


def test_without_diff_nothing_is_compared(shell):
    run_captured(shell, "%%jaxstages -o rep\ny = f(jnp.ones(3), 2)")
    run_captured(shell, "%%jaxstages -o rep\ny = f(jnp.ones(4), 2)")
    assert shell.user_ns["rep"].diffs == ()
    with pytest.raises(UsageError, match=r"(?s)argument --diff: ignored explicit argument .1.\n%%jaxstages .* \[--diff\] \[-o NAME\]"):
        shell.run_cell_magic("jaxstages", "--dif=1", "y = 1")


def test_jaxcache_miss_carries_jaxpr_diff(shell):
    result, cap = run_captured(shell, "%%jaxcache -o rep\nf(jnp.ones(3), 2)\nf(jnp.ones(4), 2)\nf(jnp.ones(4), 3)")
    assert result.success
    first, shape, static = shell.user_ns["rep"].functions[0].misses
    assert first.jaxpr_diff is None
    assert _changed(shape.jaxpr_diff) == ["-{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }",
                                          "+{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 2.0:f32[] in (c,) }"]
    assert _changed(static.jaxpr_diff) == ["-{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 2.0:f32[] in (c,) }",
                                           "+{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 3.0:f32[] in (c,) }"]
    text = cap.outputs[-1].data["text/plain"]
    assert "       jaxpr against the previous trace: +1 −1 lines" in text


def test_rerun_defining_cell_is_diffed_against_the_previous_definition(shell):
    run_captured(shell, "%jaxcache on")  # In[2]
    run_captured(shell, "@jax.jit\ndef g(x):\n    return jnp.sin(x)")  # In[3]
    _, cap = run_captured(shell, "y = g(jnp.ones(3))")  # In[4]: g's first trace, nothing to compare
    assert "against the previous" not in cap.outputs[-1].data["text/plain"]
    run_captured(shell, "@jax.jit\ndef g(x):\n    return jnp.sin(x) * 2")  # In[5]: the cell re-run with a changed body
    on = shell.magics_manager.registry["CacheMagics"]._on_session
    _, cap = run_captured(shell, "y = g(jnp.ones(3))")  # In[6]: a new function object
    (miss,) = on.report().functions[0].misses
    assert miss.category == "never_seen"
    assert _changed(miss.jaxpr_diff) == ["-{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }",
                                         "+{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }"]
    text = cap.outputs[-1].data["text/plain"]
    assert ("       jaxpr against the previous definition of g (defined at In[3]:1, traced at In[4]:1):\n"
            "           +1 −1 lines\n"  # wrapped at the width (100 columns), the counts whole
            "         -{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }\n"
            "         +{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }") in text
    assert "<b>jaxpr against the previous definition of g (defined at In[3]:1, traced at In[4]:1)</b>" in cap.outputs[-1].data["text/html"]
    run_captured(shell, "%jaxcache off")


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_run_all_again_and_an_edit_compare_each_cells_function_with_that_cells_earlier_definition(shell):
    """Two cells define f, the notebook runs twice, then the first cell is edited: under %jaxcache on, the first cell's f
    ('re-defined ... same name and source') was diffed against the second cell's ('against the previous definition of
    f (defined at In[4]:1 ...): +1 −1 lines'), and the edited one 'replaces the f defined at In[6]:1', the other cell's."""
    run_captured(shell, "%jaxcache on")

    def run(cell_id, body):
        with capture_output() as cap:
            assert shell.run_cell(f"@jax.jit\ndef f(x):\n    return {body}\ny = f(jnp.ones(3))", store_history=True,
                                  cell_id=cell_id).success
        return " ".join(cap.outputs[-1].data["text/plain"].split())  # unwrapped

    a = shell.execution_count
    run("cell-a", "jnp.sin(x)")
    assert f"first trace of a new f: it replaces the f defined at In[{a}]:1 that traced before" in run("cell-b", "x * 2")
    text = run("cell-a", "jnp.sin(x)")
    assert f"f is a new function object with the same name and source as one traced before called at In[{a + 2}]:4 " in text
    assert f"jaxpr against the previous definition of f (defined at In[{a}]:1, traced at In[{a}]:4): no change" in text
    text = run("cell-b", "x * 2")
    assert f"jaxpr against the previous definition of f (defined at In[{a + 1}]:1, traced at In[{a + 1}]:4): no change" in text
    text = run("cell-a", "jnp.cos(x)")
    assert (f"first trace of a new f: it replaces the f defined at In[{a + 2}]:1 that traced before, with other code (a "
            "cell that defines f anew, or an edited cell run again)") in text
    assert (f"jaxpr against the previous definition of f (defined at In[{a + 2}]:1, traced at In[{a + 2}]:4): +1 −1 lines "
            "-{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) } +{ lambda ; a:f32[3]. let b:f32[3] = cos a in (b,) }") in text
    run_captured(shell, "%jaxcache off")


def test_another_lambda_is_not_taken_for_a_lambdas_previous_definition(shell):
    # Found running JAX's array_refs.md under %jaxcache on: two jax.make_jaxpr(lambda: ...) calls of
    # one cell were diffed as "the previous definition of <lambda>", and a re-run cell's lambda, said
    # to have "the same name and source as one traced before", was diffed against the other lambda.
    run_captured(shell, "%jaxcache on")
    on = shell.magics_manager.registry["CacheMagics"]._on_session
    run_captured(shell, "a = jax.jit(lambda v: jnp.sin(v))(jnp.ones(3))\nb = jax.jit(lambda v: v * 2 + 1)(jnp.ones(3))")
    _, cap = run_captured(shell, "a = jax.jit(lambda v: jnp.sin(v))(jnp.ones(3))")  # the first line run again
    (function,) = on.report().functions
    (miss,) = function.misses
    assert _changed(miss.jaxpr_diff) == [], miss.jaxpr_diff
    text = cap.outputs[-1].data["text/plain"]
    assert "jaxpr against the previous definition of <lambda>" in text and "mul" not in text
    run_captured(shell, "%jaxcache off")


# --- pure: renumbering makes a renaming no change --------------------------------------------

HLO_A = """HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

FileNames
1 "/tmp/a.py"

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%fused_computation.3 (param_0.7: f32[3]) -> f32[3] {
  %param_0.7 = f32[3]{0} parameter(0)
  %sin.4 = f32[3]{0} sine(%param_0.7), metadata={op_name="jit(f)/sin" stack_frame_id=1}
  ROOT %mul.9 = f32[3]{0} multiply(%sin.4, %sin.4), metadata={op_name="jit(f)/mul" source_file="a.py"}
}

ENTRY %main.12 (x.1: f32[3]) -> f32[3] {
  %x.1 = f32[3]{0} parameter(0)
  ROOT %fusion.2 = f32[3]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation.3
}
"""
HLO_B = (HLO_A.replace("fused_computation.3", "fused_computation.8").replace("param_0.7", "param_0.1")
         .replace("sin.4", "sin.0").replace("mul.9", "mul.2").replace("main.12", "main.5").replace("x.1", "x.3")
         .replace("fusion.2", "fusion.11").replace('"/tmp/a.py"', '"/tmp/b.py"').replace("stack_frame_id=1", "stack_frame_id=4"))
MLIR_A = """module @jit_f {
  func.func public @main(%arg0: tensor<3xf32> loc("x")) -> tensor<3xf32> {
    %cst = stablehlo.constant dense<2.0> : tensor<f32> loc(#loc3)
    %0 = stablehlo.sine %arg0 : tensor<3xf32> loc(#loc4)
    return %0 : tensor<3xf32>
  }
}
#loc3 = loc("a.py":3:4)
#loc4 = loc("a.py":4:4)
"""
MLIR_B = MLIR_A.replace("#loc3", "#loc9").replace("#loc4", "#loc2").replace("%cst", "%cst_5").replace("%0", "%7")
JAXPR_A = "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b; d:f32[3] = mul c a in (d,) }"
JAXPR_B = "{ lambda ; x:f32[3] y:f32[3]. let z:f32[3] = add x y; ba:f32[3] = mul z x in (ba,) }"


@pytest.mark.parametrize(("language", "before", "after"), [("hlo", HLO_A, HLO_B), ("mlir", MLIR_A, MLIR_B), ("jaxpr", JAXPR_A, JAXPR_B)])
def test_renamed_only_module_is_no_change(language, before, after):
    assert before != after
    diff = irdiff.text_diff(language, language, before, after)
    assert (diff.changed, diff.added_lines, diff.removed_lines) == (False, 0, 0)
    assert render.to_text(diff_record(diff)).endswith(f"{language}: no change (after renumbering names)")


def test_a_real_change_survives_renumbering():
    diff = irdiff.text_diff("hlo", "hlo", HLO_A, HLO_B.replace("multiply(", "add("))
    assert _changed(diff) == ['-  ROOT %mul.0 = f32[3]{0} multiply(%sin.0, %sin.0)', '+  ROOT %mul.0 = f32[3]{0} add(%sin.0, %sin.0)']
    assert irdiff.canonical_lines(HLO_A, "hlo")[:3] == ["HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[3]{0}}", "",
                                                          "%fused_computation.0 (param_0.0: f32[3]) -> f32[3] {"]


# --- structural matching: one inserted op changes its line and its user's, not every later name -------


def _chain(inserted: bool) -> dict[str, str]:
    """A 20-op chain (sine, multiply by x, ...) named as JAX and XLA name it, with ``negate`` after op 10 when ``inserted``."""
    ops = [("sin", "sine", "sine") if i % 2 == 0 else ("mul", "multiply", "multiply") for i in range(20)]
    if inserted:
        ops.insert(10, ("neg", "negate", "negate"))
    jaxpr, mlir, hlo = ["{ lambda ; a:f32[8]. let"], [], []
    for k, (prim, op, instr) in enumerate(ops):
        var, prev = irdiff._letters(k + 1), irdiff._letters(k)
        jaxpr.append(f"    {var}:f32[8] = {prim} {prev}" + (" a" if prim == "mul" else ""))
        src = f"%{k - 1}" if k else "%arg0"
        mlir.append(f"    %{k} = stablehlo.{op} {src}" + (", %arg0" if op == "multiply" else "") + " : tensor<8xf32>")
        hsrc = f"%{ops[k - 1][2]}.{k + 1}" if k else "%Arg_0.1"
        root = "ROOT " if k == len(ops) - 1 else ""
        hlo.append(f"  {root}%{instr}.{k + 2} = f32[8]{{0}} {instr}({hsrc}" + (", %Arg_0.1" if instr == "multiply" else "") + ")")
    n = len(ops)
    return {
        "jaxpr": "\n".join(jaxpr + [f"  in ({irdiff._letters(n)},) }}"]),
        "mlir": "\n".join(["module @jit_chain {", "  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>) {", *mlir,
                           f"    return %{n - 1} : tensor<8xf32>", "  }", "}"]),
        "hlo": "\n".join(["HloModule jit_chain, entry_computation_layout={(f32[8]{0})->f32[8]{0}}", "",
                          f"ENTRY %main.{n + 2} (Arg_0.1: f32[8]) -> f32[8] {{", "  %Arg_0.1 = f32[8]{0} parameter(0)", *hlo, "}"]),
    }


@pytest.mark.parametrize(("language", "changed"), [
    ("jaxpr", ["-    l:f32[8] = sin k", "+    v:f32[8] = neg k", "+    l:f32[8] = sin v"]),
    ("mlir", ["-    %10 = stablehlo.sine %9 : tensor<8xf32>", "+    %20 = stablehlo.negate %9 : tensor<8xf32>",
              "+    %10 = stablehlo.sine %20 : tensor<8xf32>"]),
    ("hlo", ["-  %sine.5 = f32[8]{0} sine(%multiply.4)", "+  %negate.0 = f32[8]{0} negate(%multiply.4)",
             "+  %sine.5 = f32[8]{0} sine(%negate.0)"]),
])
def test_one_inserted_op_in_a_chain_changes_only_its_line_and_its_user(language, changed):
    before, now = _chain(False)[language], _chain(True)[language]
    diff = irdiff.text_diff(language, language, before, now)
    assert _changed(diff) == changed
    assert (diff.added_lines, diff.removed_lines) == (2, 1)
    assert len(diff.lines) == len(irdiff.canonical_lines(now, language)) + 1


def test_one_inserted_op_in_a_real_chain():
    import jax
    import jax.numpy as jnp

    def chain(inserted):
        def f(x):
            y = x
            for i in range(20):
                y = jnp.sin(y) if i % 2 == 0 else y * x
                if inserted and i == 9:
                    y = -y
            return y
        return f

    x = jnp.ones(8)
    texts = []
    for inserted in (False, True):
        lowered = jax.jit(chain(inserted)).lower(x)
        texts.append((str(jax.make_jaxpr(chain(inserted))(x)), lowered.as_text(), lowered.compile().as_text()))
    jaxpr, mlir, hlo = (irdiff.text_diff(lang, lang, a, b) for lang, a, b in zip(("jaxpr", "mlir", "hlo"), *texts))
    assert _changed(jaxpr) == ["-    l:f32[8] = sin k", "+    v:f32[8] = neg k", "+    l:f32[8] = sin v"]
    assert _changed(mlir) == ["-    %10 = stablehlo.sine %9 : tensor<8xf32>", "+    %20 = stablehlo.negate %9 : tensor<8xf32>",
                              "+    %10 = stablehlo.sine %20 : tensor<8xf32>"]
    assert (hlo.added_lines, hlo.removed_lines) == (2, 1)
    assert [piece.split(" = ")[1].split("(")[0] for piece in _changed(hlo)] == ["f32[8]{0} sine", "f32[8]{0} negate", "f32[8]{0} sine"]


def test_a_jaxpr_variable_named_in_leaves_the_keyword_alone():
    """JAX names its 222nd variable ``in``: renumbering it renamed the keyword too, ``-  d (c,) } d`` for ``in (c,) } in``."""
    import jax
    import jax.numpy as jnp

    helper = jax.jit(lambda x: jnp.cos(x) * 2)

    def chain(n):
        def f(x):
            x = helper(helper(x))  # printed first, as ``let <lambda> = { lambda ; a:f32[3]. let … in (c,) } in``
            for _ in range(n):
                x = jnp.sin(x)
            return x
        return f

    long, short = (str(jax.make_jaxpr(chain(n))(jnp.ones(3))) for n in (240, 3))
    assert "    in:f32[3] = sin im" in long.splitlines()
    diff = irdiff.text_diff("jaxpr", "jaxpr", long, short)
    assert [piece for piece in diff.lines if "}" in piece] == ["   in (c,) } in", "-  in (jl,) }", "+  in (i,) }"]
    assert irdiff.canonical_lines("{ lambda ; in:f32[]. let b:f32[] = neg in in (b,) }", "jaxpr") == [
        "{ lambda ; a:f32[]. let b:f32[] = neg a in (b,) }"]


def diff_record(diff):
    from jaxshow.report import StagesDiff

    return StagesDiff("f", "In[2]:1", "In[3]:1", texts=(diff,))


# --- the _jax_compat shims this feature reads ------------------------------------------------


def test_trace_context_snapshot_follows_the_calls_context_and_is_named_later():
    import jax

    from jaxshow import _jax_compat

    before = _jax_compat.trace_context_snapshot()
    with jax.default_matmul_precision("highest"):
        inside = _jax_compat.trace_context_snapshot()
    before, inside = (dict(_jax_compat.describe_trace_context(s)) for s in (before, inside))  # named outside the context
    assert (before["jax_default_matmul_precision"], inside["jax_default_matmul_precision"]) == ("None", "'highest'")
    assert {k: v for k, v in inside.items() if k != "jax_default_matmul_precision"} == {
        k: v for k, v in before.items() if k != "jax_default_matmul_precision"}


def test_trace_context_snapshot_is_jaxs_whole_trace_context_each_position_named():
    import jax
    from jax._src import config as jax_config
    from jax.experimental.xla_metadata import set_xla_metadata

    from jaxshow import _jax_compat

    before = _jax_compat.trace_context_snapshot()
    with set_xla_metadata(foo="bar"):
        inside = _jax_compat.trace_context_snapshot()
    assert before.values == tuple(jax_config.trace_context())
    assert before.names == _jax_compat.trace_context_positions()
    before, inside = (dict(_jax_compat.describe_trace_context(s)) for s in (before, inside))
    assert (before["xla_metadata_context_manager"], inside["xla_metadata_context_manager"]) == ("None", "{'foo': 'bar'}")
    assert (before["axis_env_state"], before["mesh_context_manager"], before["mesh context"]) == ("no axes bound", "no mesh", "no mesh")
    assert list(before)[-1] == "mesh context" and list(before)[:-1] == sorted(list(before)[:-1])


def test_trace_context_snapshot_has_the_mesh_set_around_the_call():
    import jax
    from jax.sharding import AxisType

    from jaxshow import _jax_compat

    mesh = jax.make_mesh((1,), ("i",), axis_types=(AxisType.Explicit,))
    set_mesh = getattr(jax, "set_mesh", None) or jax.sharding.use_mesh  # jax 0.7
    before = _jax_compat.trace_context_snapshot()
    with set_mesh(mesh):
        inside = _jax_compat.trace_context_snapshot()
    before, inside = (dict(_jax_compat.describe_trace_context(s)) for s in (before, inside))
    assert (before["mesh context"], inside["mesh context"]) == ("no mesh", "mesh ('i': 1, axis_types=(Explicit,))")


def test_trace_probe_hands_over_the_traced_jaxpr():
    import jax
    import jax.numpy as jnp

    from jaxshow import _jax_compat

    seen = []

    class Probe(_jax_compat.TraceProbe):
        def enter(self, fun, debug_info):
            return "token"

        def traced(self, token, jaxpr):
            seen.append((token, _jax_compat.jaxpr_text(jaxpr)))

        def exit(self, token, missed, key):
            seen.append((token, missed))

    h, x = jax.jit(lambda x: x * 3), jnp.ones(2)  # jnp.ones traces JAX's own helpers: made before the probe
    uninstall = _jax_compat.install_trace_probe(Probe())
    try:
        h(x)  # inside, `x * 3` traces JAX's own multiply helper first: the probe sees that trace too
        first = len(seen)
        h(x)  # a C++ cache hit reaches no probe
    finally:
        uninstall()
    assert len(seen) == first
    assert seen[-2:] == [("token", "{ lambda ; a:f32[2]. let b:f32[2] = mul a 3.0:f32[] in (b,) }"), ("token", True)]


# --- the diff's HTML in Chromium: folded runs closed, changed lines tinted and legible -----------


@pytest.fixture
def static_diff(shell):
    """The report ``%%jaxstages --diff`` displays for a static-argument change, and the diff record."""
    run_captured(shell, "%%jaxstages\ny = f(jnp.ones(4), 2)")
    diff, data = _diff(shell, "%%jaxstages --diff -o rep\ny = f(jnp.ones(4), 3)")
    return diff, data


def _diff_page(name: str, body: str, head_css: str = "", body_style: str = ""):
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.html"
    path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{head_css}</style></head>"
                    f"<body style='{body_style}'>{body}</body></html>", encoding="utf-8")
    return path


def _check_diff_in_page(page, diff, shot: str) -> None:
    """Folded runs are closed ``<details>``; the tinted spans are exactly the changed lines, each legible (≥ 4.5:1)."""
    root = page.locator("div.js-stages-diff").first
    folded = root.locator("details.js-diff details.js-section")
    assert folded.locator("summary").all_inner_texts() == ["⋯ 6 unchanged lines"]  # the optimised HLO's tail
    assert folded.evaluate_all("ds => ds.map(d => d.open)") == [False]
    assert root.locator("details.js-diff").evaluate_all("ds => ds.map(d => d.open)") == [True, True, True]
    assert not folded.locator("pre").is_visible()
    assert root.locator("details.js-diff").nth(1).locator("pre.js-code").count() == 1  # StableHLO: its last two lines join the change's
    folded.locator("summary").click()
    entry = next(piece for piece in diff.texts[2].lines[-6:] if piece.startswith(" ENTRY %main.0 ("))
    assert folded.locator("pre").is_visible() and entry in folded.locator("pre").inner_text()
    tinted = root.locator("pre.js-code span")
    assert tinted.all_inner_texts() == [piece for t in diff.texts for piece in t.lines if piece[:1] in "+-"]
    assert all(s.is_visible() for s in tinted.all())
    backgrounds = tinted.evaluate_all("ss => ss.map(s => getComputedStyle(s).backgroundColor)")
    assert set(backgrounds) == {"rgba(46, 160, 67, 0.22)", "rgba(248, 81, 73, 0.22)"}
    assert _lowest_contrast(tinted.evaluate_all(EFFECTIVE_COLOURS)) >= 4.5
    root.screenshot(path=str(ARTIFACTS / shot))


@pytest.mark.browser
@pytest.mark.parametrize("theme, scheme", [("default", "light"), ("default", "dark"), ("jupyterlab-dark", "light"),
                                           ("vscode-dark", "light")], ids=lambda v: v)
def test_diff_html_folds_and_tints_legibly_in_chromium(static_diff, browser, theme, scheme):
    diff, data = static_diff
    if theme == "jupyterlab-dark":
        path = _diff_page(f"diff-{theme}", data["text/html"], _lab_theme("dark"), "background: var(--jp-layout-color0)")
    elif theme == "vscode-dark":
        variables = "".join(f"{k}: {v};" for k, v in VSCODE_DARK.items())
        path = _diff_page(f"diff-{theme}", data["text/html"], f":root {{ {variables} }}", "background: var(--vscode-editor-background)")
    else:
        path = _diff_page(f"diff-{theme}-{scheme}", data["text/html"])
    page = browser.new_page(viewport={"width": 1200, "height": 1000}, color_scheme=scheme)
    page.goto(path.as_uri(), wait_until="load")
    _check_diff_in_page(page, diff, f"diff-{theme}-{scheme}.png")
    page.close()


@pytest.mark.browser
def test_diff_reads_in_a_sanitised_nbconvert_export(static_diff, browser):
    import nbformat
    from nbconvert import HTMLExporter

    diff, data = static_diff
    cell = nbformat.v4.new_code_cell("%%jaxstages --diff -o rep\ny = f(jnp.ones(4), 3)", execution_count=3,
                                     outputs=[nbformat.v4.new_output("display_data", data=data)])
    body, _ = HTMLExporter(sanitize_html=True).from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "diff-sanitized.html"
    path.write_text(body, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(path.as_uri(), wait_until="load")
    root = page.locator("div.js-stages-diff").first
    text = root.inner_text()
    assert ".jaxshow" not in text and "--js-" not in text  # the stylesheet never shows as text
    for piece in ("static n", "-  %constant.0 = f32[] constant(2)", "+  %constant.0 = f32[] constant(3)", "⋯ 6 unchanged lines"):
        assert piece in text
    changed = root.locator("pre.js-code", has_text="constant(3)").first
    assert "mono" in changed.locator("code").evaluate("c => getComputedStyle(c).fontFamily").lower()
    assert changed.locator("code").evaluate("c => getComputedStyle(c).whiteSpace").startswith("pre")
    assert _lowest_contrast(changed.locator("code").evaluate_all(EFFECTIVE_COLOURS)) >= 4.5
    root.screenshot(path=str(ARTIFACTS / "diff-sanitized.png"))
    page.close()
