"""JAX's explanation of a tracing-cache miss, read as text: category, changed values, call site.

Owns the patterns for every wording jaxshow reads (jax >= 0.9, and as far as
it can jax <= 0.8), :func:`parse_explanation`, :func:`miss_summary` (the one
line a miss shows) and the miss made from a text alone. Static values are
shown without the memory addresses of default reprs (:mod:`jaxshow.reprs`).
Pure: strings in, :mod:`jaxshow.report` records out. Imports nothing of JAX,
IPython or the rest of :mod:`jaxshow.retrace`.
"""

from __future__ import annotations

import os
import re
import time

from jaxshow.report import CONTEXT_POSITION, MADE_KINDS, ArgChange, CacheMiss, MissCategory, a_or_an
from jaxshow.reprs import ANOTHER_OBJECT, changed_texts, stable_text


_CONTEXT_LINE = re.compile(r"^\s*\* (?P<name>\S+) differs: now (?P<now>.*) and before (?P<before>.*)$")
_TYPE_LINE = re.compile(r"^\s*\* at (?P<where>.+?), now (?P<now>.+) and before (?P<before>.+?)(?:https?://\S+)?$")
_TREE_LINE = re.compile(r"^\s*\* at (?:input path )?(?P<where>.*?), now (?P<now>.+) and before (?P<before>.+?), so (?P<why>.*)$", re.S)
_STATIC_VALUE = re.compile(r"Static\(val=(?P<val>.*)\)", re.S)
_METADATA = re.compile(r"^<class '(?:[\w.]+\.)?(?P<type>[\w]+)'> with pytree metadata (?P<meta>.*)$", re.S)
_NODE_CLASS = re.compile(r"^<class '(?:(?:__main__|builtins)\.)?(?P<name>[\w.]+)'>$")
SHORTEST_PART = 24
"""Characters a changed part of a pytree's metadata is widened to, at least, so it names what changed."""
LONGEST_PART = 300
"""Characters of a changed part of a pytree's metadata shown, at most."""
_HEADER = re.compile(r"^TRACING CACHE MISS at (?P<site>.+?)(?: costing [\d.]+ ms because)?:$")
SAME_LINE_HINT = "seen another function defined on the same line"
_NO_SITE = re.compile(r"^TRACING CACHE MISS at\s*(?:costing [\d.]+ ms because)?:$")
"""A miss JAX logged with no call site: a trace nested in another (a jitted step that jax.lax.scan traces)."""
CLEARED_HINT = ("(JAX's same-line hint compares call sites: %jaxcache clear emptied this function's cache, so JAX "
                "took its trace for another function's first from the same site; here it is no sign of a re-definition)")
NO_SITE_HINT = ("(JAX's same-line hint compares call sites, and a trace nested in another has none, so every nested "
                "first trace after another gets it: here it is no sign of a re-definition)")
THREAD_SITE_HINT = ("(JAX's same-line hint compares call sites, and a call on a thread with no line of yours on its stack (a "
                    "thread pool's worker) has none, so every such first trace after another gets it: here it is no sign of a "
                    "re-definition)")
# jax <= 0.8 wording (pjit.explain_tracing_cache_miss): positions, not names, and values without argument names.
_OLD_CONTEXT_LINE = re.compile(r"^\s*\[(?P<i>\d+)\]: now (?P<now>.*) and before (?P<before>.*?)(?:, and)?$")
_OLD_STATIC_LINE = re.compile(r"^\s*now (?P<now>.*) and before (?P<before>.*)$")
_OLD_STATIC_HEAD = re.compile(r"different value of static (?P<what>args|kwargs):")
TRACE_CONTEXT = "JAX's trace context"
"""Where the options a module defined since an earlier trace show as one change (:func:`~jaxshow.retrace.classify._context_changes`)."""


def explained_function(text: str) -> str | None:
    """The function a whole ``TRACING CACHE MISS`` message is about (the traced function's ``debug_info.func_name``,
    which JAX prints after ``never seen function:`` or ``for``), else ``None``."""
    lines = text.splitlines()
    if len(lines) > 2 and lines[1].strip() == "never seen function:":
        return lines[2].strip().split(" id=")[0] or None
    if len(lines) > 1 and lines[1].startswith("  for "):
        return lines[1][len("  for "):].split(" defined at ")[0] or None
    return None


def parse_explanation(text: str) -> tuple[MissCategory, tuple[ArgChange, ...], bool, str | None]:
    """Classify JAX's explanation text: ``(category, changes, same_line_hint, call_site)``.

    Accepts a whole ``TRACING CACHE MISS`` message or one diff from JAX's diff
    functions, in the wording of jax >= 0.9 and, as far as it can, older ones.
    """
    lines = text.splitlines()
    site = None
    no_site = bool(lines and _NO_SITE.match(lines[0].strip()))  # jax <= 0.8: 'at  costing 1.2 ms because:'
    if lines and not no_site and (m := _HEADER.match(lines[0].strip())):
        site = m.group("site")
    # JAX keys its hint on the call site, which a nested trace lacks: any two nested first traces share "no site"
    same_line = SAME_LINE_HINT in text and not no_site
    changes: list[ArgChange] = []
    if "never seen function" in text:
        return "never_seen", (), same_line, site
    if "Tracing context doesn't match" in text or "different tracing context" in text:
        for line in lines:
            if m := _CONTEXT_LINE.match(line):
                changes.append(ArgChange(m.group("name"), m.group("now"), m.group("before")))
            elif m := _OLD_CONTEXT_LINE.match(line):
                changes.append(ArgChange(f"{CONTEXT_POSITION}[{m.group('i')}]", m.group("now"), m.group("before")))
        return "tracing_context", tuple(changes), same_line, site
    if "different input pytree" in text or "static arg" in text or "static kwarg" in text or "different number of args and kwargs" in text:
        static = bool(_STATIC_VALUE.search(text)) or "static arg" in text or "static kwarg" in text
        what = None
        for line in lines:
            if m := _OLD_STATIC_HEAD.search(line):
                what = m.group("what")
                continue
            if what and (m := _OLD_STATIC_LINE.match(line)):
                changes.append(value_change(f"static {what}", m.group("now"), m.group("before")))
                what = None
        trees = [m for entry in _entries(lines) if (m := _TREE_LINE.match(entry))]
        values = [m for m in trees if _STATIC_VALUE.search(m.group("now")) and _STATIC_VALUE.search(m.group("before"))]
        moved = _passed_another_way([m for m in trees if m not in values]) if len(values) < len(trees) else None
        changes.extend((*moved, *(_named_tree_change(m) for m in values)) if moved is not None else map(_named_tree_change, trees))
        return ("static_args" if static else "input_pytree"), tuple(changes), same_line, site
    if "Debug info doesn't match" in text:
        return "debug_info", (), same_line, site
    if "different input types" in text:
        for line in lines:
            if m := _TYPE_LINE.match(line):
                now, before = _tidy_type(m.group("now")), _tidy_type(m.group("before"))
                changes.append(ArgChange(m.group("where"), now, before))
        return "input_types", tuple(_drop_common_suffix(c) for c in changes), same_line, site
    return "other", (), same_line, site


def _named_tree_change(m: re.Match) -> ArgChange:
    return _tree_change(input_path_name(m.group("where")) or "(top)", m.group("now"), m.group("before"))


def _entries(lines: list[str]) -> list[str]:
    """JAX's ``* at …`` entries, each with the lines a multi-line repr in it ran onto (flax NNX's ``GraphDef``)."""
    entries: list[str] = []
    for line in lines:
        if line.lstrip().startswith("* "):
            entries.append(line)
        elif entries:
            entries[-1] += "\n" + line
    return entries


BY_POSITION_COUNT = "arguments passed by position"
"""An :class:`ArgChange` of how many arguments a call passed by position, the rest the same."""
BY_POSITION, BY_KEYWORD, NOT_PASSED = "by position", "by keyword", "not passed"
"""How :func:`_passed_another_way` says an argument was passed."""
_TUPLE_LENGTH = re.compile(r"^tuple of length (?P<n>\d+)$")
_DICT_CHILDREN = re.compile(r"^<class 'dict'> with (?P<n>\d+) child(?:ren)?$")
_KEY_SET = re.compile(r"symmetric difference of key sets: \{(?P<keys>.*)\}", re.S)


def _passed_another_way(trees: list[re.Match]) -> list[ArgChange] | None:
    """JAX's differences at the top of a call's ``(args, kwargs)`` pytree, said as arguments passed another way:
    ``n: now by position, before by keyword`` (JAX keys the two apart), or a keyword now passed and before not; ``None``
    where something else differs too (a static value's change is passed apart: it is said beside these)."""
    at = {m.group("where"): m for m in trees}
    args, kwargs = at.pop("[0]", None) or at.pop("args", None), at.pop("[1]", None) or at.pop("kwargs", None)
    if at or (args is None and kwargs is None):
        return None
    if kwargs is None:  # more or fewer arguments by position: named by the caller, who knows the parameters
        lengths = [_TUPLE_LENGTH.match(args.group(side)) for side in ("now", "before")]
        return [ArgChange(BY_POSITION_COUNT, lengths[0]["n"], lengths[1]["n"])] if all(lengths) else None
    now_kw, before_kw = (_DICT_CHILDREN.match(kwargs.group(side)) for side in ("now", "before"))
    keys = _KEY_SET.search(kwargs.group("why"))
    names = sorted(re.findall(r"'([^']*)'", keys.group("keys"))) if keys else []  # JAX prints a set: in hash order
    if not (now_kw and before_kw and names) or len(names) != abs(int(now_kw["n"]) - int(before_kw["n"])):
        return None
    fewer_keywords = int(now_kw["n"]) < int(before_kw["n"])
    if args is None:  # a keyword left out (its default) or passed
        how = (NOT_PASSED, BY_KEYWORD) if fewer_keywords else (BY_KEYWORD, NOT_PASSED)
    else:
        now_pos, before_pos = (_TUPLE_LENGTH.match(args.group(side)) for side in ("now", "before"))
        if not (now_pos and before_pos) or int(now_pos["n"]) - int(before_pos["n"]) != int(before_kw["n"]) - int(now_kw["n"]):
            return None
        how = (BY_POSITION, BY_KEYWORD) if fewer_keywords else (BY_KEYWORD, BY_POSITION)
    return [ArgChange(name, *how) for name in names]


EQUAL_AS_PRINTED = "equal as printed, unequal as compared"
"""Both sides of an :class:`ArgChange` of two values whose texts are the same (a ``functools.partial`` made anew)."""
BY_IDENTITY = "make it once, or make it a static field that compares by value"
MADE_ANEW = "made anew: make it once, outside the loop or the model's constructor"


def class_made_anew(where: str, module: str, qualname: str) -> ArgChange:
    """A pytree node whose class is another of the same module and name (``module``, ``qualname``): its module, or a
    cell (``__main__``), ran again and made the class anew, and JAX keys a pytree by its nodes' classes."""
    how = ("a cell or script defined it again" if module == "__main__"
           else "its module ran again (importlib.reload, %autoreload, %run)")
    name = qualname if module == "__main__" else f"{module}.{qualname}"
    return ArgChange(where, f"{a_or_an(name)} of the class made anew when {how}", "one of the class it replaced")


def _class_made_anew_as_printed(where: str, text: str, name: str) -> ArgChange:
    """:func:`class_made_anew` from JAX's text of the class (``<class '__main__.Box'>``) and its ``name`` there, the
    module left out for ``__main__``: where jaxshow holds no earlier key, whose class it could read."""
    module, _, qualname = ("__main__", "", name) if text.startswith("<class '__main__.") else name.partition(".")
    return class_made_anew(where, module, qualname)


def _tree_change(where: str, now: str, before: str) -> ArgChange:
    """One changed input pytree node: of a static value or of metadata of one node type, the part that changed (a
    function made anew inside equinox's static tuple reads ``…<function <lambda>>… (another object)``); where the two
    print alike, :data:`EQUAL_AS_PRINTED` both ways."""
    sv_now, sv_before = _STATIC_VALUE.search(now), _STATIC_VALUE.search(before)
    md_now, md_before = _METADATA.match(now), _METADATA.match(before)
    if sv_now and sv_before:
        texts = sv_now.group("val"), sv_before.group("val")
    elif md_now and md_before and md_now.group("type") == md_before.group("type"):
        texts = md_now.group("meta"), md_before.group("meta")
        where = f"{where} ({md_now.group('type')}'s pytree metadata)"
    elif (cls_now := _NODE_CLASS.match(now)) and (cls_before := _NODE_CLASS.match(before)):
        if now == before:  # two classes of one module and name: JAX's words for a class made anew, as node_classes_apart finds
            return _class_made_anew_as_printed(where, now, cls_now["name"])
        return ArgChange(where, a_or_an(cls_now["name"]), a_or_an(cls_before["name"]))
    else:
        return ArgChange(where, now, before)
    return value_change(where, *texts)


DEFINED_AT = "defined at"
"""The :class:`ArgChange` of a debug info's definition place (``now`` and ``before`` as ``file:line``)."""


def code_replaced(function: str, now: str, before: str) -> ArgChange:
    """The change of a function whose code was replaced in place since its last trace (the same object: ``%autoreload
    2`` patches an edited function's ``__code__``), with where it is defined now and was before."""
    return ArgChange(f"{function}'s code, replaced in place since its last trace (as %autoreload does)", f"at {now}", f"at {before}")


def value_change(where: str, now: str, before: str) -> ArgChange:
    """Two texts of a changed value as the part that changed, or :data:`EQUAL_AS_PRINTED` both ways."""
    if " ".join(now.split()) == " ".join(before.split()):
        return ArgChange(where, EQUAL_AS_PRINTED, EQUAL_AS_PRINTED)
    return ArgChange(where, *changed_texts(*map(stable_text, _changed_parts(now, before))))


def change_line(category: MissCategory, change: ArgChange, blamed: bool = False) -> str:
    """``x: now f32[4], before f32[3]``; a static value or pytree metadata whose two values print alike (now and
    before the same: :data:`EQUAL_AS_PRINTED`, or the part that is another object, as ``classify`` names it) says so;
    one that prints as before but for its address (:data:`ANOTHER_OBJECT`) gets :data:`MADE_ANEW`, unless ``blamed``:
    a library passed it (numpyro's ``fori_collect`` makes its ``_body_fn`` anew per run), which no code of the user's makes."""
    if change.now != change.before or category not in ("static_args", "input_pytree"):
        made_anew = change.now.endswith(ANOTHER_OBJECT) and category in ("static_args", "input_pytree") and not blamed
        return f"{change.where}: now {change.now}, before {change.before}" + (f" ({MADE_ANEW})" if made_anew else "")
    if change.now == EQUAL_AS_PRINTED:
        return (f"{change.where}: {EQUAL_AS_PRINTED}: an attribute compared by identity, such as a functools.partial or a "
                f"lambda made anew with the model: {BY_IDENTITY}")
    return f"{change.where}: {EQUAL_AS_PRINTED}: {change.now} is another object, compared by identity: {BY_IDENTITY}"


def _changed_parts(now: str, before: str) -> tuple[str, str]:
    """The smallest bracketed part of two reprs that holds all they differ in, ``…`` where cut: ``…('scale', Static(value=2.0))…``."""
    texts = " ".join(now.split()), " ".join(before.split())
    head = len(os.path.commonprefix(texts))
    tail = len(os.path.commonprefix([t[head:][::-1] for t in texts]))
    spans = [_part(t, head, len(t) - tail) for t in texts]
    start = min(s for s, _ in spans)
    left = min(len(t) - e for t, (_, e) in zip(texts, spans))  # characters after the part, the same in both
    now, before = (("…" if start else "") + _clipped(t[start:len(t) - left]) + ("…" if left else "") for t in texts)
    return now, before


def _part(text: str, start: int, end: int) -> tuple[int, int]:
    """The comma-separated element of ``text`` around ``text[start:end]``, widened to its brackets (and the name before
    them) while it fills them or is shorter than :data:`SHORTEST_PART`."""
    start, end = _element(text, start, end)
    while (end - start < SHORTEST_PART or _fills_brackets(text, start, end)) and (start, end) != (0, len(text)):
        start, end = _element(text, *_group(text, start, end))
    return start, end


def _element(text: str, start: int, end: int) -> tuple[int, int]:
    closes, opens = _unmatched(text[start:end])
    start = _scan(text, start, -1, closes, stop_at_comma=True)
    end = _scan(text, end, 1, opens, stop_at_comma=True)
    while start < end and text[start] == " ":
        start += 1
    return start, end


def _group(text: str, start: int, end: int) -> tuple[int, int]:
    """The brackets around ``text[start:end]``, with the name written before them (``Static(…)``)."""
    closes, opens = _unmatched(text[start:end])
    start, end = max(_scan(text, start, -1, closes, stop_at_comma=False) - 1, 0), min(_scan(text, end, 1, opens, stop_at_comma=False) + 1, len(text))
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
        start -= 1
    return start, end


def _scan(text: str, at: int, step: int, depth: int, *, stop_at_comma: bool) -> int:
    """From ``at`` towards ``step``, the index just inside the first bracket (or comma) that is not closed on the way."""
    inward, outward = ("([{", ")]}") if step > 0 else (")]}", "([{")
    i = at if step > 0 else at - 1
    while 0 <= i < len(text):
        c = text[i]
        if c in inward:
            depth += 1
        elif c in outward:
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0 and stop_at_comma:
            break
        i += step
    return i if step > 0 else i + 1


def _unmatched(text: str) -> tuple[int, int]:
    """``(closing brackets without their opening one, opening brackets without their closing one)`` in ``text``."""
    closes = opens = 0
    for c in text:
        if c in "([{":
            opens += 1
        elif c in ")]}":
            if opens:
                opens -= 1
            else:
                closes += 1
    return closes, opens


def _fills_brackets(text: str, start: int, end: int) -> bool:
    return 0 < start and end < len(text) and text[start - 1] in "([{" and text[end] in ")]}"


def _clipped(text: str) -> str:
    return text if len(text) <= LONGEST_PART else f"{text[:LONGEST_PART]}…"


def _tidy_type(text: str) -> str:
    return re.sub(r"https?://\S+$", "", text).strip()


def _drop_common_suffix(change: ArgChange) -> ArgChange:
    """``f32[4]({})`` vs ``f32[3]({})``: the sharding part is the same, so show ``f32[4]`` vs ``f32[3]``."""
    part = re.compile(r"\(\{[^()]*\}\)")
    if part.findall(change.now) and part.findall(change.now) == part.findall(change.before):
        return ArgChange(change.where, part.sub("", change.now), part.sub("", change.before))
    return change


_ARG_PATH = re.compile(r"^(?:\[0\]|args)\[(?P<i>\d+)\]$|^(?:\[1\]|kwargs)\[(?P<k>'[^']*')\]$")


def input_path_name(path: str) -> str:
    """JAX's input path ``[0][1]`` -> ``argument 1``; ``[1]['n']`` -> ``keyword 'n'``."""
    m = _ARG_PATH.match(path)
    if m is None:
        return path
    return f"argument {m.group('i')}" if m.group("i") is not None else f"keyword {m.group('k')}"


def miss_summary(category: MissCategory, changes: tuple[ArgChange, ...], function: str, made_by: str | None = None,
                 source: str = "jax", *, replaces: str | None = None, replaces_cell: bool = False,
                 written: str | None = None, reloaded: bool = False, made_in: str | None = None, cleared: str | None = None,
                 traced_by_maker: bool = False, blamed: bool = False) -> str:
    """One line for a miss: ``x: now f32[4], before f32[3]``; ``made_by`` names a wrapper made per call, ``source`` the evidence.

    ``replaces``: where the earlier definition of the same name and file that this new function object replaces is defined;
    ``replaces_cell``: in a cell (so another cell may have defined the name anew), not a module.
    ``written``: the function with its transformations, as the user wrote them (``grad(jit(grad(f)))``), for a first
    trace and a wrapper made per call.
    ``reloaded``: a ``redefined`` function at the top of a module of the user's, which ran again.
    ``made_in``: a ``redefined`` function defined inside that function, whose every call makes it anew.
    ``cleared``: what emptied the cache of a function traced before, for a first trace since (``%jaxcache clear emptied its cache``).
    ``traced_by_maker``: the wrapper ``made_by`` names was made and traced in one call of it (``saved_residuals``).
    ``blamed``: a library's code passed the arguments (:func:`change_line`).
    """
    if category == "never_seen" and replaces is not None:
        how = (f"a cell that defines {function} anew, or an edited cell run again" if replaces_cell
               else "its module reloaded or run again: importlib.reload, %autoreload, %run")
        return f"first trace of a new {function}: it replaces the {function} defined at {replaces} that traced before, with other code ({how})"
    if category == "never_seen":
        return f"first trace of {written or function}" + (f" since {cleared}" if cleared else "")
    if category == "redefined" and made_by is not None and traced_by_maker:
        return (f"{written or function} is a new {made_by} wrapper: each call of {made_by} makes a new function object "
                "and traces it in that same call, so JAX's cache cannot find the earlier trace")
    if category == "redefined" and made_by in MADE_KINDS:
        return (f"{function} is a new {made_by} {MADE_KINDS[made_by]}: each call of {made_by} makes a new function object, "
                f"so JAX's cache cannot find the earlier trace; jit a function that calls {made_by} and applies what it "
                "returns, which traces once")
    if category == "redefined" and made_by is not None:
        return (f"{written or function} is a new {made_by} wrapper: each call of {made_by} makes a new function object, "
                "so JAX's cache cannot find the earlier trace; make it once, outside the loop or cell")
    if category == "redefined" and made_in:
        return (f"{function} is a new function object with the same name and source as one traced before: it is defined "
                f"inside {made_in}, which makes it anew each time it runs its definition (each call, each pass of a loop); "
                f"make the jitted function once, outside {made_in}")
    if category == "redefined":
        why = ": its module ran again (importlib.reload, %autoreload, %run), which makes each function in it anew" if reloaded else ""
        return f"{function} is a new function object with the same name and source as one traced before{why}"
    if category in ("input_types", "tracing_context") and changes:
        return _type_changes(changes)
    if changes:
        moved = [c.where for c in changes if {c.now, c.before} == {BY_POSITION, BY_KEYWORD}]
        return "; ".join(change_line(category, c, blamed) for c in changes) + (
            f" (JAX keys a call by how its arguments are passed: pass {', '.join(moved)} the same way each time)" if moved else "")
    if category == "tracing_context":
        return "a config option or context manager differs from every earlier trace"
    if category == "not_kept" and cleared:
        return f"{cleared} since that trace of {function}, so JAX traced it again"
    if category == "not_kept":
        return (f"that trace of {function} failed (an error, or Ctrl-C), or jax.clear_caches() ran since, "
                "so JAX traced it again")
    if category == "debug_info":
        return "same types, different debug info (e.g. argument names, or a jit target reused as a cond branch)"
    return {"jax": "see JAX's explanation", "jaxshow": "see jaxshow's comparison with the closest earlier signature"}.get(
        source, "no explanation available")


CHANGES_LISTED = 6
"""Changed input types a miss's line lists one by one, past those counted together."""

GROUPED_FROM = 3
"""Arrays of one argument whose dtype alone changed alike, from which they are said together."""

_ARRAY_TYPE = re.compile(r"^(?P<dtype>[a-z]+[0-9]*(?:<\w+>)?)(?P<rest>\[.*)$")
_ROOT = re.compile(r"^[^\[.]+")


def _type_changes(changes: tuple[ArgChange, ...]) -> str:
    """A miss's changed input types (after a changed context's values, which read as they are) in one line: ``p: 40 arrays now bf16, before f32 (shapes as before: p['layer0'],
    p['layer1'] …)`` for :data:`GROUPED_FROM` or more arrays of one argument whose dtype alone changed alike (a model
    cast to bfloat16), each other change as :func:`change_line` says it, :data:`CHANGES_LISTED` at most, then how many
    more (``miss.changes`` holds them all)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for change in changes:
        now, before, root = _ARRAY_TYPE.match(change.now), _ARRAY_TYPE.match(change.before), _ROOT.match(change.where)
        if now and before and root and now["rest"] == before["rest"] and now["dtype"] != before["dtype"]:
            groups.setdefault((root[0], now["dtype"], before["dtype"]), []).append(change.where)
    groups = {key: paths for key, paths in groups.items() if len(paths) >= GROUPED_FROM}
    grouped = {path for paths in groups.values() for path in paths}
    parts = [f"{root}: {len(paths)} arrays now {now}, before {before} (shapes as before: "
             f"{', '.join(paths[:3])}{' …' if len(paths) > 3 else ''})" for (root, now, before), paths in groups.items()]
    others = [c for c in changes if c.where not in grouped]
    parts += [change_line("input_types", c) for c in others[:CHANGES_LISTED]]
    more = len(others) - CHANGES_LISTED
    weak = any(c.now != c.before and _WEAK_TYPE.sub("", c.now) == _WEAK_TYPE.sub("", c.before) for c in changes)
    return ("; ".join(parts) + (f"; … {more} more change{'s' if more > 1 else ''} (all in miss.changes)" if more > 0 else "")
            + (f" ({WEAKLY_TYPED})" if weak else ""))


_WEAK_TYPE = re.compile(r"\{weak_type=(?:True|False)\}")
WEAKLY_TYPED = ("only weak typing differs: a Python scalar such as 1.0 is weakly typed, an array or jnp.float32(1.0) is "
                "not, and JAX traces the two apart; pass one kind each time")
"""Said after a miss's changed types where one differs from its earlier type in JAX's ``weak_type`` alone."""


def enclosing_function(qualname: str) -> str | None:
    """The function a function is defined in, from its qualified name: ``make_and_run.<locals>.<lambda>`` ->
    ``make_and_run``, ``Model.loss.<locals>.f`` -> ``Model.loss``; ``None`` at a module's or cell's top level."""
    outer, local, _ = qualname.rpartition(".<locals>.")
    return outer.replace(".<locals>", "") if local else None


_NAME_IN_TEXT = re.compile(r"^\s*(?:for )?(?P<name>\S+?)(?: id=\d+)? defined at ", re.M)


def _miss_from_text(text: str) -> CacheMiss:
    category, changes, same_line, site = parse_explanation(text)
    m = _NAME_IN_TEXT.search(text)
    name = m.group("name") if m else "?"
    return CacheMiss(name, category, miss_summary(category, changes, name), changes, text, "jax", site, (), same_line, time.time())
