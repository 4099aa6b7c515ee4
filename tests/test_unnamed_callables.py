"""Jitted callables JAX names ``<unknown>``: a user's callable object, and JAX's own HashablePartials (eager shard_map).

Found running jax's docs/parallel.md under %%jaxstages: an eager ``jax.shard_map`` call was headlined
``<unknown>`` "(a library's function)", "defined at unknown (no Python source)", its compiles folded as
"your other jitted calls", ``%jaxcache on`` listed five ``<unknown>`` functions, and ``%jaxcache freeze``
raised RetraceError for JAX's own per-primitive programs.
"""

from __future__ import annotations

import functools

import pytest

from jaxshow import _jax_compat, retrace
from shellrun import run_captured

SETUP = """
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P

class Scale:
    def __init__(self, a):
        self.a = a
    def __call__(self, x):
        return x * self.a

scale = jax.jit(Scale(2.0))
mesh = jax.make_mesh((1,), ('X',))

def _body(a, b):
    return jnp.dot(a, b) * 2

matmul = jax.shard_map(_body, mesh=mesh, in_specs=(P(), P()), out_specs=P())
x = jnp.ones((4, 4))
"""


@pytest.fixture
def shell(ip):
    retrace.registry.clear()
    assert ip.run_cell(SETUP, store_history=True).success
    yield ip
    ip.run_line_magic("jaxcache", "thaw")
    ip.run_line_magic("jaxcache", "off")


def test_unnamed_callable_source_reads_types_only():
    class Thing:
        def __call__(self, x):
            return x

        def __getattr__(self, name):  # a user object's attributes are never read
            raise AssertionError(name)

    name, file, line = _jax_compat.unnamed_callable_source(Thing())
    assert name == "Thing" and file == __file__ and line > 0
    # a partial of one: the check for a jax.vjp/linearize pullback read its '__name__' through Thing.__getattr__
    assert _jax_compat.unnamed_callable_source(functools.partial(Thing(), 1))[0] == "Thing"
    assert _jax_compat.unnamed_callable_source(object()) is None


def test_a_jitted_callable_object_is_named_by_its_class_and_is_the_users(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\nscale(x)")
    assert result.success
    report = shell.user_ns["rep"].reports[0]
    assert report.function == "Scale" and report.kind == "user"
    assert report.wrapper.defined_at is not None and report.wrapper.defined_at.line == 7
    text = cap.outputs[-1].data["text/plain"]
    assert "<unknown>" not in text and "no Python source" not in text and "a library's function" not in text


def test_a_function_made_by_exec_in_the_notebook_is_the_users(shell):
    # code made from a string has the file "<string>": it read "(a library's function)"; one made in a library's
    # own namespace (a namedtuple's or dataclass's generated methods live in their module) stays a library's
    run_captured(shell, "exec('def g(v):\\n    return v * 7')\nns = {'__name__': 'somelib'}\n"
                        "exec('def h(v):\\n    return v * 5', ns)\nh = ns['h']")
    result, cap = run_captured(shell, "%%jaxstages --all -o rep\ny = jax.jit(g)(x)\nz = jax.jit(h)(x)")
    assert result.success
    assert [(r.function, r.kind) for r in shell.user_ns["rep"].reports] == [("g", "user"), ("h", "library")]
    text = cap.outputs[-1].data["text/plain"]
    assert "g: trace" in text and "(a library's function)" in text.split("\nh: ")[1].splitlines()[0]
    assert "(a library's function)" not in text.split("\nh: ")[0]


@pytest.mark.parametrize("wrapped", ["42", "Scale(2.0)"])
def test_a_function_whose_wrapped_is_no_function_is_the_users(shell, wrapped):
    # JAX names a function by what inspect.unwrap finds, and a __wrapped__ that is no Python function (a number, a
    # callable object) read '<unknown>' "(a library's function)", 'defined at unknown (no Python source)'
    # and, under %jaxcache, 'first trace of <unknown>' defined at '<unknown>'. The function is read as far as
    # __wrapped__ holds functions: here, the cell's own.
    defined, _ = run_captured(shell, f"def wrapper(v):\n    return v * 2\nwrapper.__wrapped__ = {wrapped}")
    _, cap = run_captured(shell, "%%jaxcache\ny = jax.jit(wrapper)(x)")
    text = " ".join(cap.outputs[-1].data["text/plain"].split())
    assert f"wrapper 1 1 0 1 In[{defined.execution_count}]:1 wrapper: 1. never-seen function (first trace): first trace of wrapper " in text
    result, cap = run_captured(shell, "%%jaxstages -o rep\ny = jax.jit(wrapper)(jnp.ones(5))")
    assert result.success, result.error_in_exec
    report = shell.user_ns["rep"].reports[0]
    assert (report.function, report.kind, report.wrapper.defined_at.line) == ("wrapper", "user", 1)


def test_an_eager_shard_map_is_jaxs_own_work_not_an_unknown_library_call(shell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\nz = matmul(x, x)")
    assert result.success
    cell = shell.user_ns["rep"]
    text = cap.outputs[-1].data["text/plain"]
    assert cell.reports == () and cell.other_compiles.count == 0 and cell.helper_compiles.count == 5, text
    assert "<unknown>" not in text and "your other" not in text
    assert "no jitted call of yours" in text


def test_jaxcache_names_a_callable_object_and_skips_eager_shard_map(shell):
    run_captured(shell, "%jaxcache on")
    _, cap = run_captured(shell, "z = matmul(x, x)\ny = scale(x)")
    text = "".join(str(o.data.get("text/plain", "")) for o in cap.outputs) + cap.stdout
    ours = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("|"))  # "|": JAX's own words, quoted
    assert "<unknown>" not in ours, text
    assert "1 trace of 1 jitted function" in ours and "Scale" in ours


def test_freeze_does_not_refuse_jaxs_own_eager_shard_map_programs(shell):
    run_captured(shell, "z = matmul(x, x)")
    run_captured(shell, "%jaxcache freeze")
    result, _ = run_captured(shell, "z = matmul(jnp.ones((4, 8)), jnp.ones((8, 4)))")
    assert result.success, result.error_in_exec


LOOKED_UP = """
from functools import partial
seen = []
class Probe:
    def __getattr__(self, name):
        seen.append(name)
        raise AttributeError(name)
    def __eq__(self, other):
        if other is self:  # JAX's caches compare it with other objects only as their hashes happen to collide
            seen.append("eq")
        return self is other
    __hash__ = object.__hash__
    def __call__(self, v, n=2):
        return v * n
probe = jax.jit(Probe())
partial_probe = jax.jit(partial(Probe(), n=3))
seen.clear()
"""


@pytest.mark.parametrize("magic", ["%%jaxstages --all -o rep\n", "%%jaxcache\n"])
@pytest.mark.parametrize("jitted", ["probe", "partial_probe"])
def test_a_callable_objects_getattr_and_eq_run_as_often_as_in_a_plain_cell(shell, magic, jitted):
    # %%jaxcache read a callable object's signature and source with inspect, running its __getattr__ for '__wrapped__',
    # '__signature__', '__code__' and more and its __eq__ twice; %%jaxstages looked a hit up in JAX's caches again,
    # which compares the function with its __eq__ (a jitted MagicMock gained calls in m.mock_calls the same way).
    # A functools.partial of one still did under %%jaxcache: inspect.signature reads the partial's function.
    def run(prefix):
        assert shell.run_cell(LOOKED_UP).success
        result, _ = run_captured(shell, prefix + f"y = {jitted}(x)\ny = {jitted}(x)")
        assert result.success, result.error_in_exec
        return list(shell.user_ns["seen"])

    assert run(magic) == run("")
    if magic.startswith("%%jaxstages") and jitted == "probe":
        hit = shell.user_ns["rep"].reports[-1]
        assert (hit.function, hit.cache_hit, hit.traced) == ("Probe", True, None)
        assert hit.notes[-1] == ("its stations are not read from JAX's caches: looking them up parses the call's arguments "
                                 "again, which would run your Probe.__eq__ a second time")


def test_jaxcache_names_a_static_argument_of_a_callable_object_from_its_class(shell):
    shell.run_cell(LOOKED_UP + "probe = jax.jit(Probe(), static_argnums=1)")
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = probe(x, 2)\ny = probe(x, 3)")
    assert result.success, result.error_in_exec
    [stats] = shell.user_ns["rep"].functions
    assert [(c.where, c.now, c.before) for c in stats.misses[-1].changes] == [("n", "3", "2")]


def test_a_jitted_pullback_is_named_after_the_users_function(shell):
    """``jax.jit`` of what ``jax.linearize(f, …)`` and ``jax.vjp(f, …)`` return read ``_HashableCallableShim`` (defined
    at jax/_src/tree_util.py) and ``VJP`` (jax/_src/api.py), JAX's classes, in both magics; they read
    ``linearize(f) jvp`` and ``vjp(f) pullback``, defined where ``f`` is."""
    first = run_captured(shell, "def f(v):\n    return jnp.sin(v) * 2\n_, pb = jax.linearize(f, jnp.ones(3))\n"
                                "_, vb = jax.vjp(f, jnp.ones(3))\ng, h = jax.jit(pb), jax.jit(vb)")[0].execution_count
    run_captured(shell, "%%jaxcache -o rep\ng(jnp.ones(3)); h(jnp.ones(3))")
    rows = shell.user_ns["rep"].functions
    assert [(r.function, r.defined_at, r.misses[0].summary) for r in rows] == [
        ("linearize(f) jvp", f"In[{first}]:1", "first trace of linearize(f) jvp"),
        ("vjp(f) pullback", f"In[{first}]:1", "first trace of vjp(f) pullback")]
    _, cap = run_captured(shell, "%%jaxstages -o st --all\ng(jnp.ones(3)); h(jnp.ones(3))")
    text = cap.outputs[-1].data["text/plain"]
    assert [(r.function, r.kind, r.wrapper.defined_at.line) for r in shell.user_ns["st"].reports] == [
        ("linearize(f) jvp", "user", 1), ("vjp(f) pullback", "user", 1)]
    assert "_HashableCallableShim" not in text and "VJP" not in text and "tree_util.py" not in text


@pytest.mark.parametrize(("maker", "made"), [("vjp", "pullback"), ("linearize", "jvp function")])
def test_a_jitted_pullback_made_again_is_a_new_one_made_per_call(shell, maker, made):
    """The function ``jax.vjp(f, x)`` returns is made anew by each call of ``jax.vjp``: a cell run again, or a loop,
    traces ``jax.jit`` of it again. Its second trace read 'never-seen function (first trace): first trace of vjp(f)
    pullback', as if the cell had never run."""
    shell.run_cell("def f(v):\n    return jnp.sin(v) * 2", store_history=True)
    cell = f"%%jaxcache -o rep\n_, pb = jax.{maker}(f, jnp.ones(3))\ng = jax.jit(pb)\ny = g(jnp.ones(3))"
    run_captured(shell, cell)
    run_captured(shell, cell)
    [row] = shell.user_ns["rep"].functions
    what = f"{maker}(f) {'pullback' if maker == 'vjp' else 'jvp'}"
    assert [(m.category, m.summary) for m in row.misses] == [("redefined", (
        f"{what} is a new jax.{maker} {made}: each call of jax.{maker} makes a new function object, so JAX's cache "
        f"cannot find the earlier trace; jit a function that calls jax.{maker} and applies what it returns, which "
        "traces once"))]
    result, cap = run_captured(shell, f"%%jaxcache -o rep\nfor i in range(3):\n    _, pb = jax.{maker}(f, jnp.ones(3))\n"
                                      "    y = jax.jit(pb)(jnp.ones(3))")
    [row] = shell.user_ns["rep"].functions
    assert (row.calls, row.traced, [m.category for m in row.misses]) == (3, 3, ["redefined"])
    text = cap.outputs[0].data["text/plain"]
    assert f"    1. re-defined function (a new jax.{maker} {made}, made per call): {what}" in text
    assert f"    … 2 more function objects of {what}, each traced once as in 1.: called at In[{result.execution_count}]:4 ×2" in text
    run_captured(shell, "def f(v):\n    return jnp.cos(v) * 2")
    run_captured(shell, cell)
    [row] = shell.user_ns["rep"].functions
    assert [m.summary for m in row.misses] == [f"first trace of {what}"]
