"""A user's function that a library jits inside a function of its own: reported as the user's.

Found running equinox's examples under jaxshow (jax 0.12 and 0.10): an ``eqx.filter_jit`` function defined
in a cell was headlined "(a library's function)", "defined at …/equinox/_jit.py:43", with the static row
``(((<function make_step at 0x7ff4…>,), PyTreeDef(*)), …``, and ``%jaxcache on`` said it was defined in
equinox. Equinox jits its own ``fun_wrapped``, renamed after the user's function, which it passes in as a
static argument. Also here: static values are shown without memory addresses, and ``--diff`` and
``%jaxcache`` still tell another object with the same repr.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap

import pytest

import jaxshow

from jaxshow import _jax_compat, retrace
from jaxshow.reprs import stable_repr
from jaxshow.report import ArgChange
from shellrun import run_captured, unwrapped

LIBRARY = '''
import functools
import typing
import jax
from jax.extend.core import Primitive
from jax.interpreters import mlir


def own_jit(fun):
    """Like eqx.filter_jit: jit a function of the library's, renamed after the user's, that gets it as a static value."""
    def fun_wrapped(static, x):
        return static[1](x)
    fun_wrapped.__name__, fun_wrapped.__qualname__ = fun.__name__, fun.__qualname__
    jitted = jax.jit(fun_wrapped, static_argnums=0)
    return lambda x, extra=None: jitted((extra, fun), x)


def wraps_jit(fun):
    @functools.wraps(fun)
    def wrapper(*args):
        return fun(*args)
    return jax.jit(wrapper)


class JitWrapped:
    """Like flax's nnx.jit: an object of the library's that keeps a jax.jit of its own function and calls it."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.jitted_fn = jax.jit(functools.wraps(fun)(lambda *args: fun(*args)))

    def __call__(self, *args):
        return self.jitted_fn(*args)


class JitFn:
    """Like flax's JitFn: the function nnx.jit's jax.jit traces is an object of the library's around the user's."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.f = fun

    def __call__(self, *args):
        return self.f(*args)


class ObjectJitWrapped:
    """Like flax's nnx.jit: an object of the library's that keeps a jax.jit of a JitFn."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.jitted_fn = jax.jit(JitFn(fun))

    def __call__(self, *args):
        return self.jitted_fn(*args)


def cached_partial(f, *cached):
    """Like flax's nnx.cached_partial: a functools.wraps function of the library's that calls f with cached arguments first."""
    @functools.wraps(f)
    def cache_args_wrapper(*args):
        return f(*cached, *args)
    return cache_args_wrapper


def checked(fn, x):
    """Like flax linen's Scope.param: check a shape with jax.eval_shape of a lambda made per call, then run eagerly."""
    jax.eval_shape(lambda: fn(x))
    return fn(x)


@jax.jit
def _step(x):
    return x * 0.5


def loop3(x):
    """Like jaxopt's solver.run: a Python loop in the library over a jitted step, whose cache hits no hook sees."""
    for _ in range(3):
        x = _step(x)
    return x


@functools.partial(jax.jit, static_argnums=1)
def _scaled(x, factor):
    return x * factor


class Wrapper:
    """Like equinox's _JitWrapper, which lineax's linear_solve is: an object that names itself after the function it wraps."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn

    def __call__(self, x, i):
        return self.fn(x, i)


def solve(x, i):
    return _scaled(x, i % 3 + 1)


solve = Wrapper(solve)


def nested(x):
    """Like diffrax's diffeqsolve under equinox: a jitted function of the library's that traces more of its own inside."""
    return jax.jit(lambda v: jax.jit(lambda w: w + 1)(v) * 2)(x)


@functools.partial(jax.jit, static_argnums=0)
def apply(fn, x):
    """A library's own jitted function that takes a user's function: stays the library's."""
    return fn(x)


def _shape_checked(x):
    """Like lineax's structure_equal, which equinox's primitives run while JAX lowers them: a jax.eval_shape of a lambda."""
    jax.eval_shape(lambda: x)
    return x * 2


doubled_p = Primitive("fakelib_doubled")
doubled_p.def_impl(_shape_checked)
doubled_p.def_abstract_eval(lambda x: x)
mlir.register_lowering(doubled_p, mlir.lower_fun(_shape_checked, multiple_results=False))


def doubled(x):
    return doubled_p.bind(x)


def halve(x):
    return x / 2


@functools.partial(jax.jit, static_argnums=0)
def _loop(body, x):
    return body(x)


def run(x):
    """Like numpyro's fori_collect (MCMC.run): a jitted function of the library's, passed a body it makes anew per run."""
    def body(v):
        return v + 1
    return _loop(body, x)


def looped(x):
    """Like blackjax's window_adaptation.run: an eager jax.lax.scan whose body calls the library's own jitted function."""
    step = jax.jit(lambda w: w + 1)
    return jax.lax.scan(lambda c, _: (step(c), None), x, None, length=2)[0]


class Transformed(typing.NamedTuple):
    apply: object


def transform(fn):
    """Like haiku's hk.transform: a function of the library's made per user function, which closes over it, kept in a
    named tuple that the next layer (hk.without_apply_rng) closes over in turn."""
    def inner_apply(params, x):
        return fn(x) * params
    inner = Transformed(inner_apply)

    def apply_fn(params, x):
        return inner.apply(params, x)
    return Transformed(apply_fn)


class Linear:
    """Like flax's nnx.Linear: a callable object of the library's, which the user jits (``jax.jit(linear)``)."""

    def __call__(self, x):
        return x * 3
'''

SETUP = """\
import jax, jax.numpy as jnp
import fakelib
x = jnp.ones(3)
"""


@pytest.fixture
def shell(ip, tmp_path):
    folder = tmp_path / "site-packages"  # installed code, as is_user_file tells it
    folder.mkdir()
    (folder / "fakelib.py").write_text(LIBRARY)
    sys.path.insert(0, str(folder))
    retrace.registry.clear()
    assert ip.run_cell(SETUP, store_history=True).success  # In[1]
    yield ip
    ip.run_line_magic("jaxcache", "off")
    sys.path.remove(str(folder))
    sys.modules.pop("fakelib", None)


def _define(shell, code):
    result = shell.run_cell(textwrap.dedent(code), store_history=True)
    assert result.success
    return result.execution_count


def _report(shell, cell):
    result, cap = run_captured(shell, "%%jaxstages -o rep\n" + cell)
    assert result.success, cap.stderr
    return shell.user_ns["rep"], cap.outputs[-1].data["text/plain"]


def _row(text, label):
    return next(line.strip() for line in text.splitlines() if line.strip().startswith(label))


def test_a_function_a_library_jits_inside_its_own_is_the_users(shell):
    n = _define(shell, """
        @fakelib.own_jit
        def step(x):
            return x * 2
    """)
    cell, text = _report(shell, "y = step(x)")
    report = cell.reports[0]
    assert (report.function, report.kind, str(report.wrapper.defined_at)) == ("step", "user", f"In[{n}]:1 (step)")
    assert _row(text, "defined at") == f"defined at       In[{n}]:1 (step)"
    assert _row(text, "static static") == "static static    (None, <function step>)"
    assert "a library's function" not in text


def test_the_jit_options_of_a_librarys_own_function_are_said_to_be_the_librarys(shell):
    """diffrax's steady-state example: ``@eqx.filter_jit def make_step(model, opt_state, target)`` read ``wrapper jax.jit``,
    ``static_argnums (2,)``, ``donate_argnums (0,)`` under ``function make_step``: as if target were static and model
    donated. They number the arguments of equinox's own function (``dynamic_donate``, ``dynamic_nodonate``, ``static``)."""
    _define(shell, """
        @fakelib.own_jit
        def step(x):
            return x * 2
    """)
    cell, text = _report(shell, "y = step(x)")
    assert cell.reports[0].wrapper.kind == "jax.jit of fakelib's own function around step: the options below are fakelib's, not step's"
    assert ("    wrapper          jax.jit of fakelib's own function around step: the options below are fakelib's,\n"
            "                     not step's\n") in text
    assert _row(text, "static_argnums") == "static_argnums   (0,)"
    cell, text = _report(shell, "y = fakelib.JitWrapped(lambda v: v + 1)(x)")
    assert cell.reports[0].wrapper.kind == "jax.jit"


def test_a_functools_wraps_wrapper_is_the_users_too(shell):
    n = _define(shell, """
        @fakelib.wraps_jit
        def double(x):
            return x * 2
    """)
    cell, text = _report(shell, "y = double(x)")
    report = cell.reports[0]
    assert (report.function, report.kind, str(report.wrapper.defined_at)) == ("double", "user", f"In[{n}]:1 (double)")


def test_a_librarys_own_jitted_function_stays_the_librarys(shell):
    _define(shell, "def inc(v):\n    return v + 1\n")
    cell, text = _report(shell, "y = fakelib.apply(inc, x)")
    report = cell.reports[0]
    assert (report.function, report.kind) == ("apply", "library")
    assert report.wrapper.defined_at.file.endswith("site-packages/fakelib.py")
    assert report.wrapper.static_args == (("fn", "<function inc>"),)


def test_a_librarys_own_shape_check_is_not_the_cells_call(shell):
    # flax linen's model.apply(variables, x) calls jax.eval_shape(lambda: init_fn(...)) for every parameter: a cell
    # that ran the model eagerly was headlined "<lambda>: trace 366 µs (a library's function) … traced by
    # jax.eval_shape, not called", a call of flax's the cell never made, instead of saying it made no jitted call.
    _define(shell, "def double(v):\n    return v * 2\n")
    cell, text = _report(shell, "y = fakelib.checked(double, x)")
    assert cell.reports == ()
    assert cell.notes[0].startswith("no jitted call of yours seen in this cell; the cell ran normally") and "<lambda>" not in text
    n = _define(shell, "step = jax.jit(double)\n")
    cell, text = _report(shell, "y = step(x)\nz = fakelib.checked(double, x)")
    assert [r.function for r in cell.reports] == ["double"] and "also called" not in text
    cell, text = _report(shell, "import functools\ns = jax.eval_shape(functools.partial(fakelib.checked, double), x)")  # the cell's own eval_shape stays shown
    assert [(r.function, r.kind) for r in cell.reports] == [("checked", "library")]


def test_jaxcache_leaves_a_librarys_own_shape_checks_out(shell):
    # A flax TrainState step (state.apply_fn inside the user's jitted train_step) re-traced: %jaxcache listed four
    # 'Scope.param.<locals>.<lambda>' rows above train_step, in its title ('5 traces of 5 jitted functions'), each
    # a 're-defined function (re-run cell or definition in a loop)' with a 40-line jaxpr diff: flax's jax.eval_shape
    # shape check of every parameter, a lambda per call, which the user neither wrote nor jitted.
    n = _define(shell, """
        @jax.jit
        def step(v):
            return fakelib.checked(jnp.sin, v)
    """)
    run_captured(shell, "y = step(x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\nfor i in range(2):\n    y = fakelib.checked(jnp.cos, x)\ny = step(jnp.ones(4))")
    report = shell.user_ns["rep"]
    assert [(f.function, f.traced) for f in report.functions] == [("step", 1)]
    text = cap.outputs[-1].data["text/plain"]
    assert text.splitlines()[0] == "%jaxcache — 1 trace of 1 jitted function"
    assert ("libraries traced 3 functions of their own with jax.eval_shape, jax.make_jaxpr or .trace() (3 fakelib), "
            "which compile nothing (flax linen and equinox check shapes so); not shown") in report.notes


def test_calls_a_library_serves_from_jaxs_cache_are_said_and_counted(shell):
    # flax's nnx.jit: after the first call, a cell running train_step(model, opt, x, y) in a loop said "no jitted call
    # of yours in this cell" (JAX serves it from its cache inside flax, where no hook is reached); --name train_step
    # said "train_step is a JitWrapped, not a jax.jit wrapper: JAX has no stages to show for it. Wrap it with
    # jax.jit", and jaxshow.stages(train_step, ...) "train_step is not jitted".
    n = _define(shell, """
        @fakelib.JitWrapped
        def train_step(v):
            return v * 3
    """)
    cell, text = _report(shell, "y = train_step(x)")
    assert [(r.function, r.kind, str(r.call_site)) for r in cell.reports] == [("train_step", "user", f"In[{n + 1}]:2 (<module>)")]
    cell, text = _report(shell, "for _ in range(3):\n    y = train_step(x)")
    assert cell.reports == () and cell.notes == (
        "train_step (fakelib's JitWrapped) was called 3 times in this cell, each served from JAX's cache inside fakelib, "
        "where jaxshow cannot see a call: no stages to show (a call that traces, the first or one after a change, shows them)",)
    cell, text = _report(shell, "y = train_step(jnp.ones(5))\ny = train_step(jnp.ones(5))\ny = train_step(x)")
    assert [r.function for r in cell.reports] == ["train_step"] and cell.notes == (
        "train_step (fakelib's JitWrapped): 2 more calls in this cell were served from JAX's cache inside fakelib, "
        "where jaxshow cannot see a call",)
    assert not any(n.startswith("called ") for n in cell.reports[0].notes), "the cell's note counts them"
    result, cap = run_captured(shell, "%%jaxstages -n train_step -o rep\ny = train_step(x)")
    assert shell.user_ns["rep"].notes == (
        "train_step (fakelib's JitWrapped) was called 1 time in this cell, served from JAX's cache inside fakelib, "
        "where jaxshow cannot see a call: no stages to show (a call that traces, the first or one after a change, shows them)",)
    result, cap = run_captured(shell, "%%jaxstages -n train_step -o rep\ny = train_step(jnp.ones(6))")
    assert [r.function for r in shell.user_ns["rep"].reports] == ["train_step"]
    report = jaxshow.stages(shell.user_ns["train_step"], shell.user_ns["jnp"].ones(7))
    assert report.notes[0] == ("train_step is jitted inside fakelib (a JitWrapped): jaxshow wrapped it in jax.jit to show what JAX "
                               "does with it; fakelib's own jit is the inner jit of the jaxpr")


def test_a_librarys_wraps_partial_of_its_jit_is_a_call_of_the_users_function(shell):
    # flax's nnx.cached_partial(train_step, model, optimizer), called in a loop, was invisible: %%jaxstages said "no
    # jitted call of yours in this cell" and %%jaxcache "no jitted function of yours was called or traced" (the cell
    # calls flax's cache_args_wrapper, a plain function); and %%jaxcache named an nnx.jit function whose trace it never
    # saw by flax's class, "JitFn", defined at "—"
    n = _define(shell, """
        @fakelib.ObjectJitWrapped
        def train_step(scale, v):
            return v * scale
        y = train_step(2.0, x)
        cached = fakelib.cached_partial(train_step, 2.0)
    """)
    cell, text = _report(shell, "for _ in range(3):\n    y = cached(x)")
    assert cell.reports == () and cell.notes == (
        "train_step (fakelib's ObjectJitWrapped) was called 3 times in this cell, each served from JAX's cache inside "
        "fakelib, where jaxshow cannot see a call: no stages to show (a call that traces, the first or one after a change, "
        "shows them)",)
    cell, text = _report(shell, "y = cached(jnp.ones(5))\ny = cached(jnp.ones(5))")
    assert [(r.function, str(r.call_site)) for r in cell.reports] == [("train_step", f"In[{n + 2}]:2 (<module>)")]
    assert cell.notes == ("train_step (fakelib's ObjectJitWrapped): 1 more call in this cell was served from JAX's cache "
                          "inside fakelib, where jaxshow cannot see a call",)
    result, cap = run_captured(shell, "%%jaxcache -o rep\nfor _ in range(3):\n    y = cached(x)")
    assert result.success, result.error_in_exec
    assert [(s.function, s.qualname, s.defined_at, s.calls, s.traced, s.hits) for s in shell.user_ns["rep"].functions] == [
        ("train_step", "train_step", f"In[{n}]:1", 3, 0, 3)]


def test_a_librarys_calls_not_shown_are_not_called_yours(shell):
    # nnx.display(model): treescope jits _truncate_part_with_slices once per array shape; the cell line read
    # "… + your other calls 91.8 ms" and "(1 compile of your other jitted calls …: _truncate_part_with_slices)".
    _define(shell, "def inc(v):\n    return v + 1\n")
    cell, text = _report(shell, "y = fakelib.apply(inc, jnp.ones(9))\nz = fakelib.apply(inc, jnp.ones(10))")
    assert [r.function for r in cell.reports] == ["apply"] and cell.other_compiles.names == ("apply",)
    assert "(1 compile of other jitted calls (--all shows them) folded away: apply)" in text
    assert " + other calls " in " ".join(" ".join(text.splitlines()[:2]).split()) and "your other" not in text


def test_jax_numpy_helpers_stay_jaxs_own(shell):
    # an argument type no other test gives jnp.sin, so its compile is this cell's in any test order
    _define(shell, "import numpy as np\nodd = np.zeros((7, 11), np.float32)")
    cell, text = _report(shell, "y = jnp.sin(odd)")
    assert cell.reports == () and cell.helper_compiles.names == ("sin",)
    assert text.splitlines()[1] == "(1 compile of JAX's own helpers folded away: sin)"


CHECKIFY = """
    from jax.experimental import checkify
    def div(a, b):
        checkify.check(b != 0, 'b is zero')
        return a / b
"""


def test_a_closure_jax_makes_around_the_users_function_is_the_users(shell):
    """``jax.jit(checkify.checkify(div))`` jits checkify's ``checked_fun`` (JAX's closure, in JAX's files):
    the report said "no jitted call of yours in this cell … JAX compiled its own checked_fun (eager
    jax.numpy operations)". Then it was headed ``div``, its ① function row ``checkify.<locals>.checked_fun``,
    where ``%jaxcache`` says ``checkify(div)``: both are ``checkify(div)`` now."""
    n = _define(shell, CHECKIFY)
    cell, text = _report(shell, "err, out = jax.jit(checkify.checkify(div))(1., 2.)")
    (report,) = cell.reports
    assert (report.function, report.kind, str(report.wrapper.defined_at)) == ("checkify(div)", "user", f"In[{n}]:2 (div)")
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("checkify(div): trace "))
    assert lines[head].endswith(f" (called at In[{n + 1}]:2)")
    assert lines[head + 1] == "  note: JAX names it checked_fun: JAX's wrapper around div (jax/_src/checkify.py)"
    assert _row(text, "function ") == "function         checkify(div)"
    assert cell.helper_compiles.names == ()
    # JAX's own function in a jit the user made: the user's call, named as %jaxcache names it (jnp.sin is a jit itself)
    cell, _ = _report(shell, "y = jax.jit(jnp.sin)(x)")
    assert [r.function for r in cell.reports] == ["jit(sin)"] and cell.helper_compiles.names == ()


def test_jaxcache_sees_the_trace_of_a_closure_jax_makes_around_the_users_function(shell):
    """``%%jaxcache`` said "no cache miss: every jitted call hit the cache" (traced 0, hits 1) for a cell
    whose ``jax.jit(checkify.checkify(div))`` traced and compiled, and listed checked_fun as defined in
    JAX's checkify.py."""
    n = _define(shell, CHECKIFY)
    cell = "err, out = jax.jit(checkify.checkify(div))(1., 2.)"
    result, cap = run_captured(shell, "%%jaxcache -o first\n" + cell)
    assert result.success, result.error_in_exec
    (stats,) = shell.user_ns["first"].functions
    assert (stats.function, stats.defined_at, stats.calls, stats.traced, stats.hits) == ("div", f"In[{n}]:2", 1, 1, 0)
    result, cap = run_captured(shell, "%%jaxcache -o again\n" + cell)
    (miss,) = shell.user_ns["again"].functions[0].misses
    assert (miss.category, miss.summary) == ("redefined", "checkify(div) is a new checkify.checkify wrapper: each call of checkify.checkify "
                                             "makes a new function object, so JAX's cache cannot find the earlier trace; "
                                             "make it once, outside the loop or cell")
    text = " ".join(cap.outputs[0].data["text/plain"].split())
    assert " 1. re-defined function (a new checkify.checkify wrapper, made per call): checkify(div) is a new checkify.checkify " in text


@pytest.mark.parametrize("magic", ["%%jaxcache -o rep\n", ""])
def test_jaxcache_leaves_out_checkifys_own_trace_of_a_jitted_functions_jaxpr(shell, magic):
    """``checkify.checkify(jdiv)(1., 2.)`` of a jitted ``div`` traces ``div``, then checkify traces a function of its own
    over div's jaxpr, with div's debug info (jax >= 0.9): ``%%jaxcache`` read '2 traces of 2 jitted functions' with the
    row ``jaxpr_to_checkify_jaxpr.<locals>.fun_wrapped`` defined at ``…/jax/_src/checkify.py:744``."""
    n = _define(shell, CHECKIFY + "    jdiv = jax.jit(div)\n")
    if not magic:
        assert run_captured(shell, "%jaxcache on")[0].success
    result, cap = run_captured(shell, magic + "err, out = checkify.checkify(jdiv)(1., 2.)")
    assert result.success, result.error_in_exec
    text = cap.outputs[-1].data["text/plain"]
    assert text.startswith("%jaxcache — 1 trace of 1 jitted function\n") and "fun_wrapped" not in text
    assert [row.split()[0] for row in text.splitlines()[3:4]] == ["div"] and f" In[{n}]:2\n" in text
    if not magic:
        assert run_captured(shell, "%jaxcache off")[0].success


def test_jaxcache_leaves_jaxs_own_functions_out_instead_of_calling_their_traces_hits(shell):
    """A ``%%jaxcache`` cell whose eager ``jnp.cos`` traced and compiled for the first time said "no cache
    miss: every jitted call hit the cache" with a row ``cos 1 call, 0 traced, 1 hit``, defined in JAX's
    ufuncs.py, above a persistent-cache table listing ``jit_cos`` as compiled."""
    _define(shell, "f = jax.jit(lambda v: v * 2)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = jnp.cos(x)\ny = jax.jit(jnp.tan)(x)\nz = f(x)\nz = f(x)")
    assert result.success, result.error_in_exec
    # eager jnp.cos is left out; jnp.tan in a jax.jit the cell made is the user's
    assert [(s.function, s.calls, s.traced, s.hits) for s in shell.user_ns["rep"].functions] == [("tan", 1, 1, 0), ("<lambda>", 2, 1, 1)]
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = jnp.expm1(x)")
    assert cap.outputs[0].data["text/plain"].splitlines() == [
        "%jaxcache — no jitted function of yours was traced, nor called by the cell's top-level code",
        "  note: JAX also compiled 1 of its own helper functions (eager jax.numpy operations); not shown",
    ]


def test_jaxcache_names_a_custom_jvp_function_that_hit_by_its_own_name(shell):
    """A ``jax.custom_jvp`` function that hit the cache read ``custom_jvp``, defined at ``—`` (its type's name)."""
    n = _define(shell, """
        @jax.custom_jvp
        def cj(v):
            return jnp.sin(v)
        cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0]))
        y = jax.jit(cj)(x)
    """)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = jax.jit(cj)(x)")
    assert result.success, result.error_in_exec
    (stats,) = shell.user_ns["rep"].functions
    assert (stats.function, stats.defined_at, stats.calls, stats.traced, stats.hits) == ("cj", f"In[{n}]:1", 1, 0, 1)


def test_hostile_static_values_are_never_read(shell):
    n = _define(shell, """
        class Hostile:
            def __getattr__(self, name):
                raise RuntimeError(name)
            def __repr__(self):
                raise RuntimeError("repr")
            def __eq__(self, other):
                return self is other
            def __hash__(self):
                return 7

        @fakelib.own_jit
        def step(x):
            return x * 2
        hostile = Hostile()
    """)
    cell, text = _report(shell, "y = step(x, hostile)")
    report = cell.reports[0]
    assert (report.kind, str(report.wrapper.defined_at)) == ("user", f"In[{n}]:11 (step)")
    assert report.wrapper.static_args == (("static", "(<Hostile object; its repr not run>, <function step>)"),)


def test_jaxcache_names_the_users_definition(shell):
    n = _define(shell, """
        @fakelib.own_jit
        def step(x):
            return x * 2
    """)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = step(x)\ny = step(jnp.ones(4))")
    assert result.success
    (stats,) = shell.user_ns["rep"].functions
    assert (stats.function, stats.defined_at, stats.traced) == ("step", f"In[{n}]:1", 2)
    assert [m.category for m in stats.misses] == ["never_seen", "input_types"]


def test_jaxcache_counts_the_calls_of_a_library_object_that_jits_inside(shell):
    """flax's ``nnx.jit`` and ``eqx.filter_jit`` return an object of the library's that calls a ``jax.jit`` of its own.
    ``%%jaxcache`` counted none of the cell's calls of it: the row read ``calls —, hits —, cache entries —``, and a
    loop whose calls all hit said "no jitted function of yours was called or traced" (``%%jaxstages`` counted them)."""
    n = _define(shell, """
        @fakelib.JitWrapped
        def train_step(v):
            return v * 3
    """)
    rows = []
    for cell in ("y = train_step(x)", "for _ in range(3):\n    y = train_step(x)", "y = train_step(jnp.ones(4))\ny = train_step(x)"):
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
        assert result.success, result.error_in_exec
        rows += [(s.function, s.defined_at, s.calls, s.traced, s.hits, s.cache_size) for s in shell.user_ns["rep"].functions]
    assert rows == [("train_step", f"In[{n}]:1", 1, 1, 0, 1), ("train_step", f"In[{n}]:1", 3, 0, 3, 1),
                    ("train_step", f"In[{n}]:1", 2, 1, 1, 2)]
    assert cap.outputs[0].data["text/plain"].splitlines()[2:4] == [
        "  ----------  -----  ------  ----  -------------  ----------",
        f"  train_step  2      1       1     2              In[{n}]:1",
    ]


def test_jaxs_same_line_hint_is_no_redefinition_where_the_line_is_a_librarys(shell):
    """flax's mnist tutorial: eval_step's first trace, called at its own cell line after train_step's, read "JAX: another
    function was traced for the first time from this same call site before (a loop over functions, or an earlier
    definition of this one …)": JAX's call site of every ``nnx.jit`` function is the one line in flax that calls it."""
    _define(shell, """
        @fakelib.JitWrapped
        def train_step(v):
            return v * 3

        @fakelib.JitWrapped
        def eval_step(v):
            return v + 1
    """)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = train_step(x)\nz = eval_step(x)")
    assert result.success, result.error_in_exec
    assert [(f.function, [(m.category, m.same_line_hint) for m in f.misses]) for f in shell.user_ns["rep"].functions] == [
        ("train_step", [("never_seen", False)]), ("eval_step", [("never_seen", False)])]
    text = cap.outputs[0].data["text/plain"]
    assert "from this same call site" not in text
    assert re.sub(r"\n {11}", " ", text).count("(JAX's same-line hint compares call sites, and this one is a line of fakelib's, which calls every "
                      "function it jits from there: here it is no sign of a re-definition)") == 1


def test_jaxcache_leaves_out_a_librarys_shape_check_made_while_jax_lowers_a_call(shell):
    """diffrax's stiff ODE example: a jitted ``main`` solving with Kvaerno5 listed two rows
    ``structure_equal.<locals>.<lambda>  —  1  —  —  …/lineax/_misc.py:101`` (and :102), "never-seen function", beside
    ``main``: lineax's ``jax.eval_shape(lambda: x)``, run while JAX lowered equinox's linear-solve primitive, after the
    trace. Such a trace of a library's own is counted in the note, as during a trace."""
    _define(shell, "f = jax.jit(lambda v: fakelib.doubled(v) + 1)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = f(x)")
    assert result.success, result.error_in_exec
    report = shell.user_ns["rep"]
    assert [(s.function, s.traced) for s in report.functions] == [("<lambda>", 1)]
    assert ("libraries traced 1 function of their own with jax.eval_shape, jax.make_jaxpr or .trace() (1 fakelib), "
            "which compile nothing (flax linen and equinox check shapes so); not shown") in report.notes
    result, cap = run_captured(shell, "%jaxcache on\ny = f(jnp.ones(5))")
    text = cap.outputs[-1].data["text/plain"]
    assert text.splitlines()[0] == "%jaxcache — 1 trace of 1 jitted function" and "_shape_checked" not in text


def test_stable_repr_leaves_addresses_out_and_returns_them():
    def local(v):
        return v

    class Thing:
        def method(self):
            return None

    text, addresses = stable_repr((local, lambda v: v, Thing(), Thing().method, len), 500)
    assert text == ("(<function test_stable_repr_leaves_addresses_out_and_returns_them.<locals>.local>, "
                    "<function test_stable_repr_leaves_addresses_out_and_returns_them.<locals>.<lambda>>, "
                    "<test_wrapped_functions.test_stable_repr_leaves_addresses_out_and_returns_them.<locals>.Thing object>, "
                    "<bound method test_stable_repr_leaves_addresses_out_and_returns_them.<locals>.Thing.method of "
                    "<test_wrapped_functions.test_stable_repr_leaves_addresses_out_and_returns_them.<locals>.Thing object>>, "
                    "<built-in function len>)")
    assert len(addresses) == 4 and all(a.startswith("0x") for a in addresses)
    assert stable_repr("text at 0x12", 500) == ("'text at 0x12'", ())


def test_diff_tells_another_object_with_the_same_repr(shell):
    _define(shell, "def inc(v):\n    return v + 1\n")
    run_captured(shell, "%%jaxstages\ny = fakelib.apply(inc, x)")
    _define(shell, "def inc(v):\n    return v + 1\n")
    result, cap = run_captured(shell, "%%jaxstages --diff -o rep\ny = fakelib.apply(inc, x)")
    assert result.success
    (diff,) = shell.user_ns["rep"].diffs
    assert diff.key_changes == (ArgChange("static fn", "<function inc> (another object)", "<function inc>"),)
    result, cap = run_captured(shell, "%%jaxstages --diff -o rep\ny = fakelib.apply(inc, jnp.ones(4))")
    (diff,) = shell.user_ns["rep"].diffs
    assert [c.where for c in diff.key_changes] == ["x"]  # the argument's type; the static function is the same object


def test_jaxcache_tells_another_object_with_the_same_repr(shell):
    _define(shell, "def inc(v):\n    return v + 1\n")
    run_captured(shell, "%jaxcache on")
    run_captured(shell, "y = fakelib.apply(inc, x)")
    _define(shell, "def inc(v):\n    return v + 1\n")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = fakelib.apply(inc, x)")
    (stats,) = shell.user_ns["rep"].functions
    assert stats.misses[-1].summary == ("fn: now <function inc> (another object), before <function inc> "
                                        "(made anew: make it once, outside the loop or the model's constructor)")


def test_saved_report_has_no_addresses(shell, tmp_path):
    _define(shell, "def inc(v):\n    return v + 1\n")
    result, _ = run_captured(shell, f"%%jaxstages --save {tmp_path / 'out'}\ny = fakelib.apply(inc, x)")
    assert result.success
    saved = json.loads((tmp_path / "out" / "apply.json").read_text())
    assert saved["wrapper"]["static_args"] == [["fn", "<function inc>"]] and "static_objects" not in saved["wrapper"]


def test_eqx_filter_jit_is_reported_as_the_users_function(shell):
    pytest.importorskip("equinox")
    shell.run_cell("import equinox as eqx", store_history=True)
    n = _define(shell, """
        @eqx.filter_jit
        def make_step(model, x, n=3):
            return model * x + n
    """)
    cell, text = _report(shell, "y = jnp.sin(x)\nz = make_step(x, x)")
    report = cell.reports[0]
    assert (report.function, report.kind, str(report.wrapper.defined_at)) == ("make_step", "user", f"In[{n}]:1 (make_step)")
    headline = _row(text, "make_step: ")
    assert headline.endswith(f"(called at In[{n + 1}]:3)") and "library" not in headline
    assert _row(text, "defined at") == f"defined at       In[{n}]:1 (make_step)"
    # equinox's one static value holds make_step itself and no argument of the call's: no static row
    assert [line for line in text.splitlines() if line.strip().startswith("static ")] == []
    cell, text = _report(shell, "def other(v):\n    return v\nw = jax.jit(other)(x)\nz = make_step(x, x, 4)\nw = jax.jit(other)(x)")
    assert [r.function for r in cell.reports] == ["other"]
    result, cap = run_captured(shell, "%%jaxstages -n make_step -o rep\nw = jax.jit(other)(x)\nz = make_step(x, x, 5)")
    assert [(r.function, r.kind) for r in shell.user_ns["rep"].reports] == [("make_step", "user")]


def test_eqx_filter_jit_history_names_the_users_definition(shell):
    pytest.importorskip("equinox")
    shell.run_cell("import equinox as eqx", store_history=True)
    n = _define(shell, """
        @eqx.filter_jit
        def make_step(model, x, n=3):
            return model * x + n
    """)
    run_captured(shell, "%jaxcache on")
    result, cap = run_captured(shell, "z = make_step(x, x)")
    text = cap.outputs[-1].data["text/plain"]
    assert _row(text, "make_step  ") == f"make_step  —      1       —     —              In[{n}]:1"
    result, cap = run_captured(shell, "%%jaxcache -o rep\nz = make_step(x, jnp.ones(4))")
    (stats,) = shell.user_ns["rep"].functions
    assert (stats.function, stats.defined_at) == ("make_step", f"In[{n}]:1")


def test_eqx_filter_jit_retrace_over_a_new_function_in_the_model_names_that_function(shell):
    """equinox's static tuple (the function, then the model's non-array leaves and treedef) changed only in the
    address of the model's activation, a lambda made anew with the model: the miss quoted the whole tuple twice."""
    pytest.importorskip("equinox")
    shell.run_cell("import equinox as eqx", store_history=True)
    _define(shell, """
        @eqx.filter_jit
        def loss(model, v):
            return jnp.sum(model(v))
    """)
    make = "model = eqx.nn.MLP(3, 1, 4, 1, activation=lambda v: jnp.maximum(v, 0), key=jax.random.key(0))\n"
    for cell in (make + "y = loss(model, x)", "%%jaxcache -o rep\n" + make + "y = loss(model, x)"):
        result, cap = run_captured(shell, cell)
        assert result.success, cap.stderr
    (stats,) = shell.user_ns["rep"].functions
    (miss,) = stats.misses
    assert (miss.category, miss.changes) == ("static_args", (ArgChange("model.activation", "<function <lambda>> (another object)",
                                                                       "<function <lambda>>"),))
    assert ("1. different static arguments: model.activation: now <function <lambda>> (another object), before "
            "<function <lambda>> (made anew: make it once, outside the loop or the model's constructor) called at"
            ) in unwrapped(cap.outputs[-1].data["text/plain"])


def test_jax_grad_of_a_library_jitted_function_is_the_users_compiled_program(shell):
    # diffrax under eqx.filter_jit: jax.grad(loss)(y0, args) was headlined by loss's trace ("reached inside jax.grad",
    # nothing lowered or compiled), while the two programs JAX compiled for the derivative were '(a library's
    # function)', defined at equinox/_jit.py:43, and folded as 'other jitted calls'
    n = _define(shell, """
        @fakelib.own_jit
        def loss(x):
            return (x ** 2).sum()
    """)
    cell, text = _report(shell, "g = jax.grad(loss)(x)")
    [report] = cell.reports
    assert (report.function, report.kind, str(report.wrapper.defined_at)) == ("loss", "user", f"In[{n}]:1 (loss)")
    assert report.stations_reached == ("traced", "lowered", "compiled")
    assert "a library's function" not in text
    assert "of other jitted calls" not in text  # the derivative's other program is folded as the user's
    # a library's jitted function traced in an eager scan's body compiled nothing of its own: no other call's seconds;
    # the derivative's other program is loss's
    cell, text = _report(shell, "g = jax.grad(loss)(jnp.ones(5))\n"
                                "c, _ = jax.lax.scan(lambda c, k: (fakelib.apply(jnp.sin, c), k), x, jnp.arange(2.0))")
    assert cell.reports[0].function == "loss"
    assert cell.more_programs.names == ("loss",) and " + more programs for loss " in " ".join(text.split())
    if _jax_compat.JAX_VERSION >= (0, 10):  # before, JAX times apply's trace in the scan's body: a library's seconds
        assert cell.other_compiles.count == 0 and "other calls" not in text


def test_a_library_function_another_library_jits_is_defined_where_it_is(shell, tmp_path):
    # diffrax's diffeqsolve is an eqx.filter_jit function: it read 'defined at …/equinox/_jit.py:43 (diffeqsolve)',
    # equinox's wrapper, in %%jaxstages and %jaxcache alike
    solver = tmp_path / "site-packages" / "fakesolver.py"
    solver.write_text("import fakelib\n\n\n@fakelib.own_jit\ndef solve(x):\n    return x * 3\n")
    try:
        _define(shell, "import fakesolver")
        cell, text = _report(shell, "y = fakesolver.solve(x)")
        [report] = cell.reports
        assert (report.function, report.kind, str(report.wrapper.defined_at)) == ("solve", "library", f"{solver}:4 (solve)")
        result, _ = run_captured(shell, "%%jaxcache -o rep\ny = fakesolver.solve(jnp.ones(7))")
        [stats] = shell.user_ns["rep"].functions
        assert stats.defined_at == f"{solver}:4"
    finally:
        sys.modules.pop("fakesolver", None)


def test_a_librarys_jitted_function_the_user_calls_is_not_blamed_on_the_library(shell, tmp_path):
    # diffrax.diffeqsolve (an eqx.filter_jit function) called with y0 of another shape read 'a library re-traced:
    # In[1]:4 called diffrax._integrate.diffeqsolve (…/equinox/_jit.py:209), which passed y0 differently to
    # diffeqsolve': the user's line passed y0, through the library's jit wrapper
    solver = tmp_path / "site-packages" / "fakeintegrate.py"
    solver.write_text("import fakelib\n\n\n@fakelib.JitWrapped\ndef integrate(y0):\n    return y0 * 3\n")
    try:
        _define(shell, "import fakeintegrate")
        run_captured(shell, "y = fakeintegrate.integrate(x)")
        result, _ = run_captured(shell, "%%jaxcache -o rep\ny = fakeintegrate.integrate(jnp.ones(7))")
        [stats] = shell.user_ns["rep"].functions
        [miss] = stats.misses
        assert (stats.function, miss.category, miss.summary) == ("integrate", "input_types", "y0: now f32[7], before f32[3]")
        assert miss.blame is None and miss.call_site == f"In[{result.execution_count}]:2"
        assert "a library re-traced" not in str(shell.user_ns["rep"])
    finally:
        sys.modules.pop("fakeintegrate", None)


def test_jaxcache_counts_a_librarys_traces_inside_another_trace_in_one_note(shell):
    # %%jaxcache over one diffrax.diffeqsolve call listed '84 traces of 81 jitted functions', equinox's and diffrax's
    # internal lambdas traced inside diffeqsolve's trace, each a 're-defined function', in 300 KB of text
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = fakelib.nested(x)\ny = fakelib.nested(x)")
    assert result.success
    rep = shell.user_ns["rep"]
    assert sum(f.traced for f in rep.functions) == 2, [f.function for f in rep.functions]  # the two outer lambdas
    assert ("2 traces of libraries' own jitted functions made inside the traces above (2 fakelib): part of those "
            "traces and compiled with them; not shown") in rep.notes
    _define(shell, "@jax.jit\ndef step(v):\n    return fakelib.apply(jnp.sin, v)")
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = step(x)")
    rep = shell.user_ns["rep"]
    assert [f.function for f in rep.functions] == ["step"]
    assert any(n.startswith("1 trace of libraries' own jitted functions made inside the traces above (1 fakelib)") for n in rep.notes)


def test_a_users_function_a_library_jits_recursing_is_explained_as_its_own_traces(shell):
    # an eqx.filter_jit function calling itself (pw(x, n - 1)) read '1 trace' and '3 traces of libraries' own jitted
    # functions made inside the traces above (3 equinox)': the inner traces, each inside the one above, are the user's
    _define(shell, "@fakelib.own_jit\ndef halve(v):\n    return v if v.shape[0] == 1 else halve(v[: v.shape[0] // 2]) * 2")
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = halve(jnp.ones(4))")
    assert result.success
    rep = shell.user_ns["rep"]
    [stats] = rep.functions
    assert (stats.function, stats.traced) == ("halve", 3)
    assert [(m.category, m.summary) for m in stats.misses] == [
        ("input_types", "x: now f32[1], before f32[2]"),
        ("input_types", "x: now f32[2], before f32[4]"),
        ("never_seen", "first trace of halve"),
    ]
    assert not any("libraries' own jitted functions" in n for n in rep.notes)


def test_a_users_function_a_library_jits_is_not_blamed_on_the_library(shell):
    # jax.grad(loss) of an eqx.filter_jit loss read 'a library re-traced: In[4]:6 called equinox._jit._JitWrapper.__call__
    # (…), which made a new loss function object': the user's own loss, placed in equinox by JAX's debug info
    _define(shell, "@fakelib.own_jit\ndef loss(v):\n    return (v ** 2).sum()")
    run_captured(shell, "y = loss(x)")
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = loss(jnp.ones(6))")
    [stats] = shell.user_ns["rep"].functions
    [miss] = stats.misses
    assert (stats.function, miss.category) == ("loss", "input_types")
    assert miss.blame is None and miss.call_site == f"In[{result.execution_count}]:2"
    assert "a library re-traced" not in str(shell.user_ns["rep"])


def test_calls_a_library_makes_are_counted_as_at_least(shell):
    # jaxopt.LBFGS(...).run(w0) calls its jitted update in a Python loop: the report read 'called 2 times with this
    # signature in the cell' for 8 iterations, the others served from JAX's C++ cache inside jaxopt, unseen
    cell, text = _report(shell, "y = fakelib.loop3(x)")
    [report] = cell.reports
    assert report.function == "_step"
    assert ("called at least once with this signature in the cell (calls from inside fakelib.loop3 that hit JAX's "
            "cache are not seen)") in report.notes


def test_a_library_wrapper_object_is_blamed_under_the_function_it_wraps(shell):
    # lx.linear_solve is an equinox _JitWrapper: a re-trace inside it read 'a library re-traced: In[4]:3 called
    # equinox._jit._JitWrapper.__call__ (…)', the wrapper's method, not the function the user called
    result, _ = run_captured(shell, "%%jaxcache -o rep\nfor i in range(2):\n    w = fakelib.solve(x, i)")
    assert result.success
    [stats] = shell.user_ns["rep"].functions
    miss = stats.misses[-1]
    assert miss.blame is not None and miss.blame.library_function == "fakelib.solve"


def test_a_library_function_under_a_decorator_of_the_library_is_blamed_by_its_own_name(shell, tmp_path):
    # keras's Model.fit is wrapped by keras's filter_traceback decorator: a re-trace of its train_step for the last,
    # shorter batch read 'a library re-traced: In[5]:2 called keras.src.utils.traceback_utils.filter_traceback.<locals>.
    # error_handler (…traceback_utils.py:117)', the decorator's wrapper, not the method the user called; %%jaxstages'
    # note on unseen hits named it too
    trainer = tmp_path / "site-packages" / "faketrainer.py"
    trainer.write_text(
        "import functools\nimport jax\n\n\ndef filter_traceback(fn):\n    @functools.wraps(fn)\n"
        "    def error_handler(*args, **kwargs):\n        return fn(*args, **kwargs)\n    return error_handler\n\n\n"
        "@jax.jit\ndef train_step(batch):\n    return batch.sum()\n\n\nclass Trainer:\n    @filter_traceback\n"
        "    def fit(self, data, size):\n        for at in range(0, len(data), size):\n            train_step(data[at:at + size])\n")
    try:
        _define(shell, "import faketrainer")
        result, _ = run_captured(shell, "%%jaxcache -o rep\nfaketrainer.Trainer().fit(jnp.ones(5), 2)")
        assert result.success, result.error_in_exec
        [stats] = shell.user_ns["rep"].functions
        first, shorter = stats.misses
        assert (shorter.category, shorter.summary) == ("input_types", "batch: now f32[1], before f32[2]")
        assert (shorter.blame.library_function, shorter.blame.library_line) == ("faketrainer.Trainer.fit", f"{trainer}:21")
        assert (f"a library re-traced: In[{result.execution_count}]:2 called faketrainer.Trainer.fit ({trainer}:21), which "
                "passed batch differently to train_step") in " ".join(str(shell.user_ns["rep"]).split())
        result, _ = run_captured(shell, "%%jaxstages -o rep\nfaketrainer.Trainer().fit(jnp.ones(7), 3)")
        assert result.success, result.error_in_exec
        assert shell.user_ns["rep"].reports[-1].notes[-1] == ("called at least once with this signature in the cell (calls "
                                                               "from inside faketrainer.Trainer.fit that hit JAX's cache are not seen)")
    finally:
        sys.modules.pop("faketrainer", None)


@pytest.mark.parametrize("library", ["flax", "equinox"])
def test_a_library_models_signature_is_said_by_argument(shell, library):
    """flax's ``nnx.jit`` and ``eqx.filter_jit`` pass the model as a leaf per parameter, under flax's names
    (``model.states[0][k]``) or equinox's (``dynamic_nodonate['first'][k]``): each miss's 'signature traced' listed
    them all, cut at 1,000 characters."""
    pytest.importorskip(library)
    if library == "flax":
        _define(shell, """
            from flax import nnx
            @nnx.jit
            def loss(model, v):
                return model(v).sum()
            model = nnx.Sequential(*[nnx.Linear(8, 8, rngs=nnx.Rngs(0)) for _ in range(8)])
        """)
        said = "model: 16 arrays (f32, 576 values), v: f32[4,8]"
    else:
        _define(shell, """
            import equinox as eqx
            @eqx.filter_jit
            def loss(model, v):
                return jax.vmap(model)(v).sum()
            model = eqx.nn.MLP(8, 2, 16, 3, key=jax.random.key(0))
        """)
        said = "model: 8 arrays (f32, 722 values), v: f32[4,8]"
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = loss(model, jnp.ones((3, 8)))\ny = loss(model, jnp.ones((4, 8)))")
    assert result.success, cap.stderr
    text = re.sub(r"\n {9}(?! )", " ", cap.outputs[-1].data["text/plain"])
    leaves = len(shell.user_ns["rep"].functions[0].misses[1].signature)
    assert f"       signature traced: {said} (all {leaves} leaves in report.functions[0].misses[1].signature)\n" in text


def test_eqx_filter_jit_leaves_are_named_by_the_users_parameters(shell):
    """``eqx.filter_jit``'s misses read ``dynamic_nodonate['rest'][0]: now f32[4,8], before f32[3,8]``, the leaves
    as equinox passes them to its own jitted function; they are named by the user's function's parameters, by
    position, ``*args`` and keyword; where equinox's static part is not the user's function alone (a
    ``functools.partial``), equinox's names stand. Each leaf of an argument is named by its path in it, as JAX names
    a ``jax.jit``'s: an optax state's read ``opt_state[3]``, not ``opt_state[0].mu.layers[0].bias``."""
    pytest.importorskip("equinox")
    _define(shell, """
        import functools
        import equinox as eqx
        @eqx.filter_jit
        def loss(model, v, *rest, scale=1.0):
            return jnp.sum(jax.vmap(model)(v)) * scale + sum(rest)
        mlp = eqx.nn.MLP(8, 1, 16, 2, key=jax.random.key(0))
        def plain(v, w):
            return v + w
        partly = eqx.filter_jit(functools.partial(plain, w=1.0))
    """)
    cell = ("%%jaxcache -o rep\ny = loss(mlp, jnp.ones((3, 8)))\ny = loss(mlp, jnp.ones((4, 8)))\n"
            "y = loss(mlp, jnp.ones((4, 8)), jnp.ones(2), scale=jnp.ones(()))\ny = partly(jnp.ones(2))\ny = partly(jnp.ones(3))")
    result, cap = run_captured(shell, cell)
    assert result.success, cap.stderr
    text = re.sub(r"\n {9}(?! )", " ", cap.outputs[-1].data["text/plain"])
    lines = text.splitlines()
    assert "    2. different input types: v: now f32[4,8], before f32[3,8]" in lines
    # each leaf by its path in the argument, as JAX names a jax.jit's (it read model[0], model[1], ... by leaf number)
    assert ("       signature traced: model.layers[0].weight: f32[16,8], model.layers[0].bias: f32[16], "
            "model.layers[1].weight: f32[16,16], model.layers[1].bias: f32[16], model.layers[2].weight: f32[1,16], "
            "model.layers[2].bias: f32[1], v: f32[4,8]") in lines
    third = shell.user_ns["rep"].functions[0].misses[2]
    assert [n for n, _ in third.signature][-3:] == ["v", "rest[0]", "scale"]
    assert "    2. different input types: dynamic_nodonate['first'][0]: now f32[3], before f32[2]" in lines
    pytest.importorskip("optax")
    _define(shell, """
        import optax
        @eqx.filter_jit
        def step(model, opt_state, v):
            return jax.vmap(model)(v), opt_state
        opt_state = optax.sgd(0.1, momentum=0.9).init(eqx.filter(mlp, eqx.is_array))
    """)
    result, cap = run_captured(shell, "%%jaxstages -o st\nout = step(mlp, opt_state, jnp.ones((3, 8)))")
    assert result.success, cap.stderr
    assert [a.path for a in shell.user_ns["st"].reports[0].traced.args] == [
        "model.layers[0].weight", "model.layers[0].bias", "model.layers[1].weight", "model.layers[1].bias",
        "model.layers[2].weight", "model.layers[2].bias",
        "opt_state[0].trace.layers[0].weight", "opt_state[0].trace.layers[0].bias", "opt_state[0].trace.layers[1].weight",
        "opt_state[0].trace.layers[1].bias", "opt_state[0].trace.layers[2].weight", "opt_state[0].trace.layers[2].bias",
        "v"]
    # a node registered without keys (equinox's State is one): its children by place, as JAX's keystr writes them
    _define(shell, """
        @jax.tree_util.register_pytree_node_class
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b
            def tree_flatten(self):
                return (self.a, self.b), None
            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)
    """)
    result, cap = run_captured(shell, "%%jaxstages -o st\nout = step(mlp, {'s': Pair(jnp.ones(2), (jnp.ones(3),))}, jnp.ones((3, 8)))")
    assert result.success, cap.stderr
    assert [a.path for a in shell.user_ns["st"].reports[0].traced.args][6:] == [
        "opt_state['s'][<flat index 0>]", "opt_state['s'][<flat index 1>][0]", "v"]

def test_a_new_nnx_model_whose_graphdef_prints_alike_names_the_attribute_compared_by_identity(shell):
    """flax's CNN tutorial: a model made anew with ``self.avg_pool = partial(nnx.avg_pool, ...)`` re-traced ``nnx.jit``'s
    train_step; the miss printed two ~300-character GraphDef texts, alike and cut before any difference."""
    pytest.importorskip("flax")
    pytest.importorskip("optax")
    _define(shell, """
        from functools import partial
        import optax
        from flax import nnx
        class CNN(nnx.Module):
            def __init__(self, *, rngs):
                self.linear1 = nnx.Linear(4, 8, rngs=rngs)
                self.avg_pool = partial(nnx.avg_pool, window_shape=(2, 2), strides=(2, 2))
                self.linear2 = nnx.Linear(8, 2, rngs=rngs)
            def __call__(self, x):
                return self.linear2(nnx.relu(self.linear1(x)))
        @nnx.jit
        def train_step(model, optimizer, x):
            grads = nnx.grad(lambda m: jnp.mean(m(x) ** 2))(model)
            optimizer.update(model, grads)
        x = jnp.ones((3, 4))
        model = CNN(rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
        train_step(model, optimizer, x)
    """)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ntrain_step(CNN(rngs=nnx.Rngs(1)), optimizer, x)")
    assert result.success, cap.stderr
    (miss,) = shell.user_ns["rep"].functions[0].misses
    part = "avg_pool = functools.partial(<function avg_pool>, window_shape=(2, 2), strides=(2, 2))"
    assert (miss.category, miss.changes) == ("input_pytree", (ArgChange("model._graphdef (GraphDef's pytree metadata)", part, part),))
    text = cap.outputs[-1].data["text/plain"]
    assert re.sub(r"\n {7}", " ", text[text.index("    1. "):text.index("\n       called at")]) == (
        f"    1. different input pytree: model._graphdef (GraphDef's pytree metadata): equal as printed, unequal as compared: "
        f"{part} is another object, compared by identity: make it once, or make it a static field that compares by value")


def test_an_eqx_module_field_made_anew_that_prints_alike_is_said_to_compare_by_identity(shell):
    pytest.importorskip("equinox")
    _define(shell, """
        from functools import partial
        import equinox as eqx
        class Scaled(eqx.Module):
            w: jax.Array
            act: object
            def __call__(self, v):
                return self.act(self.w * v)
        @eqx.filter_jit
        def loss(model, v):
            return model(v).sum()
        y = loss(Scaled(x, partial(jax.nn.relu)), x)
    """)
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = loss(Scaled(x, partial(jax.nn.relu)), x)")
    assert result.success, cap.stderr
    (miss,) = shell.user_ns["rep"].functions[0].misses
    part = "functools.partial(<jax._src.custom_derivatives.custom_jvp object>)"
    assert (miss.category, miss.changes) == ("static_args", (ArgChange("model.act", part, part),))
    assert miss.summary == (f"model.act: equal as printed, unequal as compared: {part} is another object, compared by "
                            "identity: make it once, or make it a static field that compares by value")


def test_a_jit_the_users_code_made_of_a_librarys_function_is_said_to_be_the_users(shell):
    """``jax.jit(linear)`` of an ``nnx.Linear`` read 'Linear: … (a library's function)', defined in flax's linear.py,
    where ``jax.jit(jnp.tan)`` read 'jax.jit of JAX's own tan, made by your code: shown as your call'."""
    for cell, name in (("y = jax.jit(fakelib.Linear())(x)", "Linear"), ("y = jax.jit(fakelib.halve)(x)", "halve")):
        report, text = _report(shell, cell)
        (step,) = report.reports
        assert (step.function, step.kind) == (name, "user")
        lines = text.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith(f"{name}: "))
        assert "library" not in lines[head]
        assert lines[head + 1] == f"  note: jax.jit of fakelib's own {name}, made by your code: shown as your call"
    report, text = _report(shell, "y = fakelib._step(x)\nz = jnp.sin(x)")
    assert [(r.function, r.kind) for r in report.reports] == [("_step", "library")]
    assert "made by your code" not in text


def test_a_hit_of_a_jit_of_jaxs_function_or_a_librarys_object_names_its_row(shell):
    """A jit of ``jnp.tan`` or of an ``nnx.Linear`` traced before the cell and hitting in it read ``jit(PjitFunction)``
    and ``Linear``, both defined at ``—`` (``jnp.tan`` is JAX's own jit wrapper, and an object has no code of its own)."""
    import jax.numpy as jnp

    fakelib = sys.modules["fakelib"]
    _define(shell, "tan = jax.jit(jnp.tan)\nlin = jax.jit(fakelib.Linear())\ny = tan(x)\ny = lin(x)")
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = tan(x)\ny = lin(x)")
    assert result.success, cap.stderr
    code = jnp.tan.__wrapped__.__code__
    assert [(f.qualname, f.defined_at, f.calls, f.hits) for f in shell.user_ns["rep"].functions] == [
        ("jit(tan)", f"{code.co_filename}:{code.co_firstlineno}", 1, 1),
        ("Linear", f"{fakelib.__file__}:{fakelib.Linear.__call__.__code__.co_firstlineno}", 1, 1)]


def test_a_librarys_function_made_per_user_function_is_told_by_the_one_it_wraps(shell):
    # haiku (jax 0.10.2): jax.jit(hk.without_apply_rng(hk.transform(seq)).apply) after the same of another model fwd read
    # under %jaxcache 're-defined function (made anew inside without_apply_rng): apply_fn is a new function object with
    # the same name and source as one traced before ... make the jitted function once, outside without_apply_rng', with a
    # jaxpr diff against fwd's model: haiku's apply_fn is one function per model, told apart by the model it closes over.
    _define(shell, "def fwd(v):\n    return v + 1\n")
    _define(shell, "def seq(v):\n    return v * 3\n")
    cells = ["jax.jit(fakelib.transform(fwd).apply)(2.0, x)", "jax.jit(fakelib.transform(seq).apply)(2.0, x)",
             "jax.jit(fakelib.transform(fwd).apply)(2.0, x)"]
    misses = []
    for cell in cells:
        result, cap = run_captured(shell, "%%jaxcache -o rep\n" + cell)
        assert result.success, cap.stderr
        [row] = shell.user_ns["rep"].functions
        misses.append((row.function, row.misses[0].category, row.misses[0].summary))
    assert misses == [
        ("apply_fn", "never_seen", "first trace of apply_fn"),
        ("apply_fn", "never_seen", "first trace of apply_fn"),
        ("apply_fn", "redefined", "apply_fn is a new function object with the same name and source as "
                                                     "one traced before: it is defined inside transform, which makes it anew "
                                                     "each time it runs its definition (each call, each pass of a loop); make "
                                                     "the jitted function once, outside transform"),
    ]


def test_a_static_value_a_library_makes_anew_gets_no_advice_to_make_it_once(shell):
    # numpyro 0.22 (jax 0.10.2): a second MCMC.run read under %jaxcache 'different static arguments: _body_fn: now
    # <PjitFunction of <function fori_collect.<locals>._body_fn>> (another object), before ... (made anew: make it once,
    # outside the loop or the model's constructor)': advice about numpyro's own function, made inside numpyro's code.
    result, cap = run_captured(shell, "%%jaxcache -o rep\ny = fakelib.run(x)\ny = fakelib.run(x)")
    assert result.success, cap.stderr
    [row] = shell.user_ns["rep"].functions
    miss = row.misses[1]
    assert (row.function, miss.category, miss.blame is not None) == ("_loop", "static_args", True)
    assert miss.summary == "body: now <function run.<locals>.body> (another object), before <function run.<locals>.body>"


def test_a_librarys_traces_inside_an_eager_loop_are_not_said_to_be_inside_traces_above(shell):
    # blackjax 1.7 (jax 0.10.2): window_adaptation(...).run, an eager jax.lax.scan over blackjax's jitted steps, read
    # '%jaxcache — no jitted function of yours was traced ...' and then '24 traces of libraries' own jitted functions made
    # inside the traces above (24 blackjax)': no trace was above; they were made inside the scan's body.
    result, _ = run_captured(shell, "%%jaxcache -o rep\ny = fakelib.looped(x)")
    assert result.success
    rep = shell.user_ns["rep"]
    if _jax_compat.JAX_VERSION[:2] < (0, 9):  # jax 0.7-0.8 trace a loop body outside the tracing cache jaxshow watches
        assert [f.function for f in rep.functions] == ["<lambda>"] and not any("inside" in n for n in rep.notes)
        return
    assert rep.functions == ()
    assert ("1 trace of libraries' own jitted functions made inside the body of an eager jax.lax.scan (1 fakelib): "
            "part of those traces and compiled with them; not shown") in rep.notes
