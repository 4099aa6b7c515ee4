"""The user's function that a library's or JAX's own jitted function carries.

Some libraries jit a function of their own that calls the user's, renamed
after it, and pass the user's function in as a static argument: equinox's
``filter_jit`` jits its ``fun_wrapped`` (``equinox/_jit.py``) with the user's
function inside a static tuple. JAX's debug info then points into the
library. The user's function is found among the call's static values, by
name and by type only: only plain functions are read (their ``__name__``,
``__code__``, ``__wrapped__``), inside tuples, lists, dicts and
``functools.partial``; no other object's attributes or ``repr``. Where the
function the library carries is another library's (diffrax's ``diffeqsolve``
under equinox's ``filter_jit``), that one is found, defined where it is. A wrapper made
with ``functools.wraps`` needs none of this: JAX's ``fun_sourceinfo`` follows
``__wrapped__`` itself.

Some of JAX's own transformations return a closure made without
``functools.wraps``: ``jax.jit(checkify.checkify(f))`` jits checkify's
``checked_fun`` (``jax/_src/checkify.py``), which closes over ``f``. JAX's debug
info names the closure, in JAX's files, and the call read as one of JAX's own
eager operations. The user's function is found in the closure's cells, and in
the ``linear_util.WrappedFun`` that ``jax.pmap``'s jit body closes over (read
through :mod:`jaxshow._jax_compat`). No IPython.
"""

from __future__ import annotations

import collections
import functools
import os
import types
from typing import Any, Callable, Iterable

from jaxshow import _jax_compat
from jaxshow.capture.sources import is_jax_file, is_user_file

MAX_OBJECTS = 1_000
"""Objects looked at among one call's static values, at most."""
MAX_CLOSURE_OBJECTS = 32
"""Objects looked at in the closures of one of JAX's functions, at most."""


def package_of(source_file: str) -> str:
    """The top-level package an installed file belongs to (``…/site-packages/equinox/_jit.py`` -> ``equinox``)."""
    parts = os.path.abspath(source_file).split(os.sep)
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in ("site-packages", "dist-packages"):
            return parts[i + 1].removesuffix(".py")
    return os.path.basename(source_file).removesuffix(".py")


def library_file(source_file: str | None) -> bool:
    """Whether JAX's debug info names a library's file: installed, and neither JAX's nor jaxlib's."""
    return source_file is not None and not is_user_file(source_file) and not is_jax_file(source_file)


def carried_function(name: str, values: Iterable[Any], outside: str | None = None) -> types.FunctionType | None:
    """The user's function named ``name`` among ``values``, a call's static argument values.

    ``name`` is the name JAX reports: the library named its function after the user's. Where none of the
    user's is there and ``outside`` (the jitting library's file) is given, a library's function of that name
    defined in another file: diffrax's ``diffeqsolve``, which equinox's ``filter_jit`` carries.
    """
    pending = collections.deque(values)
    found = None
    for _ in range(MAX_OBJECTS):
        if not pending:
            break
        value = pending.popleft()
        kind = type(value)
        if kind is types.FunctionType:
            if value.__name__ == name:
                filename = value.__code__.co_filename
                if is_user_file(filename):
                    return value
                if (found is None and outside is not None and library_file(filename)
                        and os.path.abspath(filename) != os.path.abspath(outside)):
                    found = value
            if "__wrapped__" in value.__dict__:
                pending.append(value.__dict__["__wrapped__"])
        elif kind is tuple or kind is list:
            pending.extend(value)
        elif kind is dict:
            pending.extend(value.values())
        elif kind is functools.partial:
            pending.extend((value.func, *value.args, *value.keywords.values()))
    return found


def closure_function(fun: Any) -> types.FunctionType | None:
    """The user's function that ``fun``, a function in JAX's files, closes over (checkify's ``checked_fun``).

    Only JAX's own functions are opened: their closure cells, ``__wrapped__`` and
    ``functools.partial.func``; a library's function or any other object is not.
    """
    return _closed_over(fun, is_jax_file, tuples=False)


def library_closure_function(fun: Any) -> types.FunctionType | None:
    """The user's function that ``fun``, a library's closure, closes over: the ``fwd`` in haiku's
    ``hk.transform(fwd).apply``, through the library's own closures and the named tuples it keeps them in.

    What identifies a function the library makes anew for each function of the user's, though its name and
    source are the library's. Only functions in a library's or JAX's files and plain tuples (named tuples
    included, read as tuples) are opened; no other object, and no code of the user's runs.
    """
    return _closed_over(fun, lambda filename: not is_user_file(filename), tuples=True)


def _closed_over(fun: Any, opened: Callable[[str], bool], *, tuples: bool) -> types.FunctionType | None:
    """The first function in a user's file among what ``fun`` closes over, opening the functions whose file is
    ``opened`` (and tuples, if ``tuples``), at most :data:`MAX_CLOSURE_OBJECTS` objects."""
    pending = collections.deque([fun])
    for _ in range(MAX_CLOSURE_OBJECTS):
        if not pending:
            break
        value = pending.popleft()
        if type(value) is functools.partial:
            pending.append(value.func)
            continue
        if tuples and isinstance(value, tuple):
            pending.extend(tuple.__iter__(value))
            continue
        if type(value) is not types.FunctionType:
            continue
        filename = value.__code__.co_filename
        if value is not fun and is_user_file(filename):
            return value
        if not opened(filename):
            continue
        if "__wrapped__" in value.__dict__:
            pending.append(value.__dict__["__wrapped__"])
        if (pmapped := _jax_compat.pmapped_target(value)) is not None:  # jax.pmap's jit body: the function pmap was given
            pending.append(pmapped)
        for cell in value.__closure__ or ():
            try:
                pending.append(cell.cell_contents)
            except ValueError:  # a cell not yet filled
                pass
    return None
