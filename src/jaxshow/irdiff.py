"""Structural diffs of IR texts: names renumbered by first appearance, then lines aligned and folded.

Two compiles of one function name their values and instructions by counters
that move with everything else in the process (``%add.12``, ``%cst_3``,
``#loc7``, jaxpr variables ``a b c``), so a plain diff of two modules that
differ in one shape changes every line. Here every such name is replaced by
its base and the order in which it first appears in the text (``add.12``
becomes ``add.0`` when it is the first ``add``), as XLA's ``hlo_diff`` matches
instructions by structure rather than by name: a pure renaming is no change.
The optimised HLO also loses its stack-frame tables and per-instruction
``metadata={…}`` (source names and frame ids that differ per compile, not the
program). Standard library only: no JAX, no IPython.
"""

from __future__ import annotations

import difflib
import re
from typing import Iterator

from jaxshow.irtext import closing
from jaxshow.report import TextDiff

CONTEXT_LINES = 3
"""Unchanged lines shown around each change; longer unchanged runs are folded."""

_MLIR_NAME = re.compile(r"(%|#loc|\^bb)([A-Za-z_$.\-]*?)(?:_?(\d+))?(?![\w$.\-])")
_HLO_NAME = re.compile(r"(?<![\w.\-\"])(%?)([A-Za-z_][\w\-]*?)\.(\d+)(?![\w.\-])")
_HLO_TABLES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_HLO_FRAME_ID = re.compile(r",? ?stack_frame_id=\d+")
_JAXPR_BINDER = re.compile(r"(?<![\w.=])([a-z]+):(?=[A-Za-z_]\w*[\[<])")
_JAXPR_VAR = re.compile(r"(?<![\w.=])(?<!= )([a-z]+)(?![\w\[=(.:])|(?<![\w.=])([a-z]+)(?=:[A-Za-z_]\w*[\[<])")


def canonical_lines(text: str, language: str) -> list[str]:
    """``text`` with its generated names renumbered by first appearance (``language``: jaxpr, mlir or hlo)."""
    if language == "jaxpr":
        return _jaxpr_lines(text)
    if language == "hlo":
        return _renumber(_hlo_program(text), _HLO_NAME, hlo=True)
    return _renumber(text.splitlines(), _MLIR_NAME, hlo=False)


def text_diff(stage: str, language: str, before: str | None, now: str | None, *, missing: str = "") -> TextDiff:
    """The aligned diff of two texts of one stage; a side that is ``None`` gives ``unavailable`` (with ``missing``)."""
    if before is None or now is None:
        side = "the previous compile" if before is None else "this compile"
        return TextDiff(stage, language, unavailable=f"no {stage} for {side}" + (f" ({missing})" if missing else ""))
    old, new = canonical_lines(before, language), canonical_lines(now, language)
    lines: list[str] = []
    added = removed = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=len(old) > 2000).get_opcodes():
        if op == "equal":
            lines.extend(" " + piece for piece in old[i1:i2])
            continue
        lines.extend("-" + piece for piece in old[i1:i2])
        lines.extend("+" + piece for piece in new[j1:j2])
        removed += i2 - i1
        added += j2 - j1
    return TextDiff(stage, language, tuple(lines), added, removed)


def folded(lines: tuple[str, ...] | list[str], context: int = CONTEXT_LINES) -> Iterator[tuple[str, list[str]]]:
    """Runs of a diff's lines: ``("shown", lines)`` around changes, ``("folded", lines)`` for long unchanged runs."""
    n = len(lines)
    near = [False] * n
    for i, piece in enumerate(lines):
        if piece[:1] in "+-" and piece:
            for k in range(max(0, i - context), min(n, i + context + 1)):
                near[k] = True
    start = 0
    while start < n:
        end = start
        while end < n and near[end] == near[start]:
            end += 1
        run = list(lines[start:end])
        yield ("shown" if near[start] or len(run) < 3 else "folded"), run
        start = end


def unified(diff: TextDiff, context: int = CONTEXT_LINES) -> str:
    """The folded diff as text: changed lines with ``context`` lines around them, ``⋯ N unchanged lines`` between."""
    out = []
    for kind, run in folded(diff.lines, context):
        out.extend(run if kind == "shown" else [f"  ⋯ {len(run):,} unchanged line{'s' if len(run) != 1 else ''}"])
    return "\n".join(out)


# --- renumbering ------------------------------------------------------------------------------


def _renumber(lines: list[str], pattern: re.Pattern[str], *, hlo: bool) -> list[str]:
    names: dict[str, str] = {}
    counts: dict[tuple[str, str], int] = {}

    def canonical(m: re.Match[str]) -> str:
        sigil, base = m.group(1), m.group(2)
        token = m.group(0)[len(sigil):] if hlo else m.group(0)  # HLO names an instruction with or without its %
        found = names.get(token)
        if found is None:
            counter = ("", base) if hlo else (sigil, base)
            k = counts.get(counter, 0)
            counts[counter] = k + 1
            found = names[token] = f"{base}.{k}" if hlo else f"{base}{'_' if base and base != 'arg' else ''}{k}"
        return sigil + found

    return [pattern.sub(canonical, piece) for piece in lines]


def _hlo_program(text: str) -> list[str]:
    """The optimised HLO's lines without its stack-frame tables, instruction metadata or repeated blank lines."""
    out: list[str] = []
    in_table = False
    for piece in text.splitlines():
        if _HLO_TABLES.match(piece):
            in_table = True
        elif in_table and not piece.strip():
            in_table = False
        elif not in_table and (piece.strip() or (out and out[-1].strip())):
            out.append(_HLO_FRAME_ID.sub("", _without_metadata(piece)))
    return out


def _without_metadata(piece: str) -> str:
    """One HLO line without its ``, metadata={…}`` (braces and quoted strings balanced)."""
    start = piece.find(", metadata={")
    if start < 0:
        return piece
    return piece[:start] + piece[closing(piece, start + len(", metadata={")) + 1:]


def _jaxpr_lines(text: str) -> list[str]:
    """A jaxpr with its variables (the names bound as ``name:type``) renamed ``a b c …`` by first appearance, as JAX names them."""
    binders = set(_JAXPR_BINDER.findall(text))
    names: dict[str, str] = {}

    def canonical(m: re.Match[str]) -> str:
        token = m.group(1) or m.group(2)
        if token not in binders:
            return m.group(0)
        found = names.get(token)
        if found is None:
            found = names[token] = _letters(len(names))
        return found

    return [_JAXPR_VAR.sub(canonical, piece) for piece in text.splitlines()]


def _letters(k: int) -> str:
    """0 -> ``a``, 25 -> ``z``, 26 -> ``ba``: JAX's own variable names."""
    out = ""
    while True:
        k, digit = divmod(k, 26)
        out = chr(ord("a") + digit) + out
        if k == 0:
            return out
