"""What of the user's own code JAX runs to parse a call's arguments, so that jaxshow never runs it again.

JAX's dispatch flattens a call's dynamic arguments (running each pytree node's
registered flatten) and hashes and compares its static values; a plain cell runs
that code once per call. Reading a cache hit's stations back from JAX's caches
would parse the arguments a second time, and walking them for their placements a
third: a flatten of the user's that prints or counts would show it. Here the
user's code is told from JAX's and libraries' (:func:`~jaxshow.capture.sources.is_user_file`;
a method made with ``exec`` in the notebook's namespace is the user's too, and one that is neither a
function nor built in, a ``MagicMock``'s, may run anything), and leaves are read without running it.
Never imports IPython.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import types
from typing import Any

import jax
import numpy as np

from jaxshow import _jax_compat
from jaxshow.capture.sources import is_user_file
from jaxshow.reprs import runs_users_repr


def users_flatten(node: Any) -> str | None:
    """``Box.tree_flatten``: the user's own function JAX's pytree registry runs to flatten ``node``; else ``None``."""
    return _users(_jax_compat.pytree_flatten_code(type(node)))


def leaves_with_path(tree: Any) -> list[tuple[Any, Any]]:
    """``tree``'s leaves with their key paths as JAX flattens it, a node whose flatten is the user's own kept whole
    (its flatten not run)."""
    return jax.tree_util.tree_flatten_with_path(tree, is_leaf=_stop)[0]


def users_code(dynamic: Any, static: list[Any]) -> str | None:
    """The first of the user's own functions parsing these arguments runs: a pytree node's flatten among the
    ``dynamic`` arguments, a ``static`` value's ``__hash__`` or ``__eq__`` (inside tuples too); ``None`` when none."""
    found: list[str] = []

    def stop(node: Any) -> bool:
        name = users_flatten(node)
        if name is not None and not found:
            found.append(name)
        return name is not None

    jax.tree_util.tree_leaves(dynamic, is_leaf=stop)
    return found[0] if found else _users_hash(static)


def _users_hash(values: list[Any]) -> str | None:
    """The first ``__hash__`` or ``__eq__`` of the user's that hashing and comparing ``values`` runs, looking inside
    tuples, frozensets and the fields a dataclass's generated methods hash and compare."""
    pending = list(values)
    while pending:
        value = pending.pop()
        kind = type(value)
        for method in ("__hash__", "__eq__"):
            name = _users_method(kind, method)
            if name is not None:
                return name
        if kind is tuple or kind is frozenset:
            pending.extend(value)
        elif _generated_by_dataclasses(kind):
            try:
                pending.extend(object.__getattribute__(value, f.name) for f in dataclasses.fields(kind) if f.compare)
            except Exception:  # noqa: BLE001 - a field that cannot be read plainly: its class's methods may run anything
                return f"{kind.__qualname__}.__hash__"
    return None


_BUILT_IN = (types.WrapperDescriptorType, types.BuiltinFunctionType, types.MethodDescriptorType)


def _users_method(kind: type, method: str) -> str | None:
    found = inspect.getattr_static(kind, method, None)  # no descriptor of the class's runs
    if found is None or isinstance(found, _BUILT_IN) or _generated_by_dataclasses(kind, found):
        return None
    function = getattr(found, "__func__", found)
    code = getattr(function, "__code__", None)
    if isinstance(code, types.CodeType):
        return _users(code, getattr(function, "__globals__", {}).get("__name__"))
    return f"{getattr(kind, '__qualname__', kind.__name__)}.{method}"  # a callable object (a MagicMock's): its code is unknown


def _generated_by_dataclasses(kind: type, method: Any = None) -> bool:
    """Whether ``kind`` is a dataclass whose ``method`` (by default its ``__hash__``) is the one ``dataclasses`` wrote,
    which hashes or compares the fields and nothing else."""
    if not dataclasses.is_dataclass(kind):
        return False
    found = inspect.getattr_static(kind, "__hash__", None) if method is None else method
    code = getattr(found, "__code__", None)
    return isinstance(code, types.CodeType) and code.co_filename == "<string>" and code.co_name in ("__hash__", "__eq__")


def looks_up_plainly(obj: Any) -> bool:
    """Whether reading ``obj``'s attributes and comparing it runs Python's code only: its class has no ``__getattr__``
    and keeps a built-in ``__getattribute__`` and ``__eq__`` (a proxy's lookups, a ``MagicMock``'s, run code of
    their own)."""
    kind = type(obj)
    return (inspect.getattr_static(kind, "__getattr__", None) is None
            and all(isinstance(inspect.getattr_static(kind, name, None), _BUILT_IN) for name in ("__getattribute__", "__eq__")))


def _stop(node: Any) -> bool:
    return users_flatten(node) is not None


def _prints_users_code(tree: Any) -> bool:
    """Whether printing the pytree structure ``tree`` runs a ``__repr__`` of the user's: a dict key's, a dataclass's meta
    field's (JAX runs them once, to name the arguments)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        data = node.node_data()
        if data is not None and runs_users_repr(data[1]):
            return True
        pending.extend(node.children())
    return False


_PLAIN_NODES = (list, tuple, type(None))
_PLAIN_LEAVES = (jax.Array, np.ndarray, np.generic, int, float, complex)

STRUCTURE_LIMIT = 20_000
"""Characters kept of an argument's pytree structure (:func:`structure_text`); a longer one ends with a digest of it all."""


def structure_text(value: Any) -> str | None:
    """``value``'s pytree structure, which JAX's cache key holds (``None``, ``(*, *)``, ``{'b': *, 'w': *}``; ``*`` for one
    leaf), read without running the user's code: a node whose flatten is the user's stands as one leaf. ``None`` where
    it cannot be read. Only a tree with more than arrays, numbers and JAX's containers with plain keys is walked for a
    ``__repr__`` of the user's before it is printed."""
    unusual = []

    def stop(node: Any) -> bool:
        if _stop(node):
            return True
        kind = type(node)
        if kind is dict:
            if any(type(k) is not str for k in node):
                unusual.append(kind)
        elif kind not in _PLAIN_NODES and not issubclass(kind, _PLAIN_LEAVES):  # type(): a proxy's __class__ is its code
            unusual.append(kind)
        return False

    try:
        tree = jax.tree_util.tree_structure(value, is_leaf=stop)
        if unusual and _prints_users_code(tree):
            return None
        text = str(tree)
    except Exception:  # noqa: BLE001 - a value JAX cannot flatten: JAX's own error is the user's
        return None
    if text.startswith("PyTreeDef(") and text.endswith(")"):
        text = text[len("PyTreeDef("):-1]
    if len(text) <= STRUCTURE_LIMIT:
        return text
    digest = hashlib.blake2s(text.encode(), digest_size=4).hexdigest()
    return f"{text[:STRUCTURE_LIMIT]}… ({len(text):,} characters, digest {digest})"


def _users(code: types.CodeType | None, namespace: str | None = None) -> str | None:
    """``code``'s qualified name where it is the user's: in a cell or a user file, or made from a string (``exec``)
    in the notebook's own namespace, ``namespace`` ``"__main__"``; else ``None``."""
    if not isinstance(code, types.CodeType):
        return None
    if not (is_user_file(code.co_filename) or (code.co_filename.startswith("<") and namespace == "__main__")):
        return None
    return getattr(code, "co_qualname", code.co_name)
