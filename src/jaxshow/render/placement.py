"""Where a compiled program's data lives, drawn: the mesh once, each leaf's spec, device grids, collectives.

HTML and text bodies for the placement part of station ④. The grids are what
``jax.debug.visualize_array_sharding`` draws: one box per block of the array,
labelled with the devices that hold it. No JAX, no IPython.
"""

from __future__ import annotations

from typing import Sequence

from jaxshow.render.groups import grouped_html, grouped_text, shown_paths
from jaxshow.render.limits import TextBudget, line, message
from jaxshow.render.highlight import code_html
from jaxshow.render.markup import Html, code_block, details, join, muted, table, tag
from jaxshow.render.plain import paragraph, text_table
from jaxshow.report import HOME_MEMORY_KINDS, CollectiveCount, CompiledStation, PlacementSpec, ShardingView, plural

_TILE_COLOURS = ("#ddf4ff", "#fff8c5", "#dafbe1", "#ffebe9", "#fbefff", "#f6f8fa", "#ffe7c2", "#d8f3f6")
_GRID_MAX_PX = 360


def placement_rows(c: CompiledStation, specs: Sequence[PlacementSpec]) -> list[tuple[str, str, str]]:
    """``(path, where, layout)``: the spec alone when the mesh is named once, else the whole sharding; XLA's default
    layout in a word."""
    rows = []
    for p, path in zip(specs, shown_paths([p.path for p in specs])):
        if p.sharding is None:
            where = "— (argument unused, pruned)"
        else:
            where = p.spec if (c.mesh and p.spec is not None) else p.sharding
            if p.memory_kind not in HOME_MEMORY_KINDS and c.mesh:
                where += f" in {p.memory_kind}"
        rows.append((path, where, "default (row-major)" if p.default_layout else p.layout or "—"))
    return rows


def one_placement_line(c: CompiledStation) -> str | None:
    """``shardings and formats: all 9 inputs and 9 outputs alike, SingleDeviceSharding(…), in default layouts`` when
    every leaf is placed alike in XLA's default layout (a program on one device, or replicated); else ``None``. Inputs
    the program pruned (unused) are named after it, not made a table of every leaf."""
    used = [p for p in c.inputs if p.sharding is not None]
    pruned = [p.path for p in c.inputs if p.sharding is None]
    rows = placement_rows(c, (*used, *c.outputs))
    if not (used and c.outputs) or len({where for _, where, _ in rows}) > 1 or not all(
            p.default_layout for p in (*used, *c.outputs)):
        return None
    kind = "used input" if pruned else "input"
    words = [f"the {one}" if n == 1 else f"both {one}s" if n == 2 else f"all {n:,} {one}s"
             for n, one in ((len(used), kind), (len(c.outputs), "output"))]
    if words[0].startswith("all ") and words[1].startswith("all "):
        words[1] = words[1][len("all "):]  # all 8 inputs and 7 outputs
    alike = f"shardings and formats: {' and '.join(words)} alike, {rows[0][1]}, in default layouts (row-major)"
    if not pruned:
        return alike
    named = ", ".join(pruned[:UNUSED_NAMED]) + (f" and {len(pruned) - UNUSED_NAMED:,} more" if len(pruned) > UNUSED_NAMED else "")
    return f"{alike}; {named} {'is' if len(pruned) == 1 else 'are'} unused (pruned from the program)"


UNUSED_NAMED = 3
"""Pruned inputs named after the one placement line; the rest are counted."""


def mesh_line(c: CompiledStation) -> str | None:
    if c.mesh is None and not c.per_device:
        return None
    devices = plural(c.device_count, "device") if c.device_count else "its devices"
    return f"mesh {c.mesh} · {devices}" if c.mesh else f"runs on {devices}"


def collectives_line(counts: Sequence[CollectiveCount]) -> str | None:
    if not counts:
        return None
    total = sum(c.count for c in counts)
    kinds = ", ".join(f"{c.kind} ×{c.count:,}" + (f" ({c.in_loops:,} in a loop body: {'it runs' if c.in_loops == 1 else 'they run'} "
                                                   "every iteration)" if c.in_loops else "") for c in counts)
    return f"{plural(total, 'collective')} in the optimised HLO: {kinds}"


def _collective_rows(counts: Sequence[CollectiveCount]) -> list[tuple[str, str, str]]:
    rows = []
    for c in counts:
        shown = ", ".join(str(n) for n in c.lines)
        more = f", … {c.count - len(c.lines):,} more" if c.count > len(c.lines) else ""
        rows.append((c.kind, f"{c.count:,}", f"lines {shown}{more}"))
    return rows


COLLECTIVE_EXCERPT_LINES = 3
"""Lines of the optimised HLO quoted per collective kind, after the line numbers of all."""


def collective_excerpt(c: CompiledStation, budget: TextBudget) -> str:
    """The first few lines of each collective kind, numbered as in ``report.compiled.optimized_hlo_text``."""
    text = c.optimized_hlo_text or ""
    wanted = {n for k in c.collectives for n in k.lines[:COLLECTIVE_EXCERPT_LINES]}
    found: dict[int, str] = {}
    start = 0
    for number in range(1, max(wanted, default=0) + 1):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if number in wanted:
            found[number] = line(text[start:end].strip(), budget)
        start = end + 1
    width = len(str(max(found, default=0)))
    return "\n".join(f"{n:>{width}}  {found[n]}" for n in sorted(found))


def _view_title(view: ShardingView) -> str:
    example = f"{view.example} [{','.join(str(d) for d in view.shape)}]"
    leaves = plural(view.leaves, "input or output", "inputs and outputs")
    title = f"{view.spec} — {leaves}, e.g. {example}"
    if len(view.tiles) == 1:
        title += f" — replicated on {plural(len(view.tiles[0].devices), 'device')}"
    if view.unshown_split_dims:
        title += f" (also split along {plural(view.unshown_split_dims, 'more dimension')}, not drawn)"
    return title


def _edges(view: ShardingView) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    rows = sorted({t.rows for t in view.tiles})
    cols = sorted({t.cols for t in view.tiles})
    return rows, cols


def _grid_html(view: ShardingView) -> Html:
    rows, cols = _edges(view)
    template_rows = " ".join(f"{max(1, b - a)}fr" for a, b in rows)
    template_cols = " ".join(f"{max(1, b - a)}fr" for a, b in cols)
    height = 28 * len(rows) if len(view.dims) < 2 else min(_GRID_MAX_PX, 28 * max(2, len(rows)))
    cells = []
    for tile in view.tiles:
        colour = _TILE_COLOURS[hash(tile.devices) % len(_TILE_COLOURS)] if len(view.tiles) > 1 else _TILE_COLOURS[0]
        cells.append(tag(
            "div", ",".join(str(d) for d in tile.devices) if len(tile.devices) <= 8 else f"{len(tile.devices)} devices",
            style=(f"grid-row: {rows.index(tile.rows) + 1}; grid-column: {cols.index(tile.cols) + 1}; background: {colour}; "
                   "color: #1f2328; border: 1px solid #8c959f; display: flex; align-items: center; justify-content: center; "
                   "font: 11px ui-monospace, monospace; overflow: hidden;"),
            title=f"rows {tile.rows[0]}:{tile.rows[1]}, columns {tile.cols[0]}:{tile.cols[1]} on devices {list(tile.devices)}",
        ))
    return tag("div", *cells, cls="js-grid",
               style=f"display: grid; grid-template-rows: {template_rows}; grid-template-columns: {template_cols}; "
                     f"height: {height}px; max-width: {_GRID_MAX_PX}px; margin: 2px 0 8px;")


def _grid_text(view: ShardingView, indent: str) -> list[str]:
    """Box drawing, one equal-width cell per block: ``│ 0,4 │ 1,5 │``."""
    rows, cols = _edges(view)
    labels = {(t.rows, t.cols): ",".join(str(d) for d in t.devices) if len(t.devices) <= 8 else f"{len(t.devices)} devices"
              for t in view.tiles}
    width = max(len(label) for label in labels.values()) + 2
    rule = lambda left, mid, right: indent + left + mid.join("─" * width for _ in cols) + right  # noqa: E731
    out = [rule("┌", "┬", "┐")]
    for i, r in enumerate(rows):
        out.append(indent + "│" + "│".join(labels.get((r, c), "").center(width) for c in cols) + "│")
        out.append(rule("├", "┼", "┤") if i < len(rows) - 1 else rule("└", "┴", "┘"))
    return out


def placement_html(c: CompiledStation, budget: TextBudget) -> Html:
    """Mesh, device grids, collectives and the input/output table, as one foldable section."""
    if c.placements_unavailable:
        return tag("div", "shardings and formats: ", muted(message(c.placements_unavailable, budget)))
    parts: list[object] = []
    if head := mesh_line(c):
        parts.append(tag("div", line(head, budget)))
    for view in c.sharding_views:
        parts += [tag("div", line(_view_title(view), budget), cls="js-grid-title"), _grid_html(view)]
    if c.more_sharding_views:
        parts.append(muted(f"… {plural(c.more_sharding_views, 'more distinct sharding')}, not drawn"))
    if c.collectives:
        parts.append(details(line(collectives_line(c.collectives) or "", budget),
                             table(("collective", "count", "where"), _collective_rows(c.collectives), budget),
                             code_block(code_html(collective_excerpt(c, budget), "hlo", budget.highlight_max_bytes))))
    where = "spec" if c.mesh else "sharding"
    if alike := one_placement_line(c):
        parts.append(tag("div", line(alike, budget)))
    for title, column, leaves, attribute in () if alike else _tables(c):
        parts += [tag("div", title), grouped_html((column, where, "layout"), placement_rows(c, leaves), budget, attribute)
                  if leaves else muted(f"no {title}")]
    title = "input and output shardings and formats"
    if c.sharding_views:
        title += f" — {plural(len(c.sharding_views) + c.more_sharding_views, 'distinct sharding')}"
    return details(title, join(parts), open=bool(c.sharding_views) and len(c.inputs) <= 50)


def placement_text(c: CompiledStation, budget: TextBudget) -> list[str]:
    if c.placements_unavailable:
        return [paragraph("  shardings and formats: ", message(c.placements_unavailable, budget), "    ", budget)]
    out: list[str] = []
    if head := mesh_line(c):
        out.append(paragraph("  ", line(head, budget), "    ", budget))
    for view in c.sharding_views:
        out.append(paragraph("  ", line(_view_title(view), budget), "    ", budget))
        out += _grid_text(view, "    ")
    if c.more_sharding_views:
        out.append(f"  … {plural(c.more_sharding_views, 'more distinct sharding')}, not drawn")
    if c.collectives:
        out.append(paragraph("  ", f"{collectives_line(c.collectives)}:", "    ", budget))
        out += text_table(_collective_rows(c.collectives), None, budget, indent="    ")
        out += ["      " + row for row in collective_excerpt(c, budget).splitlines()]
    where = "spec" if c.mesh else "sharding"
    if alike := one_placement_line(c):
        out.append(paragraph("  ", alike, "    ", budget))
    for title, column, leaves, attribute in () if alike else _tables(c):
        out += grouped_text((column, where, "layout"), placement_rows(c, leaves), budget, attribute) if leaves else [f"  no {title}"]
    return out


def _tables(c: CompiledStation) -> tuple[tuple[str, str, tuple, str], ...]:
    """The placement tables: ``(title, first column, leaves, the attribute that holds them all)``."""
    return (("inputs", "input", c.inputs, "report.compiled.inputs"), ("outputs", "output", c.outputs, "report.compiled.outputs"))
