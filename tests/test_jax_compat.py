"""Each _jax_compat shim, checked for behaviour on the installed JAX."""

from __future__ import annotations

import collections
import dataclasses
import types
import weakref
from functools import partial

import jax
import pytest
import jax.numpy as jnp
import numpy as np

import jaxshow
from jaxshow import _jax_compat, timings
from jaxshow.capture import calls, stations


def test_jit_options_of_a_jit_wrapper():
    @partial(jax.jit, static_argnums=(1,), static_argnames=("mode",), donate_argnums=0)
    def f(x, n, mode="a"):
        return x * n

    options = _jax_compat.jit_options_of_info(_jax_compat.jit_info(f))
    assert options["static_argnums"] == (1,)
    assert "mode" in options["static_argnames"]
    assert options["donate_argnums"] == (0,)
    assert _jax_compat.jit_options_of_info(_jax_compat.jit_info(lambda x: x)) is None
    assert _jax_compat.jit_options_of_info(_jax_compat.jit_info(jax.pmap(lambda x: x))) is None


def test_jaxpr_debug_info_names_the_traced_function_and_its_arguments():
    def f(x, y):
        return x + y

    info = _jax_compat.jaxpr_debug_info(jax.make_jaxpr(f)(1.0, 2.0))
    assert (info.func_name, tuple(info.arg_names)) == ("f", ("x", "y"))
    assert _jax_compat.jaxpr_debug_info(object()) is None


def test_abstract_value_of_an_arg_info_an_array_and_a_shape_dtype_struct():
    x = jnp.ones(3, jnp.float32)
    info = jax.tree_util.tree_leaves(jax.jit(lambda v: v).trace(x).args_info)[0]
    aval = _jax_compat.abstract_value(info)
    assert aval == x.aval and (aval.shape, aval.dtype) == ((3,), jnp.float32)
    assert _jax_compat.abstract_value(x) is x.aval
    spec = jax.ShapeDtypeStruct((2,), jnp.int32)
    assert _jax_compat.abstract_value(spec) is spec


def test_traced_argument_shardings_are_each_flat_arguments_placement():
    x = jnp.ones(3, jnp.float32)
    spec = jax.ShapeDtypeStruct((2,), jnp.int32)
    traced = jax.jit(lambda d, n: d["x"] * n + d["s"].sum()).trace({"x": x, "s": spec}, np.ones(3, np.float32))
    assert _jax_compat.traced_argument_shardings(traced) == (None, x.sharding, None)  # d["s"], d["x"], n


def test_jit_set_options_are_the_options_given_other_than_static_and_donated():
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((1,), ("x",))
    named = NamedSharding(mesh, P("x"))
    info = _jax_compat.jit_info(jax.jit(lambda a, b: a, in_shardings=(named, None), keep_unused=True,
                                        compiler_options={"xla_cpu_enable_fast_math": True}))
    assert _jax_compat.jit_set_options(info) == (("in_shardings", (named, None)), ("keep_unused", True),
                                                 ("compiler_options", {"xla_cpu_enable_fast_math": True}))
    inline = _jax_compat.jit_set_options(_jax_compat.jit_info(jax.jit(lambda a: a, inline=True)))
    assert [k for k, _ in inline] == ["inline"]
    assert _jax_compat.jit_set_options(_jax_compat.jit_info(jax.jit(lambda a: a, static_argnums=0, donate_argnums=()))) == ()
    assert _jax_compat.jit_set_options(None) == ()


def test_cpp_unkeyed_variants_are_the_other_keep_unused_and_inline_values():
    wrapper = jax.jit(lambda a: a)
    info = _jax_compat.jit_info(wrapper)
    inlined = jax.jit(lambda a: a, inline=True)._jit_info.inline
    if jax.__version_info__ >= (0, 12, 1):  # keyed on keep_unused (pxla.JitGlobalCppCacheKeys), not on inline
        assert _jax_compat.cpp_unkeyed_variants(wrapper) == [{"inline": inlined}]
    else:
        assert _jax_compat.cpp_unkeyed_variants(wrapper) == [{"inline": inlined}, {"keep_unused": True},
                                                             {"keep_unused": True, "inline": inlined}]
    assert info.keep_unused is False
    assert _jax_compat.cpp_unkeyed_variants(lambda a: a) == []


def test_kept_inputs_are_the_arguments_the_program_kept():
    lowered = jax.jit(lambda a, b, c: a + c).lower(1.0, 2.0, 3.0)
    assert _jax_compat.kept_inputs(lowered) == (0, 2)
    assert _jax_compat.kept_inputs(jax.jit(lambda a, b: a, keep_unused=True).lower(1.0, 2.0)) == (0, 1)
    assert _jax_compat.kept_inputs(object()) is None


def test_exported_function_names_the_function_an_exported_call_runs():
    from jax import export

    exp = export.export(jax.jit(lambda v: v * 2))(jax.ShapeDtypeStruct((3,), jnp.float32))
    program = jax.make_jaxpr(exp.call)(jnp.ones(3)).eqns[0].params["call_jaxpr"]  # inside exp.call's custom_vjp
    assert _jax_compat.exported_function(program) == "<lambda>"
    assert _jax_compat.exported_function(jax.make_jaxpr(lambda v: v * 2)(1.0)) is None


def test_cache_size_counts_compiled_signatures():
    f = jax.jit(lambda x: x + 1)
    assert _jax_compat.cache_size(f) == 0
    f(jnp.ones(2))
    f(jnp.ones(3))
    assert _jax_compat.cache_size(f) == 2
    assert _jax_compat.cache_size(lambda x: x) is None


def test_listeners_are_removed_by_the_unregister_shims():
    calls = []

    def duration(event, secs, **kw):
        calls.append(event)

    def event(name, **kw):
        calls.append(name)

    jax.monitoring.register_event_duration_secs_listener(duration)
    jax.monitoring.register_event_listener(event)
    _jax_compat.unregister_duration_listener(duration)
    _jax_compat.unregister_event_listener(event)
    jax.jit(lambda x: x * 7)(jnp.ones(5))
    assert calls == []


def test_event_bus_registers_only_while_collecting():
    assert not timings.listeners_registered()
    with timings.EventCollector() as collector:
        assert timings.listeners_registered()
        jax.jit(lambda x: x - 9)(jnp.ones(6))
    assert not timings.listeners_registered()
    assert {e.stage for e in collector.events} >= {"trace", "lower", "compile"}


def test_source_info_exclusion_points_call_sites_at_the_caller():
    assert _jax_compat.exclude_from_source_info(stations.PACKAGE_DIR)
    report = jaxshow.stages_with(debug_info=True)(lambda x: x * 3, jnp.ones(2))
    assert "jaxshow/" not in report.traced.jaxpr_source_text
    assert __file__ in report.traced.jaxpr_source_text


def test_trace_context_names_is_a_tuple_or_none():
    names = _jax_compat.trace_context_names()
    if _jax_compat.JAX_VERSION >= (0, 10, 2):
        assert "jax_enable_x64" in names
    else:
        assert names is None


def test_every_position_of_the_trace_context_is_named_on_every_jax():
    """jax 0.8 to 0.10.1 keep the trace context in C++ without names: a re-trace under ``jax.enable_x64`` read
    'trace context [25]: now True, before False' with a note that this JAX does not name it. Setting each config holder
    in turn, on this thread, names each position as JAX itself names it where it can (jax >= 0.10.2), changing nothing."""
    from jax._src import config as jax_config

    before = jax_config.trace_context()
    probed = _jax_compat._probed_trace_context_positions(len(before))
    assert jax_config.trace_context() == before
    assert len(probed) == len(before)
    assert {"jax_enable_x64", "jax_numpy_rank_promotion", "jax_default_matmul_precision", "mesh_context_manager"} <= set(probed)
    listed = _jax_compat.trace_context_names()
    if listed is not None:
        assert probed == listed
    assert _jax_compat.trace_context_positions() == (listed or probed)
    with jax.numpy_rank_promotion("raise"):
        assert jax_config.trace_context()[probed.index("jax_numpy_rank_promotion")] == "raise"


# --- the jit miss path hooks (capture/calls.py) -------------------------------------------------


class _Recorder(_jax_compat.CallObserver):
    def __init__(self):
        self.seen = []

    def busy(self):
        return False

    def trace_started(self, fun, jit_info, args, kwargs):
        self.seen.append(("trace", _jax_compat.jit_info_function(jit_info)[0]))

    def trace_ended(self, token, jaxpr, args_flat, error, out_tree):
        self.seen.append(("traced", _jax_compat.jaxpr_function(jaxpr)[0] if jaxpr is not None else None, args_flat, str(out_tree)))

    def run_started(self, jaxpr, name, donated):
        self.seen.append(("run", name, donated))

    def lowered(self, computation, error):
        self.seen.append(("lowered", _jax_compat.computation_compiled(computation)))

    def run_ended(self, token, executable, error):
        self.seen.append(("ran", executable is not None))

    def compiling(self):
        self.seen.append(("compiling",))


def _pjit_globals():
    from jax._src import api_util, compiler, pjit

    hooked = {n: getattr(pjit, n, None) for n in ("_infer_params", "_trace_for_jit", "_pjit_call_impl_python", "_resolve_and_lower")}
    return {**hooked, "backend_compile_and_load": compiler.backend_compile_and_load,
            "maybe_recursive_nan_check": api_util.maybe_recursive_nan_check}


def test_call_hooks_see_trace_lower_compile_and_run_and_uninstall_cleanly():
    assert _jax_compat.call_hooks_supported()
    before = _pjit_globals()
    recorder = _Recorder()
    x = jnp.ones(5)  # made before the hooks: the first jnp.ones(5) of a process compiles JAX's broadcast_in_dim
    uninstall = _jax_compat.install_call_hooks(recorder)

    def hooked(v):
        return jax.lax.mul(v, v)  # a primitive: no nested jit of a jnp function

    try:
        jax.jit(hooked, donate_argnums=0)(x)
    finally:
        uninstall()
    assert _pjit_globals() == before
    assert recorder.seen == [("trace", "hooked"), ("traced", "hooked", [x], "PyTreeDef(*)"), ("run", "hooked", (True,)), ("lowered", False),
                             ("compiling",), ("ran", True)]


def test_eager_primitive_function_is_jaxs_jit_of_one_primitive_outside_jit():
    class Functions(_Recorder):
        def trace_started(self, fun, jit_info, args, kwargs):
            self.seen.append(fun)

    def users(v):
        return v * 2

    recorder = Functions()
    x = jnp.arange(13.0)  # a shape of its own, made before the hooks: JAX traces its jit of mul for it below
    uninstall = _jax_compat.install_call_hooks(recorder)
    try:
        jax.lax.mul(x, x)
        jax.jit(users)(x)
    finally:
        uninstall()
    functions = [f for f in recorder.seen if callable(f)]
    assert [f.__name__ for f in functions if _jax_compat.eager_primitive_function(f)] == ["mul"]
    assert users in functions and not _jax_compat.eager_primitive_function(users)
    assert not _jax_compat.eager_primitive_function(_jax_compat.jit_function(jnp.sort))


@pytest.mark.parametrize("cached", [False, True])
def test_the_rerun_hook_sees_jaxs_de_optimized_run_after_a_nan_and_leaves_no_frame(cached):
    class Reruns(_Recorder):
        def rerun_started(self, fun, signal):
            self.seen.append(("rerun", fun.__name__, _jax_compat.special_value_found(signal)[1]))
            return fun.__name__

        def rerun_ended(self, token):
            self.seen.append(("rerun ended", token))

    def nan_maker(v):
        return jnp.log(v)

    wrapper = jax.jit(nan_maker)
    if cached:
        wrapper(jnp.ones(2))  # then JAX's C++ cache runs it, and its post-hook finds the nan
    before = _pjit_globals()
    recorder = Reruns()
    uninstall = _jax_compat.install_call_hooks(recorder)
    try:
        with jax.debug_nans(True), pytest.raises(FloatingPointError) as caught:
            wrapper(-jnp.ones(2))
    finally:
        uninstall()
    assert _pjit_globals() == before
    assert ("rerun", "nan_maker", "nan") in recorder.seen and recorder.seen[-1] == ("rerun ended", "nan_maker")
    frames, tb = [], caught.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert _jax_compat.__file__ not in frames


def test_the_compile_hook_lets_a_compile_error_through_without_its_own_frame():
    from jax._src import compiler

    def failing(*args, **kwargs):
        raise RuntimeError("XLA says no")

    original = compiler.backend_compile_and_load
    compiler.backend_compile_and_load = failing
    recorder = _Recorder()
    uninstall = _jax_compat.install_call_hooks(recorder)
    try:
        with pytest.raises(RuntimeError, match="XLA says no") as info:
            jax.jit(lambda v: jax.lax.neg(v))(jnp.ones(3))
    finally:
        uninstall()
        compiler.backend_compile_and_load = original
    assert ("compiling",) in recorder.seen
    assert [tb.tb_frame.f_code.co_name for tb in _frames(info.value.__traceback__)].count("xla_compile") == 0


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_lowered_from_computation_and_lower_cached_reuse_jaxs_objects():
    f = jax.jit(lambda v: jnp.cos(v) + 1)
    x = jnp.ones(6)
    f(x)
    jaxpr, donated, computation, args_flat = _jax_compat.lower_cached(f, (x,), {})
    assert donated == (False,) and _jax_compat.computation_compiled(computation) and args_flat == [x]
    lowered = _jax_compat.lowered_from_computation(computation, jaxpr, donated)
    compiles = []
    listener = lambda event, secs, **kw: compiles.append(event) if event.endswith("backend_compile_duration") else None
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        compiled = lowered.compile()
    finally:
        _jax_compat.unregister_duration_listener(listener)
    assert compiles == [], "the executable JAX cached is reused"
    assert lowered.as_text() == f.lower(x).as_text() and compiled.as_text() == f.lower(x).compile().as_text()


def test_pytree_flatten_code_is_the_python_function_jaxs_registry_runs():
    @jax.tree_util.register_pytree_node_class
    class Box:
        def tree_flatten(self):
            return (), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls()

    class Pair:
        pass

    def flatten_pair(p):
        return (), None

    jax.tree_util.register_pytree_node(Pair, flatten_pair, lambda aux, children: Pair())

    @partial(jax.tree_util.register_dataclass, data_fields=["a"], meta_fields=[])
    @dataclasses.dataclass
    class Data:
        a: object

    assert _jax_compat.pytree_flatten_code(Box) is Box.tree_flatten.__code__
    assert _jax_compat.pytree_flatten_code(Pair) is flatten_pair.__code__
    assert _jax_compat.pytree_flatten_code(Data).co_filename.startswith(_jax_compat.JAX_DIR)  # JAX's own, run in C++
    assert _jax_compat.pytree_flatten_code(Pair()) is None and _jax_compat.pytree_flatten_code(int) is None


def test_pmapped_function_names_the_users_function_where_pmap_is_a_jit():
    def user_fn(v):
        return v + 1

    pmapped = jax.pmap(user_fn)
    with calls.CallCapture() as capture:
        pmapped(jnp.ones((1, 2)))
    found = [_jax_compat.pmapped_function(r.fun) for r in capture.records if r.fun is not None]
    if type(pmapped).__name__ == "PmapFunction":  # jax 0.7: pmap compiles outside jit, nothing to attribute
        assert [f for f in found if f is not None] == []
    else:
        assert (user_fn.__name__, __file__) in found


def test_refusing_traces_serves_a_hit_and_refuses_a_miss_before_the_python_runs():
    import jax.numpy as jnp

    runs = []

    @jax.jit
    def g(v):
        runs.append(1)
        return v + 1

    g(jnp.ones(2))
    x, y = jnp.ones(2), jnp.ones(5)
    with _jax_compat.refusing_traces():
        out = g(x)
        with pytest.raises(RuntimeError, match="'no_tracing' is set") as info:
            g(y)
    assert out.tolist() == [2.0, 2.0]
    assert _jax_compat._refused_by_jax(info.value)
    assert runs == [1]


def test_cached_trace_keys_are_the_functions_keys_but_the_one_asked_about():
    import jax.numpy as jnp

    def h(v):
        return v * 2

    jax.jit(h)(jnp.ones(2))
    jax.jit(h)(jnp.ones(3))
    keys = _jax_compat.cached_trace_keys(h, None)
    assert sorted(_jax_compat.describe_trace_key(k)[0][0][1] for k in keys) == ["f32[2]", "f32[3]"]
    others = _jax_compat.cached_trace_keys(h, None, other_than=keys[0])
    assert [_jax_compat.describe_trace_key(k)[0][0][1] for k in others] == [_jax_compat.describe_trace_key(keys[1])[0][0][1]]
    assert _jax_compat.cached_trace_keys(lambda v: v, None) == []


def test_trace_cache_misses_counts_traces_not_lookups():
    def fresh(x):
        return x + 1

    before = _jax_compat.trace_cache_misses()
    if before is None:  # jax <= 0.8: its trace event is published only for a trace
        assert _jax_compat.JAX_VERSION < (0, 9)
        return
    jax.jit(fresh)(jnp.ones(2))
    traced = _jax_compat.trace_cache_misses()
    assert traced > before
    jax.jit(fresh).trace(jnp.ones(2))  # another wrapper of the same function: a lookup that finds the jaxpr
    assert _jax_compat.trace_cache_misses() == traced


def test_is_default_layout_reads_both_attribute_spellings():
    import types
    new = lambda order, tiling=(), bits=0: types.SimpleNamespace(major_to_minor=order, tiling=tiling, sub_byte_element_size_in_bits=bits)  # noqa: E731
    old = types.SimpleNamespace(major_to_minor=(0, 1), _tiling=(), _sub_byte_element_size_in_bits=0)  # jax 0.7's names
    assert [_jax_compat.is_default_layout(layout) for layout in (new((0, 1)), new(()), old)] == [True, True, True]
    assert [_jax_compat.is_default_layout(layout) for layout in (new((1, 0)), new((0, 1), ((8, 128),)), new((0,), bits=4), None)] == [
        False, False, False, False]


def test_stage_objects_name_their_function_and_flatten_nothing_of_the_users():
    def g(a, b):
        return jnp.sin(a) @ b

    m = jnp.ones((3, 3))
    traced = jax.jit(g, donate_argnums=1).trace(m, m)
    lowered = traced.lower()
    compiled = lowered.compile()
    info = _jax_compat.program_debug_info(lowered._lowering)
    assert _jax_compat.debug_info_function(info) == ("g", __file__)
    assert _jax_compat.program_debug_info(_jax_compat.compiled_executable(compiled)) is info
    assert _jax_compat.traced_donated(traced) == (False, True)
    assert _jax_compat.traced_lowering(None) is None
    flat = _jax_compat.flat_compiled(compiled)
    assert flat.as_text() == compiled.as_text() and len(flat.input_shardings[0]) == 2
    assert _jax_compat.lowered_from_computation(lowered._lowering, None, ()).as_text() == lowered.as_text()
    # fallbacks: an object without these private attributes
    assert _jax_compat.program_debug_info(object()) is None and _jax_compat.traced_donated(object()) == ()
    assert _jax_compat.debug_info_function(None) == ("?", None)


def test_treedef_differences_counts_the_subtrees_that_differ():
    """What ranks the closest earlier key where pytrees differ: a call's ``(args, kwargs)`` with one more positional
    argument and one keyword fewer differs in two subtrees, from one that only passes a keyword in one."""
    structure = jax.tree_util.tree_structure
    moved, by_keyword, short = structure(((1, 2), {})), structure(((1,), {"n": 2})), structure(((1,), {}))
    assert _jax_compat.treedef_differences(moved, by_keyword) == 2
    assert _jax_compat.treedef_differences(by_keyword, short) == 1
    assert _jax_compat.treedef_differences(short, short) == 0
    assert _jax_compat.treedef_differences(structure([[[[[1]]]]]), structure([[[[[1, 2]]]]]), depth=2) == 1


class _Counted:
    """A static value whose ``__eq__`` (the user's) counts its runs."""

    runs = 0

    def __init__(self, k):
        self.k = k

    def __hash__(self):
        return self.k

    def __eq__(self, other):
        type(self).runs += 1
        return isinstance(other, _Counted) and other.k == self.k


def test_within_a_miss_each_pair_of_values_is_compared_once():
    """A miss compares its key with each kept key at several steps; a static value's ``__eq__`` is the user's. Within
    ``each_pair_compared_once`` a pair is compared once either way round, a tuple made again around the same items
    (a key rebuilt from its parts) finds its items' pair, and outside it every comparison runs."""
    from jaxshow.reprs import differ, each_pair_compared_once, once_per_pair

    a, b = _Counted(1), _Counted(2)
    _Counted.runs = 0
    assert differ(a, b) and differ(a, b)
    assert _Counted.runs == 2
    with each_pair_compared_once():
        assert differ(a, b) and differ(b, a) and differ((0, a), (0, b)) and not differ((a, 1), (a, 1))
        with each_pair_compared_once():  # an inner scope keeps the outer one's pairs
            assert differ(((a,),), ((b,),))
        assert not differ(a, _Counted(1))
    assert _Counted.runs == 4  # a with b once, a with the new _Counted(1) once
    assert differ(a, b) and _Counted.runs == 5  # after the scope, compared again
    runs = []

    def compare(new, old):
        runs.append((new, old))
        return len(runs)

    with each_pair_compared_once():  # a pair made anew around the same two objects (a jax <= 0.8 key), told by them
        assert once_per_pair(compare, [a], [b], by=(a, b)) == once_per_pair(compare, [a], [b], by=(a, b)) == 1
        assert once_per_pair(compare, [a], [a], by=(a, a)) == 2


def test_within_a_miss_a_static_value_is_compared_once_whole_trees_apart():
    """Two pytree definitions holding a static value of the user's (JAX's key for a ``static_argnums`` call on jax
    0.9-0.10) compared whole in C++ ran its ``__eq__`` at each comparison, out of reach of the pair memo. Within
    ``each_pair_compared_once`` they are taken apart: one run for the pair however often the trees, their nodes or the
    values themselves are compared; one object compared with itself runs none (as JAX's own lookups)."""
    from jaxshow.reprs import differ, each_pair_compared_once

    class Static(_Counted):
        __hash__ = _Counted.__hash__

    jax.tree_util.register_static(Static)
    a, b = Static(1), Static(2)
    now, before = (jax.tree_util.tree_structure([(0, v)]) for v in (a, b))
    Static.runs = 0
    assert not differ(a, a) and Static.runs == 0
    with each_pair_compared_once():
        assert differ(now, before) and differ(now, before) and differ(a, b)
        assert _jax_compat.treedef_differences(now, before) == 1
    assert Static.runs == 1


def test_plain_pytree_definitions_are_compared_whole_and_others_by_parts():
    """Within a miss, two pytree definitions of dicts, lists, tuples, namedtuples and ``None`` (no code of the user's in
    their ``==``) are compared whole in C++, as taking 200 leaves apart per kept key cost 2 ms a key; a dict keyed by a
    user's object, a user's static node, a registered dataclass (jax >= 0.10's ``==`` finds two classes of one name
    equal) and a node type whose metaclass defines ``__eq__`` are taken apart."""
    from jaxshow.reprs import differ, each_pair_compared_once

    class Meta(type):
        def __eq__(cls, other):
            return cls is other

        __hash__ = type.__hash__

    class Node(metaclass=Meta):
        pass

    class Static(_Counted):
        __hash__ = _Counted.__hash__

    jax.tree_util.register_pytree_node(Node, lambda n: ((), None), lambda _, c: Node())
    jax.tree_util.register_static(Static)
    point = collections.namedtuple("Point", "x y")
    structure = jax.tree_util.tree_structure
    plain = [structure({"a": [1, (2, None)], "b": point(1, 2)}), structure({"a": [1, (2, None)], "c": point(1, 2)})]
    def params() -> type:
        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Params:
            w: jax.Array

        return Params

    old_params, new_params = params(), params()
    apart = [structure({_Counted(1): 1}), structure([Static(1)]), structure([Node()]), structure(old_params(1))]
    assert [_jax_compat._plain_tree(t) for t in plain + apart] == [True, True, False, False, False, False]
    assert all(id(t) in _jax_compat._plain_trees for t in plain)
    assert _jax_compat._plain_nodes[0] == sum(t.num_nodes for t in _jax_compat._plain_trees.values())
    with each_pair_compared_once():
        assert differ(*plain) and not differ(plain[0], structure({"a": [1, (2, None)], "b": point(1, 2)}))
        Static.runs = 0
        assert not differ(apart[1], structure([Static(1)])) and Static.runs == 1
        assert differ(apart[3], structure(new_params(1)))


def test_treedef_differences_runs_a_static_nodes_eq_once_per_comparison():
    """A static node three levels down: the two definitions compared once, then its metadata once; comparing each
    level's subtree whole ran the user's ``__eq__`` once per level."""
    jax.tree_util.register_static(_Counted)
    structure = jax.tree_util.tree_structure
    now, before = structure([[[_Counted(1)]]]), structure([[[_Counted(2)]]])
    _Counted.runs = 0
    assert _jax_compat.treedef_differences(now, before) == 1
    assert _Counted.runs == 2
    assert _jax_compat.treedef_differences(now, structure([[[_Counted(1)]]])) == 0


def test_raised_reading_jit_call_tells_a_refused_argument_from_an_error_in_the_function():
    """A string argument is refused where JAX reads the call (``pjit._infer_params``); an error the function raises
    while JAX traces it comes from deeper, and a plain Python error from nowhere in JAX."""
    f = jax.jit(lambda v: v + 1)
    kept = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "remove_frames")  # as under IPython: JAX's frames kept in the cause
    try:
        with pytest.raises(TypeError) as refused:
            f("abc")
    finally:
        jax.config.update("jax_traceback_filtering", kept)
    assert _jax_compat.raised_reading_jit_call(refused.value)
    try:
        raise ValueError("not JAX's")
    except ValueError as exc:
        assert not _jax_compat.raised_reading_jit_call(exc)


def test_evaluates_closed_jaxpr_is_true_only_for_a_jax_function_closing_over_a_jaxpr():
    jaxpr = jax.make_jaxpr(lambda v: v * 2)(1.0)
    from jax._src import core  # noqa: PLC0415 - JAX's own module: a function of JAX's files that closes over a jaxpr

    closing = types.FunctionType((lambda: jaxpr).__code__.replace(co_filename=core.__file__), globals(), None, None,
                                 (lambda: jaxpr).__closure__)
    assert _jax_compat.evaluates_closed_jaxpr(closing)
    assert not _jax_compat.evaluates_closed_jaxpr(lambda: jaxpr)  # the user's file: never JAX's own function
    assert not _jax_compat.evaluates_closed_jaxpr(jnp.sin)


def test_weak_get_finds_a_callable_object_by_identity_without_its_eq():
    class Probe:
        compared = 0

        def __eq__(self, other):
            Probe.compared += 1
            return True

        __hash__ = object.__hash__

        def __call__(self, v):
            return v

    table = weakref.WeakKeyDictionary()
    probe, other = Probe(), Probe()
    table[probe] = "entries"
    Probe.compared = 0
    assert _jax_compat._weak_get(table, probe) == "entries"
    assert _jax_compat._weak_get(table, other) is None and Probe.compared == 0


def test_without_text_takes_a_line_out_of_an_errors_args_and_kept_strings():
    exc = RuntimeError("head\n  File \"x.py\", line 1, in run\ntail")
    exc.kept = "also\n  File \"x.py\", line 1, in run\n"
    _jax_compat._without_text(exc, '  File "x.py", line 1, in run\n')
    assert (exc.args, exc.kept) == (("head\ntail",), "also\n")


def test_jaxpr_without_values_prints_the_same_and_keeps_no_array():
    """The jaxpr of a function that closes over an array, itself (jax 0.12) and through an inner jax.jit and a scan body
    (every release): printed the same, and once JAX lets the trace go, the arrays are freed though the copy is kept."""
    w = jnp.ones((1033, 3))
    inner = jax.jit(lambda a: a * w)
    closed = jax.jit(lambda a: inner(a) + jax.lax.scan(lambda c, _: (c * w, None), a, None, length=2)[0] + w).trace(w).jaxpr
    kept = _jax_compat.jaxpr_without_values(closed.jaxpr)
    assert _jax_compat.jaxpr_text(kept) == _jax_compat.jaxpr_text(closed.jaxpr)
    del w, inner, closed
    jax.clear_caches()
    assert [a.shape for a in jax.live_arrays() if a.shape == (1033, 3)] == []
    assert "scan[" in _jax_compat.jaxpr_text(kept)


def test_program_placements_lists_every_input_and_output_of_the_compiled_program():
    compiled = jax.jit(lambda v, w: (v * 2, w)).lower(jnp.ones(5), jnp.ones(3)).compile()
    flat = _jax_compat.program_placements(compiled)
    assert flat.inputs == jax.tree_util.tree_leaves(compiled.input_shardings)
    assert flat.outputs == jax.tree_util.tree_leaves(compiled.output_shardings)
    assert [str(l) for l in flat.input_layouts] == [str(f.layout) for f in jax.tree_util.tree_leaves(compiled.input_formats)]
    if not hasattr(jax, "new_ref"):
        return
    acc = jax.new_ref(jnp.zeros(3))

    def bump(r):
        acc[...] = acc[...] + 1.0
        r[...] = r[...] * 2

    compiled = jax.jit(bump).lower(jax.new_ref(jnp.ones(7))).compile()
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef"):  # JAX's own: the refs outnumber the pytrees
        compiled.output_shardings
    flat = _jax_compat.program_placements(compiled)
    assert (len(flat.inputs), len(flat.outputs), len(flat.input_layouts), len(flat.output_layouts)) == (2, 2, 2, 2)


def test_effect_input_is_the_argument_or_constant_a_refs_effect_is_on():
    printing = jax.jit(lambda v: jax.debug.print("{v}", v=v)).trace(jnp.ones(2)).jaxpr
    assert [_jax_compat.effect_input(e, printing) for e in printing.effects] == [None]
    if not hasattr(jax, "new_ref"):  # jax 0.7: no refs to pass
        return
    held = jax.new_ref(jnp.zeros(2))

    def bump(r, v):
        held[...] = held[...] + v
        r[...] = v

    closed = jax.jit(bump).trace(jax.new_ref(jnp.ones(2)), jnp.ones(2)).jaxpr
    if any(isinstance(getattr(e, "input_index", None), int) for e in closed.effects):  # jax 0.8: indices count hoisted refs
        assert [_jax_compat.effect_input(e, closed) for e in closed.effects] == [None] * len(closed.effects)
        return
    assert sorted((type(e).__name__, str(_jax_compat.effect_input(e, closed))) for e in closed.effects) == [
        ("ReadEffect", "const"), ("WriteEffect", "0"), ("WriteEffect", "const")]


def test_symbolic_dimensions_are_read_from_a_lowered_computations_flat_types():
    from jax import export

    b, n = export.symbolic_shape("b, n")
    lowered = jax.jit(lambda x, y: (x * 2, y.sum())).lower(jax.ShapeDtypeStruct((b, 8), jnp.float32),
                                                           jax.ShapeDtypeStruct((n, b), jnp.float32))
    assert _jax_compat.symbolic_dimensions(lowered) == ("b", "n")
    assert _jax_compat.symbolic_dimensions(jax.jit(lambda x: x).lower(jnp.ones(3))) == ()
    assert _jax_compat.symbolic_dimensions(object()) == ()  # no computation to read: none found


def test_host_callback_frame_finds_jaxs_entry_into_a_callback_and_stops_at_outer():
    import sys as _sys

    found = []

    def host(v):
        here = _sys._getframe()
        found.append((_jax_compat.host_callback_frame(here, None) is not None,
                      _jax_compat.host_callback_frame(here, here.f_back) is not None))

    jax.jit(lambda v: jax.debug.callback(host, v) or v)(jnp.ones(2)).block_until_ready()
    jax.effects_barrier()
    assert found == [(True, False)]
    assert _jax_compat.host_callback_frame(_sys._getframe(), None) is None
