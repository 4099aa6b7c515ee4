"""Where a compiled program's inputs and outputs live: each leaf's spec, the mesh named once, device grids.

``placements`` reads ``Compiled.input_shardings``/``output_shardings`` and the
formats into :class:`~jaxshow.report.PlacementSpec` rows; ``mesh_summary``
names the one mesh they share; ``sharding_views`` draws, per distinct
sharding, which device holds which block of an array (what
``jax.debug.visualize_array_sharding`` draws), from
``Sharding.devices_indices_map``; ``placement_text`` says in a few words
where a call's array arguments are placed (``%jaxcache``). ``type_level_sharding`` is the sharding a
``Traced`` aval carries, shown only where it means something (an Explicit
mesh axis); ``sharding_texts`` writes a sharding as its spec and its mesh. Uses JAX, never IPython.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple, Sequence

import jax

from jaxshow import _jax_compat
from jaxshow.capture.arguments import leaves_with_path
from jaxshow.reprs import is_a
from jaxshow.report import HOME_MEMORY_KINDS, DeviceTile, PlacementSpec, ShardingView, plural

SHARDING_VIEWS_MAX = 8
"""Distinct shardings drawn per station; the rest are counted."""


def process_index() -> int:
    """This process's index among the processes of a ``jax.distributed`` run (0 when there is one).

    Never starts a backend (a cell may set ``jax_num_cpu_devices`` for the next one):
    with none up yet, this is process 0.
    """
    if not _jax_compat.backends_initialized()[0]:
        return 0
    try:
        return int(jax.process_index())
    except Exception:  # noqa: BLE001 - no backend could start: a report has nothing to say about processes
        return 0


def sharding_texts(sharding: Any) -> tuple[str, str | None, str | None]:
    """``(the whole sharding, its spec, its mesh)``: ``P('data', None)`` and ``Mesh('data': 2, 'model': 4,
    axis_types=(Auto, Auto))``, a memory kind asked for added to the spec (``(pinned_host)``); spec and mesh ``None``
    for a sharding without a mesh. A traced type's ``AbstractMesh`` is written as a ``Mesh`` is, so a call's
    placed arguments and its outputs' types name one mesh."""
    whole, spec, mesh = str(sharding), _spec_text(sharding), getattr(sharding, "mesh", None)
    if spec is None or mesh is None:
        return whole, None, None
    kind = getattr(sharding, "memory_kind", None)
    if kind not in HOME_MEMORY_KINDS:
        spec += f" ({kind})"
    sizes, axis_types = _jax_compat.mesh_sizes(mesh), getattr(mesh, "axis_types", None)
    if sizes is None or axis_types is None:  # a mesh without named axis sizes or types: JAX's own text
        return whole, spec, str(mesh)
    return whole, spec, f"Mesh({sizes}, axis_types={tuple(axis_types)!r})"


def type_level_sharding(aval: Any) -> Any:
    """The sharding in an abstract value's type, when one of its mesh's axes is Explicit.

    Under Auto (GSPMD) or Manual axes the type says nothing about where the
    array lives (it reads ``P(None, None)`` for an array sharded over ``'data'``):
    the compiled program's input shardings are the truth, so nothing is said here.
    """
    sharding = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    if sharding is None or getattr(mesh, "empty", True):
        return None
    if jax.sharding.AxisType.Explicit not in tuple(getattr(mesh, "axis_types", ()) or ()):
        return None
    return sharding


def placements(names: Sequence[str], shardings: Sequence[Any], formats: Sequence[Any] | None) -> tuple[PlacementSpec, ...]:
    """One row per flat leaf: full sharding text, its spec, memory kind and layout."""
    rows = []
    for i, (path, sharding) in enumerate(zip(names, shardings)):
        fmt = formats[i] if formats is not None and i < len(formats) else None
        layout = getattr(fmt, "layout", fmt)
        rows.append(PlacementSpec(
            path=path,
            sharding=None if sharding is None else str(sharding),
            layout=None if layout is None else str(layout),
            spec=_spec_text(sharding),
            memory_kind=getattr(sharding, "memory_kind", None),
            default_layout=layout is not None and _jax_compat.is_default_layout(layout),
        ))
    return tuple(rows)


def on_shared_mesh(shardings: Sequence[Any], shapes: Sequence[tuple[int, ...] | None]) -> list[Any]:
    """``shardings``, each one XLA chose without a mesh (``GSPMDSharding``: a ``jax.shard_map`` input jit was given no
    sharding for) as a spec on the one mesh the program's other leaves name, where that places its leaf alike."""
    meshes = {id(mesh): mesh for s in shardings if (mesh := getattr(s, "mesh", None)) is not None and getattr(s, "spec", None) is not None}
    if len(meshes) != 1:
        return list(shardings)
    [mesh] = meshes.values()
    shown = []
    for sharding, shape in zip(shardings, shapes):
        named = None
        if sharding is not None and shape is not None and getattr(sharding, "mesh", None) is None and len(sharding.device_set) > 1:
            named = _jax_compat.named_on_mesh(sharding, mesh)
            if named is not None and not named.is_equivalent_to(sharding, len(shape)):
                named = None
        shown.append(named if named is not None else sharding)
    return shown


def mesh_summary(shardings: Sequence[Any]) -> tuple[str | None, int | None]:
    """``(the mesh every named sharding shares, or None, number of devices the program runs on)``."""
    meshes = {str(s.mesh) for s in shardings if s is not None and getattr(s, "mesh", None) is not None}
    counts = [len(s.device_set) for s in shardings if s is not None and hasattr(s, "device_set")]
    return (meshes.pop() if len(meshes) == 1 else None), (max(counts) if counts else None)


def sharding_views(leaves: Sequence[tuple[str, Any, tuple[int, ...] | None]]) -> tuple[tuple[ShardingView, ...], int]:
    """Device grids for the distinct multi-device shardings of ``(path, sharding, shape)`` leaves, and how many more there were.

    Leaves with the same spec text and rank share one picture (drawn for the
    first such leaf's shape); single-device placements get none.
    """
    groups: dict[tuple[str, int], list[tuple[str, Any, tuple[int, ...]]]] = {}
    for path, sharding, shape in leaves:
        if sharding is None or shape is None or len(getattr(sharding, "device_set", ())) < 2:
            continue
        groups.setdefault((str(sharding), len(shape)), []).append((path, sharding, shape))
    views: dict[tuple, ShardingView] = {}
    for members in groups.values():
        path, sharding, shape = members[0]
        view = _view(sharding, shape, example=path, leaves=len(members))
        if view is None:
            continue
        drawn = len(view.dims) if len(view.tiles) > 1 else None  # a replicated placement is one picture at any rank
        key = (view.spec, drawn, tuple(t.devices for t in view.tiles))
        if key in views:
            views[key] = dataclasses.replace(views[key], leaves=views[key].leaves + view.leaves)
        else:
            views[key] = view
    shown = list(views.values())
    return tuple(shown[:SHARDING_VIEWS_MAX]), max(0, len(shown) - SHARDING_VIEWS_MAX)


PLACEMENT_LEAVES_SHOWN = 4
"""Arguments named in :func:`placement_text`; the others are counted."""


class PlacedLeaf(NamedTuple):
    """One array argument of a call: its path in the arguments' pytree, its sharding, and whether ``jax.device_put``
    committed it to its device(s)."""
    path: tuple
    sharding: Any
    committed: bool


def placed_leaves(args: tuple, kwargs: dict) -> tuple[PlacedLeaf, ...]:
    """Where each array argument of a call is placed, kept to compare a later call's with (no text made). A pytree
    whose flatten is the user's own is not flattened again (:func:`~jaxshow.capture.arguments.leaves_with_path`)."""
    return tuple(PlacedLeaf(path, leaf.sharding, bool(getattr(leaf, "committed", False)))
                 for path, leaf in leaves_with_path((args, kwargs)) if is_a(leaf, jax.Array) and not is_a(leaf, jax.core.Tracer))


def placement_text(parameters: Sequence[str], leaves: Sequence[PlacedLeaf], before: Sequence[PlacedLeaf] | None = None) -> str | None:
    """Where a call's array arguments (``leaves``) are placed, in a few words: ``x P('model', 'data'), w P('model', None)
    on Mesh(...)``, each by its parameter name (``parameters``: the positional ones) and spec, the mesh named once; a
    single-device placement by its device (``committed to cpu:0`` where ``jax.device_put`` committed it there).

    ``before``: the same function's arguments at the call compared last (its last compile, or its first call of the
    cell). Where they are the same arrays by path, each on a mesh of the same axes as before (else that call had
    another trace: its types name the mesh's axes), the ones placed otherwise come first, ``xb: now P('data', None),
    before P(None, None)``, and the others are counted (``3 other arrays placed as before``): JAX compiles again for
    an argument's placement, and it may be the fifth; where none moved, ``placed as before: …``. ``None`` when no
    argument is an array.
    """
    if not leaves:
        return None
    comparable = before is not None and [(b.path, _abstract_mesh(b.sharding)) for b in before] == [
        (leaf.path, _abstract_mesh(leaf.sharding)) for leaf in leaves]
    moved = [(now, old) for now, old in zip(leaves, before) if not _placed_alike(now, old)] if comparable else []
    if moved:
        return _moved_text(parameters, moved, len(leaves))
    shown = leaves[:PLACEMENT_LEAVES_SHOWN]
    text = ", ".join(f"{_leaf_name(leaf.path, parameters)} {_placed_text(leaf)}" for leaf in shown)
    text += f", … {len(leaves) - len(shown)} more" if len(leaves) > len(shown) else ""
    meshes = _mesh_texts(shown)
    return ("placed as before: " if comparable else "") + text + (f" on {meshes.pop()}" if len(meshes) == 1 else "")


def _moved_text(parameters: Sequence[str], moved: list[tuple[PlacedLeaf, PlacedLeaf]], count: int) -> str:
    """The arrays placed otherwise than before, ``(now, before)``, first few by name; how many more, and how many of the
    ``count`` arrays are placed as before."""
    shown = moved[:PLACEMENT_LEAVES_SHOWN]
    meshes = _mesh_texts([leaf for pair in shown for leaf in pair])
    apart = len(meshes) > 1  # each spec then says its mesh: the same spec on another mesh is another placement
    lines = [f"{_leaf_name(now.path, parameters)}: now {_placed_text(now, apart)}, before {_placed_text(old, apart)}"
             for now, old in shown]
    lines += [f"{len(moved) - len(shown)} more placed otherwise"] if len(moved) > len(shown) else []
    lines += [f"{plural(count - len(moved), 'other array')} placed as before"] if count > len(moved) else []
    return "; ".join(lines) + (f" (on {meshes.pop()})" if len(meshes) == 1 else "")


def _mesh_texts(leaves: Sequence[PlacedLeaf]) -> set[str]:
    """The meshes of the leaves placed by a spec on one (:func:`_mesh_text`)."""
    return {_mesh_text(leaf.sharding.mesh) for leaf in leaves if _spec_text(leaf.sharding) is not None}


def _abstract_mesh(sharding: Any) -> tuple | None:
    """The axes of the mesh of a sharding (names, sizes, types: what a trace's types hold of it), ``None`` for one of
    no mesh (a single device)."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        return None
    try:
        return tuple(mesh.axis_names), tuple(mesh.axis_sizes), str(getattr(mesh, "axis_types", ""))
    except Exception:  # noqa: BLE001 - a mesh of another kind: known by its text
        return (str(mesh),)


def _placed_alike(now: PlacedLeaf, before: PlacedLeaf) -> bool:
    try:
        return now.committed == before.committed and bool(now.sharding == before.sharding)
    except Exception:  # noqa: BLE001 - a sharding type that does not compare: said as placed otherwise
        return False


def _placed_text(leaf: PlacedLeaf, mesh: bool = False) -> str:
    """``P('data', None)`` (``on Mesh(...)`` after it with ``mesh``), or the device of a single-device placement
    (``committed to cpu:0``)."""
    spec = _spec_text(leaf.sharding)
    if spec is not None:
        return f"{spec} on {_mesh_text(leaf.sharding.mesh)}" if mesh else spec
    devices = getattr(leaf.sharding, "device_set", ())
    placed = "committed to" if leaf.committed else "on"  # jax.device_put(x, device) commits x
    return f"{placed} {next(iter(devices))}" if len(devices) == 1 else str(leaf.sharding)


MESH_ORDER_SHOWN = 16
"""Device ids named for a mesh over some devices, or not in ascending order."""


def _mesh_text(mesh: Any) -> str:
    """A mesh as JAX writes it, which leaves out its devices, with them where they are not all devices in ascending order
    (:func:`mesh_devices_text`)."""
    return f"{mesh}{mesh_devices_text(mesh)}"


@functools.lru_cache(maxsize=64)
def mesh_devices_text(mesh: Any) -> str:
    """What JAX's text of a mesh leaves out of its devices: `` (devices 4, 5, 6, 7)`` for a mesh over some of its
    platform's devices, `` (its devices in the order 7, 6, …)`` for one over them in another order than ascending;
    ``""`` for one over all of them in order, or a mesh with no devices (an ``AbstractMesh``). A mesh of the same axes
    over other devices, or in another order, is another placement, which JAX compiles for again."""
    try:
        ids = [int(i) for i in mesh.device_ids.flat]
        every = len(jax.devices(mesh.devices.flat[0].platform))
    except Exception:  # noqa: BLE001 - a mesh type without devices
        return ""
    shown = ", ".join(map(str, ids[:MESH_ORDER_SHOWN])) + (", …" if len(ids) > MESH_ORDER_SHOWN else "")
    if ids != sorted(ids):
        return f" (its devices in the order {shown})"
    return "" if len(ids) == every else f" (devices {shown})"


def _leaf_name(path: tuple, parameters: Sequence[str]) -> str:
    head, key, rest = path[0], path[1], path[2:]
    if getattr(head, "idx", None) == 0:
        index = key.idx
        name = parameters[index] if index < len(parameters) else f"args[{index}]"
    else:
        name = str(getattr(key, "key", key))
    return name + jax.tree_util.keystr(rest)


def _spec_text(sharding: Any) -> str | None:
    """``P('data', None)``; reduced and unreduced axes as JAX writes them, sorted: ``P('i', unreduced={'j'})``."""
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return None
    parts = [repr(p) if isinstance(p, str) or p is None else str(p) for p in _jax_compat.spec_partitions(spec)]
    axes = [f"{kind}={{{', '.join(repr(a) for a in sorted(named, key=str))}}}"
            for kind in ("unreduced", "reduced") if (named := getattr(spec, kind, None))]
    if axes and (unreduced_kind := getattr(spec, "unreduced_kind", None)):  # JAX writes the kind beside either set
        axes.append(f"unreduced_kind={getattr(unreduced_kind, 'name', unreduced_kind)}")
    return "P(" + ", ".join(parts + axes) + ")"


def _view(sharding: Any, shape: tuple[int, ...], *, example: str, leaves: int) -> ShardingView | None:
    try:
        index_map = sharding.devices_indices_map(tuple(shape))
    except Exception:  # noqa: BLE001 - a sharding that cannot map this shape (or an exotic sharding type)
        return None
    blocks = {
        device.id: tuple(index.indices(size)[:2] if isinstance(index, slice) else (int(index), int(index) + 1)
                         for index, size in zip(indices, shape))
        for device, indices in index_map.items()
    }
    split = [d for d in range(len(shape)) if len({block[d] for block in blocks.values()}) > 1]
    dims = tuple(range(len(shape))) if len(shape) <= 2 else tuple(split[:2])  # a matrix is drawn as rows x columns
    by_tile: dict[tuple[tuple[int, int], tuple[int, int]], list[int]] = {}
    for device, block in blocks.items():
        rows = block[dims[0]] if len(dims) > 1 else (0, 1)
        cols = block[dims[-1]] if dims else (0, 1)
        by_tile.setdefault((rows, cols), []).append(device)
    tiles = tuple(DeviceTile(rows=r, cols=c, devices=tuple(sorted(ds))) for (r, c), ds in sorted(by_tile.items()))
    return ShardingView(spec=_spec_text(sharding) or str(sharding), shape=tuple(shape), dims=dims, tiles=tiles,
                        leaves=leaves, example=example, unshown_split_dims=len(set(split) - set(dims)))
