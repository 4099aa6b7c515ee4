"""What %%jaxstages shows is exactly what happened: real IPython shell, real JAX on CPU.

Each test asserts the exact report a user sees for one situation: how many
times the body traced (side effects counted in a list), which function is
headlined, the cell labels ``In[n]``, the dtypes, and the heading
(``outcome``, ``cache_hit``, ``stopped_at``).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap

import jax
import pytest
from jax._src import stages as jax_stages
from IPython.core.error import UsageError

import jaxshow
from jaxshow import _jax_compat, render
from jaxshow.capture import calls as calls_module
from jaxshow.cellrun import label_cells
from jaxshow.render import to_text as render_text
from jaxshow.report import SourceLocation
from shellrun import forget_at_exit, names_cell_line, run_captured

SETUP = """
import functools
import jax, jax.numpy as jnp
from functools import partial
runs = []

@jax.jit
def f(x):
    runs.append(1)
    return jnp.sin(x) * 2

x = jnp.ones(3)
"""

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def shell(ip):
    assert ip.run_cell(SETUP).success
    return ip


def _define(shell, code):
    result = shell.run_cell(code, store_history=True)
    assert result.success, result.error_in_exec
    return result


def _run(shell, cell):
    result, cap = run_captured(shell, cell)
    return result, cap, shell.user_ns.get("rep")


def _fully_staged(report):
    return report.traced is not None and report.lowered is not None and report.compiled is not None


def _texts(cap):
    return [o.data.get("text/plain", "") for o in cap.outputs]


# 1. config contexts ------------------------------------------------------------------------------


# The same contexts under the names each JAX gives them (jax.enable_x64 and jax.set_mesh arrived after 0.7).
X64 = "jax.enable_x64(True)" if hasattr(jax, "enable_x64") else "jax.experimental.enable_x64()"
SET_MESH = "jax.set_mesh" if hasattr(jax, "set_mesh") else "jax.sharding.use_mesh"


def test_enable_x64_call_traces_once_and_shows_f64(shell):
    result, _, rep = _run(shell, f"%%jaxstages -o rep\nwith {X64}:\n    y = f(jnp.ones(3))\n    dt = str(y.dtype)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    assert shell.user_ns["dt"] == "float64"
    [report] = rep.reports
    assert report.function == "f"
    assert [a.type_str for a in report.traced.args] == ["f64[3]"]
    assert [a.type_str for a in report.traced.out_info] == ["f64[3]"]
    assert _fully_staged(report) and report.error is None
    assert report.cache_hit is False and report.timings.compile_seconds is not None


def test_default_device_call_traces_once(shell):
    result, _, rep = _run(shell, "%%jaxstages -o rep\nwith jax.default_device(jax.devices()[0]):\n    y = f(x)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.function == "f" and [a.type_str for a in report.traced.args] == ["f32[3]"]
    assert _fully_staged(report) and report.cache_hit is False and report.stopped_at is None


def _disable_jit_report(shell, cell_value):
    before = len(shell.user_ns["runs"])
    result, _, rep = _run(shell, f"%%jaxstages -o rep\nwith jax.disable_jit():\n    y = f({cell_value})")
    assert result.success, result.error_in_exec
    assert len(shell.user_ns["runs"]) - before == 1, "the body ran once"
    return rep


@pytest.mark.parametrize("setup, value", [
    ("with jax.disable_jit():\n    f(x)", "x"),  # JAX's eager helpers for f32[3] are compiled before the cell
    ("x_cold = jnp.ones((13, 7))", "x_cold"),  # a shape no other test uses: sin, mul compile inside the call
], ids=["warm-helpers", "cold-helpers"])
def test_disable_jit_says_so_and_shows_no_stations(shell, setup, value):
    _define(shell, setup)
    [report] = _disable_jit_report(shell, value).reports
    assert report.function == "f"
    assert (report.traced, report.lowered, report.compiled) == (None, None, None)
    assert report.outcome == "ran op by op: jax.disable_jit() was in effect, so JAX did not trace, lower or compile it"


def test_disable_jit_is_not_headed_cache_hit(shell):
    _define(shell, "with jax.disable_jit():\n    f(x)")
    [report] = _disable_jit_report(shell, "x").reports
    assert report.cache_hit is False
    assert "cache hit" not in report.outcome


HELPERS_UNSEEN = ("jitted functions called from inside your helpers ran op by op, where jaxshow does not see them; "
                  "the cell ran normally")


@pytest.mark.parametrize("setup, cell, cause", [
    ("", "with jax.disable_jit():\n    y = helper(x)", "jax.disable_jit()"),
    ("jax.config.update('jax_disable_jit', True)", "y = helper(x)", "the option jax_disable_jit"),
], ids=["context", "earlier-cell"])
def test_disable_jit_around_a_helper_says_its_jitted_calls_went_unseen(shell, setup, cell, cause):
    # read 'no jitted call of yours in this cell; the cell ran normally. JAX compiled its own … (eager jax.numpy operations)'
    _define(shell, "def helper(v):\n    return f(v) + 1\n" + setup)
    try:
        result, _, rep = _run(shell, "%%jaxstages -o rep\n" + cell)
    finally:
        jax.config.update("jax_disable_jit", False)
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1], "f ran op by op, once"
    assert rep.reports == ()
    [note] = rep.notes
    assert note.split(". JAX compiled")[0] == f"jit was disabled in this cell ({cause}): {HELPERS_UNSEEN}"


@pytest.mark.parametrize("cell", ["with jax.disable_jit(False):\n    y = helper(x)", "y = helper(x)"])
def test_a_helper_with_jit_on_reads_as_before(shell, cell):
    _define(shell, "def helper(v):\n    return f(v) + 1")
    result, _, rep = _run(shell, "%%jaxstages -o rep\n" + cell)
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.cache_hit) == ("f", False)
    assert not any("jit was disabled" in n for n in (*rep.notes, *report.notes))


def test_disable_jit_is_said_once_beside_a_direct_call_and_apart_from_one(shell):
    _define(shell, "def helper(v):\n    return f(v) + 1")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nwith jax.disable_jit():\n    y = f(x)\n    y = helper(x)")
    assert result.success, result.error_in_exec
    assert rep.notes == () and rep.reports[0].outcome.startswith("ran op by op")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ny = f(x)\nwith jax.disable_jit():\n    y = helper(x)")
    assert result.success, result.error_in_exec
    assert rep.reports[0].function == "f"
    assert rep.notes == ("jit was disabled in this cell (jax.disable_jit()): jitted functions called from inside your helpers "
                         "ran op by op, where jaxshow does not see them",)


def test_mesh_context_sharding_names_the_mesh(shell):
    _define(shell, "import numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
                   "mesh = Mesh(np.array(jax.devices()[:1]), ('rows',))\n"
                   "xs = jax.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P('rows')))")
    result, _, rep = _run(shell, f"%%jaxstages -o rep\nwith {SET_MESH}(mesh):\n    y = f(xs)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    [arg] = report.traced.args
    assert arg.type_str == "f32[4,2]"
    assert "NamedSharding" in arg.sharding and "'rows': 1" in arg.sharding
    assert _fully_staged(report)


MESH_SCRIPT = textwrap.dedent(
    '''
    import json
    import jax
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "jaxshow")
    assert ip.run_cell("""
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    runs = []
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    set_mesh = getattr(jax, "set_mesh", None) or jax.sharding.use_mesh
    xs = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))

    @jax.jit
    def layer(v):
        runs.append(1)
        return jnp.tanh(v) * 2
    """).success
    with capture_output():
        ok = ip.run_cell("%%jaxstages -o rep\\nwith set_mesh(mesh):\\n    out = layer(xs)").success
    [report] = ip.user_ns["rep"].reports
    print(json.dumps({"ok": ok, "devices": jax.device_count(), "runs": len(ip.user_ns["runs"]),
                      "function": report.function, "args": [[a.type_str, a.sharding] for a in report.traced.args],
                      "inputs": [p.sharding for p in report.compiled.inputs],
                      "jax_inputs": [str(s) for s in jax.tree.leaves(ip.user_ns["layer"].lower(ip.user_ns["xs"]).compile().input_shardings)],
                      "stations": list(report.stations_reached), "cache_hit": report.cache_hit}))
    '''
)


def test_mesh_context_on_eight_devices_names_the_mesh():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", MESH_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert (result["ok"], result["devices"], result["runs"], result["function"]) == (True, 8, 1, "layer")
    [[type_str, sharding]] = result["args"]
    assert type_str == "f32[8,8]"
    # Traced shows where the caller placed the argument, not its type's P(None, None) under Auto axes.
    assert sharding.startswith("NamedSharding(mesh=Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)), spec=")
    assert sharding.split("spec=")[1].startswith(("P('data', 'model')", "PartitionSpec('data', 'model')"))  # jax 0.7 spells it out
    assert result["inputs"] == result["jax_inputs"] and "Mesh('data': 2, 'model': 4" in result["inputs"][0]
    assert result["stations"] == ["traced", "lowered", "compiled"] and result["cache_hit"] is False


# 2. labels --------------------------------------------------------------------------------------


def test_call_site_label_and_line(shell):
    result, _, rep = _run(shell, "%%jaxstages -o rep\na = 1\n\ny = f(x)")
    [report] = rep.reports
    assert (report.call_site.file, report.call_site.line) == (f"In[{result.execution_count}]", 4)
    assert report.cell_site is None


def test_traceback_names_the_cell_and_line(shell):
    result, cap, _ = _run(shell, "%%jaxstages -o rep\ny = f(x)\nraise ValueError('boom')")
    assert isinstance(result.error_in_exec, ValueError)
    text = ANSI.sub("", cap.stdout + cap.stderr)
    assert names_cell_line(text, result.execution_count, 3)
    assert "ValueError: boom" in text


# 3. indirect calls -------------------------------------------------------------------------------


def test_call_through_a_helper_from_an_earlier_cell(shell):
    helper = _define(shell, "def helper(v):\n    w = v + 1\n    return f(w)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nz = 0\nr = helper(x)")
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.function == "f" and report.kind == "user"
    assert (report.call_site.file, report.call_site.line) == (f"In[{helper.execution_count}]", 3)
    assert (report.cell_site.file, report.cell_site.line) == (f"In[{result.execution_count}]", 3)


def test_optax_eager_update_is_a_library_report(shell):
    # a shape no other test uses, so optax's jitted helper misses JAX's caches inside this cell
    _define(shell, "import optax\nparams = {'w': jnp.ones(19)}\nopt = optax.adam(1e-3)\nstate = opt.init(params)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nupdates, state = opt.update(params, state, params)")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.kind == "library"
    assert report.function == "tree_bias_correction"
    assert _fully_staged(report)


def test_user_train_step_calling_optax_is_the_only_report(shell):
    _define(shell, "import optax\nparams = {'w': jnp.ones(3)}\nopt = optax.adam(1e-3)\nstate = opt.init(params)\nsteps = []\n"
                   "@jax.jit\ndef train_step(p, s):\n    steps.append(1)\n"
                   "    g = jax.grad(lambda q: jnp.sum(q['w'] ** 2))(p)\n"
                   "    u, s = opt.update(g, s, p)\n    return optax.apply_updates(p, u), s")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nparams, state = train_step(params, state)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["steps"] == [1]
    assert [(r.function, r.kind) for r in rep.reports] == [("train_step", "user")]
    assert _fully_staged(rep.reports[0])
    assert "tree_bias_correction" not in " ".join(rep.notes)


def test_equinox_filter_jit_is_reported_at_the_users_line(shell):
    defined = _define(shell, "import equinox as eqx\nlosses = []\n@eqx.filter_jit\ndef loss(model, v):\n    losses.append(1)\n"
                             "    return jnp.sum(model(v) ** 2)\nmodel = eqx.nn.Linear(3, 2, key=jax.random.key(0))")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nvalue = loss(model, jnp.ones(3))")
    assert result.success, result.error_in_exec
    assert shell.user_ns["losses"] == [1]
    [report] = rep.reports
    # equinox jits a wrapper of its own, named after the user's function, which it carries as a static value
    assert (report.function, report.kind) == ("loss", "user")
    assert str(report.wrapper.defined_at) == f"In[{defined.execution_count}]:3 (loss)"
    assert (report.call_site.file, report.call_site.line) == (f"In[{result.execution_count}]", 2)
    assert _fully_staged(report) and not report.cache_hit


def test_equinox_filter_jit_arguments_are_named_by_the_users_parameters(shell):
    """equinox's stateful example: '%%jaxstages' listed evaluate's arguments as equinox's leaves,
    "dynamic_nodonate['first'][0]" … "dynamic_nodonate['rest'][0]", in the Traced table, the largest buffers and the
    pruned inputs, where '%jaxcache' for the same call read 'model: 18 arrays …, xs: f32[5,3]'."""
    pytest.importorskip("equinox")
    _define(shell, "import equinox as eqx\nmlp = eqx.nn.Linear(3, 2, key=jax.random.key(0))\n@eqx.filter_jit\n"
                   "def evaluate(model, xs, scale=2.0):\n    return jax.vmap(model)(xs) * scale")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ny = evaluate(mlp, jnp.ones((5, 3)), scale=3.0)")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    # each leaf by its field (it read model[0], model[1]); scale, a float, is static to equinox
    assert [a.path for a in report.traced.args] == ["model.weight", "model.bias", "xs"]
    assert sorted(b.detail for b in report.compiled.buffers if b.kind == "parameter") == [
        "parameter 0 (model.weight)", "parameter 1 (model.bias)", "parameter 2 (xs)"]
    # equinox's jitted function returns (marker, the array leaves of the result, Static(the rest)): the outputs read
    # 'result[0] i32[]' (no output of evaluate's) and 'result[1]' for evaluate's own result
    assert [(o.path, o.type_str) for o in report.traced.out_info] == [("(equinox's own marker)", "i32[]"),
                                                                      ("result", "f32[5,2]")]
    assert [o.path for o in report.compiled.outputs] == ["(equinox's own marker)", "result"]


def test_equinox_filter_jit_static_values_are_named_by_the_users_arguments(shell):
    """eqx.filter_jit holds a model's functions and a Python float argument static, in one static value of its own: the
    jax.jit station's row read 'static static (((<function scaled>,), PyTreeDef(*)), ((None, None, <custom_jvp
    object>, …' cut at 200 characters. Each now has a row of its own by the user's argument: 'static scale 3.0'."""
    pytest.importorskip("equinox")
    _define(shell, "import equinox as eqx\nmlp = eqx.nn.MLP(3, 2, 4, 1, key=jax.random.key(0))\n@eqx.filter_jit\n"
                   "def scaled(model, xs, scale, mode='a'):\n    return jax.vmap(model)(xs) * scale")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ny = scaled(mlp, jnp.ones((5, 3)), 3.0, mode='b')")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.wrapper.static_args == (("model.activation", "<jax._src.custom_derivatives.custom_jvp object>"),
                                          ("model.final_activation", "<function <lambda>>"), ("scale", "3.0"),
                                          ("mode", "'b'"))


def test_jaxshow_stages_of_an_eqx_filter_jit_function_holds_what_equinox_holds_static():
    """jaxshow.stages(loss, mlp, xs) of an eqx.filter_jit function, whose call runs, read 'failed while tracing:
    TypeError: Error interpreting argument to _JitWrapper(…) as an abstract array … of type <class
    'jax._src.custom_derivatives.custom_jvp'> … at path model.activation': jaxshow's jax.jit around equinox's wrapper
    traced every leaf. The leaves jax.jit cannot trace are now held in the function, as equinox holds them, and said."""
    eqx = pytest.importorskip("equinox")
    import jax.numpy as jnp

    mlp = eqx.nn.MLP(3, 1, 4, 1, key=jax.random.key(0))

    @eqx.filter_jit
    def loss(model, xs, scale):
        return jnp.mean(jax.vmap(model)(xs)) * scale

    report = jaxshow.stages(loss, mlp, jnp.ones((5, 3)), scale=2.0)
    assert (report.error, report.stopped_at) == (None, None)
    assert [(a.path, a.type_str) for a in report.traced.args] == [
        ("model.layers[0].weight", "f32[4,3]"), ("model.layers[0].bias", "f32[4]"), ("model.layers[1].weight", "f32[1,4]"),
        ("model.layers[1].bias", "f32[1]"), ("xs", "f32[5,3]"), ("scale", "f32[]")]
    assert report.notes[1] == ("held out of the trace, as equinox holds them static: model.activation, "
                               "model.final_activation (no array: jax.jit cannot trace them)")


@pytest.mark.parametrize("transform", ["jax.grad(f)(1.0)", "jax.vmap(f)(jnp.ones((2, 3)))"], ids=["grad", "vmap"])
def test_grad_and_vmap_of_a_jitted_function_report_f(shell, transform):
    _define(shell, "@jax.jit\ndef s(v):\n    runs.append(1)\n    return jnp.sum(jnp.sin(v))\nf = s")
    result, _, rep = _run(shell, f"%%jaxstages -o rep\nout = {transform}")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    assert [r.function for r in rep.reports] == ["s"]
    assert rep.reports[0].kind == "user" and rep.reports[0].compiled is not None


def test_grad_of_a_jitted_function_says_its_other_program_is_not_another_call(shell):
    # JAX's thinking_in_jax notebook, grad(jit(grad(...)))(1.0): the report on the backward pass read 'note: also
    # called: sum_logistic', the function it headlines: JAX compiles a forward and a backward program for it
    _define(shell, "@jax.jit\ndef s(v):\n    runs.append(1)\n    return jnp.sum(jnp.sin(v))")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nout = jax.grad(s)(1.0)")
    assert result.success, result.error_in_exec
    assert [r.function for r in rep.reports] == ["s"]
    assert [n for n in rep.notes if n.startswith("also")] == [
        "also compiled for s under a transformation: 1 more program (jax.grad compiles a forward and a backward pass, "
        "jax.vmap a batched one; use --all to show it)"]
    # its seconds read 'your other calls 55.9 ms', with '(1 compile of your other jitted calls … folded away: s)'
    assert (rep.other_compiles.count, rep.more_programs.count, rep.more_programs.names) == (0, 1, ("s",))
    text = render_text(rep)
    assert " + more programs for s " in text.splitlines()[0] and "other calls" not in text and "folded away: s" not in text
    _, _, every = _run(shell, "%%jaxstages --all -o rep\nout = jax.grad(s)(jnp.ones(()))")
    assert [r.traced.args[0].type_str for r in every.reports] == ["f32[]", "f32[]", "f32[]"]  # traced; forward; backward
    assert not any(n.startswith("also") for n in every.notes)


def test_time_magic_inside_the_cell(shell):
    result, cap, rep = _run(shell, "%%jaxstages -o rep\n%time f(x)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    assert "Wall time" in cap.stdout
    [report] = rep.reports
    assert report.function == "f" and _fully_staged(report) and report.cache_hit is False


# 4. the wrong call -------------------------------------------------------------------------------


def test_trailing_allclose_is_not_headlined(shell):
    result, _, rep = _run(shell, "%%jaxstages -o rep\nz = f(x)\njnp.allclose(z, 2.0)")
    assert result.success, result.error_in_exec
    assert [r.function for r in rep.reports] == ["f"]
    assert "allclose" in rep.helper_compiles.names
    assert not any("allclose" in n for n in rep.notes)


# 5. probing user objects -------------------------------------------------------------------------


def test_user_objects_are_not_probed(shell):
    _define(shell, "from unittest import mock\nm = mock.MagicMock()\n"
                   "class Hostile:\n    def __getattr__(self, name):\n        raise RuntimeError('probed ' + name)\n"
                   "    def __call__(self, v):\n        return v\n"
                   "class Stagey:\n    lowers = 0\n    traces = 0\n"
                   "    def lower(self, *a, **k):\n        Stagey.lowers += 1\n"
                   "    def trace(self, *a, **k):\n        Stagey.traces += 1\n"
                   "    def __call__(self, v):\n        return v\n"
                   "hostile, stagey = Hostile(), Stagey()")
    result, _, rep = _run(shell, "%%jaxstages -o rep\na = m(x)\nb = hostile(x)\nc = stagey(x)\nd = f(x)")
    assert result.success, result.error_in_exec
    assert (shell.user_ns["Stagey"].lowers, shell.user_ns["Stagey"].traces) == (0, 0)
    m = shell.user_ns["m"]
    assert m.method_calls == []
    assert "lower" not in m._mock_children and "trace" not in m._mock_children
    assert [r.function for r in rep.reports] == ["f"]


# 6. blame and headings ---------------------------------------------------------------------------


@pytest.mark.parametrize("callback", ["jax.pure_callback(cb, jax.ShapeDtypeStruct(v.shape, v.dtype), v)",
                                      "io_callback(cb, jax.ShapeDtypeStruct(v.shape, v.dtype), v)"],
                         ids=["pure_callback", "io_callback"])
def test_callback_raising_at_run_time_is_blamed_on_run(shell, callback):
    _define(shell, "from jax.experimental import io_callback\n"
                   "def cb(v):\n    raise RuntimeError('callback boom')\n"
                   f"@jax.jit\ndef withcb(v):\n    runs.append(1)\n    return {callback}")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nr = withcb(x)\nr.block_until_ready()")
    assert not result.success
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.stopped_at == "run"
    assert report.outcome == "failed while running"
    assert _fully_staged(report)
    assert report.error.type_name == type(result.error_in_exec).__name__  # JaxRuntimeError; XlaRuntimeError on 0.7


def test_callback_error_summary_names_the_callbacks_exception(shell):
    _define(shell, "def cb(v):\n    raise RuntimeError('callback boom')\n"
                   "@jax.jit\ndef withcb(v):\n    return jax.pure_callback(cb, jax.ShapeDtypeStruct(v.shape, v.dtype), v)")
    _run(shell, "%%jaxstages -o rep\nr = withcb(x)\nr.block_until_ready()")
    [report] = shell.user_ns["rep"].reports
    assert "RuntimeError: callback boom" in report.error.message


@pytest.mark.parametrize("callback", ["jax.debug.callback(host, v)", "jax.pure_callback(host, jax.ShapeDtypeStruct((), v.dtype), v)"])
def test_a_jitted_call_a_host_callback_makes_is_the_users_own(shell, callback):
    # A host callback that calls a jitted function as the program runs (the first, compiling call): the call went under
    # "JAX's own helpers" ('3 compiles of JAX's own helpers folded away: convert_element_type, broadcast_in_dim, scaled'),
    # its trace, lowering and compile counted as work inside the call that ran the callback
    defined = _define(shell, "import numpy as np\n@jax.jit\ndef scaled(v):\n    return v * 10\n"
                             "def host(v):\n    return np.asarray(scaled(v).sum())\n"
                             f"@jax.jit\ndef withcb(v):\n    return {callback}, v + 1")
    result, cap, rep = _run(shell, "%%jaxstages -o rep --all\nout = withcb(x)\njax.block_until_ready(out)")
    assert result.success, result.error_in_exec
    assert [r.function for r in rep.reports] == ["withcb", "scaled"]
    outer, inner = rep.reports
    assert "scaled" not in rep.helper_compiles.names
    assert inner.call_site == SourceLocation(f"In[{defined.execution_count}]", 6, "host")
    assert (inner.cell_site.file, inner.cell_site.line) == (f"In[{result.execution_count}]", 2)
    assert inner.notes == (
        "made by your host callback as withcb's program ran (jax.debug.callback, jax.pure_callback or io_callback): "
        "compiled on its own, not part of withcb's program",
        "called at least once with this signature in the cell (calls from inside host that hit JAX's cache are not seen)")
    t = inner.timings
    assert [s is not None and s > 0 for s in (t.trace_seconds, t.lowering_seconds, t.compile_seconds)] == [True] * 3
    assert outer.notes == () and outer.timings.compile_seconds > 0
    _, _, rep = _run(shell, "%%jaxstages -o rep\nout = withcb(x + 1)\njax.block_until_ready(out)")  # by default: the cell's call
    assert [r.function for r in rep.reports] == ["withcb"]


@pytest.mark.parametrize("magic", ["%%jaxstages", "%%jaxcache", "%jaxcache on"])
def test_a_callbacks_error_reads_as_without_jaxshow(shell, magic):
    # jaxlib writes the whole Python stack into the message as the callback raises, jaxshow's hooks on it
    cell = ("def cb(v):\n    raise ValueError('from callback')\n"
            "@jax.jit\ndef withcb(v):\n    jax.debug.callback(cb, v)\n    return v + 1\nwithcb(x).block_until_ready()")

    on = magic == "%jaxcache on"
    messages = []
    for text in (cell, cell if on else magic + "\n" + cell):
        if on and messages:
            assert run_captured(shell, magic)[0].success
        result, _ = run_captured(shell, text)  # one line of this file for both: the message holds the stack
        messages.append(re.sub(r'"<ipython-input-\d+-\w+>", line \d+', '"<cell>", line ?', str(result.error_in_exec)))
    plain, shown = messages
    assert "ValueError: from callback" in plain and "_jax_compat.py" not in shown
    assert shown == plain


def test_ordered_debug_print_succeeds_with_all_stations(shell):
    _define(shell, "@jax.jit\ndef loud(v):\n    runs.append(1)\n    jax.debug.print('{v}', v=v, ordered=True)\n    return v + 1")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nr = loud(x)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.error is None and report.stopped_at is None
    assert _fully_staged(report) and report.cache_hit is False


@pytest.mark.parametrize("call", ["f('abc')", "f(x, x)"], ids=["string-argument", "wrong-arity"])
def test_call_failing_before_tracing_is_not_a_cache_hit(shell, call):
    result, _, rep = _run(shell, f"%%jaxstages -o rep\nr = {call}")
    assert isinstance(result.error_in_exec, TypeError)
    assert shell.user_ns["runs"] == []
    [report] = rep.reports
    assert report.function == "f"
    assert report.cache_hit is False
    assert report.error.type_name == "TypeError"
    assert report.stopped_at == "trace" and report.outcome == "failed while tracing"


def _first_call_is_not_a_cache_hit(shell, calls):
    for call, marker in calls:
        result, _, rep = _run(shell, f"%%jaxstages -o rep\nr = {call}")
        assert result.success, (call, result.error_in_exec)
        assert shell.user_ns["runs"].count(marker) == 1, call
        assert len(rep.reports) == 1, call
        [report] = rep.reports
        assert report.cache_hit is False, call
        assert report.timings.compile_seconds is not None, call
        assert report.compiled is not None, call
        assert (report.call_site.file, report.call_site.line) == (f"In[{result.execution_count}]", 2), call


def test_first_call_of_jitted_partial_and_callable_object_is_not_a_cache_hit(shell):
    _define(shell, "def g(a, v):\n    runs.append('g')\n    return v * a\n"
                   "pg = jax.jit(functools.partial(g, 1))\n"
                   "class Scaler:\n    def __call__(self, v):\n        runs.append('obj')\n        return v * 3\n"
                   "jobj = jax.jit(Scaler())")
    _first_call_is_not_a_cache_hit(shell, (("pg(x)", "g"), ("jobj(x)", "obj")))


PMAP_IS_JIT = type(jax.pmap(lambda v: v)).__name__ != "PmapFunction"  # jax >= 0.8: a jit of shard_map


def test_first_call_of_pmap_is_not_a_cache_hit(shell):
    defined = _define(shell, "def pm(v):\n    runs.append('pmap')\n    return v + 1\npf = jax.pmap(pm)\nxp = jnp.ones((1, 3))").execution_count
    if PMAP_IS_JIT:
        _first_call_is_not_a_cache_hit(shell, (("pf(xp)", "pmap"),))
        wrapper = shell.user_ns["rep"].reports[0].wrapper
        assert wrapper.kind == "jax.pmap"
        assert (wrapper.name, wrapper.qualname) == ("pm", "pm"), "the user's function, not JAX's own _fun in pmap.py"
        assert wrapper.defined_at is not None and wrapper.defined_at.file.startswith("In[") and wrapper.defined_at.line == 1
        # was 'flat_args[0]', the name of JAX's own jit body that pmap calls with the flattened arguments
        report = shell.user_ns["rep"].reports[0]
        assert [a.path for a in report.traced.args] == ["v"] and [p.path for p in report.compiled.inputs] == ["v"]
        assert [b.detail for b in report.compiled.buffers if b.kind == "parameter"] == ["parameter 0 (v)"]
        return
    result, _, rep = _run(shell, "%%jaxstages -o rep\nr = pf(xp)")
    assert result.success and shell.user_ns["runs"] == ["pmap"]
    [report] = rep.reports
    assert (report.function, report.wrapper.kind, report.cache_hit) == ("pm", "jax.pmap", False)
    assert report.timings.compile_seconds is not None and report.stations_reached == ()
    assert report.notes == (f"PmapFunction compiles outside jax.jit's path on jax {jax.__version__}: its timings are shown; "
                            "its stations are not read back (that would trace it again)",)
    # was: 'defined at  unknown (no Python source)' and '② Traced: not reached' (HTML: 'skipped'), under 'trace 456 µs'
    assert report.wrapper.defined_at == SourceLocation(f"In[{defined}]", 1, "pm")
    text, page = render_text(report), render.to_html(report)
    assert [row for row in text.splitlines() if row[:1] in "②③④"] == [
        f"{station}: not read back (see the note)" for station in ("② Traced", "③ Lowered", "④ Compiled")]
    assert page.count("not read back (see the note)") == 3 and "skipped" not in page


def test_second_identical_call_in_a_later_cell_is_a_cache_hit(shell):
    _run(shell, "%%jaxstages -o first\ny = f(x)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ny = f(x)")
    assert shell.user_ns["runs"] == [1]
    assert shell.user_ns["first"].reports[0].cache_hit is False
    [report] = rep.reports
    assert report.cache_hit is True
    assert report.outcome == "cache hit: JAX did not trace, lower or compile this call"
    assert report.wrapper.name == "f" and _fully_staged(report)
    assert report.timings.stages_run == ()


# 7. IPython runner -------------------------------------------------------------------------------


def test_ast_node_interactivity_all_shows_every_out(shell):
    shell.ast_node_interactivity = "all"
    try:
        result, cap, _ = _run(shell, "%%jaxstages\n40 + 1\n40 + 2\n40 + 3")
    finally:
        shell.ast_node_interactivity = "last_expr"
    assert result.success
    n = result.execution_count
    outs = re.findall(r"Out\[(\d+)\]: (\d+)", ANSI.sub("", cap.stdout))
    assert outs == [(str(n), "41"), (str(n), "42"), (str(n), "43")]


def test_top_level_await(shell):
    result, _, _ = _run(shell, "%%jaxstages\nimport asyncio\nawait asyncio.sleep(0)\nawaited = 7")
    assert result.success, result.error_in_exec
    assert shell.user_ns["awaited"] == 7


def test_semicolon_suppresses_out(shell):
    result, cap, _ = _run(shell, "%%jaxstages\n41 + 1;")
    assert result.success
    assert result.result is None
    assert "Out[" not in cap.stdout


# 8. arguments ------------------------------------------------------------------------------------


def test_static_argument_is_named_by_parameter(shell):
    _define(shell, "@partial(jax.jit, static_argnums=1)\ndef power(v, n):\n    return v ** n")
    _, _, rep = _run(shell, "%%jaxstages -o rep\nr = power(x, 3)")
    [report] = rep.reports
    assert report.wrapper.static_args == (("n", "3"),)


BAD_REPR = ("class BadRepr:\n    k = 2.0\n    def __repr__(self):\n        raise RuntimeError('no repr')\n"
            "    def __hash__(self):\n        return 1\n    def __eq__(self, other):\n        return isinstance(other, BadRepr)\n"
            "@partial(jax.jit, static_argnums=1)\ndef scale(v, s):\n    runs.append(1)\n    return v * s.k\nbad = BadRepr()")


def test_static_argument_with_raising_repr_keeps_every_station(shell):
    _define(shell, BAD_REPR)
    result, _, rep = _run(shell, "%%jaxstages -o rep\nr = scale(x, bad)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert _fully_staged(report) and report.error is None
    assert report.wrapper.static_args == (("s", "<BadRepr object; its repr not run>"),)  # the user's repr: not run


LOUD = ("import dataclasses, collections\nclass Loud:\n    def __init__(self, k): self.k = k\n"
        "    def __hash__(self): return self.k\n    def __eq__(self, o): return isinstance(o, Loud) and o.k == self.k\n"
        "    def __repr__(self): print('repr ran'); return f'Loud({self.k})'\n"
        "    def __str__(self): print('str ran'); return 'loud'\n"
        "    def __format__(self, spec): print('format ran'); return 'loud'\n"
        "@dataclasses.dataclass(frozen=True)\nclass Cfg:\n    loud: object\n    n: int = 2\n"
        "@partial(jax.jit, static_argnums=1)\ndef scale(v, s):\n    runs.append(1)\n    return v * 2\n")


def test_a_static_arguments_own_repr_is_never_run(shell):
    """A static value whose __repr__ (or __str__, __format__) is the user's printed 'repr ran' under %%jaxstages, once
    per call (the wrapper station's static values), where the plain cell prints nothing: JAX runs it only to explain a
    miss, with jax_explain_cache_misses on. It is now named by its type, unread, also inside a dataclass, tuple or partial."""
    _define(shell, LOUD)
    plain, _ = run_captured(shell, "r = scale(x, Loud(1))")
    assert plain.success
    for cell in ("r = scale(x, Loud(2))", "r = scale(x, Loud(2))", "r = scale(x, (Loud(3), 4))",
                 "r = scale(x, Cfg(Loud(4)))", "r = scale(x, partial(print, Loud(5), k=Loud(6)))"):
        result, cap, rep = _run(shell, "%%jaxstages --diff -o rep\n" + cell)
        assert result.success and cap.stdout == "", (cell, cap.stdout)
    assert rep.reports[0].wrapper.static_args == (("s", "functools.partial(<built-in function print>, "
                                                        "<Loud object; its repr not run>, k=<Loud object; its repr not run>)"),)
    _, _, rep = _run(shell, "%%jaxstages --all -o rep\nr = scale(x, Cfg(Loud(4)))\nq = scale(x, Cfg(1, 3))\np = scale(x, (Loud(3), 4))")
    assert [r.wrapper.static_args for r in rep.reports] == [(("s", "Cfg(loud=<Loud object; its repr not run>, n=2)"),),
                                                            (("s", "Cfg(loud=1, n=3)"),),
                                                            (("s", "(<Loud object; its repr not run>, 4)"),)]


def test_a_dataclass_with_a_repr_of_its_own_written_in_a_cell_is_named_unread(shell):
    """A frozen dataclass with a ``__repr__`` of its own, written in a terminal IPython's cell (a file named
    ``<ipython-input-…>``), printed 'repr ran' under %%jaxstages and read 'Own': jaxshow took the cell's method for the one
    ``@dataclass`` compiles from ``<string>``, whose fields it reads instead."""
    _define(shell, LOUD + "@dataclasses.dataclass(frozen=True)\nclass Own:\n    n: int\n"
                          "    def __repr__(self): print('repr ran'); return 'Own'\n")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nr = scale(x, Own(1))")
    assert result.success and cap.stdout == ""
    assert rep.reports[0].wrapper.static_args == (("s", "<Own object; its repr not run>"),)


def test_static_argument_with_raising_repr_under_jaxcache(shell):
    _define(shell, BAD_REPR)
    result, _, _ = _run(shell, "%%jaxcache\nr = scale(x, bad)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]


# 9. state after the call -------------------------------------------------------------------------


@pytest.mark.parametrize("after", ["jax.clear_caches()", "f.clear_cache()",
                                   "jax.config.update('jax_enable_x64', True); jax.config.update('jax_enable_x64', False)"],
                         ids=["clear_caches", "f.clear_cache", "x64-toggled"])
def test_state_changed_later_in_the_cell(shell, after):
    result, _, rep = _run(shell, f"%%jaxstages -o rep\ny = f(x); {after}")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.function == "f" and _fully_staged(report) and report.error is None
    assert report.cache_hit is False


# 10. identity ------------------------------------------------------------------------------------


def test_two_functions_with_one_name_are_both_reported(shell):
    _define(shell, "@jax.jit\ndef h(v):\n    return v * 2\nh1 = h\n@jax.jit\ndef h(v):\n    return v + 1")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\na = h1(x)\nb = h(x)")
    assert result.success
    assert [r.function for r in rep.reports] == ["h", "h"]
    texts = [r.traced.jaxpr_text for r in rep.reports]
    assert "mul" in texts[0] and "add" in texts[1] and texts[0] != texts[1]


# 11. size ----------------------------------------------------------------------------------------


def test_hot_loop_over_a_big_pytree_gives_one_report(shell, monkeypatch):
    held = []
    original_release = calls_module.CallCapture.release

    def release(self):
        held.append((len(self.records), self.dropped))
        original_release(self)

    monkeypatch.setattr(calls_module.CallCapture, "release", release)
    _define(shell, "tree = {f'p{i:03d}': jnp.ones(()) for i in range(200)}\n"
                   "@jax.jit\ndef step(t):\n    runs.append(1)\n    return jax.tree.map(lambda v: v + 1, t)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nfor _ in range(400):\n    out = step(tree)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.function == "step" and len(report.traced.args) == 200
    assert "called 400 times with this signature in the cell" in report.notes
    assert report.repeat_hits == 399
    assert rep.jitted_calls == 400
    assert held == [(1, 0)], "one record for 400 calls, none dropped, all released after the report"


# 12. foreign frames ------------------------------------------------------------------------------

BROKEN = ("import traceback\n@jax.jit\ndef broken(v):\n    raise ValueError('trace boom')\n"
          "try:\n    broken(x)\nexcept ValueError:\n    traceback.print_exc()")


@pytest.mark.parametrize("mode", ["jaxcache on", "jaxstages"], ids=["jaxcache-on", "jaxstages"])
def test_printed_traceback_has_no_jaxshow_frames(shell, mode):
    if mode == "jaxcache on":
        shell.run_line_magic("jaxcache", "on")
        try:
            result, cap, _ = _run(shell, BROKEN)
        finally:
            shell.run_line_magic("jaxcache", "off")
    else:
        result, cap, _ = _run(shell, "%%jaxstages\n" + BROKEN)
    assert result.success, result.error_in_exec
    assert "ValueError: trace boom" in cap.stderr
    assert "jaxshow" not in cap.stderr


# 13. syntax errors -------------------------------------------------------------------------------


def test_syntax_error_cell_is_ipythons_own(shell):
    result, cap, _ = _run(shell, "%%jaxstages -o rep\ny = (")
    assert isinstance(result.error_before_exec, SyntaxError)
    text = ANSI.sub("", cap.stdout + cap.stderr)
    assert names_cell_line(text, result.execution_count, 2)
    # Python 3.13 raises a SyntaxError subclass, _IncompleteInputError, and IPython prints its name
    assert f"{type(result.error_before_exec).__name__}: incomplete input" in text
    assert "jaxshow" not in text
    assert not any("ran normally" in t for t in _texts(cap))


# hostile and unusual input -----------------------------------------------------------------------


PARSED = """
ran = []

@jax.tree_util.register_pytree_node_class
class Box:
    def __init__(self, v):
        ran.append("init")
        self.v = v
    def tree_flatten(self):
        ran.append("flatten")
        return (self.v,), None
    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

class Key:
    def __hash__(self):
        ran.append("hash")
        return id(self)
    def __eq__(self, other):
        ran.append("eq")
        return self is other

def body(b, k=None):
    return getattr(b, "v", b) * 2

plain = jax.jit(body)
static = jax.jit(body, static_argnums=1)
donating = jax.jit(body, donate_argnums=0)
key = Key()
box = Box(jnp.ones(2))
"""


@pytest.mark.parametrize("magic", ["%%jaxstages -o rep", "%%jaxstages --all -o rep", "%%jaxcache -o rep"])
@pytest.mark.parametrize(("warm", "cell", "flattens"), [
    (False, "plain(box)\nplain(box)", None),  # a miss, then a hit on the next line
    (True, "plain(box)", 1),  # a hit: JAX's C++ dispatch flattens once
    (True, "plain(box)\nplain(box)", 2),
    (True, "static(box, key)", 1),
    (True, "static(box.v, key)", 0),
    (False, "static(box, key)", None),
    (True, "donating(Box(jnp.ones(2)))", 1),
    (False, "donating(Box(jnp.ones(2)))", None),
    (True, f"with {X64}:\n    plain(box)", None),
    (True, "with jax.disable_jit():\n    plain(box)\n    static(box, key)", 0),
])
def test_the_users_flatten_hash_and_eq_run_as_often_as_in_a_plain_cell(shell, magic, warm, cell, flattens):
    # A hit's stations were looked up by parsing its arguments again, and its placements read by flattening them:
    # a flatten that printed printed three times under %%jaxstages for once in a plain cell (a miss: five for four).
    def run(prefix):
        _define(shell, PARSED + ("plain(box); static(box, key); static(box.v, key); donating(Box(jnp.ones(2)))\n" if warm else "") + "ran.clear()")
        result, _, _ = _run(shell, prefix + cell)
        assert result.success, result.error_in_exec
        return list(shell.user_ns["ran"])

    expected = run("")
    if flattens is not None:
        assert expected.count("flatten") == flattens
    assert run(magic + "\n") == expected
    if magic.startswith("%%jaxstages") and warm and "with" not in cell:  # the hits
        hit = shell.user_ns["rep"].reports[-1]
        assert hit.cache_hit and hit.traced is None and hit.compiled is None
        assert hit.notes[-1] == ("its stations are not read from JAX's caches: looking them up parses the call's arguments "
                                 f"again, which would run your {'Key.__hash__' if 'box.v' in cell else 'Box.tree_flatten'} a second time")


TAGGED = """
ran = []

@jax.tree_util.register_pytree_node_class
class Tagged:
    def __init__(self, v, tag):
        self.v, self.tag = v, tag
    def tree_flatten(self):
        ran.append("flatten")
        return (self.v,), self.tag
    @classmethod
    def tree_unflatten(cls, tag, children):
        ran.append("unflatten")
        return cls(children[0], tag)

tagged = jax.jit(lambda t: t.v * 2)
y = tagged(Tagged(jnp.ones(2), {"k": 1}))
ran.clear()
"""


@pytest.mark.parametrize("magic", ["%%jaxcache\n", "%jaxcache on\n"])
def test_a_miss_on_a_pytree_of_the_users_runs_its_flatten_as_often_as_in_a_plain_cell(shell, magic):
    # JAX's explanation of a miss, which %jaxcache turns on, rebuilt both keys' pytrees and flattened each node again:
    # the user's tree_flatten ran 30 times and tree_unflatten 5 for a plain cell's 4 and 1 (jax 0.10; 43 on jax 0.7).
    # Where a node's flatten is the user's, the two pytree definitions are compared as they are, in JAX's words.
    def run(prefix):
        _define(shell, TAGGED)
        result, cap, _ = _run(shell, prefix + 'y = tagged(Tagged(jnp.ones(2), {"k": 2}))')
        assert result.success, result.error_in_exec
        return list(shell.user_ns["ran"]), cap

    expected, _ = run("")
    ran, cap = run(magic)
    shell.run_line_magic("jaxcache", "off")
    assert ran == expected
    text = " ".join(" ".join(_texts(cap)).split())
    assert "1. different input pytree: t (Tagged's pytree metadata): now {'k': 2}, before {'k': 1}" in text


PROXY = """
asked = []
class Proxy:
    def __init__(self, wrapped):
        object.__setattr__(self, "wrapped", wrapped)
    @property
    def __class__(self):
        asked.append("__class__")
        return type(self.wrapped)
    def __getattr__(self, name):
        asked.append(name)
        return getattr(self.wrapped, name)
    def __hash__(self): return 1
    def __eq__(self, o): return self is o
scaled = jax.jit(lambda v, s: v * 2, static_argnums=1)
doubled = jax.jit(lambda v: v * 2)
"""


@pytest.mark.parametrize("cell", ["y = scaled(jnp.ones(2), Proxy(3))", "y = doubled(Proxy(jnp.ones(2)))"])
def test_a_proxy_is_asked_for_its_class_as_often_as_in_a_plain_cell(shell, cell):
    # jaxshow's type tests (isinstance) asked a proxy (wrapt's, a lazy object's) for its __class__, a property that runs
    # code of its own: the static value's text asked it once more, an argument's placement twice more and its sharding
    # once. Types are now read from type(value) alone (reprs.is_a).
    def run(prefix):
        _define(shell, PROXY)
        result, _, _ = _run(shell, prefix + cell)
        return result.success, list(shell.user_ns["asked"])

    assert run("%%jaxstages\n") == run("")


HASHED_ELSEWHERE = """
import dataclasses
from unittest import mock
ran = []
class Key:
    def __hash__(self):
        ran.append("hash")
        return 1
    def __eq__(self, other):
        return self is other
@dataclasses.dataclass(frozen=True)
class Config:
    key: Key
exec("class Made:\\n    def __hash__(self):\\n        ran.append('hash')\\n        return 1")
g = jax.jit(lambda v, s: v * 2, static_argnums=1)
statics = {"config": Config(Key()), "made": Made(), "mock": mock.MagicMock()}
"""


@pytest.mark.parametrize(("static", "runs"), [("config", "Key.__hash__"), ("made", "Made.__hash__"),
                                               ("mock", "MagicMock.__hash__")])
def test_a_static_values_hash_of_the_users_runs_as_often_as_in_a_plain_cell_wherever_it_is_defined(shell, static, runs):
    # A hit's stations were read by parsing its arguments again whenever the static value's __hash__ was not in a
    # cell or a file of the user's: a frozen dataclass's (dataclasses writes it from a string) hashed a Key of the
    # user's a fourth time for three in a plain cell, and so did a class made with exec and a MagicMock's __hash__.
    def run(prefix):
        _define(shell, HASHED_ELSEWHERE)
        result, _, _ = _run(shell, prefix + f"s = statics[{static!r}]\ny = g(x, s)\ny = g(x, s)")
        assert result.success, result.error_in_exec
        return list(shell.user_ns["ran"]), list(shell.user_ns["s"].mock_calls) if static == "mock" else None

    expected = run("")
    assert expected[0 if static != "mock" else 1]  # three on jax 0.10.2, seven on jax 0.7.0
    assert run("%%jaxstages -o rep\n") == expected
    hit = shell.user_ns["rep"].reports[-1]
    assert hit.cache_hit and hit.traced is None
    assert hit.notes[-1] == ("its stations are not read from JAX's caches: looking them up parses the call's arguments "
                             f"again, which would run your {runs} a second time")


def test_a_hit_whose_arguments_run_no_code_of_the_users_is_read_from_jaxs_caches(shell):
    _define(shell, "from jax.sharding import NamedSharding, PartitionSpec as P\n"
                   "mesh = jax.make_mesh((1,), ('data',))\nxs = jax.device_put(jnp.ones(4), NamedSharding(mesh, P('data')))\n"
                   "g = jax.jit(lambda t: t['v'] * 2)\ng({'v': xs})")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nout = g({'v': xs})")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.cache_hit and _fully_staged(report)
    assert [(a.path, a.spec) for a in report.traced.args] == [("t['v']", "P('data')")]


@pytest.mark.parametrize("name, why", [
    ("__builtins__", "-o __builtins__: names like __builtins__ belong to Python"),
    ("not a name", "-o needs a variable name, got 'not a name'"),  # the quotes IPython's split keeps are taken off
    ("class", "-o class: 'class' is a Python keyword"),
    ("Out", "-o Out: Out is one of IPython's own names"),
    ("_i3", "-o _i3: _i3 is one of IPython's own names"),
])
def test_output_names_are_checked_before_the_cell_runs(shell, name, why):
    for magic in ("jaxstages", "jaxcache"):
        with pytest.raises(UsageError) as info:
            shell.run_cell_magic(magic, f"-o '{name}'" if " " in name else f"-o {name}", "sentinel = 1")
        assert str(info.value).splitlines()[0] == why
        assert "sentinel" not in shell.user_ns
    if " " not in name:
        result = shell.run_cell(f"%%jaxstages -o {name}\nsentinel = 1", store_history=True)
        assert isinstance(result.error_in_exec, UsageError) and str(result.error_in_exec).splitlines()[0] == why
        assert "sentinel" not in shell.user_ns


@pytest.mark.parametrize("cell", ['%%jaxstages --save "my runs\nsentinel = 1', '%%jaxcache -o "rep\nsentinel = 1',
                                  '%jaxcache freeze "f', '%jaxconfig "x64', '%jaxdump "f'])
def test_an_unclosed_quote_in_a_magics_line_is_a_usage_error(shell, cell):
    # it raised the line split's ValueError: "Error in callback <bound method CellRunner._pre_run_cell ...>" and a
    # traceback through jaxshow's magic_args.py and shlex.py, or that traceback alone for the line magics
    result, cap, _ = _run(shell, cell)
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    assert str(result.error_in_exec).splitlines()[0] == "No closing quotation"
    assert "Traceback" not in cap.stdout + cap.stderr and "sentinel" not in shell.user_ns


def test_a_closure_over_a_mutable_ref_keeps_its_compiled_station(shell):
    if not hasattr(jax, "new_ref"):
        pytest.skip(f"jax {jax.__version__} has no jax.new_ref")
    _define(shell, "acc = jax.new_ref(jnp.zeros(3))\n@jax.jit\ndef bump(v):\n    acc[...] = acc[...] + v\n    return v * 2")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nout = bump(jnp.ones(3))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.error is None and report.stopped_at is None and report.compiled is not None
    assert report.compiled.optimized_hlo_text


def test_an_embedded_shell_finds_the_modules_names():
    import types as pytypes

    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    module = pytypes.ModuleType("embedded_user_module")
    exec("import jax, jax.numpy as jnp\nscale = jax.jit(lambda v: v * 3)\nx = jnp.ones(2)", module.__dict__)
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryAccessor.enabled = False
    ip = InteractiveShell.instance(config=config, user_module=module, user_ns=module.__dict__)
    try:
        ip.run_line_magic("load_ext", "jaxshow")
        result = ip.run_cell("%%jaxstages -o rep\ny = scale(x)", store_history=True)
        assert result.success, result.error_in_exec
        [report] = module.__dict__["rep"].reports
        assert report.function == "<lambda>" and module.__dict__["y"].tolist() == [3.0, 3.0]
        assert ip.run_cell("%%jaxcache -o crep\nscale(jnp.ones(5))", store_history=True).success
        assert [f.traced for f in module.__dict__["crep"].functions] == [1]
        ip.run_line_magic("unload_ext", "jaxshow")
    finally:
        InteractiveShell.clear_instance()
        forget_at_exit(ip)


def test_ahead_of_time_lowering_in_the_cell_is_the_calls_own(shell):
    result, _, rep = _run(shell, "%%jaxstages -o rep\ncompiled = f.lower(jnp.ones(11)).compile()")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.function == "f" and _fully_staged(report) and report.traced.args[0].type_str == "f32[11]"
    assert report.timings.stages_run == ("trace", "lower", "compile")
    assert "lowered ahead of time in the cell (.lower()); compiled too" in report.notes
    assert "f" not in rep.helper_compiles.names
    assert report.compiled.optimized_hlo_text == label_cells(shell, shell.user_ns["compiled"].as_text())


OPTIONS = "{'xla_cpu_enable_fast_math': False}"


def test_a_compile_with_compiler_options_in_the_cell_is_the_calls_own(shell):
    """``f.lower(x).compile(compiler_options=...)`` then ``compiled(x)``: JAX keeps an executable compiled with options
    only in the Compiled it returns, not on the lowering. The report read '(.lower()); not compiled' beside 'compile
    ... ms', '④ Compiled: not read back', and a second report of the call: 'a call of a jax.stages.Compiled made before
    this cell', 'jit options not known'."""
    cell = f"%%jaxstages --all -o rep\ncompiled = f.lower(jnp.ones(11)).compile(compiler_options={OPTIONS})\ny = compiled(jnp.ones(11))"
    result, _, rep = _run(shell, cell)
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.function == "f" and _fully_staged(report)
    assert report.timings.stages_run == ("trace", "lower", "compile")
    assert report.notes[:2] == ("lowered ahead of time in the cell (.lower()); compiled too",
                                "then called through the jax.stages.Compiled made of it: its executable ran, with no trace, "
                                "lowering or compile")
    assert report.compiled.optimized_hlo_text == label_cells(shell, shell.user_ns["compiled"].as_text())


def test_a_compile_with_compiler_options_not_called_says_where_its_executable_is(shell):
    """The same compile, its Compiled not called in the cell: the note read 'not compiled' beside 'compile ... ms'."""
    result, _, rep = _run(shell, f"%%jaxstages -o rep\ncompiled = f.lower(jnp.ones(11)).compile(compiler_options={OPTIONS})")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.timings.stages_run == ("trace", "lower", "compile")
    assert report.compiled is None
    assert report.notes[0] == ("lowered ahead of time in the cell (.lower()); compiled too, with compiler_options or "
                               "device_assignment given to .compile(), so JAX keeps the executable only in the "
                               "jax.stages.Compiled it returned: ④ is read from it when the cell calls it")


def test_ahead_of_time_lowering_of_a_scan_is_the_calls_own(shell):
    # JAX's host-offloading notebook: f.lower(args).compile() of a function with jax.lax.scan read 'scanned: trace
    # 26.0 ms' and '(10 compiles of JAX's own helpers folded away: ..., scanned, ...)': lowering the scan traces JAX's
    # own jitted less and dynamic_index_in_dim, which took the place of scanned's record
    _define(shell, "def scanned(w, v):\n    runs.append(1)\n"
                   "    return jnp.sum(jax.lax.scan(lambda c, wi: (c * wi, None), v, w)[0])\nws = jnp.ones((4, 3))")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nfs = jax.jit(scanned)\ncompiled = fs.lower(ws, x).compile()")
    assert result.success, result.error_in_exec
    assert shell.user_ns["runs"] == [1]
    [report] = rep.reports
    assert report.function == "scanned" and _fully_staged(report)
    assert report.timings.stages_run == ("trace", "lower", "compile")
    assert "lowered ahead of time in the cell (.lower()); compiled too" in report.notes
    assert rep.helper_compiles.count == 0 and "scanned" not in rep.helper_compiles.names


def test_interleaved_ahead_of_time_stages_are_each_calls_own(shell):
    # 't1 = jf.trace(1.0); t2 = jg.trace(2.0); c = t1.lower().compile()' showed g with f's StableHLO (module @jit_f) and
    # f's compiled HLO: the lowering and compile went to whichever call was traced last
    _define(shell, "def sine(v):\n    return jnp.sin(v)\ndef cosine(v):\n    return jnp.cos(v)\njs, jc = jax.jit(sine), jax.jit(cosine)")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\nt1 = js.trace(1.0); t2 = jc.trace(2.0); c = t1.lower().compile()")
    assert result.success, result.error_in_exec
    sine, cosine = rep.reports
    assert (sine.function, cosine.function) == ("sine", "cosine")
    assert sine.timings.stages_run == ("trace", "lower", "compile") and cosine.timings.stages_run == ("trace",)
    assert sine.lowered.module_text.startswith("module @jit_sine") and "stablehlo.sine" in sine.lowered.module_text
    assert sine.compiled.optimized_hlo_text == label_cells(shell, shell.user_ns["c"].as_text())
    assert cosine.stations_reached == ("traced",) and "cos" in cosine.traced.jaxpr_text
    assert "traced by .trace(), not called: JAX lowered and compiled nothing for it" in cosine.notes
    assert rep.helper_compiles.count == 0


def test_an_ahead_of_time_compile_after_another_call_is_its_own(shell):
    _define(shell, "def sine(v):\n    return jnp.sin(v)\ndef cosine(v):\n    return jnp.cos(v)\njs, jc = jax.jit(sine), jax.jit(cosine)")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\nlo = js.lower(x)\ny = jc(x)\nc = lo.compile()")
    assert result.success, result.error_in_exec
    sine, cosine = rep.reports
    assert (sine.function, cosine.function) == ("sine", "cosine")
    assert sine.timings.stages_run == cosine.timings.stages_run == ("trace", "lower", "compile")
    assert sine.compiled.optimized_hlo_text == label_cells(shell, shell.user_ns["c"].as_text())
    assert "lowered ahead of time in the cell (.lower()); compiled too" in sine.notes
    assert "HloModule jit_cosine" in cosine.compiled.optimized_hlo_text
    assert "sine" not in rep.helper_compiles.names


def test_calls_after_a_lowering_ahead_of_time_are_counted_as_calls(shell):
    """'lo = js.lower(x); y = js(x)' read '(.lower()); compiled too' and 'called 2 times with this signature in the
    cell': .lower() is no call, and .compile() never ran (the call compiled the lowering); 'c = jc.lower(x).compile();
    y = jc(x); y = jc(x)' read 'called 3 times'."""
    _define(shell, "def sine(v):\n    return jnp.sin(v)\ndef cosine(v):\n    return jnp.cos(v)\njs, jc = jax.jit(sine), jax.jit(cosine)")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\nlo = js.lower(x)\ny = js(x)\nc = jc.lower(x).compile()\ny = jc(x); y = jc(x)")
    assert result.success, result.error_in_exec
    sine, cosine = rep.reports
    assert sine.timings.stages_run == cosine.timings.stages_run == ("trace", "lower", "compile")
    assert [n for n in sine.notes if "lowered" in n or "called" in n] == [
        "lowered ahead of time in the cell (.lower()); not compiled by .compile(): a later call compiled it",
        "then called once with this signature in the cell"]
    assert [n for n in cosine.notes if "lowered" in n or "called" in n] == [
        "lowered ahead of time in the cell (.lower()); compiled too", "then called 2 times with this signature in the cell"]


TRACED_LOWERS_THROUGH_HOOK = "_resolve_and_lower" in inspect.getsource(jax_stages.Traced.lower)
"""jax 0.7 and 0.8.0's ``Traced.lower`` lowers with the function it was made with; later ones through pjit's
``_resolve_and_lower``, which jaxshow hooks."""


def test_stage_objects_made_in_earlier_cells_are_the_users_function(shell):
    # JAX's AOT tutorial, a stage per cell: 'lowered = traced.lower()' read 'note: no jitted call of yours in this cell',
    # 'compiled = lowered.compile()' '(1 compile of JAX's own helpers folded away: f)', and 'z = compiled(x, y)' 'no
    # jitted call of yours': JAX's work on a Traced or Lowered made before the cell matched no record of the cell's
    _define(shell, "def mm(a, b):\n    runs.append(1)\n    return jnp.sin(a) @ b\nm = jnp.ones((3, 3))")
    _define(shell, "traced = jax.jit(mm, donate_argnums=1).trace(m, m)")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nlowered = traced.lower()")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    cell = f"In[{shell.execution_count - 1}]"
    assert (report.function, report.kind, report.continued) == ("mm", "user", "Traced")
    assert report.timings.stages_run == ("lower",) and rep.helper_compiles.count == 0
    assert [(a.path, a.donated) for a in report.traced.args] == [("a", False), ("b", True)]
    assert report.wrapper.defined_at == jaxshow.report.SourceLocation(f"In[{shell.execution_count - 3}]", 1, "mm")
    assert report.call_site.file == cell and report.call_site.line == 2
    if not TRACED_LOWERS_THROUGH_HOOK:  # its Traced lowers with the function it was made with, outside jaxshow's hooks
        assert report.stations_reached == ("traced",)
        assert (f"lowered from a jax.stages.Traced made before this cell (.lower()); jax {jax.__version__}'s Traced lowers "
                "where jaxshow does not see the lowering, so the Lowered station is not shown") in report.notes
    else:
        assert report.stations_reached == ("traced", "lowered")
        assert report.lowered.module_text == label_cells(shell, shell.user_ns["lowered"].as_text())
        assert "lowered from a jax.stages.Traced made before this cell (.lower()); not compiled" in report.notes
    assert report.wrapper.options_unavailable == "not known: the jax.stages.Traced made before this cell does not keep them"

    result, cap, rep = _run(shell, "%%jaxstages -o rep\ncompiled = lowered.compile()")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.kind, report.continued) == ("mm", "user", "Lowered")
    assert report.timings.stages_run == ("compile",) and rep.helper_compiles.count == 0
    assert report.stations_reached == ("lowered", "compiled")
    assert report.lowered.module_text == label_cells(shell, shell.user_ns["lowered"].as_text())
    assert report.compiled.optimized_hlo_text == label_cells(shell, shell.user_ns["compiled"].as_text())
    assert "compiled from a jax.stages.Lowered made before this cell (.compile())" in report.notes
    text = ANSI.sub("", _texts(cap)[-1])
    assert "② Traced: not kept in the jax.stages.Lowered made before this cell" in text
    assert "no jitted call of yours" not in text and "helpers" not in text

    result, cap, rep = _run(shell, "%%jaxstages -o rep\nz = compiled(m, jnp.ones((3, 3)))\nz = compiled(m, jnp.ones((3, 3)))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.kind, report.continued) == ("mm", "user", "Compiled")
    assert report.outcome == ("ran its executable compiled ahead of time (a jax.stages.Compiled): JAX did not trace, "
                              "lower or compile this call")
    assert report.stations_reached == ("compiled",) and report.repeat_hits == 1
    assert report.compiled.optimized_hlo_text == label_cells(shell, shell.user_ns["compiled"].as_text())
    assert report.call_site.line == 2 and shell.user_ns["runs"] == [1]
    assert "③ Lowered: not kept in the jax.stages.Compiled made before this cell" in ANSI.sub("", _texts(cap)[-1])


@pytest.mark.skipif(not TRACED_LOWERS_THROUGH_HOOK, reason=f"jax {jax.__version__}'s Traced lowers past the hook: a lowering cache hit is unseen")
def test_a_lowering_cache_hit_of_a_traced_stage_says_what_served_the_lower(shell):
    # 'lowered = traced.lower()' of a Traced made before the cell, whose lowering f(x) had cached, was headed 'cache hit:
    # JAX did not trace, lower or compile this call': no call was made, the .lower() was served
    _define(shell, "y = f(x)\ntraced = f.trace(x)")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nlowered = traced.lower()")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.continued, report.timings.stages_run) == ("f", "Traced", ())
    assert report.outcome == "lowering cache hit: JAX's lowering cache served this .lower(); it lowered and compiled nothing"
    assert ("lowered from a jax.stages.Traced made before this cell (.lower()); compiled before this cell (its Compiled "
            "station is the executable JAX kept)") in report.notes


def test_a_compiled_stage_made_in_the_cell_is_called_on_its_lowering(shell):
    # 'c = f.lower(x).compile(); z = c(x); z = c(x)' read 'f: ran its executable compiled ahead of time (a
    # jax.stages.Compiled)' with 'a call of a jax.stages.Compiled made before this cell', the Traced and Lowered
    # stations 'not kept in the jax.stages.Compiled made before this cell', and 'also traced, not called: f'
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nc = f.lower(jnp.ones(15)).compile(); z = c(jnp.ones(15)); z = c(jnp.ones(15))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.continued, report.timings.stages_run) == ("f", None, ("trace", "lower", "compile"))
    assert report.stations_reached == ("traced", "lowered", "compiled")
    assert [n for n in report.notes if "lowered" in n or "called" in n] == [
        "lowered ahead of time in the cell (.lower()); compiled too",
        "then called through the jax.stages.Compiled made of it: its executable ran, with no trace, lowering or compile",
        "called 2 times with this signature in the cell"]
    text = ANSI.sub("", _texts(cap)[-1])
    assert "before this cell" not in text and "not called" not in text


@pytest.mark.parametrize("caught", [True, False])
def test_a_call_that_raises_of_a_compiled_stage_made_in_the_cell_is_on_its_lowering(shell, caught):
    # 'c6 = f.lower(jnp.ones(16)).compile()', then 'c6(jnp.ones(15))' caught, read 'f: raised, and the cell caught the
    # error' with 'a call of a jax.stages.Compiled made before this cell (lowered.compile())' and its Traced and Lowered
    # stations 'not kept in the jax.stages.Compiled made before this cell'
    call = "try:\n    c6(jnp.ones(15))\nexcept TypeError:\n    pass" if caught else "c6(jnp.ones(15))"
    result, cap, rep = _run(shell, f"%%jaxstages -o rep\nc6 = f.lower(jnp.ones(16)).compile()\n{call}")
    assert result.success is caught
    [report] = rep.reports
    assert (report.function, report.continued, report.stopped_at, report.timings.stages_run) == (
        "f", None, None, ("trace", "lower", "compile"))
    assert [n for n in report.notes if "lowered" in n or "called" in n or "raised" in n] == [
        "lowered ahead of time in the cell (.lower()); compiled too",
        "a call of the jax.stages.Compiled made of it raised, and the cell caught the error" if caught else
        "a call of the jax.stages.Compiled made of it raised the cell's error"]
    assert "before this cell" not in ANSI.sub("", _texts(cap)[-1])


def test_a_call_of_a_compiled_stage_that_raises_is_named(shell):
    _define(shell, "compiled = f.lower(x).compile()")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ncompiled(jnp.ones(2))")
    assert isinstance(result.error_in_exec, TypeError)
    [report] = rep.reports
    assert (report.function, report.continued, report.stopped_at) == ("f", "Compiled", "call")
    assert report.error.type_name == "TypeError"


def test_compile_then_call_again_is_reported_as_the_compile(shell):
    _define(shell, "def g(v):\n    runs.append('g')\n    return v * 5")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nfg = jax.jit(g)\nfg(x)\nfg(x)")
    assert shell.user_ns["runs"] == ["g"]
    [report] = rep.reports
    assert report.cache_hit is False and report.timings.stages_run == ("trace", "lower", "compile")
    assert "called 2 times with this signature in the cell" in report.notes
    assert rep.other_compiles.count == 0


def test_calls_not_shown_keep_their_compile_seconds_in_the_cell_line(shell):
    _define(shell, "@jax.jit\ndef first(v):\n    return v - 1\n@jax.jit\ndef second(v):\n    return v + 1")
    result, _, rep = _run(shell, "%%jaxstages -o rep\na = first(x)\nb = second(x)")
    assert [r.function for r in rep.reports] == ["second"]
    assert (rep.other_compiles.count, rep.other_compiles.names) == (1, ("first",))
    text = render_text(rep)
    assert "(1 compile of your other jitted calls (--all shows them) folded away: first)" in text
    assert "your other calls" in text.splitlines()[0]


def test_grads_forward_and_backward_programs_are_two_reports(shell):
    _define(shell, "@jax.jit\ndef fb(v):\n    jax.debug.callback(lambda t: None, v)\n    return jnp.sin(v)")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\ng = jax.grad(fb)(1.0)")
    assert result.success, result.error_in_exec
    transformed = [r for r in rep.reports if r.wrapper.kind.startswith("jit_p")]
    assert len(transformed) == 2 and transformed[0].traced.jaxpr_text != transformed[1].traced.jaxpr_text
    assert not any("called 2 times" in n for r in transformed for n in r.notes)


def test_timeit_call_site_is_the_cells_line(shell):
    _define(shell, "timed = jax.jit(lambda v: v * 3)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\n%timeit -n 3 -r 1 timed(x)")
    [report] = rep.reports  # the compile %timeit's first call caused; its cache hits are not hooked
    assert (report.call_site.file, report.call_site.line) == (f"In[{result.execution_count}]", 2)
    assert report.timings.stages_run == ("trace", "lower", "compile") and report.repeat_hits == 0


@pytest.mark.parametrize("comprehension", ["[f(x) for _ in range(3)]", "{k: f(x) for k in range(3)}", "{f(x).size for _ in range(3)}"],
                         ids=["list", "dict", "set"])
def test_a_comprehension_in_the_cell_is_the_cells_own_code(shell, comprehension):
    """Python 3.11 runs a comprehension as a function of its own (3.12 inlines it): its calls are the cell's, hits seen."""
    result, cap, rep = _run(shell, f"%%jaxstages -o rep\nout = {comprehension}")
    [report] = rep.reports
    n = result.execution_count
    assert shell.user_ns["runs"] == [1] and report.repeat_hits == 2
    assert "called 3 times with this signature in the cell" in report.notes
    site = report.call_site
    assert (site.file, site.line, site.function, report.cell_site) == (f"In[{n}]", 2, "<module>", None)
    assert "(called at In[%d]:2)\n" % n in render_text(rep)


def test_a_comprehension_in_a_helper_is_the_helpers(shell):
    _define(shell, "def helper():\n    return [f(x) for _ in range(3)]")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nout = helper()")
    [report] = rep.reports
    n = result.execution_count
    assert " ".join(render_text(rep).split("\n①")[0].split()).endswith(
        f"(called at In[{n - 1}]:2 in helper) (from In[{n}]:2) note: called at least once with this signature in the "
        "cell (calls from inside helper that hit JAX's cache are not seen)")


def test_a_cell_the_cell_runs_counts_its_hits(shell):
    """``get_ipython().run_cell(...)`` inside the cell: IPython compiles that cell with the call hook too."""
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nget_ipython().run_cell('y = f(x)\\ny = f(x)\\ny = f(x)')")
    [report] = rep.reports
    assert shell.user_ns["runs"] == [1] and report.repeat_hits == 2
    assert "called 3 times with this signature in the cell" in report.notes
    assert "ipython-input" not in render_text(rep) and "ipykernel" not in render_text(rep)


def test_a_trace_inside_a_transformation_is_not_called_a_cache_hit(shell):
    _define(shell, "def soft(v):\n    runs.append('soft')\n    return jnp.log1p(jnp.exp(v))")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\nout = jax.vmap(jax.jit(jax.grad(soft)))(jnp.arange(3.0))")
    assert result.success and shell.user_ns["runs"] == ["soft"]
    # the program JAX compiled under jax.vmap has no function of its own: it is named as the call it transformed
    assert [(r.function, r.wrapper.kind, r.stations_reached) for r in rep.reports] == [
        ("grad(soft)", "jax.jit", ("traced",)), ("grad(soft)", "jit_p (inside a transformation)", ("traced", "lowered", "compiled"))]
    traced, compiled = rep.reports
    assert not traced.cache_hit
    if _jax_compat.JAX_VERSION < (0, 10):  # JAX emits the trace event of a nested trace before 0.10
        assert traced.timings.stages_run == ("trace",)
    else:
        assert traced.outcome == "reached inside jax.vmap: JAX reports no stage timings there"
    assert "traced inside jax.vmap: what JAX compiled is the transformed function, shown as its own call" in traced.notes
    assert compiled.timings.stages_run == ("lower", "compile")


def test_a_trace_inside_a_transformation_that_raised_is_not_said_to_be_compiled(shell):
    # JAX's callbacks notebook: jax.vmap of a jitted ordered io_callback raises while batching; the report said "what
    # JAX compiled is the transformed function, shown as its own call", and none was compiled or shown
    _define(shell, "from jax.experimental import io_callback\nimport numpy as np\n@jax.jit\ndef ordered(x):\n"
                   "    return io_callback(np.asarray, jax.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\njax.vmap(ordered)(jnp.ones(3))")
    assert str(result.error_in_exec) == "Cannot `vmap` ordered IO callback."
    [report] = rep.reports
    assert (report.function, report.stations_reached) == ("ordered", ("traced",))
    assert ("traced inside jax.vmap: the cell raised before JAX compiled the transformed function, which is what it "
            "compiles, not this function on its own") in report.notes
    assert not any("shown as its own call" in n for n in report.notes)
    result, _, rep = _run(shell, "%%jaxstages -o rep\njax.lax.scan(lambda c, x: (c, ordered(x) + jnp.asarray(None)), 0.0, jnp.ones(3))")
    assert str(result.error_in_exec) == "None is not a valid value for jnp.array"
    [report] = rep.reports
    assert ("traced inside jax.lax.scan: the cell raised before JAX compiled the whole jax.lax.scan with this call inlined, "
            "which is what it compiles, not this function on its own") in report.notes


def test_an_error_the_users_code_raises_over_a_calls_keeps_the_calls_own(shell):
    # jaxshow shows the error JAX raised in place of a call's internal one (test_sharded.py); the user's own does not
    _define(shell, "@jax.jit\ndef branchy(v):\n    return v if v > 0 else -v")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ntry:\n    branchy(1.0)\nexcept Exception as e:\n    raise RuntimeError('mine')")
    assert str(result.error_in_exec) == "mine"
    [report] = rep.reports
    assert (report.error.type_name, report.error.stage) == ("TracerBoolConversionError", "trace")


def test_both_magics_name_a_function_as_it_was_written(shell):
    """``%%jaxstages`` over ``jax.jit(jax.grad(g))(1.0)`` was headed ``g`` (its ① function row ``g``), and over
    ``up2(1.0)``, a jit of the jit wrapper ``up = jax.jit(g)``, ``g`` too, where ``%%jaxcache`` on the same line
    says ``grad(g)`` and ``jit(g)``. ``--name g`` still selects both; ``jaxshow.stages`` names them alike."""
    _define(shell, "def g(v):\n    return jnp.sin(v) * v\nup = jax.jit(g)\nup2 = jax.jit(up)")
    for cell, written in (("y = jax.jit(jax.grad(g))(1.0)", "grad(g)"), ("y = up2(1.0)", "jit(g)")):
        result, cap, rep = _run(shell, f"%%jaxstages -o rep\n{cell}")
        assert result.success, result.error_in_exec
        text = cap.outputs[-1].data["text/plain"].splitlines()
        head = next(line for line in text if line.endswith(f" (called at In[{result.execution_count}]:2)"))
        assert head.startswith(f"{written}: trace ")
        assert f"    function         {written}" in text
        assert [(r.function, r.wrapper.qualname) for r in rep.reports] == [(written, written)]
        result, _, rep = _run(shell, f"%%jaxcache -o rep\n{cell.replace('1.0', 'jnp.float32(2.0)')}")
        assert result.success, result.error_in_exec
        assert written in [f.qualname for f in rep.functions]
    result, _, rep = _run(shell, "%%jaxstages -o rep\na = jax.jit(jax.grad(g))(3.0)\nb = up2(jnp.ones(2))")
    assert [r.function for r in rep.reports] == ["jit(g)"]
    assert "also called: grad(g) (use --all or --name to show them)" in rep.notes
    result, _, rep = _run(shell, "%%jaxstages -n g -o rep\na = jax.jit(jax.grad(g))(4.0)\nb = up2(jnp.ones(3))")
    assert [r.function for r in rep.reports] == ["grad(g)", "jit(g)"]
    # the headline's name works as --name: 'grad(g)' was "--name needs a function name, got 'grad(g)'"
    result, _, rep = _run(shell, "%%jaxstages -n grad(g) -o rep\na = jax.jit(jax.grad(g))(5.0)\nb = up2(jnp.ones(4))")
    assert result.success, result.error_in_exec
    assert [r.function for r in rep.reports] == ["grad(g)"]
    result, _, rep = _run(shell, "%%jaxstages -n 'jit( g )' -o rep\na = jax.jit(jax.grad(g))(6.0)\nb = up2(jnp.ones(5))")
    assert [r.function for r in rep.reports] == ["jit(g)"]
    g = shell.user_ns["g"]
    assert [jaxshow.stages(fn, 1.0).function for fn in (jax.jit(jax.grad(g)), shell.user_ns["up2"])] == ["grad(g)", "jit(g)"]
    assert jaxshow.stages(jax.grad(g), 1.0).notes[0] == ("grad(g) is not jitted: jaxshow wrapped it in jax.jit to show what "
                                                          "JAX would do with it")


def test_a_jitted_call_made_by_the_users_code_under_a_transformation_names_it(shell):
    # a loss that calls a jitted model, under jax.grad or jax.vmap: the user's own frame (loss) lies between the call and
    # JAX's transformation, and the report said only "a transformation (jax.grad, jax.vmap, an outer jit)"
    _define(shell, "@jax.jit\ndef model(w, x):\n    return jnp.tanh(w * x)\ndef loss(w, x):\n    return model(w, x).sum()")
    for api, cell in (("jax.grad", "g = jax.grad(loss)(1.0, jnp.ones(3))"),
                      ("jax.vmap", "g = jax.vmap(loss, in_axes=(0, None))(jnp.ones(2), jnp.ones(3))"),
                      ("jax.lax.scan", "c, _ = jax.lax.scan(lambda c, x: (loss(c, x), x), 1.0, jnp.ones((2, 3)))")):
        result, _, rep = _run(shell, "%%jaxstages --all -o rep\n" + cell)
        assert result.success, result.error_in_exec
        traced, *compiled = rep.reports
        assert traced.function == "model" and traced.transformed_by == api
        if _jax_compat.JAX_VERSION >= (0, 10):  # JAX emits the trace event of a nested trace before 0.10
            assert traced.outcome == f"reached inside {api}: JAX reports no stage timings there"
        if api == "jax.lax.scan":  # compiled inside JAX's eager scan, not as a program of its own
            assert compiled == [] and rep.eager_loops.names == (f"scan running <lambda> (In[{shell.execution_count - 1}]:2)",)
        else:  # the derivative's forward and backward programs; the batched program
            assert len(compiled) == (2 if api == "jax.grad" else 1)
            for program in compiled:
                assert (program.function, program.wrapper.kind) == ("model", "jit_p (inside a transformation)")
                assert (f"compiled for a transformation of model under {api}: the jaxpr and arguments are the transformed "
                        "ones") in program.notes


def test_calls_traced_inside_different_transformations_are_reports_apart(shell):
    # jax.grad(mm) then jax.vmap(mm) over examples of the same shapes: both calls got the trace JAX cached for mm, and the
    # report was one, 'reached inside jax.grad' and 'called 2 times with this signature', the vmap call counted in it
    _define(shell, "@jax.jit\ndef mm(w, x):\n    return jnp.tanh(x @ w).sum()\nw = jnp.ones((4, 4))")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\ng = jax.grad(mm)(w, jnp.ones((2, 4)))\n"
                                 "v = jax.vmap(mm, in_axes=(None, 0))(w, jnp.ones((3, 2, 4)))")
    assert result.success, result.error_in_exec
    number = result.execution_count
    traced = [r for r in rep.reports if r.wrapper.kind == "jax.jit"]
    assert [(r.transformed_by, r.call_site.file, r.call_site.line) for r in traced] == [
        ("jax.grad", f"In[{number}]", 2), ("jax.vmap", f"In[{number}]", 3)]
    assert not any(n.startswith("called ") for r in traced for n in r.notes)


def test_a_direct_call_beside_its_transformed_program_is_not_called_another_function(shell):
    # mm(w, x), then jax.grad(mm)(w, x): the headline is the program JAX compiled for mm under jax.grad, and mm's own call
    # was 'also called: mm, another function of that name', though it is the same function
    _define(shell, "@jax.jit\ndef mm(w, x):\n    return jnp.tanh(x @ w).sum()\nw = jnp.ones((4, 4))")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nl = mm(w, jnp.ones((2, 4)))\ng = jax.grad(mm)(w, jnp.ones((2, 4)))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.wrapper.kind) == ("mm", "jit_p (inside a transformation)")
    assert (f"also called: mm on its own, not under a transformation (called at In[{result.execution_count}]:2) "
            "(use --all or --name to show them)") in rep.notes


def test_a_call_beside_a_shown_call_whose_stations_were_not_read_is_not_said_to_have_another_signature(shell):
    # the shown call hit JAX's cache and was not read back (a lookup would run Model.__hash__ again): its signature is not
    # known, and the call before it, which traced the very signature it hit, read 'apply with another signature (f32[4])';
    # so did jax 0.7's pmap calls, which have no stations at all
    _define(shell, "class Model:\n    def __init__(self, k):\n        self.k = k\n"
                   "    @partial(jax.jit, static_argnums=0)\n    def apply(self, v):\n        return v * self.k\n"
                   "    def __hash__(self):\n        return hash(self.k)\n"
                   "    def __eq__(self, other):\n        return isinstance(other, Model) and other.k == self.k\n"
                   "m = Model(3.0)\ny = m.apply(x)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\na = m.apply(jnp.ones(4))\nb = m.apply(jnp.ones(4))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.cache_hit and report.traced is None
    assert (f"also called: apply, another call of it (called at In[{result.execution_count}]:2) "
            "(use --all or --name to show them)") in rep.notes


def test_a_jitted_body_of_an_eager_lax_scan_is_said_to_be_compiled_in_the_scan(shell):
    # blackjax's inference loop: jax.lax.scan(one_step, state, keys) outside jit, over a jitted one_step
    _define(shell, "@jax.jit\ndef one_step(c, k):\n    return c + k, c\n"
                   "def inference_loop(c0, ks):\n    return jax.lax.scan(one_step, c0, ks)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ncarry, ys = inference_loop(1.0, jnp.arange(5.0))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.function == "one_step" and not report.cache_hit
    if _jax_compat.JAX_VERSION >= (0, 10):  # JAX emits the trace event of a nested trace before 0.10
        assert report.outcome == "reached inside jax.lax.scan: JAX reports no stage timings there"
    assert ("traced inside jax.lax.scan, called outside jit: JAX compiled the whole jax.lax.scan with this call inlined, "
            "as its own eager scan (in the cell line's eager loops), not this function on its own") in report.notes
    assert not any("jax.grad" in n for n in report.notes)
    # the cell's time line: the scan JAX compiled with one_step inside it is its own part, named, not JAX's helpers
    assert (rep.eager_loops.count, rep.eager_loops.names) == (1, ("scan running one_step (In[1]:1)",))
    assert (rep.helper_compiles.count, rep.helper_compiles.names) == (1, ("iota",))
    text = " ".join(render_text(rep).split())
    traced = r"trace \S+ \S+ \+ " if _jax_compat.JAX_VERSION < (0, 10) else ""  # the nested trace's event, before 0.10
    assert re.match(rf"cell \S+ \S+ = {traced}eager jax\.lax loops \S+ \S+ \+ JAX's own helpers \S+ \S+ \+ the rest", text), text
    assert ("(1 compile of an eager jax.lax loop or branch, with the functions it runs: scan running one_step (In[1]:1)) "
            "(1 compile of JAX's own helpers folded away: iota") in text


def test_make_jaxpr_is_not_reported_as_a_call(shell):
    """On jax 0.7 the report also read 'traced inside a transformation (jax.grad, jax.vmap or an outer jit): what JAX
    compiled is the transformed function, shown as its own call': jax.make_jaxpr's ``extend_axis_env_nd([])`` sets an
    empty axis environment equal to JAX's top one but not the same object, and JAX's ``trace_state_clean`` compares them
    by identity."""
    result, _, rep = _run(shell, "%%jaxstages -o rep\njaxpr = jax.make_jaxpr(lambda v: jnp.sin(v) * 2)(1.0)")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.wrapper.kind == "jax.jit (inside jax.make_jaxpr)" and report.stations_reached == ("traced",)
    assert report.notes == ("traced by jax.make_jaxpr, not called: JAX lowered and compiled nothing for it",)
    assert report.traced.jaxpr_text == shell.user_ns["jaxpr"].pretty_print(use_color=False)
    # inside a function of the user's (JAX's gradient-checkpointing notebook, print_fwd_bwd): it also read 'then called
    # at least 0 times with this signature in the cell (calls from inside show that hit JAX's cache are not seen)'
    _define(shell, "def show(v):\n    return jax.make_jaxpr(lambda w: jnp.cos(w) + 1)(v)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\njaxpr = show(1.0)")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert report.notes == ("traced by jax.make_jaxpr, not called: JAX lowered and compiled nothing for it",)


def test_traces_ahead_of_time_beside_a_call_are_not_called(shell):
    # 'print(jax.make_jaxpr(g)(1.0)); y = k(2.0)' read 'note: also called: g' and 'your other calls 2.0 ms'
    _define(shell, "def g(v):\n    return jnp.cos(v)\ndef h(v):\n    return jnp.tan(v)\njh = jax.jit(h)")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nprint(jax.make_jaxpr(g)(1.0))\nc = jh.trace(2.0).lower().compile()\ny = f(x)")
    assert result.success, result.error_in_exec
    assert cap.stdout == str(jax.make_jaxpr(shell.user_ns["g"])(1.0)) + "\n"
    assert [r.function for r in rep.reports] == ["f"]
    assert [n for n in rep.notes if n.startswith("also")] == [
        "also traced, not called: g (jax.make_jaxpr), h (.trace(), then lowered and compiled) (use --all or --name to show them)"]
    assert rep.other_compiles.seconds == 0 and rep.ahead_of_time.count == 1 and rep.ahead_of_time.seconds > 0
    head = render_text(rep).splitlines()[0]
    assert " + ahead of time, not called " in head and "other calls" not in head


def test_a_trace_made_after_a_call_does_not_take_its_headline(shell):
    # the report was headed g, 'cache hit: JAX did not trace, lower or compile this call', and k, the cell's only call,
    # was folded into 'your other calls'
    _define(shell, "def g(v):\n    return jnp.cos(v)\ndef h(v):\n    return jnp.tan(v)\njg, jh = jax.jit(g), jax.jit(h)\n"
                   "@jax.jit\ndef k(v):\n    return v * 2\ns = jax.eval_shape(jg, 1.0)")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nl = jh.lower(3.0)\ny = k(3.0)\ns = jax.eval_shape(jg, 1.0)")
    assert result.success, result.error_in_exec
    assert [(r.function, r.call_site.line) for r in rep.reports] == [("k", 3)]
    result, _, rep = _run(shell, "%%jaxstages -o rep\nl = jh.lower(4.0)\ns = jax.eval_shape(jg, 2.0)")
    assert [(r.function, r.call_site.line) for r in rep.reports] == [("h", 2)]  # lowered beats traced


def test_eval_shape_of_a_partial_of_a_jitted_function_says_whose_jit_options_are_shown(shell):
    """flax's key-concepts guide: ``jax.eval_shape(partial(init_state, dim, nlayers))`` of
    ``@partial(jax.jit, static_argnums=(0, 1)) def init_state`` read ``function init_state``, ``static_argnums none``:
    the options of the jit jax.eval_shape made around the partial, shown as init_state's own."""
    _define(shell, "import functools\n@functools.partial(jax.jit, static_argnums=0)\ndef scaled(n, v):\n    return v * n")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ns = jax.eval_shape(functools.partial(scaled, 3), jnp.ones(3))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.wrapper.static_argnums) == ("jit(scaled)", ())  # as %jaxcache names it
    assert report.wrapper.kind == ("jax.jit that jax.eval_shape made around functools.partial(scaled, …): the options below "
                                   "are that jit's, not scaled's")
    result, _, rep = _run(shell, "%%jaxstages -o rep\ns = jax.eval_shape(functools.partial(lambda n, v: v * n, 3), jnp.ones(3))")
    assert rep.reports[0].wrapper.kind == "jax.jit (inside jax.eval_shape)"


def test_a_transformed_program_says_where_its_function_is_defined(shell):
    setup = _define(shell, "@jax.jit\ndef wave(v):\n    return jnp.sum(jnp.sin(v))")
    result, _, rep = _run(shell, "%%jaxstages --all -o rep\ng = jax.grad(wave)(jnp.ones(3))")
    transformed = [r for r in rep.reports if r.wrapper.kind.startswith("jit_p")]
    assert transformed and {(r.wrapper.defined_at.file, r.wrapper.defined_at.line) for r in transformed} == {
        (f"In[{setup.execution_count}]", 1)}


def test_calls_from_inside_a_function_are_counted_as_at_least(shell):
    _define(shell, "@jax.jit\ndef body(v):\n    return v + 1\ndef loop(v):\n    for _ in range(20):\n        v = body(v)\n    return v")
    result, _, rep = _run(shell, "%%jaxstages -o rep\nout = loop(jnp.ones(31))")
    [report] = rep.reports
    assert report.notes[-1] == ("called at least once with this signature in the cell "
                                "(calls from inside loop that hit JAX's cache are not seen)")


@pytest.mark.skipif(not PMAP_IS_JIT, reason="jax 0.7's pmap is reported from its events, by DirectCalls, already")
def test_a_pmap_called_in_a_loop_is_one_report_of_every_call(shell):
    defined = _define(shell, "def pm(v):\n    runs.append('pmap')\n    return v + 1\npf = jax.pmap(pm)\nxp = jnp.ones((1, 3))").execution_count
    result, _, rep = _run(shell, "%%jaxstages -o rep\nfor _ in range(3):\n    r = pf(xp)")
    assert result.success and shell.user_ns["runs"] == ["pmap"]
    [report] = rep.reports
    assert (report.function, report.wrapper.kind, report.repeat_hits) == ("pm", "jax.pmap", 2), report.notes
    assert "called 3 times with this signature in the cell" in report.notes


@pytest.mark.skipif(not PMAP_IS_JIT, reason="jax 0.7's pmap is reported from its events, by DirectCalls, already")
def test_a_pmap_that_hits_in_a_later_cell_is_named_a_cache_hit(shell):
    # 'pf = jax.pmap(pm); r = pf(xp)', then '%%jaxstages' over 'r = pf(xp)' in the next cell read 'no jitted call of
    # yours in this cell; the cell ran normally': the call was a hit of the jit pmap calls, which no hook sees
    _define(shell, "def pm(v):\n    runs.append('pmap')\n    return v + 1\npf = jax.pmap(pm)\nxp = jnp.ones((1, 3))\nr = pf(xp)")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nr = pf(xp)\nr = pf(xp)")
    assert result.success and shell.user_ns["runs"] == ["pmap"]
    [report] = rep.reports
    assert (report.function, report.wrapper.kind, report.cache_hit, report.repeat_hits) == ("pm", "jax.pmap", True, 1)
    assert _fully_staged(report) and report.timings.stages_run == ()
    assert _texts(cap)[0].splitlines()[2] == (f"pm: cache hit: JAX did not trace, lower or compile this call "
                                              f"(called at In[{result.execution_count}]:2)")
    assert not any("ran JAX's" in note for note in report.notes), report.notes  # read from JAX's caches, nothing again
    # a static value whose __hash__ is the user's: looking the jit up again would run it a second time
    _define(shell, "class Scale:\n    def __init__(self, k):\n        self.k = k\n    def __hash__(self):\n"
                   "        runs.append('hash')\n        return hash(self.k)\n    def __eq__(self, other):\n"
                   "        return self.k == other.k\ndef pk(v, s):\n    return v * s.k\n"
                   "pks = jax.pmap(pk, static_broadcasted_argnums=1)\ns = Scale(2)\nr = pks(xp, s)")
    hashes = shell.user_ns["runs"].count
    before = hashes("hash")
    _define(shell, "r = pks(xp, s)")
    plain, before = hashes("hash") - before, hashes("hash")
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nr = pks(xp, s)")
    assert result.success and plain > 0 and hashes("hash") - before == plain
    [report] = rep.reports
    assert (report.function, report.wrapper.kind, report.cache_hit, report.traced) == ("pk", "jax.pmap", True, None)
    assert report.notes[-1] == ("its stations are not read from JAX's caches: looking them up parses the call's arguments "
                                "again, which would run your Scale.__hash__ a second time")


def test_a_jit_the_user_made_of_a_function_of_jaxs_is_the_users_call(shell):
    # 'normal = jax.jit(jax.random.normal, static_argnums=1); y = normal(key, (3,))' read 'no jitted call of yours in
    # this cell; ... JAX compiled its own stage, _threefry_seed, normal (eager jax.numpy operations)'
    result, cap, rep = _run(shell, "%%jaxstages -o rep\nnormal = jax.jit(jax.random.normal, static_argnums=1)\n"
                                   "y = normal(jax.random.key(0), (3,))")
    assert result.success, result.error_in_exec
    [report] = rep.reports
    assert (report.function, report.call_site.line, report.timings.stages_run) == ("normal", 3, ("trace", "lower", "compile"))
    assert report.notes[0] == "jax.jit of JAX's own normal, made by your code: shown as your call"
    assert report.wrapper.static_argnums == (1,) and report.compiled is not None
    result, cap, rep = _run(shell, "%%jaxstages -o rep\ny = jax.jit(jnp.sin)(x)")
    [report] = rep.reports
    assert report.function == "jit(sin)" and report.lowered is not None and report.compiled is not None
    assert not any("ahead of time" in note for note in report.notes)
    result, cap, rep = _run(shell, "%%jaxstages -o rep\ny = jnp.cos(x)")  # JAX's own jitted cos, called eagerly
    assert rep.reports == () and rep.helper_compiles.names == ("cos",)
