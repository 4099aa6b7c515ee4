"""Each _jax_compat shim added for %jaxcache, checked for its behaviour on the installed JAX."""

from __future__ import annotations

import gc
import logging
import subprocess
import sys
from functools import partial

import jax
import jax.numpy as jnp
import pytest

from jaxshow import _jax_compat, retrace


class _Recorder(_jax_compat.TraceProbe):
    def __init__(self):
        self.calls = []

    def enter(self, fun, debug_info):
        return getattr(fun, "__name__", "?")

    def exit(self, token, missed, key):
        self.calls.append((token, missed, key))


def test_explain_logger_receives_jax_explanations():
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger(_jax_compat.explain_logger_name())
    logger.addHandler(handler)
    try:
        with jax.explain_cache_misses(True):
            jax.jit(lambda v: v * 5)(jnp.ones(2))
    finally:
        logger.removeHandler(handler)
    assert any(r.getMessage().startswith("TRACING CACHE MISS") for r in records)


def test_trace_probe_tells_misses_from_hits_and_uninstalls():
    recorder = _Recorder()

    @jax.jit
    def inner(v):
        return v * 2

    @jax.jit
    def outer(v):
        return inner(v) + 1

    original = _jax_compat._trace_cache_callable()
    uninstall = _jax_compat.install_trace_probe(recorder)
    try:
        assert _jax_compat._trace_cache_callable() is not original
        outer(jnp.ones(3))
        jax.jit(outer.__wrapped__).trace(jnp.ones(3))
    finally:
        uninstall()
    assert _jax_compat._trace_cache_callable() is original
    mine = [(name, missed) for name, missed, _ in recorder.calls if name in ("inner", "outer")]
    assert mine[:2] == [("inner", True), ("outer", True)], "a nested trace is its own miss"
    assert ("outer", False) in mine[2:], "a new wrapper of the same function is a trace-cache hit"
    key = next(k for n, m, k in recorder.calls if n == "outer" and m)
    types, tree, context = _jax_compat.describe_trace_key(key)
    assert types == (("v", "f32[3]"),) and "PyTreeDef" in tree and isinstance(context, tuple)


def test_diff_trace_keys_speaks_jax_words():
    recorder = _Recorder()

    @partial(jax.jit, static_argnums=1)
    def g(v, n):
        return v * n

    uninstall = _jax_compat.install_trace_probe(recorder)
    try:
        g(jnp.ones(2), 1)
        g(jnp.ones(3), 1)
        g(jnp.ones(3), 2)
    finally:
        uninstall()
    keys = [k for n, m, k in recorder.calls if n == "g" and m]
    types = _jax_compat.diff_trace_keys(keys[1], keys[0])
    static = _jax_compat.diff_trace_keys(keys[2], keys[1])
    assert "different input types" in types
    category, changes, *_ = retrace.parse_explanation(static)
    assert category == "static_args" and [(c.now, c.before) for c in changes] == [("2", "1")]
    if _jax_compat.JAX_VERSION >= (0, 11):  # JAX's own diff no longer sees static values; jaxshow words it as 0.10 does
        assert static == (
            "different static arguments (compared by jaxshow):\n"
            "  * at input path [0][1], now Static(val=2) and before Static(val=1), so the static values differ"
        )
    elif _jax_compat.JAX_VERSION >= (0, 9):
        assert "* at input path [0][1], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=2)" in static
    else:
        assert static == "different value of static args:\n  now 2 and before 1"


def test_trace_cache_entries_grows_with_new_signatures():
    before = _jax_compat.trace_cache_entries()
    jax.jit(lambda v: v - 7)(jnp.ones(11))
    assert before is not None and _jax_compat.trace_cache_entries() > before


def test_persistent_cache_state_without_a_directory():
    jax.jit(lambda v: v + 3)(jnp.ones(2))
    assert _jax_compat.persistent_cache_initialized() is False
    assert _jax_compat.persistent_cache_directory_in_use() is None
    assert _jax_compat.persistent_cache_max_size_in_use() is None  # none open (test_persistent.py: the size of one)
    assert _jax_compat.persistent_cache_open_failed() is False  # not tried: no directory (test_persistent.py: a failed open)
    assert _jax_compat.persistent_cache_use_decided() is True  # decided at the first compile, jax_enable_compilation_cache on


def _probe_keys(calls, name):
    recorder = _Recorder()
    uninstall = _jax_compat.install_trace_probe(recorder)
    try:
        calls()
    finally:
        uninstall()
    return [k for n, missed, k in recorder.calls if n == name and missed and k is not None]


def test_trace_key_context_shows_the_config_that_changed():
    @jax.jit
    def c(v):
        return v + 2

    def calls():
        c(jnp.ones(2))
        with jax.numpy_rank_promotion("raise"):
            c(jnp.ones(2))

    first, second = _probe_keys(calls, "c")
    before, _ = _jax_compat.trace_key_context(first)
    now, _ = _jax_compat.trace_key_context(second)
    changed = [(str(a), str(b)) for a, b in zip(now, before) if a != b]
    assert len(now) == len(before) and changed == [("raise", "allow")]


def test_trace_key_distance_ranks_like_the_installed_jax():
    @partial(jax.jit, static_argnums=1)
    def d(v, n):
        return v * n

    k1, k2, k3 = _probe_keys(lambda: (d(jnp.ones(2), 1), d(jnp.ones(3), 1), d(jnp.ones(3), 2)), "d")
    near, far = _jax_compat.trace_key_distance(k3, k2), _jax_compat.trace_key_distance(k3, k1)
    if _jax_compat.JAX_VERSION >= (0, 9):
        assert near is None and far is None, "jax >= 0.9 ranks by kind of difference; jaxshow does that itself"
    else:
        assert 0 < near < far, "jax <= 0.8 picks the key with the smallest total diff"


def test_static_arg_changes_read_values_jax_keeps_outside_the_pytree():
    @partial(jax.jit, static_argnums=0, static_argnames="mode")
    def m(a, v, mode="x"):
        return v * a

    def calls():
        m(1, jnp.ones(2), mode="x")
        m(2, jnp.ones(2), mode="y")
        m(2, jnp.ones(2))

    k1, k2, k3 = _probe_keys(calls, "m")
    if _jax_compat.JAX_VERSION >= (0, 11):
        assert _jax_compat.static_arg_changes(k2, k1) == (("[0][0]", "2", "1"), ("[1]['mode']", "'y'", "'x'"))
        assert _jax_compat.static_arg_changes(k2, k2) == ()
        assert _jax_compat.static_arg_changes(k3, k2) is None, "mode is no longer passed: a pytree change"
    else:  # the pytree (0.9-0.10) or the key's transforms (<= 0.8) hold the static values
        assert _jax_compat.static_arg_changes(k2, k1) is None


def test_static_arg_values_reads_the_values_of_a_key_on_every_version():
    def fn(v):
        return v

    @partial(jax.jit, static_argnums=0, static_argnames="mode")
    def m(a, v, mode="x"):
        return a[0](v)

    def calls():
        m((fn, 2), jnp.ones(2), mode="y")
        m((fn, 3), jnp.ones(2))

    k1, k2 = _probe_keys(calls, "m")
    assert sorted(_jax_compat.static_arg_values(k1), key=repr) == sorted([(fn, 2), "y"], key=repr)
    assert _jax_compat.static_arg_values(k2) == ((fn, 3),)
    assert _jax_compat.static_arg_values(None) == ()


def test_static_arg_positions_name_the_changed_static_argument():
    @partial(jax.jit, static_argnums=(0, 2))
    def s(a, v, b):
        return v * a * b

    keys = _probe_keys(lambda: s(1, jnp.ones(2), 5), "s")
    positions = _jax_compat.static_arg_positions(keys[-1])
    # On jax >= 0.9 the diff text names the argument by input path ([0][2]); older text needs the positions.
    assert positions == (None if _jax_compat.JAX_VERSION >= (0, 9) else (0, 2))
    s.clear_cache()
    with jaxshow_explain() as ex:
        s(1, jnp.ones(2), 7)
        s(1, jnp.ones(2), 8)
    change = ex.report.misses[-1].changes
    assert ex.report.misses[-1].category == "static_args" and [(c.where, c.now, c.before) for c in change] == [("b", "8", "7")]


def test_trace_cache_entries_for_one_function():
    @jax.jit
    def one(v):
        return v * 9

    one(jnp.ones(2))
    gc.collect()  # on jax >= 0.9 the count is the whole cache, whose dead entries go at collection
    before = _jax_compat.trace_cache_entries(one.__wrapped__)
    one(jnp.ones(5))
    gc.collect()
    after = _jax_compat.trace_cache_entries(one.__wrapped__)
    assert before is not None and after > before


def jaxshow_explain(**kwargs):
    import jaxshow

    return jaxshow.explain(**kwargs)


def test_trace_key_parts_tell_a_type_only_difference_as_jaxs_diff_does():
    @partial(jax.jit, static_argnums=1)
    def p(v, n):
        return v * n

    def calls():
        p(jnp.ones(2), 1)
        p(jnp.ones(3), 1)  # a type
        p(jnp.ones(3), 2)  # a static argument
        p((jnp.ones(3),), 2)  # the pytree
        with jax.numpy_rank_promotion("raise"):
            p(jnp.ones(4), 2)  # the tracing context

    keys = _probe_keys(calls, "p")
    parts = [_jax_compat.trace_key_parts(k) for k in keys]
    if _jax_compat.JAX_VERSION < (0, 9):  # jax <= 0.8 keys are ranked with JAX's own diff function
        assert parts == [None] * 5 and not _jax_compat.trace_cache_counts_all_functions()
        return
    assert _jax_compat.trace_cache_counts_all_functions()
    assert all(q is not None and q.head is not None for q in parts)
    assert parts[1].head == parts[0].head and parts[2].head != parts[1].head
    assert _jax_compat.type_differences(parts[1], parts[0]) == 1 and _jax_compat.type_differences(parts[2], parts[1]) == 0
    verdicts = [_jax_compat.only_types_differ(parts[i], parts[i - 1]) for i in range(1, 5)]
    assert verdicts == [True, False, False, False]
    for i in range(1, 5):  # the same answer as parsing JAX's own diff
        category, *_ = retrace.parse_explanation(_jax_compat.diff_trace_keys(keys[i], keys[i - 1]))
        assert (category == "input_types") == verdicts[i - 1]
    if _jax_compat.JAX_VERSION >= (0, 11):
        assert _jax_compat.static_arg_differences(parts[2], parts[1]) == 1
    else:
        assert _jax_compat.static_arg_differences(parts[2], parts[1]) is None


def test_trace_key_parts_read_the_static_values_as_the_key_holds_them():
    @partial(jax.jit, static_argnums=(1,), static_argnames=("mode",))
    def q(v, n, w=None, mode="a"):
        return v * n if w is None else v * n + w["b"]

    def calls():
        q(jnp.ones(2), 3)  # every argument a leaf but the static one
        q(jnp.ones(2), 4, {"b": jnp.ones(2)})  # a dict argument
        q(jnp.ones(2), 5, None, mode="b")  # None and a static keyword
        q(v=jnp.ones(2), n=6)  # by keyword: static_argnums names a position, so n is traced

    keys = _probe_keys(calls, "q")
    if _jax_compat.JAX_VERSION < (0, 9):
        assert [_jax_compat.trace_key_parts(k) for k in keys] == [None] * 4
        return
    values = [_jax_compat.trace_key_parts(k).static_values for k in keys]
    assert values == [(3,), (4,), (5, "b"), ()]
    assert values == [_jax_compat.argument_static_values(k) for k in keys]

    @jax.jit
    def leaves(v, w):
        return v + w

    [key] = _probe_keys(lambda: leaves(jnp.ones(2), w=jnp.ones(2)), "leaves")
    assert _jax_compat.trace_key_parts(key).static_values == () == _jax_compat.argument_static_values(key)


def test_a_loose_trace_key_is_the_key_while_jax_keeps_it_and_none_after():
    class Config:
        def __init__(self, k):
            self.k = k

        def __hash__(self):
            return self.k

        def __eq__(self, other):
            return isinstance(other, Config) and other.k == self.k

    def scaled(v, c):
        return v * c.k

    recorder = _Recorder()
    remove = _jax_compat.install_trace_probe(recorder)
    try:
        jax.jit(scaled, static_argnums=1)(jnp.ones(2), Config(3))
    finally:
        remove()
    [key] = [k for name, missed, k in recorder.calls if missed and name == "scaled"]
    assert _jax_compat.argument_static_values(key) == (Config(3),)
    loose = _jax_compat.loose_trace_key(key, scaled)
    assert loose() == key and loose() is not key
    del key
    recorder.calls.clear()
    jax.clear_caches()
    gc.collect()
    assert loose() is None


def _types_of(keys):
    return [_jax_compat.describe_trace_key(k)[0][0][1] for k in keys]


@pytest.mark.skipif(_jax_compat._trace_cache_module() is None,
                    reason="jax <= 0.8: each function's keys are a dict of its own, read without listing the cache")
def test_a_function_that_held_no_key_is_answered_without_listing_jaxs_tracing_cache_again(monkeypatch):
    """Listing JAX's tracing cache costs O(entries), all functions together, and a ``%jaxcache`` session asks at the
    first miss of every new function. Once listed while the probe is installed, a function that held no key then and
    whose lookups did not end since holds none: no listing. One that held keys, or was looked up since, is listed; so is
    every function after the probe was removed (its lookups went unseen), even once it is installed again."""
    listings = []
    listed = _jax_compat._listed_keys
    monkeypatch.setattr(_jax_compat, "_listed_keys", lambda module: listings.append(1) or listed(module))
    S = jax.ShapeDtypeStruct

    def before(v):
        return v + 1

    def fresh(v):
        return v * 3

    def unseen(v):
        return v - 1

    jax.jit(before).trace(S((2,), jnp.float32))
    remove = _jax_compat.install_trace_probe(_Recorder())
    try:
        assert _types_of(_jax_compat.cached_trace_keys(before, None)) == ["f32[2]"]
        assert len(listings) == 1
        assert _jax_compat.cached_trace_keys(fresh, None) == []
        assert len(listings) == 1
        jax.jit(fresh).trace(S((4,), jnp.float32))
        assert _types_of(_jax_compat.cached_trace_keys(fresh, None)) == ["f32[4]"]
        assert len(listings) == 2
        assert _types_of(_jax_compat.cached_trace_keys(before, None)) == ["f32[2]"]
        assert _jax_compat.cached_trace_keys(unseen, None) == []
        assert len(listings) == 3
    finally:
        remove()
    jax.jit(unseen).trace(S((5,), jnp.float32))  # no probe installed: JAX's cache gains a key no one saw
    remove = _jax_compat.install_trace_probe(_Recorder())
    try:
        assert _types_of(_jax_compat.cached_trace_keys(unseen, None)) == ["f32[5]"]
        assert len(listings) == 4
    finally:
        remove()


LISTING_WHILE_COLLECTING = """
import gc
import jax, jax.numpy as jnp
from jaxshow import _jax_compat

def traced_function():
    def f(x):
        return x + 1
    f.cycle = f  # freed only by a collection, whose weakref callback evicts f's entries from JAX's tracing cache
    jax.jit(f).trace(jax.ShapeDtypeStruct((3,), jnp.float32))
    return f

kept = [traced_function() for _ in range(50)]
for allocations_before_a_collection in (5, 10, 20, 40, 80):
    gc.disable()
    for _ in range(300):
        traced_function()
    gc.set_threshold(gc.get_count()[0] + allocations_before_a_collection)
    gc.enable()  # the collection starts a few allocations in: in the middle of JAX's walk of its cache
    listed = _jax_compat.traced_functions()
    keys = _jax_compat.cached_trace_keys(kept[0], None)
    gc.set_threshold(700)
    gc.collect()
listed = _jax_compat.traced_functions()
print(sum(f in listed for f in kept), len(keys))
"""


def test_listing_the_tracing_cache_survives_a_collection_that_frees_traced_functions():
    """jaxlib 0.9.x crashed (SIGSEGV) when a collection freed a traced function while it listed its tracing cache."""
    out = subprocess.run([sys.executable, "-c", LISTING_WHILE_COLLECTING], capture_output=True, text=True, timeout=300)
    assert (out.returncode, out.stderr[-2000:]) == (0, "")
    assert out.stdout.split() == ["50", "1"]


def test_on_caches_cleared_runs_the_callback_per_jax_clear_caches_while_its_handle_is_held():
    """jaxshow joins JAX's cache registry to hear jax.clear_caches(); JAX holds the handle weakly, so dropping it ends
    the callback."""
    heard = []
    handle = _jax_compat.on_caches_cleared(lambda: heard.append(1))
    assert handle is not None
    jax.clear_caches()
    jax.clear_caches()
    assert heard == [1, 1]
    del handle
    gc.collect()
    jax.clear_caches()
    assert heard == [1, 1]


@pytest.mark.parametrize("session_on", [False, True])
def test_an_error_in_one_of_jaxs_operations_reads_as_without_jaxshow(session_on):
    matmul = jax.jit(lambda a, b: jnp.matmul(a, b))
    session = retrace.Session(jax_text="never").start() if session_on else None
    try:
        with pytest.raises(TypeError) as caught:
            matmul(jnp.ones((2, 3)), jnp.ones((4, 5)))
    finally:
        if session is not None:
            session.stop()
    frames, tb = [], caught.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert _jax_compat.__file__ not in frames
    assert "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)." == str(caught.value)


def test_dataclass_static_fields_reads_the_order_jax_registered():
    import dataclasses

    @partial(jax.tree_util.register_dataclass, data_fields=["w"], meta_fields=["b", "a"])
    @dataclasses.dataclass
    class Both:
        w: jax.Array
        a: int
        b: str

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Marked:
        w: jax.Array
        n: int = dataclasses.field(metadata=dict(static=True), default=1)

    class Node:
        pass

    jax.tree_util.register_pytree_node(Node, lambda n: ((), None), lambda _, c: Node())
    assert _jax_compat.dataclass_static_fields(Both) == ("b", "a")
    assert jax.tree_util.tree_structure(Both(jnp.ones(1), 1, "x")).node_data()[1] == ("x", 1)
    assert _jax_compat.dataclass_static_fields(Marked) == ("n",)
    assert _jax_compat.dataclass_static_fields(Node) is None
    assert _jax_compat.dataclass_static_fields(dict) is None
