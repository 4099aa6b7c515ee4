"""JAX's explanation of a tracing-cache miss, read as text: category, changed values, call site.

Owns the patterns for every wording jaxshow reads (jax >= 0.9, and as far as
it can jax <= 0.8), :func:`parse_explanation`, :func:`miss_summary` (the one
line a miss shows) and the miss made from a text alone. Static values are
shown without the memory addresses of default reprs (:mod:`jaxshow.reprs`).
Pure: strings in, :mod:`jaxshow.report` records out. Imports nothing of JAX,
IPython or the rest of :mod:`jaxshow.retrace`.
"""

from __future__ import annotations

import re
import time

from jaxshow.report import ArgChange, CacheMiss, MissCategory
from jaxshow.reprs import changed_texts, stable_text


_CONTEXT_LINE = re.compile(r"^\s*\* (?P<name>\S+) differs: now (?P<now>.*) and before (?P<before>.*)$")
_TYPE_LINE = re.compile(r"^\s*\* at (?P<where>.+?), now (?P<now>.+) and before (?P<before>.+?)(?:https?://\S+)?$")
_TREE_LINE = re.compile(r"^\s*\* at (?:input path )?(?P<where>.*?), now (?P<now>.+) and before (?P<before>.+?), so (?P<why>.*)$")
_STATIC_VALUE = re.compile(r"Static\(val=(?P<val>.*)\)")
_HEADER = re.compile(r"^TRACING CACHE MISS at (?P<site>.+?)(?: costing [\d.]+ ms because)?:$")
_SAME_LINE = "seen another function defined on the same line"
# jax <= 0.8 wording (pjit.explain_tracing_cache_miss): positions, not names, and values without argument names.
_OLD_CONTEXT_LINE = re.compile(r"^\s*\[(?P<i>\d+)\]: now (?P<now>.*) and before (?P<before>.*?)(?:, and)?$")
_OLD_STATIC_LINE = re.compile(r"^\s*now (?P<now>.*) and before (?P<before>.*)$")
_OLD_STATIC_HEAD = re.compile(r"different value of static (?P<what>args|kwargs):")
CONTEXT_POSITION = "trace context "
"""Prefix of a changed trace-context value named by its position (JAX releases that do not name the option)."""


def parse_explanation(text: str) -> tuple[MissCategory, tuple[ArgChange, ...], bool, str | None]:
    """Classify JAX's explanation text: ``(category, changes, same_line_hint, call_site)``.

    Accepts a whole ``TRACING CACHE MISS`` message or one diff from JAX's diff
    functions, in the wording of jax >= 0.9 and, as far as it can, older ones.
    """
    lines = text.splitlines()
    site = None
    if lines and (m := _HEADER.match(lines[0].strip())):
        site = m.group("site")
    same_line = _SAME_LINE in text
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
        static = "Static(" in text or "static arg" in text or "static kwarg" in text
        what = None
        for line in lines:
            if m := _OLD_STATIC_HEAD.search(line):
                what = m.group("what")
                continue
            if what and (m := _OLD_STATIC_LINE.match(line)):
                changes.append(ArgChange(f"static {what}", *changed_texts(stable_text(m.group("now")), stable_text(m.group("before")))))
                what = None
                continue
            if m := _TREE_LINE.match(line):
                now, before = m.group("now"), m.group("before")
                sv_now, sv_before = _STATIC_VALUE.search(now), _STATIC_VALUE.search(before)
                if sv_now and sv_before:
                    now, before = changed_texts(stable_text(sv_now.group("val")), stable_text(sv_before.group("val")))
                changes.append(ArgChange(_argument_name(m.group("where")) or "(top)", now, before))
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


def _tidy_type(text: str) -> str:
    return re.sub(r"https?://\S+$", "", text).strip()


def _drop_common_suffix(change: ArgChange) -> ArgChange:
    """``f32[4]({})`` vs ``f32[3]({})``: the sharding part is the same, so show ``f32[4]`` vs ``f32[3]``."""
    part = re.compile(r"\(\{[^()]*\}\)")
    if part.findall(change.now) and part.findall(change.now) == part.findall(change.before):
        return ArgChange(change.where, part.sub("", change.now), part.sub("", change.before))
    return change


_ARG_PATH = re.compile(r"^(?:\[0\]|args)\[(?P<i>\d+)\]$|^(?:\[1\]|kwargs)\[(?P<k>'[^']*')\]$")


def _argument_name(path: str) -> str:
    """JAX's input path ``[0][1]`` -> ``argument 1``; ``[1]['n']`` -> ``keyword 'n'``."""
    m = _ARG_PATH.match(path)
    if m is None:
        return path
    return f"argument {m.group('i')}" if m.group("i") is not None else f"keyword {m.group('k')}"


def miss_summary(category: MissCategory, changes: tuple[ArgChange, ...], function: str, made_by: str | None = None,
                 source: str = "jax") -> str:
    """One line for a miss: ``x: now f32[4], before f32[3]``; ``made_by`` names a wrapper made per call, ``source`` the evidence."""
    if category == "never_seen":
        return f"first trace of {function}"
    if category == "redefined" and made_by is not None:
        return (f"{function} is a new {made_by} wrapper: each call of {made_by} makes a new function object, "
                "so JAX's cache cannot find the earlier trace; make it once, outside the loop or cell")
    if category == "redefined":
        return f"{function} is a new function object with the same name and source as one traced before"
    if changes:
        return "; ".join(f"{c.where}: now {c.now}, before {c.before}" for c in changes)
    if category == "tracing_context":
        return "a config option or context manager differs from every earlier trace"
    if category == "not_kept":
        return (f"that trace of {function} failed (an error, or Ctrl-C), or jax.clear_caches() ran since, "
                "so JAX traced it again")
    if category == "debug_info":
        return "same types, different debug info (e.g. argument names, or a jit target reused as a cond branch)"
    return {"jax": "see JAX's explanation", "jaxshow": "see jaxshow's comparison with the closest earlier signature"}.get(
        source, "no explanation available")


_NAME_IN_TEXT = re.compile(r"^\s*(?:for )?(?P<name>\S+?)(?: id=\d+)? defined at ", re.M)


def _miss_from_text(text: str) -> CacheMiss:
    category, changes, same_line, site = parse_explanation(text)
    m = _NAME_IN_TEXT.search(text)
    name = m.group("name") if m else "?"
    return CacheMiss(name, category, miss_summary(category, changes, name), changes, text, "jax", site, (), same_line, time.time())
