"""%%jaxstages on a program sharded over 8 CPU devices (a fresh process: XLA_FLAGS is read once)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import jax
import pytest
from shellrun import wider_lines

SHELL = textwrap.dedent(
    """
    import json
    import jax
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "jaxshow")
    """
)
"""A child process's IPython shell with jaxshow loaded (8 CPU devices: :func:`_run`)."""

SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    x = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P("data", "model")))
    w = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("model", None)))

    @jax.jit
    def layer(x, w):
        return jnp.sum(jnp.tanh(x @ w))
    ''').success
    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda e, d, **k: compiles.append(k["fun_name"]) if e.endswith("backend_compile_duration") else None)
    with capture_output() as cap:
        ok = ip.run_cell("%%jaxstages -o rep\\nout = layer(x, w)").success
    report = ip.user_ns["rep"].reports[0]
    import re
    compiled = report.compiled
    views = {v.spec: [[list(t.rows), list(t.cols), list(t.devices)] for t in v.tiles] for v in compiled.sharding_views}
    expected = {}
    for name, array in (("P('data', 'model')", ip.user_ns["x"]), ("P('model', None)", ip.user_ns["w"])):
        blocks = {}
        for shard in array.addressable_shards:
            rows, cols = (s.indices(n)[:2] for s, n in zip(shard.index, array.shape))
            blocks.setdefault((rows, cols), []).append(shard.device.id)
        expected[name] = [[list(r), list(c), sorted(d)] for (r, c), d in sorted(blocks.items())]
    text = cap.outputs[0].data["text/plain"]
    from jaxshow import render
    print(json.dumps({
        "texts": {width: render.to_text(report, render.TextBudget(width=width)) for width in (100, 80)},
        "ir": [report.traced.jaxpr_text, report.lowered.module_text, compiled.optimized_hlo_text],
        "views": views,
        "expected_views": expected,
        "specs": [p.spec for p in compiled.inputs],
        "mesh": compiled.mesh,
        "device_count": compiled.device_count,
        "collectives": [[c.kind, c.count] for c in compiled.collectives],
        "all_reduce_in_hlo": len(re.findall(r"= [^\\n]*? all-reduce(?:-start)?\\(", compiled.optimized_hlo_text)),
        "per_device_caveat": "per device: one of 8 devices' share" in " ".join(text.split()),  # wrapped at the width
        "memory_per_device": "  memory analysis, per device: what each of the 8 devices holds:" in text.splitlines(),
        "buffers_per_device": "; per device: each value's shape is one device's shard):" in " ".join(text.split()),
        "mesh_line": "  mesh Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)) · 8 devices" in text.splitlines(),
        "grid_html": cap.outputs[0].data["text/html"].count('class="js-grid"'),
        "ok": ok,
        "devices": jax.device_count(),
        "compiles": compiles.count("jit(layer)"),
        "input_shardings": [p.sharding for p in report.compiled.inputs],
        "arg_shardings": [a.sharding for a in report.traced.args],
        "hlo_has_all_reduce": "all-reduce" in report.compiled.optimized_hlo_text,
        "num_partitions": "num_partitions = 8" in report.lowered.module_text,
        "html_ok": "axis_types=(Auto, Auto)) · 8 devices" in cap.outputs[0].data["text/html"],
        "traced_text": text.split("② Traced")[1].split("  effects")[0].splitlines(),
        "traced_html": "mesh Mesh(&#x27;data&#x27;: 2" in cap.outputs[0].data["text/html"] or
                       "mesh Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)) (each sharding below is a spec on it)"
                       in cap.outputs[0].data["text/html"],
    }))
    """
)


def _run(script: str) -> dict:
    """The JSON ``script`` prints last, run in a fresh process on 8 CPU devices."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_sharded_program_on_eight_devices():
    result = _run(SCRIPT)
    assert result["ok"] and result["devices"] == 8
    assert result["compiles"] == 1, "the walk compiled the sharded program again"
    assert ["('data', 'model')" in result["input_shardings"][0], "('model', None)" in result["input_shardings"][1]] == [True, True], result
    assert result["specs"] == ["P('data', 'model')", "P('model', None)"]
    # Under Auto axes an aval's type says P(None, None) whatever the placement: the Traced station shows where
    # the caller placed each argument, as the compiled program's input shardings do.
    assert result["arg_shardings"] == result["input_shardings"]
    # ... as a spec under the mesh, named once (the whole NamedSharding was ~150 characters a row)
    assert result["traced_text"] == [
        ": 3 equations, 2 inputs → 1 output",
        "  mesh Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)) (each sharding below is a spec on it)",
        "    argument  type        sharding            donated",
        "    x         f32[16,32]  P('data', 'model')  no",
        "    w         f32[32,8]   P('model', None)    no",
        "    output  type   sharding",
        "    result  f32[]  —",
    ]
    assert result["traced_html"]
    assert result["mesh"] == "Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto))" and result["device_count"] == 8
    assert result["mesh_line"] and result["per_device_caveat"]
    # XLA's memory analysis of a partitioned program is one device's: x's f32[16,32] argument is a f32[8,8] shard there
    assert result["memory_per_device"] and result["buffers_per_device"]
    # The device grids match the arrays' own shards (Array.addressable_shards), block by block.
    assert {k: result["views"][k] for k in result["expected_views"]} == result["expected_views"]
    assert len(result["expected_views"]["P('data', 'model')"]) == 8 and len(result["expected_views"]["P('model', None)"]) == 4
    assert result["grid_html"] == len(result["views"])
    assert result["collectives"] == [["all-reduce", result["all_reduce_in_hlo"]]] and result["all_reduce_in_hlo"] >= 1
    assert result["hlo_has_all_reduce"] and result["num_partitions"] and result["html_ok"]
    # Headings, notes, the memory picture and the sharding views' titles wrap at the width with a hanging indent; only IR lines (the
    # collective's numbered HLO lines among them) run past it. They ran to 120 columns at 100.
    for width, text in result["texts"].items():
        assert wider_lines(text, int(width), *result["ir"]) == [], width
    lines = result["texts"]["80"].splitlines()
    cost = lines.index("  cost analysis, estimated before compiler optimisations")
    assert lines[cost + 1] == "    (Lowered.cost_analysis), for the whole program (all 8 devices):"
    buffers = lines.index("  largest buffers (optimised HLO, entry computation: 6 values; per device: each")
    assert lines[buffers + 1:buffers + 5] == ["    value's shape is one device's shard):",
                                              "    (each value's own size; XLA may place temporaries whose lifetimes do not",
                                              "     overlap in one allocation, and values inside loops and fusions are not",
                                              "     listed)"]


RECOMPILE_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    auto = (AxisType.Auto, AxisType.Auto)
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=auto)
    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    w = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("model", None)))

    @jax.jit
    def layer(x, w):
        return jnp.tanh(x @ w).sum(axis=0)
    layer(x, w)
    ''').success
    texts = []
    for cell in (
        # same shapes, another sharding of x: under Auto axes JAX reuses the trace and compiles again
        "%%jaxcache -o moved\\nx2 = jax.device_put(x, NamedSharding(mesh, P('model', 'data')))\\ny = layer(x2, w)",
        # another mesh with the same axis names: JAX traces again, and spells both types the same
        "%%jaxcache -o remeshed\\nmesh2 = jax.make_mesh((4, 2), ('data', 'model'), axis_types=auto)\\n"
        "y = layer(jax.device_put(x, NamedSharding(mesh2, P('data', 'model'))), "
        "jax.device_put(w, NamedSharding(mesh2, P('model', None))))",
        # arrays on one device, no mesh: JAX traces again, and writes the types 'f32[8,8]({})'
        "%%jaxcache -o unplaced\\ny = layer(jnp.ones((8, 8)), jnp.ones((8, 16)))",
        # Explicit axes: another placement is another type, each written with the same mesh axis types
        "%%jaxcache -o explicit\\nemesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(AxisType.Explicit,) * 2)\\n"
        "twice = jax.jit(lambda v: v * 2)\\nfor spec in (P('data', 'model'), P('model', 'data')):\\n"
        "    y = twice(jax.device_put(x, NamedSharding(emesh, spec)))",
        # the first mesh's axes over its devices in reverse order: JAX compiles again, and nothing else is new
        "%%jaxcache -o reordered\\nimport numpy as np\\n"
        "rmesh = jax.sharding.Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ('data', 'model'), axis_types=auto)\\n"
        "y = layer(jax.device_put(x, NamedSharding(rmesh, P('data', 'model'))), jax.device_put(w, NamedSharding(rmesh, P('model', None))))",
        # a hit, then x placed otherwise: the compile again names x against the hit's placement, w as before
        "%%jaxcache -o again\\ny = layer(x, w)\\ny = layer(jax.device_put(x, NamedSharding(mesh, P(None, 'data'))), w)",
    ):
        with capture_output() as cap:
            assert ip.run_cell(cell).success
        texts.append(cap.outputs[-1].data["text/plain"])
    moved, remeshed, unplaced, explicit, reordered, again = (
        ip.user_ns[n] for n in ("moved", "remeshed", "unplaced", "explicit", "reordered", "again"))
    print(json.dumps({
        "moved": [[f.function, f.calls, f.traced, f.hits, list(f.recompiled)] for f in moved.functions],
        "moved_head": texts[0].splitlines()[0],
        "moved_note": [n for n in moved.notes if n.startswith("layer:")],
        "remeshed": [[m.category, [[c.where, c.now, c.before] for c in m.changes]] for m in remeshed.misses],
        "unplaced": [[m.category, [[c.where, c.now, c.before] for c in m.changes]] for m in unplaced.misses],
        "explicit": [[m.category, [[c.where, c.now, c.before] for c in m.changes]] for m in explicit.misses],
        "reordered": [[f.function, f.traced, list(f.recompiled)] for f in reordered.functions],
        "again": [[f.function, f.calls, f.traced, f.hits, list(f.recompiled)] for f in again.functions],
    }))
    """
)


def test_a_compile_for_a_new_sharding_and_a_trace_for_a_new_mesh_are_named():
    result = _run(RECOMPILE_SCRIPT)
    placed = "x P('model', 'data'), w P('model', None) on Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto))"
    # was: 'no cache miss: every jitted call hit the cache', a hit, while JAX lowered and compiled layer again
    assert result["moved"] == [["layer", 1, 0, 0, [placed]]]
    assert result["moved_head"] == "%jaxcache — no trace, but 1 call compiled from an earlier trace (see the note)"
    assert result["moved_note"] == [
        "layer: 1 call compiled without a new trace: JAX reused an earlier trace and lowered it anew for what it does not "
        f"trace for: an argument's sharding or device, or that jax.device_put committed it to its device (the last such "
        f"call's arguments: {placed}), donation, the "
        "options of another jax.jit wrapper of layer, or a first call of its own after a call inside another jitted "
        "function, which traced it there but compiled only that function, or after jax.eval_shape, "
        "jax.make_jaxpr or .trace(), which trace it and compile nothing"]
    # was: x: now f32[8,8]({Auto: ('data', 'model')}), before f32[8,8]({Auto: ('data', 'model')})
    assert result["remeshed"] == [["input_types", [
        ["x", "f32[8,8] on mesh ('data': 4, 'model': 2)", "f32[8,8] on mesh ('data': 2, 'model': 4)"],
        ["w", "f32[8,16] on mesh ('data': 4, 'model': 2)", "f32[8,16] on mesh ('data': 2, 'model': 4)"]]]]
    # was: x: now f32[8,8]({}), before f32[8,8]({Auto: ('data', 'model')})
    assert result["unplaced"] == [["input_types", [
        ["x", "f32[8,8] (no mesh)", "f32[8,8] on mesh ('data': 4, 'model': 2)"],
        ["w", "f32[8,16] (no mesh)", "f32[8,16] on mesh ('data': 4, 'model': 2)"]]]]
    # was: v: now f32[8@model,8@data]({Explicit: ('data', 'model')}), before f32[8@data,8@model]({Explicit: ('data', 'model')})
    assert result["explicit"] == [["never_seen", []], ["input_types", [["v", "f32[8@model,8@data]", "f32[8@data,8@model]"]]]]
    # was: '... on Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto))', word for word the placement layer compiled for before
    assert result["reordered"] == [["layer", 0, ["x P('data', 'model'), w P('model', None) on Mesh('data': 2, 'model': 4, "
                                                 "axis_types=(Auto, Auto)) (its devices in the order 7, 6, 5, 4, 3, 2, 1, 0)"]]]
    # was: "x P(None, 'data'), w P('model', None) on Mesh(...)", the argument placed otherwise not told apart
    assert result["again"] == [["layer", 2, 0, 1, ["x: now P(None, 'data'), before P('data', 'model'); 1 other array placed "
                                                   "as before (on Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)))"]]]


REDUCED_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    mesh = jax.make_mesh((2,), ('i',)); jax.set_mesh(mesh)
    x_sharded = jax.device_put(jnp.arange(8.), jax.P('i'))
    x_unreduced = jnp.einsum('i,i->', x_sharded, x_sharded, out_sharding=jax.P(unreduced={'i'}))
    x_reduced = jax.reshard(jnp.arange(4.), jax.P(reduced={'i'}))
    ''').success
    texts = []
    for cell in (
        # the shard_map guide's eager call: JAX's own jitted _unmatch/_match helpers carry each argument's spec
        "%%jaxstages\\n@jax.shard_map(in_specs=(jax.P('i'), jax.P(), jax.P(unreduced={'i'}), jax.P(reduced={'i'})), "
        "out_specs=jax.P('i'))\\ndef f(a, b, c, d): return a\\n_ = f(x_sharded, jnp.arange(4.), x_unreduced, x_reduced)",
        "%%jaxstages\\n_ = jax.jit(f)(x_sharded, jnp.arange(4.), x_unreduced, x_reduced)",
    ):
        with capture_output() as cap:
            assert ip.run_cell(cell).success
        texts.append(cap.outputs[-1].data["text/plain"])
    print(json.dumps({"eager": texts[0].splitlines(), "jitted": texts[1].splitlines()}))
    """
)


@pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=f"jax {jax.__version__} has no jax.reshard or reduced axes (0.8), "
                    "or no eager shard_map of unreduced/reduced inputs (0.9: NotImplementedError)")
def test_specs_with_reduced_and_unreduced_axes_are_read_and_written_as_jax_writes_them():
    # was: "jaxshow could not read the stations of <unknown>: ValueError: Using *pspec is dangerous when PartitionSpec
    # has non-empty unreduced/reduced set" and "also compiled for <unknown> under a transformation: 1 more program"
    result = _run(REDUCED_SCRIPT)
    assert result["eager"][1:] == [
        "(5 compiles of JAX's own helpers folded away: _unmatch ×4, _match)",
        "note: no jitted call of yours seen in this cell; the cell ran normally. JAX compiled its own helpers",
        "  (_match, _unmatch: jax.shard_map run outside jit, which runs the function it maps (yours too, if",
        "  any) one operation at a time on each device's block and splits and joins the arrays; under jax.jit",
        "  it compiles as one program)",
    ]
    start = result["jitted"].index("② Traced: 1 equation, 4 inputs → 1 output")
    kind = ", unreduced_kind=sum" if hasattr(jax.P(), "unreduced_kind") else ""  # jax >= 0.11 writes the kind
    assert [" ".join(row.split()) for row in result["jitted"][start + 1:start + 7]] == [
        "mesh Mesh('i': 2, axis_types=(Explicit,)) (each sharding below is a spec on it)",
        "argument type sharding donated",
        "a f32[8] P('i') no",
        "b f32[4] P(None) no",
        f"c f32[] P(unreduced={{'i'}}{kind}) no",
        "d f32[4] P(None, reduced={'i'}) no",
    ]


EACH_CELLS_REPORT = textwrap.dedent(
    """
    out = {}
    for name, cell in cells:
        with capture_output() as cap:
            assert ip.run_cell(cell).success
        rep = ip.user_ns["rep"]
        out[name] = {"lines": cap.outputs[-1].data["text/plain"].splitlines(),
                     "reports": [[r.function, r.wrapper.kind, r.under_transform] for r in rep.reports],
                     "jitted_calls": rep.jitted_calls}
    print(json.dumps(out))
    """
)
"""The end of a script that runs its ``cells`` (``(name, cell)``) and prints each one's report: its text lines, each
report's function, wrapper kind and whether it was under a transformation, and the jitted calls counted."""


HIGH_TYPED_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    mesh = jax.make_mesh((2,), ('i',)); jax.set_mesh(mesh)
    x_sharded = jax.device_put(jnp.arange(8.), jax.P('i'))
    x_unreduced = jnp.einsum('i,i->', x_sharded, x_sharded, out_sharding=jax.P(unreduced={'i'}))
    ''').success
    cells = (
        ("argument", "%%jaxstages -o rep\\n@jax.jit\\ndef g(c): return c\\n_ = g(x_unreduced)"),
        ("inside", "%%jaxstages -o rep\\n@jax.jit\\ndef h(a):\\n  u = jnp.einsum('i,i->', a, a, out_sharding=jax.P(unreduced={'i'}))\\n"
                   "  return jax.reshard(u, jax.P())\\n_ = h(x_sharded)"),
    )
    """
) + EACH_CELLS_REPORT


@pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=f"jax {jax.__version__} has no jax.reshard or reduced axes (0.8)")
def test_a_jit_of_unreduced_values_jax_lowers_before_dispatch_is_one_call_of_the_users_jit():
    # was (jax 0.12.1, which lowers such a jaxpr to plain types before it dispatches it): "g: lower · compile",
    # "note: compiled for a transformation of g (its derivative under jax.grad, …)", "wrapper jit_p (inside a
    # transformation)" and "also called: g on its own"; eager shard_map's _unmatch of an unreduced input read "<unknown>"
    result = _run(HIGH_TYPED_SCRIPT)
    assert _call_shown(result["argument"]["lines"], "g") == [
        "cell T = trace T + lower T + compile T + the rest (running, Python) T",
        "g: trace T · lower T · compile T (called at In[1]:4)",
        "① jax.jit wrapper",
        "    function         g",
        "    wrapper          jax.jit",
        "    defined at       In[1]:2 (g)",
    ]
    assert _call_shown(result["inside"]["lines"], "h") == [
        "cell T = trace T + lower T + compile T + the rest (running, Python) T",
        "h: trace T · lower T · compile T (called at In[1]:6)",
        "① jax.jit wrapper",
        "    function         h",
        "    wrapper          jax.jit",
        "    defined at       In[1]:2 (h)",
    ]
    assert [result["argument"]["reports"], result["inside"]["reports"]] == [[["g", "jax.jit", False]], [["h", "jax.jit", False]]]
    assert [result["argument"]["jitted_calls"], result["inside"]["jitted_calls"]] == [1, 1]


SCANNED_UNREDUCED_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    jax.set_mesh(jax.make_mesh((2,), ('X',)))
    ws = jax.device_put(jnp.float32(0.), jax.P(reduced={'X'}))
    xs = jax.device_put(jnp.ones((5, 4)), jax.P(None, 'X'))
    ''').success
    cell = '''%%jaxstages -o rep
    @jax.jit
    def step(ws, xs):
      def body(acc, x):
        return acc + jnp.einsum('i,i->', x, x, out_sharding=jax.P(unreduced={'X'})), None
      acc, _ = jax.lax.scan(body, jax.reshard(jnp.zeros_like(ws), jax.P(unreduced={'X'})), xs)
      return jax.reshard(acc, jax.P())
    _ = step(ws, xs)
    '''
    cells = (("called", cell), ("lowered", "%%jaxstages -o rep\\nt = step.lower(ws, xs).compile()"))
    """
) + EACH_CELLS_REPORT


@pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=f"jax {jax.__version__} has no jax.reshard or reduced axes (0.8)")
def test_a_jit_whose_scan_carries_an_unreduced_value_is_one_call_of_the_users_jit():
    # was (jax 0.12.1, whose lowering of the scan's unreduced carry to plain types traces JAX's own helpers between
    # the trace of step and its dispatch): "step: lower · compile", "note: compiled for a transformation of step",
    # "wrapper jit_p (inside a transformation)" and "also called: step on its own"; its trace read "your other calls"
    result = _run(SCANNED_UNREDUCED_SCRIPT)["called"]
    shown = _call_shown(result["lines"], "step")
    assert shown[1:] == [
        "step: trace T · lower T · compile T (called at In[1]:8)",
        "① jax.jit wrapper",
        "    function         step",
        "    wrapper          jax.jit",
        "    defined at       In[1]:2 (step)",
    ]
    assert ["your other calls" in shown[0], "also called" in shown[0]] == [False, False]
    assert [result["reports"], result["jitted_calls"]] == [[["step", "jax.jit", False]], 1]


@pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=f"jax {jax.__version__} has no jax.reshard or reduced axes (0.8)")
def test_a_lower_of_a_jit_of_high_types_is_the_cells_own_ahead_of_time_lowering():
    # was (jax 0.12.1, whose Traced.lower() lowers its jaxpr of high types to plain types first): two rows, "also traced,
    # not called: step (.lower())" and "step: lowering cache hit", "note: lowered from a jax.stages.Traced made before
    # this cell", its jaxpr the plain-typed one
    result = _run(SCANNED_UNREDUCED_SCRIPT)["lowered"]
    shown = _call_shown(result["lines"], "step")
    assert shown == [
        "cell T = the rest (running, Python) T",
        "step: cache hit: JAX did not trace, lower or compile this call (called at In[1]:2)",
        "  note: lowered ahead of time in the cell (.lower()); compiled too",
        "① jax.jit wrapper",
        "    function         step",
        "    wrapper          jax.jit",
    ]
    assert [result["reports"], result["jitted_calls"]] == [[["step", "jax.jit", False]], 0]


def _call_shown(lines: list[str], name: str) -> list[str]:
    """A cell report's lines down to its one call's wrapper rows: everything above that call joined into one line (the
    width wraps it where times are long), each time read as ``T``."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}: "))
    shown = [" ".join(" ".join(lines[:start]).split()), *lines[start:start + 5]]
    return [re.sub(r"\d+(\.\d+)? (µs|ms|s)\b", "T", line) for line in shown]


RECOMPILED_UNREDUCED_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    def unreduced_on(devices):
        mesh = jax.make_mesh((2,), ('i',), devices=devices)
        with jax.set_mesh(mesh):
            xs = jax.device_put(jnp.arange(8.), jax.P('i'))
            return jnp.einsum('i,i->', xs, xs, out_sharding=jax.P(unreduced={'i'})), mesh
    u01, m01 = unreduced_on(jax.devices()[:2])
    u23, m23 = unreduced_on(jax.devices()[2:4])
    g = jax.jit(lambda c: c)
    ''').success
    texts = []
    for cell in ("%jaxcache on", "with jax.set_mesh(m01): y = g(u01)", "with jax.set_mesh(m23): y = g(u23)", "%jaxcache off"):
        with capture_output() as cap:
            assert ip.run_cell(cell).success
        texts.append([" ".join(o.data["text/plain"].split()) for o in cap.outputs])
    print(json.dumps(texts))
    """
)


@pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=f"jax {jax.__version__} has no reduced axes (0.8)")
def test_jaxcache_on_tells_of_a_compile_without_trace_of_a_jit_of_an_unreduced_value():
    # was (jax 0.12.1, which dispatches such a jit's jaxpr lowered to plain types): %jaxcache on said nothing of the
    # compile for the same trace on other devices, as it says of any other argument placed otherwise
    texts = _run(RECOMPILED_UNREDUCED_SCRIPT)
    assert [len(t) for t in texts] == [0, 1, 1, 0]
    assert texts[2][0].startswith(
        "%jaxcache — no trace, but 1 call compiled from an earlier trace (see the note) function calls traced hits cache "
        "entries defined at -------- ----- ------ ---- ------------- ---------- <lambda> — 0 — — In[1]:9 ")
    assert "note: <lambda>: 1 call compiled without a new trace: JAX reused an earlier trace and lowered it anew" in texts[2][0]


PLACED_AGAIN_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    x2 = jax.device_put(x, NamedSharding(mesh, P("model", "data")))
    w = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("model", None)))
    d0, d3 = (jax.device_put(jnp.ones(4), jax.devices()[i]) for i in (0, 3))

    @jax.jit
    def layer(x, w):
        return jnp.tanh(x @ w).sum(axis=0)
    k = jax.jit(lambda v: v + 1)
    ''').success
    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda e, d, **k: compiles.append(k["fun_name"]) if e.endswith("backend_compile_duration") else None)
    out = {}
    for name, cell in (("sharded", "y1 = layer(x, w)\\ny2 = layer(x2, w)"), ("device", "print(k(d0).devices(), k(d3).devices())"),
                       ("unplaced", "z1 = layer(jnp.ones((8, 8)), jnp.ones((8, 16)))\\nz2 = layer(x, w)")):
        with capture_output() as cap:
            assert ip.run_cell("%%jaxstages -o rep\\n" + cell).success
        rep = ip.user_ns["rep"]
        out[name] = {"inputs": [[p.path, p.spec or p.sharding] for p in rep.reports[0].compiled.inputs],
                     "args": [[a.path, a.spec] for a in rep.reports[0].traced.args],
                     "notes": list(rep.reports[0].notes), "cell_notes": list(rep.notes),
                     "collectives": [[c.kind, c.count] for c in rep.reports[0].compiled.collectives],
                     "stdout": cap.stdout}
    lowered = ip.user_ns["layer"].lower(ip.user_ns["x2"], ip.user_ns["w"]).compile()
    import re
    out["x2_collectives"] = sorted([k, len(re.findall(" " + k + "(?:-start)?\\\\(", lowered.as_text()))] for k in ("all-reduce", "all-gather", "collective-permute", "all-to-all") if " " + k + "(" in lowered.as_text())
    out["x2_input_specs"] = [str(s.spec).replace("PartitionSpec(", "P(") for s in lowered.input_shardings[0]]  # jax 0.7's str
    out["compiles"] = compiles
    with capture_output():
        assert ip.run_cell("%%jaxstages --diff -o rep\\ny3 = layer(x, w)").success
    out["diff"] = [[c.where, c.now, c.before] for c in ip.user_ns["rep"].diffs[0].key_changes]
    out["diff_collectives"] = [[q.name, q.before, q.now] for q in ip.user_ns["rep"].diffs[0].quantities if "collective" in q.name]
    out["diff_now_collectives"] = [[c.kind, c.count] for c in ip.user_ns["rep"].reports[0].compiled.collectives]
    print(json.dumps(out))
    """
)


def test_a_call_compiled_again_for_another_placement_is_the_call_shown():
    # was: 'layer(x, w); layer(x2, w)' with x2 placed otherwise showed the first call's program, x P('data', 'model'), under
    # 'called 2 times with this signature in the cell', while JAX lowered and compiled layer again for x2's placement (other
    # collectives): the calls share a trace, not a program. Likewise k(d0), k(d3): the report was device 0's program.
    result = _run(PLACED_AGAIN_SCRIPT)
    sharded, device = result["sharded"], result["device"]
    assert result["compiles"] == ["jit(layer)", "jit(layer)", "jit(<lambda>)", "jit(<lambda>)", "jit(layer)"]
    assert sharded["inputs"] == [["x", "P('model', 'data')"], ["w", "P('model', None)"]] and sharded["inputs"] == [
        [p, s] for p, s in zip(("x", "w"), result["x2_input_specs"])]
    assert sharded["args"] == [["x", "P('model', 'data')"], ["w", "P('model', None)"]]
    assert sorted(sharded["collectives"]) == result["x2_collectives"]
    assert sharded["notes"] == []
    assert sharded["cell_notes"] == ["also called: layer compiled again for another placement of its arguments (x "
                                     "P('data', 'model'), w P('model', None)) (use --all or --name to show them)"]
    # --diff against layer's previous compile (x2's): was the whole NamedSharding twice, 'f32[8,8]
    # NamedSharding(mesh=Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)), spec=P('data', 'model'), memory_kind=device)'
    assert result["diff"] == [["x", "f32[8,8] P('data', 'model')", "f32[8,8] P('model', 'data')"]]
    # and what the placement did to the program's collectives (x2's, the previous compile's, are sharded["collectives"])
    before, now = dict(sharded["collectives"]), dict(result["diff_now_collectives"])
    assert result["diff_collectives"] == [[f"collectives: {kind}", before.get(kind, 0), now.get(kind, 0)]
                                          for kind in sorted({*before, *now}) if before.get(kind, 0) != now.get(kind, 0)] != []
    assert device["stdout"] == "{CpuDevice(id=0)} {CpuDevice(id=3)}\n"
    assert device["inputs"][0][0] == "v" and device["inputs"][0][1].startswith("SingleDeviceSharding(device=CpuDevice(id=3), ")
    assert device["notes"] == []
    assert device["cell_notes"] == ["also called: <lambda> compiled again for another placement of its arguments "
                                    "(use --all or --name to show them)"]
    # arrays on no mesh have other types than arrays on a mesh (JAX traced again: 'now f32[8,8]({}), before
    # f32[8,8]({Auto: ('data', 'model')})'): this read 'layer with another input pytree (the same argument types, traced again)'
    assert result["unplaced"]["cell_notes"] == [
        "also called: layer with another signature (f32[8,8] (no mesh), f32[8,16] (no mesh)) (use --all or --name to show them)"]


LOOP_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("dp", "tp"), axis_types=(AxisType.Auto, AxisType.Auto))
    ws = jax.device_put(jnp.ones((6, 32, 32)) * 0.01, NamedSharding(mesh, P(None, None, "tp")))
    h0 = jax.device_put(jnp.ones((8, 32)), NamedSharding(mesh, P("dp", None)))

    @jax.jit
    def stack(ws, h):
        def layer(h, w):
            return jax.lax.with_sharding_constraint(jnp.tanh(h @ w), NamedSharding(mesh, P("dp", None))), None
        return jax.lax.scan(layer, h, ws)[0].sum()
    ''').success
    with capture_output() as cap:
        assert ip.run_cell("%%jaxstages -o rep\\nout = stack(ws, h0)").success
    c = ip.user_ns["rep"].reports[0].compiled
    hlo = c.optimized_hlo_text.splitlines()
    text = cap.outputs[-1].data["text/plain"].splitlines()
    at = next(i for i, row in enumerate(text) if "in the optimised HLO" in row)
    print(json.dumps({"counts": [[k.kind, k.count, k.in_loops, list(k.lines)] for k in c.collectives],
                      "lines": {k.kind: [hlo[n - 1] for n in k.lines] for k in c.collectives},
                      "text": text[at:at + 4]}))
    """
)


def test_a_collective_in_a_loop_body_is_said_to_run_each_iteration():
    # was: '2 collectives in the optimised HLO: all-gather ×1, all-reduce ×1', the all-gather inside the scan's while
    # body, which XLA runs 6 times a call, the all-reduce once after it
    result = _run(LOOP_SCRIPT)
    (gather,), (reduce,) = (lines for *_, lines in result["counts"])
    assert result["counts"] == [["all-gather", 1, 1, [gather]], ["all-reduce", 1, 0, [reduce]]]
    assert " all-gather(" in result["lines"]["all-gather"][0] and " all-reduce(" in result["lines"]["all-reduce"][0]
    assert result["text"][0] == "  2 collectives in the optimised HLO: all-gather ×1 (1 in a loop body: it runs every iteration),"
    assert result["text"][1] == "    all-reduce ×1:"
    assert [" ".join(row.split()) for row in result["text"][2:4]] == [f"all-gather 1 lines {gather}", f"all-reduce 1 lines {reduce}"]


SHARD_MAP_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    try:
        from jax import shard_map
    except ImportError:  # jax 0.7
        from jax.experimental.shard_map import shard_map
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data", "model")))

    @jax.jit
    def inner(b):
        return jnp.sin(b) * 2

    @jax.jit
    def outer(x):
        return shard_map(lambda b: jax.lax.psum(inner(b).sum(), ("data", "model")), mesh=mesh,
                         in_specs=P("data", "model"), out_specs=P())(x)
    outer(x)
    ''').success
    with capture_output() as cap:
        assert ip.run_cell("%%jaxcache -o rep\\ninner(x)").success
    [row] = [r for r in ip.user_ns["rep"].functions if r.function == "inner"]
    print(json.dumps({"misses": [[m.category, m.summary] for m in row.misses],
                      "text": " ".join(cap.outputs[-1].data["text/plain"].split())}))
    """
)


XLA_CHOSEN_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, PartitionSpec as P
    try:
        from jax import shard_map
    except ImportError:  # jax 0.7
        from jax.experimental.shard_map import shard_map
    mesh = jax.make_mesh((8,), ("i",), axis_types=(AxisType.Auto,))

    @jax.jit
    def total(v):
        return shard_map(lambda b: jax.lax.psum(b.sum(), "i")[None], mesh=mesh, in_specs=P("i"), out_specs=P("i"))(v)
    ''').success
    with capture_output() as cap:
        assert ip.run_cell("%%jaxstages -o rep\\ny = total(jnp.arange(16.0))").success
    compiled = ip.user_ns["rep"].reports[0].compiled
    text = cap.outputs[-1].data["text/plain"].splitlines()
    print(json.dumps({"inputs": [p.spec for p in compiled.inputs], "views": [v.spec for v in compiled.sharding_views],
                      "text": [line for line in text if "e.g." in line or "alike" in line]}))
    """
)


def test_a_sharding_xla_chose_for_a_shard_map_input_reads_as_a_spec_on_the_mesh():
    """jit gave ``v`` no sharding, so XLA chose one from the shard_map's in_specs: a ``GSPMDSharding``, which the
    Compiled station showed as JAX's repr, 'GSPMDSharding({devices=[8]<=[8]}, memory_kind=device) — 1 input or output',
    beside 'P('i') — 1 input or output' for the output placed alike. It reads as the spec on the program's mesh. On
    jax 0.7, whose CPU arrays are in memory kind 'unpinned_host' where nothing was asked, the placement read
    'P('i') in unpinned_host': the render said every kind but 'device' beside a spec, where capture's rule (and the
    Traced station's) leaves out both."""
    result = _run(XLA_CHOSEN_SCRIPT)
    assert (result["inputs"], result["views"]) == (["P('i')"], ["P('i')"])
    assert result["text"] == ["  P('i') — 2 inputs and outputs, e.g. v [16]",
                              "  shardings and formats: the input and the output alike, P('i'), in default layouts (row-major)"]


def test_a_jitted_helper_traced_inside_shard_map_and_then_outside_says_so():
    """``inner`` traced inside ``jax.shard_map`` then called at top level read JAX's words: 'abstract_mesh_context_manager:
    now AbstractMesh('data': 4, …, axis_types=(Explicit, Explicit), …), before AbstractMesh(…, axis_types=(Manual, Manual),
    …); check_vma: now False, before True; axis_env_state: now <jax._src.core.AxisEnv object at 0x7ff4…>, before <…>'."""
    result = _run(SHARD_MAP_SCRIPT)
    said = ("shard_map: now outside shard_map, before inside shard_map over mesh ('data': 4, 'model': 2) (axis names data, "
            "model bound); b: now f32[16@data,8@model], before f32[4,4]{V:(data,model)}")  # one shard's type in there
    if jax.__version_info__ < (0, 8):  # jax 0.7 prints the varying axes as a set, in the set's order: {model,data}
        [[category, summary]] = result["misses"]
        head, axes = re.fullmatch(r"(.*)\{([a-z,]+)\}", summary).groups()
        result["misses"] = [[category, head + ("{V:(data,model)}" if sorted(axes.split(",")) == ["data", "model"] else axes)]]
        result["text"] = result["text"].replace(summary, result["misses"][0][1])
    assert result["misses"] == [["tracing_context", said]]
    assert f"1. different tracing context (a config option or context manager): {said} called at In[" in result["text"]
    assert "AxisEnv object" not in result["text"].split("JAX's explanation")[0]


MISMATCH_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    a = jax.make_mesh((2,), ("x",), devices=jax.devices()[:2])
    b = jax.make_mesh((2,), ("x",), devices=jax.devices()[2:4])
    xa = jax.device_put(jnp.ones(4), NamedSharding(a, P("x")))

    @jax.jit
    def move(v):
        return jax.device_put(v, NamedSharding(b, P("x")))
    ''').success
    with capture_output() as cap:
        result = ip.run_cell("%%jaxstages -o rep\\nmove(xa)")
    [report] = ip.user_ns["rep"].reports
    print(json.dumps({"raised": [type(result.error_in_exec).__name__, str(result.error_in_exec)],
                      "error": [report.error.type_name, report.error.message, report.error.stage],
                      "text": cap.outputs[0].data["text/plain"].splitlines()[1:3]}))
    """
)


def test_a_call_whose_error_jax_raised_anew_reports_the_error_the_cell_raised():
    """JAX's placement notebook: a jitted function moving its argument to another mesh's devices raised
    'ValueError: Received incompatible devices ...' in the cell, and its report read 'failed while lowering:
    DeviceAssignmentMismatchError: [DeviceAssignmentMismatch(da=(CpuDevice(id=0), ...' beside 'the cell raised
    ValueError: ...': the internal error jax.jit caught and raised the ValueError in place of (from None)."""
    result = _run(MISMATCH_SCRIPT)
    kind, message = result["raised"]
    assert kind == "ValueError" and message.startswith("Received incompatible devices for jitted computation.")
    assert result["error"] == ["ValueError", re.sub(r"at \S+:(\d+):(\d+) \(move\)", r"at In[1]:\1:\2 (move)", message), "lower"]
    assert result["text"] == ["the cell raised this ValueError (its traceback is in the cell's output)", ""]


SHARD_MAP_COST_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    try:
        from jax import shard_map
    except ImportError:  # jax 0.7
        from jax.experimental.shard_map import shard_map
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.ones((64, 128)), NamedSharding(mesh, P("data", "model")))
    b = jax.device_put(jnp.ones((128, 32)), NamedSharding(mesh, P("model", None)))

    def body(a, b):
        c, _ = jax.lax.scan(lambda c, _: (c + a @ b, None), a[:, :32] * 0.0, None, length=3)
        return jax.lax.psum(c, "model")

    step = jax.jit(shard_map(body, mesh=mesh, in_specs=(P("data", "model"), P("model", None)), out_specs=P("data", None)))
    ''').success
    with capture_output() as cap:
        assert ip.run_cell("%%jaxstages -o rep\\nout = step(a, b)").success
    report = ip.user_ns["rep"].reports[0]
    lowered = jax.jit(ip.user_ns["step"]).lower(ip.user_ns["a"], ip.user_ns["b"]).cost_analysis()
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    print(json.dumps({"flops": report.lowered.cost.flops, "jax_flops": (lowered[0] if isinstance(lowered, list) else lowered)["flops"],
                      "label": text.split("cost analysis, estimated")[1].split(":")[0],
                      "dots": report.traced.dot_flops_estimate}))
    """
)


def test_the_lowered_cost_of_a_shard_map_program_says_its_bodies_are_counted_per_shard():
    """jax.shard_map's body is lowered at one shard's shapes, so ``Lowered.cost_analysis`` counts it once, at that
    shard's size: for a(64×128) @ b(128×32) split over 8 devices, JAX's figure is 1/8 of the global 2·64·128·32 per
    matmul. The Lowered station called it 'for the whole program (all 8 devices)', and the jaxpr's matmul estimate
    (scan of 3) said 'whole program' for one shard's 3 × 65,536 FLOP."""
    result = _run(SHARD_MAP_COST_SCRIPT)
    assert result["flops"] == result["jax_flops"]
    assert result["label"] == (" before compiler optimisations (Lowered.cost_analysis), for the whole program (all 8 "
                               "devices) except inside shard_map, counted there at one shard's shapes")
    assert result["dots"] == 3 * 2 * 64 * 128 * 32


STAGES_API_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    import jaxshow
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    from jaxshow import render
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    w = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("model", None)))
    report = jaxshow.stages(jax.jit(lambda x, w, n: jnp.tanh(x @ w).sum(0) * n), x, w, np.ones(16, np.float32))
    text = render.to_text(report).splitlines()
    start = text.index("② Traced: 4 equations, 3 inputs → 1 output")
    with_none = jaxshow.stages(jax.jit(lambda d, y: d["a"] * 2 + y), {"a": x, "b": None}, x)  # a row for the None
    print(json.dumps({"args": [[a.path, a.spec] for a in report.traced.args],
                      "inputs": [[p.path, p.spec] for p in report.compiled.inputs],
                      "text": [" ".join(row.split()) for row in text[start + 1:start + 6]],
                      "with_none": [a.spec for a in with_none.traced.args]}))
    """
)


def test_jaxshow_stages_shows_where_the_caller_placed_each_argument_under_auto_axes():
    # was: 'x f32[8,8] — no' and 'w f32[8,16] — no' in jaxshow.stages' Traced station (the Auto-axis types' P(None, None)),
    # beside the Compiled station's P('data', 'model') and P('model', None); %%jaxstages showed the placements
    result = _run(STAGES_API_SCRIPT)
    assert result["args"] == [["x", "P('data', 'model')"], ["w", "P('model', None)"], ["n", None]]
    assert result["inputs"][:2] == result["args"][:2]
    assert result["text"] == [
        "mesh Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto)) (each sharding below is a spec on it)",
        "argument type sharding donated",
        "x f32[8,8] P('data', 'model') no",
        "w f32[8,16] P('model', None) no",
        "n f32[16] — no",
    ]
    assert result["with_none"] == ["P('data', 'model')", None, "P('data', 'model')"]


E_ON_AUTO_MESH = textwrap.dedent(
    """
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(auto, P("data", "model")))

    @jax.jit
    def e(a):
        return jnp.sin(a) * 2
    e(x)
    """
)
"""The cell both mesh scripts start with: ``e`` traced once for ``x`` on a 2x4 mesh of Auto axes."""

MESH_CONTEXT_SCRIPT = SHELL + f"E_ON_AUTO_MESH = {E_ON_AUTO_MESH!r}\n" + textwrap.dedent(
    """
    assert ip.run_cell(E_ON_AUTO_MESH + '''
    explicit = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    set_mesh = getattr(jax, "set_mesh", None) or jax.sharding.use_mesh  # jax 0.7
    ''').success
    misses = []
    for cell in ("%%jaxcache -o rep\\nwith set_mesh(auto):\\n    y = e(x)",
                 "%%jaxcache -o rep\\nwith set_mesh(explicit):\\n    y = e(jax.device_put(x, NamedSharding(explicit, P('data'))))"):
        with capture_output() as cap:
            assert ip.run_cell(cell).success
        [miss] = ip.user_ns["rep"].misses
        misses.append([miss.category, [[c.where, c.now, c.before] for c in miss.changes]])
    print(json.dumps({"misses": misses, "text": " ".join(cap.outputs[-1].data["text/plain"].split())}))
    """
)


def test_a_trace_under_another_mesh_context_names_the_meshes_as_the_mesh_line_does():
    # was: 'abstract_mesh_context_manager: now AbstractMesh('data': 2, 'model': 4, axis_types=(Auto, Auto), device_kind=cpu,
    # num_cores=None, platform=cpu), before AbstractMesh((), axis_types=())' (jax 0.12; 'before None' on 0.7 and 0.10)
    result = _run(MESH_CONTEXT_SCRIPT)
    where = "mesh context"
    assert result["misses"] == [
        ["tracing_context", [[where, "mesh ('data': 2, 'model': 4, axis_types=(Auto, Auto))", "no mesh"]]],
        ["tracing_context", [[where, "mesh ('data': 4, 'model': 2, axis_types=(Explicit, Explicit))",
                              "mesh ('data': 2, 'model': 4, axis_types=(Auto, Auto))"],
                             ["a", "f32[8@data,8]", "f32[8,8]"]]],
    ]
    assert ("1. different tracing context (a config option or context manager): mesh context: now mesh "
            "('data': 4, 'model': 2, axis_types=(Explicit, Explicit)), before mesh ('data': 2, 'model': 4, axis_types=(Auto, "
            "Auto)); a: now f32[8@data,8], before f32[8,8] called at In[") in result["text"]


OTHER_MESH_SCRIPT = SHELL + f"E_ON_AUTO_MESH = {E_ON_AUTO_MESH!r}\n" + textwrap.dedent(
    """
    assert ip.run_cell(E_ON_AUTO_MESH + '''
    last4 = jax.make_mesh((4,), ("i",), devices=jax.devices()[4:], axis_types=(AxisType.Explicit,))
    ''').success
    misses = []
    for cell in ("%%jaxcache -o rep\\ny = e(jax.device_put(x, NamedSharding(last4, P('i'))))", "%%jaxcache -o rep\\ny = e(jnp.ones((8, 4)))"):
        with capture_output():
            assert ip.run_cell(cell).success
        misses.extend([m.category, [[c.where, c.now, c.before] for c in m.changes]] for m in ip.user_ns["rep"].misses)
    print(json.dumps(misses))
    """
)


def test_a_type_on_another_mesh_with_other_axis_types_is_said_with_its_mesh():
    # was: 'a: now f32[8@i,8]({Explicit: ('i',)}), before f32[8,8]({Auto: ('data', 'model')})' and 'a: now f32[8,4]({}),
    # before f32[8@i,8]({Explicit: ('i',)})': JAX's mesh axis types, kept where the types differ in more than their meshes
    assert _run(OTHER_MESH_SCRIPT) == [
        ["input_types", [["a", "f32[8@i,8] on mesh ('i': 4)", "f32[8,8] on mesh ('data': 2, 'model': 4)"]]],
        ["input_types", [["a", "f32[8,4] (no mesh)", "f32[8@i,8] on mesh ('i': 4)"]]],
    ]


MESH_CONTEXT_STAGES_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    set_mesh = getattr(jax, "set_mesh", None) or jax.sharding.use_mesh  # jax 0.7
    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(auto, P("data", "model")))

    @jax.jit
    def e(a):
        return jnp.sin(a) * 2
    ''').success
    with capture_output():
        assert ip.run_cell("%%jaxstages -o rep\\ny1 = e(x)\\nwith set_mesh(auto):\\n    y2 = e(x)").success
    with capture_output():
        assert ip.run_cell("%%jaxstages --diff -o again\\nwith set_mesh(auto):\\n    y3 = e(jnp.ones((8, 4)))\\ny4 = e(jnp.ones((8, 4)))").success
    rep, again = ip.user_ns["rep"], ip.user_ns["again"]
    print(json.dumps({"notes": list(rep.notes), "context": [dict(r.trace_context)["mesh context"] for r in rep.reports],
                      "diff": [[c.where, c.now, c.before] for c in again.diffs[0].key_changes if "mesh" in c.where]}))
    """
)


def test_a_call_traced_again_under_a_mesh_context_is_said_to_be_in_another_context():
    # was: 'also called: e traced again with the same signature and jaxpr (its clear_cache() emptied its cache, or another
    # input pytree)': a guess that left out the mesh jax.set_mesh put around the second call, which JAX keys its traces on
    result = _run(MESH_CONTEXT_STAGES_SCRIPT)
    auto = "mesh ('data': 2, 'model': 4, axis_types=(Auto, Auto))"
    # the call shown is the one under the mesh (the cell's last compile); the note names the other's context
    assert result["notes"] == ["also called: e in another config context (mesh context=no mesh) (use --all or --name to show them)"]
    assert result["context"] == [auto]
    # --diff of a call with no mesh around it against e's previous compile, the one under jax.set_mesh
    assert result["diff"] == [["config mesh context", "no mesh", auto]]


OTHER_DEVICES_SCRIPT = SHELL + textwrap.dedent(
    """
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    first4, last4 = (jax.make_mesh((4,), ("i",), devices=d, axis_types=(AxisType.Auto,)) for d in (jax.devices()[:4], jax.devices()[4:]))
    x = jnp.ones((8, 4))

    @jax.jit
    def e(a):
        return jnp.sin(a) * 2

    @jax.jit
    def f(a):
        return jnp.sin(a) * 2
    ''').success
    cell = "y = {0}(jax.device_put(x, NamedSharding(first4, P('i'))))\\ny = {0}(jax.device_put(x, NamedSharding(last4, P('i'))))"
    with capture_output():
        assert ip.run_cell("%%jaxcache -o rep\\n" + cell.format("e")).success
    with capture_output():
        assert ip.run_cell("%%jaxstages -o stages\\n" + cell.format("f")).success
    [row] = ip.user_ns["rep"].functions
    stages = ip.user_ns["stages"]
    print(json.dumps({"recompiled": list(row.recompiled), "notes": list(stages.notes)}))
    """
)


def test_a_compile_for_the_same_spec_on_a_mesh_over_other_devices_names_the_devices():
    # was: 'a: now P('i'), before P('i') (on Mesh('i': 4, axis_types=(Auto,)))' (%jaxcache) and 'also called: f compiled
    # again for another placement of its arguments (a P('i'))' beside the shown call's P('i') (%%jaxstages): two meshes of
    # the same axes, one over devices 0-3 and one over 4-7, which JAX writes alike
    result = _run(OTHER_DEVICES_SCRIPT)
    mesh = "Mesh('i': 4, axis_types=(Auto,))"
    assert result["recompiled"] == [f"a: now P('i') on {mesh} (devices 4, 5, 6, 7), before P('i') on {mesh} (devices 0, 1, 2, 3)"]
    assert result["notes"] == [f"also called: f compiled again for another placement of its arguments (a P('i') on {mesh} "
                               "(devices 0, 1, 2, 3)) (use --all or --name to show them)"]
