"""cellrun.run_cell in a real shell: IPython semantics, hook placement, tracebacks."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from jaxshow.cellrun import HOOK_NAME, label_cells, run_cell


class Spy:
    def __init__(self):
        self.seen = []

    def __call__(self, fn):
        self.seen.append(getattr(fn, "__name__", repr(fn)))
        return fn


def test_returns_trailing_expression_and_assigns(ip):
    assert run_cell(ip, "a = 2\nb = a * 3\nb + 1") == 7
    assert ip.user_ns["b"] == 6
    assert run_cell(ip, "c = 1") is None


def test_hook_sees_top_level_calls_only(ip):
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
    assert spy.seen == ["round", "inner", "len", "str"]
    assert HOOK_NAME not in ip.user_ns
    assert ip.run_cell("lam(-1), next(gen), K.z").success


def test_keywords_and_starred_arguments_pass_through(ip):
    spy = Spy()
    ip.user_ns["kw"] = {"sep": "-"}
    assert run_cell(ip, "args = ['a', 'b']\n'x'.join(args) + str.join(*['-', args])", hook=spy) == "axba-b"
    assert run_cell(ip, "def fn(fn, *a, **k):\n    return fn, a, k\nfn(1, 2, fn=3) if False else fn(1, 2, k=3)", hook=spy) == (1, (2,), {"k": 3})


def test_exceptions_propagate_with_cell_source_in_traceback(ip):
    with capture_output() as cap:
        result = ip.run_cell("%%jaxstages\nfirst = 1\n1 / 0")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert ip.user_ns["first"] == 1
    assert "1 / 0" in cap.stdout + cap.stderr
    with pytest.raises(ZeroDivisionError):
        run_cell(ip, "1 / 0", hook=Spy())
    assert HOOK_NAME not in ip.user_ns


def test_magics_and_frame_reading_calls_still_work(ip):
    assert run_cell(ip, "x = 5\n%time y = x + 1\ny", hook=Spy()) == 6
    assert run_cell(ip, "zz = 3\nlocals()['zz'] + len(vars())", hook=Spy()) > 3


def test_cell_file_names_read_like_tracebacks(ip):
    ip.run_cell("x = 1")
    filename = next(iter(ip.compile._filename_map))
    number = ip.compile._filename_map[filename]
    text = f"defined at {filename}:3 and at /site/lib.py:9"
    assert label_cells(ip, text) == f"defined at In[{number}]:3 and at /site/lib.py:9"
    assert label_cells(ip, "<ipython-input-999-0123abcd>:1") == "<ipython-input-999-0123abcd>:1"
