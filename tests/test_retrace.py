"""jaxshow.explain() on real JAX: every miss category, trace-time output, and JAX left as it was found."""

from __future__ import annotations

import logging
import os
import re
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import pytest

import jaxshow
from jaxshow import _jax_compat, render, retrace
from jaxshow.render.style import NOTE_STYLE
from jaxshow.retrace.freeze import retrace_message
from jaxshow.report import MISS_CATEGORIES, ArgChange

EXPLAIN_LOGGERS = [_jax_compat.explain_logger_name(), "jax._src.compiler", "jax._src.compilation_cache"]


def _logger_state():
    return [
        (name, lg.level, tuple(lg.handlers), tuple(lg.filters), lg.propagate, lg.disabled)
        for name in EXPLAIN_LOGGERS
        for lg in [logging.getLogger(name)]
    ]


def _misses(ex, name):
    return [m for f in ex.report.functions if f.function == name for m in f.misses]


def test_categories_in_jax_order_with_evidence(capfd):
    @jax.jit
    def f(x):
        return x * 2

    @partial(jax.jit, static_argnums=1)
    def g(x, n):
        return x * n

    @jax.jit
    def h(t):
        return t[0] + t[1]

    with jaxshow.explain() as ex:
        f(jnp.ones(3))
        f(jnp.ones(3))
        f(jnp.ones(4))
        f(jnp.ones(4, jnp.int32))
        f(1.0)
        g(jnp.ones(2), 2)
        g(jnp.ones(2), 3)
        h((jnp.ones(2), jnp.ones(2)))
        h([jnp.ones(2), jnp.ones(2)])
        with jax.numpy_rank_promotion("raise"):
            f(jnp.ones(3))
    f_misses = _misses(ex, "f")
    assert [m.category for m in f_misses] == ["never_seen", "input_types", "input_types", "input_types", "tracing_context"]
    shape = f_misses[1]
    assert (shape.changes[0].where, shape.changes[0].now, shape.changes[0].before) == ("x", "f32[4]", "f32[3]")
    assert shape.summary == "x: now f32[4], before f32[3]"
    assert f_misses[2].changes[0].now == "i32[4]"
    assert "weak_type=True" in f_misses[3].changes[0].now
    ctx = f_misses[4]
    assert (ctx.changes[0].now, ctx.changes[0].before) == ("raise", "allow")
    # jax 0.8 to 0.10.1 keep the trace context in C++ without names: jaxshow names each position itself
    assert ctx.changes[0].where == "jax_numpy_rank_promotion"
    assert not any("does not name the config option" in n for n in ex.report.notes)
    static = _misses(ex, "g")[1]
    assert static.category == "static_args" and (static.changes[0].now, static.changes[0].before) == ("3", "2")
    assert static.changes[0].where == "n"
    if _jax_compat.JAX_VERSION >= (0, 11):  # JAX no longer compares static values; its text says so, jaxshow's follows
        assert static.evidence.endswith("  cache miss explanation unavailable")
        assert static.evidence_notes == (
            "(JAX gave no reason. The most similar earlier signature differs thus:\n"
            "  different static arguments (compared by jaxshow):\n"
            "  * at input path [0][1], now Static(val=3) and before Static(val=2), so the static values differ)",
        )
    tree = _misses(ex, "h")[1]
    assert tree.category == "input_pytree" and "list" in tree.changes[0].now
    assert all(m.evidence_source == "jax" and m.evidence.startswith("TRACING CACHE MISS") for m in f_misses)
    stats = {f.function: f for f in ex.report.functions}
    assert stats["f"].traced == 5 and stats["g"].traced == 2 and stats["h"].traced == 2
    assert "TRACING CACHE MISS" not in capfd.readouterr().err


_LIBRARY_CODE = '''
class _GraphMeta:
    """Pytree metadata as flax NNX's ``GraphDef`` prints it: over several lines, its attributes as ``Static(value=…)``."""

    def __init__(self, scale, act):
        self.scale, self.act = scale, act

    def __eq__(self, other):
        return isinstance(other, _GraphMeta) and (other.scale, other.act) == (self.scale, self.act)

    def __hash__(self):
        return hash(self.scale)

    def __repr__(self):
        return (f"GraphDef(nodes=[NodeDef(\\n  type='MLP',\\n  index=0,\\n)], "
                f"attributes=[('l1', NodeAttr()), ('act', Static(value={self.act})), ('scale', Static(value={self.scale}))])")


class _Module:
    def __init__(self, w, meta):
        self.w, self.meta = w, meta


def flatten(m):
    return (m.w,), m.meta


def unflatten(meta, children):
    return _Module(children[0], meta)
'''
"""A flax module and its GraphDef, as a library's code: compiled as a file of an installed package, so that JAX's
explanation of a miss runs their flatten and repr as it runs flax's (jaxshow never runs a user's again)."""
_library = {"__name__": "a_library"}
exec(compile(_LIBRARY_CODE, os.path.join(os.path.dirname(jax.__file__), "_a_library_node.py"), "exec"), _library)
_GraphMeta, _Module = _library["_GraphMeta"], _library["_Module"]
jax.tree_util.register_pytree_node(_Module, _library["flatten"], _library["unflatten"])


def test_a_change_in_pytree_metadata_names_the_part_that_changed():
    # flax NNX: a module's static attribute (model.scale = 2.0) is in its GraphDef, the metadata of the pytree
    # nnx.jit passes; JAX prints it over 100 lines. The miss read "different static arguments: see JAX's explanation"
    # (flax's own Static(value=…) taken for JAX's static arguments), the multi-line entry unread. A flax TrainState
    # with another optimizer (state.replace(tx=…)) printed both whole metadata tuples with their memory addresses.
    @jax.jit
    def f(m, x):
        return m.w * x

    def relu(v):
        return v

    with jaxshow.explain() as ex:
        f(_Module(jnp.ones(2), _GraphMeta(1.0, relu)), 1.0)
        f(_Module(jnp.ones(2), _GraphMeta(2.0, relu)), 1.0)
        f(_Module(jnp.ones(2), _GraphMeta(2.0, lambda v: v)), 1.0)
        f(_Module(jnp.ones(2), _GraphMeta(2.0, lambda v: v)), 1.0)
    _, scale, act, same_repr = _misses(ex, "f")
    assert (scale.category, scale.changes) == ("input_pytree", (ArgChange(
        "m (_Module's pytree metadata)", "…('scale', Static(value=2.0))…", "…('scale', Static(value=1.0))…"),))
    assert scale.summary == ("m (_Module's pytree metadata): now …('scale', Static(value=2.0))…, "
                             "before …('scale', Static(value=1.0))…")
    assert (act.changes[0].now, act.changes[0].before) == ("…Static(value=<function test_a_change_in_pytree_metadata_names_the_part_that_changed.<locals>.<lambda>>)…",
                                  "…Static(value=<function test_a_change_in_pytree_metadata_names_the_part_that_changed.<locals>.relu>)…")
    assert (same_repr.changes[0].now, same_repr.changes[0].before) == (
        "…Static(value=<function test_a_change_in_pytree_metadata_names_the_part_that_changed.<locals>.<lambda>>)… (another object)",
        "…Static(value=<function test_a_change_in_pytree_metadata_names_the_part_that_changed.<locals>.<lambda>>)…")


class _Options(NamedTuple):
    scale: float
    act: Any


def test_a_change_that_prints_alike_names_the_object_compared_by_identity():
    # flax's CNN tutorial: a model made anew with self.avg_pool = partial(nnx.avg_pool, ...) re-traced nnx.jit's
    # train_step, and the miss showed the two GraphDef texts, alike, cut at 300 characters before any difference: a
    # functools.partial compares by identity, and its repr names no address
    @partial(jax.jit, static_argnums=1)
    def f(m, options):
        return m.w * options.scale

    def relu(v):
        return v

    with jaxshow.explain() as ex:
        f(_Module(jnp.ones(2), _GraphMeta(1.0, partial(relu))), _Options(1.0, relu))
        f(_Module(jnp.ones(2), _GraphMeta(1.0, partial(relu))), _Options(1.0, relu))
        f(_Module(jnp.ones(2), _GraphMeta(1.0, relu)), _Options(1.0, partial(relu)))
        f(_Module(jnp.ones(2), _GraphMeta(1.0, relu)), _Options(1.0, partial(relu)))
    _, graph, _, static = _misses(ex, "f")
    part = "act = functools.partial(<function test_a_change_that_prints_alike_names_the_object_compared_by_identity.<locals>.relu>)"
    # options is static: where JAX numbers only the traced arguments (jax >= 0.11), [0][0] is not the first parameter
    assert (graph.category, graph.changes) == ("input_pytree", (ArgChange("argument 0 (_Module's pytree metadata)", part, part),))
    assert graph.summary == (f"argument 0 (_Module's pytree metadata): equal as printed, unequal as compared: {part} is another "
                             "object, compared by identity: make it once, or make it a static field that compares by value")
    assert (static.category, static.summary) == ("static_args", (
        f"options: equal as printed, unequal as compared: {part} is another object, compared by identity: make it once, "
        "or make it a static field that compares by value"))
    assert retrace_message(static, 0).splitlines()[1] == f"  {static.summary}"  # %jaxcache freeze's RetraceError


def test_function_redefined_in_a_loop_is_recognised():
    with jaxshow.explain() as ex:
        for _ in range(3):
            jax.jit(lambda x: x + 1)(jnp.ones(2))
    (row,) = ex.report.functions  # three lambdas of one definition: one row, the third counted
    assert (row.objects, row.traced, row.left_out_by_category) == (3, 3, (("redefined", 1),))
    categories = [m.category for m in row.misses]
    assert categories[0] in ("never_seen", "redefined")
    assert categories[1:] == ["redefined"]


def test_no_miss_is_explicit_and_hits_are_not_counted_by_the_api():
    @jax.jit
    def warm(x):
        return x + 1

    warm(jnp.ones(2))
    with jaxshow.explain() as ex:
        warm(jnp.ones(2))
    assert ex.report.misses == ()
    assert not ex.report.hits_counted
    assert "no jitted function of yours was traced" in str(ex.report)


def test_trace_time_print_is_flagged_and_still_printed(capsys):
    @jax.jit
    def noisy(x):
        print("tracing noisy")
        return x - 1

    with jaxshow.explain() as ex:
        noisy(jnp.ones(2))
        noisy(jnp.ones(2))
        print("after")
    out = capsys.readouterr().out
    assert out == "tracing noisy\nafter\n", "the cell's own output is unchanged"
    stats = next(f for f in ex.report.functions if f.function == "noisy")
    assert stats.trace_time_output == ("tracing noisy\n",)
    text = str(ex.report)
    assert "ran at trace time: runs once per cache miss" in text
    assert 'jax.debug.print("x = {x}", x=x)' in text and "never as an f-string" in text


def test_config_and_loggers_are_restored_even_when_the_block_raises():
    before_flag = jax.config.values["jax_explain_cache_misses"]
    before_logs = _logger_state()
    before_fn = _jax_compat._trace_cache_callable()

    @jax.jit
    def f(x):
        return x / 2

    with pytest.raises(ZeroDivisionError):
        with jaxshow.explain() as ex:
            f(jnp.ones(2))
            1 / 0
    assert jax.config.values["jax_explain_cache_misses"] == before_flag
    assert _logger_state() == before_logs
    assert _jax_compat._trace_cache_callable() is before_fn
    assert ex.report.cell_error.type_name == "ZeroDivisionError"
    assert [m.category for m in ex.report.misses] == ["never_seen"]


def test_previous_true_flag_is_restored():
    jax.config.update("jax_explain_cache_misses", True)
    try:
        with jaxshow.explain():
            pass
        assert jax.config.values["jax_explain_cache_misses"] is True
    finally:
        jax.config.update("jax_explain_cache_misses", False)


def _static_sequence(jax_text):
    @partial(jax.jit, static_argnums=1)
    def k(x, n):
        return x * n

    with jaxshow.explain(jax_text=jax_text) as ex:
        k(jnp.ones(2), 1)
        k(jnp.ones(3), 1)
        k(jnp.ones(3), 2)
        k(jnp.ones(3, jnp.int32), 2)
    return ex.report.misses


def test_misses_are_explained_against_the_most_similar_earlier_signature():
    ours, theirs = _static_sequence("never"), _static_sequence("always")
    assert theirs[0].category == "redefined", "the second k has the first one's name and source"
    # k(i32[3], 2) follows k(f32[3], 1) and k(f32[3], 2): the most similar earlier call differs
    # only in the type of x. JAX 0.9-0.10 explains it against (f32[3], 1) as a static-argument
    # change, JAX >= 0.11 (blind to static arguments) against (f32[2], 1); jaxshow shows the
    # closer signature, on every version, and keeps JAX's text.
    for misses in (ours, theirs):
        assert [m.category for m in misses[1:]] == ["input_types", "static_args", "input_types"]
        assert misses[1].summary == "x: now f32[3], before f32[2]"
        assert misses[3].summary == "x: now i32[3], before f32[3]"
    assert all(m.evidence_source == "jaxshow" for m in ours[1:])
    assert all(m.evidence_source == "jax" for m in theirs)
    assert [m.changes for m in ours[1:]] == [m.changes for m in theirs[1:]]
    closer = "The most similar earlier signature differs thus:\n  different input types:\n  * at x, now i32[3] and before f32[3])"
    if _jax_compat.JAX_VERSION >= (0, 11):
        # k(f32[3], 2): JAX ranks the unseen static change last and names the type change from k(f32[2], 1).
        assert theirs[2].evidence.endswith("* at x, now f32[3] and before f32[2]")
        assert theirs[2].evidence_notes == (
            "(JAX explained it against another earlier signature: different input types. The most similar earlier signature "
            "differs thus:\n  different static arguments (compared by jaxshow):\n"
            "  * at input path [0][1], now Static(val=2) and before Static(val=1), so the static values differ)",
        )
        assert theirs[3].evidence.endswith("* at x, now i32[3] and before f32[2]"), "a type of x either way: not said twice"
        assert theirs[3].evidence_notes == ()
    elif _jax_compat.JAX_VERSION >= (0, 9):
        assert theirs[3].evidence.endswith("Static(val=1), so the pytree node metadata does not match")
        assert theirs[3].evidence_notes == (f"(JAX explained it against another earlier signature: different static arguments. {closer}",)


def test_jax_comparing_with_another_signature_is_said_only_where_it_names_another_cause():
    # JAX compares f32[7] with f32[11], jaxshow with f32[12]: evidence read '… before f32[11]\n(JAX explained it against
    # another earlier signature: different input types. The most similar earlier signature differs thus: …)'
    @jax.jit
    def k(x):
        return x * 2

    with jaxshow.explain(jax_text="always") as ex:
        k(jnp.ones(11))
        k(jnp.ones(12))
        k(jnp.ones(7))
    miss = ex.report.misses[-1]
    assert (miss.category, miss.summary, miss.evidence_source) == ("input_types", "x: now f32[7], before f32[12]", "jax")
    assert "* at x, now f32[7] and before f32[11]" in miss.evidence
    assert miss.evidence_notes == ()


@pytest.mark.skipif(not (0, 9) <= _jax_compat.JAX_VERSION < (0, 11), reason="JAX explains k(1.0, 2) against the signature jaxshow does")
def test_jaxshows_note_on_jaxs_text_is_its_own_and_spaces_the_link_jax_glues_on():
    """'| … Static(val=1), so the pytree node metadata does not match' ran on, inside JAX's quoted text, into jaxshow's
    '| (JAX explained it against another earlier signature: …  * at x, now f32[]{weak_type=True} and before
    f32[]{weak_type=False}https://docs.jax.dev/…)'; the note is now jaxshow's, under the quote, the link apart."""
    @partial(jax.jit, static_argnums=1)
    def k(x, n):
        return x * n

    with jaxshow.explain(jax_text="always") as ex:
        k(jnp.float32(1), 1)
        k(jnp.ones(2), 1)
        k(jnp.float32(1), 2)
        k(1.0, 2)
    miss = ex.report.misses[-1]
    assert miss.evidence.endswith("Static(val=1), so the pytree node metadata does not match")
    assert miss.evidence_notes == (
        "(JAX explained it against another earlier signature: different static arguments. The most similar earlier signature "
        "differs thus:\n  different input types:\n  * at x, now f32[]{weak_type=True} and before f32[]{weak_type=False} "
        "https://docs.jax.dev/en/latest/type_promotion.html#weak-types)",
    )
    text = render.to_text(ex.report, render.TextBudget(width=100))
    assert ("       |       Static(val=1), so the pytree node metadata does not match\n"
            "       (JAX explained it against another earlier signature: different static arguments. The most\n"
            "           similar earlier signature differs thus:\n"
            "         different input types:\n"
            "         * at x, now f32[]{weak_type=True} and before f32[]{weak_type=False}\n"
            "             https://docs.jax.dev/en/latest/type_promotion.html#weak-types)\n") in text
    html = render.to_html(ex.report)
    assert (f"so the pytree node metadata does not match</code></pre></details><div style=\"{NOTE_STYLE}\">(JAX explained it "
            "against another earlier signature: different static arguments. The most similar earlier signature differs thus:\n"
            "  different input types:\n  * at x, now f32[]{weak_type=True} and before f32[]{weak_type=False} "
            "https://docs.jax.dev/en/latest/type_promotion.html#weak-types)</div>") in html


@pytest.mark.parametrize("jax_text", ["always", "never"])
def test_the_link_jax_glues_onto_a_weak_type_is_spaced_apart_in_the_evidence(jax_text):
    # JAX's control-flow page under %jaxcache on: '* at x, now i32[3]({}){weak_type=False} and before
    # i32[]({}){weak_type=True}https://docs.jax.dev/…', the link run into the type, in JAX's words and in jaxshow's diff
    @jax.jit
    def k(x):
        return x % 2 == 0

    with jaxshow.explain(jax_text=jax_text) as ex:
        k(24)
        k(jnp.array([-1, 2, 5]))
    miss = ex.report.misses[-1]
    assert miss.evidence_source == ("jax" if jax_text == "always" else "jaxshow")
    assert "{weak_type=True}" in miss.evidence and "https://docs.jax.dev/" in miss.evidence
    assert not re.search(r"\Shttps://", miss.evidence)  # jax 0.7 writes 'See https://…' on a line of its own


@pytest.mark.skipif(not hasattr(jax.sharding.AbstractMesh((1,), ("a",)), "abstract_device"), reason="this jax's mesh names no devices")
def test_meshes_apart_only_by_their_devices_are_said_so():
    # JAX's export page: export.export(jax.jit(f)) with an AbstractMesh((4,), ('a',)), then with a Mesh of 4
    # devices: 'x: now i32[32]({Auto: ('a',)}), before i32[32]({Auto: ('a',)})', the same type twice
    from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec as P

    auto = (AxisType.Auto,)
    abstract, concrete = AbstractMesh((1,), ("a",), axis_types=auto), Mesh(jax.local_devices()[:1], ("a",), axis_types=auto)
    k = jax.jit(lambda x: x.T)
    with jaxshow.explain() as ex:
        k.trace(jax.ShapeDtypeStruct((4,), jnp.int32, sharding=NamedSharding(abstract, P("a"))))
        k.trace(jax.ShapeDtypeStruct((4,), jnp.int32, sharding=NamedSharding(concrete, P("a"))))
    miss = ex.report.misses[-1]
    device = jax.local_devices()[0].device_kind
    assert (miss.category, miss.summary) == ("input_types", f"x: now i32[4] on mesh ('a': 1) of {device} devices, before i32[4] on mesh ('a': 1)")


def test_a_type_change_is_closer_than_a_static_change():
    @partial(jax.jit, static_argnums=1)
    def k(x, n):
        return x * n

    with jaxshow.explain(jax_text="never") as ex:
        k(jnp.ones(3), 1)
        k(jnp.ones(3, jnp.int32), 2)
        k(jnp.ones(3, jnp.int32), 1)
    last = ex.report.misses[-1]
    if _jax_compat.JAX_VERSION >= (0, 9):  # static arguments rank with the pytree, also on jax >= 0.11
        assert (last.category, last.summary) == ("input_types", "x: now i32[3], before f32[3]")
    else:  # JAX <= 0.8 ranks by total diff size: a tie, which the most recent key wins
        assert (last.category, last.summary) == ("static_args", "n: now 1, before 2")


def test_history_is_bounded_per_function():
    @jax.jit
    def many(x):
        return x + 1

    with jaxshow.explain(jax_text="never") as ex:
        for n in range(1, retrace.HISTORY_LIMIT + 6):
            many(jnp.ones(n))
    record = retrace.registry.history(many.__wrapped__)
    assert len(record.keys) == retrace.HISTORY_LIMIT
    assert record.traces == retrace.HISTORY_LIMIT + 5
    assert ex.report.functions[0].traced == retrace.HISTORY_LIMIT + 5


def test_toggling_the_explain_flag_does_not_invalidate_the_trace_cache():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 3

    x = jnp.ones(3)
    f(x)
    size = f._cache_size()
    jax.config.update("jax_explain_cache_misses", True)
    try:
        f(x)
    finally:
        jax.config.update("jax_explain_cache_misses", False)
    f(x)
    with jaxshow.explain():
        f(x)
    assert len(traces) == 1 and f._cache_size() == size


def test_parse_keeps_unknown_text_verbatim():
    text = "TRACING CACHE MISS at cell.py:3 (<module>):\n  for f defined at cell.py:1\n  cache miss explanation unavailable"
    category, changes, same_line, site = retrace.parse_explanation(text)
    assert (category, changes, same_line, site) == ("other", (), False, "cell.py:3 (<module>)")
    category, *_ = retrace.parse_explanation("  Debug info doesn't match.")
    assert category == "debug_info"


def test_keywords_passed_another_way_read_in_one_order_whatever_order_jax_prints_them():
    # JAX prints the keys as a Python set, in the order of the process's string hashes: the same two calls read
    # 'num_layers: now by keyword, …; activation_name: …' in one kernel and the reverse in the next.
    text = ("  different input pytree:\n  * at input path [1], now <class 'dict'> with 2 children and before <class 'dict'> "
            "with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {keys}")
    read = [retrace.parse_explanation(text.format(keys=keys))[:2] for keys in ("{'b_name' 'a_name'}", "{'a_name' 'b_name'}")]
    assert read[0] == read[1] == ("input_pytree", (ArgChange("a_name", "by keyword", "not passed"),
                                                   ArgChange("b_name", "by keyword", "not passed")))


def test_jax_0_8_static_keyword_text_is_named_by_parameter():
    text = "  * key with different value of static kwargs:\n      now {mode: 'b', n: (1, 2)} and before {mode: 'a', n: (1, 2)}"
    category, changes, *_ = retrace.parse_explanation(text)
    assert (category, changes) == ("static_args", (ArgChange("static kwargs", "{mode: 'b', n: (1, 2)}", "{mode: 'a', n: (1, 2)}"),))
    assert retrace._name_static_args(changes, None, None, ("x",)) == (ArgChange("mode", "'b'", "'a'"),)


def test_static_arguments_by_input_path_are_named_by_parameter_as_jaxstages_names_them():
    changes = (ArgChange("argument 1", "3", "2"), ArgChange("argument 4", "True", "False"), ArgChange("keyword 'mode'", "'b'", "'a'"))
    assert retrace._name_static_args(changes, None, None, ("x", "n")) == (
        ArgChange("n", "3", "2"), ArgChange("args[4]", "True", "False"), ArgChange("mode", "'b'", "'a'"),
    )


def test_when_cheap_switches_to_bounded_history_once_jax_would_compare_many_keys():
    @jax.jit
    def grow(x):
        return x + 2

    n = retrace.JAX_TEXT_MAX_ENTRIES + 8
    with jaxshow.explain(jax_text="when_cheap") as ex:
        for size in range(1, n + 1):
            grow(jnp.ones(size))
    assert _jax_compat.trace_cache_entries(grow.__wrapped__) > retrace.JAX_TEXT_MAX_ENTRIES
    last = ex.report.misses[-1]
    assert last.evidence_source == "jaxshow", "JAX's O(N) explanation is off once its cache is large"
    assert last.category == "input_types" and last.summary == f"x: now f32[{n}], before f32[{n - 1}]"


def test_a_function_traced_before_the_session_is_known_after_new_functions_were_answered_without_listing():
    """A session (JAX's own text off) lists JAX's tracing cache at the first miss of a function it keeps no history
    of, to find the traces made before it looked; later new functions are answered without listing it again. A function
    traced before the session still reads as a change of its earlier signature, not a first trace."""
    retrace.registry.clear()
    S = jax.ShapeDtypeStruct

    def made_before(v):
        return v + 1

    def first(v):
        return v * 2

    def second(v):
        return v * 3

    made_before = jax.jit(made_before)
    made_before.trace(S((2,), jnp.float32))
    session = retrace.Session(jax_text="never").start()
    try:
        jax.jit(first).trace(S((2,), jnp.float32))
        jax.jit(second).trace(S((2,), jnp.float32))
        made_before.trace(S((3,), jnp.float32))
    finally:
        session.stop()
    misses = {f.function: [(m.category, m.summary) for m in f.misses] for f in session.report().functions}
    assert misses == {
        "first": [("never_seen", "first trace of first")],
        "second": [("never_seen", "first trace of second")],
        "made_before": [("input_types", "v: now f32[3], before f32[2]")],
    }


def _varied_misses(misses_kept):
    """A function that misses for every reason; each run uses a new one (the registry forgets the last)."""
    retrace.registry.clear()

    @partial(jax.jit, static_argnums=1)
    def v(t, n):
        return jax.tree.map(lambda a: a * n, t)

    S = jax.ShapeDtypeStruct
    session = retrace.Session(jax_text="never", misses_kept=misses_kept).start()
    try:
        for size in range(1, 8):
            v.trace(S((size,), jnp.float32), 1)
        v.trace(S((7,), jnp.int32), 1)
        v.trace(S((7,), jnp.int32), 2)
        v.trace(1.0, 2)
        v.trace(jnp.float32(1.0), 2)
        v.trace((S((2,), jnp.float32), S((2,), jnp.float32)), 2)
        v.trace([S((2,), jnp.float32), S((2,), jnp.float32)], 2)
        v.trace([S((3,), jnp.float32), S((2,), jnp.float32)], 2)
        with jax.numpy_rank_promotion("raise"):
            v.trace(S((7,), jnp.int32), 2)
            v.trace(S((8,), jnp.int32), 2)
        v.trace(S((7,), jnp.int32), 3)
    finally:
        session.stop()
    (stats,) = session.report().functions
    return stats


def test_categories_counted_without_jaxs_diff_are_the_ones_its_diff_gives():
    explained = _varied_misses(None)  # every miss explained (JAX's diff against the closest key, read as text)
    counted = _varied_misses((0, 0))  # none kept: type-only misses are counted without asking JAX's diff
    assert explained.misses_left_out == 0 and len(explained.misses) == explained.traced == 17
    assert counted.misses == () and counted.misses_left_out == counted.traced == 17
    by_category = {}
    for m in explained.misses:
        by_category[m.category] = by_category.get(m.category, 0) + 1
    assert dict(counted.left_out_by_category) == by_category
    assert set(by_category) == {"never_seen", "input_types", "static_args", "input_pytree", "tracing_context"}
    assert [c for c, _ in counted.left_out_by_category] == [c for c in MISS_CATEGORIES if c in by_category]


def test_a_function_keeps_its_first_and_last_misses_in_detail_and_counts_the_rest():
    @jax.jit
    def w(x):
        return x - 1

    with jaxshow.explain(jax_text="never") as ex:
        for size in range(1, 41):
            w.trace(jax.ShapeDtypeStruct((size, 3), jnp.float32))  # 2-D: no jax.numpy helper another test counts on is traced
    (stats,) = ex.report.functions
    first, last = retrace.MISSES_KEPT_FIRST, retrace.MISSES_KEPT_LAST
    assert (stats.traced, len(stats.misses), stats.misses_left_out, stats.left_out_after) == (40, first + last, 40 - first - last, first)
    assert stats.left_out_by_category == (("input_types", 40 - first - last),)
    assert [m.signature for m in stats.misses] == [(("x", f"f32[{s},3]"),) for s in [*range(1, first + 1), *range(41 - last, 41)]]
    assert stats.misses[-1].summary == "x: now f32[40,3], before f32[39,3]"
    history = retrace.trace_history("w", w)  # the function's history is explained when asked for, the same way
    assert history.traces_observed == 40 and len(history.entries) == retrace.HISTORY_LIMIT
    assert history.entries[-1].summary == "x: now f32[40,3], before f32[39,3]" and history.entries[-1].category == "input_types"


def test_an_unexplained_miss_points_at_the_evidence_there_is_never_at_missing_words():
    from jaxshow.retrace.miss_text import miss_summary

    assert miss_summary("other", (), "f") == "see JAX's explanation"
    assert miss_summary("other", (), "f", source="jaxshow") == "see jaxshow's comparison with the closest earlier signature"
    assert miss_summary("other", (), "f", source="none") == "no explanation available"


def test_the_enclosing_function_is_read_from_the_qualified_name():
    from jaxshow.retrace.miss_text import enclosing_function

    assert enclosing_function("make_and_run.<locals>.<lambda>") == "make_and_run"
    assert enclosing_function("Model.loss.<locals>.f") == "Model.loss"
    assert enclosing_function("outer.<locals>.inner.<locals>.<lambda>") == "outer.inner"
    assert enclosing_function("<lambda>") is None and enclosing_function("Model.apply") is None


def test_explain_shows_its_option_in_its_signature():
    """help(jaxshow.explain) read 'explain(**kwargs)', hiding its one option, jax_text."""
    import inspect

    params = inspect.signature(jaxshow.explain).parameters
    assert [(p.name, p.kind.name, p.default) for p in params.values()] == [("jax_text", "KEYWORD_ONLY", "always")]
    with pytest.raises(TypeError, match="unexpected keyword argument 'jax_txt'"):
        jaxshow.explain(jax_txt="never")


def test_options_defined_since_an_earlier_trace_read_as_one_change_named_or_counted():
    """Options a module defined between two traces (JAX appends them to its trace context): by name where this JAX
    names the context's positions, else counted with their values (an option a library defines outside JAX's modules,
    on a JAX that cannot list the names)."""
    from jaxshow.retrace.classify import _options_defined_since

    assert _options_defined_since(("pallas_grid_context",), (None,)) == ArgChange(
        "JAX's trace context", "also pallas_grid_context (None)", "without it (a module imported since defined it)")
    assert _options_defined_since(None, (False, None)) == ArgChange(
        "JAX's trace context", "also 2 options (False, None)", "without them (a module imported since defined them)")
