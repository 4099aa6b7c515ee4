"""cellrun in a real shell: IPython runs the magic's cell, the call hook sees the cell's own calls only."""

from __future__ import annotations

import builtins
import re
import warnings

import IPython
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from jaxshow.cellrun import HOOK_NAME, label_cells, run_cell
from jaxshow.render import to_text as render_text
from shellrun import in_a_real_kernel, names_cell_line, run_captured


class Spy:
    """Records what the rewritten calls pass through ``pre``/``post`` (a callee that is no jit wrapper)."""

    def __init__(self):
        self.seen = []
        self.log = []

    def pre(self, fn, line=0, column=0):
        self.seen.append(getattr(fn, "__name__", repr(fn)))
        self.log.append(("pre", line))
        return fn

    def post(self, value):
        self.log.append(("post", value))
        return (value,)

    def left_alone(self, code):
        self.log.append(("left alone", code))


def test_returns_trailing_expression_and_assigns(ip):
    assert run_cell(ip, "a = 2\nb = a * 3\nb + 1") == 7
    assert ip.user_ns["b"] == 6
    assert run_cell(ip, "c = 1") is None


def test_hook_sees_the_calls_the_cell_itself_runs(ip):
    spy = Spy()
    cell = (
        "def inner(v):\n    return abs(v)\n"
        "lam = lambda v: max(v, 0)\n"
        "gen = (min(v, 1) for v in [3])\n"
        "class K:\n    z = len('ab')\n"
        "vals = [round(v) for v in [1.2]]\n"
        "inner(-1) + len(str(2))"
    )
    assert run_cell(ip, cell, hook=spy) == 2
    assert spy.seen == ["len", "round", "inner", "len", "str"]  # a class body runs in the cell: its calls are the cell's
    assert ("pre", 8) in spy.log and ("post", 1) in spy.log
    assert [entry for entry in spy.log if entry[0] == "left alone"] == [("left alone", "a generator expression")]
    assert HOOK_NAME not in ip.user_ns and HOOK_NAME not in builtins.__dict__
    assert ip.run_cell("lam(-1), next(gen), K.z").success


def test_keywords_and_starred_arguments_pass_through(ip):
    spy = Spy()
    ip.user_ns["kw"] = {"sep": "-"}
    assert run_cell(ip, "args = ['a', 'b']\n'x'.join(args) + str.join(*['-', args])", hook=spy) == "axba-b"
    assert run_cell(ip, "def fn(fn, *a, **k):\n    return fn, a, k\nfn(1, 2, k=3, **{'z': 4})", hook=spy) == (1, (2,), {"k": 3, "z": 4})
    assert run_cell(ip, "print(*[1, 2], sep=kw['sep'])", hook=spy) is None


def test_exceptions_propagate_with_cell_source_in_traceback(ip):
    with capture_output() as cap:
        result = ip.run_cell("%%jaxstages\nfirst = 1\n1 / 0", store_history=True)
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert ip.user_ns["first"] == 1
    printed = re.sub(r"\x1b\[[0-9;]*m", "", cap.stdout + cap.stderr)
    assert names_cell_line(printed, result.execution_count, 3) and "1 / 0" in printed
    with pytest.raises(ZeroDivisionError):
        run_cell(ip, "1 / 0", hook=Spy())
    assert HOOK_NAME not in ip.user_ns and HOOK_NAME not in builtins.__dict__


def test_a_printed_traceback_has_no_jaxshow_frame(ip):
    ip.run_cell("import jax, jax.numpy as jnp, traceback\nbad = jax.jit(lambda v: v.reshape(7))", store_history=True)
    with capture_output() as cap:
        ip.run_cell("%%jaxstages\ntry:\n    bad(jnp.ones(3))\nexcept TypeError:\n    traceback.print_exc()", store_history=True)
    printed = cap.stderr + cap.stdout
    assert "Traceback" in printed and "reshape" in printed
    assert "jaxshow" not in printed.split("Traceback", 1)[1].split("TypeError: cannot reshape")[0]


def test_magics_and_frame_reading_calls_still_work(ip):
    assert run_cell(ip, "x = 5\n%time y = x + 1\ny", hook=Spy()) == 6
    assert run_cell(ip, "zz = 3\nlocals()['zz'] + len(vars())", hook=Spy()) > 3


@pytest.mark.parametrize("magic", ["%%time", "%%jaxstages", "%%jaxcache"])
def test_a_one_line_body_gets_ipythons_automagic_as_under_time(ip, magic):
    # JAX's compilation-cache page: a cell 'pip install etils' ran %pip plainly and under %%time, and was a
    # SyntaxError under %%jaxstages: IPython's automagic applies to a one-line cell, and %%time's body is one.
    ip.run_cell("auto_a = 1", store_history=True)
    with capture_output():
        one = ip.run_cell(f"{magic}\nwho_ls", store_history=True)
        two = ip.run_cell(f"{magic}\nauto_b = 2\nwho_ls", store_history=True)
    assert one.success and one.result == ["auto_a"]
    assert ip.user_ns["auto_b"] == 2 and two.result is None  # two lines: Python, as IPython runs them
    if magic != "%%time":  # IPython < 9.4's %%time swallows the cell's error
        assert type(two.error_in_exec) is NameError


@pytest.mark.parametrize("magic", ["%%jaxstages", "%%jaxcache"])
def test_an_indented_body_runs_as_the_same_cell_runs_without_the_magic(ip, magic):
    """IPython takes a cell's leading indentation off (code pasted from a function's body); the magic's body, below
    its unindented magic line, was an IndentationError ('unexpected indent'). An indentation a plain cell rejects
    is still rejected, and the call is at its line of the cell."""
    ip.run_cell("import jax, jax.numpy as jnp\nx = jnp.ones(3)", store_history=True)
    body = "\n    y = jax.jit(lambda v: v * 2)(x)\n    for i in range(2):\n        y = y + i\n    y.tolist()"
    with capture_output():
        plain = ip.run_cell(body, store_history=True)
        result = ip.run_cell(f"{magic} -o rep\n{body}", store_history=True)
        mixed = ip.run_cell(f"{magic}\n  z = 1\nw = 2", store_history=True)
        plain_mixed = ip.run_cell("  z = 1\nw = 2", store_history=True)
    assert (plain.result, result.result) == ([3.0, 3.0, 3.0], [3.0, 3.0, 3.0])
    rep = ip.user_ns["rep"]
    if magic == "%%jaxstages":
        assert [(r.call_site.file, r.call_site.line) for r in rep.reports] == [(f"In[{result.execution_count}]", 3)]
    else:
        assert [(f.function, f.traced) for f in rep.functions] == [("<lambda>", 1)]
    assert type(mixed.error_before_exec or mixed.error_in_exec) is type(plain_mixed.error_before_exec or plain_mixed.error_in_exec)
    assert type(plain_mixed.error_before_exec or plain_mixed.error_in_exec).__name__ == (
        "NoneType" if IPython.version_info[0] < 9 else "IndentationError")


def test_a_user_variable_named_like_the_hook_is_left_alone(ip):
    ip.user_ns[HOOK_NAME] = "mine"
    result = ip.run_cell(f"%%jaxstages\nv = len('abc')\n{HOOK_NAME}", store_history=True)
    assert result.success and result.result == "mine" and ip.user_ns["v"] == 3
    assert HOOK_NAME not in builtins.__dict__ and "_" + HOOK_NAME not in builtins.__dict__


def test_ipython_runs_the_cell_await_interactivity_and_out(ip):
    number = ip.execution_count
    result = ip.run_cell("%%jaxstages\nimport asyncio\nawait asyncio.sleep(0)\n'awaited'", store_history=True)
    assert result.success and result.result == "awaited"
    assert ip.user_ns["Out"][number] == "awaited" and ip.user_ns["_"] == "awaited"
    ip.ast_node_interactivity = "all"
    with capture_output() as cap:
        ip.run_cell("%%jaxstages\n1 + 1\n2 + 2", store_history=True)
    assert "Out[{0}]: 2".format(number + 1) in cap.stdout and "Out[{0}]: 4".format(number + 1) in cap.stdout
    ip.ast_node_interactivity = "last_expr_or_assign"
    with capture_output() as cap:
        ip.run_cell("%%jaxstages\nw = 40 + 2", store_history=True)
    assert f"Out[{number + 2}]: 42" in cap.stdout


def test_history_keeps_the_raw_cell(ip):
    ip.run_cell("%%jaxstages\nh = 1", store_history=True)
    assert ip.history_manager.input_hist_raw[-1] == "%%jaxstages\nh = 1"


def test_cell_file_names_read_like_tracebacks(ip):
    number = ip.run_cell("def g():\n    pass", store_history=True).execution_count
    filename = ip.user_ns["g"].__code__.co_filename
    text = f"defined at {filename}:3 and at /site/lib.py:9"
    assert label_cells(ip, text) == f"defined at In[{number}]:3 and at /site/lib.py:9"
    assert label_cells(ip, "<ipython-input-999-0123abcd>:1") == "<ipython-input-999-0123abcd>:1"


def test_terminal_waits_for_the_body_as_for_any_cell_magic(ip):
    check = ip.input_transformer_manager.check_complete
    for cell in ("%%jaxstages\n", "%%jaxstages -o rep\nx = 1\n", "%%jaxstages\nx = 1\n\n"):
        assert check(cell) == check(cell.replace("%%jaxstages -o rep", "%%time").replace("%%jaxstages", "%%time")), cell
    assert check("%%jaxstages\n") == ("incomplete", 0) and check("%%jaxstages\nx = 1\n\n") == ("complete", None)


def test_under_time_the_magic_still_reports(ip):
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    with capture_output() as cap:
        result = ip.run_cell("%%time\n%%jaxstages -o rep\ny = sq(jnp.ones(29))", store_history=True)
    assert result.success, result.error_in_exec
    assert "Wall time" in cap.stdout
    [report] = ip.user_ns["rep"].reports
    assert report.function == "<lambda>" and report.traced.args[0].type_str == "f32[29]"


def test_a_cell_magic_under_the_magic_runs_as_ipython_runs_it(ip, tmp_path):
    """``%%jaxstages`` then ``%%time`` (or ``%%capture``, ``%%bash``, ``%%writefile``): the magic's body is that magic's
    cell. The first line became a comment, which left ``%%time`` on line 2: 'UsageError: Line magic function `%%time`
    not found.' (``%%bash``: a SyntaxError), and the cell did not run."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, cap = run_captured(ip, "%%jaxstages -o rep\n%%time\ny = sq(jnp.ones(31))\ny.shape")
    assert result.success, result.error_in_exec
    assert result.result == (31,) and ip.user_ns["y"].shape == (31,) and "Wall time" in cap.stdout
    [report] = ip.user_ns["rep"].reports
    assert report.traced.args[0].type_str == "f32[31]" and not report.cache_hit
    result, cap = run_captured(ip, "%%jaxstages -o rep\n%%time\nz = sq(jnp.ones(31))")
    [report] = ip.user_ns["rep"].reports
    assert result.success and report.cache_hit  # the %%time body's own call is seen, not only its traces
    result, cap = run_captured(ip, "%%jaxcache -o rep\n%%capture out\nprint('quiet')\nsq(jnp.ones(32))")
    assert result.success and ip.user_ns["out"].stdout == "quiet\n"
    assert [(f.function, f.traced) for f in ip.user_ns["rep"].functions] == [("<lambda>", 1)]
    result, cap = run_captured(ip, f"%%jaxstages\n%%writefile {tmp_path / 'w.py'}\nprint(1)")
    assert result.success and (tmp_path / "w.py").read_text() == "print(1)\n"
    result, cap = run_captured(ip, "%%jaxstages\n\n%%bash\necho from bash")
    assert result.success and "from bash" in cap.stdout
    assert ip.history_manager.input_hist_raw[-1] == "%%jaxstages\n\n%%bash\necho from bash"


STACKED = ("%%jaxstages -o rep\n%%time\ny = 1\nz = sq(jnp.ones(41))",
           "%%time\n%%jaxstages -o rep\ny = 1\nz = sq(jnp.ones(42))",
           "%%jaxstages -o rep\n%%timeit -n1 -r1\ny = 1\nz = sq(jnp.ones(43))",
           "%%timeit -n1 -r1\n%%jaxstages -o rep\ny = 1\nz = sq(jnp.ones(44))",
           "%%jaxstages -o rep\n%%capture out\ny = 1\nz = sq(jnp.ones(45))",
           "%%capture out\n%%jaxstages -o rep\ny = 1\nz = sq(jnp.ones(46))",
           "%%jaxstages -o rep\n%%prun -q\ny = 1\nz = sq(jnp.ones(50))",
           "%%jaxstages -o rep\n%%time\n%%prun -q\nz = sq(jnp.ones(51))")


@pytest.mark.parametrize("cell", STACKED)
def test_a_call_under_two_cell_magics_is_at_its_line_of_the_cell(ip, cell):
    """Lines count from the cell's first line, magic lines included, as in a cell without ``%%time``: ``z = sq(...)``
    is line 4. Either order of ``%%jaxstages`` and ``%%time`` (``%%timeit``, ``%%capture``) read 'called at In[2]:1',
    the line that ran the other magic, and ``%%jaxstages`` over ``%%capture`` 'called at In[3]:2 (from In[2]:1)';
    over ``%%prun`` (whose statement cProfile compiles as ``<string>``) 'called at In[2]:2', and over ``%%time`` over
    ``%%prun`` 'called at In[2]:3', the ``%%prun`` line."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, cap = run_captured(ip, cell)
    assert result.success, result.error_in_exec
    [report] = ip.user_ns["rep"].reports
    number = result.execution_count
    assert (report.call_site.file, report.call_site.line) == (f"In[{number}]", 4)
    assert report.cell_site is None  # the same line
    shown = ip.user_ns["out"].outputs if cell.startswith("%%capture") else cap.outputs
    assert f"(called at In[{number}]:4)\n" in shown[0].data["text/plain"]


def test_a_hit_and_a_function_defined_under_time_are_at_their_lines_of_the_cell(ip):
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, _ = run_captured(ip, "%%jaxstages -o rep\n%%time\ndef g(v):\n    return sq(v) + 1\nz = g(jnp.ones(47))")
    [report] = ip.user_ns["rep"].reports
    number = result.execution_count
    assert (report.call_site.file, report.call_site.line, report.call_site.function) == (f"In[{number}]", 4, "g")
    assert (report.cell_site.file, report.cell_site.line) == (f"In[{number}]", 5)
    result, cap = run_captured(ip, "%%jaxstages -o rep\n%%time\ny = 1\nz = sq(jnp.ones(47))\nz = sq(jnp.ones(47))")
    [report] = ip.user_ns["rep"].reports
    number = result.execution_count
    assert report.cache_hit and (report.call_site.file, report.call_site.line) == (f"In[{number}]", 4)
    text = cap.outputs[0].data["text/plain"]
    assert f"(called at In[{number}]:4)\n" in text and "\n  note: called 2 times with this signature in the cell\n" in text


@pytest.mark.parametrize("cell", ["%%jaxcache -o rep\n%%time\ny = 1\nz = sq(jnp.ones(48))",
                                  "%%time\n%%jaxcache -o rep\ny = 1\nz = sq(jnp.ones(49))",
                                  "%%jaxcache -o rep\n%%prun -q\ny = 1\nz = sq(jnp.ones(52))"])
def test_a_trace_under_time_is_at_its_line_of_the_cell_for_jaxcache(ip, cell):
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, _ = run_captured(ip, cell)
    [function] = ip.user_ns["rep"].functions
    assert [m.call_site for m in function.misses] == [f"In[{result.execution_count}]:4"]


def test_a_cell_magic_under_the_magic_is_reported_after_the_cells_value_in_a_real_kernel():
    """The body runs under the capture IPython's cell opened, so the report comes after ``Out[n]``, at the cell's line."""
    shown, nb = in_a_real_kernel("%load_ext jaxshow\nimport jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)",
                                 "%%jaxstages -o rep\n%%time\ny = sq(jnp.ones(31))\ny.shape", "rep.reports[0].call_site.file")
    kinds = [kind for cell, kind, _ in shown if cell == 1]
    assert kinds == ["stream", "execute_result", "display_data"]
    assert [o.get("data", {}).get("text/plain") for o in nb.cells[1].outputs][1] == "(31,)"
    assert nb.cells[2].outputs[0]["data"]["text/plain"] == "'In[2]'"
    assert "(from " not in nb.cells[1].outputs[2]["data"]["text/plain"].split("\n①")[0]


def test_the_magic_called_inside_its_own_cell_runs_under_that_cells_capture(ip):
    """``get_ipython().run_cell_magic('jaxstages', ...)`` in a %%jaxstages cell: one report of the whole cell.
    It closed the cell's capture early, with a report of the calls so far, and reported the rest apart."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, cap = run_captured(ip, "%%jaxstages --all -o rep\n"
                                   "get_ipython().run_cell_magic('jaxstages', '-o inner', 'a = sq(jnp.ones(35))')\n"
                                   "b = sq(jnp.ones(36))")
    assert result.success and len(cap.outputs) == 1 and "inner" not in ip.user_ns
    assert [r.traced.args[0].type_str for r in ip.user_ns["rep"].reports] == ["f32[35]", "f32[36]"]


@pytest.mark.parametrize("outer, inner", [("%%jaxstages --all", "%%jaxcache"), ("%%jaxcache", "%%jaxstages --all")])
def test_the_other_magics_cell_run_inside_the_magics_cell_gets_its_own_report(ip, outer, inner):
    """``get_ipython().run_cell('%%jaxcache ...')`` in a %%jaxstages cell, or the other way round: the inner cell's
    magic line was made a comment and its calls went into the outer report only; the magic it named showed nothing."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, cap = run_captured(ip, f"{outer} -o rep\na = sq(jnp.ones(45))\n"
                                   f"get_ipython().run_cell('{inner} -o inner\\nb = sq(jnp.ones(46))')\nc = sq(jnp.ones(47))")
    assert result.success and ip.user_ns["b"].shape == (46,)
    inner_report, outer_report = ip.user_ns["inner"], ip.user_ns["rep"]
    assert [o.data["text/plain"] for o in cap.outputs] == [render_text(inner_report), render_text(outer_report)]
    stages, cache = (outer_report, inner_report) if outer.startswith("%%jaxstages") else (inner_report, outer_report)
    assert [m.signature for m in cache.misses] == ([(("v", "f32[46]"),)] if cache is inner_report
                                                   else [(("v", "f32[45]"),), (("v", "f32[46]"),), (("v", "f32[47]"),)])
    assert [r.traced.args[0].type_str for r in stages.reports] == (["f32[46]"] if stages is inner_report
                                                                    else ["f32[45]", "f32[46]", "f32[47]"])


@pytest.mark.parametrize("magic, raised, said", [
    ("jaxstages", "KeyboardInterrupt", "the cell raised KeyboardInterrupt (its traceback is in the cell's output)"),
    ("jaxstages", "SystemExit(3)", "the cell raised SystemExit: 3 (IPython showed it without its traceback: %tb prints that)"),
    ("jaxcache", "KeyboardInterrupt", "  the cell raised KeyboardInterrupt"),
    ("jaxcache", "SystemExit(3)", "  the cell raised SystemExit: 3"),
])
def test_a_direct_run_cell_magic_call_names_an_interrupt_or_exit_as_a_cell_does(ip, magic, raised, said):
    """``get_ipython().run_cell_magic('jaxstages', ...)`` whose body raised KeyboardInterrupt or SystemExit: its report
    said nothing of it (``cell_error`` None), where the same body under ``%%jaxstages`` says 'the cell raised ...'."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # IPython's 'To exit: use 'exit'' after a SystemExit
        result, cap = run_captured(ip, f"get_ipython().run_cell_magic({magic!r}, '-o rep', 'y = sq(jnp.ones(37))\\nraise {raised}')")
    exception = raised.split("(")[0]
    assert type(result.error_in_exec).__name__ == exception and ip.user_ns["rep"].cell_error.type_name == exception
    [text] = [o.data["text/plain"] for o in cap.outputs]
    assert said in text.splitlines()


@pytest.mark.parametrize("magic", ["%%jaxstages --all", "%%jaxcache"])
def test_an_empty_cell_run_inside_the_magics_cell_ends_nothing(ip, magic):
    """``get_ipython().run_cell('')`` in the body: IPython ends an empty cell with ``post_run_cell`` and no
    ``pre_run_cell``, and that end closed the cell's capture: its next call raised 'NameError: name
    '__jaxshow_calls__' is not defined' and the report had the calls before it only."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, cap = run_captured(ip, f"{magic} -o rep\na = sq(jnp.ones(41))\nget_ipython().run_cell('')\nb = sq(jnp.ones(42))\nb.shape")
    assert result.success and result.result == (42,) and len(cap.outputs) == 1
    rep = ip.user_ns["rep"]
    if magic == "%%jaxcache":
        assert [m.signature for m in rep.misses] == [(("v", "f32[41]"),), (("v", "f32[42]"),)]
    else:
        assert [r.traced.args[0].type_str for r in rep.reports] == ["f32[41]", "f32[42]"]


@pytest.mark.parametrize("magic", ["%%jaxstages", "%%jaxcache"])
def test_under_capture_the_report_is_captured_with_the_rest_of_the_cell(ip, magic):
    """``%%capture out`` then the magic: the report is part of what the cell showed, so it lands in ``out``.
    It came after ``%%capture`` had ended, under a cell that was to show nothing."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)", store_history=True)
    result, cap = run_captured(ip, f"%%capture out\n{magic} -o rep\nprint('quiet')\ny = sq(jnp.ones(33))")
    assert result.success and (cap.stdout, cap.outputs) == ("", [])
    out = ip.user_ns["out"]
    assert out.stdout == "quiet\n" and ip.user_ns["y"].shape == (33,)
    [shown] = out.outputs
    assert shown.data["text/plain"] == render_text(ip.user_ns["rep"])
    result, cap = run_captured(ip, f"%%capture out\n{magic} -o rep\nsq(jnp.ones(34))\n1 / 0")
    assert result.success and (cap.stdout, cap.outputs) == ("", [])  # %%capture's own way with an error
    assert "ZeroDivisionError" in ip.user_ns["out"].stdout
    assert ip.user_ns["rep"].cell_error.type_name == "ZeroDivisionError"
    [shown] = ip.user_ns["out"].outputs
    assert "ZeroDivisionError: division by zero" in shown.data["text/plain"]


@pytest.mark.parametrize("cell, said", [
    ("%%jaxstages -o rs\n%%jaxcache -o rc\nn += 1\ny = sq(x)",
     "%%jaxstages over %%jaxcache: one of jaxshow's cell magics per cell (for both reports: %jaxcache on, then %%jaxstages alone)"),
    ("%%jaxcache -o rc\n\n%%jaxstages\nn += 1\ny = sq(x)",
     "%%jaxcache over %%jaxstages: one of jaxshow's cell magics per cell (for both reports: %jaxcache on, then %%jaxstages alone)"),
    ("%%jaxstages\n%%jaxstages --all\nn += 1", "%%jaxstages over %%jaxstages: one of jaxshow's cell magics per cell"),
])
def test_a_jaxshow_cell_magic_over_another_is_a_usage_error_before_anything_runs(ip, cell, said):
    """The magic under the first ran as a comment: '%%jaxstages' over '%%jaxcache -o rc' showed the stages only, no
    %jaxcache report and no 'rc', and the other order the same the other way round."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)\nx = jnp.ones(3)\nn = 0", store_history=True)
    result, cap = run_captured(ip, cell)
    assert type(result.error_in_exec) is UsageError
    assert " ".join(str(result.error_in_exec).split("\n%")[0].split()) == said
    assert ip.user_ns["n"] == 0 and "rs" not in ip.user_ns and "rc" not in ip.user_ns
    assert cap.outputs == []  # no report of a cell that did not run


def test_stacked_magics_under_time_raise_as_any_error_under_time(ip):
    """Under ``%%time`` the stacked magics raise where ``%%time`` runs its body, which shows the error as it shows any
    (IPython 8.12 prints it and the cell succeeds; 9 raises it): nothing runs, as above."""
    ip.run_cell("import jax, jax.numpy as jnp\nsq = jax.jit(lambda v: v * v)\nx = jnp.ones(3)\nn = 0", store_history=True)
    run_captured(ip, "from IPython.core.error import UsageError")
    plain, _ = run_captured(ip, "%%time\nraise UsageError('plain')")
    result, cap = run_captured(ip, "%%time\n%%jaxstages\n%%jaxcache -o rc\nn += 1\ny = sq(x)")
    assert type(result.error_in_exec) is type(plain.error_in_exec)
    shown = str(result.error_in_exec) if result.error_in_exec else cap.stdout + cap.stderr
    assert "%%jaxstages over %%jaxcache: one of jaxshow's cell magics per cell" in shown
    assert ip.user_ns["n"] == 0 and "rc" not in ip.user_ns


def test_a_line_keeps_its_id_when_its_cell_is_edited():
    """Kept, moved by a line added or removed above it, or changed in place: the same id; an added line: a new one."""
    from itertools import count

    from jaxshow.cellrun import carried_line_ids

    fresh = count(10)
    before = ["a = 1", "f = jax.jit(lambda v: v * 2)", "g = jax.jit(lambda v: v + 1)"]
    assert carried_line_ids(before, (1, 2, 3), ["c = 0", *before], fresh) == (10, 1, 2, 3)
    assert carried_line_ids(before, (1, 2, 3), before[1:], fresh) == (2, 3)
    assert carried_line_ids(before, (1, 2, 3), ["a = 1", "f = jax.jit(lambda v: v * 3)", before[2]], fresh) == (1, 2, 3)
    assert carried_line_ids([], (), before, fresh) == (11, 12, 13)
    # an empty line added above a line edited in place, and the lines swapped in the next run
    after = ["a = 1", "", "f = jax.jit(lambda v: v * 5)", "g = jax.jit(lambda v: v + 1)"]
    assert carried_line_ids(before, (1, 2, 3), after, fresh) == (1, 14, 2, 3)
    assert carried_line_ids(after, (1, 14, 2, 3), [after[3], after[2], "1/0"], fresh) == (3, 2, 15)


def test_a_rewritten_cells_lines_are_new_lines_without_comparing_each_pair():
    """A cell pasted over with 200 other lines compared every new line with every old one for likeness before the
    cell ran: 1.1 s (7.8 s at 500 lines), in every cell of a notebook whose front end sends cell ids. At most
    LINES_COMPARED pairs are compared in one run now; a block past that takes new ids."""
    from itertools import count

    from jaxshow.cellrun import LINES_COMPARED, carried_line_ids

    before = [f"x{i} = jnp.sin(w{i}) * {i}" for i in range(30)]
    after = [line.replace("sin", "cos") for line in before]  # each line alike its old one, in one block of 30 x 30 pairs
    assert 30 * 30 > LINES_COMPARED
    assert carried_line_ids(before, tuple(range(30)), after, count(100)) == tuple(range(100, 130))
    edited = before[:5] + after[5:7] + before[7:]  # one block of 2 x 2 pairs
    assert carried_line_ids(before, tuple(range(30)), edited, count(100)) == tuple(range(30))


@pytest.mark.skipif(IPython.version_info < (8,), reason="IPython 7 hands pre_run_cell no cell id")
def test_the_cell_runs_that_keep_their_ids_are_the_last_ones(ip, monkeypatch):
    """Each run of a cell kept its cell's and lines' ids for good: a notebook driven in a loop of cells grew it without end."""
    from jaxshow import cellrun

    monkeypatch.setattr(cellrun, "RUNS_KEPT", 3)
    runner = ip._jaxshow_installation.runner
    first = ip.execution_count
    for n in range(5):
        assert ip.run_cell(f"v{n} = {n}", store_history=True, cell_id=f"cell-{n}").success
    labels = [f"In[{first + n}]" for n in range(5)]
    assert [runner.line_place(label, 1) is not None for label in labels] == [False, False, True, True, True]
    assert runner.line_place(labels[4], 1)[0] == "cell-4"
    assert list(runner._last_lines) == ["cell-2", "cell-3", "cell-4"]  # the cells' last texts, as many
