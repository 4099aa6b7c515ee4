"""Whether a function the user called is still its module's definition of its name, or an earlier one.

A module that runs again (``importlib.reload``, ``%autoreload``) defines its
functions anew; a name bound before (``from mod import step``) keeps the
earlier object, and ``%autoreload`` replaces the code of a plain function in
place but never a ``jax.jit`` wrapper. Read from modules' and classes' own
dicts and by type: no code of the user's runs. Uses neither JAX's objects nor
IPython.
"""

from __future__ import annotations

import inspect
import linecache
import os
import re
import sys
import types
from typing import Any

from jaxshow.capture.sources import is_user_file
from jaxshow.capture.written import innermost


def newer_definition(fun: Any) -> tuple[str, str] | None:
    """``(module, qualified name)`` where the module of ``fun`` (the user's function inside its wrappers) now defines
    another function of its qualified name with other code: ``fun`` is the earlier definition. ``None`` otherwise, and
    for a function of a cell or script (``__main__``), or one defined inside another."""
    inner = _function(fun)
    if inner is None:
        return None
    module_name, qualname = inner.__module__, inner.__qualname__
    module = sys.modules.get(module_name) if isinstance(module_name, str) and module_name != "__main__" else None
    if module is None or "<locals>" in qualname:
        return None
    held: Any = module
    for part in qualname.split("."):
        try:
            held = inspect.getattr_static(held, part)
        except AttributeError:
            return None
    now = _function(held)
    if now is None or now is inner or now.__qualname__ != qualname or now.__code__ is inner.__code__:
        return None  # the module's own, or an earlier object whose code %autoreload replaced with the new one
    return module_name, qualname


def definition_note(fun: Any, name: str) -> str | None:
    """What a report says of a call of ``fun`` (named ``name`` as shown) whose definition is not the one its file
    holds now: an earlier definition its module has since replaced (:func:`newer_definition`), else code whose lines are
    not the file's (:func:`misplaced_code_note`); ``None`` for the file's own."""
    newer = newer_definition(fun)
    return earlier_definition_note(name, newer) if newer is not None else misplaced_code_note(fun)


def earlier_definition_note(name: str, newer: tuple[str, str]) -> str:
    """What a report says of a call of ``name``, an earlier definition (``newer``: :func:`newer_definition`'s answer)."""
    module, qualname = newer
    return (f"{name}: the {name} called is an earlier definition: {module}.{qualname} is another function now ({module} ran "
            f"again: importlib.reload, %autoreload); a name bound before, as by 'from {module} import {qualname.split('.')[0]}', "
            "keeps the earlier one, and %autoreload replaces no jax.jit-wrapped function")


def _function(held: Any) -> types.FunctionType | None:
    """The plain function inside a method, static or class method, ``functools.partial`` or JAX's wrappers."""
    if isinstance(held, (staticmethod, classmethod, types.MethodType)):
        held = held.__func__
    inner = innermost(held)
    return inner if type(inner) is types.FunctionType else None


def misplaced_code_note(fun: Any) -> str | None:
    """A note where the code of ``fun`` (the user's function inside its wrappers) says it starts on a line of a file of
    the user's that, as the file reads now, does not define it: the file changed since (not reloaded yet), or IPython
    9's ``%autoreload`` compiled the edited function apart from its file, from line 1 (ipython/ipython#15359). Either
    way the lines JAX records for it (its definition, ``--source``) are not the file's. ``None`` where the line defines
    it, for a lambda, and for code of no file on disk."""
    inner = _function(fun)
    code = inner.__code__ if inner is not None else None
    if code is None or code.co_name == "<lambda>":
        return None
    if not os.path.isfile(code.co_filename) or not is_user_file(code.co_filename):
        return None
    linecache.checkcache(code.co_filename)
    line = linecache.getline(code.co_filename, code.co_firstlineno).strip()
    if line.startswith("@") or re.match(rf"(?:async\s+)?def\s+{re.escape(code.co_name)}\b", line):
        return None
    return (f"{inner.__name__}: its code says it starts at {code.co_filename}:{code.co_firstlineno}, a line that does not "
            "define it as the file reads now: the file changed since (not reloaded yet), or IPython 9's %autoreload "
            "compiled the edited function apart from its file, from line 1 (ipython/ipython#15359; %autoreload 2 --full "
            "reloads whole modules instead); the lines JAX records for it, its definition's and --source's, are not the file's")
