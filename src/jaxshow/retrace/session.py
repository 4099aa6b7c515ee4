"""The ``%jaxcache`` session: while it is open, what traced, what hit, and why each miss missed.

Owns :class:`Session` (the callbacks of the probe on JAX's tracing cache, JAX's
explain flag, the filters on JAX's loggers, the tee that notes what a trace
prints, the per-function counters), :class:`CallCounter`, the calls
:func:`explain`, :func:`trace_history` and :func:`clear`, and :func:`explain_miss`,
a miss in the words of every report and of a freeze's error. It imports JAX
(through :mod:`jaxshow._jax_compat` for anything private) and the other modules
of :mod:`jaxshow.retrace`, which never import it; never IPython.

Two sources of evidence, one classification (:mod:`jaxshow.retrace.classify`):

* JAX's own explanation (``jax_explain_cache_misses``), caught from its logger
  with a filter so nothing reaches stderr. It compares a miss with *every*
  cached key, so its cost per miss grows with the cache (jax-facts §6, peers
  §5.4). :func:`explain` turns it on for the block; the ``on`` mode turns it on
  only while the tracing cache is small.
* jaxshow's own bounded history (:mod:`jaxshow.retrace.history`): a probe on
  JAX's tracing cache (:func:`jaxshow._jax_compat.install_trace_probe`) sees
  each trace with its cache key; the last :data:`HISTORY_LIMIT` keys per
  function are kept, and a miss is diffed against the closest of them with
  JAX's own diff function, so the text reads the same and the cost stays O(K).

A miss costs little however often a function misses: it keeps its raw facts
(:class:`_Miss`), the closest kept key of a type-only miss is one dictionary
look-up, and JAX's diff runs when a report shows the miss; per function the
first :data:`MISSES_KEPT_FIRST` and last :data:`MISSES_KEPT_LAST` misses are
kept, the others counted by category.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import sys
import re
import threading
import time
import weakref
from contextlib import contextmanager
from collections import deque
from typing import Any, Callable, Iterator

import jax

from jaxshow import _jax_compat, keyparts, persistent, timings
from jaxshow.capture import calls
from jaxshow.capture.carried import closure_function, library_file, package_of
from jaxshow.capture.definitions import definition_note
from jaxshow.capture.equinox_args import EQUINOX_STATIC, NOT_PASSED, TRACED, Side, static_leaf_changes, user_names
from jaxshow.capture.flax_args import graph_leaf_names
from jaxshow.capture.placement import placed_leaves, placement_text
from jaxshow.capture.sources import is_user_file
from jaxshow.capture.stations import COMPILED_TYPE, given_options, jit_target
from jaxshow.report import (
    MISS_CATEGORIES,
    NO_TRACING_INSTEAD,
    ArgChange,
    CacheClearReport,
    CacheMiss,
    CacheReport,
    ErrorSummary,
    FunctionCacheStats,
    LibraryBlame,
    TextDiff,
    TraceEntry,
    TraceHistory,
    jit_disabled_note,
    plural,
    redefined_cause,
    told_apart,
)
from jaxshow.irdiff import text_diff
from jaxshow.reprs import safe_repr
from jaxshow.retrace import fold
from jaxshow.retrace.blame import library_blame
from jaxshow.retrace.classify import _is_user_function, classify_miss, jax_own
from jaxshow.retrace.history import (
    HISTORY_LIMIT,
    RECORDING,
    _defined_at,
    _FunctionRecord,
    _unwrapped,
    closest_key,
    defined_in_top_level_loop,
    jax_maker,
    kept_before,
    let_go,
    moment,
    registry,
    remember_cached,
)
from jaxshow.retrace.identity import identity_part
from jaxshow.retrace.miss_text import (CONTEXT_POSITION, DEFINED_AT, EQUAL_AS_PRINTED, NO_SITE_HINT, THREAD_SITE_HINT, _miss_from_text,
                                       code_replaced, enclosing_function, explained_function, miss_summary, value_change)

CACHES_CLEARED = "jax.clear_caches() emptied JAX's cache"
"""What a trace came after, where jaxshow heard it (:meth:`Registry.caches_cleared`)."""
CLEARED_BY = {"after_clear": "%jaxcache clear emptied its cache",
              "released": "JAX let go of its earlier traces (jax.clear_caches(), its clear_cache(), or a trace of it failed)",
              "caches_cleared": CACHES_CLEARED}
"""What a first trace came after, by the status of its function (:meth:`Registry.record_for`, :func:`let_go`)."""

JAX_TEXT_MAX_ENTRIES = 32
"""In ``on`` mode, JAX's own O(N) explanation is used only while its tracing cache holds at most this many entries."""

MISSES_KEPT_FIRST = 5
MISSES_KEPT_LAST = 5
"""Misses of one function a session keeps in detail: the first and the last few; the others are counted by category."""

RECOUNT_EVERY = 256
"""In ``on`` mode, once JAX's tracing cache is large, its size is read again only every this many lookups (it only
shrinks when a cache is cleared); meanwhile jaxshow adds the misses it sees."""

JAXPR_DIFF_MAX_EQUATIONS = 2_000
"""A miss's jaxpr diff is printed only for jaxprs up to this many top-level equations each."""


PREVIOUS_TRACE = "jaxpr against the previous trace"

CLOSEST_TRACE = "jaxpr against the trace of the closest earlier signature"
"""The title of a miss's jaxpr diff where the signature it is explained against is not the one traced last."""


def _kept_jaxpr(jaxpr: Any) -> Any:
    """What a miss and its function's history keep of a trace's jaxpr for a later diff: the jaxpr without its constants'
    values, so that no array it closed over stays alive once JAX lets it go; past :data:`JAXPR_DIFF_MAX_EQUATIONS`
    top-level equations, never printed, only their number."""
    count = len(jaxpr.eqns)
    return count if count > JAXPR_DIFF_MAX_EQUATIONS else _jax_compat.jaxpr_without_values(jaxpr)


def _jaxpr_diff(before: Any, now: Any, title: str = PREVIOUS_TRACE, printed: dict[int, tuple[Any, str]] | None = None) -> TextDiff:
    """The jaxpr of an earlier trace against this one, each as :func:`_kept_jaxpr` kept it (printed now, when a report
    shows the miss). ``printed``: the jaxprs already printed for this report, by id (each held with its text), as
    one trace's jaxpr is the next one's earlier trace."""
    largest = max(j if isinstance(j, int) else len(j.eqns) for j in (before, now))
    if largest > JAXPR_DIFF_MAX_EQUATIONS:
        return TextDiff(title, "jaxpr", unavailable=f"not diffed: {largest:,} equations (over {JAXPR_DIFF_MAX_EQUATIONS:,}; "
                                                    "%%jaxstages --diff compares whole modules)")
    printed = {} if printed is None else printed
    texts = []
    for jaxpr in (before, now):
        found = printed.get(id(jaxpr))
        if found is None or found[0] is not jaxpr:
            found = printed[id(jaxpr)] = (jaxpr, _jax_compat.jaxpr_text(jaxpr))
        texts.append(found[1])
    return text_diff(title, "jaxpr", *texts)


def _against_definition(earlier: _FunctionRecord) -> str:
    """The title of a jaxpr diff against a function's previous definition: which one, and where it traced."""
    traced = earlier.entries[-1].call_site if earlier.entries else None
    defined = earlier.defined_label or earlier.defined_at
    where = ", ".join(bit for bit in (defined and f"defined at {defined}", traced and f"traced at {traced}") if bit)
    return f"jaxpr against the previous definition of {earlier.name}" + (f" ({where})" if where else "")


# --- the session: probe callbacks, log capture, trace-time output ---------------------------


def module_ran_again(record: _FunctionRecord, status: str, is_cell_file: Callable[[str], bool]) -> bool:
    """Whether ``record``'s function, a new object of a source traced before (``status`` ``"same_source"``), is defined at
    the top of a module of the user's (a file on disk: not a cell, which ipykernel names as a file it never writes; not
    inside a function, nor a loop at the module's top level; not a wrapper made per call): it comes from the module
    running again."""
    where = record.defined_in
    return (status == "same_source" and where is not None and not where.startswith("<") and not is_cell_file(where)
            and is_user_file(where) and "<locals>" not in record.qualname and record.made_by is None and os.path.isfile(where)
            and not defined_in_top_level_loop(record.defined_at))


def _pmap_names(record: _FunctionRecord, signature: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """``jax.pmap``'s jit body's arguments, ``flat_args[i]`` to JAX, by the user's parameter names (``{}`` where not known)."""
    fun = record.fun_ref() if record.fun_ref is not None else None
    return _jax_compat.pmapped_arg_names(fun, [name for name, _ in signature]) if fun is not None else {}


def _graph_names(key: Any, signature: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """``nnx.jit``'s leaves of a graph node argument, ``model.states[0][7]`` to JAX, by their variables' paths
    (``model.l1.kernel``; ``{}`` where not known)."""
    parts = _jax_compat.trace_key_parts(key) if key is not None and "flax.nnx" in sys.modules else None
    return graph_leaf_names(parts.treedef, [name for name, _ in signature]) if parts is not None else {}


STATIC_LEAF_CHARS = 1_000
"""Characters of a changed static leaf's text, at most (as many as JAX's static arguments get)."""


_EQUINOX_DYNAMIC = re.compile(r"^(?:\[0\]|args)\[[01]\](?:\['(?:first|rest)'\]|$)")
"""JAX's path into equinox's dynamic arguments (``[0][1]['rest'][1]``; jax 0.7: ``args[1]['rest'][1]``)."""


def _with_static_leaves(changes: tuple[ArgChange, ...], leaves: tuple[tuple[str, Any, Any], ...],
                        types: dict[str, str]) -> tuple[ArgChange, ...]:
    """``changes`` with equinox's one static value (``static: now …((None, 3.0), PyTreeDef(…))…``, jax <= 0.8's
    ``static args``) as the user's arguments in it that changed (``scale: now 3.0, before 2.0``); where a leaf was an
    array on one side, or its argument not passed, JAX's paths into equinox's arguments (``[0][1]['rest'][1]: now pytree
    leaf, before <class 'NoneType'>``) go too: ``scale: now traced (f32[]), before static (3.0)`` says it (``types``:
    the signature's, by the user's labels)."""
    sides_apart = any(isinstance(side, Side) for _, *sides in leaves for side in sides)
    gone = [i for i, c in enumerate(changes) if c.where in (EQUINOX_STATIC, "static args")  # jax <= 0.8: "static args"
            or (sides_apart and _EQUINOX_DYNAMIC.match(c.where))]
    if not gone:
        return changes
    named = tuple(_static_leaf_change(label, now, before, types.get(label)) for label, now, before in leaves)
    rest = [c for i, c in enumerate(changes) if i not in gone]
    return (*rest[:gone[0]], *named, *rest[gone[0]:])


def _static_leaf_change(label: str, now: Any, before: Any, traced_type: str | None) -> ArgChange:
    """One changed static leaf: its two texts, or where they print alike, the part of it that is another object; where
    it was an array on one side, ``traced (f32[])`` and ``static (3.0)``."""
    if isinstance(now, Side) or isinstance(before, Side):
        beside_traced = now is TRACED or before is TRACED
        return ArgChange(label, *(_side_text(side, traced_type, beside_traced) for side in (now, before)))
    change = value_change(label, safe_repr(now, STATIC_LEAF_CHARS), safe_repr(before, STATIC_LEAF_CHARS))
    parts = identity_part(now, before) if change.now == EQUAL_AS_PRINTED else None
    return change if parts is None else ArgChange(label, *parts)


def _side_text(side: Any, traced_type: str | None, beside_traced: bool) -> str:
    """``traced (f32[])``, ``not passed``, a value: ``static (3.0)`` beside a traced side, else as it prints."""
    if side is TRACED:
        return f"traced ({traced_type})" if traced_type else "traced"
    if side is NOT_PASSED:
        return "not passed"
    value = safe_repr(side, STATIC_LEAF_CHARS)
    return f"static ({value})" if beside_traced else value


def explain_miss(record: _FunctionRecord, status: str, key: Any, jax_text: str | None, old: Any, kept: int, from_jax: int, *,
                 described: tuple | None, call_site: str | None, blame: LibraryBlame | None, reloaded: bool,
                 replaces: str | None = None, replaces_cell: bool = False, replaced: tuple[str, str] | None = None,
                 wall_time: float = 0.0, thread: str | None = None, trace_error: ErrorSummary | None = None,
                 caches_cleared: bool = False, inside_own: bool = False) -> CacheMiss:
    """A miss explained in the words every report and a freeze's :class:`RetraceError` use: :func:`classify_miss`'s
    category and evidence, the summary, and why a re-defined function was made anew (its module ran again, or
    ``made_in`` the function that defines it); ``replaced``: where the function was and is defined, its code replaced
    in place since it last traced; ``thread``: the thread it ran on, where not the cell's; ``inside_own``: it traced inside
    the function's own trace, whose key is ``old`` (a recursive call)."""
    try:
        category, changes, evidence, source, notes, same_line, site = classify_miss(record, status, key, jax_text, old, kept, from_jax,
                                                                                    inside_own)
    except Exception as exc:  # noqa: BLE001 - a user object in the key (a static value's repr, __eq__) must not lose the trace
        category, changes, evidence, source, same_line, site = "other", (), "", "none", False, None
        notes = (f"jaxshow could not explain this miss: {type(exc).__name__}: {exc}",)
    reloaded = reloaded and category == "redefined"
    if replaced is not None:  # its new place is the debug info that differs
        changes = (code_replaced(record.name, *reversed(replaced)), *(c for c in changes if c.where != DEFINED_AT))
    signature = described[0] if described else ()
    if signature and ((key is not None and (names := user_names((n for n, _ in signature), key, record.name)))
                      or (names := _pmap_names(record, signature)) or (names := _graph_names(key, signature))):
        # eqx.filter_jit's leaves, jax.pmap's, by the user's parameters; nnx.jit's by the variables' paths
        signature = tuple((names.get(n, n), t) for n, t in signature)
        changes = tuple(dataclasses.replace(c, where=names.get(c.where, c.where)) for c in changes)
    if key is not None and old is not None and (leaves := static_leaf_changes(key, old, record.name)):
        changes = _with_static_leaves(changes, leaves, dict(signature))
    if thread is not None and not (call_site or site):  # no line of the user's on that thread: JAX's site is empty too
        notes = tuple(THREAD_SITE_HINT if note == NO_SITE_HINT else note for note in notes)
    made_in = (enclosing_function(record.qualname) if category == "redefined" and not reloaded and record.made_by is None
               and blame is None else None)
    return CacheMiss(
        function=record.name,
        category=category,
        summary=miss_summary(category, changes, record.name, record.made_by, source, replaces=replaces, replaces_cell=replaces_cell,
                             written=record.written(record.name), reloaded=reloaded, made_in=made_in,
                             cleared=CACHES_CLEARED if caches_cleared else CLEARED_BY.get(status), traced_by_maker=record.traced_by_maker,
                             blamed=blame is not None),
        changes=changes,
        evidence=evidence,
        evidence_source=source,
        evidence_notes=notes,
        call_site=call_site or site,
        signature=signature,
        same_line_hint=same_line and not reloaded and not made_in and not replaces,  # the summary says why it was made anew
        wall_time=wall_time,
        blame=blame,
        reloaded=reloaded,
        made_in=made_in,
        thread=thread,
        made_by=record.made_by if category == "redefined" else None,
        trace_error=trace_error,
    )


class _Frame:
    """One lookup in JAX's tracing cache, open on this thread."""

    __slots__ = ("fun", "debug_info", "jax_text", "output", "flag_context", "jaxpr", "error", "librarys", "librarys_own", "started",
                 "ended", "cached", "enclosing", "inside")

    def __init__(self, fun: Any, debug_info: Any, librarys: bool = False, librarys_own: bool = False) -> None:
        self.started = moment()
        """When the lookup started: a miss is compared only with the signatures JAX's cache held then."""
        self.ended = 0
        """When it ended: from then, a lookup that starts finds its key."""
        self.cached: tuple[int, list | None] | None = None
        """``(since, keys)``: JAX's cached keys of a function jaxshow keeps no history of, there since ``since``, read
        before anything but this lookup's own key could come in (:meth:`Session._open_lookup`, :meth:`Session._close_lookup`)."""
        self.fun = fun
        self.debug_info = debug_info
        self.librarys = librarys
        """Whether JAX's debug info names a library's file (equinox's ``filter_jit`` wrapper, flax's shape checks)."""
        self.librarys_own = librarys_own
        """A library's own ``jax.eval_shape`` of its own function (flax linen's shape checks): counted, not shown."""
        self.jaxpr: Any = None
        self.error: ErrorSummary | None = None
        """What this lookup's trace raised, if it did."""
        self.jax_text: str | None = None
        self.output: list[str] = []
        self.flag_context = None
        self.enclosing: _Frame | None = None
        """The lookup of the same function open on this thread as this one started: this one traces inside its trace (a
        recursive call), whose key JAX's cache holds only once that trace ends."""
        self.inside: list[_Miss] = []
        """The misses of lookups that ran inside this one's trace and found no earlier key: compared with this one's key
        when it ends (:meth:`Session.exit`)."""


class _Tee:
    """``sys.stdout`` while a trace runs: writes go through unchanged and are noted for the tracing function."""

    def __init__(self, target: Any, session: Session) -> None:
        self._target = target
        self._session = session

    def write(self, text: str) -> int:
        self._session._note_output(text)
        return self._target.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def miss_site(frame: Any, record: _FunctionRecord, debug_info: Any,
              cell_line: calls.CellLine = calls.no_cell) -> tuple[LibraryBlame | None, str | None]:
    """Where to point for a trace of ``record``'s function seen from ``frame`` out: the library blame and the user's
    line it names, else the innermost line in the user's code (``None`` when there is none), with the function it is in
    (``In[4]:3 in train``) where that is not the top level of a cell or file.

    The function's file is the one its record names: the user's for a function a library's jit carries
    (``eqx.filter_jit``), which JAX's debug info places in the library.
    """
    blame = library_blame(frame, record.name, record.defined_in or getattr(debug_info, "func_filename", None), cell_line)
    if blame is not None:
        return blame, blame.user_line
    site = calls.user_site(frame, cell_line)
    if site is None:
        return None, None
    inside = "" if site.function is None or site.function.startswith("<") else f" in {site.function}"
    return None, f"{site.file}:{site.line}{inside}"


class _Miss:
    """One trace that missed, kept as the raw facts of that moment; explained only when a report shows it.

    The facts are what :func:`classify_miss` needs (the function's record and
    how it was known, the trace's key, the closest earlier key and how many it
    was chosen from, JAX's own text), so the explanation is the one the miss
    would have had at once. ``category`` is known from the start: where the
    closest earlier key differs only in input types it is ``"input_types"``
    without asking JAX's diff function (:func:`jaxshow._jax_compat.only_types_differ`);
    any other miss is explained at once.
    """

    __slots__ = ("record", "status", "key", "described", "old", "kept", "from_jax", "jax_text", "call_site", "thread", "wall_time", "category",
                 "caches_cleared",
                 "jaxprs", "jaxprs_title", "blame", "replaces", "replaces_cell", "reloaded", "replaced", "error", "_explained", "_reported")

    def __init__(self, record: _FunctionRecord, status: str, key: Any, described: tuple | None, old: Any, kept: int,
                 from_jax: int, jax_text: str | None, call_site: str | None, wall_time: float) -> None:
        self.record, self.status, self.key, self.described = record, status, key, described
        self.from_jax = from_jax  # how many of the kept keys were read from JAX's tracing cache
        self.old, self.kept, self.jax_text, self.call_site, self.wall_time = old, kept, jax_text, call_site, wall_time
        self.thread: str | None = None  # the thread's name, where not the cell's
        self.category: str | None = None
        self.jaxprs: tuple[Any, Any] | None = None  # (previous trace's jaxpr, this one's): references, printed on report
        self.jaxprs_title = PREVIOUS_TRACE
        self.blame: LibraryBlame | None = None
        self.replaces: str | None = None
        """Where the definition this new function object replaces is defined (same name and file, other code)."""
        self.replaces_cell = False
        """That definition is a cell's (any cell: another may define the name anew), not a module's."""
        self.reloaded = False
        """A new function object with the source of one traced before, at the top of a module of the user's, which ran again."""
        self.replaced: tuple[str, str] | None = None
        """Where the function, the same object, was defined and is defined now, its code replaced in place since it last
        traced (:meth:`_FunctionRecord.replaced_code`)."""
        self.error: ErrorSummary | None = None
        """What the trace raised, if it did."""
        self.caches_cleared = False
        """Its signature traced before, and jax.clear_caches() let that trace go (:meth:`Registry.caches_cleared`)."""
        self._explained: CacheMiss | None = None
        self._reported: CacheMiss | None = None

    def explained(self) -> CacheMiss:
        """The :class:`CacheMiss`, explained on first use (JAX's diff against the closest key, read as text)."""
        if self._explained is None:
            if self.described is None and self.key is not None:
                self.described = _jax_compat.describe_trace_key(self.key)
            status, kept, inside_own = self.status, self.kept, self.status == "inside_own"
            if inside_own:  # compared with the enclosing trace's key, the one earlier signature there was
                status, kept = ("known", 1) if self.old is not None else ("new", 0)
            self._explained = explain_miss(
                self.record, status, self.key, self.jax_text, self.old, kept, self.from_jax, described=self.described,
                call_site=self.call_site, blame=self.blame, reloaded=self.reloaded, replaces=self.replaces, replaced=self.replaced,
                replaces_cell=self.replaces_cell, wall_time=self.wall_time, thread=self.thread, trace_error=self.error,
                caches_cleared=self.caches_cleared, inside_own=inside_own and self.old is not None)
            self.category = self._explained.category
            self.key = self.old = self.jax_text = None  # explained: the raw facts are no longer needed
        return self._explained

    def reported(self, printed: dict[int, tuple[Any, str]] | None = None) -> CacheMiss:
        """:meth:`explained` plus the jaxpr diff against the previous trace, printed and diffed once, then let go
        (``printed``: the jaxprs this report printed already, :func:`_jaxpr_diff`)."""
        if self._reported is None:
            miss = self.explained()
            if self.jaxprs is not None:
                miss = dataclasses.replace(miss, jaxpr_diff=_jaxpr_diff(*self.jaxprs, self.jaxprs_title, printed))
            self._reported, self.jaxprs = miss, None
        return self._reported

    def entry(self) -> TraceEntry:
        """This trace as a line of the function's history (``%jaxcache NAME``)."""
        miss = self.explained()
        return TraceEntry(miss.signature, miss.wall_time, miss.category, miss.summary, miss.reloaded, miss.made_in, miss.made_by)


class _Stats:
    """Mutable per-function counters for one session (frozen into ``FunctionCacheStats``).

    Misses kept in detail are bounded: the first ``first_limit`` and a ring of
    the last ``last_limit``; a miss pushed out of the ring is counted by category.
    """

    __slots__ = ("fun", "record", "wrapper", "traced", "calls", "traced_calls", "traced_ahead", "hits", "recompiled", "options_changed",
                 "jit_disabled", "refused", "untracked", "first", "last", "left_out", "output")

    def __init__(self, fun: Any, record: _FunctionRecord) -> None:
        self.fun = fun
        self.record = record
        self.wrapper: Any = None
        """The last counted call's ``jax.jit`` wrapper (its options are read only where a call compiled without tracing)."""
        self.traced = 0
        self.calls = 0
        self.traced_calls = 0
        self.traced_ahead = 0
        self.hits = 0
        self.recompiled: list[str] = []
        """Per call that compiled without tracing: where its arguments were placed."""
        self.options_changed = ""
        """Of the last call that compiled without tracing: how its wrapper's options differ from the call's before."""
        self.jit_disabled = 0
        self.refused = 0
        """Calls ``jax.no_tracing()`` refused: they missed JAX's C++ cache, and JAX raised before it looked up its traces."""
        self.untracked = 0
        """Calls of jax 0.7's ``jax.pmap``, whose traces and hits jaxshow does not see."""
        self.first: list[_Miss] = []
        self.last: deque[_Miss] = deque()
        self.left_out: dict[str, int] = {}
        self.output: list[str] = []

    def add(self, miss: _Miss, first_limit: int | None, last_limit: int) -> None:
        self.traced += 1
        if first_limit is None or len(self.first) < first_limit:
            self.first.append(miss)
            return
        self.last.append(miss)
        if len(self.last) > last_limit:
            gone = self.last.popleft()
            gone.jaxprs = None  # counted, never shown: its jaxprs are let go
            self.left_out[gone.category] = self.left_out.get(gone.category, 0) + 1

    def frozen(self, hits_counted: bool) -> FunctionCacheStats:
        record = self.record
        printed: dict[int, tuple[Any, str]] = {}  # one trace's jaxpr is the next one's earlier trace: printed once
        return FunctionCacheStats(
            function=record.name,
            qualname=record.written(record.qualname),
            defined_at=record.defined_at,
            traced=self.traced,
            calls=self.calls if hits_counted and self.wrapper is not None else None,
            hits=self.hits if hits_counted and self.wrapper is not None else None,
            traced_calls=self.traced_calls if hits_counted and self.wrapper is not None else None,
            traced_ahead=self.traced_ahead,
            recompiled=tuple(self.recompiled),
            recompiled_options=self.options_changed,
            jit_disabled=self.jit_disabled,
            refused=self.refused,
            untracked_calls=self.untracked,
            cache_size=_jax_compat.cache_size(self.wrapper) if self.wrapper is not None else None,
            misses=tuple(m.reported(printed) for m in (*self.first, *self.last)),
            trace_time_output=tuple(self.output),
            misses_left_out=sum(self.left_out.values()),
            left_out_by_category=tuple((c, self.left_out[c]) for c in MISS_CATEGORIES if self.left_out.get(c)),
            left_out_after=len(self.first) if self.left_out else 0,
        )


def _folded(group: list[_Stats], hits_counted: bool) -> FunctionCacheStats:
    """One row for function objects of one definition (:func:`fold.groups`): the definition's first trace and its
    first re-definition in detail, the other re-definitions counted with their call sites."""
    shown = group[:2] if group[0].first[0].category == "never_seen" else group[:1]
    rest = [s.first[0] for s in group[len(shown):]]
    for miss in rest:
        miss.jaxprs = None  # counted, never shown: its jaxprs are let go
    counted = hits_counted and all(s.wrapper is not None for s in group)
    sizes = [_jax_compat.cache_size(s.wrapper) if s.wrapper is not None else None for s in group]
    return dataclasses.replace(
        group[0].frozen(hits_counted),
        traced=sum(s.traced for s in group),
        calls=sum(s.calls for s in group) if counted else None,
        hits=sum(s.hits for s in group) if counted else None,
        traced_calls=sum(s.traced_calls for s in group) if counted else None,
        traced_ahead=sum(s.traced_ahead for s in group),
        cache_size=None if None in sizes else sum(sizes),
        recompiled=tuple(r for s in group for r in s.recompiled),
        misses=tuple(s.first[0].reported() for s in shown),
        trace_time_output=tuple(o for s in group for o in s.output),
        misses_left_out=len(rest),
        left_out_by_category=(("redefined", len(rest)),) if rest else (),
        left_out_after=len(shown) if rest else 0,
        objects=len(group),
        folded_sites=fold.sites(rest),
    )


class Session(_jax_compat.TraceProbe):
    """Collects traces, misses and trace-time output while open; :meth:`report` freezes them.

    Args:
        jax_text: ``"always"`` to keep JAX's own explanation on for the whole
            session (``%%jaxcache``), ``"when_cheap"`` to turn it on per trace only
            while JAX's tracing cache is small (``%jaxcache on``), ``"never"``.
        misses_kept: ``(first, last)``: how many misses of each function are
            kept in detail (the others are counted by category); ``None`` keeps all.
        is_cell_file: tells a notebook cell's file name: a function re-defined in any cell is
            compared with its previous definition (a re-run cell compiles to a new file name).
        line_place: a line of the cell compiled to a file name as the front end names cells (``(cell id, line id)``,
            :meth:`jaxshow.cellrun.CellRunner.line_place`), ``None`` where it sent no id: a lambda is taken for an edit
            or a re-definition of an earlier one only in the same cell, and for an edit only on the same line.
        cell_line: where a frame's line is in a cell as the user sees it (:data:`jaxshow.capture.calls.CellLine`),
            for a call made in a ``%%time`` cell's body.
        label: names the cells' files in a miss's call site as tracebacks do (``In[5]:2``), when the miss is seen:
            ipykernel names a cell's file by its text, so a later run of the same text would take its number.
    """

    def __init__(
        self,
        jax_text: str = "always",
        *,
        misses_kept: tuple[int, int] | None = (MISSES_KEPT_FIRST, MISSES_KEPT_LAST),
        is_cell_file: Callable[[str], bool] = lambda name: False,
        line_place: Callable[[str, int], tuple[str, int] | None] = lambda name, line: None,
        cell_line: calls.CellLine = calls.no_cell,
        label: Callable[[str], str] = str,
    ) -> None:
        if jax_text not in ("always", "when_cheap", "never"):
            raise ValueError(f"jax_text must be 'always', 'when_cheap' or 'never', not {jax_text!r}")
        if misses_kept is not None and (len(misses_kept) != 2 or min(misses_kept) < 0):
            raise ValueError(f"misses_kept must be (first, last) counts >= 0 or None, not {misses_kept!r}")
        self.jax_text = jax_text
        self.is_cell_file = is_cell_file
        self.line_place = line_place
        self.cell_line = cell_line
        self.label = label
        self._first_limit, self._last_limit = misses_kept if misses_kept is not None else (None, 0)
        self._entries: int | None = None  # JAX's tracing-cache size as last read, plus the misses seen since
        self._lookups_since_count = 0
        self._positional_context = False
        self._library_traces: dict[str, int] = {}
        """A library's own jax.eval_shape (or kin) traces of its own functions, by library: counted in one note."""
        self._compiled_ahead: dict[str, str] = {}
        """The user's functions JAX compiled with no trace, from a ``jax.stages.Lowered`` (``lowered.compile()``), by module."""
        self._compiled_earlier: set[str] = set()
        """Those of them compiled from a Lowered whose trace is known to be made before the session."""
        self._jaxprs: list[weakref.ref] = []
        """Each jaxpr traced in the session, not kept alive: a ``Lowered`` compiled from one is on its function's row."""
        self._compiled_calls: dict[tuple[str, str | None], int] = {}
        """Direct calls of the user's ``jax.stages.Compiled`` objects, by function name and definition."""
        self._nested_library_traces: dict[tuple[str, str], int] = {}
        """Traces of a library's functions made inside another trace, by where (:func:`_enclosing_trace`) and library
        (equinox's and diffrax's inside diffeqsolve): part of the enclosing trace, counted in one note per where."""
        self._made_inside: dict[tuple[str, str, str], int] = {}
        """Traces of wrappers a JAX function made anew inside another trace of the user's (``pl.pallas_call``'s per
        call, in a jitted function), by the user's function inside, the maker and the enclosing function: part of
        the enclosing trace, counted in one note each."""
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: dict[int, list[_Frame]] = {}
        """The lookups of each function (by id) open on any thread."""
        self._stats: dict[int, _Stats] = {}
        self._uninstall: Callable[[], None] | None = None
        self._logs: _LogCapture | None = None
        self._flag_context: Any = None
        self._stdout_before: Any = None
        self._tee: _Tee | None = None
        self._orphans: list[CacheMiss] = []
        self.notes: list[str] = []
        self.open = False
        self.paused = False
        self.thread_id = threading.get_ident()
        """The thread the session was started on (the cell's); a miss on another says so."""

    # lifecycle ---------------------------------------------------------------------------

    def start(self) -> Session:
        self._logs = _LogCapture(self)
        self._logs.start()
        self._uninstall = _jax_compat.install_trace_probe(self)
        if self._uninstall is None:
            self.notes.append(
                f"jax {jax.__version__} has no tracing-cache probe: misses come from JAX's log only, and hits are not counted"
            )
            if self.jax_text == "always":
                # A context on this thread, never a global update: whatever the cell does to the
                # global flag (jax.config.update) is still there after the session.
                self._flag_context = _jax_compat.explaining_cache_misses()
                self._flag_context.__enter__()
        self.open = True
        return self

    def stop(self) -> None:
        if not self.open:
            return
        self.open = False
        try:
            if self._uninstall is not None:
                self._uninstall()
        finally:
            try:
                if self._flag_context is not None:
                    self._flag_context.__exit__(None, None, None)
                    self._flag_context = None
            finally:
                if self._logs is not None:
                    self._logs.stop()

    # probe callbacks (on the tracing thread) ----------------------------------------------

    def enter(self, fun: Any, debug_info: Any) -> _Frame | None:
        if self.paused or not (_is_user_function(debug_info, fun) or calls.users_jit_traced(fun, sys._getframe(1), self.cell_line)):
            # JAX's own functions (the jax.numpy operations a trace calls): never recorded, and JAX
            # explains no miss of theirs; what runs inside them belongs to the enclosing user trace.
            # A jax.jit the user's code made of one (jax.jit(jnp.linalg.solve)) is the user's.
            return None
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        librarys = library_file(getattr(debug_info, "func_filename", None))
        frame = _Frame(fun, debug_info, librarys, librarys and calls.traced_only_by_library(sys._getframe(1)))
        frame.enclosing = next((open_ for open_ in reversed(stack) if open_.fun is fun), None)
        if self.jax_text == "always" or (self.jax_text == "when_cheap" and self._jax_text_is_cheap(fun)):
            # JAX's flag on for this lookup only, never for the whole cell: the cell's own reads of
            # it, and its compiles' log levels, stay what the user set (user_explains_cache_misses)
            frame.flag_context = _jax_compat.explaining_cache_misses()
            frame.flag_context.__enter__()
        if not stack:
            self._install_tee()
        stack.append(frame)
        self._open_lookup(frame)
        return frame

    def _open_lookup(self, frame: _Frame) -> None:
        """Note the lookup open; where another of the same function is (another thread's) and jaxshow keeps no history of
        it, read JAX's cached keys now for each open lookup without them: a trace that ends first adds its key, which a
        lookup already open did not find. (With no other lookup open, nothing but its own key can come in.)"""
        with self._lock:
            others = self._open.setdefault(id(frame.fun), [])
            others.append(frame)
            if len(others) > 1 and _no_history(frame.fun):
                waiting = [f for f in others if f.cached is None]
                if waiting:
                    cached = (min(f.started for f in waiting), _jax_compat.cached_trace_keys(frame.fun, frame.debug_info))
                    for f in waiting:
                        f.cached = cached

    def _close_lookup(self, frame: _Frame, recorded: bool) -> None:
        """Note the lookup closed; for a miss of a function jaxshow keeps no history of, read JAX's cached keys first: once
        closed, another thread's lookup may start, and end, before this one's miss is recorded."""
        with self._lock:
            if recorded and frame.cached is None and _no_history(frame.fun):
                frame.cached = (frame.started, _jax_compat.cached_trace_keys(frame.fun, frame.debug_info))
            others = self._open.get(id(frame.fun))
            if others is not None and frame in others:
                others.remove(frame)
                if not others:
                    del self._open[id(frame.fun)]

    def traced(self, frame: _Frame | None, jaxpr: Any) -> None:
        if frame is not None:
            frame.jaxpr = jaxpr
            self._jaxprs.append(weakref.ref(jaxpr))

    def raised(self, frame: _Frame | None, error: BaseException) -> None:
        if frame is not None and frame.error is None:
            frame.error = ErrorSummary.from_exception(error, "trace")

    def exit(self, frame: _Frame | None, missed: bool, key: Any) -> None:
        if frame is None:
            return
        try:
            frame.ended = moment()
            stack = self._local.stack
            if stack and stack[-1] is frame:
                stack.pop()
            # a library's jitted function traced inside another trace is part of it, unless it is that function's own
            # (eqx.filter_jit recursing): then it is the user's function again
            librarys_inner = bool(stack) and frame.librarys and frame.enclosing is None
            recorded = (missed and not frame.librarys_own and getattr(frame.debug_info, "traced_for", "jit") == "jit"
                        and not librarys_inner)
            for miss in frame.inside:
                miss.old = key if recorded else None  # the enclosing trace's own key, now in JAX's cache
                miss.explained()
            frame.inside = []
            self._close_lookup(frame, recorded)
            if not stack:
                self._remove_tee()
            if frame.flag_context is not None:
                frame.flag_context.__exit__(None, None, None)
            if missed and self._entries is not None:
                self._entries += 1
            if missed and frame.librarys_own:
                library = package_of(frame.debug_info.func_filename)
                with self._lock:
                    self._library_traces[library] = self._library_traces.get(library, 0) + 1
            elif missed and librarys_inner:
                library = package_of(frame.debug_info.func_filename)
                where = (_enclosing_trace(stack[0]), library)
                with self._lock:
                    self._nested_library_traces[where] = self._nested_library_traces.get(where, 0) + 1
            elif recorded and stack and (maker := jax_maker(frame.fun)) is not None and registry.lookup(frame.fun) is None:
                where = (_wrapped_name(frame), maker, getattr(stack[-1].debug_info, "func_name", None) or "?")
                with self._lock:
                    self._made_inside[where] = self._made_inside.get(where, 0) + 1
            elif recorded:
                self._record_miss(frame, key)
        except Exception as exc:  # noqa: BLE001 - the probe must never break the user's call
            self.notes.append(f"jaxshow could not record a trace: {type(exc).__name__}: {exc}")

    # evidence ----------------------------------------------------------------------------

    def _note_output(self, text: str) -> None:
        stack = getattr(self._local, "stack", None)
        if stack:
            stack[-1].output.append(text)

    def _note_jax_text(self, text: str) -> bool:
        """A ``TRACING CACHE MISS`` record: attach it to the trace open on this thread, unless it names another function
        (a lookup inside that trace jaxshow keeps no frame of: ``jax.checkpoint(g)`` traced inside it)."""
        stack = getattr(self._local, "stack", None)
        if stack and stack[-1].jax_text is None:
            named, own = explained_function(text), getattr(stack[-1].debug_info, "func_name", None)
            if named is None or own is None or named == own:
                stack[-1].jax_text = text
            return True
        if self._uninstall is None:
            self._orphans.append(_miss_from_text(text))
        return True

    def _install_tee(self) -> None:
        current = sys.stdout
        if isinstance(current, _Tee) or current is None:
            return
        self._stdout_before = current
        self._tee = _Tee(current, self)
        sys.stdout = self._tee

    def _remove_tee(self) -> None:
        if self._tee is not None and sys.stdout is self._tee:
            sys.stdout = self._stdout_before
        self._tee = None
        self._stdout_before = None

    def _jax_text_is_cheap(self, fun: Any) -> bool:
        """Whether JAX's own explanation of a miss would compare it with few keys (``when_cheap`` mode).

        Where JAX's count covers every function (jax >= 0.9) it is read while
        small, then only every :data:`RECOUNT_EVERY` lookups, jaxshow adding
        the misses it sees in between: the cache only shrinks when cleared.
        """
        if not _jax_compat.trace_cache_counts_all_functions():
            entries = _jax_compat.trace_cache_entries(fun)
            return entries is not None and entries <= JAX_TEXT_MAX_ENTRIES
        entries = self._entries
        if entries is None or entries <= JAX_TEXT_MAX_ENTRIES or self._lookups_since_count >= RECOUNT_EVERY:
            entries = self._entries = _jax_compat.trace_cache_entries()
            self._lookups_since_count = 0
        else:
            self._lookups_since_count += 1
        return entries is not None and entries <= JAX_TEXT_MAX_ENTRIES

    def _record_miss(self, frame: _Frame, key: Any) -> None:
        """Keep the raw facts of a miss (cheap); explain it now only where its category needs JAX's diff.

        A miss is compared with the signatures JAX's cache held as its lookup started: another thread's trace of the same
        function that ended meanwhile (``jax.jit`` calls in a thread pool) is not one it could have found."""
        fun, debug_info = frame.fun, frame.debug_info
        with RECORDING:  # inside the lookup's each_pair_compared_once (_jax_compat's probes)
            record, status = registry.record_for(fun, debug_info, key, self.line_place)
            if status == "known" and record.made > frame.started:  # first traced by a lookup that ended after this one began
                status = "new" if record.first_status == "known" else record.first_status
            elif status == "new" or (key is not None and not record.keys):  # new, or seen only hitting till now
                remember_cached(record, fun, debug_info, key, frame.started, frame.cached)
            kept, from_jax = kept_before(record, frame.started, key)
            if status == "new" and from_jax:
                status = "known"  # it traced before jaxshow looked: JAX's cache holds those keys
            replaced = record.replaced_code(fun) if status == "known" else None
            if record.defined_label is None and record.defined_at:
                record.defined_label = self.label(record.defined_at)
            ahead = calls.traced_ahead_of_time(sys._getframe(1))
            blame, call_site = miss_site(sys._getframe(1), record, debug_info, self.cell_line)
            call_site = call_site and self.label(call_site)
            thread = threading.current_thread().name if threading.get_ident() != self.thread_id else None
            if call_site is not None and thread is not None:
                call_site += f" (on thread {thread})"
            parts = _jax_compat.trace_key_parts(key)
            described = _jax_compat.describe_trace_key(key) if key is not None and parts is None else None  # else when explained
            old = closest_key(record, key, described, parts, frame.started) if status == "known" else None
            old_key = old.key if old is not None else None
            released = None
            if old is None and status == "known" and not kept and key is not None:
                released = let_go(record, key)  # its earlier signatures held objects of the user's, which JAX let go of
                if released in ("same", "cleared"):
                    old_key = key  # that signature itself: traced before, not kept by JAX
                elif released is not None:
                    status = released
            inside = frame.enclosing is not None and not kept and status in ("new", "same_source")
            miss = _Miss(record, "inside_own" if inside else status, key, described, old_key, kept, from_jax, frame.jax_text, call_site,
                         time.time())
            miss.blame, miss.thread, miss.error = blame, thread, frame.error
            miss.caches_cleared = released == "cleared"
            miss.replaced = replaced and tuple(self.label(at) if at else "?" for at in replaced)
            earlier = None
            if frame.jaxpr is not None and status in ("new", "same_source") and not inside:
                earlier = registry.previous_definition(record, self.is_cell_file)
                if earlier is not None and status == "new" and not self._edited(record):
                    earlier.let_go_if_unused()
                    earlier = None
                if earlier is not None and status == "new":  # same name and file, other source: its code changed
                    miss.replaces = earlier.defined_label or earlier.defined_at or "?"
                    miss.replaces_cell = earlier.defined_in is not None and self.is_cell_file(earlier.defined_in)
            miss.reloaded = module_ran_again(record, status, self.is_cell_file)
            if inside:
                frame.enclosing.inside.append(miss)  # explained when the enclosing trace ends, against its key
            elif (old is not None and not old.loose and parts is not None and old.parts is not None
                    and _jax_compat.only_types_differ(parts, old.parts)):
                miss.category = "input_types"  # explained when shown; one whose keys hold objects, at once (to let them go)
            else:
                explained = miss.explained()
                if explained.category == "tracing_context" and any(c.where.startswith(CONTEXT_POSITION) for c in explained.changes):
                    self._positional_context = True
            newest = record.keys[-1] if record.keys else None
            if key is not None:
                record.remember(key, described, parts, since=frame.ended)
            if frame.jaxpr is not None:
                kept_jaxpr = _kept_jaxpr(frame.jaxpr)
                if key is not None:
                    record.keep_jaxpr(kept_jaxpr)
                if old is not None and old.jaxpr is not None and old is not newest:
                    miss.jaxprs, miss.jaxprs_title = (old.jaxpr, kept_jaxpr), CLOSEST_TRACE  # not the newest: diffed with it
                elif record.last_jaxpr is not None and record.last_jaxpr_since <= frame.started:
                    miss.jaxprs = (record.last_jaxpr, kept_jaxpr)
                elif earlier is not None and (before := earlier.last_jaxpr) is not None:
                    # a re-run cell's new function object: compared with the definition it replaces (its jaxpr read once:
                    # it is let go when its function is freed)
                    miss.jaxprs, miss.jaxprs_title = (before, kept_jaxpr), _against_definition(earlier)
                record.last_jaxpr, record.last_jaxpr_since = kept_jaxpr, frame.ended
            if earlier is not None:
                earlier.let_go_if_unused()
            record.entries.append(miss)
            if not record.traces:
                record.made, record.first_status = frame.ended, status
            record.traces += 1
        with self._lock:
            stats = self._stats_of(fun, lambda: record)
            stats.add(miss, self._first_limit, self._last_limit)
            stats.traced_ahead += ahead
            if frame.output:
                stats.output.append("".join(frame.output))
        traced = getattr(self._local, "traced", None)
        if traced is None:
            traced = self._local.traced = {}
        traced[id(fun)] = traced.get(id(fun), 0) + 1

    def _edited(self, record: _FunctionRecord) -> bool:
        """Whether ``record``'s function, with other code than the previous definition it was matched with, can be an
        edit of it: one bound to the same name can; a cell's lambda only where the front end names the cell (another
        cell's lambda on the same line and column is no earlier version of it)."""
        if not record.qualname.endswith("<lambda>") or not record.defined_in or not self.is_cell_file(record.defined_in):
            return True
        return record.place is not None

    # counting calls (cell mode) ----------------------------------------------------------

    def traced_count(self, fun: Any) -> int:
        """How many traces of ``fun`` this thread made in the session: another thread's, ending while a call of this one
        hit the cache (a thread pool of ``f`` over new shapes), are not this call's."""
        return getattr(self._local, "traced", {}).get(id(fun), 0)

    def _stats_of(self, fun: Any, record: Callable[[], _FunctionRecord]) -> _Stats:
        """``fun``'s counters in this session (called with the lock held), made around ``record()`` where it has none."""
        stats = self._stats.get(id(fun))
        if stats is None or stats.fun is not fun:
            stats = self._stats[id(fun)] = _Stats(fun, record())
        return stats

    def counted(self, fun: Any) -> bool:
        """Whether a direct call of ``fun`` was counted in the session (this cell, for ``%%jaxcache``)."""
        with self._lock:
            stats = self._stats.get(id(fun))
            return stats is not None and stats.fun is fun

    def _compiling_ahead(self, module: str, frame: Any) -> None:
        """A compile of ``module`` logged at ``frame``: the user's function, if a ``Lowered.compile()`` compiles it there."""
        if not _jax_compat.lowered_compiling(frame):  # a jitted call's own compile, after its trace
            return
        computation = _jax_compat.computation_compiling(frame)
        name, source = _jax_compat.debug_info_function(_jax_compat.program_debug_info(computation))
        if computation is not None and source is not None and (is_user_file(source) or self.is_cell_file(source)):
            mark, jaxprs = _jax_compat.trace_mark(computation), [j() for j in self._jaxprs]  # marks read now: JAX sets them after a trace
            with self._lock:
                self._compiled_ahead[module] = name
                if mark is not None and None not in jaxprs and not any(_jax_compat.trace_mark(j) is mark for j in jaxprs):
                    self._compiled_earlier.add(name)

    def compile_events(self) -> int:
        """How many compiles JAX has logged in this session so far."""
        return len(self._logs.compiles) if self._logs is not None else 0

    def compiled_since(self, events: int, fun: Any) -> bool:
        """Whether JAX compiled ``fun``'s module on this thread since the first ``events`` compiles of the session (its
        name read only where one did: a callable object's ``__getattr__`` is the user's, and a hit runs none)."""
        thread = threading.get_ident()
        if self._logs is None or thread not in self._logs.threads[events:]:
            return False
        record = registry.lookup(fun)
        modules = {persistent.module_name(n) for n in (record.jax_names if record else (str(getattr(fun, "__name__", "")),))}
        return any(e.module in modules and on == thread for e, on in zip(self._logs.compiles[events:], self._logs.threads[events:]))

    def count_call(self, wrapper: Any, fun: Any, traced: bool, compiled_at: str | None = None, jit_disabled: bool = False,
                   untracked: bool = False, refused: bool = False) -> None:
        """One direct call: traced, a hit, (``compiled_at``, where its arguments were placed) compiled from a reused trace,
        run op by op under ``jax.disable_jit()`` (no cache looked up: not a hit), ``untracked``: a call of jax 0.7's
        ``jax.pmap``, whose trace or hit jaxshow does not see, or ``refused`` by ``jax.no_tracing()``: not a hit."""
        with self._lock:
            stats = self._stats_of(fun, lambda: registry.lookup(fun)
                                   or registry.record_for(fun, None, line_place=self.line_place)[0])
            previous, stats.wrapper = stats.wrapper, wrapper
            stats.calls += 1
            if compiled_at is not None:  # nothing read per hit: the options only where they may say why it compiled
                stats.recompiled.append(compiled_at)
                options = wrapper_options(wrapper)
                before = None if previous is None else options if previous is wrapper else wrapper_options(previous)
                stats.options_changed = options_change(options, before)
            elif untracked:
                stats.untracked += 1
            elif refused:
                stats.refused += 1
            elif jit_disabled and not traced:
                stats.jit_disabled += 1
            elif not traced:
                stats.hits += 1
            else:
                stats.traced_calls += 1

    def compiled_again(self, fun: Any) -> None:
        """A call of ``fun`` that JAX compiled from an earlier trace, seen by ``%jaxcache on``'s watch
        (:class:`~jaxshow.capture.calls.RecompileWatch`), which reads no arguments; a function jaxshow never saw trace
        (JAX's own, or the user's before any session) is left out."""
        record = registry.lookup(fun)
        if record is None or self.paused:
            return
        with self._lock:
            self._stats_of(fun, lambda: record).recompiled.append("")

    def count_compiled_call(self, compiled: Any) -> None:
        """One direct call of a ``jax.stages.Compiled``: its executable ran, with no cache looked up, no trace or compile;
        counted under the function its executable's debug info names, where that is the user's."""
        info = _jax_compat.program_debug_info(_jax_compat.compiled_executable(compiled))
        name, source = _jax_compat.debug_info_function(info)
        if source is not None and (is_user_file(source) or self.is_cell_file(source)):
            key = (name, _defined_at(None, info))
            with self._lock:
                self._compiled_calls[key] = self._compiled_calls.get(key, 0) + 1

    # freezing ----------------------------------------------------------------------------

    def report(self, *, hits_counted: bool = False, cell_error: BaseException | None = None,
               jit_disabled: str | None = None) -> CacheReport:
        """Freeze what the session saw into a :class:`CacheReport` (plain data; no functions kept); ``jit_disabled``: how
        jit was disabled in the cell, said in a note unless a row's calls ran op by op."""
        with self._lock:
            stats_list = list(self._stats.values())
        grouped = fold.groups(stats_list) if self._first_limit is not None else [[s] for s in stats_list]
        functions = [g[0].frozen(hits_counted) if len(g) == 1 else _folded(g, hits_counted) for g in grouped]
        if self._orphans:
            by_name: dict[str, list[CacheMiss]] = {}
            for miss in self._orphans:
                by_name.setdefault(miss.function, []).append(miss)
            for name, misses in by_name.items():
                functions.append(FunctionCacheStats(function=name, qualname=name, defined_at=None, traced=len(misses), misses=tuple(misses)))
        for (name, defined_at), n in self._compiled_calls.items():
            at = next((i for i, f in enumerate(functions) if (f.function, f.defined_at) == (name, defined_at)), None)
            if at is None:
                functions.append(FunctionCacheStats(function=name, qualname=name, defined_at=defined_at, traced=0, calls=n, hits=0,
                                                    compiled_calls=n))
            else:
                f = functions[at]
                functions[at] = dataclasses.replace(f, calls=(f.calls or 0) + n, compiled_calls=n)
        rows = {f.function for f in functions}
        named = rows | set(self._compiled_ahead.values()) | {n for s in stats_list for n in s.record.jax_names}
        compiles, helpers = persistent.split_compiles(self._logs.compiles if self._logs else [], named)
        notes = list(self.notes)
        unseen = jit_disabled if not any(f.jit_disabled for f in functions) else None
        if unseen is not None:
            notes.append(jit_disabled_note(unseen))
        ahead = dict.fromkeys(self._compiled_ahead.values())
        if untraced := [n for n in ahead if n not in rows]:  # f.lower(x).compile(): f's row
            notes.append(f"compiled ahead of time from a jax.stages.Lowered (lowered.compile()), with no trace: {', '.join(untraced)}")
        notes.extend(f"{n}: also compiled from a jax.stages.Lowered made before (lowered.compile()), with no trace (not counted "
                     "among its traces)" for n in ahead if n in rows and n in self._compiled_earlier)
        if helpers:
            notes.append(helpers_note(helpers))
        notes.extend(_nested_jit_note(s, inner) for s in stats_list if (inner := _nested_jit(s, self._stats)) is not None)
        notes.extend(note for s in stats_list if s.fun is not None and (note := definition_note(s.fun, s.record.qualname)) is not None)
        notes.extend(f"{s.record.qualname}: its code was replaced in place since its last trace (as %autoreload does), and "
                     f"{plural(s.hits, 'call')} hit the cache: {'it' if s.hits == 1 else 'they'} ran the program traced from the "
                     "earlier code; a new signature traces the new code, and jax.clear_caches() lets every signature trace again"
                     for s in stats_list if s.hits and s.fun is not None and s.record.replaced_code(s.fun, take=False) is not None)
        if self._library_traces:
            count = sum(self._library_traces.values())
            notes.append(f"libraries traced {count} function{'s' if count > 1 else ''} of their own with jax.eval_shape, "
                         f"jax.make_jaxpr or .trace() ({_by_library(self._library_traces)}), which compile nothing "
                         "(flax linen and equinox check shapes so); not shown")
        notes.extend(_made_inside_note(*where, n) for where, n in self._made_inside.items())
        for inside in dict.fromkeys(where for where, _ in self._nested_library_traces):
            by_library = {library: n for (where, library), n in self._nested_library_traces.items() if where == inside}
            count = sum(by_library.values())
            notes.append(f"{count} trace{'s' if count > 1 else ''} of libraries' own jitted functions made inside {inside} "
                         f"({_by_library(by_library)}): part of those traces and compiled with them; not shown")
        if self._positional_context or any(c.where.startswith(CONTEXT_POSITION) for f in functions for m in f.misses for c in m.changes):
            notes.append(
                f"jax {jax.__version__} does not name the config option behind a tracing-context change; "
                "'trace context [i]' is its position in the tuple of jax._src.config.trace_context()"
            )
        for f in functions:
            name = told_apart(f, functions)
            if f.recompiled:
                notes.append(
                    f"{name}: {plural(len(f.recompiled), 'call')} compiled without a new trace: JAX reused an "
                    "earlier trace and lowered it anew for what it does not trace for: an argument's sharding or device, or "
                    "that jax.device_put committed it to its device"
                    + (f" (the last such call's arguments: {f.recompiled[-1]})" if f.recompiled[-1] else
                       " (%jaxcache on reads no call's arguments; %%jaxcache on the cell says where they were)")
                    + ", donation, the options of another "
                    f"jax.jit wrapper of {f.function}, or a first call of its own after a call inside another jitted "
                    "function, which traced it there but compiled only that function, or after jax.eval_shape, "
                    "jax.make_jaxpr or .trace(), which trace it and compile nothing"
                    + (f"; the last such call's jax.jit wrapper {f.recompiled_options}" if f.recompiled_options else ""))
            if f.jit_disabled:
                notes.append(f"{name}: {plural(f.jit_disabled, 'call')} ran op by op: jax.disable_jit() was in effect, so JAX "
                             f"did not look up its cache, trace or compile {'it' if f.jit_disabled == 1 else 'them'} (not counted as hits)")
            if f.refused:
                notes.append(f"{name}: {plural(f.refused, 'call')} refused by jax.no_tracing(): "
                             f"{'it' if f.refused == 1 else 'they'} missed JAX's C++ dispatch cache, and JAX raised before it "
                             f"looked up its traces, so it says neither whether it would have traced nor why (not counted as "
                             f"hits); {NO_TRACING_INSTEAD}")
            if f.untracked_calls:
                notes.append(f"{name}: {plural(f.untracked_calls, 'call')} of jax.pmap, which on jax {jax.__version__} traces "
                             "and compiles outside jax.jit's path: jaxshow sees neither its traces nor its cache hits, so "
                             f"{'it is' if f.untracked_calls == 1 else 'they are'} counted as neither")
            if f.compiled_calls:
                notes.append(f"{name}: {plural(f.compiled_calls, 'call')} of a jax.stages.Compiled ran its executable, compiled "
                             f"ahead of time: JAX did not look up its cache, trace or compile {'it' if f.compiled_calls == 1 else 'them'} "
                             "(not counted as hits)")
        if not hits_counted:
            notes.append("calls that hit the cache are not counted here (counting would slow every call); %%jaxcache on a cell counts them")
        error = ErrorSummary.from_exception(cell_error) if cell_error is not None else None
        return CacheReport(
            functions=tuple(functions),
            persistent=tuple(compiles),
            hits_counted=hits_counted,
            notes=tuple(notes),
            cell_error=error,
            jit_disabled=unseen is not None,
        )

    def reset(self) -> None:
        """Forget this session's counters (the process-wide history stays)."""
        with self._lock:
            self._stats.clear()
            self._orphans.clear()
            self.notes.clear()
            self._positional_context = False
            self._library_traces.clear()
            self._nested_library_traces.clear()
            self._made_inside.clear()
            self._compiled_ahead.clear()
            self._compiled_earlier.clear()
            self._jaxprs.clear()
            self._compiled_calls.clear()
            self._entries = None
        if self._logs is not None:
            self._logs.clear()


def _nested_jit(stats: _Stats, all_stats: dict[int, _Stats]) -> _Stats | None:
    """The row of the jitted function that ``stats``' function, a ``functools.partial`` of it jitted (as
    ``jax.eval_shape(partial(f, …))`` jits one), traced inside it in the session; else ``None``."""
    target = jit_target(stats.fun) if type(stats.fun) is functools.partial and stats.traced else None
    inner = _jax_compat.jit_function(target[0]) if target is not None else None
    found = all_stats.get(id(inner)) if inner is not None else None
    return found if found is not None and found.fun is inner and found.traced else None


def _nested_jit_note(stats: _Stats, nested: _Stats) -> str:
    """Why a jit of a partial of a jitted function and that function are two rows, each traced."""
    outer, inner = (s.record.written(s.record.qualname) for s in (stats, nested))
    return (f"{outer} and {inner}: two real traces of one call: {outer} is the jax.jit around functools.partial({inner}, …) "
            f"that jax.eval_shape (or jax.make_jaxpr, or your code) made, and its trace traced {inner}'s own jax.jit inside it")


def helpers_note(modules: list[str]) -> str:
    """The note on the compiles of no row: eager ``jax.lax`` loops and branches, as ``%%jaxstages`` names them, programs
    exported with ``jax.export`` that ``Exported.call`` ran (in JAX's own ``call_exported``), and JAX's own helper
    functions: ``JAX also compiled 1 eager jax.lax loop or branch (scan) and 2 of its own helper functions (eager
    jax.numpy operations); not shown``."""
    kinds = {persistent.module_name(kind): kind for kind in calls.EAGER_CONTROL_FLOW}
    loops = [kinds[m] for m in modules if m in kinds]
    exported = modules.count(_EXPORTED_CALL)
    running = {persistent.module_name(name): name for name in calls.USER_CODE_HELPERS}
    yours = [running[m] for m in modules if m in running]
    said = []
    if loops:
        what = "eager jax.lax loop or branch" if len(loops) == 1 else "eager jax.lax loops and branches"
        said.append(f"{len(loops)} {what} ({', '.join(dict.fromkeys(loops))})")
    if exported:
        said.append(f"{plural(exported, 'program')} exported with jax.export, run by Exported.call (in JAX's own "
                    "call_exported; %%jaxstages shows its stations)")
    said.extend(f"{name} {'once' if yours.count(name) == 1 else f'{yours.count(name)} times'} ({calls.USER_CODE_HELPERS[name]})"
                for name in dict.fromkeys(yours))
    if len(modules) > len(loops) + exported + len(yours):
        said.append(f"{len(modules) - len(loops) - exported - len(yours)} of its own helper functions (eager jax.numpy operations)")
    return f"JAX also compiled {' and '.join(said)}; not shown"


_EXPORTED_CALL = persistent.module_name("call_exported")
"""The module JAX compiles for ``Exported.call`` outside jit, on jax 0.7 to 0.12: ``jit_call_exported``."""


def _by_library(counts: dict[str, int]) -> str:
    """``{"equinox": 75, "diffrax": 30}`` -> ``75 equinox, 30 diffrax`` (most first)."""
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1]))


_LAX_BODIES = {"scan": "scan", "fori_loop": "fori_loop", "while_body": "while_loop", "while_cond": "while_loop",
               "cond": "cond", "switch": "switch"}
"""JAX's ``traced_for`` of the bodies of ``jax.lax`` loops and branches, and the API each is traced for."""


def _enclosing_trace(root: _Frame) -> str:
    """Where a library's trace inside ``root``'s trace was made, as the note says it: a trace the report lists, or
    (blackjax's window adaptation) the body of an eager ``jax.lax`` loop, or a library's own shape check."""
    traced_for = getattr(root.debug_info, "traced_for", "jit")
    if root.librarys_own:
        return "libraries' own jax.eval_shape or jax.make_jaxpr traces"
    if traced_for == "jit":
        return "the traces above"
    api = _LAX_BODIES.get(traced_for)
    return f"the body of an eager jax.lax.{api}" if api else f"JAX's trace for {traced_for}"


def _made_inside_note(inner: str, maker: str, outer: str, traces: int) -> str:
    """Why the traces of ``inner`` inside ``outer``'s, each of a new wrapper ``maker`` made, have no row."""
    if traces == 1:
        return (f"{inner}: traced inside {outer}'s trace, as a new {maker} wrapper that trace made (each call of {maker} "
                f"makes one): part of {outer}'s trace and compiled with it; not shown")
    return (f"{inner}: traced {traces} times inside {outer}'s traces, each time as a new {maker} wrapper that trace made "
            f"(each call of {maker} makes one): part of {outer}'s traces and compiled with them; not shown")


def _wrapped_name(frame: _Frame) -> str:
    """The name of the user's function inside a wrapper JAX made (``add_kernel`` in ``pl.pallas_call``'s ``wrapped``)."""
    inner = closure_function(frame.fun)
    return inner.__qualname__ if inner is not None else getattr(frame.debug_info, "func_name", None) or "?"


def _no_history(fun: Any) -> bool:
    """Whether jaxshow keeps no signature of ``fun``: no record of it, or one made when it was seen hitting JAX's cache
    (``%%jaxcache`` counts a hit), before any trace of it jaxshow saw."""
    record = registry.lookup(fun)
    return record is None or not record.keys


class _LevelLeases:
    """Logger levels jaxshow lowered, shared by every open session, put back when the last one closes.

    jaxshow sets one below the level it wants: JAX logs at the standard levels
    only, so the same records pass, and a level the user sets meanwhile (the
    very one jaxshow wants, DEBUG) is told from jaxshow's. A level is put back
    only if it is still the one jaxshow set: a cell that changed it meanwhile
    keeps its change.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, list] = {}  # name -> [count, level before, level set]

    def lower(self, logger: logging.Logger, wanted: int) -> None:
        with self._lock:
            held = self._held.get(logger.name)
            if held is None:
                held = self._held[logger.name] = [0, logger.level, None]
            held[0] += 1
            if logger.getEffectiveLevel() > wanted:
                logger.setLevel(wanted - 1)
                held[2] = wanted - 1

    def release(self, logger: logging.Logger) -> None:
        with self._lock:
            held = self._held.get(logger.name)
            if held is None:
                return
            held[0] -= 1
            if held[0] == 0:
                del self._held[logger.name]
                if held[2] is not None and logger.level == held[2]:
                    logger.setLevel(held[1])

    def user_level(self, name: str) -> int:
        """The effective level the user has now: where jaxshow's level stands, the logger's level before it, or (none
        set) its parents'; else the one the user set since."""
        logger = logging.getLogger(name)
        held = self._held.get(name)
        if held is None or held[2] is None or logger.level != held[2]:
            return logger.getEffectiveLevel()
        return held[1] or logger.parent.getEffectiveLevel()


_levels = _LevelLeases()


class _LogCapture:
    """Filters on JAX's explain and compiler loggers: records are taken into the report, not printed.

    Levels are lowered only as far as needed (the persistent-cache lines are
    DEBUG unless ``jax_explain_cache_misses`` is on) and put back afterwards;
    records jaxshow did not take pass through exactly as before.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.compiles: list[persistent.CompileLogEvent] = []
        self.threads: list[int] = []
        """The thread that logged each of ``compiles``: JAX compiles a call on its own thread."""
        self._lock = threading.Lock()
        self._loggers: list[logging.Logger] = []
        self._key_lines: dict[int, list[tuple[str, str]]] = {}
        """Per thread, JAX's lines on the parts of the persistent-cache key it is computing (:mod:`jaxshow.keyparts`)."""
        self._key_logger: logging.Logger | None = None
        self._stages: timings.EventCollector | None = None
        self._seen: dict[int, int] = {}
        """Per thread, how many of ``compiles`` there were at its last compile's ``jax.monitoring`` event."""

    def start(self) -> None:
        names = [_jax_compat.explain_logger_name(), *persistent.LOGGER_NAMES]
        for name in names:
            logger = logging.getLogger(name)
            self._loggers.append(logger)
            logger.addFilter(self._filter)
            _levels.lower(logger, logging.WARNING if name == names[0] else logging.DEBUG)
        self._watch_key_parts()
        self._stages = timings.EventCollector(on_event=self._compiled)
        self._stages.__enter__()

    def _watch_key_parts(self) -> None:
        """Take JAX's lines on the parts of each persistent-cache key, once a cache directory is set (JAX then hashes each
        part twice, to log its own hash: a cost paid only where there are entries to compare)."""
        if self._key_logger is None and persistent.directory_now():
            self._key_logger = logging.getLogger(keyparts.KEY_LOGGER)
            self._key_logger.addFilter(self._filter)
            _levels.lower(self._key_logger, logging.DEBUG)

    def clear(self) -> None:
        with self._lock:
            self.compiles.clear()
            self.threads.clear()
            self._seen.clear()

    def stop(self) -> None:
        if self._stages is not None:
            self._stages.__exit__(None, None, None)
            self._stages = None
        if self._key_logger is not None:
            self._key_logger.removeFilter(self._filter)
            _levels.release(self._key_logger)
            self._key_logger = None
        for logger in reversed(self._loggers):
            logger.removeFilter(self._filter)
            _levels.release(logger)
        self._loggers.clear()

    def _compiled(self, event: timings.StageEvent) -> None:
        """A compile ended (its ``jax.monitoring`` event, after JAX's cache lines): where its thread logged no line about
        the persistent cache since its last compile (a process that does not use the cache logs none), one that says so,
        so it is seen as the others are (a call that compiled again, its verdict, a compile ahead of time). A lowering
        ended: its compile comes next, whose key's parts are taken where a cache directory was set since."""
        if event.stage == "lower" and not self.session.paused:
            self._watch_key_parts()  # a directory set since the session started: this lowering's compile's key
        if event.stage != "compile" or self.session.paused:
            return
        with self._lock:
            logged = event.thread_id in self.threads[self._seen.get(event.thread_id, 0):]
            if not logged:
                unlogged = persistent.unlogged_compile(event.fun_name)
                self.compiles.append(unlogged)
                self.threads.append(event.thread_id)
            self._seen[event.thread_id] = len(self.compiles)
        if not logged:
            self.session._compiling_ahead(unlogged.module, sys._getframe(1))

    def _user_threshold(self, name: str) -> int:
        return _levels.user_level(name)

    def _user_would_see(self, record: logging.LogRecord, explained_level: int | None) -> bool:
        """Whether a record jaxshow took would have been printed without jaxshow: it passes through as well, at the
        level JAX would have given it.

        ``explained_level``: the level JAX logs the record at while ``jax_explain_cache_misses``, which jaxshow may
        have turned on, is off (``None``: not at all); the record's own level where the user turned it on too.
        """
        if not _jax_compat.user_explains_cache_misses():
            if explained_level is None:
                return False
            if explained_level != record.levelno:
                record.levelno, record.levelname = explained_level, logging.getLevelName(explained_level)
        return record.levelno >= self._user_threshold(record.name)

    def _filter(self, record: logging.LogRecord) -> bool:
        if self.session.paused:
            return True
        try:
            message = record.getMessage()
            if message.startswith("TRACING CACHE MISS"):
                self.session._note_jax_text(message)
                return self._user_would_see(record, None)
            if (part := keyparts.key_line(message)) is not None:
                with self._lock:  # a key's first part starts its lines (a key computed with no lookup after it, none)
                    lines = self._key_lines[record.thread] = [] if part[0] == "computation" else self._key_lines.get(record.thread, [])
                    lines.append(part)
                return record.levelno >= self._user_threshold(record.name)
            event = persistent.parse_compile_log(message)
            if event is not None:
                if event.key:  # its entry's place, resolved now: JAX writes it next, under the working directory of now
                    event = dataclasses.replace(event, directory=persistent.directory_now())
                    with self._lock:
                        lines = self._key_lines.pop(record.thread, None)
                    if lines:  # the key JAX just computed, whose lookup this line tells
                        keyparts.remember(keyparts.KeyParts(event.key, {p: h for p, h in lines if p != "flag"},
                                                            _jax_compat.jaxlib_version(), tuple(dict.fromkeys(h for p, h in lines if p == "flag"))))
                with self._lock:  # the two lists stay in step when threads compile at once
                    self.compiles.append(event)
                    self.threads.append(record.thread)
                if event.module is not None:
                    self.session._compiling_ahead(event.module, sys._getframe(1))
                return self._user_would_see(record, persistent.level_unexplained(event, record.levelno))
            return record.levelno >= self._user_threshold(record.name)
        except Exception:  # noqa: BLE001 - logging must never break the user's call
            return True


# --- public API ---------------------------------------------------------------------------


class Explanation:
    """What ``with jaxshow.explain() as ex:`` yields; ``ex.report`` is filled when the block ends."""

    def __init__(self, session: Session, named: Callable[[CacheReport], CacheReport] = lambda report: report) -> None:
        self._session = session
        self._named = named
        self.report: CacheReport | None = None

    @property
    def misses(self) -> tuple[CacheMiss, ...]:
        return self._current().misses

    @property
    def functions(self) -> tuple[FunctionCacheStats, ...]:
        return self._current().functions

    def _current(self) -> CacheReport:
        return self.report if self.report is not None else self._named(self._session.report())

    def __repr__(self) -> str:
        return f"<Explanation {self._current()._summary()}>"


@contextmanager
def explain(*, jax_text: str = "always", named: Callable[[CacheReport], CacheReport] = lambda report: report,
            **cells: Any) -> Iterator[Explanation]:
    """Explain every trace of a jitted function made inside the block.

    Turns on ``jax_explain_cache_misses`` for the block (restoring the previous
    value, even if the block raises), catches JAX's explanations from its logger
    so nothing is printed, and records per function how often it traced, why
    each trace missed the cache (the first :data:`MISSES_KEPT_FIRST` and last
    :data:`MISSES_KEPT_LAST` misses in detail, the others counted by category),
    what it printed while tracing, and what the persistent compilation cache
    did with each compile.

    Args:
        jax_text: ``"always"`` (default) uses JAX's own explanation, which
            compares each miss with every cached key; ``"when_cheap"`` uses it
            only while the tracing cache is small and otherwise jaxshow's bounded
            history; ``"never"`` uses jaxshow's history only.
        named, cells: the front end's names for its cells, where a shell runs: the report with its cell files
            named (``In[4]``), and :class:`Session`'s ``is_cell_file``, ``cell_line`` and ``label``.

    Returns:
        A context manager yielding an :class:`Explanation`; its ``report`` (a
        :class:`jaxshow.report.CacheReport`) is set when the block ends.

    Examples::

        with jaxshow.explain() as ex:
            f(jnp.ones(3)); f(jnp.ones(4))
        for miss in ex.report.misses:
            print(miss.category, miss.summary)
    """
    session = Session(jax_text=jax_text, **cells).start()
    explanation = Explanation(session, named)
    error: BaseException | None = None
    try:
        yield explanation
    except BaseException as exc:
        error = exc
        raise
    finally:
        session.stop()
        explanation.report = named(session.report(cell_error=error if isinstance(error, Exception) else None))


class CallCounter(calls.CallCounter):
    """Counts each direct call of a jitted function in a ``%%jaxcache`` cell as traced or hit."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def before(self, wrapper: Any, call: Any) -> tuple[int, int, Any, bool] | str | None:
        if type(wrapper) is COMPILED_TYPE:
            return COMPILED_TYPE.__name__
        inner = getattr(wrapper, "__wrapped__", wrapper)
        if jax_own(inner) and not calls.users_jit_of_jax(wrapper):  # jax.jit(jnp.linalg.solve) is the user's
            return None
        target = _traced_function(wrapper)
        return (self.session.traced_count(target) if target is not None else 0, self.session.compile_events(), call,
                _jax_compat.jit_disabled())

    def after(self, wrapper: Any, token: tuple[int, int, Any, bool] | str | None, maybe_refused: bool = False,
              error: BaseException | None = None, refused: bool = False) -> None:
        if token is None:  # JAX's own function (jnp.sin called eagerly): its traces are never recorded, so not counted
            return
        if type(token) is str:  # a jax.stages.Compiled ran its executable
            self.session.count_compiled_call(wrapper)
            return
        traced_before, compiles_before, call, jit_disabled = token
        target = _traced_function(wrapper)
        if target is not None and calls.pmap_outside_jit(wrapper):
            self.session.count_call(wrapper, target, False, untracked=True)
            return
        if target is None and calls.pmapped_jit(wrapper):  # a jax.pmap whose body never traced while jaxshow looked
            found, _ = calls.pmap_jit_call(wrapper, *calls.call_arguments(call))
            target = _jax_compat.jit_function(found[0]) if found is not None else None
        if target is None:  # nothing to count it on: looking it up would run the user's code again
            return
        traced = self.session.traced_count(target) > traced_before
        if refused and not traced:  # jax.no_tracing() refused it: counted, not as a hit
            self.session.count_call(wrapper, target, False, refused=True)
            return
        if maybe_refused and not traced:  # perhaps no call JAX made: not counted as a hit
            return
        if error is not None and not traced and _jax_compat.raised_reading_jit_call(error):
            return  # JAX refused the call's arguments (one it cannot trace, an in_sharding that does not fit): no hit
        placed = None
        recompiled = not traced and self.session.compiled_since(compiles_before, target)
        if not jit_disabled and (traced or recompiled or not self.session.counted(target)):
            # where its arguments are (a first call of the cell: of an executable JAX compiled before), kept to compare
            # the next call that compiles again with; nothing read for a later hit
            record = registry.lookup(target) or registry.record_for(target, None, line_place=self.session.line_place)[0]
            leaves = placed_leaves(*calls.call_arguments(call))
            if recompiled:  # JAX reused the trace and compiled again: placed says where this call's arguments are
                placed = placement_text(record.parameters, leaves, record.placed) or "no array arguments"
            record.placed = leaves
        self.session.count_call(wrapper, target, traced, placed, jit_disabled)


def wrapper_options(wrapper: Any) -> tuple[tuple[str, str], ...]:
    """A ``jax.jit`` wrapper's options that JAX compiles for without tracing again, as ``(keyword, value text)``: donation
    and those :func:`~jaxshow.capture.stations.given_options` reads; ``()`` for none set or another wrapper."""
    info = _jax_compat.jit_info(wrapper)
    options = _jax_compat.jit_options_of_info(info) or {}
    donated = next(((k, str(options[k])) for k in ("donate_argnums", "donate_argnames") if options.get(k)), None)  # JAX fills both
    return (*([donated] if donated else []), *given_options(info))


def options_change(now: tuple[tuple[str, str], ...], before: tuple[tuple[str, str], ...] | None) -> str:
    """How a call's wrapper options (``now``) differ from those of the call before it (``before``; ``None``: none seen):
    ``differs from the one of the call before in compiler_options: now {...}, before not set``, or ``was given keep_unused=True``;
    ``""`` where nothing is known to differ."""
    if before is None:
        return "was given " + ", ".join(f"{k}={v}" for k, v in now) if now else ""
    old, new = dict(before), dict(now)
    changed = [f"{k}: now {new.get(k, 'not set')}, before {old.get(k, 'not set')}" for k in dict.fromkeys([*new, *old])
               if new.get(k) != old.get(k)]
    return "differs from the one of the call before in " + "; ".join(changed) if changed else ""


def _traced_function(wrapper: Any) -> Any:
    """What JAX traces for a call of ``wrapper``: a jit wrapper's function; for ``jax.pmap(f)`` (jax >= 0.8, a jit of
    ``shard_map``) the jit body JAX built for ``f``, once jaxshow saw it trace."""
    target = _given_function(wrapper)
    return registry.pmapped_body(target) if calls.pmapped_jit(wrapper) else target


def _given_function(wrapper: Any) -> Any:
    """The function given to a jit wrapper or to ``jax.pmap`` (whose wrapper has no ``__wrapped__`` on jax 0.8.0)."""
    given = _jax_compat.pmap_function(wrapper) if calls.pmapped_jit(wrapper) else None
    return given if given is not None else getattr(wrapper, "__wrapped__", wrapper)


def trace_history(name: str, fn: Any) -> TraceHistory:
    """The traces jaxshow observed for the jitted function ``fn`` (or ``jax.pmap``) and its current cache size."""
    target = _given_function(fn)
    record = registry.history(_traced_function(fn) or target)
    size = _jax_compat.cache_size(fn)
    same = [r for r in registry.traced_records() if fold.definition(r) == fold.definition(record)] if record else []
    return TraceHistory(
        name=name,
        qualname=record.qualname if record else str(getattr(target, "__qualname__", name)),
        defined_at=record.defined_at if record else _defined_at(_unwrapped(target), None),
        entries=tuple(m.entry() for m in record.entries) if record else (),
        traces_observed=record.traces if record else 0,
        cache_size=size,
        cache_size_unavailable=None if size is not None else f"jax {jax.__version__} does not report this function's cache size",
        history_limit=HISTORY_LIMIT,
        objects=max(len(same), 1),
        objects_traced=sum(r.traces for r in same),
        made=_how_made(same) if len(same) > 1 else "",
    )


def _how_made(records: list[_FunctionRecord]) -> str:
    """How the function objects of one definition (``records``) were made: by a wrapper made per call, else as the
    newest re-definition among their traces says."""
    if any(r.made_by is not None for r in records):
        return "made anew per call"
    redefined = [e for r in records for e in (m.entry() for m in r.entries) if e.category == "redefined"]
    newest = max(redefined, key=lambda e: e.wall_time, default=None)
    return redefined_cause(newest.reloaded, newest.made_in) if newest is not None else "made anew"


def clear(name: str, fn: Any) -> CacheClearReport | None:
    """``fn.clear_cache()`` plus jaxshow's history of it; ``None`` where JAX has no ``clear_cache``."""
    clear_cache = getattr(fn, "clear_cache", None)
    if clear_cache is None:
        return None
    before = _jax_compat.cache_size(fn)
    clear_cache()
    return CacheClearReport(
        name=name,
        entries_before=before,
        entries_after=_jax_compat.cache_size(fn),
        history_entries_cleared=registry.forget(getattr(fn, "__wrapped__", fn)),
        not_cleared=(
            "the persistent compilation cache on disk (delete its files to empty it)",
            "the caches of other functions (jax.clear_caches() clears them all)",
        ),
    )
