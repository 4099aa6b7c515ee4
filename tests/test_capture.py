"""capture.py on real JAX: every recorded figure matches JAX's own stage objects."""

from __future__ import annotations

import collections
import subprocess
import sys
from functools import partial

import jax
import jax.numpy as jnp
import pytest
from jax.extend.core import Primitive

import jaxshow
from jaxshow import render
from jaxshow.capture import stations


def _mlp(params, x):
    h = jnp.tanh(x @ params["w1"])
    return jnp.sum((h @ params["w2"]) ** 2)


@pytest.fixture
def params():
    return {"w1": jnp.ones((8, 16)), "w2": jnp.ones((16, 4))}


def test_stations_match_jax_objects(params):
    f = jax.jit(_mlp)
    x = jnp.ones((2, 8))
    report = jaxshow.stages(f, params, x)

    traced = f.trace(params, x)
    lowered = traced.lower()
    compiled = lowered.compile()
    assert report.traced.jaxpr_text == traced.jaxpr.pretty_print(use_color=False)
    assert report.lowered.module_text == lowered.as_text()
    assert report.compiled.optimized_hlo_text == compiled.as_text()
    assert dict(report.lowered.cost.entries) == pytest.approx(lowered.cost_analysis())
    assert dict(report.compiled.cost.entries) == pytest.approx(compiled.cost_analysis())
    assert report.lowered.cost.optimized is False and report.compiled.cost.optimized is True
    memory = compiled.memory_analysis()
    assert report.compiled.memory.argument_size_bytes == memory.argument_size_in_bytes
    assert report.compiled.memory.temp_size_bytes == memory.temp_size_in_bytes
    assert report.compiled.memory.output_size_bytes == memory.output_size_in_bytes
    shardings = jax.tree_util.tree_leaves(compiled.input_shardings)
    assert [p.sharding for p in report.compiled.inputs] == [str(s) for s in shardings]
    assert [a.path for a in report.traced.args] == ["params['w1']", "params['w2']", "x"]
    assert [a.type_str for a in report.traced.args] == ["f32[8,16]", "f32[16,4]", "f32[2,8]"]
    assert report.traced.out_info[0].type_str == "f32[]"
    counts = dict(report.traced.primitive_counts)
    assert counts["dot_general"] == 2 and counts["tanh"] == 1
    assert report.traced.equation_count == len(traced.jaxpr.jaxpr.eqns)
    assert report.wrapper.kind == "jax.jit" and report.wrapper.defined_at.line == _mlp.__code__.co_firstlineno
    assert report.executed is False and report.stopped_at is None and report.error is None


def test_hlo_dialect_and_debug_info(params):
    f = jax.jit(_mlp)
    x = jnp.ones((2, 8))
    report = jaxshow.stages_with(dialect="hlo", debug_info=True)(f, params, x)
    assert report.lowered.dialect == "hlo"
    assert report.lowered.module_text == f.lower(params, x).as_text("hlo", debug_info=True)
    assert "test_capture.py" in report.lowered.module_text  # HLO metadata file table
    assert __file__ in report.traced.jaxpr_source_text
    with pytest.raises(ValueError, match="unknown dialect"):
        jaxshow.stages_with(dialect="mhlo")


@pytest.mark.parametrize("option", ["debug_info", "source"])
def test_an_option_that_is_not_a_bool_is_refused_not_blamed_on_the_function(option):
    # stages_with(debug_info=1)(f, x) read 'f: failed while lowering' with MLIR's printer's TypeError, as if f had failed
    with pytest.raises(TypeError) as raised:
        jaxshow.stages_with(**{option: 1})
    assert str(raised.value) == f"{option} must be True or False, got int"


def test_static_and_donated_arguments():
    @partial(jax.jit, static_argnums=1, donate_argnums=0)
    def step(x, n):
        for _ in range(n):
            x = x * 2
        return x

    report = jaxshow.stages(step, jnp.ones(3), 4)
    assert report.wrapper.static_argnums == (1,)
    assert report.wrapper.donate_argnums == (0,)
    assert report.wrapper.static_args == (("n", "4"),)
    assert [a.donated for a in report.traced.args] == [True]
    assert dict(report.traced.primitive_counts)["mul"] == 4
    assert report.compiled.memory.alias_size_bytes == 12


def test_plain_callable_is_wrapped_and_says_so():
    report = jaxshow.stages(lambda x: x + 1, jnp.ones(2))
    assert report.wrapper.wrapped_by_jaxshow
    assert any("not jitted" in note for note in report.notes)
    with pytest.raises(TypeError, match="needs a callable"):
        jaxshow.stages(42)


class _Scale:
    def __call__(self, x):
        return x * 2

    def shifted(self, x):
        return x + 1


class _Box:
    def __init__(self, x):
        self.x = x


jax.tree_util.register_pytree_node(_Box, lambda box: ((box.x,), None), lambda _, children: _Box(*children))


def test_a_callable_jaxshow_jits_is_named_as_it_is_written():
    wrapped = "is not jitted: jaxshow wrapped it in jax.jit to show what JAX would do with it"
    x = jnp.ones(2)
    for fn, name, note in ((_Scale().shifted, "shifted", "shifted"), (partial(_mlp, {}), "_mlp", "_mlp"), (abs, "abs", "abs"),
                           (_Scale(), "_Scale", "_Scale"), (_Box, "<unknown>", "_Box")):
        report = jaxshow.stages(fn, x)
        assert (report.function, report.wrapper.name, report.notes[0]) == (name, name, f"{note} {wrapped}")
    report = jaxshow.stages(jax.jit(_Scale()), x)
    assert report.function == "_Scale" and report.notes == () and report.wrapper.defined_at.line == _Scale.__call__.__code__.co_firstlineno


def test_a_stage_already_taken_is_refused_with_what_to_pass_instead():
    f = jax.jit(lambda x: x * 2)
    x = jnp.ones(2)
    traced = f.trace(x)
    for stage, name in ((traced, "Traced"), (traced.lower(), "Lowered"), (traced.lower().compile(), "Compiled")):
        with pytest.raises(TypeError) as raised:
            jaxshow.stages(stage, x)
        assert str(raised.value) == (f"jaxshow.stages needs the function and its arguments, got a jax.stages.{name} "
                                     "(a stage already taken): pass the jitted function, jaxshow.stages(f, *args)")


def test_abstract_inputs_are_accepted():
    f = jax.jit(lambda x: x.sum())
    report = jaxshow.stages(f, jax.ShapeDtypeStruct((5, 5), jnp.bfloat16))
    assert report.traced.args[0].type_str == "bf16[5,5]"


def test_failure_while_tracing_keeps_wrapper_and_stage():
    report = jaxshow.stages(jax.jit(lambda x: x.reshape(7)), jnp.ones(3))
    assert report.stopped_at == "trace" and report.traced is None
    assert report.error.type_name == "TypeError" and "reshape" in report.error.message


def test_an_unhashable_static_argument_is_refused_before_tracing_not_a_failure_while_tracing():
    # the call raises JAX's ValueError before any trace; jaxshow.stages said 'failed while tracing', as if the function ran
    g = partial(jax.jit, static_argnames="cfg")(lambda x, cfg: x * len(cfg))
    with pytest.raises(ValueError) as raised:
        g(jnp.ones(3), cfg=["a"])
    report = jaxshow.stages(g, jnp.ones(3), cfg=["a"])
    assert (report.stopped_at, report.traced, report.error.type_name) == ("call", None, "ValueError")
    assert report.error.message == str(raised.value).strip()
    assert report.outcome == "failed while dispatching, before any trace"
    assert report.notes == ("JAX refused the arguments before tracing: nothing was traced, lowered or compiled",)


def _double(v):
    return 2 * v


def test_a_pmap_is_named_for_its_function_where_it_is_defined():
    # jax >= 0.8: the report read 'wrapper function', 'defined at unknown (no Python source)' and 'function has no
    # .trace(): the jaxpr station is skipped'; jax 0.7: 'wrapper PmapFunction', 'defined at unknown (no Python source)'
    report = jaxshow.stages(jax.pmap(_double), jnp.ones((1, 3)))
    assert (report.function, report.wrapper.kind, report.stopped_at) == ("_double", "jax.pmap", None)
    assert (report.wrapper.defined_at.file, report.wrapper.defined_at.line) == (__file__, _double.__code__.co_firstlineno)
    assert report.stations_reached == ("traced", "lowered", "compiled")
    assert not any(".trace()" in n for n in report.notes)


@pytest.mark.skipif(not hasattr(jax, "new_ref"), reason="jax.new_ref arrived after jax 0.7")
def test_a_refs_effects_name_the_argument_or_constant_they_are_on():
    # the effects read 'ReadEffect, ReadEffect, WriteEffect, WriteEffect', with nothing to tell the refs apart
    counts = jax.new_ref(jnp.zeros(3))

    def step(r1, r2, x):
        r1[...] = r1[...] + x
        counts[...] = counts[...] + 1
        return r2[...] * 2

    args = jax.new_ref(jnp.ones(3)), jax.new_ref(jnp.ones(3)), jnp.ones(3)
    report = jaxshow.stages(jax.jit(step), *args)
    if any(isinstance(getattr(e, "input_index", None), int) for e in jax.jit(step).trace(*args).jaxpr.effects):
        assert report.traced.effects == ("ReadEffect", "WriteEffect")  # jax 0.8: its indices count hoisted refs too
        return
    assert report.traced.effects == ("ReadEffect (a closed-over ref)", "ReadEffect (r1)", "ReadEffect (r2)",
                                     "WriteEffect (a closed-over ref)", "WriteEffect (r1)")


def _no_lowering_primitive():
    prim = Primitive("jaxshow_test_no_lowering")
    prim.def_abstract_eval(lambda x: x)
    prim.def_impl(lambda x: x)
    return prim


def test_failure_while_lowering_keeps_traced_station():
    prim = _no_lowering_primitive()
    report = jaxshow.stages(jax.jit(lambda x: prim.bind(x) + 1), jnp.ones(3))
    assert report.stopped_at == "lower"
    assert report.traced is not None and "jaxshow_test_no_lowering" in report.traced.jaxpr_text
    assert report.lowered is None and report.error.type_name == "NotImplementedError"


def test_failure_while_compiling_keeps_lowered_station():
    f = jax.jit(lambda x: x + 1, compiler_options={"xla_jaxshow_bogus_option": True})
    report = jaxshow.stages(f, jnp.ones(3))
    assert report.stopped_at == "compile"
    assert report.lowered is not None and report.compiled is None
    assert "xla_jaxshow_bogus_option" in report.error.message


def test_pmap_is_walked_with_every_station():
    # jax >= 0.8 gives pmap no .trace: its Traced station was skipped, with the note 'function has no .trace()'; the jit
    # pmap calls is walked now, as %%jaxstages shows a pmap call (jax 0.7's pmap has a .trace of its own)
    report = jaxshow.stages(jax.pmap(lambda x: x * 2), jnp.ones((1, 3)))
    assert report.error is None and report.lowered is not None and report.compiled is not None
    assert report.traced.args[0].type_str == "f32[1,3]" and report.notes == ()


def test_effects_and_constants_are_recorded():
    table = jnp.arange(4.0)

    @jax.jit
    def f(x):
        jax.debug.print("x={x}", x=x)
        return x + table

    report = jaxshow.stages(f, jnp.ones(4))
    assert report.traced.effects == ("DebugEffect",)
    assert report.traced.const_count == 1


def test_timings_come_from_monitoring_and_cache_hits_are_none():
    f = jax.jit(lambda x: jnp.cos(x) * 3)
    cold = jaxshow.stages(f, jnp.ones(7))
    assert cold.timings.lowering_seconds > 0 and cold.timings.compile_seconds > 0
    warm = jaxshow.stages(f, jnp.ones(7))
    assert warm.timings.lowering_seconds is None and warm.timings.compile_seconds is None


def test_user_keywords_named_like_options_pass_through():
    f = jax.jit(lambda x, dialect, debug_info, fn: x * dialect + debug_info - fn)
    report = jaxshow.stages(f, jnp.ones(2), dialect=2.0, debug_info=1.0, fn=3.0)
    assert report.error is None and report.lowered.dialect == "stablehlo"
    assert [a.path for a in report.traced.args] == ["x", "debug_info", "dialect", "fn"]  # JAX sorts keywords


def test_static_argument_whose_repr_raises_keeps_every_station():
    class Hostile:
        def __hash__(self):
            return 1

        def __eq__(self, other):
            return isinstance(other, Hostile)

        def __repr__(self):
            raise RuntimeError("no repr for you")

    f = jax.jit(lambda x, h: x + 1, static_argnums=1)
    report = jaxshow.stages(f, jnp.ones(2), Hostile())
    assert report.stations_reached == ("traced", "lowered", "compiled")
    assert report.wrapper.static_args == (("h", "<Hostile object; its repr not run>"),)
    huge = jaxshow.stages(jax.jit(lambda x, s: x, static_argnums=1), jnp.ones(2), "y" * 5000)
    assert huge.wrapper.static_args[0][1] == "'" + "y" * 199 + "… (5,002 chars)"


def test_records_are_immutable_and_comparable(params):
    f = jax.jit(_mlp)
    a = jaxshow.stages(f, params, jnp.ones((2, 8)))
    b = jaxshow.stages(f, params, jnp.ones((2, 8)))
    assert a.traced == b.traced and a.lowered == b.lowered
    with pytest.raises(AttributeError):
        a.function = "other"  # type: ignore[misc]


def test_loop_bodies_counted_once_are_flagged_next_to_the_costs():
    @jax.jit
    def looped(x):
        def body(carry, _):
            return jnp.tanh(carry @ carry), None

        return jax.lax.scan(body, x, None, length=10)[0]

    report = jaxshow.stages(looped, jnp.ones((16, 16)))
    assert dict(report.traced.primitive_counts)["scan"] == 1
    text = str(report)
    assert text.count("XLA's cost analysis counts each loop body once") == 2
    assert "scan ×1" in report._repr_html_()
    plain = jaxshow.stages(jax.jit(lambda x: x @ x), jnp.ones((4, 4)))
    assert "loop body" not in str(plain)


def test_the_text_says_its_primitive_counts_include_nested_jaxprs_as_the_html_does():
    """One top-level equation (the scan) beside three primitives: the text read 'primitives: add×1, scan×1, sin×1' under
    '② Traced: 1 equation', with no word of the nested jaxpr the HTML names."""
    looped = jax.jit(lambda x: jax.lax.scan(lambda c, _: (jnp.sin(c) + 1.0, None), x, None, length=3)[0])
    report = jaxshow.stages(looped, jnp.ones(2))
    text = str(report)
    assert "② Traced: 1 equation, 1 input → 1 output\n" in text
    assert "\n  primitives, nested jaxprs included: add×1, scan×1, sin×1\n" in text
    assert "1 top-level equation; primitives, nested jaxprs included: " in report._repr_html_()


def test_a_program_without_inputs_or_primitives_says_none_instead_of_empty_headings():
    report = jaxshow.stages(jax.jit(lambda: 1.0))
    text, page = render.to_text(report), render.to_html(report)
    assert "\n  primitives, nested jaxprs included: none\n" in text and "\n  no inputs\n" in text and "    input  sharding  layout" not in text
    assert "primitives, nested jaxprs included: none</div>" in page
    assert '<div>inputs</div><span class="js-muted"' in page and ">no inputs</span>" in page


def test_a_program_without_operations_says_its_cost_analysis_is_empty_not_unreported():
    # JAX's sharding notebook, jax.jit(lambda x: print(jax.typeof(x).sharding))(x): XLA's cost analyses are {} for it,
    # and the report said "backend 'cpu' gives no cost analysis before compilation" and "backend 'cpu' does not
    # report cost analysis", of a backend that costs every other program
    report = jaxshow.stages(jax.jit(lambda x: None), jnp.ones(3))
    assert (report.lowered.cost_unavailable, report.compiled.cost_unavailable) == (
        "empty: XLA gave no figure for this program", "empty: XLA gave no figure for this program")
    assert render.to_text(report).count("\n  cost analysis: empty: XLA gave no figure for this program\n") == 2


SYMBOLIC = """
import glob, json, sys, tempfile
import jax, jax.numpy as jnp, jaxshow
from jax import export
b, = export.symbolic_shape("b")
net = jax.jit(lambda x, w: x @ w)
report = jaxshow.stages(net, jax.ShapeDtypeStruct((b, 8), jnp.float32), jax.ShapeDtypeStruct((8, 8), jnp.float32))
print(report.outcome)
print(report.lowered.cost_unavailable)
saved = tempfile.mkdtemp()
jaxshow.save(report, saved)
print(json.load(open(glob.glob(saved + "/*.json")[0]))["traced"]["args"][0]["shape"])
"""


def test_a_module_with_symbolic_dimensions_is_not_given_to_xlas_cost_analysis():
    """jax.export's shape polymorphism (``b``): jaxlib 0.12.1's ``Lowered.cost_analysis`` aborts the process on such a
    module (``Check failed: !count_overflow``), so %%jaxstages over ``export.export(f)(spec)`` killed the kernel where
    the plain cell runs; and ``--save`` raised on the symbolic dimension in the JSON. Run in a process of its own."""
    out = subprocess.run([sys.executable, "-c", SYMBOLIC], capture_output=True, text=True, timeout=300)
    assert (out.returncode, out.stderr[-1500:]) == (0, "")
    assert out.stdout.splitlines() == [
        "failed while compiling",  # as net.lower(spec, w).compile() fails: 'Error refining shapes'
        "not computed for a module with symbolic dimensions (b: jax.export's shape polymorphism): XLA's cost analysis "
        "needs every dimension known (jaxlib 0.12 ends the process on it)",
        "['b', 8]",
    ]


def test_a_mutable_array_reference_argument_is_shown_as_a_ref():
    if not hasattr(jax, "new_ref"):
        pytest.skip(f"jax {jax.__version__} has no jax.new_ref")

    @jax.jit
    def bump(r):
        r[...] = r[...] + 1

    report = jaxshow.stages(bump, jax.new_ref(jnp.zeros(3)))
    assert [(a.path, a.type_str) for a in report.traced.args] == [("r", "Ref{f32[3]}")]
    assert "    argument  type         sharding  donated\n    r         Ref{f32[3]}  —         no\n" in render.to_text(report)


def test_a_program_that_reads_and_writes_mutable_refs_shows_where_each_lives():
    # JAX's Compiled.input_shardings raises for it ("Too many leaves for PyTreeDef; expected 2."): the Compiled
    # station said "shardings unavailable: ValueError: ..." and showed none
    if not hasattr(jax, "new_ref"):
        pytest.skip(f"jax {jax.__version__} has no jax.new_ref")
    acc = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def bump(v, r):
        acc[...] = acc[...] + v.sum()
        r[...] = r[...] * 2
        return v * 2

    report = jaxshow.stages(bump, jnp.ones(5), jax.new_ref(jnp.ones(7)))
    compiled = report.compiled
    assert compiled.placements_unavailable is None
    assert [p.path for p in compiled.inputs] == ["v", "r", "closed-over ref 1"]
    assert [p.path for p in compiled.outputs] == ["result", "r (written back)", "closed-over ref 1 (written back)"]
    assert ("  shardings and formats: all 3 inputs and 3 outputs alike,\n    SingleDeviceSharding(device=CpuDevice(id=0), "
            "memory_kind=device), in default layouts (row-major)\n") in render.to_text(report)
    # the Traced station said '1 closed-over constant baked into the jaxpr' for acc, an input of the program
    assert (report.traced.const_count, report.traced.ref_count) == (1, 1)
    assert "\n  1 closed-over ref (jax.new_ref), not baked in: an input of the compiled program\n" in render.to_text(report)
    assert "baked into the jaxpr" not in render.to_text(report) and "baked into the jaxpr" not in render.to_html(report)
    table = jnp.arange(3.0)
    both = jaxshow.stages(jax.jit(lambda: acc[...] + table))
    assert (both.traced.const_count, both.traced.ref_count) == (2, 1)
    assert ("\n  1 closed-over constant baked into the jaxpr\n  1 closed-over ref (jax.new_ref), not baked in: an input of "
            "the compiled program\n") in render.to_text(both)
    assert "1 closed-over ref (jax.new_ref), not baked in: an input of the compiled program</div>" in render.to_html(both)


def test_a_modules_pre_optimisation_cost_is_converted_once_per_text_and_backend():
    # Lowered.cost_analysis converts StableHLO to HLO (about 2 ms for a one-line module): a cell re-run on a
    # function JAX has cached paid it every time.
    class Counted:
        def __init__(self, lowered):
            self.lowered, self.calls = lowered, 0

        def as_text(self, *args, **kwargs):
            return self.lowered.as_text(*args, **kwargs)

        def cost_analysis(self):
            self.calls += 1
            return self.lowered.cost_analysis()

    f = jax.jit(lambda x: jnp.cos(x) * 3.25)
    first, again = Counted(f.lower(jnp.ones(5))), Counted(f.lower(jnp.ones(5)))
    assert stations.lowered_station(first, backend="cpu") == stations.lowered_station(again, backend="cpu")
    assert (first.calls, again.calls) == (1, 0)
    other = Counted(f.lower(jnp.ones(6)))
    cost = stations.lowered_station(other, backend="cpu").cost  # f32[6]: a cos (transcendental) and a multiply per element
    assert (cost.flops, cost.transcendentals) == (6, 6)
    assert other.calls == 1
    elsewhere = Counted(f.lower(jnp.ones(5)))
    stations.lowered_station(elsewhere, backend="another backend")
    assert elsewhere.calls == 1


def test_may_call_jit_reads_what_a_function_loads_without_running_it():
    from jaxshow.capture.helpers import may_call_jit
    import jax.numpy as jnp

    step = jax.jit(lambda v: v * 2)
    ran = []

    def eager(v):
        ran.append(1)
        return jnp.sin(v).sum() + v.shape[0]

    def closes(v):
        return step(v)

    def deep(v):
        return middle(v)

    def middle(v):
        return closes(v)

    class Trainer:
        def __init__(self):
            self.step = step

        def run(self, v):
            return self.step(v)

        def plain(self, v):
            return eager(v)

    def makes(v):
        return jax.jit(eager)(v)

    assert [may_call_jit(fn) for fn in (eager, closes, deep, Trainer().run, Trainer().plain, makes)] == [
        False, True, True, True, False, True]
    assert may_call_jit(jax.jit(eager)) is False and may_call_jit(print) is False  # not functions of the user's
    assert ran == []


STAGES_API_BEYOND_PLAIN = {(0, 7): {"flatten": 2, "init": 1}}
"""How many more times than ``f.trace(node).lower().compile()`` ``jaxshow.stages(f, node)`` runs a pytree class's
``tree_flatten`` and ``__init__`` (an argument and a result of the class): none from jax 0.9, whose ``Traced`` builds its
``args_info`` and ``out_info`` when read (jaxshow reads a flat copy, named by JAX's own names), nor on jax 0.8 (as many
as its own AOT chain reads); jax 0.7's ``Traced`` keeps ``args_info`` built as it traced and its flat names nowhere
else: naming the arguments flattens it once, the results' paths unflatten and flatten ``out_info`` once."""


def test_the_stages_api_runs_a_pytree_classs_code_as_often_as_the_aot_chain():
    """``jaxshow.stages(f, node)`` with an argument and a result of the user's pytree class: reading the Compiled
    station's shardings and formats through JAX's pytree-shaped properties rebuilt and flattened the user's class 8 more
    times than ``f.trace(node).lower().compile()``; naming the Traced station's arguments and results constructed it
    twice more and flattened it once more (``Traced.args_info`` and ``out_info``, unflattened by JAX at each read). All
    are read as flat lists now, named by JAX's own argument names and result paths."""
    calls = []

    @jax.tree_util.register_pytree_node_class
    class Node:
        def __init__(self, a, b):
            calls.append("init")
            self.a, self.b = a, b

        def tree_flatten(self):
            calls.append("flatten")
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    def make():  # a new function each time: no trace of the other found in JAX's caches
        def f(n):
            return Node(n.a * 2 + n.b, n.b)
        return f

    node = Node(jnp.ones(3), jnp.ones(3))
    calls.clear()
    compiled = jax.jit(make()).trace(node).lower().compile()
    plain = collections.Counter(calls)
    calls.clear()
    result = jaxshow.stages(jax.jit(make()), node)
    extra = {k: collections.Counter(calls)[k] - plain[k] for k in ("flatten", "init")}
    assert extra == STAGES_API_BEYOND_PLAIN.get(jax.__version_info__[:2], {"flatten": 0, "init": 0})
    sharding = str(compiled.input_shardings[0][0].a)  # as JAX's pytree-shaped property reads it
    assert [(p.path, p.sharding) for p in result.compiled.inputs] == [("n[0]", sharding), ("n[1]", sharding)]
    paths = ["result[<flat index 0>]", "result[<flat index 1>]"] if jax.__version_info__[:2] == (0, 7) else ["result[0]", "result[1]"]
    assert [p.path for p in result.traced.out_info] == paths
    assert [(p.path, p.sharding) for p in result.compiled.outputs] == [(paths[0], sharding), (paths[1], sharding)]
