"""The user's names for the leaves flax NNX's ``nnx.jit`` passes to its jitted function.

``nnx.jit`` splits each graph node argument (a module, an optimizer) into a
``NodeStates`` pytree node: its ``GraphDef`` (a leafless pytree node whose
metadata it is) and one flat list of the graph's leaves, which JAX names
``model.states[0][7]``. flax's
own ``graphlib.unflatten`` of that ``GraphDef`` with each leaf's index in its
place, flattened again with paths, says which variable each index is:
``model.l1.kernel``, ``model.layers[0].kernel``. Only the pytree definition is read (never the user's
arrays or objects), only where flax is imported, and only when a report shows
the leaves; anything else leaves JAX's names. No IPython.
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any, Sequence

_LEAF = re.compile(r"^(?P<arg>.+)\.states\[0\]\[(?P<i>\d+)\]$")


def graph_leaf_names(treedef: Any, names: Sequence[str]) -> dict[str, str]:
    """``{JAX's name of a leaf: the user's}`` for the leaves ``names`` (in flat order) of a call whose input pytree is
    ``treedef``, for every leaf under an NNX graph node; empty where there are none, or flax is not imported. Never
    raises."""
    if "flax.nnx" not in sys.modules or treedef is None:
        return {}
    try:
        if treedef.num_leaves != len(names):
            return {}
        found: dict[str, str] = {}
        _walk(treedef, 0, names, found)
        return found
    except Exception:  # noqa: BLE001 - another flax, another shape: JAX's names stand
        return {}


def graph_output_names(in_tree: Any, in_names: Sequence[str], out_tree: Any, out_names: Sequence[str]) -> dict[str, str]:
    """``{JAX's name of an output leaf: the user's}`` for an ``nnx.jit`` call, whose jitted function returns the graph
    nodes it was passed, updated, then its own result: ``result[0][0].states[0][1]`` is ``model.l1.kernel`` (the first
    positional argument's, by its name among the inputs ``in_names``), ``result[1]['opt']…`` the keyword argument
    ``opt``'s, and ``result[2]`` the function's ``result``. Empty where the call is not shaped so. Never raises."""
    if "flax.nnx" not in sys.modules or in_tree is None or out_tree is None:
        return {}
    try:
        if out_tree.num_leaves != len(out_names) or len(out_tree.children()) != 3 or in_tree.num_leaves != len(in_names):
            return {}
        owners = _argument_names(in_tree, in_names)
        given = [_owned(name, owners) for name in out_names]
        if any(name is None for name in given):
            return {}
        found: dict[str, str] = {}
        _walk(out_tree, 0, given, found)
        return {name: found.get(mine, mine) for name, mine in zip(out_names, given) if found.get(mine, mine) != name}
    except Exception:  # noqa: BLE001 - another flax, another shape: JAX's names stand
        return {}


_OUTPUT = re.compile(r"^result\[(?P<group>[01])\]\[(?P<at>\d+|'[^']*')\](?P<rest>.*)$")


def _owned(name: str, owners: dict[str, str]) -> str | None:
    """An ``nnx.jit`` output leaf's name with its argument's name in place of ``result[0][i]`` (or ``result[1]['k']``),
    and the function's own result's ``result[2]`` as ``result``; ``None`` where neither."""
    if name.startswith("result[2]"):
        return "result" + name[len("result[2]"):]
    m = _OUTPUT.match(name)
    owner = owners.get(f"{m['group']}{m['at']}") if m is not None else None
    return owner + m["rest"] if owner is not None else None


def _argument_names(in_tree: Any, in_names: Sequence[str]) -> dict[str, str]:
    """The name JAX gives each graph-node argument of a ``((args), {kwargs})`` call, keyed ``0<position>`` or
    ``1'<keyword>'``: the part before ``.states[0][i]`` of its leaves' names."""
    owners: dict[str, str] = {}
    start = 0
    for group, node in enumerate(in_tree.children()):
        keys = [str(i) for i in range(len(node.children()))] if group == 0 else [repr(k) for k in node.node_data()[1] or ()]
        for key, child in zip(keys, node.children()):
            first = _LEAF.match(in_names[start]) if child.num_leaves else None
            if first is not None:
                owners[f"{group}{key}"] = first["arg"]
            start += child.num_leaves
    return owners


def _walk(node: Any, start: int, names: Sequence[str], found: dict[str, str]) -> None:
    """Name the leaves under every ``NodeStates`` of one state in ``node`` (its first leaf at ``start``)."""
    graphdef = _graphdef(node)
    if graphdef is not None:
        leaves = names[start:start + node.num_leaves]
        matches = [_LEAF.match(name) for name in leaves]
        if all(m is not None and int(m["i"]) == i for i, m in enumerate(matches)):
            paths = _paths(graphdef, node.num_leaves) or ()
            found.update({name: m["arg"] + _path_text(path) for name, m, path in zip(leaves, matches, paths)})
        return
    for child in node.children():
        _walk(child, start, names, found)
        start += child.num_leaves


def _path_text(path: tuple[Any, ...]) -> str:
    """A graph path as the user reaches it: ``.linear1.kernel``, ``.layers[0].kernel`` (a list's index, ``nnx.Sequential``),
    ``.opt_state[0].mu.linear1.bias``."""
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" if str(key).isidentifier() else f"[{key!r}]"
                   for key in path)


def _graphdef(node: Any) -> Any:
    """The ``GraphDef`` of an ``nnx.jit`` ``NodeStates`` node (a leafless child of it, whose pytree metadata it is),
    where all its leaves are in one state."""
    data = node.node_data()
    if data is None or getattr(data[0], "__name__", None) != "NodeStates":
        return None
    graphdefs = [c.node_data()[1] for c in node.children()
                 if c.num_leaves == 0 and c.node_data() is not None and type(c.node_data()[1]).__name__ == "GraphDef"]
    if len(graphdefs) != 1 or getattr(graphdefs[0], "num_leaves", None) != node.num_leaves:
        return None
    return graphdefs[0]


def _paths(graphdef: Any, count: int) -> list[tuple[Any, ...]] | None:
    """The graph path of each of ``graphdef``'s ``count`` leaves, by index, from flax itself; ``None`` if not all found."""
    from flax.nnx import graphlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # flax's deprecation notes on reading a variable's value
        node = graphlib.unflatten(graphdef, list(range(count)))
        _, flat = graphlib.flatten(node, with_paths=True)
        paths: list[tuple[Any, ...] | None] = [None] * count
        for path, leaf in flat:
            value = leaf.get_value() if hasattr(leaf, "get_value") else getattr(leaf, "value", leaf)
            if type(value) is int and 0 <= value < count:
                paths[value] = tuple(path)
    return paths if all(p is not None for p in paths) else None  # type: ignore[return-value]
