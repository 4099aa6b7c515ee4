"""How the user wrote a jitted function: the JAX transformations and jits around it, ``grad(jit(grad(f)))``.

Read by type and code only, never by calling a user object or reading its
attributes. Uses neither JAX's objects nor IPython: only where JAX's own code
lives (:func:`jaxshow.capture.sources.is_jax_file`).
"""

from __future__ import annotations

import functools
import types
from typing import Any, Iterator

from jaxshow.capture.sources import is_jax_file
from jaxshow.capture.stations import is_jax_type

TRANSFORM_NAMES = {"grad_f": "jax.grad", "grad_f_aux": "jax.grad", "value_and_grad_f": "jax.value_and_grad",
                   "vmap_f": "jax.vmap", "jacfun": "jax.jacfwd/jacrev", "hessian": "jax.hessian", "checkpoint_f": "jax.checkpoint",
                   "checked_fun": "checkify.checkify"}
"""The code names of JAX's transformation wrappers, with the JAX function that makes each."""


def transforms(fun: Any) -> tuple[str, ...]:
    """The JAX transformations and jits around the user's function, outermost first, read by type only:
    ``jax.grad(jax.jit(jax.grad(f)))`` -> ``("grad", "jit", "grad")``. One function transformed two ways is two
    functions (``grad(f)``, ``jacfwd(jacrev(f))``), never one re-defined. ``""``: a wrapper that is part of the
    identity but not of how the function is written (``functools.partial``, a ``custom_jvp`` object)."""
    return tuple(layer for layer, _ in _peeled(fun))


def innermost(fun: Any) -> Any:
    """What the wrappers :func:`transforms` reads wrap: the user's function (``f`` in ``grad(jit(f))``), or JAX's own
    closure around it (checkify's inner ``checked_fun``)."""
    inner = fun
    for _, inner in _peeled(fun):
        pass
    return inner


def _peeled(fun: Any) -> Iterator[tuple[str, Any]]:
    """Each wrapper around the user's function, outermost first: its layer of :func:`transforms`, and what it wraps."""
    for _ in range(16):
        if type(fun) is functools.partial:
            layer, fun = "", fun.func
        elif jax_made(fun) and "__wrapped__" in fun.__dict__:
            layer, fun = _transform_name(fun), fun.__dict__["__wrapped__"]
        elif is_jax_type(type(fun)) and callable(getattr(fun, "__wrapped__", None)):
            layer, fun = "jit" if type(fun).__name__ == "PjitFunction" else "", fun.__wrapped__
        else:
            return
        yield layer, fun


def _transform_name(fun: types.FunctionType) -> str:
    """The JAX function that made the wrapper ``fun`` (``grad``, ``jacfwd``, ``vmap``), from the code it runs: its public
    name, where a private one makes it (jax 0.12.1's ``vmap`` calls ``_vmap``, which defines ``vmap_f``)."""
    made = transformation_code(fun)
    return made.co_qualname.partition(".<locals>")[0].lstrip("_") if made is not None else ""


def transformation_code(fun: types.FunctionType) -> types.CodeType | None:
    """The code of a JAX transformation's wrapper (:data:`TRANSFORM_NAMES`: ``grad_f``, ``vmap_f``) that ``fun``, a
    function of JAX's, runs itself or holds in its closure."""
    for held in (fun, *(_cell(c) for c in fun.__closure__ or ())):
        if jax_made(held) and held.__code__.co_name in TRANSFORM_NAMES:
            return held.__code__
    return None


def jax_made(fun: Any) -> bool:
    """Whether ``fun`` is a plain function defined in JAX's own files (a transformation's wrapper, ``checked_fun``)."""
    return type(fun) is types.FunctionType and is_jax_file(fun.__code__.co_filename)


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def written(name: str, layers: tuple[str, ...]) -> str:
    """``name`` with the ``layers`` of :func:`transforms` around it, as the user wrote them: ``grad(jit(grad(f)))``."""
    for layer in reversed([t for t in layers if t]):
        name = f"{layer}({name})"
    return name
