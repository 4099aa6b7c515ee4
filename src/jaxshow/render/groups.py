"""Long tables of pytree leaves, grouped by path prefix. No JAX, no IPython.

A model's arguments are hundreds of leaves whose paths share prefixes
(``params['layer3']['attn']['wq']``). Past :data:`FOLD_ROWS` rows a table is
grouped: leaves that share a prefix become one group, headed by the prefix and
the number of leaves, and shown under it with the rest of their path. A group
of more than ``FOLD_ROWS`` leaves is grouped again one level deeper. A prefix
that every leaf shares makes no group of its own. A column with the same value
in every row of such a table (one sharding for all 150 parameters) is said
once, above the table, instead of in every row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence, Union

from jaxshow.render.limits import TextBudget, limit_rows, line
from jaxshow.render.markup import Html, details, join, table, tag
from jaxshow.render.plain import text_table
from jaxshow.report import plural

FOLD_ROWS = 24
"""Tables of up to this many rows are shown flat; longer ones are grouped by pytree prefix."""

_PART = re.compile(r"""\[(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\]]*)\]|\.[^.\[]+""")


def path_parts(path: str) -> list[str]:
    """``"params['a'][0].b"`` -> ``["params", "['a']", "[0]", ".b"]``; a path that does not parse is one part."""
    head = re.match(r"[^.\[]*", path).group()
    parts, position = [head] if head else [], len(head)
    for match in _PART.finditer(path, position):
        if match.start() != position:
            return [path]
        parts.append(match.group())
        position = match.end()
    return parts if position == len(path) else [path]


@dataclass(frozen=True, slots=True)
class Group:
    """Leaves sharing ``prefix``: their row indices (``int``) or smaller groups, in order."""

    prefix: str
    depth: int
    blocks: tuple[Block, ...]
    indices: tuple[int, ...]


Block = Union[int, Group]


def group_rows(paths: list[str]) -> list[Block] | None:
    """The grouped blocks of a table with these leaf paths, or ``None`` when it stays flat."""
    if len(paths) <= FOLD_ROWS:
        return None
    parts = [path_parts(p) for p in paths]
    blocks = _blocks(list(range(len(paths))), parts, 1)
    return blocks if any(isinstance(b, Group) for b in blocks) else None


def _blocks(indices: list[int], parts: list[list[str]], depth: int) -> list[Block]:
    if all(len(parts[i]) <= depth for i in indices):
        return list(indices)
    runs: list[tuple[tuple[str, ...], list[int]]] = []
    for i in indices:
        key = tuple(parts[i][:depth])
        if runs and runs[-1][0] == key:
            runs[-1][1].append(i)
        else:
            runs.append((key, [i]))
    if len(runs) == 1:
        return _blocks(indices, parts, depth + 1)
    blocks: list[Block] = []
    for key, members in runs:
        if len(members) == 1:
            blocks.append(members[0])
        else:
            inner = members if len(members) <= FOLD_ROWS else _blocks(members, parts, depth + 1)
            blocks.append(Group("".join(key), depth, tuple(inner), tuple(members)))
    return blocks


def relative(path: str, prefix: str) -> str:
    """``path`` without the group's ``prefix`` (a leaf shown inside its group)."""
    return path[len(prefix):] if prefix and path.startswith(prefix) and len(path) > len(prefix) else path


_ITEM_BITS = re.compile(r"(\d+)(?:_\w+)?$")


def leaf_bytes(dtype: str, shape: tuple[int, ...]) -> int | None:
    """Bytes of an array of this dtype name and shape, or ``None`` for a dtype without a bit width."""
    if dtype == "bool":
        bits = 8
    else:
        match = _ITEM_BITS.search(dtype)
        if match is None:
            return None
        bits = int(match.group(1))
    size = 1
    for d in shape:
        size *= d
    return size * bits // 8


# --- both forms ---------------------------------------------------------------------------------

Facts = Callable[[Sequence[int]], str]
"""What a group's heading says after its count (``'192.00 KiB'``), from its leaves' row indices."""


def _heading(group: Group, outer: str, facts: Facts | None) -> str:
    extra = facts(group.indices) if facts else ""
    return f"{relative(group.prefix, outer)} — {plural(len(group.indices), 'array')}" + (f", {extra}" if extra else "")


def _limit(blocks: Sequence[Block], budget: TextBudget, attribute: str) -> tuple[Sequence[Block], str | None]:
    """The first ``budget.max_rows`` blocks, and the line for the leaves left out."""
    if budget.max_rows <= 0 or len(blocks) <= budget.max_rows:
        return blocks, None
    hidden = sum(len(b.indices) if isinstance(b, Group) else 1 for b in blocks[budget.max_rows:])
    return blocks[: budget.max_rows], f"… {hidden:,} more (all in {attribute})"


def _opens(group: Group) -> bool:
    """A group of groups starts open (it is an outline); a group of leaves starts closed."""
    return any(isinstance(b, Group) for b in group.blocks)


def common_columns(
    header: tuple[str, ...], rows: Sequence[tuple[str, ...]]
) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[tuple[str, str]]]:
    """A long table without the columns whose value every row shares, and those ``(column, value)`` pairs."""
    if len(rows) <= FOLD_ROWS:
        return header, list(rows), []
    keep = [0] + [i for i in range(1, len(header)) if any(r[i] != rows[0][i] for r in rows)]
    common = [(header[i], rows[0][i]) for i in range(1, len(header)) if i not in keep]
    return tuple(header[i] for i in keep), [tuple(r[i] for i in keep) for r in rows], common


def _common_line(column: str, value: str, count: int, budget: TextBudget) -> str:
    return f"{column} (all {count:,}): {line(value, budget)}"


def grouped_html(
    header: tuple[str, ...], rows: Sequence[tuple[str, ...]], budget: TextBudget, attribute: str, facts: Facts | None = None
) -> Html:
    """A table of leaves whose first column is the path: flat up to ``FOLD_ROWS`` rows, else grouped in ``<details>``."""
    header, rows, common = common_columns(header, rows)
    said = [tag("div", _common_line(column, value, len(rows), budget), cls="js-common") for column, value in common]
    blocks = group_rows([r[0] for r in rows])
    if blocks is None:
        shown, more = limit_rows(rows, budget, attribute)
        return join([*said, table(header, shown, budget, more=more)])
    return join([*said, _blocks_html(header, blocks, rows, "", budget, attribute, facts)])


def _blocks_html(header, blocks, rows, prefix, budget, attribute, facts) -> Html:
    shown, more = _limit(blocks, budget, attribute)
    body: list[object] = []
    for block in shown:
        if isinstance(block, Group):
            inner = _blocks_html(None, block.blocks, rows, block.prefix, budget, attribute, facts)
            body.append(details(_heading(block, prefix, facts), inner, open=_opens(block), cls="js-group"))
        else:
            row = rows[block]
            body.append((relative(row[0], prefix), *row[1:]))
    return table(header, body, budget, more=more, inline=header is not None)


def grouped_text(
    header: tuple[str, ...], rows: Sequence[tuple[str, ...]], budget: TextBudget, attribute: str, facts: Facts | None = None,
    *, indent: str = "    ",
) -> list[str]:
    """The text form of :func:`grouped_html`: a group of leaves is its heading; a group of groups lists them, indented."""
    header, rows, common = common_columns(header, rows)
    said = [indent + _common_line(column, value, len(rows), budget) for column, value in common]
    blocks = group_rows([r[0] for r in rows])
    if blocks is None:
        shown, more = limit_rows(rows, budget, attribute)
        return said + text_table(shown, header, budget, indent=indent, more=more)
    lines = text_table(list(_text_rows(blocks, rows, "", "", budget, attribute, facts)), header, budget, indent=indent)
    return said + lines + [f"{indent}(each array: {attribute})"]


def _text_rows(blocks, rows, prefix, pad, budget, attribute, facts):
    shown, more = _limit(blocks, budget, attribute)
    for block in shown:
        if isinstance(block, Group):
            yield pad + line(_heading(block, prefix, facts), budget)
            if _opens(block):
                yield from _text_rows(block.blocks, rows, block.prefix, pad + "  ", budget, attribute, facts)
        else:
            row = rows[block]
            yield (pad + relative(row[0], prefix), *row[1:])
    if more:
        yield pad + more
