"""A cell under %%jaxstages or %%jaxcache behaves as without: same values, same errors, same order of evaluation."""

from __future__ import annotations

import re
import sys
import traceback

import pytest
from shellrun import run_captured

SETUP = """
import jax
from functools import partial
log = []

def note(tag, value):
    log.append(tag)
    return value

def items(tag, n):
    log.append(tag)
    for i in range(n):
        log.append(f"{tag}{i}")
        yield i

class Keys:
    def __init__(self, tag, data):
        self.tag, self.data = tag, data
    def keys(self):
        log.append(self.tag + ".keys")
        return self.data.keys()
    def __getitem__(self, key):
        log.append(f"{self.tag}[{key}]")
        return self.data[key]

def h(*a, **k):
    return a, k
"""

FRESH_JIT = "jf = jax.jit(lambda *a, **k: sum(a) + sum(k.values()))\npj = partial(jf, 10)\n"

CALLS = [
    "F(*note('a', 5))",
    "F(note('a', 1), *note('b', 5), note('c', 2))",
    "F(*note('a', [1]), *note('b', 5))",
    "F(**note('m', [1]))",
    "F(a=note('k', 1), **note('m', {'a': 2}))",
    "F(**note('m1', {'a': 1}), **note('m2', {'a': 2}))",
    "F(*items('g', 2), k=note('k', 1))",
    "F(*items('g', 2), **Keys('m', {'k': 1}))",
    "F(note('a', 1), *items('g', 2), **Keys('m', {'k': 1}), z=note('z', 3))",
    "F(**{1: 2})",
    "F(note('x', v) for v in range(2))",
]


def _outcome(shell, magic, callee, call):
    """What the cell did: its value or error (type, message, traceback frames) and the side effects in order."""
    shell.run_cell(FRESH_JIT, store_history=True)
    result, _ = run_captured(shell, f"{magic}log.clear()\n{call.replace('F', callee, 1)}")
    error = result.error_in_exec
    frames = None
    if error is not None:
        frames = [(f.name, f.lineno, f.line) for f in traceback.extract_tb(error.__traceback__)[1:]]
        assert not any("jaxshow" in f.filename for f in traceback.extract_tb(error.__traceback__))
    shown = (type(error).__name__, str(error), frames) if error is not None else ("value", repr(result.result))
    return tuple(re.sub(r"0x[0-9a-f]+", "0x?", str(part)) for part in shown), list(shell.user_ns["log"])


@pytest.mark.filterwarnings("ignore:Python iterable type:DeprecationWarning")
@pytest.mark.parametrize("magic", ["%%jaxstages\n", "%%jaxcache\n"])
@pytest.mark.parametrize("callee", ["h", "jf", "pj", "print"])
def test_arguments_evaluate_and_fail_as_without_the_magic(ip, magic, callee):
    ip.run_cell(SETUP, store_history=True)
    for call in CALLS:
        assert _outcome(ip, magic, callee, call) == _outcome(ip, "# plain\n", callee, call), call


def test_unpacking_errors_name_the_users_function(ip):
    ip.run_cell(SETUP + FRESH_JIT, store_history=True)
    expected = {
        "h(*5)": "__main__.h() argument after * must be an iterable, not int",
        "h(**[1])": "__main__.h() argument after ** must be a mapping, not list",
        "h(a=1, **{'a': 2})": "__main__.h() got multiple values for keyword argument 'a'",
        "h(**{'a': 1}, **{'a': 2})": "__main__.h() got multiple values for keyword argument 'a'",
        "jf(*5)": "__main__.<lambda>() argument after * must be an iterable, not int",
    }
    for magic in ("%%jaxstages\n", "%%jaxcache\n"):
        for call, message in expected.items():
            result, _ = run_captured(ip, magic + call)
            assert type(result.error_in_exec) is TypeError and str(result.error_in_exec) == message


@pytest.mark.parametrize("magic", ["# plain\n", "%%jaxstages\n", "%%jaxcache\n"])
def test_starred_calls_in_a_loop_of_cache_hits(ip, magic):
    ip.run_cell(SETUP + FRESH_JIT + "jf(1, 2, k=3)", store_history=True)
    result, _ = run_captured(ip, magic + (
        "log.clear()\nacc = []\n"
        "for i in range(4):\n"
        "    acc.append(int(jf(*note('a', [i, 1]), **note('m', {'k': 2}))) + int(pj(*items('g', 1), k=i)))\n"
        "acc"
    ))
    assert result.success and result.result == [13, 15, 17, 19]
    assert ip.user_ns["log"] == ["a", "m", "g", "g0"] * 4


HOSTILE_CELLS = {
    "a 500-term sum": ("s = " + " + ".join(["1"] * 500) + "\ns", 500),
    "170 chained calls": ('s = "a"' + ".strip()" * 170 + "\ns", "a"),
    "a metaclass that makes its classes unhashable": (
        "class Meta(type):\n    def __eq__(cls, other):\n        return cls is other\n"
        "class K(metaclass=Meta):\n    def __call__(self):\n        return 7\nK()()", 7),
    "a metaclass whose hash has a side effect": (
        "class Meta(type):\n    def __hash__(cls):\n        log.append('hash')\n        return 1\n"
        "class K(metaclass=Meta):\n    def __call__(self):\n        return 7\nK()()\nlog", []),
    "a class whose __module__ is not a string": ("class K:\n    __module__ = 5\n    def __call__(self):\n        return 7\nK()()", 7),
    "a cell that binds the hook's own name": ("__jaxshow_calls__ = 5\nh(1)", ((1,), {})),
    "a metaclass that logs its attribute reads": (
        "class Meta(type):\n    def __getattribute__(cls, name):\n        if name == '__module__':\n            log.append(name)\n"
        "        return super().__getattribute__(name)\nclass K(metaclass=Meta):\n    def __call__(self):\n        return 7\nK()()\nlog", []),
}


@pytest.mark.parametrize("magic", ["%%jaxstages\n", "%%jaxcache\n"])
@pytest.mark.parametrize("name", HOSTILE_CELLS)
def test_cells_the_rewrite_must_not_trip_on_run_as_without_it(ip, magic, name):
    cell, value = HOSTILE_CELLS[name]
    ip.run_cell(SETUP, store_history=True)
    result, cap = run_captured(ip, magic + "log.clear()\n" + cell)
    assert result.success, result.error_before_exec or result.error_in_exec
    assert result.result == value and cap.stderr == "", "no 'AST transformer threw an error' from IPython"


def test_an_annotation_is_kept_as_written_under_future_annotations(ip):
    ip.run_cell("from __future__ import annotations\ndef h(v):\n    return v\n", store_history=True)
    for magic in ("# plain\n", "%%jaxstages\n", "%%jaxcache\n"):
        result, _ = run_captured(ip, magic + 'x: h(1) = 2\n__annotations__["x"]')
        assert result.result == "h(1)", magic


@pytest.mark.parametrize("magic", ["%%jaxstages\n", "%%jaxcache\n"])
def test_a_cell_run_inside_the_cell_leaves_its_calls_hooked(ip, magic):
    ip.run_cell(SETUP + FRESH_JIT, store_history=True)
    result, _ = run_captured(ip, magic + "log.clear()\nx = note('a', 1)\nget_ipython().run_cell('y = 2')\nz = note('b', int(jf(x, y)))")
    assert result.success, result.error_in_exec
    assert ip.user_ns["z"] == 3 and ip.user_ns["log"] == ["a", "b"]


@pytest.mark.parametrize("magic", ["%%jaxstages\n", "%%jaxcache\n"])
def test_unloading_jaxshow_inside_the_cell_lets_the_rest_run_and_then_unbinds_the_hook(ip, magic):
    import builtins

    ip.run_cell(SETUP, store_history=True)
    result, _ = run_captured(ip, magic + "log.clear()\n%unload_ext jaxshow\nnote('after', 5)")
    assert result.success, result.error_in_exec
    assert result.result == 5 and ip.user_ns["log"] == ["after"]
    assert [n for n in dir(builtins) if "jaxshow" in n] == []
    ip.run_line_magic("load_ext", "jaxshow")


def test_a_type_alias_is_evaluated_lazily_as_written(ip):
    if sys.version_info < (3, 12):
        pytest.skip("type aliases are Python 3.12 syntax")
    ip.run_cell(SETUP, store_history=True)
    for magic in ("# plain\n", "%%jaxstages\n", "%%jaxcache\n"):
        result, _ = run_captured(ip, magic + "type X = list[h(1)]")
        assert result.success
        assert repr(ip.user_ns["X"].__value__) == "list[(1,), {}]", magic
