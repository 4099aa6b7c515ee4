"""Whose a source file is: the user's own, or installed code (a library, the standard library, JAX, jaxshow).

Owns :func:`is_user_file`, the one rule every part of jaxshow uses: which
calls headline a ``%%jaxstages`` report, the ``In[n]:line`` and ``file.py:line``
of a call site or an IR label, and the user's line a library re-trace is
blamed on. The user's own files are the notebook's cells and every Python file
that is not installed (:mod:`jaxshow.installed`: not under a ``site-packages``
or ``dist-packages`` folder or another folder on ``sys.path`` that pip installed
into, not in the standard library) and not JAX, jaxlib or jaxshow. So a package
of the user's installed editable (``pip install -e .``, whose files stay in the project's ``src/``) is
the user's wherever the notebook runs, and the answer for a file never depends
on the working directory. Uses only the paths of
JAX and jaxlib; never IPython.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import types
from typing import Any

from jaxshow import _jax_compat
from jaxshow.installed import STDLIB_DIRS, is_installed, pip_installed

JAXSHOW_DIR = _jax_compat.JAXSHOW_DIR

_JAXLIB = sys.modules.get("jaxlib")
JAX_DIRS = (_jax_compat.JAX_DIR,) + ((os.path.dirname(os.path.abspath(_JAXLIB.__file__)) + os.sep,) if _JAXLIB and _JAXLIB.__file__ else ())
"""The folders of JAX and jaxlib, with trailing separators."""

_CELL_PREFIX = "<ipython-input-"  # terminal IPython's cell names; ipykernel's are files in a temp folder
_CACHE_LIMIT = 10_000

_answers: dict[str, bool] = {}
"""Answers of :func:`is_user_file` by file name: every frame of every call asks."""


def is_user_file(filename: str) -> bool:
    """Whether ``filename`` (a code object's ``co_filename``) is a cell or one of the user's own files."""
    known = _answers.get(filename)
    if known is not None:
        return known
    if filename.startswith("<"):
        answer = filename.startswith(_CELL_PREFIX)
    else:
        path = os.path.abspath(filename)
        answer = not path.startswith((*JAX_DIRS, JAXSHOW_DIR)) and not is_installed(path)
    if len(_answers) < _CACHE_LIMIT:
        _answers[filename] = answer
    return answer


@functools.lru_cache(maxsize=4096)
def is_jax_file(filename: str) -> bool:
    """Whether ``filename`` (a code object's ``co_filename``) is in JAX's or jaxlib's folders; never code made from a
    string (``<string>``, a cell's ``<ipython-input-…>``)."""
    return not filename.startswith("<") and os.path.abspath(filename).startswith(JAX_DIRS)


@functools.lru_cache(maxsize=4096)
def is_library_file(filename: str) -> bool:
    """Whether ``filename`` is a library's: installed code that is not the standard library, JAX, jaxlib or jaxshow.

    A virtual environment's own ``lib/python3.X`` folder (sysconfig's
    ``platstdlib`` there) holds its ``site-packages``, so a file in an installed
    folder is a library's even where it lies under a standard-library folder. Answered once per file name, as
    :func:`is_user_file` is: the walk over a call's frames asks for each.
    """
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if path.startswith((*JAX_DIRS, JAXSHOW_DIR)):
        return False
    return pip_installed(path) or not (path.startswith(STDLIB_DIRS) or is_user_file(filename))


def lines_readable(filename: str) -> bool:
    """Whether reading the lines of ``filename`` (a code object's ``co_filename``) cannot wait: it is a regular file, or
    no file at all (a cell, whose lines ``linecache`` holds). A FIFO or a device under a module's name would hold the
    read, and the user's call it is made in, until something wrote to it."""
    try:
        return stat.S_ISREG(os.stat(filename).st_mode)
    except (OSError, ValueError):  # no such file (a cell, "<string>"), or a name no file system takes
        return True


def frame_function(frame: Any) -> str:
    """``module.qualname`` of the function a library's frame runs; for a wrapper object's ``__call__`` (equinox's
    ``_JitWrapper``, which ``lx.linear_solve`` and ``diffrax.diffeqsolve`` are) the function it wraps, as named in
    the object's own ``__dict__`` (``__module__``, ``__qualname__``: read by type, no attribute lookup runs code)."""
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    module = frame.f_globals.get("__name__")
    if code.co_name == "__call__" and code.co_argcount:
        try:
            own = object.__getattribute__(frame.f_locals.get(code.co_varnames[0]), "__dict__")
        except Exception:  # noqa: BLE001 - an object without a __dict__, or a frame without its locals
            own = {}
        wrapped_name, wrapped_module = own.get("__qualname__"), own.get("__module__")
        if type(wrapped_name) is str and type(wrapped_module) is str:
            return f"{wrapped_module}.{wrapped_name}"
    return f"{module}.{name}" if isinstance(module, str) else name


def called_frame(entries: list[Any]) -> Any:
    """Of the library frames between the user's line and a call, innermost first, the frame of the function the user's
    line called: the outermost, or, where that is a decorator's wrapper (keras's
    ``filter_traceback.<locals>.error_handler`` around ``Model.fit``), the function it wraps; ``None`` for none."""
    at = len(entries) - 1
    while at > 0 and _wraps(entries[at], entries[at - 1]):
        at -= 1
    return entries[at] if entries else None


def _wraps(frame: Any, inner: Any) -> bool:
    """Whether ``frame`` runs a function defined inside another that calls a function it closes over, ``inner``'s."""
    if "<locals>" not in frame_function(frame):
        return False
    return any(type(value) is types.FunctionType and value.__code__ is inner.f_code for value in frame.f_locals.values())
