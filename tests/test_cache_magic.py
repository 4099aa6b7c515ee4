"""%jaxcache and %%jaxcache in a real InteractiveShell: the cell runs once, misses are explained, JAX is left as found."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import html.parser
import inspect
import logging
import os
import re
import sys

import IPython
import jax
import jax.monitoring
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import jaxshow
from jaxshow import _jax_compat, render, retrace
from jaxshow.capture import calls
from jaxshow.report import CacheClearReport, CacheReport, PersistentCacheReport, TraceHistory
from shellrun import DEFINES_NO_OPTION, DEFINES_OPTION, run_captured, unwrapped, wider_lines

SETUP = """
import jax, jax.numpy as jnp
from functools import partial
traces = []

@jax.jit
def f(x):
    traces.append(1)
    print("tracing f")
    return x * 2

@partial(jax.jit, static_argnums=1)
def scale(x, n):
    return x * n

x = jnp.ones(3)
"""

LOGGERS = [_jax_compat.explain_logger_name(), "jax._src.compiler", "jax._src.compilation_cache", "jax"]


def _jax_state():
    from jax._src import monitoring

    logs = [(n, lg.level, tuple(lg.handlers), tuple(lg.filters), lg.propagate) for n in LOGGERS for lg in [logging.getLogger(n)]]
    listeners = (
        tuple(monitoring.get_event_listeners()),
        tuple(monitoring.get_event_duration_listeners()),
        tuple(monitoring.get_scalar_listeners()) if hasattr(monitoring, "get_scalar_listeners") else (),
    )
    return dict(jax.config.values), logs, listeners, _jax_compat._trace_cache_callable(), calls._hooks.captures()


@pytest.fixture
def shell(ip):
    retrace.registry.clear()
    ip.run_cell(SETUP, store_history=True)
    return ip




def test_cell_runs_once_value_is_out_and_counts_are_exact(shell):
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)\ny = f(x)\ny = f(jnp.ones(4))\nlen(traces)")
    assert result.success and result.result == 2
    assert shell.user_ns["traces"] == [1, 1]
    rep = shell.user_ns["rep"]
    assert isinstance(rep, CacheReport)
    stats = rep.functions[0]
    assert (stats.function, stats.calls, stats.traced, stats.hits, stats.cache_size) == ("f", 3, 2, 1, 2)
    assert [m.category for m in stats.misses] == ["never_seen", "input_types"]
    assert stats.misses[1].summary == "x: now f32[4], before f32[3]"
    assert stats.defined_at == f"In[{result.execution_count - 1}]:5"  # IPython drops the leading blank line
    assert [m.call_site for m in stats.misses] == [f"In[{result.execution_count}]:2", f"In[{result.execution_count}]:4"]
    assert cap.stdout.startswith("tracing f\ntracing f\n"), "trace-time output still reaches the cell"
    assert "TRACING CACHE MISS" not in cap.stderr
    text = cap.outputs[-1].data["text/plain"]
    assert "ran at trace time: runs once per cache miss" in text and "jax.debug.print" in text
    assert 'class="jaxshow"' in cap.outputs[-1].data["text/html"]


def test_trace_time_output_one_line_over_the_budget_says_one_more_line(shell):
    """501 lines printed while tracing, 500 shown: the line under them read '… 1 more lines'."""
    cell = "@jax.jit\ndef chatty(v):\n    for i in range(501):\n        print(i)\n    return v\n"
    result, cap = run_captured(shell, f"%%jaxcache\n{cell}chatty(x)")
    assert result.success and cap.stdout.startswith("0\n1\n")
    assert "       > 499\n       > … 1 more line\n" in cap.outputs[-1].data["text/plain"]
    assert "499\n… 1 more line</code>" in cap.outputs[-1].data["text/html"]


def test_the_headline_counts_the_functions_that_traced(shell):
    """flax's MNIST loop under %%jaxcache: a train_step traced in an earlier cell and hit 10 times here, beside ev
    traced 4 times and plainf once, read '5 traces of 3 jitted functions'. Its row stays in the table; the headline
    now counts the 2 functions those 5 traces were of."""
    run_captured(shell, "y = f(x)")
    shell.run_cell("@jax.jit\ndef g(v):\n    return v + 1", store_history=True)
    result, cap = run_captured(shell, "%%jaxcache\nfor i in range(3):\n    y = f(x)\n    z = g(jnp.ones(i + 1))")
    lines = cap.outputs[-1].data["text/plain"].splitlines()
    assert lines[0] == "%jaxcache — 3 traces of 1 jitted function"
    assert [" ".join(row.split()[:4]) for row in lines[3:5]] == ["f 3 0 3", "g 3 3 0"]


def test_every_category_in_a_real_shell(shell):
    cell = "\n".join([
        "%%jaxcache -o rep",
        "f(x); f(jnp.ones(4)); f(jnp.ones(4, jnp.int32)); f(1.0)",
        "scale(x, 2); scale(x, 3)",
        "with jax.numpy_rank_promotion('raise'):",
        "    f(x)",
        "for i in range(2):",
        "    jax.jit(lambda v: v + 1)(x)",
    ])
    result, _ = run_captured(shell, cell)
    assert result.success
    rep = shell.user_ns["rep"]
    by_name = {}
    for fs in rep.functions:
        by_name.setdefault(fs.function, []).extend(m.category for m in fs.misses)
    assert by_name["f"] == ["never_seen", "input_types", "input_types", "input_types", "tracing_context"]
    assert by_name["scale"] == ["never_seen", "static_args"]
    assert by_name["<lambda>"][1] == "redefined"


@pytest.mark.skipif(not hasattr(jax, "new_ref"), reason="jax.new_ref arrived after jax 0.7")
def test_a_ref_argument_is_one_trace_of_the_users_function(shell):
    """A jitted function given a ``jax.new_ref``: jax 0.12 traces the user's jaxpr once more, through its cached
    trace_to_jaxpr, to discharge the Ref (``_eval_jaxpr_discharge_state``, under the user's debug info). That was a
    second row, '_eval_jaxpr_discharge_state' defined at JAX's discharge.py, and its re-trace was 'a new
    functools.partial wrapper, made per call: make it once, outside the loop or cell'."""
    shell.run_cell("@jax.jit\ndef accumulate(ref, v):\n    ref[...] += v\n    return ref[...].sum()\n"
                   "counter = jax.new_ref(jnp.zeros(3))", store_history=True)
    run_captured(shell, "%%jaxcache\naccumulate(counter, x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\naccumulate(counter, jnp.ones(3, jnp.int32))")
    assert result.result.tolist() == 6.0
    rep = shell.user_ns["rep"]
    assert [(fs.function, fs.traced) for fs in rep.functions] == [("accumulate", 1)]
    assert [m.summary for m in rep.functions[0].misses] == ["v: now i32[3], before f32[3]"]
    text = cap.outputs[-1].data["text/plain"]
    assert text.startswith("%jaxcache — 1 trace of 1 jitted function\n")
    assert "functools.partial" not in text


def test_an_operator_on_an_array_is_jaxs_own_call(shell):
    """``-x`` calls the jit JAX's ``jnp.negative`` ufunc holds: it was a row of the user's jitted functions, 'negative',
    defined at JAX's ufuncs.py, since JAX's module holds the ufunc, not that jit, under the name."""
    result, cap = run_captured(shell, "%%jaxcache -o rep\nneg = -jnp.arange(7.0)")
    assert result.success
    assert shell.user_ns["rep"].functions == ()
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code"


def test_a_custom_vjp_function_defined_again_is_the_same_source(shell):
    """A ``jax.custom_vjp`` function (a callable object with a ``__getattr__`` of JAX's) defined again by the same cell
    text read 'first trace of a new f: it replaces the f defined at In[n]:1 that traced before, with other code' though
    the code was the same: its source was no longer read. It is read from its ``__wrapped__``, without running a lookup."""
    cell = ("@jax.custom_vjp\ndef cv(v):\n    return jnp.sin(v)\n"
            "cv.defvjp(lambda v: (jnp.sin(v), jnp.cos(v)), lambda c, g: (c * g,))\njax.jit(cv)(1.0)")
    assert run_captured(shell, "%%jaxcache\n" + cell)[0].success
    result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
    assert result.success
    [row] = shell.user_ns["rep"].functions
    assert (row.function, row.misses[0].category) == ("cv", "redefined")
    assert row.misses[0].summary == "cv is a new function object with the same name and source as one traced before"


def test_two_lambdas_of_one_line_are_two_definitions(shell):
    """``inspect`` gives two lambdas of one line the same source: the second read 'first trace of a new <lambda>: it
    replaces the <lambda> defined at In[n]:1 that traced before, with other code', and the line run again folded both
    into one row, '<lambda> (2 function objects)'."""
    cell = "%%jaxcache -o rep\nf2, g2 = jax.jit(lambda v: v * 2), jax.jit(lambda v: v * 3)\nf2(x); g2(x)"
    for first in (True, False):
        result, cap = run_captured(shell, cell)
        assert result.success
        rows = shell.user_ns["rep"].functions
        assert [(f.function, f.traced, f.objects) for f in rows] == [("<lambda>", 1, 1), ("<lambda>", 1, 1)]
        summaries = [f.misses[0].summary for f in rows]
        assert summaries == (["first trace of <lambda>"] * 2 if first else ["<lambda> is a new function object with the same name and source as one traced before"] * 2)


def test_a_trace_ahead_of_time_is_not_said_to_be_made_by_a_call_elsewhere(shell):
    """'comp = lowered_first.lower(x).compile(); lowered_first(x)' read 'note: calls and hits count the calls written in
    the cell, not lowered_first's 1 trace made by a call elsewhere': the trace was the cell's own .lower(), no call."""
    shell.run_cell("@jax.jit\ndef lowered_first(v):\n    return v - 1")
    _, cap = run_captured(shell, "%%jaxcache -o rep\ncomp = lowered_first.lower(x).compile()\nlowered_first(x)")
    assert "elsewhere" not in cap.outputs[-1].data["text/plain"]
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.traced_calls, stats.traced_ahead, stats.hits) == (1, 1, 0, 1, 1)


def test_an_argument_passed_another_way_is_said_so(shell):
    """JAX keys ``g(x, n=2)`` apart from ``g(x, 2)``: the miss read 'different input pytree: [0]: now tuple of length 2,
    before tuple of length 1; [1]: now <class 'dict'> with 0 child, …' (jax 0.10, 0.12) or 'static kwargs: now {},
    before {n: 2}; n: now 2, before ' (jax 0.7), and ``g(x, n=5)`` was compared with ``g(x, 2)``, not ``g(x, n=2)``.
    A static argument passed another way, or a static keyword passed now and left out before, read 'different input
    pytree' on jax 0.10 and 0.12 ('different static arguments' on jax 0.7): JAX words it as a pytree of another shape;
    it reads 'different static arguments' on each, and a traced argument passed another way 'different input pytree'."""
    shell.run_cell("def scale2(v, n):\n    return v * n\ng = jax.jit(scale2, static_argnames=('n',))\n"
                   "@partial(jax.jit, static_argnames=('mode',))\ndef act(v, mode='relu'):\n"
                   "    return jnp.tanh(v) if mode == 'tanh' else jax.nn.relu(v)")
    shell.run_cell("def times(v, w):\n    return v * w\nh = jax.jit(times)")
    cells = ["g(x, n=2); g(x, 2); g(x, n=5)", "act(x); act(x, mode='tanh'); act(x, 'tanh')", "h(x, w=x); h(x, x)"]
    _, cap = run_captured(shell, "%%jaxcache -o rep\n" + "\n".join(cells))
    misses = {f.function: [(c.where, c.now, c.before) for m in f.misses[1:] for c in m.changes] for f in shell.user_ns["rep"].functions}
    categories = {f.function: [m.category for m in f.misses[1:]] for f in shell.user_ns["rep"].functions}
    assert categories == {"scale2": ["static_args"] * 2, "act": ["static_args"] * 2, "times": ["input_pytree"]}
    assert misses["scale2"] == [("n", "by position", "by keyword"), ("n", "5", "2")]
    # jax <= 0.8 picks the closest key itself: act(x), whose static arguments it lists without the keyword's name
    last = ("mode", "by position", "not passed") if jax.__version_info__ >= (0, 9) else ("mode", "'tanh'", "not passed")
    assert misses["act"] == [("mode", "by keyword", "not passed"), last]
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert ("n: now by position, before by keyword (JAX keys a call by how its arguments are passed: pass n the same way "
            "each time)") in text
    assert "different static arguments: n: now 5, before 2 " in text
    assert "2. different static arguments: mode: now by keyword, before not passed called at" in text
    assert "2. different static arguments: n: now by position, before by keyword (JAX keys" in text
    assert "2. different input pytree: w: now by position, before by keyword (JAX keys" in text


def test_a_changed_pytree_node_is_named_by_its_parameter(shell):
    """'different input pytree: argument 1: now <class 'list'>, before <class 'tuple'>' named the argument by its
    position, where every other miss names the parameter: 'pair'; a keyword's node by its name. A node of another
    class read as Python's repr of both classes ('now <class '__main__.Box'>, before <class 'mod.Params'>'); it now
    names them: 'now a list, before a tuple'."""
    shell.run_cell("@jax.jit\ndef pairwise(v, pair, opts=None):\n    return v * pair[0] + pair[1]\npairwise(x, (x, x), opts={'a': x})")
    _, cap = run_captured(shell, "%%jaxcache -o rep\npairwise(x, [x, x], opts={'a': x})\npairwise(x, [x, x], opts={'a': x, 'b': x})")
    assert [[(c.where, c.now, c.before) for c in m.changes] for m in shell.user_ns["rep"].functions[0].misses] == [
        [("pair", "a list", "a tuple")],
        [("opts", "<class 'dict'> with 2 children", "<class 'dict'> with 1 child")]]
    assert "1. different input pytree: pair: now a list, before a tuple\n" in cap.outputs[-1].data["text/plain"]
    shell.run_cell("import collections\nNT = collections.namedtuple('NT', 'a b')\nclass Obj(tuple):\n    pass\n"
                   "jax.tree_util.register_pytree_node(Obj, lambda o: (tuple(o), None), lambda _, c: Obj(c))")
    pairs = {"p1": ("NT(x, x)", "[x, x]"), "p2": ("Obj((x, x))", "NT(x, x)"), "p3": ("collections.OrderedDict({0: x, 1: x})", "Obj((x, x))")}
    run_captured(shell, "%%jaxcache -o rep\n" + "".join(f"{name} = jax.jit(lambda pair: pair[0])\n{name}({before})\n{name}({now})\n"
                                                           for name, (now, before) in pairs.items()))
    assert [[(c.where, c.now, c.before) for c in f.misses[1].changes] for f in shell.user_ns["rep"].functions] == [
        [("pair", "an NT", "a list")], [("pair", "an Obj", "an NT")], [("pair", "a collections.OrderedDict", "an Obj")]]
    # a vowel said as a consonant read 'now an UnitPair, before a list'
    shell.run_cell("UnitPair = collections.namedtuple('UnitPair', 'a b')\nOnePair = collections.namedtuple('OnePair', 'a b')")
    run_captured(shell, "%%jaxcache -o rep\nq1 = jax.jit(lambda pair: pair[0])\nq1([x, x])\nq1(UnitPair(x, x))\nq1(OnePair(x, x))")
    assert [[(c.where, c.now, c.before) for c in m.changes] for m in shell.user_ns["rep"].functions[0].misses[1:]] == [
        [("pair", "a UnitPair", "a list")], [("pair", "a OnePair", "a UnitPair")]]


def test_a_pytree_metadata_change_is_compared_with_the_signature_that_differs_only_there(shell):
    """A model switched to eval mode (flax NNX's ``model.eval()``: its ``GraphDef``'s metadata) after calls with two
    batch sizes: the miss read 'different input pytree: argument 0 (Net's pytree metadata): now ('eval',), before
    ('train',); v: now f32[8], before f32[16]', against the newest signature, though the first differs only in the mode
    (and JAX's own words, beside it, said so)."""
    shell.run_cell("import dataclasses\n@partial(jax.tree_util.register_dataclass, data_fields=['w'], meta_fields=['mode'])\n"
                   "@dataclasses.dataclass\nclass Net:\n    w: jax.Array\n    mode: str\n"
                   "@jax.jit\ndef apply(net, v):\n    return v * net.w if net.mode == 'train' else v + net.w")
    cell = "w = x.sum()\napply(Net(w, 'train'), x); apply(Net(w, 'train'), jnp.ones(4)); apply(Net(w, 'eval'), x)"
    _, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
    [row] = shell.user_ns["rep"].functions
    assert [[(c.where, c.now, c.before) for c in m.changes] for m in row.misses] == [
        [], [("v", "f32[4]", "f32[3]")], [("net.mode (a static field of Net)", "'eval'", "'train'")]]
    assert ("3. different input pytree: net.mode (a static field of Net): now 'eval', before 'train'\n"
            in cap.outputs[-1].data["text/plain"])


def test_a_dataclasss_static_field_that_changed_is_named(shell):
    """A dataclass's static fields are its pytree metadata, one tuple of their values: a miss read 'cfg (Cfg's pytree
    metadata): now ('relu', 2, 0.5), before ('relu', 1, 0.5)', leaving the user to count which field. Each static field
    that differs is named, in the order JAX registered them (here not their order in the class)."""
    shell.run_cell("import dataclasses\n"
                   "class Act:\n    def __init__(self, k): self.k = k\n    def __eq__(self, o): return isinstance(o, Act) and o.k == self.k\n"
                   "    def __hash__(self): return hash(self.k)\n"
                   "@partial(jax.tree_util.register_dataclass, data_fields=['w'], meta_fields=['act', 'rate', 'depth'])\n"
                   "@dataclasses.dataclass\nclass Cfg:\n    w: jax.Array\n    depth: int\n    rate: float\n    act: Act\n"
                   "@jax.jit\ndef run(cfg, v):\n    return v * cfg.w * cfg.depth * cfg.rate")
    cell = ("w = x.sum()\nrun(Cfg(w, 1, 0.5, Act('relu')), x)\nrun(Cfg(w, 2, 0.5, Act('relu')), x)\n"
            "run(Cfg(w, 3, 0.25, Act('relu')), x)\nrun(Cfg(w, 4, 0.25, Act('gelu')), x)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
    [row] = shell.user_ns["rep"].functions
    assert [[(c.where, c.now, c.before) for c in m.changes] for m in row.misses[1:]] == [
        [("cfg.depth (a static field of Cfg)", "2", "1")],
        [("cfg.rate (a static field of Cfg)", "0.25", "0.5"), ("cfg.depth (a static field of Cfg)", "3", "2")],
        # an object that prints alike, as what differs in it, though another field changed too
        [("cfg.act (a static field of Cfg)", "k = 'gelu'", "k = 'relu'"), ("cfg.depth (a static field of Cfg)", "4", "3")]]
    assert ("3. different input pytree: cfg.rate (a static field of Cfg): now 0.25, before 0.5; cfg.depth (a static "
            "field of Cfg): now 3, before 2 called at") in " ".join(cap.outputs[-1].data["text/plain"].split())


def test_many_arrays_cast_alike_are_said_together(shell):
    """A model's 40 parameters cast to bfloat16: the miss's line listed 'p['layer0']: now bf16[3], before f32[3];
    p['layer1']: …' forty times, cut at 1,668 characters. Arrays of one argument whose dtype alone changed alike are said
    together; other changes follow, as before."""
    shell.run_cell("sums = jax.jit(lambda p, v: sum(jnp.sum(a) for a in p.values()) + v.sum())\n"
                   "p = {f'layer{i:02}': jnp.ones(3) for i in range(40)}\ny = sums(p, x)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\ny = sums(jax.tree.map(lambda a: a.astype(jnp.bfloat16), p), jnp.ones(4))")
    [miss] = shell.user_ns["rep"].functions[0].misses
    assert len(miss.changes) == 41
    assert miss.summary == ("p: 40 arrays now bf16, before f32 (shapes as before: p['layer00'], p['layer01'], p['layer02'] …); "
                            "v: now f32[4], before f32[3]")
    assert "1. different input types: p: 40 arrays now bf16, before f32 (shapes as before: p['layer00']," in cap.outputs[-1].data["text/plain"]


def test_a_miss_closest_to_an_older_signature_diffs_its_jaxpr_with_that_trace(shell):
    """``pair(x3, x3); pair(x4, x4); pair(x3_int, x3)``: the third miss is explained against the first signature (one type
    differs), but its jaxpr was diffed against the previous trace, the second, and so showed the shapes' change too."""
    shell.run_cell("pair = jax.jit(lambda a, b: a + b)\nx4 = jnp.ones(4)\nxi = jnp.ones(3, jnp.int32)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\npair(x, x); pair(x4, x4); pair(xi, x)")
    third = shell.user_ns["rep"].functions[0].misses[2]
    assert [(c.where, c.now, c.before) for c in third.changes] == [("a", "i32[3]", "f32[3]")]
    assert third.jaxpr_diff.stage == "jaxpr against the trace of the closest earlier signature"
    assert [line for line in third.jaxpr_diff.lines if line[:1] in "+-"] == [
        "-{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b in (c,) }",
        "+{ lambda ; a:i32[3] b:f32[3]. let",
        "+    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a",
        "+    d:f32[3] = add c b",
        "+  in (d,) }"]
    assert "jaxpr against the trace of the closest earlier signature: +4 −1 lines" in cap.outputs[-1].data["text/plain"]


def test_static_argument_change_names_the_parameter_and_both_values(shell):
    shell.run_cell("@partial(jax.jit, static_argnames='mode')\ndef power(v, mode):\n    return v ** mode")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nscale(x, 2); scale(x, 3); power(x, mode=2); power(x, mode=3)")
    misses = {f.function: f.misses[1] for f in shell.user_ns["rep"].functions}
    assert [(c.where, c.now, c.before) for c in misses["scale"].changes] == [("n", "3", "2")]
    assert [(c.where, c.now, c.before) for c in misses["power"].changes] == [("mode", "3", "2")]
    text = cap.outputs[-1].data["text/plain"]
    assert "2. different static arguments: n: now 3, before 2\n" in text
    assert "2. different static arguments: mode: now 3, before 2\n" in text


def test_a_recursive_jit_is_explained_against_the_trace_it_ran_inside(shell):
    """``fact(x, n)`` calling ``fact(x, n - 1)`` (a static ``n``) traces each level inside the trace above it, which JAX's
    cache holds only once it ends: JAX says "never seen function" for each; jaxshow read that as the function's first
    trace four times over. Each inner trace is said against the trace it ran inside; the outermost, which ends last, is
    the first."""
    shell.run_cell("@partial(jax.jit, static_argnums=1)\ndef fact(v, n):\n    return v if n <= 1 else n * fact(v, n - 1)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nfact(x, 4)")
    [row] = shell.user_ns["rep"].functions
    assert [(m.category, m.summary, m.call_site) for m in row.misses] == [
        ("static_args", "n: now 1, before 2", "In[2]:3 in fact"),
        ("static_args", "n: now 2, before 3", "In[2]:3 in fact"),
        ("static_args", "n: now 3, before 4", "In[2]:3 in fact"),
        ("never_seen", "first trace of fact", "In[2]:2"),
    ]
    note = ("(JAX's cache held no signature of fact yet: this call ran inside fact's own trace (a recursive call), whose key "
            "JAX's cache holds only once that trace ends. What differs is said against that trace's signature.)")
    assert [note in m.evidence_notes for m in row.misses] == [True, True, True, False]
    text = cap.outputs[-1].data["text/plain"]
    assert "    3. different static arguments: n: now 3, before 4\n       called at In[2]:3 in fact\n" in text


def test_a_jit_recursing_on_smaller_shapes_is_explained_against_the_enclosing_shape(shell):
    """``f`` calling itself on ``x.sum(0)`` until one axis is left: each inner trace's shape is said against the shape of
    the trace it ran inside; a later call of another shape is compared with every signature JAX's cache holds."""
    shell.run_cell("@jax.jit\ndef down(v):\n    return v.sum() if v.ndim == 1 else down(v.sum(0))")
    _, cap = run_captured(shell, "%%jaxcache -o rep\ndown(jnp.ones((2, 3, 4)))\ndown(jnp.ones((5, 4)))")
    [row] = shell.user_ns["rep"].functions
    assert [(m.category, m.summary) for m in row.misses[:3]] == [
        ("input_types", "v: now f32[4], before f32[3,4]"),
        ("input_types", "v: now f32[3,4], before f32[2,3,4]"),
        ("never_seen", "first trace of down"),
    ]
    assert row.misses[3].category == "input_types" and row.misses[3].summary.startswith("v: now f32[5,4], before f32[")
    assert row.traced == 4


def test_an_argument_made_static_by_another_jit_says_static_and_traced(shell):
    """``jax.jit(g, static_argnames=['n'])`` of a ``g`` jitted before without: JAX's words differ by version (jax 0.10:
    'argument 1: now <class 'jax._src.tree_util.Static'>, before pytree leaf'; jax 0.12: 'same types, different debug
    info'; jax 0.7: 'see JAX's explanation'); each reads which argument is now static, with its value and the type it
    was traced as (found in the jit notebook of JAX's new docs)."""
    shell.run_cell("def g(v, n):\n    return v + n\ndef h(v, n):\n    return v * n")
    _, cap = run_captured(shell, "%%jaxcache\njax.jit(g)(x, 20)\njax.jit(g, static_argnames=['n'])(x, 20)\n"
                                 "jax.jit(h, static_argnums=1)(x, 2)\njax.jit(h)(x, 2)")
    text = cap.outputs[-1].data["text/plain"]
    assert "2. different static arguments: n: now static (20), before traced (i32[]{weak_type=True})\n" in text
    assert "2. different static arguments: n: now traced (i32[]{weak_type=True}), before static (2)\n" in text


def test_a_static_value_change_after_a_traced_jit_is_said_against_the_static_trace(shell):
    """JAX's control-flow notebook: ``jax.jit(f)(10, 4)`` failed, then ``jit(f, static_argnames='length')`` at 10, then 5.
    jax 0.12 keeps static arguments out of the pytree, so the traced trace differed from 5's in its debug info only and
    ranked closer than the length=10 trace: the miss read 'length: now static (5), before traced (i32[]…)'."""
    shell.run_cell("def shaped(length, val):\n    return jnp.ones((length,)) * val\n"
                   "try:\n    jax.jit(shaped)(10, 4)\nexcept TypeError:\n    pass")
    _, cap = run_captured(shell, "%%jaxcache -o rep\ngood = jax.jit(shaped, static_argnames='length')\n"
                                 "good(10, 4)\ngood(5, 4)")
    [row] = shell.user_ns["rep"].functions
    assert [(c.where, c.now, c.before) for c in row.misses[1].changes] == [("length", "5", "10")]
    assert "2. different static arguments: length: now 5, before 10\n" in cap.outputs[-1].data["text/plain"]


def test_a_keyword_static_whose_repr_hides_the_change_is_named(shell):
    """A static keyword whose dataclass repr hides its field (``S()`` both ways) read 'static kwargs: now n = 5, before
    n = 3' on jax 0.7, JAX's words for all static keywords; it reads ``s``, as on jax 0.10 and 0.12."""
    shell.run_cell("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass S:\n    n: int = dataclasses.field(repr=False)\n"
                   "@partial(jax.jit, static_argnames='s')\ndef sg(v, s=S(1)):\n    return v * s.n\nsg(x, s=S(3))")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nsg(x, s=S(5))")
    [miss] = shell.user_ns["rep"].functions[0].misses
    assert [(c.where, c.now, c.before) for c in miss.changes] == [("s", "n = 5", "n = 3")]
    assert "1. different static arguments: s: now n = 5, before n = 3 " in " ".join(cap.outputs[-1].data["text/plain"].split())


def test_a_static_value_changed_beside_a_keyword_passed_another_way_is_named(shell):
    """JAX's diff stops at its first difference: ``g(p, x, num_layers=4, activation_name="gelu")`` after
    ``g(p, x, num_layers=3)`` read only 'activation_name: now by keyword, before not passed'. Every part reads."""
    shell.run_cell("@partial(jax.jit, static_argnames=('num_layers', 'activation_name'))\n"
                   "def layers(p, v, num_layers=2, activation_name='relu'):\n    return p * v * num_layers\n"
                   "layers(x, x, num_layers=3)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nlayers(x, x, num_layers=4, activation_name='gelu')\n"
                                 "layers(jnp.ones(4), jnp.ones(4), num_layers=5, activation_name='gelu')")
    misses = shell.user_ns["rep"].functions[0].misses
    assert [[(c.where, c.now, c.before) for c in m.changes] for m in misses] == [
        [("activation_name", "by keyword", "not passed"), ("num_layers", "4", "3")],
        [("num_layers", "5", "4"), ("p", "f32[4]", "f32[3]"), ("v", "f32[4]", "f32[3]")]]
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert "activation_name: now by keyword, before not passed; num_layers: now 4, before 3 " in text


def test_the_trace_after_a_trace_that_raised_is_seen(shell):
    """A trace that raised leaves an entry in JAX's cache, and the same call run again counts as a hit there though it
    traces: after 'f(x)' raised in its trace, the fixed 'f(x)' read traced 0 (jax 0.10, 0.12), its trace-time print
    unexplained. It is the trace it was."""
    shell.run_cell("bad = True\n@jax.jit\ndef flaky(v):\n    print('tracing flaky')\n    if bad:\n        raise ValueError('boom')\n"
                   "    return v * 2")
    assert type(run_captured(shell, "%%jaxcache\nflaky(x)")[0].error_in_exec) is ValueError
    shell.run_cell("bad = False")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nflaky(x)")
    assert result.success and cap.stdout.startswith("tracing flaky\n")
    [row] = shell.user_ns["rep"].functions
    assert (row.function, row.calls, row.traced, [m.category for m in row.misses]) == ("flaky", 1, 1, ["not_kept"])


def test_a_trace_that_raised_says_so_where_the_cell_caught_the_error(shell):
    """flax's transforms guide: ``try: y = f(3) except Exception as e: print(e)`` around an ``nnx.jit`` whose trace
    raised: under %jaxcache its miss read 'first trace of f' and the signature, as a trace that made a program does
    (%%jaxstages said 'failed while tracing'). The miss now says what the trace raised; one that did not says nothing."""
    shell.run_cell("@jax.jit\ndef branchy(v):\n    if v > 0:\n        return v\n    return -v")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ntry:\n    branchy(3)\nexcept Exception as e:\n    print(type(e).__name__)\n"
                                      "y = f(x)")
    assert result.success and cap.stdout == "TracerBoolConversionError\ntracing f\n"
    text = unwrapped(cap.outputs[-1].data["text/plain"])
    assert (" called at In[2]:3 the trace raised TracerBoolConversionError: Attempted boolean conversion of traced array with "
            "shape bool[]. signature traced: v: i32[]{weak_type=True}") in text
    assert text.count("the trace raised") == 1
    [raised, fine] = [row.misses[0] for row in shell.user_ns["rep"].functions]
    assert (raised.trace_error.type_name, raised.trace_error.stage, fine.trace_error) == ("TracerBoolConversionError", "trace", None)
    assert "the trace raised </span>TracerBoolConversionError: Attempted boolean conversion" in cap.outputs[-1].data["text/html"]


def test_a_static_keyword_left_out_beside_a_changed_positional_static_is_not_passed(shell):
    """jax 0.7: 'h(x, 5)' after 'h(x, 3, mode="b")' read 'mode: now by position, before by keyword', as though the
    changed positional static value were mode's; mode is not passed."""
    shell.run_cell("@partial(jax.jit, static_argnames=('n', 'mode'))\ndef h(v, n, mode='a'):\n    return v * n\n"
                   "h(x, 3, mode='b')")
    run_captured(shell, "%%jaxcache -o rep\nh(x, 5)")
    [miss] = shell.user_ns["rep"].functions[0].misses
    assert [(c.where, c.now, c.before) for c in miss.changes] == [("mode", "not passed", "by keyword"), ("n", "5", "3")]


def test_rerun_cell_is_recognised_as_redefinition(shell):
    shell.run_cell("%%jaxcache\n@jax.jit\ndef r(v):\n    return v + 1\nr(x)")
    run_captured(shell, "%%jaxcache -o rep\n@jax.jit\ndef r(v):\n    return v + 1\nr(x)")
    miss = shell.user_ns["rep"].functions[0].misses[0]
    assert miss.category == "redefined"
    assert "same name and source" in miss.summary


def test_a_first_trace_nested_in_another_is_never_called_a_redefinition(shell):
    # blackjax's inference loop: jax.lax.scan over a jitted step traces it nested, where JAX logs no call site; JAX's
    # same-line hint compares call sites, so it fires for every nested first trace after another one
    shell.run_cell("def loop_a(c, ks):\n    return jax.lax.scan(jax.jit(lambda c, k: (c + k, c)), c, ks)\n"
                   "def loop_b(c, ks):\n    @jax.jit\n    def one_step(c, k):\n        return c * k, c\n"
                   "    return jax.lax.scan(one_step, c, ks)")
    result, _ = run_captured(shell, "%%jaxcache -o rep\nout = loop_a(1.0, jnp.arange(3.0))\nout = loop_b(1.0, jnp.arange(3.0))")
    assert result.success
    misses = [m for f in shell.user_ns["rep"].functions for m in f.misses]
    assert [m.function for m in misses] == ["<lambda>", "one_step"]
    assert [m.category for m in misses] == ["never_seen", "never_seen"]
    assert not any(m.same_line_hint for m in misses)
    text = str(shell.user_ns["rep"])
    assert "re-defined function" not in text and "it may be re-defined on every run" not in text
    if "seen another function defined on the same line" in text:  # JAX's words stay, with jaxshow's reading of them
        assert "here it is no sign of a re-definition" in text


def test_functions_first_traced_in_a_loop_are_first_traces_not_redefinitions(shell):
    # JAX's same-line hint compares call sites: the second function a loop first traces gets it (so did loss under
    # jax.grad of an eqx.filter_jit function, after equinox's own lambdas), and was called 're-defined function'
    shell.run_cell("@jax.jit\ndef first(v):\n    return v + 1\n@jax.jit\ndef second(v):\n    return v * 2")
    result, _ = run_captured(shell, "%%jaxcache -o rep\nfor fn in (first, second):\n    y = fn(x)")
    assert result.success
    misses = {f.function: f.misses for f in shell.user_ns["rep"].functions}
    assert [(m.category, m.summary) for m in misses["second"]] == [("never_seen", "first trace of second")]
    text = " ".join(str(shell.user_ns["rep"]).split())
    assert "re-defined function" not in text and "same name and source" not in text
    if misses["second"][0].same_line_hint:
        assert "JAX: another function was traced for the first time from this same call site before" in text


def test_a_jitted_bound_method_is_defined_at_its_line(shell):
    # update = jax.jit(svi.update) (numpyro's SVI) was listed 'defined at: update at', JAX's source info half read
    n = run_captured(shell, "class Stepper:\n    def update(self, s, v):\n        return s + v\nstepper = Stepper()")[0].execution_count
    result, _ = run_captured(shell, "%%jaxcache -o rep\nupdate = jax.jit(stepper.update)\ns = update(x, x)")
    assert result.success
    [stats] = shell.user_ns["rep"].functions
    assert (stats.function, stats.qualname, stats.defined_at) == ("update", "Stepper.update", f"In[{n}]:2")


def test_a_cell_with_no_miss_says_so(shell):
    shell.run_cell("f(x)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nf(x)")
    rep = shell.user_ns["rep"]
    assert rep.functions[0].traced == 0 and rep.functions[0].hits == 1
    assert "no cache miss: every jitted call hit the cache" in cap.outputs[-1].data["text/plain"]


def test_cell_error_propagates_and_config_is_restored(shell):
    before = _jax_state()
    result, cap = run_captured(shell, "%%jaxcache\nsentinel = f(x)\nraise KeyError('boom')")
    assert not result.success and type(result.error_in_exec) is KeyError
    assert "sentinel" in shell.user_ns
    assert "the cell raised KeyError" in cap.outputs[-1].data["text/plain"]
    assert _jax_state() == before


def test_on_mode_reports_under_following_cells_until_off(shell):
    before = _jax_state()
    _, cap = run_captured(shell, "%jaxcache on")
    assert "%jaxcache on" in cap.stdout
    _, cap = run_captured(shell, "f(x)")
    assert cap.outputs and "never-seen function" in cap.outputs[-1].data["text/plain"]
    _, cap = run_captured(shell, "f(x)")
    assert not cap.outputs, "a cell with no trace stays quiet in on mode"
    _, cap = run_captured(shell, "f(jnp.ones(5))")
    text = cap.outputs[-1].data["text/plain"]
    assert "x: now f32[5], before f32[3]" in text and "not counted" in text
    run_captured(shell, "%jaxcache off")
    _, cap = run_captured(shell, "f(jnp.ones(6))")
    assert not cap.outputs
    assert _jax_state() == before


def test_on_mode_reports_the_whole_cell_that_ran_an_empty_cell_inside_it(shell):
    """``get_ipython().run_cell('')`` ends with no start (IPython skips an empty cell before ``pre_run_cell``): the
    report came at that end with the traces so far, and the cell's later traces were in no report."""
    run_captured(shell, "%jaxcache on")
    _, cap = run_captured(shell, "f(jnp.ones(43))\nget_ipython().run_cell('')\nf(jnp.ones(44));")
    [text] = [o.data["text/plain"] for o in cap.outputs]
    assert text.splitlines()[0] == "%jaxcache — 2 traces of 1 jitted function"
    assert "x: now f32[44], before f32[43]" in text
    run_captured(shell, "%jaxcache off")


def test_on_mode_lists_a_jit_the_user_made_of_a_function_of_jaxs(shell):
    # 'normal = jax.jit(jax.random.normal, static_argnums=1)', then 'normal(k, (3,))' and 'normal(k, (4,))' in later
    # cells got no report under %jaxcache on (it has no call hook to tell the user's jit from JAX's own), though
    # %%jaxcache explained the re-trace. JAX's tracing cache is keyed on jax.random.normal, the same function in every
    # test, and %jaxcache on starts a function's history from the keys that cache holds: cleared, so another test's
    # normal(k, (3,)) is not this one's earlier signature
    jax.clear_caches()
    run_captured(shell, "%jaxcache on")
    shell.run_cell("normal = jax.jit(jax.random.normal, static_argnums=1)\nk = jax.random.key(0)", store_history=True)
    result, cap = run_captured(shell, "y = normal(k, (2,))")
    [text] = [o.data["text/plain"] for o in cap.outputs]
    lines = text.splitlines()
    assert lines[0] == "%jaxcache — 1 trace of 1 jitted function"
    code = inspect.unwrap(jax.random.normal).__code__
    at = lines.index("  normal:")
    assert " ".join(" ".join(lines[1:at]).split()) == f"normal: traced 1 · defined at {code.co_filename}:{code.co_firstlineno}"
    assert lines[at + 1:at + 3] == ["    1. never-seen function (first trace): first trace of normal",
                                    f"       called at In[{result.execution_count}]:1"]
    result, cap = run_captured(shell, "z = jax.random.normal(k, (5,))\ny = normal(k, (7,))\nz = jnp.arctan(x)")
    [text] = [o.data["text/plain"] for o in cap.outputs]
    lines = text.splitlines()
    assert lines[0] == "%jaxcache — 1 trace of 1 jitted function"  # JAX's own eager calls are not rows
    at = lines.index("  normal:")
    assert lines[at + 1:at + 3] == ["    1. different static arguments: shape: now (7,), before (2,)",
                                    f"       called at In[{result.execution_count}]:2"]
    _, cap = run_captured(shell, "z = jax.random.normal(k, (6,))\nz = jnp.arcsinh(x)")
    assert not cap.outputs, "JAX's own functions called eagerly are not the user's"
    run_captured(shell, "%jaxcache off")


def test_name_history_and_clear(shell):
    shell.run_cell("%%jaxcache\nf(x); f(jnp.ones(2))")
    _, cap = run_captured(shell, "%jaxcache f -o hist")
    hist = shell.user_ns["hist"]
    assert isinstance(hist, TraceHistory) and hist.traces_observed == 2 and hist.cache_size == 2
    assert [e.signature for e in hist.entries] == [(("x", "f32[3]"),), (("x", "f32[2]"),)]
    assert (hist.objects, hist.objects_traced) == (1, 2) and "function objects" not in cap.outputs[-1].data["text/plain"]
    run_captured(shell, "%jaxcache clear f -o cleared")
    cleared = shell.user_ns["cleared"]
    assert isinstance(cleared, CacheClearReport)
    assert (cleared.entries_before, cleared.entries_after, cleared.history_entries_cleared) == (2, 0, 2)
    assert any("persistent" in n for n in cleared.not_cleared)
    run_captured(shell, "%%jaxcache -o rep\nf(x)")
    miss = shell.user_ns["rep"].functions[0].misses[0]
    assert miss.category == "never_seen" and not miss.same_line_hint


def test_a_first_trace_after_jaxcache_clear_says_the_clear_emptied_its_cache(shell):
    # read 'never-seen function (first trace): first trace of f' over JAX's 'but seen another function defined on the same
    # line; maybe the function is being re-defined repeatedly' (ipykernel names a cell's file by its code: a cell run
    # again calls from the same site), and neither said %jaxcache clear had emptied f's cache
    shell.run_cell("def call():\n    return f(x)", store_history=True)
    run_captured(shell, "%%jaxcache\ncall()")
    run_captured(shell, "%jaxcache clear f")
    _, cap = run_captured(shell, "%%jaxcache -o rep\ncall()")
    miss = shell.user_ns["rep"].functions[0].misses[0]
    assert (miss.category, miss.same_line_hint) == ("never_seen", False)
    assert miss.summary == "first trace of f since %jaxcache clear emptied its cache"
    text = cap.outputs[-1].data["text/plain"]
    assert "    1. never-seen function (first trace): first trace of f since %jaxcache clear emptied its cache\n" in text
    assert "JAX: another function was traced" not in text
    assert miss.evidence.endswith("  but seen another function defined on the same line; maybe the function is\n"
                                  "  being re-defined repeatedly, preventing caching?")
    assert miss.evidence_notes == ("(JAX's same-line hint compares call sites: %jaxcache clear emptied this function's "
                                   "cache, so JAX took its trace for another function's first from the same site; here "
                                   "it is no sign of a re-definition)",)
    assert ("       |   being re-defined repeatedly, preventing caching?\n"
            "       (JAX's same-line hint compares call sites: %jaxcache clear emptied this") in text


def test_name_history_of_a_cell_run_again_says_the_cell_made_its_objects(shell):
    # notebooks/print_fires_once.ipynb's '%jaxcache step' read '%jaxcache step — step' and 'function objects of this
    # definition: 2, 4 traces in all (made anew per call; …)', though the second object came from the cell run again
    # (ipykernel names a cell's file by its code, so both are one definition, as a definition in a loop is here)
    run_captured(shell, "%%jaxcache\nfor n in (2, 1):\n    @jax.jit\n    def step(v):\n        return v + 1\n"
                        "    [step(jnp.ones(k)) for k in range(n)]")
    defined = shell.execution_count - 1
    _, cap = run_captured(shell, "%jaxcache step")
    assert cap.outputs[-1].data["text/plain"].splitlines()[:5] == [
        "%jaxcache step",
        f"  defined at: In[{defined}]:3",
        "  traces observed by jaxshow: 1 (of this function object)",
        "  function objects of this definition: 2, 3 traces in all (re-run cell or definition in a loop; a",
        "    %jaxcache report folds them into one row, 'step (2 function objects)')",
    ]


def test_name_history_of_a_function_made_anew_per_call_counts_the_objects_of_its_definition(shell):
    # '%jaxcache g' read 'traces observed by jaxshow: 1' and one re-definition: true of the last g, but the four
    # earlier objects of the definition, folded into one row in the cell's report, were not mentioned
    shell.run_cell("def body(i):\n    return i + 1", store_history=True)
    defined = shell.execution_count - 1
    run_captured(shell, "%jaxcache on")
    _, cap = run_captured(shell, "for i in range(5):\n    g = jax.jit(partial(body))\n    g(i)")
    assert f"  body (5 function objects)  —      5       —     —              In[{defined}]:1" in cap.outputs[-1].data["text/plain"]
    _, cap = run_captured(shell, "%jaxcache g -o hist")
    hist, text = shell.user_ns["hist"], cap.outputs[-1].data["text/plain"]
    assert (hist.traces_observed, hist.objects, hist.objects_traced, len(hist.entries)) == (1, 5, 5, 1)
    assert text.splitlines()[:6] == [
        "%jaxcache g — body",
        f"  defined at: In[{defined}]:1",
        "  traces observed by jaxshow: 1 (of this function object)",
        "  function objects of this definition: 5, 5 traces in all (made anew per call; a %jaxcache report",
        "    folds them into one row, 'body (5 function objects)')",
        "  cache entries now: 1",
    ]
    assert "function objects of this definition" in cap.outputs[-1].data["text/html"]
    run_captured(shell, "%jaxcache off")


def test_a_trace_after_jax_clear_caches_is_said_to_be_one_jax_let_go(shell):
    """g traced f32[3], then (x64 on) f64[3]; then x64 off, jax.clear_caches() and g(f32[3]) again: JAX traced it anew
    ("never seen function"), and jaxshow, which kept both signatures, compared it with the f64 one, the only one it took
    for visible: 'different tracing context: jax_enable_x64: now False, before True; x: now f32[3], before f64[3]'.
    jaxshow now hears jax.clear_caches() (JAX's cache registry) and lets its kept signatures go with JAX's."""
    shell.run_cell("def twice(v):\n    return v * 2\ng2 = jax.jit(twice)\ny = g2(jnp.ones(3))")
    cells = ('jax.config.update("jax_enable_x64", True)\ny = g2(jnp.ones(3))',
             'jax.config.update("jax_enable_x64", False)\njax.clear_caches()\ny = g2(jnp.ones(3))\ny = g2(jnp.ones(4))',
             'jax.clear_caches()\ny = g2(jnp.ones(5))')
    try:
        reports = []
        for cell in cells:
            result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
            assert result.success, result.error_in_exec
            reports.append(shell.user_ns["rep"].functions[0].misses)
    finally:
        jax.config.update("jax_enable_x64", False)
    assert [(m.category, m.summary) for m in reports[0]] == [
        ("tracing_context", "jax_enable_x64: now True, before False; v: now f64[3], before f32[3]")]
    assert [(m.category, m.summary) for m in reports[1]] == [
        ("not_kept", "jax.clear_caches() emptied JAX's cache since that trace of twice, so JAX traced it again"),
        ("input_types", "v: now f32[4], before f32[3]")]
    assert [(m.category, m.summary) for m in reports[2]] == [
        ("never_seen", "first trace of twice since jax.clear_caches() emptied JAX's cache")]


def test_a_function_that_clears_jaxs_caches_in_its_own_trace_is_counted_traced(shell):
    """jax.clear_caches() inside a jitted function's trace empties the tracing cache's miss counter that tells jaxshow a
    lookup traced: three calls, each traced (JAX kept none), read 'no trace, but 3 calls compiled from an earlier trace'
    with 'traced 0', and %jaxcache on showed no report at all. A clear on the lookup's own thread inside it now marks it
    a miss: a hit runs no code of the user's."""
    cell = ("@jax.jit\ndef clearing(v):\n    traces.append(1)\n    jax.clear_caches()\n    return v * 2\n"
            "y = clearing(x)\ny = clearing(x)\ny = clearing(x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
    assert result.success, result.error_in_exec
    assert shell.user_ns["traces"] == [1, 1, 1]
    stats = shell.user_ns["rep"].functions[0]
    assert (stats.function, stats.calls, stats.traced, stats.hits) == ("clearing", 3, 3, 0)
    assert [(m.category, m.summary) for m in stats.misses] == [("never_seen", "first trace of clearing")] + [
        ("not_kept", "jax.clear_caches() emptied JAX's cache since that trace of clearing, so JAX traced it again")] * 2
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — 3 traces of 1 jitted function"
    run_captured(shell, "%jaxcache on")
    try:
        _, cap = run_captured(shell, cell)
    finally:
        run_captured(shell, "%jaxcache off")
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — 3 traces of 1 jitted function"


def test_persistent_subcommand(shell):
    run_captured(shell, "%%jaxcache\nf(jnp.ones(7))")
    _, cap = run_captured(shell, "%jaxcache persistent -o state")
    state = shell.user_ns["state"]
    assert isinstance(state, PersistentCacheReport)
    assert any(c.module == "jit_f" for c in state.compiles)
    assert "jax.clear_caches()" in cap.outputs[-1].data["text/plain"]


@pytest.mark.parametrize(
    "line, message",
    [
        ("", "needs a subcommand"),
        ("bogus", "neither a subcommand nor a name"),
        ("jnp", "not a jitted function"),
        ("clear", "exactly one function name"),
        ("clear x", "not a jitted function"),
        ("on now", "takes no argument"),
        ("--bogus", "unrecognized arguments"),
        ("f f", "%jaxcache NAME takes one function name, got 'f f'"),  # read "unknown subcommand 'f'"
        # each stored nothing in NAME, without a word
        ("on -o rep", "-o goes with a report (%%jaxcache, NAME, clear NAME, persistent); %jaxcache on shows none"),
        ("freeze f -o rep", "-o goes with a report (%%jaxcache, NAME, clear NAME, persistent); %jaxcache freeze shows none"),
    ],
)
def test_bad_input_is_a_usage_error_with_usage(shell, line, message):
    with pytest.raises(UsageError) as err:
        shell.run_line_magic("jaxcache", line)
    assert message in unwrapped(str(err.value))
    assert str(err.value).splitlines()[-2:] == [
        "%jaxcache [--max-traces N] [-o NAME] [SUBCOMMAND ...]",
        "(subcommands: on | off | persistent | clear NAME | freeze [NAME...] | thaw [NAME...] | NAME)",
    ]


def test_bad_cell_options_run_nothing(shell):
    with pytest.raises(UsageError):
        shell.run_cell_magic("jaxcache", "on", "ran = 1")
    assert "ran" not in shell.user_ns


@pytest.mark.parametrize("line, message", [
    ("on", "the cell form takes no subcommand but freeze, got 'on'"),
    ("--bogus", "unrecognized arguments: --bogus"),
    ("freeze nowhere", "'nowhere' is neither a subcommand nor a name in the namespace"),
])
def test_a_cell_forms_usage_error_shows_the_cell_forms_usage(shell, line, message):
    # read '%jaxcache [--max-traces N] [-o NAME] [SUBCOMMAND ...]' and '(subcommands: on | off | ...)', the line form's
    result, cap = run_captured(shell, f"%%jaxcache {line}\nran = 1")
    assert isinstance(result.error_in_exec, UsageError)
    assert unwrapped(cap.stderr).splitlines() == [
        f"UsageError: {message}", "%%jaxcache [--max-traces N] [-o NAME] [freeze [NAME ...]]"]
    assert "ran" not in shell.user_ns


class _Parser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_hostile_function_names_are_escaped(shell):
    cell = "\n".join([
        "%%jaxcache -o rep",
        "def body(v):",
        "    print('</pre><script>alert(1)</script>')",
        "    return v + 1",
        "body.__name__ = body.__qualname__ = '<script>alert(\"x\")</script>'",
        "evil = jax.jit(body)",
        "evil(x); evil(jnp.ones(2))",
    ])
    _, cap = run_captured(shell, cell)
    page = cap.outputs[-1].data["text/html"]
    assert "<script>" not in page and "&lt;script>" in page
    parser = _Parser()
    parser.feed(page)
    assert "script" not in parser.tags


def test_unload_leaves_jax_as_found(ip):
    ip.run_line_magic("unload_ext", "jaxshow")
    before = _jax_state()
    ip.run_line_magic("load_ext", "jaxshow")
    ip.run_cell(SETUP)
    ip.run_cell("%jaxcache on")
    ip.run_cell("f(x)")
    ip.run_cell("%%jaxcache\nf(jnp.ones(9))")
    ip.run_line_magic("unload_ext", "jaxshow")
    assert _jax_state() == before
    assert "jaxcache" not in ip.magics_manager.magics["line"]
    ip.run_line_magic("load_ext", "jaxshow")


def test_the_cells_own_config_and_logging_changes_survive_the_magic(shell):
    logger = logging.getLogger(LOGGERS[1])
    before = (jax.config.values["jax_explain_cache_misses"], logger.level)
    try:
        cell = (f"%%jaxcache\nimport logging\njax.config.update('jax_explain_cache_misses', True)\n"
                f"logging.getLogger({LOGGERS[1]!r}).setLevel(logging.ERROR)\nf(jnp.ones(21))")
        assert shell.run_cell(cell, store_history=True).success
        assert jax.config.values["jax_explain_cache_misses"] is True
        assert logger.level == logging.ERROR
    finally:
        jax.config.update("jax_explain_cache_misses", before[0])
        logger.setLevel(before[1])


def test_a_function_first_seen_hitting_is_compared_with_the_traces_jax_held_before(shell):
    """f traced f32[3] in a plain cell; a %%jaxcache cell saw it only hit, so jaxshow kept a record of it with no
    signature, and never read the ones JAX held: a later trace with jax_enable_x64 was its only one, and a trace under
    jax.default_matmul_precision was explained against it ('jax_enable_x64: now False, before True; …; x: now f32[3],
    before f64[3]'), though JAX held f32[3] with only the precision other. JAX's signatures are now read at the first
    trace jaxshow sees, as for a function first seen tracing."""
    assert shell.run_cell("y = f(x)").success
    assert run_captured(shell, "%%jaxcache\ny = f(x)")[0].success
    x64 = "jax.config.update('jax_enable_x64', True)\ny = f(jnp.ones(3, 'float64'))\njax.config.update('jax_enable_x64', False)"
    assert run_captured(shell, "%%jaxcache\n" + x64)[0].success
    assert run_captured(shell, "%%jaxcache -o rep\nwith jax.default_matmul_precision('highest'):\n    y = f(x)")[0].success
    [miss] = shell.user_ns["rep"].functions[0].misses
    assert (miss.category, miss.summary) == ("tracing_context", "jax_default_matmul_precision: now highest, before None")


def test_bound_methods_and_partials_count_as_their_jitted_function(shell):
    shell.run_cell(
        "class Model:\n    @partial(jax.jit, static_argnums=0)\n    def apply(self, v):\n        return v * 2\n"
        "model = Model()\nadd = partial(jax.jit(lambda a, b: a + b), 1.0)"
    )
    result, _ = run_captured(shell, "%%jaxcache -o rep\nadd(x); add(x); add(jnp.ones(4))\nmodel.apply(x); model.apply(x)")
    assert result.success
    stats = {s.function: (s.calls, s.traced, s.hits) for s in shell.user_ns["rep"].functions}
    assert stats == {"<lambda>": (3, 2, 1), "apply": (2, 1, 1)}


def test_a_transformation_made_per_call_is_named_as_the_cause(shell):
    shell.run_cell("def soft(v):\n    return jnp.log1p(jnp.exp(v))", store_history=True)
    defined = shell.execution_count - 1
    result, _ = run_captured(shell, "%%jaxcache -o rep\nfor _ in range(2):\n    jax.jit(jax.grad(soft))(3.0)")
    assert result.success
    (row,) = [f for f in shell.user_ns["rep"].functions if f.function == "soft"]  # two wrapper objects, one row
    assert (row.defined_at, row.objects, row.traced) == (f"In[{defined}]:1", 2, 2)
    assert [m.category for m in row.misses] == ["never_seen", "redefined"]
    assert row.misses[1].summary == ("grad(soft) is a new jax.grad wrapper: each call of jax.grad makes a new function object, "
                                       "so JAX's cache cannot find the earlier trace; make it once, outside the loop or cell")


def test_a_wrapper_made_per_call_of_a_new_function_blames_the_function(shell):
    """JAX's remat notebook: 'f = chain_compose([jnp.sin] * 16); print_saved_residuals(f, 3.)' after the same with 8
    read 'f is a new saved_residuals wrapper: … make it once, outside the loop or cell', though f itself was new (made
    inside chain_compose); a re-run cell defining loss then 'jax.jit(jax.grad(loss))' read 'a new jax.grad wrapper'."""
    cell = "%%jaxcache -o rep\ndef loss(v):\n    return jnp.sin(v).sum()\njax.jit(jax.grad(loss))(x)"
    run_captured(shell, cell)
    run_captured(shell, cell)
    [miss] = shell.user_ns["rep"].functions[0].misses
    assert (miss.category, miss.made_by, miss.summary) == (
        "redefined", None, "loss is a new function object with the same name and source as one traced before")
    shell.run_cell("def chain(n):\n    def f(v):\n        for _ in range(n):\n            v = jnp.sin(v)\n        return v\n"
                   "    return f")
    run_captured(shell, "%%jaxcache -o rep\njax.jit(jax.grad(chain(2)))(1.0)\njax.jit(jax.grad(chain(3)))(1.0)")
    assert shell.user_ns["rep"].functions[0].misses[1].summary == (
        "f is a new function object with the same name and source as one traced before: it is defined inside chain, which "
        "makes it anew each time it runs its definition (each call, each pass of a loop); make the jitted function once, "
        "outside chain")


def test_a_wrapper_that_jax_makes_and_traces_in_one_call_gives_no_advice_to_make_it_once(shell):
    # JAX's gradient-checkpointing notebook: print_saved_residuals(f, ...) then print_saved_residuals(jax.checkpoint(f), ...)
    # read 'f is a new saved_residuals wrapper: ... make it once, outside the loop or cell': JAX's saved_residuals makes
    # its wrapper and traces it in one call, which no code of the user's can make once
    shell.run_cell("from jax.ad_checkpoint import print_saved_residuals\ndef f(v):\n    return jnp.sin(jnp.sin(v))")
    result, _ = run_captured(shell, "%%jaxcache -o rep\nprint_saved_residuals(f, 1.0)\nprint_saved_residuals(jax.checkpoint(f), 1.0)")
    assert result.success, result.error_in_exec
    [row] = shell.user_ns["rep"].functions
    assert [(m.category, m.made_by, m.summary) for m in row.misses] == [
        ("never_seen", None, "first trace of f"),
        ("redefined", "saved_residuals", "f is a new saved_residuals wrapper: each call of saved_residuals makes a new "
                                         "function object and traces it in that same call, so JAX's cache cannot find the "
                                         "earlier trace")]


def test_a_partial_made_per_call_is_named_as_the_cause_not_an_edited_definition(shell):
    # JAX's jit guide (201/jit.md) jits a fresh partial(unjitted_loop_body) in a loop: each trace after the first read
    # 'first trace of a new unjitted_loop_body: it replaces the unjitted_loop_body defined at In[n]:1 that traced before,
    # with other code (an edited cell run again, or its module reloaded ...)', though no code had changed.
    shell.run_cell("def body(v):\n    return v + 1", store_history=True)
    result, _ = run_captured(shell, "%%jaxcache -o rep\nfor _ in range(3):\n    y = jax.jit(partial(body))(x)")
    assert result.success
    (row,) = shell.user_ns["rep"].functions  # three function objects, one row
    assert (row.function, row.objects, row.traced, row.misses_left_out) == ("body", 3, 3, 1)
    assert [(m.category, m.summary) for m in row.misses] == [("never_seen", "first trace of body"),
        ("redefined", "body is a new functools.partial wrapper: each call of functools.partial makes a new function "
                      "object, so JAX's cache cannot find the earlier trace; make it once, outside the loop or cell")]


def test_two_transformations_of_one_function_are_two_functions_not_a_redefinition(shell):
    # JAX's thinking_in_jax notebook: grad(jit(grad(jit(grad(f))))) then jit(jacfwd(jacrev(f))) in a later cell. The
    # second jitted wrapper read 're-defined function: soft is a new jax.grad wrapper ... make it once', and the hessian
    # 'soft is a new jax.jacfwd/jacrev wrapper' with a jaxpr diff against the gradient: each is a first trace.
    shell.run_cell("from jax import grad, jit, jacfwd, jacrev\ndef soft(v):\n    return jnp.sum(jnp.log1p(jnp.exp(v)))",
                   store_history=True)
    run_captured(shell, "%%jaxcache -o rep\ngrad(jit(grad(jit(grad(soft)))))(1.0)")
    first = shell.user_ns["rep"].functions
    run_captured(shell, "%%jaxcache -o rep\njit(jacfwd(jacrev(soft)))(jnp.ones(3))\njit(jacfwd(jacrev(soft)))(jnp.ones(3))")
    second = shell.user_ns["rep"].functions
    assert [f.objects for f in first + second] == [1, 1, 2]  # the hessian's two wrapper objects are one row
    assert [(m.category, m.summary) for f in first + second for m in f.misses] == [
        ("never_seen", "first trace of grad(soft)"),
        ("never_seen", "first trace of grad(jit(grad(soft)))"),
        ("never_seen", "first trace of jacfwd(jacrev(soft))"),
        ("redefined", "jacfwd(jacrev(soft)) is a new jax.jacfwd/jacrev wrapper: each call of jax.jacfwd/jacrev makes a new function "
                      "object, so JAX's cache cannot find the earlier trace; make it once, outside the loop or cell"),
    ]
    assert second[0].misses[0].jaxpr_diff is None
    # the rows, which read 'soft' twice, name each function as written
    assert [f.qualname for f in first + second] == ["grad(soft)", "grad(jit(grad(soft)))", "jacfwd(jacrev(soft))"]
    assert [f.function for f in first] == ["soft", "soft"]


def test_jaxs_quoted_explanation_names_cells_in_n(shell):
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = f(x)\ny = f(jnp.ones(4))")
    evidence = shell.user_ns["rep"].functions[0].misses[1].evidence
    assert evidence.startswith(f"TRACING CACHE MISS at In[{result.execution_count}]:3")
    assert "<ipython-input-" not in evidence


SCALE_SETUP = """
S = jax.ShapeDtypeStruct

@partial(jax.jit, static_argnums=1)
def k(x, n):
    return x * n
"""
# 1,000 misses of k, traced only (no compile, so the loop takes about a second): 500 shapes with n=1,
# four static-argument changes (n=2..5) at the last shape, then 496 more shapes with n=5.
SCALE_CELL = """
for size in range(1, 501):
    k.trace(S((size,), jnp.float32), 1)
for n in range(2, 6):
    k.trace(S((500,), jnp.float32), n)
for size in range(501, 997):
    k.trace(S((size,), jnp.float32), 5)
"""


def test_on_mode_at_a_thousand_misses_keeps_the_first_and_last_five_and_counts_the_rest(shell):
    shell.run_cell(SCALE_SETUP, store_history=True)
    run_captured(shell, "%jaxcache on")
    on = shell.magics_manager.registry["CacheMagics"]._on_session
    try:
        result, cap = run_captured(shell, SCALE_CELL)
        assert result.success
        rep = on.report()  # what the cell's display showed, as data (the next cell resets it)
        (stats,) = rep.functions
        assert (stats.function, stats.traced, len(stats.misses), stats.misses_left_out) == ("k", 1000, 10, 990)
        assert stats.left_out_by_category == (("static_args", 4), ("input_types", 986))
        assert stats.left_out_after == retrace.MISSES_KEPT_FIRST == 5
        assert [m.category for m in stats.misses] == ["never_seen"] + ["input_types"] * 9
        # the misses shown are explained exactly as before: against the closest earlier signature, in JAX's words
        assert [m.summary for m in stats.misses[1:5]] == [f"x: now f32[{s}], before f32[{s - 1}]" for s in range(2, 6)]
        assert [m.summary for m in stats.misses[5:]] == [f"x: now f32[{s}], before f32[{s - 1}]" for s in range(992, 997)]
        for m in stats.misses[1:]:  # early on JAX's own text may come first (while its cache is small)
            assert f"* at x, now {m.changes[0].now} and before {m.changes[0].before}" in m.evidence
        for m in stats.misses[5:]:  # JAX's cache is large by then: jaxshow's own diff, against its last 32 signatures
            assert m.evidence_source == "jaxshow" and "\n  closest of the last 32 signatures jaxshow kept:\n" in m.evidence
            assert m.evidence.endswith(f"* at x, now {m.changes[0].now} and before {m.changes[0].before}")
        assert [m.signature for m in stats.misses[5:]] == [(("x", f"f32[{s}]"),) for s in range(992, 997)]
        text, page = cap.outputs[-1].data["text/plain"], cap.outputs[-1].data["text/html"]
        line = "… 990 more misses of k, counted but not kept: 4 different static arguments, 986 different input types"
        assert "    5. different input types: x: now f32[5], before f32[4]\n" in text
        assert f"\n    {line}\n    996. different input types: x: now f32[992], before f32[991]\n" in text
        assert "    1000. different input types: x: now f32[996], before f32[995]\n" in text
        assert line in page and "<strong>996. different input types</strong>" in page
        assert text.count("different input types: x: now") == 9

        # The report's size does not grow with the misses: the 990 left out add one line to what the ten shown take.
        ten = dataclasses.replace(rep, functions=(dataclasses.replace(stats, misses_left_out=0, left_out_by_category=(), left_out_after=0),))
        assert 0 < len(render.to_html(rep)) - len(render.to_html(ten)) <= len(line) + 200
        assert 0 < len(render.to_text(rep)) - len(render.to_text(ten)) <= len(line) + 30  # the line, and misses 996-1000 numbered so
        assert len(page) < 30_000 and len(text) < 9_000  # ten misses shown, each with its jaxpr diff (HTML 0.9-1.1 kB on jax 0.7-0.12)
    finally:
        run_captured(shell, "%jaxcache off")


def test_a_static_value_whose_repr_raises_loses_no_later_trace_and_never_raises_in_the_cell(shell):
    # jax <= 0.10's own jax_explain_cache_misses calls repr on static values: with the flag on, the call raised
    shell.run_cell(
        "class Bad:\n"
        "    def __init__(self, k): self.k = k\n"
        "    def __repr__(self): raise RuntimeError('repr boom')\n"
        "    def __hash__(self): return self.k\n"
        "    def __eq__(self, o):\n"
        "        if not isinstance(o, Bad): raise RuntimeError('eq boom')\n"
        "        return o.k == self.k\n"
        "@partial(jax.jit, static_argnums=1)\n"
        "def pick(v, s):\n"
        "    return v + 1\n"
    )
    jax.clear_caches()  # JAX's own words come while its cache is small (when_cheap)
    run_captured(shell, "%jaxcache on")
    try:
        reports = []
        for cell in ("pick(x, Bad(1))", "pick(x, Bad(2))", "pick(x, 5)", "pick(jnp.ones(4), 5)"):
            result, cap = run_captured(shell, cell)
            assert result.success
            assert cap.outputs, f"{cell}: every cell that traced gets its report"
            reports.append(cap.outputs[-1].data["text/plain"])
    finally:
        run_captured(shell, "%jaxcache off")
    assert "could not record" not in "".join(reports)
    # Bad's repr is the user's: never run, nor JAX's comparison that would run it (jax <= 0.10), on every version
    assert "different static arguments: s: now k = 2, before k = 1\n" in reports[1]  # what the two reprs hid
    assert "different static arguments: s: now 5, before <Bad object; its repr not run>" in reports[2]
    assert _jax_compat._explanation_guard._depth == 0, "the guard on JAX's wording is off with the session"
    assert "different input types: v: now f32[4], before f32[3]" in reports[3]


USERS_EQ_IN_A_MISS = {(0, 7): 10, (0, 8): 10, (0, 9): 1, (0, 10): 0}
"""How often jaxshow's record of the miss below runs the user's ``__eq__``: with two earlier models, each pair compared
once in the lookup (JAX's explanation compared them before, on jax 0.9-0.10, and its diff of the closest is reused), once
more on jax 0.9; on jax <= 0.8, JAX's own diff function, run per model to rank them, runs it 5 times each; jax >= 0.11
keeps static values out of the pytree, with their hashes, which tell them apart (0). See also USERS_EQ_BY_JAXSHOW."""


def test_a_miss_runs_a_static_values_users_eq_once_per_comparison_not_once_per_step(shell):
    """A method jitted with a static ``self`` whose class has its own ``__eq__``: recording a miss ran it 30 times on
    jax 0.10 with two earlier models (the cell without jaxshow: 10), each step of the ranking comparing the miss's key
    with each kept key again, at each level of its pytree. Each pair is now compared once per miss; the report is as
    before."""
    shell.run_cell(
        "import sys\n"
        "eq_calls = []\n"
        "class Model:\n"
        "    def __init__(self, k): self.k = k\n"
        "    def __hash__(self): return hash(self.k)\n"
        "    def __eq__(self, o):\n"
        "        f = sys._getframe(1)\n"
        "        while f is not None and f.f_code.co_name != '_record_miss': f = f.f_back\n"
        "        eq_calls.append(f is not None)\n"
        "        return isinstance(o, Model) and o.k == self.k\n"
        "    @partial(jax.jit, static_argnums=0)\n"
        "    def apply(self, v):\n"
        "        return v * self.k\n"
        "Model(1).apply(x.astype(jnp.int32)); Model(2).apply(x)\n"  # read from JAX's cache, in no order: Model(2) closest by type
    )
    result, cap = run_captured(shell, "%%jaxcache\neq_calls.clear()\nModel(3).apply(x)")
    assert result.success
    text = cap.outputs[-1].data["text/plain"]
    assert "1. different static arguments: self: now k = 3, before k = 2\n" in text
    expected = USERS_EQ_IN_A_MISS.get(jax.__version_info__[:2], 0)
    assert sum(shell.user_ns["eq_calls"]) == expected


WHO = """
import sys
def who(jaxshow=__import__("os").path.dirname(__import__("jaxshow").__file__)):
    f = sys._getframe(2)  # the innermost frame of jaxshow's, if any
    while f is not None and not f.f_code.co_filename.startswith(jaxshow): f = f.f_back
    passing = f is None or f.f_code.co_name in ("entry", "__call__") or f.f_code.co_filename.endswith("cellrun.py")
    return "JAX's lookup" if passing else "jaxshow"
"""
"""``who()`` in a method of the user's: who ran it, JAX's own lookup (through jaxshow's hooks, which only pass the call
on, or run from the cell), else jaxshow (JAX's explanation included, which jaxshow turns on). How often JAX's own lookup
runs a static value's ``__eq__`` varies from process to process on jax 0.9-0.10 (its caches hash the function by
address: a collision compares the keys), so the two are told apart, not compared with the plain cell's total."""


MODEL = """
class Model:
    def __init__(self, k): self.k = k
    def __hash__(self): return hash(("Model", self.k))  # not another test's object's hash: JAX's caches are global
    def __eq__(self, o):
        eq_calls[who()] += 1
        return isinstance(o, Model) and o.k == self.k
    @partial(jax.jit, static_argnums=0)
    def apply(self, v):
        return v * self.k
"""
"""A model class of the user's whose ``__eq__`` counts who ran it (:data:`WHO`)."""


USERS_EQ_BY_JAXSHOW = {
    **{(v, cell): {"new model": 10 - (not cell), "new shape": 10 - (not cell)} for v in [(0, 7), (0, 8)] for cell in (True, False)},
    **{(v, cell): {"new model": 4 + (v == (0, 9)), "new shape": 4} for v in [(0, 9), (0, 10)] for cell in (True, False)},
    **{(v, cell): {"new model": 0, "new shape": 0} for v in [(0, 11), (0, 12)] for cell in (True, False)},
}
"""How often jaxshow runs the user's ``__eq__`` for a miss below, per JAX version and mode (``%%jaxcache``: True;
``%jaxcache on``: False); the plain cell: never. jaxshow's own ranking compares the new static value once with each
other one kept (2), where JAX keeps no hash of it: jax >= 0.11 does (``FTStatic``), and two values of unequal hashes
differ with no ``__eq__`` run, as JAX's cache finds them (0). The rest is JAX's own explanation, which jaxshow turns on:
on jax 0.9-0.10 it compares the new key with each kept one (jax 0.9 once more), its answer kept for jaxshow's own diff
of the closest; on jax <= 0.8 its diff function, which jaxshow's ranking reuses, compares each pair of static values at
each step of its comparison."""


USERS_EQ_OF_A_CLASS_WITH_ITS_REPR = {(0, 7): {"new model": 2}, (0, 8): {"new model": 2}, (0, 9): {"new model": 3},
                                     (0, 10): {"new model": 2}}
"""USERS_EQ_BY_JAXSHOW for a class with its own ``__repr__`` (JAX's explanation not asked for): jaxshow's ranking,
one per kept model (jax 0.9: the closest once more); none on jax >= 0.11, where JAX's keys keep the hashes that tell
them apart."""


@pytest.mark.parametrize("mode", ["%%jaxcache\n", "%jaxcache on"])
@pytest.mark.parametrize("own_repr", [False, True])
def test_a_miss_runs_the_users_eq_once_per_kept_value_more_than_without_jaxshow(shell, mode, own_repr):
    """A static ``self`` of a class with its own ``__eq__`` (two models traced before). A miss by a new model had
    jaxshow run it 11 times on jax 0.10 (jax 0.12: 4-5): JAX's explanation, then each step of jaxshow's record of the
    miss, compared the miss's key again, whole or through its pytree (in C++, out of reach of the pair-once memo); a new
    shape with the same model, 7-8 times (jax 0.12: 2-3), a pair of one object compared too. The keys' JAX objects are now compared
    part by part, each pair of the user's values once per lookup, one object equal to itself with no ``__eq__`` run. A
    class with its own ``__repr__`` too (JAX's explanation, which would print it, is not asked for): one per kept model on
    jax <= 0.10, none on jax >= 0.11 (before: 2 and 1)."""
    on = mode.startswith("%jaxcache")
    shell.run_cell(WHO + "import collections\neq_calls = collections.Counter()")
    if on:
        shell.run_line_magic("jaxcache", "on")
    shell.run_cell(MODEL + ("Model.__repr__ = lambda self: f'Model({self.k})'" if own_repr else ""))
    shell.run_cell("m = Model(2)\nModel(1).apply(x.astype(jnp.int32)); m.apply(x)")
    by_jaxshow = {}
    for case, call in [("new model", "Model(3).apply(x)"), ("new shape", "m.apply(jnp.ones(5))")]:
        result = shell.run_cell(("" if on else mode) + f"eq_calls.clear()\n{call}")
        assert result.success
        by_jaxshow[case] = shell.user_ns["eq_calls"]["jaxshow"]
    version = jax.__version_info__[:2]
    expected = USERS_EQ_OF_A_CLASS_WITH_ITS_REPR.get(version, {"new model": 0})
    if own_repr:  # a new shape: how many kept keys jaxshow's index finds to compare depends on their hashes
        assert by_jaxshow["new model"] == expected["new model"]
    else:
        assert by_jaxshow == USERS_EQ_BY_JAXSHOW[version, not on]
    shell.run_cell("eq_calls.clear()\nModel(4).apply(x)" if not on else "%jaxcache off")
    shell.run_cell("eq_calls.clear()\nModel(5).apply(x)")
    assert shell.user_ns["eq_calls"]["jaxshow"] == 0  # a plain cell


def test_a_callable_objects_own_hash_and_eq_run_as_often_as_without_jaxshow(shell):
    """``jax.jit(Scale(k))``: a callable object of the user's, with its own ``__hash__`` and ``__eq__``. jaxshow's record
    of the miss hashed it twice more (asking whether JAX's own function it was, and whether an earlier lookup of it
    raised); it now runs none of them: JAX's own lookup runs them as it does without jaxshow (:data:`WHO`)."""
    shell.run_cell(
        WHO + "import collections\n"
        "scale_calls = collections.Counter()\n"
        "class Scale:\n"
        "    def __init__(self, k): self.k = k\n"
        "    def __call__(self, v): return v * self.k\n"
        "    def __hash__(self):\n"
        "        scale_calls['hash', who()] += 1\n"
        "        return hash(self.k)\n"
        "    def __eq__(self, o):\n"
        "        scale_calls['eq', who()] += 1\n"
        "        return isinstance(o, Scale) and o.k == self.k\n"
    )
    result, cap = run_captured(shell, "%%jaxcache\nscale_calls.clear()\njax.jit(Scale(2))(x)")
    assert result.success
    assert "1 trace of 1 jitted function" in cap.outputs[-1].data["text/plain"]
    assert {k: n for k, n in shell.user_ns["scale_calls"].items() if k[1] == "jaxshow"} == {}


def test_a_hit_of_a_callable_object_runs_no_getattr_of_the_users(shell):
    """``h = jax.jit(Scale(2))`` where ``Scale`` has its own ``__getattr__``: a call that hit the cache ran it once
    under ``%%jaxcache`` (the plain call: never), jaxshow asking the object's ``__name__`` to find whether JAX had
    compiled it again; it asks only where JAX compiled anything since the call began. A first call runs it as often as
    without jaxshow."""
    shell.run_cell(
        "import collections\n"
        "getattr_calls = collections.Counter()\n"
        "class Scale:\n"
        "    def __init__(self, k): self.k = k\n"
        "    def __call__(self, v): return v * self.k\n"
        "    def __getattr__(self, name):\n"
        "        getattr_calls[name] += 1\n"
        "        raise AttributeError(name)\n"
    )
    counts = {}
    for name, magic in [("plain", ""), ("jaxshow", "%%jaxcache\n")]:
        shell.run_cell(magic + "getattr_calls.clear()\nh = jax.jit(Scale(2)); h(x)")
        first = sum(shell.user_ns["getattr_calls"].values())
        shell.run_cell("h = jax.jit(Scale(3)); h(x)")  # traced while jaxshow did not look
        result, cap = run_captured(shell, magic + "getattr_calls.clear()\nh(x)")
        assert result.success
        counts[name] = first, sum(shell.user_ns["getattr_calls"].values())
    assert "%jaxcache — no cache miss: every jitted call hit the cache" in cap.outputs[-1].data["text/plain"]
    assert counts["jaxshow"] == counts["plain"]
    assert counts["plain"][1] == 0


@pytest.mark.parametrize("failing", [
    "bad(x)",  # raised while tracing
    "cb(x).block_until_ready()",  # raised while running
])
def test_a_cell_whose_call_raised_keeps_no_function_of_its_alive_through_the_traceback(shell, failing):
    """IPython keeps a cell's error (``sys.last_traceback``) until the next one. The frame of jaxshow's tracing-cache
    probe in it held the cell's ``%jaxcache`` session, and with it every jitted function the cell traced and the
    arrays they close over: deleted, they stayed alive (as they do not after the plain cell)."""
    shell.run_cell("import gc, weakref\nw = jnp.arange(1000.0)\nkept = jax.jit(lambda v: v * w.sum())\n"
                   "bad = jax.jit(lambda v: v @ jnp.ones((5, 5)))\n"
                   "cb = jax.jit(lambda v: jax.pure_callback(lambda a: 1 / 0, jax.ShapeDtypeStruct(v.shape, v.dtype), v))\n"
                   "refs = weakref.ref(kept), weakref.ref(w)", store_history=True)
    result, _ = run_captured(shell, f"%%jaxcache\ny = kept(jnp.ones(3))\n{failing}")
    assert not result.success and sys.last_traceback is not None
    shell.run_cell("del kept, w, y\ngc.collect()", store_history=True)
    assert [ref() for ref in shell.user_ns["refs"]] == [None, None]


CONFIG = """
import weakref, gc
class Config:
    def __init__(self, k): self.k, self.table = k, bytearray(1_000_000)
    def __hash__(self): return self.k
    def __eq__(self, o): return isinstance(o, Config) and o.k == self.k
@partial(jax.jit, static_argnums=1)
def scaled(v, c):
    return v * c.k
"""


JAX_KEEPS_STATICS_OF_LIVE_FUNCTIONS = jax.__version_info__[:2] == (0, 8)
"""jax 0.8's ``pjit._seen_qdds`` keeps the static values each function was traced with until the function itself is
freed: ``jax.clear_caches()`` leaves them alive, with or without jaxshow."""


@pytest.mark.parametrize("let_go", ["jax.clear_caches()", "del scaled"])
def test_jaxcache_on_keeps_no_static_value_alive_after_jax_let_go_of_it(shell, let_go):
    """``%jaxcache on`` kept each signature's static values (a config holding arrays, a model with a ``__hash__``) in
    its history: after the user dropped them and JAX let them go (``jax.clear_caches()``, the function freed), they
    stayed alive as long as the process. The history holds such a signature only while JAX's cache does: what stays
    alive is what stays alive without jaxshow. The misses read as before, and after JAX let go a trace of the same
    objects still reads as one traced before."""
    cells = ("c1 = Config(1); y = scaled(x, c1); r1 = weakref.ref(c1)", "c2 = Config(2); y = scaled(x, c2); r2 = weakref.ref(c2)",
             "jax.clear_caches(); y = scaled(x, c2)")

    def run() -> tuple[list[str], tuple[bool, bool]]:
        shell.run_cell(CONFIG)
        texts = [" ".join(cap.outputs[-1].data["text/plain"].split()) if cap.outputs else "" for _, cap in
                 (run_captured(shell, cell) for cell in cells)]
        shell.run_cell(f"del c1, c2; {let_go}; gc.collect()")
        return texts, (shell.user_ns["r1"]() is not None, shell.user_ns["r2"]() is not None)

    _, alive_without = run()
    run_captured(shell, "%jaxcache on")
    try:
        texts, alive = run()
        # jax >= 0.9's lowering cache holds the last signature's input tree until jax.clear_caches(); jax <= 0.8's, none
        held_by_jax = let_go == "del scaled" and _jax_compat.trace_cache_counts_all_functions()
        kept_by_jax = let_go == "jax.clear_caches()" and JAX_KEEPS_STATICS_OF_LIVE_FUNCTIONS
        assert alive == alive_without == ((True, True) if kept_by_jax else (False, held_by_jax))
        assert "1. never-seen function (first trace): first trace of scaled called at " in texts[0]
        assert "1. different static arguments: c: now k = 2, before k = 1 called at " in texts[1]  # by value: not made anew
        assert ("1. signature traced before, not kept by JAX: jax.clear_caches() emptied JAX's cache since that trace of "
                "scaled, so JAX traced it again called at ") in texts[2]
        if let_go == "jax.clear_caches()":
            text = " ".join(run_captured(shell, "y = scaled(x, Config(2))")[1].outputs[-1].data["text/plain"].split())
            assert ("1. never-seen function (first trace): first trace of scaled since jax.clear_caches() emptied JAX's "
                    "cache called at ") in text
    finally:
        run_captured(shell, "%jaxcache off")


RAISING_EQ = """
class Key:
    def __init__(self, k): self.k = k
    def __hash__(self): return self.k
    def __eq__(self, o): raise RuntimeError('eq ran')
@partial(jax.jit, static_argnums=1)
def keyed(v, c):
    return v * c.k
"""


def test_a_static_value_whose_eq_raises_behaves_as_without_jaxshow(shell):
    """Two static values of other hashes whose ``__eq__`` raises: the plain cell runs on jax 0.7 (a dict lookup never
    compares keys of other hashes) and 0.12, and raises JAX's ValueError on jax 0.9-0.10 (its pytree compares them). Under
    %jaxcache on, jax 0.7's cell raised the user's 'RuntimeError: eq ran' after tracing, nothing cached: JAX's
    explanation, which jaxshow turned on, compares the new key with every cached one. jaxshow's own comparison of the two
    keys counts such a value as changed."""

    def run() -> list[tuple[bool, type | None]]:
        shell.run_cell(RAISING_EQ)
        outcomes = [run_captured(shell, f"done = None\ny = keyed(x, Key({k}))\ndone = {k}")[0] for k in (1, 2)]
        return [(r.success, type(r.error_in_exec), shell.user_ns["done"]) for r in outcomes][1:]

    plain = run()
    run_captured(shell, "%jaxcache on")
    try:
        assert run() == plain
    finally:
        run_captured(shell, "%jaxcache off")
    # jax 0.12's miss was not recorded at all ('traces observed by jaxshow: 1', 'cache entries now: 2'): jaxshow's own
    # count of the keys' differing static values ran the raising __eq__
    run_captured(shell, "%jaxcache keyed -o hist")
    assert shell.user_ns["hist"].traces_observed == 1 + plain[0][0]  # Key(1)'s trace, and Key(2)'s where it ran


@pytest.mark.skipif((0, 9) <= _jax_compat.JAX_VERSION[:2] <= (0, 10), reason="jax 0.9-0.10 compare static values in "
                    "the pytree: the plain call of Key(2) raises JAX's ValueError")
def test_two_static_objects_whose_eq_raises_read_as_what_differs(shell):
    """Two static values whose ``__repr__`` and ``__eq__`` (which raises) are the user's read 'static args: equal as
    printed, unequal as compared: an attribute compared by identity, such as a functools.partial …' (jax 0.7; 'c: equal
    as printed …' on jax 0.12), which they are not: jaxshow stopped looking for the part that differs at the raising
    ``__eq__``. It counts as unequal now, as in every other comparison of jaxshow's, and the miss reads what differs."""
    shell.run_cell(RAISING_EQ + "Key.__repr__ = lambda self: 1 / 0\n")
    run_captured(shell, "%jaxcache on")
    try:
        run_captured(shell, "y = keyed(x, Key(1))")
        text = " ".join(run_captured(shell, "y = keyed(x, Key(2))")[1].outputs[-1].data["text/plain"].split())
    finally:
        run_captured(shell, "%jaxcache off")
    assert "1. different static arguments: c: now k = 2, before k = 1 called at " in text


def test_misses_not_shown_keep_no_static_value_alive(shell):
    """Twelve new shapes of a function whose static argument is an object: the report shows ten misses and counts the
    rest, whose raw facts (both keys, hence the object) jaxshow kept to explain them if shown, after JAX let go."""
    shell.run_cell(CONFIG)
    run_captured(shell, "%jaxcache on")
    try:
        _, cap = run_captured(shell, "c = Config(3); r = weakref.ref(c)\nfor n in range(1, 14):\n    y = scaled(jnp.ones(n), c)")
        text = " ".join(cap.outputs[-1].data["text/plain"].split())
        assert "… 3 more misses of scaled, counted but not kept: 3 different input types" in text
        shell.run_cell(f"del c; jax.clear_caches(){'; del scaled' if JAX_KEEPS_STATICS_OF_LIVE_FUNCTIONS else ''}; gc.collect()")
        assert shell.user_ns["r"]() is None
    finally:
        run_captured(shell, "%jaxcache off")


LOUD = """
class Loud:
    def __init__(self, k): self.k = k
    def __hash__(self): return self.k
    def __eq__(self, o): return isinstance(o, Loud) and o.k == self.k
    def __repr__(self): print("repr ran"); return f"Loud({self.k})"
@partial(jax.jit, static_argnums=1)
def loud(v, s):
    return v * s.k
"""


@pytest.mark.parametrize("magic", ["%%jaxcache\n", "%jaxcache on"])
def test_a_static_values_own_repr_runs_under_jaxcache_only_where_jax_runs_it_without(shell, magic):
    """A static value whose __repr__ printed 'repr ran': the plain cells print nothing, as JAX calls it only to explain a
    miss with jax_explain_cache_misses on, but under %%jaxcache and %jaxcache on a re-trace printed it 3 to 9 times
    (JAX's explanation under the flag jaxshow turned on, jaxshow's own comparison and text of the key). It is now never
    run: the miss reads as what differs, 'k = 3, before k = 2'. With the user's own flag on, JAX prints it as it would."""
    cells = ["y = loud(x, Loud(2))", "y = loud(x, Loud(3))", "y = loud(jnp.ones(4), Loud(3))", "y = loud(x, s=Loud(3))"]

    def printed(prefix: str, flag: bool) -> list[str]:
        shell.run_cell(LOUD + f"jax.config.update('jax_explain_cache_misses', {flag})", store_history=True)
        try:
            return [run_captured(shell, prefix + cell)[1] for cell in cells]
        finally:
            shell.run_cell("jax.config.update('jax_explain_cache_misses', False)")

    plain, flagged = [cap.stdout for cap in printed("", False)], [cap.stdout for cap in printed("", True)]
    prefix = magic if magic.endswith("\n") else ""
    if not prefix:
        run_captured(shell, magic)
    try:
        shown = printed(prefix, False)
        assert [cap.stdout for cap in shown] == plain == [""] * 4
        texts = [" ".join(cap.outputs[-1].data["text/plain"].split()) for cap in shown]
        assert "1. different static arguments: s: now k = 3, before k = 2 " in texts[1]
        assert "1. different input types: v: now f32[4], before f32[3] " in texts[2]
        _, cap = run_captured(shell, "%jaxcache loud")
        assert cap.stdout == "" and "now k = 3, before k = 2" in " ".join(cap.outputs[-1].data["text/plain"].split())
        assert [cap.stdout for cap in printed(prefix, True)] == flagged, "JAX's own (jax 0.10: 'repr ran' twice), as without jaxshow"
    finally:
        run_captured(shell, "%jaxcache off")


def test_a_jaxcache_cell_and_a_frozen_function_run_as_without_jaxshow_when_a_static_repr_raises(shell):
    # JAX's own explanation (jax <= 0.10) reprs the static values; the flag is jaxshow's, so must be its failure
    shell.run_cell(
        "class Quiet:\n"
        "    def __init__(self, k): self.k = k\n"
        "    def __repr__(self): raise RuntimeError('repr boom')\n"
        "    def __hash__(self): return self.k\n"
        "    def __eq__(self, o): return isinstance(o, Quiet) and o.k == self.k\n"
        "traces = []\n"
        "@partial(jax.jit, static_argnums=1)\n"
        "def tag(v, s):\n"
        "    traces.append(s.k)\n"
        "    return v + s.k\n"
        "tag(x, Quiet(1));\n"
    )
    result, cap = run_captured(shell, "%%jaxcache\ny = tag(x, Quiet(2)) + tag(x, Quiet(3))")
    assert result.success and shell.user_ns["traces"] == [1, 2, 3]
    assert float(shell.user_ns["y"][0]) == 7.0
    run_captured(shell, "%jaxcache freeze tag")
    try:
        result, _ = run_captured(shell, "tag(x, Quiet(4))")
        assert type(result.error_in_exec) is jaxshow.RetraceError and shell.user_ns["traces"] == [1, 2, 3]
        result, _ = run_captured(shell, "z = tag(x, Quiet(3))")
        assert result.success and float(shell.user_ns["z"][0]) == 4.0
    finally:
        run_captured(shell, "%jaxcache thaw")
    assert _jax_compat._explanation_guard._depth == 0


def test_a_trace_that_fails_again_is_a_trace_not_one_that_never_happened(shell):
    """The same call failing while tracing a second time (a cell re-run after Ctrl-C or an error) traced again:
    JAX kept nothing of the first trace. It was reported as 'no jitted function was called or traced'."""
    shell.run_cell("@jax.jit\ndef broken(v):\n    traces.append('broken')\n    return v.reshape(7)", store_history=True)
    shell.user_ns["traces"].clear()
    for _ in range(2):
        result, cap = run_captured(shell, "%%jaxcache -o rep\nbroken(x)")
        assert type(result.error_in_exec) is TypeError
    [function] = shell.user_ns["rep"].functions
    [miss] = function.misses
    assert (function.function, function.traced, miss.category) == ("broken", 1, "not_kept")
    assert miss.summary == "that trace of broken failed (an error, or Ctrl-C), or jax.clear_caches() ran since, so JAX traced it again"
    assert miss.call_site == f"In[{result.execution_count}]:2"
    text = cap.outputs[-1].data["text/plain"]
    assert text.startswith("%jaxcache — 1 trace of 1 jitted function") and "signature traced before, not kept by JAX: " in text
    assert run_captured(shell, "%jaxcache on")[0].success
    result, cap = run_captured(shell, "broken(x)")
    assert type(result.error_in_exec) is TypeError and "broken" in cap.outputs[-1].data["text/plain"]
    assert run_captured(shell, "%jaxcache off")[0].success
    assert shell.user_ns["traces"] == ["broken"] * 3


def test_on_mode_gives_one_report_per_cell_whatever_cells_run_inside_it(shell):
    """A cell that runs another (``get_ipython().run_cell``, ``%%capture``) is one cell. The inner cell's start
    cleared what the outer one had seen (its first trace was lost), each end showed a report (the inner trace twice),
    and under ``%%capture out`` one report escaped the capture."""
    assert run_captured(shell, "%jaxcache on")[0].success
    result, cap = run_captured(shell, "y = f(jnp.ones(10))\nget_ipython().run_cell('z = f(jnp.ones(11))')\nw = f(jnp.ones(12))")
    assert result.success
    [report] = [o.data["text/plain"] for o in cap.outputs]
    assert report.startswith("%jaxcache — 3 traces of 1 jitted function")
    result, cap = run_captured(shell, "%%capture out\nf(jnp.ones(13))")
    assert result.success and cap.outputs == []
    assert shell.user_ns["out"].outputs[-1].data["text/plain"].startswith("%jaxcache — 1 trace of 1 jitted function")
    assert run_captured(shell, "%jaxcache off")[0].success


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _persistent_cache_restored():
    """The persistent cache's options as they were before the block (its cells set them), and JAX's hold on the cache
    directory let go, after it."""
    before = {name: jax.config.values[name] for name in ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")}
    try:
        yield
    finally:
        for name, value in before.items():
            jax.config.update(name, value)
        from jax._src import compilation_cache
        compilation_cache.reset_cache()


def _run_in_mode(shell, mode: str, cell: str) -> None:
    """Run ``cell`` as it is ("plain"), under ``%%jaxcache`` ("cell"), or as the one cell of a ``%jaxcache on`` ("on")."""
    if mode == "on":
        shell.run_line_magic("jaxcache", "on")
    try:
        assert shell.run_cell(("%%jaxcache\n" if mode == "cell" else "") + cell, store_history=True).success
    finally:
        if mode == "on":
            shell.run_line_magic("jaxcache", "off")


def test_a_jitted_callable_objects_compile_has_its_persistent_cache_verdict(shell, tmp_path):
    """JAX compiles a callable object with no __name__ as jit__unnamed_function; its row is named by its class (Scale),
    and its compile was left out of the persistent-cache table and counted as one of JAX's own helper functions."""
    cell = ("import numpy as np\nclass Scale:\n    def __call__(self, v):\n        return v * 3\n"
            f"jax.config.update('jax_compilation_cache_dir', {str(tmp_path)!r})\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
            "scale3 = jax.jit(Scale())\nscale3(np.ones(3, np.float32));")
    with _persistent_cache_restored():
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
        assert result.success
        rep = shell.user_ns["rep"]
        assert [f.function for f in rep.functions] == ["Scale"]
        lowered = shell.user_ns["scale3"].lower(shell.user_ns["np"].ones(3, "float32")).as_text()
        module = re.match(r"module @(\w+)", lowered).group(1)  # JAX's name: jit__unnamed_wrapped_function on jax 0.7
        assert module in ("jit__unnamed_function", "jit__unnamed_wrapped_function")
        assert [(c.module, c.verdict, c.reason) for c in rep.persistent] == [(module, "written", "written to the cache directory")]
        assert not any("helper functions" in note for note in rep.notes)


class _LevelledRecords(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        message = record.getMessage()
        if "jit_g" in message:  # g's own lines, not the eager jnp helpers' (compiled once, before)
            self.lines.append(f"{record.levelname}: {re.sub(r'[(][0-9.]+s[)]', '(…s)', message.split(' with key ')[0])}")


@pytest.mark.parametrize("mode", ["plain", "cell", "on"])
def test_the_users_own_debug_logs_of_the_persistent_cache_still_print(shell, tmp_path, mode):
    """A user who turned JAX's compiler and compilation-cache loggers to DEBUG (jax_debug_log_modules) sees the same
    persistent-cache lines, at the same level, under %%jaxcache and %jaxcache on as without them ("plain"): the miss, the
    compile time and the write, each as DEBUG (jaxshow turns jax_explain_cache_misses on, which raises them to WARNING)."""
    handler = _LevelledRecords()
    loggers = [logging.getLogger(name) for name in ("jax._src.compiler", "jax._src.compilation_cache")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
    cell = ("@jax.jit\ndef g(v):\n    return jnp.sin(v) * 2\n"
            f"jax.config.update('jax_compilation_cache_dir', {str(tmp_path)!r})\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\ng(jnp.ones(3));")
    try:
        with _persistent_cache_restored():
            _run_in_mode(shell, mode, cell)
            assert handler.lines == [
                "DEBUG: PERSISTENT COMPILATION CACHE MISS for 'jit_g'",
                "DEBUG: 'jit_g' took at least 0.00 seconds to compile (…s)",
                "DEBUG: Writing jit_g to persistent compilation cache",
            ]
    finally:
        for logger, level in zip(loggers, levels):
            logger.removeHandler(handler)
            logger.setLevel(level)


@pytest.mark.parametrize("mode", ["plain", "cell", "on"])
@pytest.mark.parametrize("where", ["jax._src.compiler", "jax"])
def test_a_debug_level_the_user_sets_during_the_session_prints_and_stays(shell, tmp_path, mode, where):
    """A user who turns JAX's compiler logger (or the ``jax`` logger above it) to DEBUG inside a %%jaxcache cell, or a
    cell while %jaxcache on: the DEBUG lines of the persistent cache were swallowed (jaxshow judged them by the level the
    user had before the session), and setting DEBUG on the compiler logger itself was undone when the session closed
    (jaxshow's own level was DEBUG too, so the user's looked like jaxshow's). Both now behave as without jaxshow."""
    handler = _LevelledRecords()
    compiler, user_logger = logging.getLogger("jax._src.compiler"), logging.getLogger(where)
    level = user_logger.level
    compiler.addHandler(handler)
    cell = ("import logging\n@jax.jit\ndef g(v):\n    return jnp.sin(v) * 2\n"
            f"jax.config.update('jax_compilation_cache_dir', {str(tmp_path)!r})\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
            f"logging.getLogger({where!r}).setLevel(logging.DEBUG)\ng(jnp.ones(3));")
    try:
        with _persistent_cache_restored():
            _run_in_mode(shell, mode, cell)
            assert handler.lines == [
                "DEBUG: PERSISTENT COMPILATION CACHE MISS for 'jit_g'",
                "DEBUG: 'jit_g' took at least 0.00 seconds to compile (…s)",
            ]
            assert (user_logger.level, compiler.getEffectiveLevel()) == (logging.DEBUG, logging.DEBUG)
    finally:
        compiler.removeHandler(handler)
        user_logger.setLevel(level)


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_the_users_own_explain_cache_misses_and_log_compiles_lines_still_print(shell, tmp_path, mode):
    """What JAX logs because the user turned jax_explain_cache_misses or jax_log_compiles on reaches their handlers
    under %%jaxcache and %jaxcache on exactly as without jaxshow; what it logs only for jaxshow does not."""
    cells = lambda folder: [  # noqa: E731
        "jax.config.update('jax_explain_cache_misses', True)\nf(jnp.ones(31))",
        "jax.config.update('jax_explain_cache_misses', False)\nwith jax.explain_cache_misses():\n    f(jnp.ones(32))\nf(jnp.ones(33))",
        f"jax.config.update('jax_compilation_cache_dir', {str(tmp_path / folder)!r})\n"
        "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
        "with jax.explain_cache_misses():\n    f(jnp.ones(34))\nf(jnp.ones(35))",
        "jax.clear_caches()\nwith jax.log_compiles():\n    f(jnp.ones(34))",
    ]
    handler = _Records()
    jax_logger = logging.getLogger("jax")
    jax_logger.addHandler(handler)
    before = {name: jax.config.values[name] for name in ("jax_explain_cache_misses", "jax_compilation_cache_dir",
                                                          "jax_persistent_cache_min_compile_time_secs")}

    def shown(prefix, folder):
        handler.messages.clear()
        for cell in cells(folder):
            assert shell.run_cell(prefix + cell, store_history=True).success
        return [m.split(" at ")[0].split(" with key ")[0] for m in handler.messages
                if "for f defined" in m or "  f id=" in m or "jit_f " in m or "'jit_f'" in m]  # f's, not the jnp helpers' (compiled once)

    try:
        plain = shown("", "plain")
        assert plain.count("TRACING CACHE MISS") == 3 and "Persistent compilation cache hit for 'jit_f'" in plain
        shell.run_cell("jax.clear_caches(); f = jax.jit(f.__wrapped__)", store_history=True)
        from jax._src import compilation_cache
        compilation_cache.reset_cache()
        for name, value in before.items():
            jax.config.update(name, value)
        if mode == "on":
            shell.run_line_magic("jaxcache", "on")
            magic = shown("", "magic")
            shell.run_line_magic("jaxcache", "off")
        else:
            magic = shown("%%jaxcache\n", "magic")
        assert magic == plain
    finally:
        jax_logger.removeHandler(handler)
        for name, value in before.items():
            jax.config.update(name, value)
        from jax._src import compilation_cache
        compilation_cache.reset_cache()


def test_a_new_definition_with_other_code_is_not_called_the_functions_first_trace(shell, tmp_path, monkeypatch):
    """An edited cell run again, or a module reloaded (importlib.reload, %autoreload 2) with an edited function: the
    new function object's first trace says which definition it replaces, beside the jaxpr diff against it."""
    shell.run_cell("@jax.jit\ndef g(x):\n    return jnp.sin(x)", store_history=True)  # In[2]
    shell.run_cell("%%jaxcache\ng(x)", store_history=True)  # jaxshow knows the traces made under it
    shell.run_cell("@jax.jit\ndef g(x):\n    return jnp.sin(x) * 2", store_history=True)  # In[4]
    run_captured(shell, "%%jaxcache -o rep\ng(x)")
    (miss,) = shell.user_ns["rep"].functions[0].misses
    # JAX's tutorials define f anew cell after cell: this read '(an edited cell run again, or its module reloaded:
    # importlib.reload, %autoreload)', no module being involved and the likeliest cause left out
    assert miss.summary == ("first trace of a new g: it replaces the g defined at In[2]:1 that traced before, with other code "
                            "(a cell that defines g anew, or an edited cell run again)")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "stepmod_reload.py"
    module.write_text("import jax, jax.numpy as jnp\n\n@jax.jit\ndef step(x):\n    return jnp.sin(x)\n")
    shell.run_cell("%%jaxcache\nimport importlib, stepmod_reload\nstepmod_reload.step(x)", store_history=True)
    module.write_text("import jax, jax.numpy as jnp\n\n@jax.jit\ndef step(x):\n    return jnp.cos(x) * 3\n")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nimportlib.reload(stepmod_reload)\nstepmod_reload.step(x)")
    (miss,) = shell.user_ns["rep"].functions[0].misses
    assert miss.summary.startswith(f"first trace of a new step: it replaces the step defined at {module}:3 that traced before")
    assert miss.summary.endswith("that traced before, with other code (its module reloaded or run again: importlib.reload, %autoreload, %run)")
    assert [line for line in miss.jaxpr_diff.lines if line[0] in "+-"] == [
        "-{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }",
        "+{ lambda ; a:f32[3]. let b:f32[3] = cos a; c:f32[3] = mul b 3.0:f32[] in (c,) }"]


def test_the_collector_is_off_during_an_explained_lookup_only_on_jaxlib_09(shell):
    """jaxlib 0.9.x lists its tracing cache's keys on an explained miss while walking its map, so a collection there
    (a reloaded module's function freed, as in the test above) crashed the kernel under %%jaxcache: 1 run of this file
    in 4 on jax 0.9.2. There the collector is off inside the lookup, and on again after it; elsewhere it is untouched."""
    from jax._src.lib import version as jaxlib_version

    walks_unsafely = (0, 9) <= tuple(jaxlib_version)[:2] < (0, 10)
    shell.run_cell("import gc\nseen = []\n@jax.jit\ndef outer(v):\n    seen.append(('outer', gc.isenabled()))\n"
                   "    return inner(v) + 1\n@jax.jit\ndef inner(v):\n    seen.append(('inner', gc.isenabled()))\n    return v * 2")
    assert shell.run_cell("%%jaxcache\nouter(x)\nafter = gc.isenabled()").success
    assert shell.user_ns["seen"] == [("outer", not walks_unsafely), ("inner", not walks_unsafely)]
    assert shell.user_ns["after"] is True
    assert shell.run_cell("outer(x + 1.5)\nseen = seen[2:]").success  # no %%jaxcache: a hit, nothing traced
    assert shell.run_cell("outer(jnp.ones(7))").success
    assert shell.user_ns["seen"] == [("outer", True), ("inner", True)]  # traced plainly: untouched


def test_a_definition_in_a_loop_at_a_modules_top_level_is_not_its_module_running_again(shell, tmp_path, monkeypatch):
    """'for _ in range(2): jax.jit(lambda v: v + 1)(x)' at a script's top level read '<lambda> is a new function object
    ... its module ran again (importlib.reload, %autoreload, %run)': nothing ran the module again, the loop made it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)  # the module's file is named from the current folder
    (tmp_path / "loopmod_top.py").write_text(
        "import jax, jax.numpy as jnp\nfor _ in range(2):\n    jax.jit(lambda v: v + 1)(jnp.ones(2))\n")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nimport loopmod_top")
    assert result.success, result.error_in_exec
    [stats] = shell.user_ns["rep"].functions
    assert [(m.category, m.reloaded) for m in stats.misses] == [("never_seen", False), ("redefined", False)]
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert ("2. re-defined function (re-run cell or definition in a loop): <lambda> is a new function object with the "
            "same name and source as one traced before called at loopmod_top.py:3") in text, text
    assert "its module ran again" not in text


def test_a_module_function_made_anew_with_the_same_source_is_named_its_modules_reload(shell, tmp_path, monkeypatch):
    """A constant of a module edited, and the module run again (importlib.reload; %autoreload where it reloads the whole
    module): each function at its top is a new object with the same source. This read 're-defined function (re-run cell
    or definition in a loop)', with JAX's same-line hint '… it is re-defined on every run', though no cell defined it and
    nothing ran it in a loop."""
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "scalemod_reload.py"
    module.write_text("import jax\n\nSCALE = 2.0\n\n@jax.jit\ndef step(x):\n    return x * SCALE\n")
    shell.run_cell("import importlib, scalemod_reload", store_history=True)
    shell.run_cell("%%jaxcache\ny = scalemod_reload.step(x)", store_history=True)
    module.write_text(module.read_text().replace("SCALE = 2.0", "SCALE = 3.0  # edited"))  # another size: the .pyc is stale
    result, cap = run_captured(shell, "%%jaxcache -o rep\nimportlib.reload(scalemod_reload)\ny = scalemod_reload.step(x)\ny.tolist()")
    assert result.success and result.result == [3.0, 3.0, 3.0] and cap.stdout == f"Out[{shell.execution_count - 1}]: [3.0, 3.0, 3.0]\n"
    (miss,) = shell.user_ns["rep"].functions[0].misses
    summary = ("step is a new function object with the same name and source as one traced before: its module ran again "
               "(importlib.reload, %autoreload, %run), which makes each function in it anew")
    assert (miss.category, miss.reloaded, miss.same_line_hint, miss.summary) == ("redefined", True, False, summary)
    assert [line for line in miss.jaxpr_diff.lines if line[0] in "+-"] == [
        "-{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }", "+{ lambda ; a:f32[3]. let b:f32[3] = mul a 3.0:f32[] in (b,) }"]
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert f"1. re-defined function (its module reloaded or run again): {summary} called at In[{shell.execution_count - 1}]:3" in text
    assert "it is re-defined on every run" not in text
    shell.run_line_magic("jaxcache", "on")
    try:
        _, cap = run_captured(shell, "importlib.reload(scalemod_reload)\ny = scalemod_reload.step(x)")
    finally:
        shell.run_line_magic("jaxcache", "off")
    assert f"1. re-defined function (its module reloaded or run again): {summary}" in " ".join(cap.outputs[0].data["text/plain"].split())
    result, cap = run_captured(shell, "%jaxcache scalemod_reload.step")
    assert result.success, result.error_in_exec
    assert " ".join(cap.outputs[0].data["text/plain"].split()).count(f"re-defined function (its module reloaded or run again): {summary}") == 1  # the history of the step now in the module
    cell = "%%jaxcache -o rep\n@jax.jit\ndef h(v):\n    return v + 1\nh(x);"
    shell.run_cell(cell, store_history=True)
    run_captured(shell, cell)  # a cell's function made again: as before
    (miss,) = shell.user_ns["rep"].functions[0].misses
    assert (miss.category, miss.reloaded) == ("redefined", False)


def test_a_diff_against_a_scripts_previous_run_names_the_script_as_the_report_does(shell, tmp_path, monkeypatch):
    """'%run script.py' twice under %jaxcache: the misses read 'called at script.py:5' and the table 'script.py:2', but
    the second run's diff was headed 'jaxpr against the previous definition of h (defined at /tmp/…/script.py:2, traced
    at /tmp/…/script.py:6)', whole paths that wrapped the heading in an 80-column terminal."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.py").write_text("import jax, jax.numpy as jnp\n@jax.jit\ndef h(x):\n    return x + 1\n"
                                        "h(jnp.ones(2))\nh(jnp.ones(3))\n")
    shell.run_cell("%%jaxcache\n%run script.py", store_history=True)
    result, cap = run_captured(shell, "%%jaxcache\n%run script.py")
    assert result.success, result.error_in_exec
    text = cap.outputs[0].data["text/plain"]
    heading = "jaxpr against the previous definition of h (defined at script.py:2, traced at script.py:6)"
    assert heading in " ".join(text.split()) and str(tmp_path) not in text
    html = cap.outputs[0].data["text/html"]
    assert (f'defined at <span title="{tmp_path}/script.py">script.py</span>:2, traced at '
            f'<span title="{tmp_path}/script.py">script.py</span>:6') in html


def test_in_a_real_kernel_a_trace_in_a_cell_run_again_keeps_its_cells_number():
    """ipykernel names a cell's file by a hash of its text, so a cell run again with the same text has the same file,
    which IPython then numbers as the latest run. The jaxpr diff against g's previous definition read 'traced at
    In[5]:2', the cell that traced the new g, where the previous one traced at In[3]:2."""
    from shellrun import in_a_real_kernel

    call = "%%jaxcache\ny = g(x)"
    _, nb = in_a_real_kernel("%load_ext jaxshow\nimport jax, jax.numpy as jnp\nx = jnp.ones(3)",
                             "@jax.jit\ndef g(v):\n    return v * 2", call, "@jax.jit\ndef g(v):\n    return v * 3", call)
    text = " ".join(nb.cells[4].outputs[-1]["data"]["text/plain"].split())
    assert "jaxpr against the previous definition of g (defined at In[2]:1, traced at In[3]:2)" in text
    assert "called at In[5]:2" in text


def test_in_a_real_kernel_a_definition_in_a_cell_run_again_keeps_its_cells_number():
    """A cell that defines a ``jax.custom_vjp`` function (or any function) and traces it, run again with the same text:
    the jaxpr diff read 'against the previous definition of cv (defined at In[4]:2, traced at In[2]:6)', the new cell's
    number, as ipykernel names both runs' file alike and IPython numbers it as the latest. The definition is now named
    as when it first traced, as the call site already was."""
    from shellrun import in_a_real_kernel

    cell = ("%%jaxcache\n@jax.custom_vjp\ndef cv(v):\n    return jnp.sin(v)\n"
            "cv.defvjp(lambda v: (jnp.sin(v), jnp.cos(v)), lambda c, g: (c * g,))\ny = jax.jit(cv)(1.0)")
    _, nb = in_a_real_kernel("%load_ext jaxshow\nimport jax, jax.numpy as jnp", cell, "x = 1", cell)
    text = " ".join(nb.cells[3].outputs[-1]["data"]["text/plain"].split())
    assert ("cv is a new function object with the same name and source as one traced before called at In[4]:6" in text)
    assert "jaxpr against the previous definition of cv (defined at In[2]:2, traced at In[2]:6): no change" in text
    assert nb.cells[3].outputs[-1]["data"]["text/plain"].splitlines()[3].split() == ["cv", "1", "1", "0", "1", "In[4]:2"]


PMAP_IS_JIT = type(jax.pmap(lambda v: v)).__name__ != "PmapFunction"  # jax >= 0.8: a jit of shard_map


@pytest.mark.skipif(not PMAP_IS_JIT, reason="jax 0.7's pmap compiles outside jit's path, where no probe sees a trace")
def test_a_pmap_call_is_the_users_function_traced_then_hit(shell):
    # %%jaxcache read 'no jitted function of yours was called or traced' where %%jaxstages named the call: JAX traces
    # its own _fun (jax/_src/pmap.py), whose closure holds the user's function in a linear_util.WrappedFun
    shell.run_cell("def triple(v):\n    return 3 * v", store_history=True)
    defined = shell.execution_count - 1
    result, _ = run_captured(shell, "%%jaxcache -o rep\npg = jax.pmap(triple, axis_name='d'); pg(jnp.arange(1.0))")
    assert result.success and list(shell.user_ns["pg"](jax.numpy.arange(1.0))) == [0.0]
    [row] = shell.user_ns["rep"].functions
    assert (row.function, row.qualname, row.defined_at, row.calls, row.traced, row.hits) == (
        "triple", "triple", f"In[{defined}]:1", 1, 1, 0)
    assert [(m.category, m.summary) for m in row.misses] == [("never_seen", "first trace of triple")]
    assert row.misses[0].signature == (("v", "f32[1]"),), "was flat_args[0], the argument of JAX's own jit body"
    run_captured(shell, "%%jaxcache -o rep\npg = jax.pmap(triple, axis_name='d'); pg(jnp.arange(1.0)); pg(jnp.arange(1.0))")
    [row] = shell.user_ns["rep"].functions
    assert (row.function, row.calls, row.traced, row.hits) == ("triple", 2, 0, 2)
    shell.run_cell("def triple(v):\n    return 3 * v", store_history=True)
    run_captured(shell, "%%jaxcache -o rep\npg = jax.pmap(triple, axis_name='d'); pg(jnp.arange(1.0))")
    [row] = shell.user_ns["rep"].functions
    assert [(m.category, m.summary) for m in row.misses] == [
        ("redefined", "triple is a new function object with the same name and source as one traced before")]


@pytest.mark.skipif(PMAP_IS_JIT, reason="jax >= 0.8's pmap is a jit of shard_map, whose traces and hits are counted")
def test_jax_07s_pmap_calls_are_not_counted_as_hits(shell):
    # jax 0.7: pmap traces and compiles outside jit's path, and '%%jaxcache' over a first pmap call read 'no cache miss:
    # every jitted call hit the cache', 'traced 0, hits 2', while the function's trace-time print fired
    shell.run_cell("def double(v):\n    print('tracing double')\n    return 2 * v\npd = jax.pmap(double)", store_history=True)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = pd(jnp.ones((1, 3)))\ny = pd(jnp.ones((1, 3)))")
    assert result.success, result.error_in_exec
    assert cap.stdout == "tracing double\n"
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert text.startswith("%jaxcache — no trace seen: 2 calls of jax.pmap, whose traces and hits jaxshow does not see (see "
                           "the note) function calls traced hits")
    assert (f"note: double: 2 calls of jax.pmap, which on jax {jax.__version__} traces and compiles outside jax.jit's path: "
            "jaxshow sees neither its traces nor its cache hits, so they are counted as neither") in text
    [stats] = shell.user_ns["rep"].functions
    assert (stats.function, stats.calls, stats.traced, stats.hits, stats.untracked_calls) == ("double", 2, 0, 0, 2)


@pytest.mark.skipif(not PMAP_IS_JIT, reason="jax 0.7's pmap compiles outside jit's path, where no probe sees a trace")
def test_a_pmap_that_traced_before_the_cell_is_counted_as_a_hit(shell):
    # 'pq = jax.pmap(quad); pq(xs)' in a plain cell, then '%%jaxcache' over 'pq(xs)' read 'no jitted function of yours
    # was called or traced': the jit body pmap built for quad never traced while jaxshow looked
    shell.run_cell("def quad(v):\n    return 4 * v\npq = jax.pmap(quad)\nxs = jnp.arange(1.0)\ny = pq(xs)", store_history=True)
    defined = shell.execution_count - 1
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = pq(xs)\ny = pq(xs)")
    assert result.success
    [row] = shell.user_ns["rep"].functions
    assert (row.function, row.qualname, row.defined_at, row.calls, row.traced, row.hits) == (
        "quad", "quad", f"In[{defined}]:1", 2, 0, 2)


def test_a_jit_of_a_jit_wrapper_made_again_is_named_as_the_cause(shell):
    # the outer jax.jit traces the inner wrapper object: a cell that makes 'update' again re-traces update2's function. It
    # read 'update_raw is a new function object with the same name and source', though update_raw was the same object
    shell.run_cell("def update_raw(v):\n    return v * 2 + 1", store_history=True)
    cell = "%%jaxcache -o rep\nupdate = jax.jit(update_raw)\nupdate2 = jax.jit(update)\nupdate2(x)"
    run_captured(shell, cell)
    assert [(f.qualname, f.calls, f.traced) for f in shell.user_ns["rep"].functions] == [("update_raw", None, 1),
                                                                                      ("jit(update_raw)", 1, 1)]
    run_captured(shell, cell)
    [row] = shell.user_ns["rep"].functions
    assert (row.qualname, row.calls, row.traced) == ("jit(update_raw)", 1, 1)
    assert [(m.category, m.summary) for m in row.misses] == [
        ("redefined", "jit(update_raw) is a new jax.jit wrapper: each call of jax.jit makes a new function object, so JAX's "
                      "cache cannot find the earlier trace; make it once, outside the loop or cell")]


def test_a_jit_the_user_made_of_a_function_of_jaxs_is_explained(shell):
    """``normal = jax.jit(jax.random.normal, static_argnums=1)`` re-traced for each shape, and %%jaxcache said 'no jitted
    function of yours was called or traced': JAX's own functions were left out, also in a jit the user made."""
    shell.run_cell("normal = jax.jit(jax.random.normal, static_argnums=1)\nk = jax.random.key(0)", store_history=True)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = normal(k, (3,))\ny = normal(k, (4,))\ny = normal(k, (4,))\nz = jnp.sin(x)")
    assert result.success, result.error_in_exec
    [stats] = shell.user_ns["rep"].functions
    assert (stats.function, stats.calls, stats.traced, stats.hits) == ("normal", 3, 2, 1)
    assert [m.category for m in stats.misses] == ["never_seen", "static_args"]
    assert "    2. different static arguments: shape: now (4,), before (3,)" in cap.outputs[0].data["text/plain"].splitlines()


@pytest.mark.parametrize("made", ["_, pullback = jax.vjp(jnp.sin, x)", "_, pullback = jax.linearize(jnp.sin, x)"])
def test_a_jit_of_the_function_jax_vjp_returns_traces_once_in_both_magics(shell, made):
    """``jax.jit(pullback)`` of the callable object ``jax.vjp`` (``jax.linearize``) returns traces, lowers and compiles at
    its first call, as JAX's explain_cache_misses and jax.monitoring say of the plain cell. %%jaxcache counted that call
    a hit ('traced 0, hits 1') and %%jaxstages folded it into JAX's own helpers ('no jitted call of yours'): the object
    has no name for its module to hold, so it read as one of JAX's own jitted functions."""
    shell.run_cell(made + "\ng = jax.jit(pullback)", store_history=True)
    run_captured(shell, "%%jaxcache -o rep\ny = g(x)\ny = g(x)")
    [row] = shell.user_ns["rep"].functions
    assert (row.calls, row.traced, row.hits, [m.category for m in row.misses]) == (2, 1, 1, ["never_seen"])
    run_captured(shell, "%%jaxcache -o rep\ny = g(x)")
    [row] = shell.user_ns["rep"].functions
    assert (row.calls, row.traced, row.hits) == (1, 0, 1)
    shell.run_cell(made + "\ng = jax.jit(pullback)", store_history=True)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = g(x)\ny = g(x)")
    [report] = shell.user_ns["rep"].reports
    assert report.timings.stages_run == ("trace", "lower", "compile")
    assert (report.call_site.file, report.call_site.line, report.repeat_hits) == (f"In[{result.execution_count}]", 2, 1)
    assert report.notes[0] == f"jax.jit of JAX's own {report.function}, made by your code: shown as your call"
    run_captured(shell, "%%jaxstages -o rep\ny = g(x)")
    [report] = shell.user_ns["rep"].reports
    assert report.cache_hit and report.compiled is not None


NEW_OBJECT_PER_CALL = """
traced = []
def body(v):
    traced.append(1)
    return v + 1
def p_loop():
    for i in range(4):
        jax.jit(partial(body))(i)
def l_loop():
    for i in range(4):
        jax.jit(lambda v: body(v))(i)
"""
NEW_OBJECT_CELL = "%timeit -n2 -r2 p_loop()\n%timeit -n2 -r2 l_loop()\nfor n in (3, 4, 5):\n    y = f(jnp.ones(n))"


def _folded_lines(defined, cell, line):
    """The folded rows and sections of NEW_OBJECT_CELL's report, with f's re-trace history as it always reads."""
    return [
        "%jaxcache — 35 traces of 3 jitted functions (33 function objects)",
        "  function                                        calls  traced  hits  cache entries  defined at",
        "  ----------------------------------------------  -----  ------  ----  -------------  ----------",
        f"  body (16 function objects)                      —      16      —     —              In[{defined}]:2",
        f"  l_loop.<locals>.<lambda> (16 function objects)  —      16      —     —              In[{defined}]:10",
    ], [
        f"    … 14 more function objects of body, each traced once as in 2.: called at In[{defined}]:7 in p_loop ×14",
        "    … 14 more function objects of l_loop.<locals>.<lambda>, each traced once as in 2.: called at",
        f"      In[{defined}]:10 in l_loop ×14",
        "  f:",
        "    1. never-seen function (first trace): first trace of f",
        f"       called at In[{cell}]:{line}",
        "       signature traced: x: f32[3]",
    ]


def test_new_function_objects_per_call_fold_into_one_row_per_definition(shell):
    # JAX's jit guides (201/jit.md, jit-compilation.md) time loops of jax.jit(partial(body))(i) and
    # jax.jit(lambda x: body(x))(i): the report read "241 traces of 241 jitted functions", 50 equal rows "body 1"
    # and 50 sections, each "1. re-defined function ...", 858 lines.
    shell.run_cell(NEW_OBJECT_PER_CALL, store_history=True)
    defined = shell.execution_count - 1
    result, cap = run_captured(shell, "%%jaxcache -o rep\n" + NEW_OBJECT_CELL)
    assert result.success and len(shell.user_ns["traced"]) == 32 and shell.user_ns["traces"] == [1, 1, 1]
    rows = shell.user_ns["rep"].functions
    assert [(f.function, f.objects, f.traced, f.misses_left_out, f.folded_sites) for f in rows] == [
        ("body", 16, 16, 14, ((f"In[{defined}]:7 in p_loop", 14),)),
        ("<lambda>", 16, 16, 14, ((f"In[{defined}]:10 in l_loop", 14),)),
        ("f", 1, 3, 0, ()),
    ]
    assert sum(f.traced for f in rows) == len(shell.user_ns["traced"]) + len(shell.user_ns["traces"])  # nothing lost
    assert [[m.category for m in f.misses] for f in rows] == [["never_seen", "redefined"]] * 2 + [
        ["never_seen", "input_types", "input_types"]]
    text = cap.outputs[-1].data["text/plain"]
    head, folded = _folded_lines(defined, result.execution_count, 5)
    assert text.splitlines()[:6] == head + ["  f                                               3      3       0     3              "
                                            f"In[{defined - 1}]:5"]
    for piece in folded:
        assert f"\n{piece}\n" in text
    assert text.count("re-defined function (a new functools.partial wrapper, made per call)") == 1  # body's partial
    assert text.count("re-defined function (made anew inside l_loop)") == 1
    assert "    3. different input types: x: now f32[5], before f32[4]\n" in text  # f's history reads as it always has
    page = cap.outputs[-1].data["text/html"]
    assert page.count("body (16 function objects)") == 2  # its row and its one section
    assert page.count("l_loop.&lt;locals>.&lt;lambda> (16 function objects)") == 2
    assert "… 14 more function objects of body, each traced once as in 2.: called at In[" in page
    assert [ln for ln in text.splitlines() if ln.startswith("  ") and ln[2] != " " and ln.endswith(":")] == [
        "  body (16 function objects):", "  l_loop.<locals>.<lambda> (16 function objects):", "  f:", "  persistent compilation cache:"]


def test_new_function_objects_per_call_fold_in_on_mode(shell):
    shell.run_cell(NEW_OBJECT_PER_CALL, store_history=True)
    defined = shell.execution_count - 1
    run_captured(shell, "%jaxcache on")
    result, cap = run_captured(shell, NEW_OBJECT_CELL)
    assert result.success
    text = cap.outputs[-1].data["text/plain"]
    head, folded = _folded_lines(defined, result.execution_count, 4)
    assert text.splitlines()[:5] == head
    for piece in folded:
        assert f"\n{piece}\n" in text


def test_stage_objects_made_in_earlier_cells_are_not_misses_nor_jaxs_helpers(shell):
    # 'compiled = lowered.compile()' of a Lowered made in an earlier cell read 'JAX also compiled 1 of its own helper
    # function(s) (eager jax.numpy operations)': JAX compiled the user's f, with no trace
    assert shell.run_cell("lowered = f.trace(x).lower()", store_history=True).success
    result, cap = run_captured(shell, "%%jaxcache -o rep\ncompiled = lowered.compile()")
    assert result.success, result.error_in_exec
    rep = shell.user_ns["rep"]
    assert rep.functions == () and shell.user_ns["traces"] == [1]
    assert [n for n in rep.notes if "helper" in n or "ahead of time" in n] == [
        "compiled ahead of time from a jax.stages.Lowered (lowered.compile()), with no trace: f"]


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_a_lowered_of_an_earlier_trace_compiled_beside_a_trace_of_its_function_is_said(shell, mode):
    # with 'lowered = f.lower(jnp.ones(5))' in an earlier cell, 'y = f(jnp.ones(6))' and 'c = lowered.compile()' said
    # nothing of the compile: the note was left out because f had a row (for its trace of f32[6])
    assert shell.run_cell("lowered = f.lower(jnp.ones(5))", store_history=True).success
    if mode == "on":
        run_captured(shell, "%jaxcache on")
    prefix = "%%jaxcache\n" if mode == "cell" else ""
    result, cap = run_captured(shell, prefix + "y = f(jnp.ones(6))\nc = lowered.compile()")
    assert result.success, result.error_in_exec
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert "x: now f32[6], before f32[5]" in text and shell.user_ns["traces"] == [1, 1]
    assert ("note: f: also compiled from a jax.stages.Lowered made before (lowered.compile()), with no trace "
            "(not counted among its traces)") in text, text
    assert "with no trace: f" not in text
    # a Lowered the cell traced is on f's row alone
    result, cap = run_captured(shell, prefix + "c = f.lower(jnp.ones(8)).compile()")
    assert result.success, result.error_in_exec
    assert "x: now f32[8], before f32[6]" in cap.outputs[-1].data["text/plain"]
    assert "Lowered" not in cap.outputs[-1].data["text/plain"]


def test_calls_of_a_compiled_made_in_an_earlier_cell_are_counted_on_the_functions_row(shell):
    # '%%jaxcache' over 'z = compiled(x)' read 'no jitted function of yours was called or traced': the Compiled runs its
    # executable through C++, which no hook sees
    assert shell.run_cell("compiled = f.trace(x).lower().compile()", store_history=True).success
    result, cap = run_captured(shell, "%%jaxcache -o rep\nz = compiled(x)\nz = compiled(x)")
    assert result.success, result.error_in_exec
    rep, text = shell.user_ns["rep"], cap.outputs[-1].data["text/plain"]
    (row,) = rep.functions
    assert (row.function, row.calls, row.traced, row.hits, row.compiled_calls, row.defined_at) == ("f", 2, 0, 0, 2, "In[1]:5")
    assert text.splitlines()[0] == "%jaxcache — no trace: 2 calls ran a jax.stages.Compiled (see the note)"
    assert "\n  f         2      0       0     —              In[1]:5\n" in text, text
    assert ("note: f: 2 calls of a jax.stages.Compiled ran its executable, compiled ahead of time: JAX did not look up its "
            "cache, trace or compile them (not counted as hits)") in " ".join(text.split())
    # with a trace of f in the cell, one row adds up: 2 calls = 1 traced + 1 of the Compiled
    result, _ = run_captured(shell, "%%jaxcache -o rep\nz = compiled(x)\nz = f(jnp.ones(4))")
    (row,) = shell.user_ns["rep"].functions
    assert (row.function, row.calls, row.traced, row.hits, row.compiled_calls) == ("f", 2, 1, 0, 1)
    # a call the Compiled refuses (other argument types) raises as without jaxshow and is not counted
    result, cap = run_captured(shell, "%%jaxcache -o rep\nz = compiled(jnp.ones(4))")
    assert type(result.error_in_exec) is TypeError and shell.user_ns["rep"].functions == ()
    assert shell.user_ns["traces"] == [1, 1]


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_a_jitted_calls_own_compile_is_not_said_to_be_compiled_ahead_of_time(shell, mode):
    # every compile of a traced call read 'note: compiled ahead of time from a jax.stages.Lowered (lowered.compile()), with
    # no trace: f' under its own trace: JAX's jit compiles through the same MeshComputation.compile as Lowered.compile()
    if mode == "on":
        run_captured(shell, "%jaxcache on")
    prefix = "%%jaxcache\n" if mode == "cell" else ""
    texts = []
    for cell in ("y = f(jnp.ones(9))", "compiled = f.lower(jnp.ones(11)).compile()"):
        result, cap = run_captured(shell, prefix + cell)
        assert result.success, result.error_in_exec
        texts.append(cap.outputs[-1].data["text/plain"])
    assert [("first trace of f" in t, "x: now f32[11], before f32[9]" in t, "ahead of time" in t) for t in texts] == [
        (True, False, False), (False, True, False)], texts


@pytest.mark.parametrize("disable", ["with jax.disable_jit():\n    y = f(x)\n    y = f(x)",
                                     "jax.config.update('jax_disable_jit', True)\ny = f(x)\ny = f(x)\njax.config.update('jax_disable_jit', False)"],
                         ids=["context", "config-update"])
def test_a_call_under_disable_jit_is_said_to_run_op_by_op_not_to_hit(shell, disable):
    result, cap = run_captured(shell, f"%%jaxcache -o rep\n{disable}")
    assert result.success, result.error_in_exec
    assert shell.user_ns["traces"] == [1, 1], "the body ran op by op, once per call"
    [stats] = shell.user_ns["rep"].functions
    assert (stats.function, stats.calls, stats.traced, stats.hits, stats.jit_disabled) == ("f", 2, 0, 0, 2)
    text = cap.outputs[-1].data["text/plain"]
    assert text.splitlines()[0] == "%jaxcache — no trace: 2 calls ran op by op under jax.disable_jit() (see the note)"
    assert "f: 2 calls ran op by op: jax.disable_jit() was in effect, so JAX did not look up its cache, trace or compile " \
           "them (not counted as hits)" in " ".join(text.split())


def test_hits_and_calls_under_disable_jit_are_told_apart(shell):
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)\ny = f(x)\nwith jax.disable_jit():\n    y = f(x)")
    assert result.success, result.error_in_exec
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits, stats.jit_disabled) == (3, 1, 1, 1)
    text = cap.outputs[-1].data["text/plain"]
    assert text.splitlines()[0] == "%jaxcache — 1 trace of 1 jitted function"
    assert "f: 1 call ran op by op: jax.disable_jit() was in effect" in text


def test_two_functions_of_one_name_are_told_apart_in_their_sections_and_notes(shell):
    """Two ``jax.jit(lambda …)`` in a cell (chex.fake_jit runs calls under jax.disable_jit()): their sections read
    '<lambda>:' twice and the notes '<lambda>: 1 call ran op by op' twice, the notes with no cell number to tell which."""
    cell = ("%%jaxcache -o rep\ntimes3 = jax.jit(lambda v: v * 3)\nplus1 = jax.jit(lambda v: v + 1)\n"
            "with jax.disable_jit():\n    y = times3(1.0); y = plus1(1.0)\ny = times3(x); y = plus1(x)")
    result, cap = run_captured(shell, cell)
    assert result.success, result.error_in_exec
    n = shell.execution_count - 1
    rep = shell.user_ns["rep"]
    assert [(f.qualname, f.defined_at, f.calls, f.traced, f.jit_disabled) for f in rep.functions] == [
        ("<lambda>", f"In[{n}]:2", 2, 1, 1), ("<lambda>", f"In[{n}]:3", 2, 1, 1)]
    lines = cap.outputs[-1].data["text/plain"].splitlines()
    assert [l for l in lines if l.startswith("  <lambda> (")] == [f"  <lambda> (defined at In[{n}]:2):", f"  <lambda> (defined at In[{n}]:3):"]
    said = " ".join(cap.outputs[-1].data["text/plain"].split())
    for line in (2, 3):
        assert (f"note: <lambda> (defined at In[{n}]:{line}): 1 call ran op by op: jax.disable_jit() was in effect, so JAX "
                "did not look up its cache, trace or compile it (not counted as hits)") in said
    html = cap.outputs[-1].data["text/html"]
    assert html.count("&lt;lambda> (defined at ") == 4, "two section headings and two notes"


def test_a_call_jax_no_tracing_refused_is_counted_as_refused_not_as_a_hit(shell):
    """``jax.no_tracing()`` raises in JAX's C++ cache miss, before its traces are looked up, where no hook sees the call.
    The report read 'no cache miss: every jitted call hit the cache' over calls 2, hits 2 (jax 0.12) or 1, 1 (0.7-0.10)."""
    result, cap = run_captured(shell, "%%jaxcache -o rep\nz = jnp.ones(7)\ny = f(x)\nwith jax.no_tracing():\n    y = f(x)\n"
                                      "    y = f(z)\nafter = 1")
    assert type(result.error_in_exec) is RuntimeError and str(result.error_in_exec).endswith("but 'no_tracing' is set")
    assert shell.user_ns["traces"] == [1] and "after" not in shell.user_ns
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits, stats.refused) == (3, 1, 1, 1)
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert text.startswith("%jaxcache — 1 trace of 1 jitted function function calls traced hits cache entries defined at "
                           "-------- ----- ------ ---- ------------- ---------- f 3 1 1 2 In[1]:5 "), text
    assert ("note: f: 1 call refused by jax.no_tracing(): it missed JAX's C++ dispatch cache, and JAX raised before it looked "
            "up its traces, so it says neither whether it would have traced nor why (not counted as hits); %jaxcache freeze "
            "refuses traces as jax.no_tracing() does, and says what changed") in text, text
    result, cap = run_captured(shell, "%%jaxcache\nw = jnp.zeros(9, jnp.int8)\nwith jax.no_tracing():\n    y = f(x)\n    y = f(w)")
    assert type(result.error_in_exec) is RuntimeError
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == (
        "%jaxcache — no trace: 1 call hit the cache, 1 call refused by jax.no_tracing() (see the note)")


def test_a_call_jax_refused_before_looking_up_its_cache_is_not_counted_as_a_hit(shell):
    # read '%jaxcache — no cache miss: every jitted call hit the cache' over 'f  1  0  1' (calls, traced, hits)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f('abc')")
    assert type(result.error_in_exec) is TypeError and "Error interpreting argument" in str(result.error_in_exec)
    assert shell.user_ns["rep"].functions == ()
    assert cap.outputs[-1].data["text/plain"].splitlines()[:2] == [
        "%jaxcache — no jitted function of yours was traced", "  the cell raised TypeError: Error interpreting argument to "
        "<function f at " + hex(id(shell.user_ns["f"].__wrapped__)) + "> as an"]
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = f(x)\nf('abc')")
    assert type(result.error_in_exec) is TypeError
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits) == (1, 1, 0)


def test_a_refused_call_the_cell_caught_is_not_counted_as_a_hit(shell):
    # the cell caught the error, so it never reached the counter: 'no cache miss: every jitted call hit the cache' over
    # 'f  1  0  1' (calls, traced, hits)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ntry:\n    f('abc')\nexcept TypeError:\n    pass\ny = f(x)\n"
                                      "try:\n    f('abc')\nexcept TypeError:\n    pass")
    assert result.success, result.error_in_exec
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits) == (1, 1, 0)
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — 1 trace of 1 jitted function"
    mesh = "jax.make_mesh((1,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))"
    shell.run_cell(f"from jax.sharding import NamedSharding, PartitionSpec as P\n"
                   f"sharded = jax.jit(lambda v: v * 2, in_shardings=NamedSharding({mesh}, P(None, 'x')))")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ntry:\n    sharded(x)\nexcept Exception:\n    pass")
    assert result.success, result.error_in_exec
    assert shell.user_ns["rep"].functions == ()
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code"


def test_a_first_compile_of_a_trace_made_inside_another_jit_is_not_said_to_compile_again(shell):
    # read 'no trace, but 1 call compiled again from a reused trace', and its note gave only causes of a compile again
    run_captured(shell, "outer = jax.jit(lambda v: f(v) + 1)\ny = outer(x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["traces"] == [1]
    [stats] = shell.user_ns["rep"].functions
    placed = f"x on {jax.devices()[0]}"  # cpu:0; TFRT_CPU_0 on jax 0.7
    assert (stats.calls, stats.traced, stats.hits, stats.recompiled) == (1, 0, 0, (placed,))
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert text.startswith("%jaxcache — no trace, but 1 call compiled from an earlier trace (see the note)")
    assert ("note: f: 1 call compiled without a new trace: JAX reused an earlier trace and lowered it anew for what it does "
            f"not trace for: an argument's sharding or device, or that jax.device_put committed it to its device (the last "
            f"such call's arguments: {placed}), donation, the "
            "options of another jax.jit wrapper of f, or a first call of its own after a call inside another jitted "
            "function, which traced it there but compiled only that function, or after jax.eval_shape, "
            "jax.make_jaxpr or .trace(), which trace it and compile nothing") in text


@pytest.mark.parametrize("before", ["jax.eval_shape(f, x)", "jax.make_jaxpr(f)(x)", "f.trace(x)"])
def test_a_first_compile_of_a_trace_that_compiled_nothing_is_among_the_causes_named(shell, before):
    # the note listed sharding, device_put, donation, another wrapper's options and a call inside another jit: none of
    # them what happened, a trace by jax.eval_shape, jax.make_jaxpr or .trace() in an earlier cell
    run_captured(shell, f"s = {before}")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)")
    assert result.success, result.error_in_exec
    assert shell.user_ns["traces"] == [1]
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits, len(stats.recompiled)) == (1, 0, 0, 1)
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert ("or a first call of its own after a call inside another jitted function, which traced it there but compiled "
            "only that function, or after jax.eval_shape, jax.make_jaxpr or .trace(), which trace it and compile "
            "nothing") in text


def test_on_mode_tells_of_calls_jax_compiled_again_without_a_trace(shell):
    """%jaxcache on stayed silent on a cell whose calls JAX compiled from an earlier trace (a first call of its own of a
    function traced inside another jit; an argument jax.device_put committed to its device), each a compile as costly as
    a trace's. Each such cell now gets its report, saying the arguments were not read; a hit, or a compile ahead of
    time (lowered.compile()), is none. %jaxcache off takes the hooks out."""
    before = _jax_state()
    run_captured(shell, "%jaxcache on")
    run_captured(shell, "outer = jax.jit(lambda v: f(v) + 1)\ny = outer(x)")
    note = ("note: f: {} compiled without a new trace: JAX reused an earlier trace and lowered it anew for what it does "
            "not trace for: an argument's sharding or device, or that jax.device_put committed it to its device (%jaxcache "
            "on reads no call's arguments; %%jaxcache on the cell says where they were), donation, the options of another "
            "jax.jit wrapper of f, or a first call of its own after a call inside another jitted function")
    for cell, calls_compiled in [("y = f(x)", "1 call"), ("y = f(x)", None),
                                 ("y = f(jax.device_put(x, jax.devices()[0]))\ny = f(jax.device_put(x, jax.devices()[0]))\n"
                                  "y = f(x)", "1 call"),
                                 ("c = f.lower(x).compile()\nc = f.lower(x).compile()", None)]:
        result, cap = run_captured(shell, cell)
        assert result.success, result.error_in_exec
        if calls_compiled is None:
            assert cap.outputs == [], cell
            continue
        text = " ".join(cap.outputs[-1].data["text/plain"].split())
        assert text.startswith(f"%jaxcache — no trace, but {calls_compiled} compiled from an earlier trace (see the note) "
                               f"function calls traced hits cache entries defined at -------- ----- ------ ---- "
                               f"------------- ---------- f — 0 — — In[1]:"), text
        assert note.format(calls_compiled) in text
    assert shell.user_ns["traces"] == [1]
    run_captured(shell, "%jaxcache off")
    assert _jax_state() == before


def test_an_exported_programs_compile_is_not_called_an_eager_helper(shell):
    """Exported.call outside jit compiles the exported program inside JAX's own call_exported, named for no function of
    the user's: %%jaxcache said 'JAX also compiled 1 of its own helper functions (eager jax.numpy operations)'."""
    shell.run_cell("from jax import export\nx7 = jnp.ones(7)\nexp = export.export(jax.jit(lambda v: jnp.sin(v) * 2))(x7)")
    result, cap = run_captured(shell, "%%jaxcache\ny = exp.call(x7)\ny = exp.call(x7)")
    assert result.success, result.error_in_exec
    assert " ".join(cap.outputs[-1].data["text/plain"].split()) == (
        "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code note: JAX also "
        "compiled 1 program exported with jax.export, run by Exported.call (in JAX's own call_exported; %%jaxstages "
        "shows its stations); not shown")


def test_a_compile_again_names_the_argument_placed_otherwise_than_at_the_call_before(shell):
    """A call that compiled again without a trace listed where its first four arrays were placed, and the one whose
    placement made JAX compile again may be the fifth. The arguments placed otherwise than at the function's last
    call jaxshow looked at (its last compile, or its first call of the cell) now come first, the others counted."""
    shell.run_cell("mul = jax.jit(lambda a, b: a * b)\nw = jnp.ones(3)\ny = mul(x, w)")
    device = jax.devices()[0]  # cpu:0; TFRT_CPU_0 on jax 0.7
    run_captured(shell, "%%jaxcache -o rep\ny = mul(x, w)\ny = mul(jax.device_put(x, jax.devices()[0]), w)")
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits) == (2, 0, 1)
    assert stats.recompiled == (f"a: now committed to {device}, before on {device}; 1 other array placed as before",)
    run_captured(shell, "%%jaxcache -o rep\ny = mul(x, w)\ny = jax.jit(mul.__wrapped__, donate_argnums=1)(x, jnp.ones(3))")
    [stats] = shell.user_ns["rep"].functions
    assert stats.recompiled == (f"placed as before: a on {device}, b on {device}",)
    assert stats.recompiled_options == "differs from the one of the call before in donate_argnums: now (1,), before not set"


def test_a_compile_for_a_new_wrappers_options_names_the_options(shell):
    # the note gave every cause of a compile without a trace ('the options of another jax.jit wrapper of mul', among
    # four), and nothing said that the call's wrapper was jax.jit(mul, compiler_options={...})
    shell.run_cell("def mul(v):\n    return v * 2\ny = jax.jit(mul)(x)")
    fast = "compiler_options={'xla_cpu_enable_fast_math': True}"
    _, cap = run_captured(shell, f"%%jaxcache -o rep\ng = jax.jit(mul, {fast})\ny = g(x)")
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.recompiled_options) == (1, 0, f"was given {fast}")
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert f"which trace it and compile nothing; the last such call's jax.jit wrapper was given {fast}" in text
    _, cap = run_captured(shell, "%%jaxcache -o rep\ndef mul2(v):\n    return v * 3\ny = jax.jit(mul2)(x)\n"
                                 f"y = jax.jit(mul2, {fast}, donate_argnums=0)(x)")
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits, len(stats.recompiled)) == (2, 1, 0, 1)
    assert stats.recompiled_options == ("differs from the one of the call before in donate_argnums: now (0,), before not "
                                        "set; compiler_options: now {'xla_cpu_enable_fast_math': True}, before not set")


def test_a_wrapper_jax_makes_per_call_is_titled_so(shell):
    # pl.pallas_call(...)(x, y) outside jit, run twice: 'add_kernel is a new JAX transformation wrapper' under the title
    # 're-defined function (re-run cell or definition in a loop)', though the cell had neither
    pl = pytest.importorskip("jax.experimental.pallas")
    shell.user_ns["pl"] = pl
    shell.run_cell("def add_kernel(x_ref, y_ref, o_ref):\n    o_ref[...] = x_ref[...] + y_ref[...]\n\n"
                   "def add(v, w):\n    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(v.shape, v.dtype), "
                   "interpret=True)(v, w)")
    _, cap = run_captured(shell, "%%jaxcache -o rep\nz = add(x, x)\nz = add(x, x)")
    [stats] = shell.user_ns["rep"].functions
    assert [(m.category, m.made_by) for m in stats.misses] == [("never_seen", None), ("redefined", "pallas_call")]
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert ("2. re-defined function (a new pallas_call wrapper, made per call): add_kernel is a new pallas_call wrapper: "
            "each call of pallas_call makes a new function object") in text


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_a_pallas_kernel_called_inside_a_jitted_function_is_part_of_its_trace(shell, mode):
    """``pl.pallas_call(kernel, ...)(x, y)`` inside a jitted ``add``, as Pallas's own guide writes it: each trace of add
    makes a new pallas_call wrapper and traces it. The report had a row 'add_kernel (2 function objects)' beside add's,
    '4 traces of 2 jitted functions', and told the user to 'make it once, outside the loop or cell', which they cannot."""
    pl = pytest.importorskip("jax.experimental.pallas")
    shell.user_ns["pl"] = pl
    shell.run_cell("def add_kernel(x_ref, y_ref, o_ref):\n    o_ref[...] = x_ref[...] + y_ref[...]\n\n@jax.jit\n"
                   "def add(v, w):\n    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(v.shape, v.dtype), "
                   "interpret=True)(v, w)\nz = add(x, x)", store_history=True)
    text = _report_text(shell, mode, "z = add(jnp.ones(4), jnp.ones(4))\nz = add(jnp.ones(5), jnp.ones(5))")
    assert text.startswith("%jaxcache — 2 traces of 1 jitted function "), text
    assert "add_kernel (" not in text and "make it once" not in text, text
    assert ("note: add_kernel: traced 2 times inside add's traces, each time as a new pallas_call wrapper that trace made "
            "(each call of pallas_call makes one): part of add's traces and compiled with them; not shown") in text, text


def test_a_cache_hit_whose_program_raised_is_still_a_hit(shell):
    run_captured(shell, "step = jax.jit(lambda v: v + 1, donate_argnums=0)\np = jnp.ones(4)\nq = step(p)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nstep(p)")
    assert "deleted" in str(result.error_in_exec)  # jaxlib: "Buffer has been deleted or donated"; jax 0.12: "Array has been deleted"
    [stats] = shell.user_ns["rep"].functions
    assert (stats.calls, stats.traced, stats.hits) == (1, 0, 1)
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — no cache miss: every jitted call hit the cache"


@pytest.mark.parametrize("setup, cell, cause", [
    ("", "with jax.disable_jit():\n    y = helper(x)", "jax.disable_jit()"),
    ("jax.config.update('jax_disable_jit', True)", "y = helper(x)", "the option jax_disable_jit"),
], ids=["context", "earlier-cell"])
def test_disable_jit_around_a_helper_says_its_jitted_calls_went_unseen(shell, setup, cell, cause):
    # read 'no jitted function of yours was called or traced'
    run_captured(shell, "def helper(v):\n    return f(v) + 1\n" + setup)
    try:
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
    finally:
        jax.config.update("jax_disable_jit", False)
    assert result.success, result.error_in_exec
    assert shell.user_ns["traces"] == [1]
    rep = shell.user_ns["rep"]
    assert (rep.functions, rep.jit_disabled) == ((), True)
    assert " ".join(cap.outputs[-1].data["text/plain"].split()).startswith(
        "%jaxcache — no jitted call seen: jit was disabled in this cell (see the note) "
        f"note: jit was disabled in this cell ({cause}): jitted functions called from inside your helpers ran op by op, "
        "where jaxshow does not see them")


def test_a_trace_from_inside_a_helper_is_not_counted_among_the_cells_calls_and_says_so(shell):
    # 'f(x)' and 'run(jnp.ones(5))' whose loop called f 4 times read 'f  1  1  1': one call that traced and hit;
    # the miss read 'called at In[n]:3', not the line in run
    run_captured(shell, "y = f(x)\ndef run(v):\n    for _ in range(4):\n        w = f(v)\n    return w")
    defined = shell.execution_count - 1
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)\nz = run(jnp.ones(5))")
    assert result.success and shell.user_ns["traces"] == [1, 1]
    row, = shell.user_ns["rep"].functions
    assert (row.calls, row.traced, row.hits, row.traced_calls) == (1, 1, 1, 0)
    assert row.misses[0].call_site == f"In[{defined}]:4 in run"
    text = cap.outputs[-1].data["text/plain"]
    assert f"       called at In[{defined}]:4 in run\n" in text
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("  note: calls"))
    assert lines[at:at + 3] == [
        "  note: calls and hits count the calls written in the cell, not f's 1 trace made by a call",
        "    elsewhere. Jitted calls inside run that hit JAX's cache are not seen: JAX serves a hit in C++,",
        "    where jaxshow does not look; a call in the cell's top-level code is seen"]
    # a row with no call written in the cell (calls '—'): the hits inside the function that jits are said unseen
    run_captured(shell, "def main(n):\n    step = jax.jit(lambda v: v + 1)\n    for _ in range(n):\n        w = step(x)\n    return w")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nz = main(3)")
    assert [(r.calls, r.traced, r.hits) for r in shell.user_ns["rep"].functions] == [(None, 1, None)]
    assert shell.user_ns["rep"].unseen_inside == ("main",)
    assert "\n  note: jitted calls inside main that hit JAX's cache are not seen: JAX serves a hit" in cap.outputs[-1].data["text/plain"]
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(jnp.ones(6))\nz = run(x)")
    assert shell.user_ns["rep"].functions[0].traced_calls == 1 and "calls elsewhere" not in cap.outputs[-1].data["text/plain"]


def test_disable_jit_around_a_helper_is_said_beside_a_hit_and_not_beside_a_call_op_by_op(shell):
    run_captured(shell, "def helper(v):\n    return f(v) + 1\ny = f(x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)\nwith jax.disable_jit():\n    y = helper(x)")
    assert result.success, result.error_in_exec
    rep = shell.user_ns["rep"]
    assert rep.notes[0] == ("jit was disabled in this cell (jax.disable_jit()): jitted functions called from inside your helpers "
                            "ran op by op, where jaxshow does not see them")
    assert all(n.startswith("JAX also compiled") for n in rep.notes[1:]), "eager operations no test ran before"
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == "%jaxcache — no cache miss: every jitted call hit the cache"
    result, cap = run_captured(shell, "%%jaxcache -o rep\nwith jax.disable_jit():\n    y = f(x)\n    y = helper(x)")
    assert result.success, result.error_in_exec
    rep = shell.user_ns["rep"]
    assert rep.jit_disabled is False and not any("helpers" in n for n in rep.notes)
    result, cap = run_captured(shell, "%%jaxcache -o rep\nwith jax.disable_jit(False):\n    y = helper(x)")
    assert result.success, result.error_in_exec
    text = cap.outputs[-1].data["text/plain"]
    # helper's call of f hit JAX's cache in C++, where no hook sees it: the report says so rather than "was called"
    assert text.splitlines()[0] == "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code" and "jit was" not in text
    assert shell.user_ns["rep"].unseen_inside == ("helper",)
    # a note of its own starts in lower case, as every note of the report does ('note: Jitted calls …' before)
    assert text.splitlines()[1:3] == ["  note: jitted calls inside helper that hit JAX's cache are not seen: JAX serves a hit in C++, where",
                                      "    jaxshow does not look; a call in the cell's top-level code is seen"]


def test_jaxs_words_on_a_function_traced_inside_another_are_not_quoted_as_the_outer_ones(shell):
    # autodiff_remat: 'print_saved_residuals(f2, …)' of 'def f2(W, x): return jax.checkpoint(g)(W, x)' read 'f2:
    # never-seen function (first trace)' with JAX's explanation 'never seen function: g id=… defined at In[n]:2 … but
    # seen another function defined on the same line; maybe the function is being re-defined repeatedly', and
    # jaxshow's gloss of that hint: JAX's words on checkpoint's trace of g, which f2's trace made
    import jax.ad_checkpoint  # noqa: F401 - jax.ad_checkpoint.print_saved_residuals below

    run_captured(shell, "import jax.ad_checkpoint\ndef g(W, v):\n    return jnp.sin(W @ v)\nW = jnp.ones((3, 3))\n"
                        "jax.ad_checkpoint.print_saved_residuals(lambda W, v: g(W, g(W, v)), W, x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ndef f2(W, v):\n    v = jax.checkpoint(g)(W, v)\n"
                                      "    return jax.checkpoint(g)(W, v)\njax.ad_checkpoint.print_saved_residuals(f2, W, x)")
    assert result.success
    row, = shell.user_ns["rep"].functions
    miss, = row.misses
    assert (row.qualname, miss.category) == ("f2", "never_seen")
    text = cap.outputs[-1].data["text/plain"]
    assert " g id=" not in text and "same line" not in text and "same call site" not in text


def test_a_helper_is_not_said_to_hide_hits_while_no_jitted_function_but_jaxs_was_ever_traced(shell):
    # 'def loss(v): return jnp.sum(jnp.sin(v))' (no jit of the user's traced yet) then '%%jaxcache loss(x)' read
    # 'no jitted function of yours was traced or called in the cell' and 'note: Jitted calls inside loss that hit
    # JAX's cache are not seen': only JAX's own functions were ever traced, so none could hit for a jit of the user's
    run_captured(shell, "jax.clear_caches()\ndef loss(v):\n    return jnp.sum(jnp.sin(v))")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nl = jax.grad(loss)(x)\nm = loss(x)")
    assert result.success and shell.user_ns["rep"].unseen_inside == ()
    text = cap.outputs[-1].data["text/plain"]
    assert text.splitlines()[0] == "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code" and "not seen" not in text
    run_captured(shell, "y = f(x)\ndef run(v):\n    return f(v)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nz = run(x)")
    assert shell.user_ns["rep"].unseen_inside == ("run",)


X64 = "jax.enable_x64(True)" if hasattr(jax, "enable_x64") else "jax.experimental.enable_x64()"


def _report_text(shell, mode: str, cell: str) -> str:
    """The text of ``%jaxcache``'s report of ``cell``, run under ``%%jaxcache`` (``mode`` "cell") or ``%jaxcache on``, on one line."""
    if mode == "on":
        run_captured(shell, "%jaxcache on")
        _, cap = run_captured(shell, cell)
    else:
        _, cap = run_captured(shell, "%%jaxcache\n" + cell)
    return " ".join(cap.outputs[-1].data["text/plain"].split())


@pytest.mark.parametrize("mode", ["cell", "on"])
@pytest.mark.parametrize("context, option, now, before", [
    (X64, "jax_enable_x64", "True", "False"),
    ("jax.numpy_rank_promotion('raise')", "jax_numpy_rank_promotion", "raise", "allow"),
    ("jax.default_matmul_precision('highest')", "jax_default_matmul_precision", "highest", "None"),
    ("jax.experimental.xla_metadata.set_xla_metadata(foo='bar')", "xla_metadata_context_manager", "{'foo': 'bar'}", "None"),
])
def test_a_re_trace_for_a_config_context_names_the_option_on_every_jax(shell, mode, context, option, now, before):
    """jax 0.7's explanation gives the context's position only ('[5]: now True and before False'); the option is named
    on every JAX, with no note that this JAX does not name it. ``set_xla_metadata``'s value is its dict: it read
    '<jax._src.xla_metadata_lib.XlaMetadata object at 0x7f…>'."""
    shell.run_cell("import jax.experimental.xla_metadata\ny = f(x)", store_history=True)
    cell = f"with {context}:\n    y = f(x)"
    text = _report_text(shell, mode, cell)
    assert (f"1. different tracing context (a config option or context manager): {option}: now {now}, before {before} "
            f"called at In[") in text, text
    assert "does not name the config option" not in text and "trace context [" not in text, text


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_a_re_trace_for_a_config_context_also_names_the_arguments_that_changed(shell, mode):
    """Under ``jax.enable_x64`` a new array is f64: the key differs in the context and in x's type. The miss read
    'jax_enable_x64: now True, before False' alone (jax >= 0.9 stops its diff at the context), where jax 0.7's own
    explanation below it also said 'at x, now f64[3] and before f32[3]'; and x: f32[8] under 'highest' precision
    read as a precision change alone, though the shape changed too."""
    shell.run_cell("y = f(x)\nmm = jax.jit(lambda a: a @ a)\nz = mm(jnp.ones((4, 4)))", store_history=True)
    cell = f"with {X64}:\n    y = f(jnp.ones(3))\nwith jax.default_matmul_precision('highest'):\n    z = mm(jnp.ones((8, 8)))"
    text = _report_text(shell, mode, cell)
    assert ("1. different tracing context (a config option or context manager): jax_enable_x64: now True, before False; "
            "x: now f64[3], before f32[3] called at In[") in text, text
    assert ("1. different tracing context (a config option or context manager): jax_default_matmul_precision: now "
            "highest, before None; a: now f32[8,8], before f32[4,4] called at In[") in text, text


@DEFINES_NO_OPTION
def test_a_re_trace_after_a_module_defined_trace_context_options_names_them():
    """``from jax.experimental import pallas`` on jax 0.12 adds options to JAX's trace context (and jit key): every
    function traced before traces again. The miss read 'a config option or context manager differs from every earlier
    trace' (the two contexts' lengths differ; jax 0.8's and 0.9's own diffs raised), and with a new shape, 'different
    tracing context ...: v: now f32[2], before f32[3]'. In a kernel of its own: the options stay defined."""
    from shellrun import in_a_real_kernel

    _, nb = in_a_real_kernel(
        "%load_ext jaxshow\nimport jax, jax.numpy as jnp\nf = jax.jit(lambda v: v * 2)\ng = jax.jit(lambda v: v + 1)\n"
        "x = jnp.ones(3)\ny, z = f(x), g(x)",
        DEFINES_OPTION + "\ndefine('jaxshow_one')\ndefine('jaxshow_two')",
        "%%jaxcache\ny = f(x)", "%jaxcache on", "z = g(x)", "%jaxcache off",
        "define('jaxshow_three')", "%%jaxcache\ny = f(jnp.ones(2))")
    title = "1. different tracing context (a config option or context manager): JAX's trace context: now also"
    for cell in (2, 4):
        text = " ".join(nb.cells[cell].outputs[-1]["data"]["text/plain"].split())
        assert (f"{title} jaxshow_one (False), jaxshow_two (False), before without them (a module imported since defined "
                f"them) called at In[{cell + 1}]:") in text, text
    text = " ".join(nb.cells[7].outputs[-1]["data"]["text/plain"].split())
    assert (f"{title} jaxshow_three (False), before without it (a module imported since defined it); v: now f32[2], "
            "before f32[3] called at In[8]:2") in text, text


def test_jaxcache_on_explains_a_re_trace_of_a_function_traced_before_it_was_on(shell):
    """A notebook's JAX tracing cache soon holds more than 32 entries, and `%jaxcache on` then classifies with its own
    history: f traced before the session is not a first trace, and the x64 context is the cause."""
    shell.run_cell("for i in range(40):\n    jax.jit(lambda v: v + i).trace(jnp.ones(i + 1))\ny = f(x)", store_history=True)
    run_captured(shell, "%jaxcache on")
    _, cap = run_captured(shell, f"with {X64}:\n    y = f(x)")
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert ("1. different tracing context (a config option or context manager): jax_enable_x64: now True, before False "
            f"called at In[{shell.execution_count - 1}]:2") in text, text
    assert "never-seen" not in text and "first trace" not in text
    # jaxshow's own diff (JAX's cache is large where its count covers every function, jax >= 0.9) says where the
    # signature it compared with came from: JAX's tracing cache, not a trace jaxshow saw
    own = _jax_compat.trace_cache_counts_all_functions()
    assert not own or ("| for f defined at In[1]:5 | the only earlier signature, read from JAX's tracing cache (traced before "
                       "jaxshow looked): | Tracing context doesn't match") in text, text
    _, cap = run_captured(shell, "y = f(jnp.ones(5))")
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert "1. different input types: x: now f32[5], before f32[3]" in text, text
    assert not own or ("| closest of the last 2 signatures jaxshow kept, 1 of them read from JAX's tracing cache | (traced "
                       "before jaxshow looked): | different input types:") in text, text  # wrapped at the width, '| ' kept
    assert ("JAX's explanation (jax_explain_cache_misses)" in text) is not own


def test_history_table_wraps_its_free_text_columns_at_the_width(shell):
    """The history's ``details`` column ran to 153 columns and a pytree's signature to 332 (at COLUMNS=100): a table
    too wide for one column's wrap now shrinks its widest columns in turn, each cell wrapping under itself."""
    shell.run_cell("%%jaxcache\n@jax.jit\ndef norm2(v, n):\n    return v / n\n"
                   "norm2(jnp.ones((64, 16)), 2.0); norm2(jnp.ones((3, 16)), 2.0); norm2(jnp.ones((64, 16), jnp.bfloat16), 3)")
    _, cap = run_captured(shell, "%jaxcache norm2 -o hist")
    text = cap.outputs[-1].data["text/plain"]
    assert max(len(piece) for piece in text.splitlines()) <= 100
    table = [piece[12:] for piece in text.splitlines()[4:]]  # after the time of day
    assert table == [
        "signature              why it traced               details",
        "---------------------  --------------------------  --------------------------",
        "v: f32[64,16], n:      never-seen function (first  first trace of norm2",
        "f32[]{weak_type=True}  trace)",
        "v: f32[3,16], n:       different input types       v: now f32[3,16], before",
        "f32[]{weak_type=True}                              f32[64,16]",
        "v: bf16[64,16], n:     different input types       v: now bf16[64,16], before",
        "i32[]{weak_type=True}                              f32[3,16]; n: now i32[],",
        "                                                   before f32[]",
    ]
    for width in (80, 72):
        assert max(len(piece) for piece in render.to_text(shell.user_ns["hist"], render.TextBudget(width=width)).splitlines()) <= width


def test_history_reads_a_sentence_per_trace_where_its_table_does_not_fit(shell):
    """At 60 and 80 columns the history of a function with a dict of parameters was a table 218 columns wide: a leaf
    path ('parameters['weights_of_the_first_layer']:') and a summary cannot break. Each trace is now a sentence, its
    signature on a line under it."""
    shell.run_cell("%%jaxcache\n@jax.jit\ndef scale_all(parameters, batch):\n    return parameters['weights_of_the_first_layer'] * batch\n"
                   "p = {'weights_of_the_first_layer': jnp.ones(3), 'bias_of_the_first_layer': jnp.ones(3)}\n"
                   "scale_all(p, jnp.ones(3)); scale_all(p, jnp.ones(4))", store_history=True)
    run_captured(shell, "%jaxcache scale_all -o hist")
    number = shell.execution_count - 2
    lines = [piece[:2] + "hh:mm:ss" + piece[10:] if piece[2:3].isdigit() else piece
             for piece in render.to_text(shell.user_ns["hist"], render.TextBudget(width=60)).splitlines()]
    assert lines == [
        "%jaxcache scale_all",
        f"  defined at: In[{number}]:2",
        "  traces observed by jaxshow: 2",
        "  cache entries now: 2",
        "  hh:mm:ss never-seen function (first trace): first trace of",
        "      scale_all",
        "      signature: parameters['bias_of_the_first_layer']:",
        "      f32[3], parameters['weights_of_the_first_layer']:",
        "      f32[3], batch: f32[3]",
        "  hh:mm:ss different input types: batch: now f32[4], before",
        "      f32[3]",
        "      signature: parameters['bias_of_the_first_layer']:",
        "      f32[3], parameters['weights_of_the_first_layer']:",
        "      f32[3], batch: f32[4]",
    ]
    for width in (60, 80):
        assert max(len(piece) for piece in render.to_text(shell.user_ns["hist"], render.TextBudget(width=width)).splitlines()) <= width
    wide = render.to_text(shell.user_ns["hist"], render.TextBudget(width=200)).splitlines()  # the table where it fits
    assert wide[4].split() == ["when", "signature", "why", "it", "traced", "details"]


def test_a_jit_made_inside_a_function_is_said_to_be_made_anew_by_each_call(shell, tmp_path, monkeypatch):
    """'def make_and_run(x): return jax.jit(lambda v: v * 2)(x)', called twice, read 're-defined function (re-run cell
    or definition in a loop)' with JAX's same-line hint, though nothing re-ran a cell or looped: each call of
    make_and_run makes the lambda anew. A definition in a loop at a cell's top level keeps its words."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "made_inside.py").write_text("import jax\n\n\ndef make_and_run(x):\n    return jax.jit(lambda v: v * 2)(x)\n")
    shell.run_cell("import made_inside", store_history=True)
    cell = ("%%jaxcache -o rep\nmade_inside.make_and_run(x)\nmade_inside.make_and_run(x)\n"
            "def g(v):\n    return jax.jit(lambda w: w + 1)(v)\ng(x); g(x)\nfor i in range(2):\n    h = jax.jit(lambda v: v - 1)\n    h(x)")
    result, cap = run_captured(shell, cell)
    assert result.success and cap.stdout == ""
    by_row = {f.qualname: f.misses[-1] for f in shell.user_ns["rep"].functions}
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    for qualname, made_in in (("make_and_run.<locals>.<lambda>", "make_and_run"), ("g.<locals>.<lambda>", "g")):
        miss = by_row[qualname]
        summary = (f"<lambda> is a new function object with the same name and source as one traced before: it is defined "
                   f"inside {made_in}, which makes it anew each time it runs its definition (each call, each pass of a loop); "
                   f"make the jitted function once, outside {made_in}")
        assert (miss.category, miss.made_in, miss.same_line_hint, miss.summary) == ("redefined", made_in, False, summary)
        assert f"2. re-defined function (made anew inside {made_in}): {summary} called at" in text
    loop = by_row["<lambda>"]
    assert (loop.category, loop.made_in, loop.same_line_hint) == ("redefined", None, True)
    assert ("2. re-defined function (re-run cell or definition in a loop): <lambda> is a new function object with the "
            f"same name and source as one traced before called at In[{shell.execution_count - 1}]:9") in text
    shell.run_line_magic("jaxcache", "on")
    try:
        _, cap = run_captured(shell, "made_inside.make_and_run(x)")
    finally:
        shell.run_line_magic("jaxcache", "off")
    assert "1. re-defined function (made anew inside make_and_run): <lambda> is a new function object" in " ".join(
        cap.outputs[0].data["text/plain"].split())


def test_a_users_files_are_named_relative_to_the_current_folder_and_home(shell, tmp_path, monkeypatch):
    """'defined at /tmp/proj/model.py:19 (train_step)', 'called at /tmp/proj/train.py:8': a user's file is now shown
    relative to the current folder, or under '~', in every report; the record keeps the whole path, and the HTML says it
    as the shortened text's title."""
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "home" / "lib").mkdir(parents=True)
    (tmp_path / "proj" / "pkg" / "shortmod.py").write_text("import jax\n\n\n@jax.jit\ndef step(v):\n    return v * 2\n")
    (tmp_path / "home" / "lib" / "homemod.py").write_text("import shortmod\n\n\ndef run(v):\n    return shortmod.step(v)\n")
    for folder in (tmp_path / "proj" / "pkg", tmp_path / "home" / "lib"):
        monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(tmp_path / "proj")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shell.run_cell("import homemod", store_history=True)
    step_file = str(tmp_path / "proj" / "pkg" / "shortmod.py")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = homemod.run(x)\ny = homemod.run(jnp.ones(4))")
    assert result.success
    row = shell.user_ns["rep"].functions[0]
    assert (row.defined_at, row.misses[1].call_site) == (f"{step_file}:4", f"{tmp_path}/home/lib/homemod.py:5 in run")
    text = cap.outputs[0].data["text/plain"]
    assert "  step      —      2       —     —              pkg/shortmod.py:4\n" in text
    assert "       called at ~/lib/homemod.py:5 in run\n" in text and str(tmp_path) not in text
    page = cap.outputs[0].data["text/html"]
    assert f'<span title="{step_file}">pkg/shortmod.py</span>:4' in page
    _, cap = run_captured(shell, "%%jaxstages\ny = homemod.run(jnp.ones(5))")
    text = cap.outputs[0].data["text/plain"]
    head = " ".join(text[text.index("step: trace"):text.index("① jax.jit wrapper")].split())
    assert "(called at ~/lib/homemod.py:5 in run) (from In[" in head and str(tmp_path) not in head
    assert "    defined at       pkg/shortmod.py:4 (step)\n" in text  # the IR texts keep JAX's own locations
    _, cap = run_captured(shell, "%jaxcache homemod.shortmod.step")
    assert "  defined at: pkg/shortmod.py:4\n" in cap.outputs[0].data["text/plain"]


def test_a_library_installed_under_home_is_named_whole_while_the_users_files_are_shortened(shell, tmp_path, monkeypatch):
    """A library pip installed into a folder under home ('pip install --target ~/deps', that folder on sys.path), which
    jaxshow blames as a library, read '~/deps/deplib_home.py:11' like a user's file: render knew a library only by a
    site-packages folder. It is now named whole, as any installed code is, while the user's file beside it is shortened."""
    deps, proj = tmp_path / "home" / "deps", tmp_path / "home" / "proj"
    (deps / "deplib_home-1.0.dist-info").mkdir(parents=True)
    proj.mkdir()
    (deps / "deplib_home.py").write_text("import jax\nfrom functools import partial\n\n\n@partial(jax.jit, static_argnums=1)\n"
                                         "def _scaled(x, factor):\n    return x * factor\n\n\ndef update(x, i):\n"
                                         "    return _scaled(x, i % 3 + 1)\n")
    (proj / "usermod_home.py").write_text("import deplib_home\n\n\ndef run(v, i):\n    return deplib_home.update(v, i)\n")
    for folder in (deps, proj):
        monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(proj)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shell.run_cell("import usermod_home", store_history=True)
    result, cap = run_captured(shell, "%%jaxcache -o rep\nfor i in range(2):\n    w = usermod_home.run(x, i)")
    assert result.success
    assert shell.user_ns["rep"].functions[0].misses[-1].blame.library_line == f"{deps / 'deplib_home.py'}:11"
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert f"a library re-traced: usermod_home.py:5 called deplib_home.update ({deps / 'deplib_home.py'}:11)" in text
    assert f"{deps / 'deplib_home.py'}:5" in text and "~/deps" not in text

def test_jaxs_explanation_and_the_jaxpr_diff_heading_wrap_at_the_width(shell):
    """JAX's explanation ran to 133 columns at 100 ('| (JAX explained it against another earlier signature: …'), the
    jaxpr diff's heading to 109: each line of JAX's words now wraps four columns inside its own indent, the '| ' kept, and the
    heading under itself, its counts whole; the jaxprs do not wrap."""
    _, cap = run_captured(shell, "%%jaxcache -o rep\nfor n in range(3):\n    jax.jit(lambda v: v + 1)(jnp.ones(n + 1))")
    report = shell.user_ns["rep"]
    jaxprs = "\n".join(piece[1:] for m in report.functions[0].misses if m.jaxpr_diff for piece in m.jaxpr_diff.lines)
    for width in (100, 80):
        assert wider_lines(render.to_text(report, render.TextBudget(width=width)), width, jaxprs) == [], width
    lines = render.to_text(report, render.TextBudget(width=80)).splitlines()
    at = lines.index("       |   but seen another function defined on the same line; maybe the")
    assert lines[at + 1:at + 5] == [
        "       |       function is",  # four columns in (JAX nests by two); JAX's own line breaks stay
        "       |   being re-defined repeatedly, preventing caching?",
        "       jaxpr against the previous definition of <lambda> (defined at In[2]:3,",
        "           traced at In[2]:3): +1 −1 lines",
    ]


def test_a_functions_history_and_the_headline_wrap_at_the_width(shell):
    """'%jaxcache f' for a function never traced under jaxshow read 'jaxshow has not observed a trace …' on one line
    of 123 columns: the headline, the facts and that line wrap with a hanging indent."""
    run_captured(shell, "%jaxcache f -o hist")
    history = shell.user_ns["hist"]
    for width in (100, 80):
        assert max(len(piece) for piece in render.to_text(history, render.TextBudget(width=width)).splitlines()) <= width
    assert render.to_text(history, render.TextBudget(width=80)).splitlines()[-2:] == [
        "  jaxshow has not observed a trace of this function: it records traces in",
        "    %%jaxcache cells and while %jaxcache on is active",
    ]
    run_captured(shell, "%%jaxcache -o rep\nfor n in range(12):\n    f(jnp.ones(n + 1))")
    lines = render.to_text(shell.user_ns["rep"], render.TextBudget(width=40)).splitlines()
    assert lines[:2] == ["%jaxcache — 12 traces of 1 jitted", "  function"]


def test_a_models_signature_is_said_by_argument(shell):
    # flax's nnx.jit and equinox's filter_jit pass a model as a leaf per parameter: 'signature traced' read
    # 'model.states[0][0]: f32[32], model.states[0][1]: …' (or dynamic_nodonate['first'][k]) cut at 1,000 characters,
    # about 12 lines, under every miss, whatever the model's size
    shell.run_cell("@jax.jit\ndef loss(params, v):\n    return sum(p.sum() for p in params['layers']) * v", store_history=True)
    cell = ("%%jaxcache -o rep\nparams = {'layers': [jnp.ones((8, 8)) if i % 2 else jnp.ones(8, jnp.int32) for i in range(16)]}\n"
            "y = loss(params, x)\ny = loss(params, 2.0)")
    result, cap = run_captured(shell, cell)
    assert result.success, cap.stderr
    text = cap.outputs[-1].data["text/plain"]
    assert [line for line in re.sub(r"\n {9}(?! )", " ", text).splitlines() if "signature traced" in line] == [
        "       signature traced: params: 16 arrays (i32, f32, 576 values), v: f32[3] (all 17 leaves in "
        "report.functions[0].misses[0].signature)",
        "       signature traced: params: 16 arrays (i32, f32, 576 values), v: f32[]{weak_type=True} (all 17 leaves in "
        "report.functions[0].misses[1].signature)",
    ]
    miss = shell.user_ns["rep"].functions[0].misses[1]
    assert miss.signature[0] == ("params['layers'][0]", "i32[8]") and len(miss.signature) == 17
    page = re.sub("<[^>]+>", "", cap.outputs[-1].data["text/html"])
    assert "signature traced: params: 16 arrays (i32, f32, 576 values), v: f32[]{weak_type=True}" in page
    assert ("all 17 leaves (report.functions[0].misses[1].signature)params['layers'][0]: i32[8], "
            "params['layers'][1]: f32[8,8],") in page
    result, cap = run_captured(shell, "%jaxcache loss")
    history = cap.outputs[-1].data["text/plain"]
    assert history.count("  params: 16 arrays (i32, f32,  ") == 2 and "params['layers']" not in history
    result, cap = run_captured(shell, "%%jaxcache\ny = f(jnp.ones(5))")
    assert "       signature traced: x: f32[5]\n" in cap.outputs[-1].data["text/plain"]


def test_eager_lax_loops_are_named_apart_from_jaxs_helpers(shell):
    # an eager jax.lax.scan (nnx.scan outside jit) read 'JAX also compiled 2 of its own helper functions (eager jax.numpy
    # operations)' under %%jaxcache, where %%jaxstages said '1 compile of an eager jax.lax loop or branch'
    cell = ("c, ys = jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)\n"
            "w = jax.lax.while_loop(lambda v: v[0] < 3, lambda v: v + 1, x)\nz = jax.lax.cond(True, lambda v: v + 1, lambda v: v - 1, x)")
    shell.run_cell(cell, store_history=True)  # JAX's helpers compile once: the loops compile again for their new lambdas
    result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell + "\ny = jnp.cbrt(x)")
    assert result.success, cap.stderr
    assert shell.user_ns["rep"].notes == ("JAX also compiled 3 eager jax.lax loops and branches (scan, while, cond) and 1 of its own "
                                          "helper functions (eager jax.numpy operations); not shown",)
    result, cap = run_captured(shell, "%%jaxcache -o rep\nc, ys = jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)")
    assert shell.user_ns["rep"].notes == ("JAX also compiled 1 eager jax.lax loop or branch (scan); not shown",)


def test_a_jit_of_a_partial_of_a_jitted_function_says_why_it_is_two_rows(shell):
    # flax's key_concepts notebook: jax.eval_shape(partial(init_state, …)) of a jitted init_state listed two rows,
    # init_state and jit(init_state), each traced once, where %%jaxstages showed one call: eval_shape jits the partial,
    # and that trace traces init_state's own jit inside it
    shell.run_cell("@partial(jax.jit, static_argnums=1)\ndef init_state(v, dim):\n    return jnp.zeros(dim) + v.sum()",
                   store_history=True)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ns = jax.eval_shape(partial(init_state, dim=8), x)")
    assert result.success, cap.stderr
    report = shell.user_ns["rep"]
    assert sorted((f.qualname, f.traced) for f in report.functions) == [("init_state", 1), ("jit(init_state)", 1)]
    assert ("jit(init_state) and init_state: two real traces of one call: jit(init_state) is the jax.jit around "
            "functools.partial(init_state, …) that jax.eval_shape (or jax.make_jaxpr, or your code) made, and its trace traced "
            "init_state's own jax.jit inside it") in report.notes
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(jnp.ones(6))\ns = jax.eval_shape(partial(init_state, dim=8), x)")
    assert [f.qualname for f in shell.user_ns["rep"].functions] == ["f", "jit(init_state)"]
    assert not any("two real traces" in n for n in shell.user_ns["rep"].notes)


def test_a_miss_title_wraps_at_the_width(shell):
    """At 80 columns the x64 miss read '    1. different tracing context (a config option or context manager):
    jax_enable_x64:' on one line of 84, at 60 its title alone ran to 71: the title wraps as prose with what changed."""
    shell.run_cell("y = f(x)", store_history=True)
    run_captured(shell, f"%%jaxcache -o rep\nwith {X64}:\n    y = f(x)")
    lines = render.to_text(shell.user_ns["rep"], render.TextBudget(width=80)).splitlines()
    at = lines.index("    1. different tracing context (a config option or context manager):")
    assert lines[at + 1] == "       jax_enable_x64: now True, before False"
    # at 60 the title ran to 71: it wraps too
    lines = render.to_text(shell.user_ns["rep"], render.TextBudget(width=60)).splitlines()
    at = lines.index("    1. different tracing context (a config option or context")
    assert lines[at + 1:at + 3] == ["       manager): jax_enable_x64: now True, before False", "       called at In[3]:3"]


def test_the_functions_table_reads_a_sentence_a_row_where_it_does_not_fit(shell):
    """At 60 columns the table read '  <lambda> (2 function objects)  2      2       0     2              In[2]:2' on
    one line of 79, then narrowed to 6 lines for one row; a library's function (keras's
    'JAXTrainer.make_predict_function.<locals>.predict_step' defined in a 76-character path) ran to 230 columns. A
    table that does not fit reads a sentence a row, as the persistent cache's does."""
    run_captured(shell, "%%jaxcache -o rep\nfor n in range(2):\n    jax.jit(lambda v: v + 1)(jnp.ones(3))")
    lines = render.to_text(shell.user_ns["rep"], render.TextBudget(width=60)).splitlines()
    assert lines[2:4] == ["  <lambda> (2 function objects): calls 2, traced 2, hits 0,", "      cache entries 2 · defined at In[2]:3"]
    assert lines[4] == "  <lambda> (2 function objects):"
    wide = render.to_text(shell.user_ns["rep"], render.TextBudget(width=100)).splitlines()
    assert wide[1:4] == ["  function                       calls  traced  hits  cache entries  defined at",
                         "  -----------------------------  -----  ------  ----  -------------  ----------",
                         "  <lambda> (2 function objects)  2      2       0     2              In[2]:3"]


def test_a_history_before_any_trace_names_the_users_function_inside_jaxs_wrapper(shell):
    # was: 'defined at: .../jax/_src/traceback_util.py:191' for a jit of jax.shard_map(g) (or jax.checkpoint(g)) that
    # %%jaxstages had compiled, as no %jaxcache had traced it: the line of JAX's wrapper around g, not of g
    result, _ = run_captured(shell, "mesh = jax.make_mesh((1,), ('i',))\n"
                                    "def g(v):\n    return v * 2\n"
                                    "mapped = jax.jit(jax.shard_map(g, mesh=mesh, in_specs=jax.sharding.PartitionSpec('i'),\n"
                                    "                          out_specs=jax.sharding.PartitionSpec('i')))\n"
                                    "ckpt = jax.jit(jax.checkpoint(g))")
    for name in ("mapped", "ckpt"):
        run_captured(shell, f"%jaxcache {name} -o hist")
        assert shell.user_ns["hist"].defined_at == f"In[{result.execution_count}]:2", name


def test_an_array_committed_to_the_device_it_was_on_is_said_to_be_committed(shell):
    # was: 'the last such call's arguments: x on cpu:0', the device f(x) had run on: jax.device_put(x, device) commits x
    # to it, and JAX lowers and compiles f again for a committed argument
    run_captured(shell, "y = f(x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(jax.device_put(x, jax.devices()[0]))")
    assert result.success, result.error_in_exec
    [stats] = shell.user_ns["rep"].functions
    placed = f"x committed to {jax.devices()[0]}"
    assert (stats.calls, stats.traced, stats.hits, stats.recompiled) == (1, 0, 0, (placed,))
    assert (f"lowered it anew for what it does not trace for: an argument's sharding or device, or that jax.device_put "
            f"committed it to its device (the last such call's arguments: {placed}), donation,") in " ".join(
        cap.outputs[-1].data["text/plain"].split())


@pytest.mark.skipif(not PMAP_IS_JIT, reason="jax 0.7's pmap compiles outside jit's path, where no probe sees a trace")
def test_a_pmaps_history_is_its_functions(shell):
    # '%jaxcache pg' for pg = jax.pmap(triple) raised "UsageError: 'pg' is not a jitted function (it is a function);
    # jax.jit it first", though %%jaxcache files pmap's traces under triple
    shell.run_cell("def triple(v):\n    return 3 * v\npg = jax.pmap(triple, axis_name='d')", store_history=True)
    defined = shell.execution_count - 1
    run_captured(shell, "%jaxcache pg -o hist")
    assert (shell.user_ns["hist"].traces_observed, shell.user_ns["hist"].defined_at) == (0, f"In[{defined}]:1")
    run_captured(shell, "%%jaxcache\ny = pg(jnp.arange(1.0))")
    run_captured(shell, "%jaxcache pg -o hist")
    hist = shell.user_ns["hist"]
    assert (hist.qualname, hist.traces_observed, hist.defined_at) == ("triple", 1, f"In[{defined}]:1")
    assert [(e.category, e.signature) for e in hist.entries] == [("never_seen", (("v", "f32[1]"),))]
    with pytest.raises(UsageError, match="'pg' is a jax.pmap, not a jax.jit wrapper"):
        shell.run_line_magic("jaxcache", "clear pg")


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_arrays_a_traced_function_closed_over_are_freed_with_it(shell, mode):
    """A function's history keeps its last trace's jaxpr, for the diff of its next trace or definition. On jax 0.12 a
    jaxpr carries the arrays the function closes over, and on every release an inner jax.jit's does: after 'del w,
    inner, f' the arrays stayed alive under %jaxcache (a model's parameters, in device memory), until 512 other functions
    had traced. The history keeps the jaxpr without its constants' values; it prints the same."""
    define = "import gc\nw = jnp.ones((1031, 3))\ninner = jax.jit(lambda a: a * w)\nf = jax.jit(lambda a: inner(a) + w)"
    shell.run_cell(define, store_history=True)
    cell = "y = f(jnp.ones((1031, 3)))"
    if mode == "on":
        run_captured(shell, "%jaxcache on")
    _, cap = run_captured(shell, cell if mode == "on" else "%%jaxcache\n" + cell)
    assert "1. never-seen function (first trace): first trace of <lambda>" in cap.outputs[-1].data["text/plain"]
    shell.run_cell("del w, inner, f, y\ngc.collect()\njax.clear_caches()")
    gc.collect()
    assert [a.shape for a in jax.live_arrays() if a.shape == (1031, 3)] == []
    shell.run_cell(define.replace("1031, 3", "5"), store_history=True)  # the same cell run again, other shapes
    _, cap = run_captured(shell, (cell if mode == "on" else "%%jaxcache\n" + cell).replace("1031, 3", "5"))
    lines = cap.outputs[-1].data["text/plain"].splitlines()
    traced = "In[3]:2" if mode == "cell" else "In[4]:1"
    at = lines.index(f"       jaxpr against the previous definition of <lambda> (defined at In[2]:4, traced at {traced}):")
    assert lines[at + 1:at + 4] == ["           +4 −6 lines", "         -{ lambda a:f32[1031,3]; b:f32[1031,3]. let",
                                    "         -    c:f32[1031,3] = jit["]
    assert "jaxpr against the previous definition of <lambda> (defined at In[2]:3, traced at In[" in cap.outputs[-1].data["text/plain"]


@pytest.mark.parametrize("mode", ["cell", "on"])
def test_the_jaxprs_of_functions_made_in_a_loop_are_let_go(shell, mode):
    """Each function's history keeps its last trace's jaxpr for the diff of its next trace, or of the next definition at
    its place (a re-run cell). A 'jax.jit(partial(step, lr=lr))' made per loop pass kept every pass's jaxpr after its
    function was gone, none of them ever diffed again: up to 512 (a 410-equation train step: 29 MiB for 100 of them). Only
    the newest definition's jaxpr is kept once its function is gone; the diff reads as before."""
    shell.run_cell("import gc, weakref\ndef step(v, lr):\n    return jnp.sin(v) * lr\nkept = []", store_history=True)
    if mode == "on":
        run_captured(shell, "%jaxcache on")
    cell = ("for lr in (1.0, 2.0, 3.0):\n    s = jax.jit(partial(step, lr=lr))\n    s(jnp.ones(int(lr)))\n"
            "    kept.append(weakref.ref(s.trace(jnp.ones(int(lr))).jaxpr.jaxpr))")
    _, cap = run_captured(shell, cell if mode == "on" else "%%jaxcache\n" + cell)
    assert "jaxpr against the previous definition of step" in cap.outputs[-1].data["text/plain"]
    shell.run_cell("del s\ngc.collect()\njax.clear_caches()")
    gc.collect()
    assert [ref() is None for ref in shell.user_ns["kept"]] == [True, True, False]


UNPACKED = """
ran = []
class Opaque:
    def __hash__(self): return 1
    def __eq__(self, o): return self is o
    def __iter__(self): ran.append("iter"); return iter(((), (), ()))
    def __getattr__(self, name): ran.append(name); raise AttributeError(name)
opaque = jax.jit(lambda v, s: v * 2, static_argnums=1)
"""


def test_a_static_value_is_never_unpacked_to_look_for_equinoxs(shell):
    """jaxshow reads equinox's names from a call's one static value when it is equinox's tuple of treedefs: it unpacked
    any one static value to see, which ran a user's __iter__ under %%jaxcache, and a static value whose __iter__
    returned three items of two would have been read further. A static value is now read only where it is such a tuple."""
    assert shell.run_cell(UNPACKED).success
    result, _ = run_captured(shell, "%%jaxcache\ny = opaque(x, Opaque())")
    assert result.success, result.error_in_exec
    assert shell.user_ns["ran"] == []


def test_an_equinox_static_leaf_that_changed_is_named_by_the_users_parameter(shell):
    """eqx.filter_jit holds a Python float argument static, in one static value of equinox's with the model's functions:
    a call with ``scale=3.0`` after ``2.0`` read 'different static arguments: static: now …((None, 3.0),
    PyTreeDef(((*, *, None), {})))…, before …((None, 2.0), …)…', and another activation function in the model the same
    way. Each now reads as the user's argument: 'scale: now 3.0, before 2.0', 'model.activation: now …'."""
    pytest.importorskip("equinox")
    assert shell.run_cell("import equinox as eqx\nmlp = eqx.nn.MLP(4, 1, 8, 1, key=jax.random.key(0))\n"
                          "@eqx.filter_jit\ndef scaled(model, v, scale):\n    return jax.vmap(model)(v) * scale\n"
                          "xs = jnp.ones((5, 4))\nout = scaled(mlp, xs, 2.0)").success
    summaries, texts = [], []
    for cell in ("out = scaled(mlp, xs, 3.0)",
                 "out = scaled(eqx.nn.MLP(4, 1, 8, 1, activation=jax.nn.tanh, key=jax.random.key(0)), xs, 3.0)"):
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
        assert result.success, cap.stderr
        [miss] = shell.user_ns["rep"].functions[0].misses
        summaries.append((miss.category, [(c.where, c.now, c.before) for c in miss.changes]))
        texts.append(cap.outputs[-1].data["text/plain"])
    assert summaries == [("static_args", [("scale", "3.0", "2.0")]),
                         ("static_args", [("model.activation", "<PjitFunction of <function tanh>>",
                                           "<jax._src.custom_derivatives.custom_jvp object>")])]
    assert "    1. different static arguments: scale: now 3.0, before 2.0\n" in texts[0]


def test_an_equinox_argument_traced_once_and_static_once_or_not_passed_is_named(shell):
    """eqx.filter_jit of a call whose float argument became an array read 'different static arguments:
    [0][1]['rest'][1]: now pytree leaf, before <class 'NoneType'>; static: now …((None, None), …)…, before …((None,
    3.0), …)…' (JAX's paths into equinox's own arguments), and a keyword passed after calls without it '[0][1]['rest']:
    now tuple of length 3, before tuple of length 2; static: …'. Each now reads as the user's argument."""
    pytest.importorskip("equinox")
    assert shell.run_cell("import equinox as eqx\n@eqx.filter_jit\ndef scaled2(w, v, scale, mode='a'):\n"
                          "    return w * v * scale if mode == 'a' else w - v * scale\n"
                          "@eqx.filter_jit\ndef scaled3(w, v, scale, mode='a'):\n    return w * v * scale if mode == 'a' else w - v * scale\n"
                          "w = jnp.ones(3)\nout = scaled2(w, x, 3.0)\nout = scaled3(w, x, 3.0)").success
    found = []
    for cell in ("out = scaled2(w, x, jnp.full((), 3.0, jnp.float32))", "out = scaled3(w, x, 3.0, mode='b')"):
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
        assert result.success, cap.stderr
        [miss] = shell.user_ns["rep"].functions[0].misses
        found.append(([(c.where, c.now, c.before) for c in miss.changes], cap.outputs[-1].data["text/plain"]))
    assert found[0][0] == [("scale", "traced (f32[])", "static (3.0)")]
    assert ": scale: now traced (f32[]), before static (3.0)\n       called at In[" in found[0][1]
    assert found[1][0] == [("mode", "'b'", "not passed")]
    assert ": mode: now 'b', before not passed\n       called at In[" in found[1][1]


KEYED = """
ran = []
class Name:
    def __hash__(self): return 1
    def __eq__(self, o): return self is o
    def __lt__(self, o): return False
    def __repr__(self): ran.append("repr"); return "Name()"
name = Name()
keyed = jax.jit(lambda d: d[name] * 2)
"""


@pytest.mark.parametrize("magic", ["%%jaxcache\n", "%%jaxstages\n"])
def test_a_dict_keys_own_repr_runs_as_often_as_in_a_plain_cell(shell, magic):
    """A dict key whose __repr__ is the user's: JAX runs it to name the argument, and %%jaxcache ran
    it once more to print the key's pytree, as it printed a static value's before. That text now reads as unprinted."""
    def ran(prefix):
        assert shell.run_cell(KEYED).success
        result, _ = run_captured(shell, prefix + "y = keyed({name: x})")
        assert result.success, result.error_in_exec
        return list(shell.user_ns["ran"])

    assert ran(magic) == ran("")


TAGGED_BY = """
import dataclasses
ran = []
class Tag:
    def __init__(self, k): self.k = k
    def __hash__(self): return self.k
    def __eq__(self, o): return isinstance(o, Tag) and o.k == self.k
    def __repr__(self): ran.append("repr"); return "Tag"
@partial(jax.tree_util.register_dataclass, data_fields=["v"], meta_fields=["tag"])
@dataclasses.dataclass
class Tagged:
    v: object
    tag: object
tagged = jax.jit(lambda t: t.v * 2)
y = tagged(Tagged(x, Tag(1)))
ran.clear()
"""


@pytest.mark.parametrize("magic", ["%%jaxcache\n", "%jaxcache on\n"])
def test_a_pytree_metadatas_own_repr_runs_under_jaxcache_only_where_jax_runs_it_without(shell, magic):
    """A register_dataclass node whose meta field's __repr__ is the user's: the plain re-trace prints nothing, but JAX's
    explanation of the miss, which %jaxcache turns on, and jaxshow's own comparison printed both pytrees' metadata: 4
    reprs (jax 0.10; 6 on jax 0.7). The pytrees are now compared and printed as static values are, and the miss reads
    as what changed."""
    def run(prefix):
        assert shell.run_cell(TAGGED_BY).success
        result, cap = run_captured(shell, prefix + "y = tagged(Tagged(x, Tag(2)))")
        assert result.success, result.error_in_exec
        return list(shell.user_ns["ran"]), cap

    expected, _ = run("")
    ran, cap = run(magic)
    shell.run_line_magic("jaxcache", "off")
    assert ran == expected == []
    text = " ".join(" ".join(o.data["text/plain"] for o in cap.outputs).split())
    assert "1. different input pytree: t.tag (a static field of Tagged): now k = 2, before k = 1 " in text


def test_with_the_users_own_flag_jax_explains_a_pytree_miss_in_its_own_words(shell):
    """With jax_explain_cache_misses set by the user, JAX's explanation is one they asked for: under %%jaxcache it ran
    JAX's pytree comparison through jaxshow's guard, which printed '<Tag object>' where JAX prints the user's 'Tag', and
    ran the user's __repr__ fewer times than the plain cell with the flag on. JAX's words now stand, and jaxshow's own
    comparisons add no run of it."""
    def run(prefix):
        assert shell.run_cell(TAGGED_BY).success
        result, cap = run_captured(shell, prefix + "y = tagged(Tagged(x, Tag(2)))")
        assert result.success, result.error_in_exec
        return list(shell.user_ns["ran"]), cap

    jax.config.update("jax_explain_cache_misses", True)
    try:
        expected, _ = run("")
        ran, cap = run("%%jaxcache -o rep\n")
    finally:
        jax.config.update("jax_explain_cache_misses", False)
    assert ran == expected and expected != []
    (miss,) = shell.user_ns["rep"].functions[0].misses
    assert "with pytree metadata (Tag,)" in miss.evidence and "<Tag object" not in miss.evidence


def test_a_trailing_semicolon_silences_a_line_report_as_jaxconfigs_and_jaxdumps_does(shell):
    """'%jaxcache f;' read "UsageError: unknown subcommand 'f;'" (and '%jaxcache persistent -o state;' likewise), where
    '%jaxconfig x64;' shows nothing and '%jaxdump;' too: the ';' is IPython's way to silence a line's output."""
    run_captured(shell, "y = f(x)")
    for line, name, kind in (("%jaxcache f -o rep;", "rep", "TraceHistory"), ("%jaxcache persistent -o state;", "state", "PersistentCacheReport")):
        result, cap = run_captured(shell, line)
        assert result.success, result.error_in_exec
        assert cap.outputs == [] and cap.stdout == ""
        assert type(shell.user_ns[name]).__name__ == kind
    result, cap = run_captured(shell, "%jaxcache f")
    assert result.success and len(cap.outputs) == 1


@pytest.mark.parametrize("magic", ["%%jaxcache\n", "%jaxcache on\n"])
def test_a_cell_interrupted_while_tracing_says_so(shell, magic):
    """A KeyboardInterrupt out of a trace (Ctrl-C, or a function raising it): %jaxcache on said nothing of it, where it
    names any Exception the cell raised, and %%jaxcache read 'the cell raised KeyboardInterrupt:' (an empty message)."""
    shell.run_cell("def stop(v):\n    raise KeyboardInterrupt\nstopping = jax.jit(stop)")
    result, cap = run_captured(shell, magic + "y = stopping(x)")
    shell.run_line_magic("jaxcache", "off")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    text = cap.outputs[-1].data["text/plain"]
    assert "\n  the cell raised KeyboardInterrupt\n" in text + "\n"


def _run_in_cell(shell, text, cell_id=None):
    """Run a cell as JupyterLab or VS Code would (each cell's id sent along; IPython >= 8 hands it to pre_run_cell)."""
    with capture_output() as cap:
        result = shell.run_cell(text, store_history=True, **({"cell_id": cell_id} if cell_id else {}))
    assert result.success
    return cap.outputs[-1].data["text/plain"]


def test_another_cells_lambda_on_the_same_line_is_no_earlier_version_of_it(shell):
    """Two cells each starting 'f = jax.jit(lambda v: ...)' read 'first trace of a new <lambda>: it replaces the
    <lambda> defined at In[3]:1 ... (a cell that defines <lambda> anew, or an edited cell run again)', with a diff
    against the other cell's lambda: only the front end's cell id tells an edited cell from another one."""
    run_captured(shell, "%jaxcache on")
    _run_in_cell(shell, "fa = jax.jit(lambda v: jnp.sin(v)); a = fa(x)")
    text = _run_in_cell(shell, "fb = jax.jit(lambda v: v * 2); b = fb(x)")
    assert "1. never-seen function (first trace): first trace of <lambda>\n" in text
    assert "replaces" not in text and "previous definition" not in text
    run_captured(shell, "%jaxcache off")


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
@pytest.mark.parametrize("mode", ["on", "cell"])
def test_a_lambda_edited_in_its_cell_replaces_the_one_that_traced_before(shell, mode):
    """The same cell (by its front end's id) run again with its lambda edited: compared with the lambda it replaces,
    not with the other cell's lambda on the same line and column that traced in between."""
    if mode == "on":
        run_captured(shell, "%jaxcache on")
    magic = "" if mode == "on" else "%%jaxcache\n"
    first = shell.execution_count
    _run_in_cell(shell, magic + "fa = jax.jit(lambda v: jnp.sin(v)); a = fa(x)", cell_id="cell-a")
    text = _run_in_cell(shell, magic + "fb = jax.jit(lambda v: v * 2); b = fb(x)", cell_id="cell-b")
    assert "1. never-seen function (first trace): first trace of <lambda>\n" in text and "replaces" not in text
    text = " ".join(_run_in_cell(shell, magic + "fa = jax.jit(lambda v: jnp.cos(v)); a = fa(x)", cell_id="cell-a").split())
    line = 2 if mode == "cell" else 1
    assert (f"1. never-seen function (first trace): first trace of a new <lambda>: it replaces the <lambda> defined at "
            f"In[{first}]:{line} that traced before, with other code (a cell that defines <lambda> anew, or an edited cell "
            f"run again) called at In[{first + 2}]:{line}") in text
    assert f"jaxpr against the previous definition of <lambda> (defined at In[{first}]:{line}, traced at In[{first}]:{line}):" in text
    assert ("+1 −1 lines -{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) } "
            "+{ lambda ; a:f32[3]. let b:f32[3] = cos a in (b,) }") in text
    run_captured(shell, "%jaxcache off")


@pytest.mark.parametrize("transform", ["grad", "vmap", "value_and_grad"])
def test_a_jit_of_a_transformed_function_bound_to_its_own_name_counts_its_calls(shell, transform):
    """'loss = jax.jit(jax.grad(loss))' read 'grad(loss)  —  1  —  —': the function jax.grad makes carries loss's name
    and module, so the notebook's namespace, holding the jit under that name, was taken for a JAX module holding its
    own jitted function (jnp.sin's case), whose calls no report counts. 'g = jax.jit(jax.grad(loss))' counted."""
    cell = (f"def loss(v):\n    return jnp.sin(v).sum()\nloss = jax.jit(jax.{transform}(loss))\n"
            "loss(jnp.ones(3))\nloss(jnp.ones(3))")
    result, _ = run_captured(shell, "%%jaxcache -o rep\n" + cell)
    assert result.success
    [row] = shell.user_ns["rep"].functions
    assert (row.qualname, row.calls, row.traced, row.hits, row.cache_size) == (f"{transform}(loss)", 2, 1, 1, 1)


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
@pytest.mark.parametrize("mode", ["on", "cell"])
def test_another_cells_lambda_of_the_same_text_is_no_redefinition_of_it(shell, mode):
    """Two cells with the same text 'y = jax.jit(lambda v: v * 2)(x)': the second read 're-defined function (re-run cell
    or definition in a loop): <lambda> is a new function object with the same name and source as one traced before',
    though no cell ran again; only the first cell run again is a re-definition, compared with its own earlier lambda."""
    if mode == "on":
        run_captured(shell, "%jaxcache on")
    magic = "" if mode == "on" else "%%jaxcache\n"
    line = 2 if mode == "cell" else 1
    first = shell.execution_count
    _run_in_cell(shell, magic + "y = jax.jit(lambda v: v * 2)(x)", cell_id="cell-x")
    text = _run_in_cell(shell, magic + "y = jax.jit(lambda v: v * 2)(x)", cell_id="cell-y")
    assert f"1. never-seen function (first trace): first trace of <lambda>\n       called at In[{first + 1}]:{line}\n" in text
    assert "re-defined" not in text and "previous definition" not in text
    text = " ".join(_run_in_cell(shell, magic + "y = jax.jit(lambda v: v * 2)(x)", cell_id="cell-x").split())
    _assert_lambda_redefined(text, f"In[{first + 2}]:{line}", f"In[{first}]:{line}")
    run_captured(shell, "%jaxcache off")


def _assert_lambda_redefined(text, called_at, defined_at):
    """``text`` (whitespace folded) says a re-defined lambda called at ``called_at`` was diffed, with no change, against
    the lambda ``defined_at`` that traced there."""
    assert (f"re-defined function (re-run cell or definition in a loop): <lambda> is a new function object with the same "
            f"name and source as one traced before called at {called_at}") in text
    assert (f"jaxpr against the previous definition of <lambda> (defined at {defined_at}, traced at {defined_at}): "
            "no change") in text


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_a_lambda_moved_down_by_an_edit_of_its_cell_is_compared_with_itself(shell):
    """A line added at the top of a cell with two lambdas moved each down one line, and each was taken for a later
    version of the lambda that had been on its new line: the first re-defined lambda was diffed against the second
    ('previous definition of <lambda> (defined at In[3]:2 ...)', sin against v * 2). As the front end names cells, a
    line keeps its place across edits of its cell."""
    run_captured(shell, "%jaxcache on")
    lines = ["fa = jax.jit(lambda v: jnp.sin(v)); a = fa(x)", "fb = jax.jit(lambda v: v * 2); b = fb(x)"]
    first = shell.execution_count
    _run_in_cell(shell, "\n".join(lines), cell_id="cell-l")
    text = " ".join(_run_in_cell(shell, "\n".join(["c = 1", *lines]), cell_id="cell-l").split())
    for line in (1, 2):
        _assert_lambda_redefined(text, f"In[{first + 1}]:{line + 1}", f"In[{first}]:{line}")
    assert "mul" not in text and "sin" not in text
    text = " ".join(_run_in_cell(shell, "\n".join(["c = 1", lines[0].replace("sin", "cos"), lines[1]]),
                                 cell_id="cell-l").split())
    assert (f"first trace of a new <lambda>: it replaces the <lambda> defined at In[{first + 1}]:2 that traced before, "
            f"with other code (a cell that defines <lambda> anew, or an edited cell run again) called at In[{first + 2}]:2") in text
    assert ("+1 −1 lines -{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) } "
            "+{ lambda ; a:f32[3]. let b:f32[3] = cos a in (b,) }") in text
    run_captured(shell, "%jaxcache off")


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_a_lambda_on_a_copied_line_is_no_redefinition_of_the_line_above(shell):
    """A cell with the same line twice read 're-defined function (re-run cell or definition in a loop)' for the second
    line's lambda, neither a cell run again nor a loop; run again, each line's lambda is its own line's re-definition."""
    run_captured(shell, "%jaxcache on")
    first = shell.execution_count
    cell = "y = jax.jit(lambda v: v * 2)(x)\ny = jax.jit(lambda v: v * 2)(x)"
    text = " ".join(_run_in_cell(shell, cell, cell_id="cell-d").split())
    assert text.count("1. never-seen function (first trace): first trace of <lambda> called at") == 2, text
    assert "re-defined" not in text
    text = " ".join(_run_in_cell(shell, cell, cell_id="cell-d").split())
    for line in (1, 2):
        _assert_lambda_redefined(text, f"In[{first + 1}]:{line}", f"In[{first}]:{line}")
    run_captured(shell, "%jaxcache off")


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_a_lambda_edited_below_an_added_line_and_then_moved_up_keeps_its_place(shell):
    """An empty line added above a lambda edited in place, then the lambda moved above the other: each read 'first
    trace of <lambda>', its line paired with the empty line, then taken for an added one. Lines are paired by their
    text: one moved keeps its place, one changed in place takes the place of the most alike line it replaced."""
    run_captured(shell, "%jaxcache on")
    fa, fb = "fa = jax.jit(lambda v: jnp.sin(v)); a = fa(x)", "fb = jax.jit(lambda v: v * 2); b = fb(x)"
    first = shell.execution_count
    _run_in_cell(shell, "\n".join([fa, fb]), cell_id="cell-l")
    text = " ".join(_run_in_cell(shell, "\n".join([fa, "", fb.replace("2", "5")]), cell_id="cell-l").split())
    assert (f"first trace of a new <lambda>: it replaces the <lambda> defined at In[{first}]:2 that traced before, with "
            f"other code (a cell that defines <lambda> anew, or an edited cell run again) called at In[{first + 1}]:3") in text
    text = " ".join(_run_in_cell(shell, "\n".join([fb.replace("2", "5"), fa]), cell_id="cell-l").split())
    assert f"same name and source as one traced before called at In[{first + 2}]:1 signature traced" in text
    assert (f"jaxpr against the previous definition of <lambda> (defined at In[{first + 1}]:3, traced at "
            f"In[{first + 1}]:3): no change") in text
    run_captured(shell, "%jaxcache off")


def _retraced(shell, cell: str, before_each: str = "", tries: int = 10, before_each_magic: str = "%%jaxcache\n"):
    """The ``%%jaxcache`` report of the first of up to ``tries`` runs of ``cell`` (each after ``before_each``, which
    makes the class anew, run under ``before_each_magic``) in which JAX traced ``pmod_reload.apply`` (its ``traces``
    grew), and that run's output.
    jax >= 0.10 at times serves a call with a dataclass made anew from the trace of the class it replaced (its
    ``PyTreeDef ==`` does not compare a dataclass's type; one run in four here), with no trace: nothing to explain."""
    for _ in range(tries):
        if before_each:
            shell.run_cell(before_each_magic + before_each, store_history=True)
        before = len(shell.user_ns["pmod_reload"].traces)
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
        assert result.success, result.error_in_exec
        if len(shell.user_ns["pmod_reload"].traces) > before:
            return shell.user_ns["rep"], cap
    raise AssertionError(f"JAX traced none of {tries} runs of {cell!r}")


def _traced_from_a_reloadable_module(shell, tmp_path, monkeypatch) -> None:
    """``pmod_reload``, a module with a registered dataclass ``Params`` and a jitted ``apply`` that counts its traces,
    imported and ``apply`` traced under ``%%jaxcache``."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "pmod_reload.py").write_text(
        "import dataclasses, jax\n\ntraces = []\n\n@jax.tree_util.register_dataclass\n@dataclasses.dataclass\nclass Params:\n"
        "    w: jax.Array\n\n@jax.jit\ndef apply(p, x):\n    traces.append(1)\n    return x * p.w\n")
    shell.run_cell("import importlib, pmod_reload\np = pmod_reload.Params(jnp.ones(3))", store_history=True)
    shell.run_cell("%%jaxcache\ny = pmod_reload.apply(p, x)", store_history=True)


def test_a_pytree_class_made_anew_by_its_modules_reload_is_named_so(shell, tmp_path, monkeypatch):
    """importlib.reload of a module with a registered dataclass makes the class anew, and a Params made after it is a
    node of another type to JAX. The miss read 'p: equal as printed, unequal as compared: <class 'pmod_reload.Params'>
    is another object, compared by identity: make it once, or make it a static field that compares by value', advice
    for a static value, not for a class its module made anew."""
    _traced_from_a_reloadable_module(shell, tmp_path, monkeypatch)
    rep, cap = _retraced(shell, "p = pmod_reload.Params(jnp.ones(3))\ny = pmod_reload.apply(p, x)",
                         before_each="importlib.reload(pmod_reload)\ny = pmod_reload.apply(p, x)")  # the Params before
    assert shell.user_ns["y"].tolist() == [1.0, 1.0, 1.0]
    (miss,) = rep.functions[0].misses
    assert (miss.category, miss.summary) == ("input_pytree", (
        "p: now a pmod_reload.Params of the class made anew when its module ran again (importlib.reload, %autoreload, "
        "%run), before one of the class it replaced"))
    assert ("1. different input pytree: p: now a pmod_reload.Params of the class made anew when its module ran again "
            "(importlib.reload, %autoreload, %run), before one of the class it replaced") in unwrapped(cap.outputs[0].data["text/plain"])
    cell = ("import dataclasses\n@jax.tree_util.register_dataclass\n@dataclasses.dataclass\nclass Box:\n    w: jax.Array\n"
            "y = pmod_reload.apply(Box(x), x)")
    _retraced(shell, cell)  # a Box traced (at times JAX serves the first Box from the Params trace: same fields)
    rep, _ = _retraced(shell, cell)
    (miss,) = rep.functions[0].misses
    assert miss.summary == "p: now a Box of the class made anew when a cell or script defined it again, before one of the class it replaced"


def test_a_pytree_class_made_anew_is_named_so_when_its_reloaded_function_traced_unseen(shell, tmp_path, monkeypatch):
    """The reload's own call ran in a cell without %%jaxcache (the reloaded module's apply traced there, unseen), so
    the next %%jaxcache cell's miss is a first-seen function's, explained by JAX's words alone: 'p: equal as printed,
    unequal as compared: <class 'pmod_reload.Params'> is another object, compared by identity: make it once, or make
    it a static field that compares by value', advice for a static value. JAX's words for two classes of one module
    and name now read as the class made anew, as they do where jaxshow held the earlier key."""
    _traced_from_a_reloadable_module(shell, tmp_path, monkeypatch)
    rep, cap = _retraced(shell, "p = pmod_reload.Params(jnp.ones(3))\ny = pmod_reload.apply(p, x)",
                         before_each="importlib.reload(pmod_reload)\ny = pmod_reload.apply(p, x)", before_each_magic="")
    (miss,) = rep.functions[0].misses
    assert (miss.category, miss.summary) == ("input_pytree", (
        "p: now a pmod_reload.Params of the class made anew when its module ran again (importlib.reload, %autoreload, "
        "%run), before one of the class it replaced"))
    assert "compared by identity" not in cap.outputs[0].data["text/plain"]


def test_a_function_whose_code_autoreload_replaced_in_place_is_said_so(shell, tmp_path, monkeypatch):
    """%autoreload 2 replaces an edited function's code in place: the same function object, its definition moved
    down by two lines added above it. jax.jit of it again read 'different debug info: same types, different debug
    info (e.g. argument names, or a jit target reused as a cond branch)' on jax 0.10, and 'first trace of a new
    step_fn: it replaces the step_fn defined at ...' on jax 0.7, where it is the same object; and a new shape after
    an edit that moved nothing read only 'x: now f32[4], before f32[3]' beside a jaxpr diff of the edit."""
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "codemod_ar.py"

    def write(text):
        module.write_text(text)
        os.utime(module, (module.stat().st_atime, module.stat().st_mtime + 10 + len(text)))  # autoreload sees a newer file

    write("import jax.numpy as jnp\n\ndef step_fn(x):\n    return jnp.sin(x) * 2\n")
    shell.run_cell("%load_ext autoreload\n%autoreload 2\nfrom codemod_ar import step_fn", store_history=True)
    shell.run_cell("%%jaxcache\ny = jax.jit(step_fn)(x)", store_history=True)
    write("# one\n# two\nimport jax.numpy as jnp\n\ndef step_fn(x):\n    return jnp.sin(x) * 3\n")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = jax.jit(step_fn)(x)\ny.tolist()")
    assert result.result == pytest.approx([2 * 0.8414709848] * 3)  # JAX's cache holds step_fn's trace: the old program ran
    note = ("step_fn: its code was replaced in place since its last trace (as %autoreload does), and 1 call hit the cache: "
            "it ran the program traced from the earlier code; a new signature traces the new code, and jax.clear_caches() "
            "lets every signature trace again")
    assert shell.user_ns["rep"].notes[-1] == note  # after IPython 9's note that step_fn's lines are not its file's
    assert note in unwrapped(cap.outputs[0].data["text/plain"])
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = jax.jit(step_fn)(jnp.ones(2))\ny.tolist()")
    assert result.success and result.result == pytest.approx([3 * 0.8414709848] * 2)
    now = shell.user_ns["step_fn"].__code__.co_firstlineno  # 5; 1 on IPython 9, whose autoreload compiles the def alone
    (miss,) = shell.user_ns["rep"].functions[0].misses
    # JAX's diff stops at the first difference: the debug info (the definition's place) on jax >= 0.9, which keys it
    assert (miss.category, miss.summary) == ("debug_info" if _jax_compat.JAX_VERSION >= (0, 9) else "input_types", (
        f"step_fn's code, replaced in place since its last trace (as %autoreload does): now at {module}:{now}, "
        f"before at {module}:3; x: now f32[2], before f32[3]"))
    text = unwrapped(cap.outputs[0].data["text/plain"])
    assert "step_fn's code, replaced in place since its last trace (as %autoreload does): now at" in text
    assert "-{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }" in text
    write("# one\n# two\nimport jax.numpy as jnp\n\ndef step_fn(x):\n    return jnp.sin(x) * 4\n")
    run_captured(shell, "%%jaxcache -o rep\ny = jax.jit(step_fn)(jnp.ones(4))")  # the edit moved no line
    (miss,) = shell.user_ns["rep"].functions[0].misses
    assert (miss.category, miss.summary) == ("input_types", (
        f"step_fn's code, replaced in place since its last trace (as %autoreload does): now at {module}:{now}, before at "
        f"{module}:{now}; x: now f32[4], before f32[2]"))
    assert [line for line in miss.jaxpr_diff.lines if line[0] in "+-"] == [
        "-{ lambda ; a:f32[2]. let b:f32[2] = sin a; c:f32[2] = mul b 3.0:f32[] in (c,) }",
        "+{ lambda ; a:f32[4]. let b:f32[4] = sin a; c:f32[4] = mul b 4.0:f32[] in (c,) }"]


def test_a_scripts_function_edited_and_run_again_is_said_to_replace_its_earlier_definition_by_running_again(shell, tmp_path, monkeypatch):
    """'%run script.py', the script's jitted function edited, '%run script.py' again: the first trace of the new sstep
    read '... it replaces the sstep defined at script.py:3 that traced before, with other code (its module reloaded:
    importlib.reload, %autoreload)', naming neither %run nor a run again, and JAX's same-line hint '... it is re-defined
    on every run', which the replacement explains."""
    monkeypatch.chdir(tmp_path)
    script = "import jax, jax.numpy as jnp\n\n@jax.jit\ndef sstep(x):\n    return x + 1\n\nz = sstep(jnp.ones(2))\n"
    (tmp_path / "script_edit.py").write_text(script)
    shell.run_cell("%%jaxcache\n%run script_edit.py", store_history=True)
    (tmp_path / "script_edit.py").write_text(script.replace("x + 1", "x + 2"))
    result, cap = run_captured(shell, "%%jaxcache -o rep\n%run script_edit.py")
    assert result.success and shell.user_ns["z"].tolist() == [3.0, 3.0]
    (miss,) = shell.user_ns["rep"].functions[0].misses
    assert (miss.summary, miss.same_line_hint) == (
        f"first trace of a new sstep: it replaces the sstep defined at {tmp_path / 'script_edit.py'}:3 that traced before, "
        "with other code (its module reloaded or run again: importlib.reload, %autoreload, %run)", False)
    text = unwrapped(cap.outputs[0].data["text/plain"])
    assert "re-defined on every run" not in text


def test_a_from_imported_jitted_function_its_module_defines_anew_is_said_to_be_the_earlier_definition(shell, tmp_path, monkeypatch):
    """'from stepmod_from import step', step edited in the module and %autoreload 2: autoreload replaces no jax.jit
    wrapper, so the name still holds the earlier step, whose cache hits run the old program and whose new shapes trace
    the old code. %%jaxcache said 'no cache miss: every jitted call hit the cache', then a first trace or a new shape
    'defined at stepmod_from.py:4', as if step were the module's; it now says the step called is the earlier one."""
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "stepmod_from.py"
    module.write_text("import jax\n\n@jax.jit\ndef step(x):\n    return x * 2\n")
    shell.run_cell("%load_ext autoreload\n%autoreload 2\nfrom stepmod_from import step\nimport stepmod_from", store_history=True)
    shell.run_cell("%%jaxcache\ny = step(x)", store_history=True)
    module.write_text("# edited\nimport jax\n\n@jax.jit\ndef step(x):\n    return x * 3\n")  # step's old lines are not the file's
    os.utime(module, (module.stat().st_atime, module.stat().st_mtime + 10))
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = step(x)\ny.tolist()")
    assert result.success and result.result == [2.0, 2.0, 2.0]  # the earlier step, as without jaxshow
    assert shell.user_ns["stepmod_from"].step(shell.user_ns["x"]).tolist() == [3.0, 3.0, 3.0]
    note = ("step: the step called is an earlier definition: stepmod_from.step is another function now (stepmod_from ran "
            "again: importlib.reload, %autoreload); a name bound before, as by 'from stepmod_from import step', keeps the "
            "earlier one, and %autoreload replaces no jax.jit-wrapped function")
    assert shell.user_ns["rep"].notes == (note,)
    assert note in unwrapped(cap.outputs[0].data["text/plain"])
    run_captured(shell, "%%jaxcache -o rep\ny = stepmod_from.step(x)")
    assert shell.user_ns["rep"].notes == ()
    for cell in ("y = step(x)", "y = step(jnp.ones(5))"):  # a hit, read back from JAX's caches; a trace of the old code
        result, cap = run_captured(shell, f"%%jaxstages -o rep\n{cell}")
        assert result.success and note in shell.user_ns["rep"].reports[0].notes
        assert note in unwrapped(cap.outputs[0].data["text/plain"])
    run_captured(shell, "%%jaxstages -o rep\ny = stepmod_from.step(x)")
    assert not any("earlier definition" in n for n in shell.user_ns["rep"].reports[0].notes)


def test_a_function_renamed_after_its_definition_is_not_said_to_start_on_a_line_that_does_not_define_it(shell, tmp_path,
                                                                                                       monkeypatch):
    """A function whose ``__name__`` its module sets after the ``def`` (``make`` returns ``inner``, named ``step``): the
    line its code starts on defines ``inner``, and the file is unchanged. Both magics said its lines were not the file's."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "stepmod_named.py").write_text("import jax\n\ndef make():\n    def inner(x):\n        return x * 2\n"
                                               "    inner.__name__ = 'step'\n    return jax.jit(inner)\n\nstep = make()\n")
    shell.run_cell("import stepmod_named", store_history=True)
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = stepmod_named.step(x)")
    assert result.success and shell.user_ns["rep"].notes == ()
    result, _ = run_captured(shell, "%%jaxstages -o rep\ny = stepmod_named.step(x)")
    assert result.success and not any("its code says it starts at" in n for n in shell.user_ns["rep"].reports[0].notes)


def test_a_function_whose_code_starts_on_a_line_that_does_not_define_it_is_said_so(shell, tmp_path, monkeypatch):
    """A module edited, two lines added at its top, and not reloaded: step's code still says it starts at
    stepmod_moved.py:3, now 'import jax', and --source showed the file's lines 3 to 5 as step's. IPython 9's
    %autoreload does the same to every edited function (it compiles one alone, from line 1). The reports now say the
    lines are not the file's."""
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "stepmod_moved.py"
    module.write_text("import jax\n\n@jax.jit\ndef step(x):\n    return x * 2\n")
    shell.run_cell("import stepmod_moved", store_history=True)
    module.write_text("# one\n# two\nimport jax\n\n@jax.jit\ndef step(x):\n    return x * 2\n")
    note = (f"step: its code says it starts at {module}:3, a line that does not define it as the file reads now: the file "
            "changed since (not reloaded yet), or IPython 9's %autoreload compiled the edited function apart from its file, "
            "from line 1 (ipython/ipython#15359; %autoreload 2 --full reloads whole modules instead); the lines JAX records "
            "for it, its definition's and --source's, are not the file's")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = stepmod_moved.step(x)")
    assert result.success and shell.user_ns["rep"].notes == (note,)
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = stepmod_moved.step(x)")
    assert result.success and note in shell.user_ns["rep"].reports[0].notes
    run_captured(shell, "import importlib\nimportlib.reload(stepmod_moved)")
    run_captured(shell, "%%jaxcache -o rep\ny = stepmod_moved.step(x)")
    assert shell.user_ns["rep"].notes == ()


def test_a_miss_on_weak_typing_alone_says_what_weakly_typed_means(shell):
    """'x: now f32[]{weak_type=False}, before f32[]{weak_type=True}' told a Python float from an array in JAX's notation
    alone: the miss now says so in words."""
    run_captured(shell, "%%jaxcache -o rep\nscale = jax.jit(lambda v: v * 2)\nscale(1.0)\nscale(jnp.float32(1.0))\nscale(jnp.ones(2))")
    first, weak, shape = shell.user_ns["rep"].functions[0].misses
    assert weak.summary == ("v: now f32[]{weak_type=False}, before f32[]{weak_type=True} (only weak typing differs: a Python "
                            "scalar such as 1.0 is weakly typed, an array or jnp.float32(1.0) is not, and JAX traces the two "
                            "apart; pass one kind each time)")
    assert shape.summary == "v: now f32[2], before f32[]"
