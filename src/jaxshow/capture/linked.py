"""Label every line of the jaxpr, the StableHLO and the optimised HLO with the user's source line that made it.

The locations are JAX's own: each equation's ``source_info`` traceback, the
StableHLO ``loc(...)`` attributes (``Lowered.as_text(debug_info=True)``) and the
optimised HLO's op ``metadata`` (``source_file``/``source_line``, or on newer
XLA a ``stack_frame_id`` into the module's stack-frame tables). Of each
location's frames the innermost one in the user's code (a cell or the user's
own file) is kept; JAX and library frames are skipped. The shown texts drop
the location syntax: it is folded into the labels. Uses JAX; never IPython.
"""

from __future__ import annotations

import linecache
import os
import re
from typing import Any, Callable, Iterator

from jaxshow import _jax_compat
from jaxshow.capture.programs import left_out_line, printed_part, subjaxprs
from jaxshow.capture.sources import is_jax_file, is_user_file, lines_readable
from jaxshow.irtext import HLO_TABLES, closing, split_top_level
from jaxshow.report import LinkedIR, LinkedViews, LoweredStation, SourceText

Frame = tuple[str, int]
FileLabel = Callable[[str], str]
"""A source file's name as the record keeps it: ``In[4]`` for a cell, the path of a file (the report shortens it)."""

MAX_SOURCE_LINES = 2_000
"""Lines kept of one source file around the lines the IR points at."""

_TERMINAL_CELL = re.compile(r"^<ipython-input-(\d+)-[^>]*>$")
JAXPR_WIDTHS = (80, 40, 20, 1)
"""Widths tried when printing the jaxpr (80 is JAX's own)."""
_NOTE_ONLY = re.compile(r"^\s*# ")
_JAXPR_NOTE = re.compile(r"\s+# (?P<file>.+?):(?P<line>\d+)(?::\d+)? \([^()]*\)\s*$")
_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_FILE_LOC = re.compile(r':(\d+):\d+')
_HLO_ROW = re.compile(r"^(\d+) (.*)$")
_HLO_FIELD = re.compile(r"(\w+)=(\d+)")


def default_file_label(file: str) -> str:
    """``<ipython-input-4-…>`` -> ``In[4]``; any other file as it is (without a shell to ask)."""
    match = _TERMINAL_CELL.match(file)
    return f"In[{match.group(1)}]" if match else file


def linked_views(jaxpr: Any, stablehlo_text: str | None, hlo_text: str | None,
                 file_label: FileLabel = default_file_label, jaxpr_max_lines: int | None = None) -> LinkedViews:
    """The source lines, jaxpr, StableHLO and optimised HLO of one call, each line with its source label.

    Args:
        jaxpr: the ``ClosedJaxpr`` JAX traced, or ``None``.
        stablehlo_text: ``Lowered.as_text(debug_info=True)``, or ``None``.
        hlo_text: ``Compiled.as_text()``, or ``None``.
        file_label: names a user's file in the labels.
        jaxpr_max_lines: print the jaxpr only about this far (as the Traced station does); ``None``: all of it.
    """
    parsed: list[tuple[str, list[tuple[str, Frame | None]], str]] = []
    notes = []
    if jaxpr is not None:
        printed, left_out = printed_part(jaxpr, jaxpr_max_lines)
        parsed.append(("jaxpr", _jaxpr_lines(printed, left_out), "report.linked.irs[0]"))
        if left_out:
            notes.append(f"jaxpr: printed and linked as far as the report shows it ({len(jaxpr.jaxpr.eqns) - left_out:,} of "
                         f"{len(jaxpr.jaxpr.eqns):,} top-level equations; --save links all of it)")
    else:
        notes.append("jaxpr: not reached")
    for title, text, parse in (("StableHLO", stablehlo_text, _stablehlo_lines), ("optimised HLO", hlo_text, _hlo_lines)):
        if text is None:
            notes.append(f"{title}: not reached")
        else:
            parsed.append((title, parse(text), f"report.linked.irs[{len(parsed)}]"))
    used: dict[str, set[int]] = {}
    for _, lines, _ in parsed:
        for _, frame in lines:
            if frame is not None:
                used.setdefault(frame[0], set()).add(frame[1])
    names = {file: file_label(file) for file in used}
    irs = tuple(LinkedIR(title=title, lines=tuple(text for text, _ in lines), attribute=attribute,
                         sources=tuple(None if f is None else f"{names[f[0]]}:{f[1]}" for _, f in lines))
                for title, lines, attribute in parsed)
    sources = tuple(_source(file, lines, names[file], file_label) for file, lines in used.items())
    return LinkedViews(sources=tuple(s for s in sources if s.lines), irs=irs, notes=tuple(notes))


def located_stablehlo(lowered: Any, station: LoweredStation | None) -> str | None:
    """``lowered``'s StableHLO with its ``loc(...)`` locations: the Lowered station's own text when it already is that."""
    if station is not None and station.dialect == "stablehlo" and station.debug_info:
        return station.module_text
    return lowered.as_text("stablehlo", debug_info=True) if lowered is not None else None


def _source(file: str, lines: set[int], name: str, file_label: FileLabel) -> SourceText:
    """The cell whole, or a file's lines from the first to the last one the IR points at, as the file reads now
    (``linecache`` keeps a file's lines until it checks them: a module reloaded after an edit)."""
    linecache.checkcache(file)  # a cell's lines, which IPython keeps with no file behind them, stay
    text = linecache.getlines(file) if lines_readable(file) else []
    cell = file_label(file) != file or not os.path.isfile(file)
    first = 1 if cell else min(lines)
    last = min(len(text), max(lines) if not cell else len(text), first + MAX_SOURCE_LINES - 1)
    return SourceText(name=name, first_line=first, lines=tuple(t.rstrip("\n") for t in text[first - 1 : last]))


def _user_frame(frames: Iterator[Frame] | tuple[Frame, ...]) -> Frame | None:
    return next((f for f in frames if is_user_file(f[0])), None)


# --- jaxpr ----------------------------------------------------------------------------------------


def _equations(jaxpr: Any) -> Iterator[Any]:
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in subjaxprs(value):
                yield from _equations(sub)


def _jaxpr_lines(closed: Any, left_out: int = 0) -> list[tuple[str, Frame | None]]:
    """JAX's printed jaxpr with source info; each note ``# file:line:col (fn)`` becomes the label of its line.

    JAX's note names the innermost frame outside JAX (a library's, maybe):
    each is mapped to the innermost user frame of an equation JAX noted so.
    ``left_out`` top-level equations were cut from ``closed``: its last line says so.
    """
    user_of: dict[Frame, Frame | None] = {}
    for eqn in _equations(closed.jaxpr):
        frames = _jax_compat.equation_frames(eqn)
        shown = next((f for f in frames if not is_jax_file(f[0])), None)
        if shown is not None and shown not in user_of:
            user_of[shown] = _user_frame(frames)
    out = []
    for text in _jaxpr_text(closed).split("\n"):
        if _NOTE_ONLY.match(text):  # a note for a second equation on one line (only if no width separates them)
            continue
        match = _JAXPR_NOTE.search(text)
        if match is None:
            out.append((text.rstrip(), None))
            continue
        shown = (match.group("file"), int(match.group("line")))
        frame = user_of.get(shown, shown if is_user_file(shown[0]) else None)
        out.append((text[: match.start()].rstrip(), frame))
    if left_out:
        tail = next((i for i in range(len(out) - 1, -1, -1) if out[i][0].lstrip().startswith("in (")), len(out))
        out[tail:] = [(left_out_line(left_out), None)]
    return out


def _jaxpr_text(closed: Any) -> str:
    """JAX's jaxpr with source notes, one equation a line: a jaxpr that fits in the width is printed on one line
    with its equations' notes stacked after it, so narrower widths are tried until every note has its own line."""
    for width in JAXPR_WIDTHS:
        text = closed.pretty_print(use_color=False, source_info=True, width=width)
        if not any(_NOTE_ONLY.match(line) or line.count(" # ") > 1 for line in text.split("\n")):  # jax 0.7: notes on one line
            break
    return text


# --- StableHLO ------------------------------------------------------------------------------------


def _stablehlo_lines(text: str) -> list[tuple[str, Frame | None]]:
    """The module without ``loc(...)`` and its ``#loc`` table; each op line labelled by its location's user frame."""
    aliases: dict[str, str] = {}
    body = []
    for raw in text.split("\n"):
        match = _LOC_DEF.match(raw)
        if match:
            aliases[match.group(1)] = match.group(2)
        else:
            body.append(raw)
    resolved: dict[str, tuple[tuple[Frame, ...], str | None]] = {}
    out = []
    for raw in body:
        locs, stripped = _strip_locs(raw)
        frame = None
        if locs and not stripped.lstrip().startswith(("func.func", "module")):
            frames, name = _resolve(locs[-1], aliases, resolved, 0)
            if not (name and name.startswith(("jit(", "jit:")) and "/" not in name):  # the module's own constants, return
                frame = _user_frame(frames)
        out.append((stripped, frame))
    while out and not out[-1][0].strip():
        out.pop()
    return out


def _strip_locs(line: str) -> tuple[list[str], str]:
    """``line`` without its `` loc(...)`` attributes, and their bodies."""
    locs, pieces, i = [], [], 0
    while True:
        start = line.find(" loc(", i)
        if start < 0:
            pieces.append(line[i:])
            return locs, "".join(pieces).rstrip()
        end = closing(line, start + 5)
        pieces.append(line[i:start])
        locs.append(line[start + 5 : end])
        i = end + 1


def _resolve(body: str, aliases: dict[str, str], memo: dict, depth: int) -> tuple[tuple[Frame, ...], str | None]:
    """A location's file frames (innermost first) and its outermost name, following ``#loc`` aliases."""
    body = body.strip()
    if depth > 64:
        return (), None
    if body.startswith("#loc"):
        if body not in memo:
            memo[body] = _resolve(aliases.get(body, "unknown"), aliases, memo, depth + 1)
        return memo[body]
    if body.startswith("callsite("):
        inner = body[len("callsite(") : closing(body, len("callsite("))]
        callee, caller = (split_top_level(inner, " at ", 1) + [""])[:2]
        first, name = _resolve(callee, aliases, memo, depth + 1)
        return first + _resolve(caller, aliases, memo, depth + 1)[0], name
    if body.startswith("fused"):
        start = body.find("[")
        for part in split_top_level(body[start + 1 : closing(body, start + 1)], ",") if start >= 0 else ():
            frames, name = _resolve(part, aliases, memo, depth + 1)
            if frames:
                return frames, name
        return (), None
    if body.startswith('"'):
        end = _quote_end(body)
        name, rest = body[1:end], body[end + 1 :]
        if rest.startswith(":"):
            match = _FILE_LOC.match(rest)
            return (((name, int(match.group(1))),) if match else ()), None
        if rest.startswith("("):
            frames, _ = _resolve(rest[1 : closing(rest, 1)], aliases, memo, depth + 1)
            return frames, name
        return (), name
    return (), None


def _quote_end(text: str) -> int:
    i = 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i


# --- optimised HLO --------------------------------------------------------------------------------


def _hlo_lines(text: str) -> list[tuple[str, Frame | None]]:
    """The module without its stack-frame tables and ``metadata={...}``; each instruction labelled by its user frame."""
    tables: dict[str, dict[int, str]] = {}
    section = None
    body = []
    for raw in text.split("\n"):
        if raw in HLO_TABLES:
            section = tables.setdefault(raw, {})
            continue
        if section is not None:
            match = _HLO_ROW.match(raw)
            if match:
                section[int(match.group(1))] = match.group(2)
                continue
            section = None
            if not raw.strip():
                continue
        body.append(raw)
    stack = _stack_frames(tables)
    out: list[tuple[str, Frame | None]] = []
    for raw in body:
        start = raw.find(", metadata={")
        if start < 0:
            if raw.strip() or (out and out[-1][0].strip()):  # the tables leave blank lines behind: keep one
                out.append((raw.rstrip(), None))
            continue
        end = closing(raw, start + len(", metadata={"))
        metadata = raw[start + len(", metadata={") : end]
        out.append(((raw[:start] + raw[end + 1 :]).rstrip(), _metadata_frame(metadata, stack)))
    while out and not out[-1][0].strip():
        out.pop()
    return out


def _stack_frames(tables: dict[str, dict[int, str]]) -> Callable[[int], tuple[Frame, ...]]:
    """``stack_frame_id`` -> its frames, innermost first, from the module's FileNames … StackFrames tables."""
    files = {k: v.strip('"') for k, v in tables.get("FileNames", {}).items()}
    locations = {}
    for k, v in tables.get("FileLocations", {}).items():
        fields = dict((name, int(n)) for name, n in _HLO_FIELD.findall(v))
        locations[k] = (files.get(fields.get("file_name_id", 0), "?"), fields.get("line", 0))
    parents = {}
    for k, v in tables.get("StackFrames", {}).items():
        fields = dict((name, int(n)) for name, n in _HLO_FIELD.findall(v))
        parents[k] = (fields.get("file_location_id", 0), fields.get("parent_frame_id", 0))

    def frames(frame_id: int) -> tuple[Frame, ...]:
        out, seen = [], set()
        while frame_id in parents and frame_id not in seen:
            seen.add(frame_id)
            location, parent = parents[frame_id]
            if location in locations:
                out.append(locations[location])
            frame_id = parent
        return tuple(out)

    return frames


def _metadata_frame(metadata: str, stack: Callable[[int], tuple[Frame, ...]]) -> Frame | None:
    frame_id = re.search(r"\bstack_frame_id=(\d+)", metadata)
    if frame_id:
        return _user_frame(stack(int(frame_id.group(1))))
    file = re.search(r'\bsource_file="((?:[^"\\]|\\.)*)"', metadata)
    line = re.search(r"\bsource_line=(\d+)", metadata)
    if file and line:
        return _user_frame(((file.group(1), int(line.group(1))),))
    return None
