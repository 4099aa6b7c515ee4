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

import collections
import functools
import itertools
import operator
import re
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence, Union

from jaxshow.render.limits import TextBudget, limit_rows, line
from jaxshow.render.markup import Html, details, join, table, tag
from jaxshow.render.plain import paragraph, text_table
from jaxshow.report import plural

FOLD_ROWS = 24
"""Tables of up to this many rows are shown flat; longer ones are grouped by pytree prefix."""

_PART = re.compile(r"""^[^.\[]+|\[(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\]]*)\]|\.[^.\[]+""")


def path_parts(path: str) -> list[str]:
    """``"params['a'][0].b"`` -> ``["params", "['a']", "[0]", ".b"]``; a path that does not parse is one part."""
    parts = _PART.findall(path)
    return parts if "".join(parts) == path else [path]


_OBJECT_KEY = re.compile(r"^\[(?P<type>[A-Za-z_][\w.]*)\((?P<inside>.*)\)\]$", re.S)
"""A dict key that is an object, by its repr (checkify's ``[ErrorEffect(error_type=<class '…'>, …)]``)."""
_OBJECT_KEY_CHARS = 24
_CLASS = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>")


def shown_paths(paths: Sequence[str]) -> list[str]:
    """Each leaf's path as a table shows it: a long object key cut to its type (``[ErrorEffect(…)]``), or where two
    paths would then read alike, to its type and first field (``[ErrorEffect(error_type=NaNError, …)]``), or else
    whole. The record keeps each path whole."""
    shown = list(paths)
    for fields in (1, 0):
        short = ["".join(_object_key(part, fields) for part in path_parts(path)) for path in paths]
        alike = {s for s, n in collections.Counter(short).items() if n > 1}
        shown = [s if s not in alike else before for s, before in zip(short, shown)]
    return shown


def _object_key(part: str, fields: int) -> str:
    """``part`` of a path; an object key of it with its first ``fields`` fields (0 or 1), a class by its name."""
    m = _OBJECT_KEY.match(part)
    if m is None or len(part) <= _OBJECT_KEY_CHARS:
        return part
    inside, depth = _CLASS.sub(r"\1", m.group("inside")), 0
    for i, char in enumerate(inside):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            inside = inside[:i]
            break
    return f"[{m.group('type')}({inside + ', ' if fields else ''}…)]"


class Hidden(NamedTuple):
    """What a level leaves out past its ``max_rows`` blocks: ``rows`` (a leaf or a group each) of ``arrays`` leaves."""

    rows: int = 0
    arrays: int = 0


@dataclass(frozen=True, slots=True)
class Group:
    """Leaves sharing ``prefix``: the first blocks of its row indices (``int``) or smaller groups, in order.

    ``indices`` holds every leaf of the group; ``hidden`` what its ``blocks``
    leave out (past the budget's ``max_rows`` blocks).
    """

    prefix: str
    blocks: tuple[Block, ...]
    indices: tuple[int, ...]
    hidden: Hidden = Hidden()


Block = Union[int, Group]


class _Prefixes:
    """The prefix of each path at each depth, parsed once per path and only for the rows looked at."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = paths
        self._keys: dict[int, list[str]] = {}

    def key(self, i: int, depth: int) -> str:
        keys = self._keys.get(i)
        if keys is None:
            keys = self._keys[i] = list(itertools.accumulate(path_parts(self.paths[i])))
        return keys[depth - 1] if len(keys) >= depth else self.paths[i]

    def share(self, indices: Sequence[int], key: str) -> bool:
        """Whether every path in ``indices`` starts with the whole parts of ``key``."""
        n = len(key)
        return all(self.paths[i].startswith(key) and (len(self.paths[i]) == n or self.paths[i][n] in "[.") for i in indices)


def group_rows(paths: Sequence[str], max_blocks: int = 0) -> tuple[tuple[Block, ...], Hidden] | None:
    """The first ``max_blocks`` (0: all) grouped blocks of a table with these leaf paths, and what is left out.

    ``None`` when the table stays flat: up to ``FOLD_ROWS`` rows, or no two of
    the leaves shown share a prefix. Past the rows shown, a path is parsed only
    as deep as its row, to count the rows left out.
    """
    return None if len(paths) <= FOLD_ROWS else _grouped(tuple(paths), max_blocks)


@functools.lru_cache(maxsize=8)
def _grouped(paths: tuple[str, ...], max_blocks: int) -> tuple[tuple[Block, ...], Hidden] | None:
    """:func:`group_rows`, once per table: a report groups the same paths in both forms, and inputs in two stations."""
    blocks, hidden = _blocks(list(range(len(paths))), _Prefixes(paths), 1, max_blocks)
    return (tuple(blocks), hidden) if any(isinstance(b, Group) for b in blocks) else None


def _blocks(indices: list[int], prefixes: _Prefixes, depth: int, max_blocks: int) -> tuple[list[Block], Hidden]:
    first = prefixes.key(indices[0], depth)
    if prefixes.share(indices, first):
        if all(len(prefixes.paths[i]) == len(first) for i in indices):
            shown = indices[:max_blocks] if max_blocks > 0 else indices
            left = len(indices) - len(shown)
            return list(shown), Hidden(left, left)
        return _blocks(indices, prefixes, depth + 1, max_blocks)
    blocks: list[Block] = []
    start = 0
    while start < len(indices) and (max_blocks <= 0 or len(blocks) < max_blocks):
        key, end = prefixes.key(indices[start], depth), start + 1
        while end < len(indices) and prefixes.key(indices[end], depth) == key:
            end += 1
        members = indices[start:end]
        if len(members) == 1:
            blocks.append(members[0])
        elif len(members) <= FOLD_ROWS:
            blocks.append(Group(key, tuple(members), tuple(members)))
        else:
            inner, hidden = _blocks(members, prefixes, depth + 1, max_blocks)
            blocks.append(Group(key, tuple(inner), tuple(members), hidden))
        start = end
    left = indices[start:]
    return blocks, Hidden(sum(1 for _ in itertools.groupby(left, lambda i: prefixes.key(i, depth))), len(left))


def relative(path: str, prefix: str) -> str:
    """``path`` without the group's ``prefix`` (a leaf shown inside its group)."""
    return path[len(prefix):] if prefix and path.startswith(prefix) and len(path) > len(prefix) else path


_ITEM_BITS = re.compile(r"(\d+)(?:_\w+)?$")

KEY_BITS = {"key<fry>": 64, "key<rbg>": 128, "key<unsafe_rbg>": 128}
"""Bits of one typed PRNG key of JAX's own implementations (threefry: two uint32, rbg: four)."""


def leaf_bytes(dtype: str, shape: tuple[int, ...]) -> int | None:
    """Bytes of an array of this dtype name and shape, or ``None`` for a dtype without a bit width."""
    if dtype == "bool":
        bits = 8
    elif dtype in KEY_BITS:
        bits = KEY_BITS[dtype]
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


def _more(hidden: Hidden, attribute: str) -> str | None:
    """The line for the rows a level leaves out: ``'… 14 more rows, 28 arrays (all in report.traced.out_info)'``.

    Where each row left out is one leaf: ``'… 9,950 more (all in report.traced.args)'``, as a flat table says it.
    """
    if not hidden.arrays:
        return None
    if hidden.rows == hidden.arrays:
        return f"… {hidden.arrays:,} more (all in {attribute})"
    return f"… {plural(hidden.rows, 'more row')}, {plural(hidden.arrays, 'array')} (all in {attribute})"


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
    if len(keep) == len(header):
        return header, list(rows), []
    common = [(header[i], rows[0][i]) for i in range(1, len(header)) if i not in keep]
    pick = operator.itemgetter(*keep) if len(keep) > 1 else (lambda r: (r[0],))
    return tuple(header[i] for i in keep), [pick(r) for r in rows], common


def _common_line(column: str, value: str, count: int, budget: TextBudget) -> str:
    return f"{column} (all {count:,}): {line(value, budget)}"


def grouped_html(
    header: tuple[str, ...], rows: Sequence[tuple[str, ...]], budget: TextBudget, attribute: str, facts: Facts | None = None
) -> Html:
    """A table of leaves whose first column is the path: flat up to ``FOLD_ROWS`` rows, else grouped in ``<details>``."""
    header, rows, common = common_columns(header, rows)
    said = [tag("div", _common_line(column, value, len(rows), budget), cls="js-common") for column, value in common]
    grouped = group_rows([r[0] for r in rows], budget.max_rows)
    if grouped is None:
        shown, more = limit_rows(rows, budget, attribute)
        return join([*said, table(header, shown, budget, more=more)])
    return join([*said, _blocks_html(header, *grouped, rows, "", budget, attribute, facts)])


def _blocks_html(header, blocks, hidden, rows, prefix, budget, attribute, facts) -> Html:
    more = _more(hidden, attribute)
    body: list[object] = []
    for block in blocks:
        if isinstance(block, Group):
            inner = _blocks_html(None, block.blocks, block.hidden, rows, block.prefix, budget, attribute, facts)
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
    said = [paragraph(indent, _common_line(column, value, len(rows), budget), indent + "  ", budget) for column, value in common]
    grouped = group_rows([r[0] for r in rows], budget.max_rows)
    if grouped is None:
        shown, more = limit_rows(rows, budget, attribute)
        return said + text_table(shown, header, budget, indent=indent, more=more)
    lines = text_table(list(_text_rows(*grouped, rows, "", "", budget, attribute, facts)), header, budget, indent=indent)
    return said + lines + [f"{indent}(each array: {attribute})"]


def _text_rows(blocks, hidden, rows, prefix, pad, budget, attribute, facts):
    more = _more(hidden, attribute)
    for block in blocks:
        if isinstance(block, Group):
            yield pad + line(_heading(block, prefix, facts), budget)
            if _opens(block):
                yield from _text_rows(block.blocks, block.hidden, rows, block.prefix, pad + "  ", budget, attribute, facts)
        else:
            row = rows[block]
            yield (pad + relative(row[0], prefix), *row[1:])
    if more:
        yield pad + more


# --- a signature on one line --------------------------------------------------------------------

SIGNATURE_LEAVES = 8
"""A traced signature of up to this many leaves is said leaf by leaf; a longer one by argument."""

_TYPE = re.compile(r"^([^\[\s{]+)\[([^\]]*)\]")


def signature_parts(signature: Sequence[tuple[str, str]]) -> list[str]:
    """``'x: f32[3]'`` per leaf; past :data:`SIGNATURE_LEAVES` leaves, each argument of several leaves as one part.

    The argument is a leaf path's first part, or, where every leaf shares it and
    the next part tells groups apart (equinox's ``dynamic_nodonate['first']``
    and ``['rest']``), that next part: ``model: 16 arrays (f32, 12.3 k values)``.
    """
    leaves = [f"{name}: {type_}" for name, type_ in signature]
    if len(signature) <= SIGNATURE_LEAVES:
        return leaves
    keys = _Prefixes([name for name, _ in signature])
    depth = 1
    while _distinct(keys, depth) == 1 and 1 < _distinct(keys, depth + 1) < len(signature):
        depth += 1
    parts: list[str] = []
    for key, members in itertools.groupby(range(len(signature)), lambda i: keys.key(i, depth)):
        indices = list(members)
        if len(indices) == 1:
            parts.append(leaves[indices[0]])
        else:
            parts.append(f"{key}: {plural(len(indices), 'array')} ({_types_facts([signature[i][1] for i in indices])})")
    return parts


def _distinct(keys: _Prefixes, depth: int) -> int:
    return len({keys.key(i, depth) for i in range(len(keys.paths))})


def _types_facts(types: Sequence[str]) -> str:
    """``'f32, i32, 1.15 k values'``: the dtypes of these types in order, and their values where every shape is known."""
    dtypes: dict[str, None] = {}
    values: int | None = 0
    for type_ in types:
        match = _TYPE.match(type_)
        if match is None:
            dtypes[type_] = None
            values = None
            continue
        dtypes[match.group(1)] = None
        size = 1
        for dim in filter(None, match.group(2).split(",")):
            digits = re.match(r"\d+", dim.strip())
            if digits is None:
                values = None
                break
            size *= int(digits.group())
        values = None if values is None else values + size
    return ", ".join([*dtypes, *([f"{_values(values)} values"] if values is not None else [])])


def _values(n: int) -> str:
    """``576``, ``1.15 k``, ``51.2 k``, ``3.46 G``: three significant digits."""
    if n < 1000:
        return str(n)
    for scale, prefix in ((10**3, "k"), (10**6, "M"), (10**9, "G")):
        if float(text := f"{n / scale:.3g}") < 1000:
            return f"{text} {prefix}"
    return f"{n / 10**12:.3g} T"
