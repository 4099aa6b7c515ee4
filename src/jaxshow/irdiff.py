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
from typing import Callable, Iterator, NamedTuple

from jaxshow.irtext import HLO_TABLES, closing
from jaxshow.report import TextDiff

CONTEXT_LINES = 3
"""Unchanged lines shown around each change; longer unchanged runs are folded."""

_MLIR_NAME = re.compile(r"(%|#loc|\^bb)([A-Za-z_$.\-]*?)(?:_?(\d+))?(?![\w$.\-])")
_HLO_NAME = re.compile(r"(?<![\w.\-\"])(%?)([A-Za-z_][\w\-]*?)\.(\d+)(?![\w.\-])")
_HLO_FRAME_ID = re.compile(r",? ?stack_frame_id=\d+")
_JAXPR_BINDER = re.compile(r"(?<![\w.=])([a-z]+):(?=[A-Za-z_]\w*[\[<])")
_LET_BINDING = re.compile(r" \S+ = \{")
_JAXPR_KEYWORDS = frozenset({"in", "let", "lambda"})
_JAXPR_VAR = re.compile(r"(?<![\w.=])(?<!= )([a-z]+)(?![\w\[=(.:])|(?<![\w.=])([a-z]+)(?=:[A-Za-z_]\w*[\[<])")


def canonical_lines(text: str, language: str) -> list[str]:
    """``text`` with its generated names renumbered by first appearance (``language``: jaxpr, mlir or hlo)."""
    lines, tokens, spell = _tokenized(text, language)
    return _spelled(lines, tokens, _first_appearance(tokens, spell))


def canonical_pair(before: str, now: str, language: str) -> tuple[list[str], list[str]]:
    """Both texts with names that match across them: ``before`` renumbered by first appearance, ``now`` named after it.

    The lines are aligned first with every generated name reduced to its base
    (``%add.12`` → ``%add.#``); each name of ``now`` on a line aligned with an
    identical one of ``before`` takes the name at the same place there. So one
    inserted instruction changes its own line (and its users' operands), not
    the number of every later instruction of its kind. A name with no match
    keeps its own first-appearance name where that is free, else the next free one.
    """
    old_lines, old_tokens, spell = _tokenized(before, language)
    new_lines, new_tokens, _ = _tokenized(now, language)
    old_names = _first_appearance(old_tokens, spell)
    matcher = difflib.SequenceMatcher(None, _stripped(old_lines, old_tokens), _stripped(new_lines, new_tokens),
                                      autojunk=len(old_lines) > 2000)
    matched: dict[str, str] = {}
    taken: set[tuple[str, str]] = set()  # (sigil of the counter, name): MLIR's %0 and #loc0 are two names
    opcodes = matcher.get_opcodes()
    for wanted in ("equal", "replace"):  # identical lines first; then replaced runs of one length, line by line, same bases only
        for op, i1, i2, j1, j2 in opcodes:
            if op == wanted and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2)):
                    _match(old_tokens[i], new_tokens[j], old_names, matched, taken, strict=op == "replace")
    new_names = dict(matched)
    own = _first_appearance(new_tokens, spell)
    counters: dict[tuple[str, str], int] = {}
    for line_tokens in new_tokens:
        for t in line_tokens:
            if t.key in new_names:
                continue
            name = own[t.key]
            while (t.counter[0], name) in taken:
                k = counters.get(t.counter, 0)
                counters[t.counter] = k + 1
                name = spell(t.counter, k)
            taken.add((t.counter[0], name))
            new_names[t.key] = name
    return _spelled(old_lines, old_tokens, old_names), _spelled(new_lines, new_tokens, new_names)


def text_diff(stage: str, language: str, before: str | None, now: str | None, *, missing: str = "") -> TextDiff:
    """The aligned diff of two texts of one stage; a side that is ``None`` gives ``unavailable`` (with ``missing``)."""
    if before is None or now is None:
        side = "the previous compile" if before is None else "this compile"
        return TextDiff(stage, language, unavailable=f"no {stage} for {side}" + (f" ({missing})" if missing else ""))
    old, new = canonical_pair(before, now, language)
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
    start, shown = 0, []
    while start < n:
        end = start
        while end < n and near[end] == near[start]:
            end += 1
        run = list(lines[start:end])
        if near[start] or len(run) < 3:  # a short unchanged run joins the shown lines around it
            shown += run
        else:
            if shown:
                yield "shown", shown
            yield "folded", run
            shown = []
        start = end
    if shown:
        yield "shown", shown


# --- names ----------------------------------------------------------------------------------


class _Token(NamedTuple):
    """One generated name on a line: where it is, its sigil (kept), what names it (``key``) and its numbering ``counter``."""

    start: int
    end: int
    sigil: str
    key: str
    counter: tuple[str, str]


def _tokenized(text: str, language: str) -> tuple[list[str], list[list[_Token]], Callable[[tuple[str, str], int], str]]:
    """The text's lines, the generated names on each, and how the ``k``-th name of a counter is spelled."""
    if language == "jaxpr":
        lines = text.splitlines()
        binders = set(_JAXPR_BINDER.findall(text))
        tokens = [[_Token(m.start(), m.end(), "", token, ("", "")) for m in _JAXPR_VAR.finditer(piece)
                   for token in [m.group(1) or m.group(2)]
                   if token in binders and (token not in _JAXPR_KEYWORDS or not _jaxpr_keyword(piece, m))]
                  for piece in lines]
        return lines, tokens, lambda counter, k: _letters(k)
    if language == "hlo":
        lines = _hlo_program(text)  # HLO names an instruction with or without its %: one name either way
        tokens = [[_Token(m.start(), m.end(), m.group(1), m.group(0)[len(m.group(1)):], ("", m.group(2)))
                   for m in _HLO_NAME.finditer(piece)] for piece in lines]
        return lines, tokens, lambda counter, k: f"{counter[1]}.{k}"
    lines = text.splitlines()
    tokens = [[_Token(m.start(), m.end(), m.group(1), m.group(0), (m.group(1), m.group(2)))
               for m in _MLIR_NAME.finditer(piece)] for piece in lines]
    return lines, tokens, lambda counter, k: f"{counter[1]}{'_' if counter[1] and counter[1] != 'arg' else ''}{k}"


def _jaxpr_keyword(piece: str, m: re.Match[str]) -> bool:
    """Whether ``m`` on a jaxpr line is a keyword, not the variable of that name (JAX's 222nd variable is ``in``):
    ``in (c,) }``, ``} in``, ``a:f32[3]. let``, ``let helper = {``, ``{ lambda``."""
    before, word, after = piece[:m.start()], m.group(0), piece[m.end():]
    if word == "in":
        return after.startswith(" (") or before.endswith("} ")
    if word == "let":
        return before.endswith(". ") or (not before.strip() and _LET_BINDING.match(after) is not None)
    return word == "lambda" and before.endswith("{ ")


def _first_appearance(tokens: list[list[_Token]], spell: Callable[[tuple[str, str], int], str]) -> dict[str, str]:
    names: dict[str, str] = {}
    counts: dict[tuple[str, str], int] = {}
    for line_tokens in tokens:
        for t in line_tokens:
            if t.key not in names:
                k = counts.get(t.counter, 0)
                counts[t.counter] = k + 1
                names[t.key] = spell(t.counter, k)
    return names


def _stripped(lines: list[str], tokens: list[list[_Token]]) -> list[str]:
    """Each line with its names reduced to sigil and base, for aligning two texts whatever their numbering."""
    out = []
    for piece, line_tokens in zip(lines, tokens):
        at, bits = 0, []
        for t in line_tokens:
            bits += [piece[at:t.start], t.sigil, t.counter[1], "\x00"]
            at = t.end
        out.append("".join(bits) + piece[at:] if line_tokens else piece)
    return out


def _match(old: list[_Token], new: list[_Token], old_names: dict[str, str], matched: dict[str, str], taken: set[tuple[str, str]],
           *, strict: bool) -> None:
    """Name each name of a ``new`` line after the one at the same place in the aligned ``old`` line, once each way."""
    if len(old) != len(new) or (strict and any(a.counter != b.counter for a, b in zip(old, new))):
        return
    for a, b in zip(old, new):
        name = old_names[a.key]
        if b.key not in matched and (a.counter[0], name) not in taken:
            matched[b.key] = name
            taken.add((a.counter[0], name))


def _spelled(lines: list[str], tokens: list[list[_Token]], names: dict[str, str]) -> list[str]:
    out = []
    for piece, line_tokens in zip(lines, tokens):
        at, bits = 0, []
        for t in line_tokens:
            bits += [piece[at:t.start], t.sigil, names[t.key]]
            at = t.end
        out.append("".join(bits) + piece[at:] if line_tokens else piece)
    return out


def _hlo_program(text: str) -> list[str]:
    """The optimised HLO's lines without its stack-frame tables, instruction metadata or repeated blank lines."""
    out: list[str] = []
    in_table = False
    for piece in text.splitlines():
        if piece in HLO_TABLES:
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


def _letters(k: int) -> str:
    """0 -> ``a``, 25 -> ``z``, 26 -> ``ba``: JAX's own variable names."""
    out = ""
    while True:
        k, digit = divmod(k, 26)
        out = chr(ord("a") + digit) + out
        if k == 0:
            return out
