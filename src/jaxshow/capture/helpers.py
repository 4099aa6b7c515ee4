"""Whether a function of the user's may call a jitted function: read from its code, running none of it.

A call inside a function that hits JAX's cache runs in C++ and is never seen,
so a report that saw no jitted call says why only where the cell called a
function that may make one. That is read from the function's bytecode: the
globals, closure values and module attributes it loads (``step``,
``jnp.sin``), and, for a bound method, its own object's attributes
(``self.step``) read with :func:`inspect.getattr_static`. A value that is a
``jax.jit`` wrapper (not JAX's own, as ``jnp.sin`` is), a library's jitted
callable, or ``jax.jit`` itself (the function jits as it goes) says yes; a
function of the user's is read in turn, a few levels deep. Attributes of
other values (``state.apply_fn``) are not followed: such a call goes unsaid.
"""

from __future__ import annotations

import dis
import inspect
import sys
import types
from typing import Any

from jaxshow import _jax_compat
from jaxshow.capture.sources import is_jax_file, is_user_file
from jaxshow.capture.stations import JAX_MODULES, jit_target, library_jit

DEPTH = 3
"""How many levels of the user's functions calling each other are read."""

JIT_MAKERS = frozenset({"jit", "pmap", "filter_jit", "filter_pmap"})
"""JAX's and libraries' functions that make a jitted function (``jax.jit``, flax's ``nnx.jit``, equinox's ``filter_jit``)."""

_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF"})
_ATTRIBUTES = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def may_call_jit(fn: Any, depth: int = DEPTH, seen: set[int] | None = None) -> bool:
    """Whether calling ``fn`` (a function or bound method of the user's) may call a jitted function (see the module);
    ``seen``: the code already read in this question, each read once."""
    owner = fn.__self__ if type(fn) is types.MethodType else None
    function = fn.__func__ if owner is not None else fn
    seen = set() if seen is None else seen
    if type(function) is not types.FunctionType or id(function.__code__) in seen:
        return False
    seen.add(id(function.__code__))
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    return any(_jitted(value, depth, seen) for value in _loaded(function.__code__, function.__globals__, cells, owner))


def _jitted(value: Any, depth: int, seen: set[int]) -> bool:
    target = jit_target(value)
    if target is not None:
        return not jax_own_wrapper(target[0])
    if library_jit(value) is not None:
        return True
    if type(value) is types.FunctionType and value.__name__ in JIT_MAKERS and not is_user_file(value.__code__.co_filename):
        return True  # jax.jit itself: the function makes a jitted function and may call it
    if type(value) is types.FunctionType and "__wrapped__" in value.__dict__:
        return _jitted(value.__dict__["__wrapped__"], depth, seen)  # a library's decorator: flax's nnx.jit
    if depth > 1 and type(value) in (types.FunctionType, types.MethodType):
        function = value.__func__ if type(value) is types.MethodType else value
        return (type(function) is types.FunctionType and is_user_file(function.__code__.co_filename)
                and may_call_jit(value, depth - 1, seen))
    return False


def jax_own_wrapper(wrapper: Any) -> bool:
    """Whether ``wrapper`` is one of JAX's own jitted functions (``jnp.sin``): the wrapper the module of its function
    holds under the function's name. A cache hit there is JAX's helper, never the user's call."""
    fun = _jax_compat.jit_function(wrapper)
    return type(fun) is types.FunctionType and is_jax_file(fun.__code__.co_filename) and held_by_module(fun) is wrapper


def jax_helper(fun: Any) -> bool:
    """Whether ``fun``, a function JAX is about to trace for a jit call, is one of JAX's own jitted helpers: one JAX jits
    to run a primitive outside jit, or a function of a JAX module that holds another object under its name, its jit
    wrapper (``jnp.sum``'s ``_reduce_sum``) or one around it (the ``jnp.negative`` ufunc); not ``fun`` itself, as where
    the user's code jits ``jax.random.normal``, nor a function wrapping another (``jax.grad(f)``'s, named and placed as ``f``)."""
    if type(fun) is not types.FunctionType or "__wrapped__" in fun.__dict__ or not is_jax_file(fun.__code__.co_filename):
        return False
    return _jax_compat.eager_primitive_function(fun) or held_apart(fun)


def held_apart(fun: Any) -> bool:
    """Whether the module of ``fun``, one of JAX's callables, holds another object under its name (a jit of it, or an
    object around one); raises for a callable without a module."""
    held = held_by_module(fun)
    return held is not None and held is not fun


def held_by_module(fun: Any) -> Any:
    """What the module of ``fun``, one of JAX's callables, holds under its name; ``None`` for a callable object without a
    name (the ``VJP`` of ``jax.vjp``, the ``Partial`` of ``jax.linearize``), which no module holds, and where that module
    is not JAX's: ``jax.grad(f)``'s function carries ``f``'s name and module, and ``f = jax.jit(jax.grad(f))`` in a
    notebook is held there under that name, the user's jit."""
    name, module = getattr(fun, "__name__", None), getattr(fun, "__module__", None)
    if not isinstance(name, str) or not isinstance(module, str) or not (module == "jax" or module.startswith(JAX_MODULES)):
        return None
    return getattr(sys.modules.get(module), name, None)


def _loaded(code: types.CodeType, namespace: dict, cells: dict, owner: Any) -> list[Any]:
    """The values ``code`` (and the code nested in it) loads by name, by module attribute and by ``self.`` attribute."""
    values: list[Any] = []
    previous: Any = _NOTHING
    for instruction in dis.get_instructions(code):
        current: Any = _NOTHING
        if instruction.opname in _LOADS:
            current = _named(instruction.argval, namespace, cells)
        elif instruction.opname == "LOAD_FAST" and owner is not None and instruction.argval == (code.co_varnames or ("",))[0]:
            current = _Self(owner)
        elif instruction.opname in _ATTRIBUTES and previous is not _NOTHING:
            current = _attribute(previous, instruction.argval)
        if current is not _NOTHING and not isinstance(current, _Self):
            values.append(current)
        previous = current
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            values.extend(_loaded(constant, namespace, cells, None))
    return values


class _Self:
    """The bound method's own object, loaded as its first argument (``self``)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj


_NOTHING = object()


def _named(name: str, namespace: dict, cells: dict) -> Any:
    if name in cells:
        try:
            return cells[name].cell_contents
        except ValueError:  # a closure variable not yet assigned
            return _NOTHING
    return namespace.get(name, _NOTHING) if type(namespace) is dict else _NOTHING


def _attribute(base: Any, name: str) -> Any:
    """``base.name`` for a module (its ``__dict__``) or the method's own object (static lookup); else nothing."""
    if isinstance(base, _Self):
        try:
            return inspect.getattr_static(base.obj, name)
        except AttributeError:
            return _NOTHING
    if type(base) is types.ModuleType:
        return base.__dict__.get(name, _NOTHING)
    return _NOTHING
