"""What of the user's own code JAX runs to parse a call's arguments, so that jaxshow never runs it again.

JAX's dispatch flattens a call's dynamic arguments (running each pytree node's
registered flatten) and hashes and compares its static values; a plain cell runs
that code once per call. Reading a cache hit's stations back from JAX's caches
would parse the arguments a second time, and walking them for their placements a
third: a flatten of the user's that prints or counts would show it. Here the
user's code is told from JAX's and libraries' (:func:`~jaxshow.capture.sources.is_user_file`),
and leaves are read without running it. Never imports IPython.
"""

from __future__ import annotations

import types
from typing import Any

import jax

from jaxshow import _jax_compat
from jaxshow.capture.sources import is_user_file


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
    for value in values:
        kind = type(value)
        for method in ("__hash__", "__eq__"):
            name = _users(getattr(getattr(kind, method, None), "__code__", None))
            if name is not None:
                return name
        if kind is tuple or kind is frozenset:
            name = _users_hash(list(value))
            if name is not None:
                return name
    return None


def _stop(node: Any) -> bool:
    return users_flatten(node) is not None


def _users(code: types.CodeType | None) -> str | None:
    if not isinstance(code, types.CodeType) or not is_user_file(code.co_filename):
        return None
    return getattr(code, "co_qualname", code.co_name)
