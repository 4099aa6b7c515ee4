"""What jaxshow remembers of each function it saw trace: identity, source digest, recent signatures.

Owns the process-wide :data:`registry` (bounded: :data:`REGISTRY_LIMIT`
functions, :data:`HISTORY_LIMIT` signatures each) and :func:`closest_key`, the
earlier signature a miss is compared with. Reads JAX's trace keys only through
:mod:`jaxshow._jax_compat`, a signature's parameters through
:mod:`jaxshow.capture.stations`, and the user's function a library's jitted
function carries (``eqx.filter_jit``) through :mod:`jaxshow.capture.carried`, the
transformations written around it through :mod:`jaxshow.capture.written`; no
IPython, and no other module of :mod:`jaxshow.retrace`.

A function re-created with the same qualified name and source (a re-run cell, a
``jax.jit(lambda ...)`` in a loop) is recognised by jaxshow itself, because
JAX's "defined on the same line" hint depends on how the front end names cells.
"""

from __future__ import annotations

import ast
import enum
import functools
import hashlib
import inspect
import itertools
import linecache
import os
import stat
import sys
import threading
import tokenize
import types
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable

from jaxshow import _jax_compat
from jaxshow.capture.arguments import looks_up_plainly
from jaxshow.capture.carried import carried_function, closure_function, library_closure_function, library_file
from jaxshow.capture.sources import is_jax_file, lines_readable
from jaxshow.capture.stations import JIT_TYPE, is_jax_type, library_wrapped, parameter_names
from jaxshow.capture.written import TRANSFORM_NAMES, jax_made, transformation_code, transforms, written
from jaxshow.reprs import differ, weak_ref


HISTORY_LIMIT = 32
"""Signatures kept per function; a miss is compared with at most this many."""

JAXPRS_KEPT = 4
"""The newest signatures of a function that keep their trace's jaxpr, for a miss's diff against the closest of them."""

REGISTRY_LIMIT = 512
"""Functions whose history jaxshow keeps (least recently traced dropped first)."""

_moments = itertools.count(1)
RECORDING = threading.Lock()
"""Held while a miss is compared with a record's history and added to it: traces on several threads end in any order."""


def moment() -> int:
    """A number later than every one given before (thread-safe): when a lookup started, when a signature was kept."""
    return next(_moments)


class _Kept:
    """One signature in a function's history: JAX's key, its printable description, its parts for ranking, whether it
    was read from JAX's tracing cache (traced before jaxshow looked) rather than seen to trace, and the :func:`moment` from
    which it was in JAX's cache (a lookup that started earlier did not find it).

    A key holding a static value that is an object (a config, a model with a ``__hash__``) is ``loose``: held only
    while JAX's cache keeps it (:func:`jaxshow._jax_compat.loose_trace_key`), so that jaxshow never keeps the user's
    object alive after the user and JAX let it go; then the signature is gone from the history (:attr:`key` is
    ``None``). Its parts are taken again from the key when asked for, and it is indexed by its head's hash
    (:func:`head_index`), which holds nothing."""

    __slots__ = ("_key", "_loose", "_parts", "_statics", "_head", "described", "from_jax", "since", "jaxpr")

    def __init__(self, key: Any, described: tuple | None, parts: Any, from_jax: bool, since: int,
                 loose: Callable[[], Any] | None = None) -> None:
        self._key, self._parts, self._loose = (None, None, loose) if loose is not None else (key, parts, None)
        self._head = head_index(parts, loose is not None)
        self._statics = tuple(map(_held, _jax_compat.argument_static_values(key))) if loose is not None else None
        """A loose key's static values, each a weak reference, a value of :data:`_VALUES`, or :data:`_UNKNOWN`."""
        if loose is not None and described is None:
            described = _jax_compat.describe_trace_key(key)  # what is left to compare once JAX lets go (runs no repr of yours)
        self.described, self.from_jax, self.since = described, from_jax, since
        self.jaxpr: Any = None
        """The jaxpr its trace made, as a miss keeps it for a diff, on the last :data:`JAXPRS_KEPT` seen to trace."""

    @property
    def key(self) -> Any:
        return self._key if self._loose is None else self._loose()

    @property
    def parts(self) -> Any:
        if self._loose is None:
            return self._parts
        key = self._loose()
        return _jax_compat.trace_key_parts(key) if key is not None else None

    @property
    def head(self) -> Any:
        """What it is indexed by in :attr:`_FunctionRecord.by_head` (:func:`head_index`; ``None``: not indexed)."""
        return self._head

    @property
    def loose(self) -> bool:
        return self._loose is not None

    def gone(self) -> bool:
        """Whether JAX let go of this loose key (and jaxshow with it)."""
        return self._loose is not None and self._loose() is None

    def was(self, key: Any, described: tuple | None) -> bool:
        """Whether this gone key was ``key`` (described as ``described``), as far as jaxshow can tell once JAX let go: the
        same input types and trace context (and pytree, where printed), and static values that are the very objects
        (numbers, strings and the like: equal values) it held."""
        if self._loose is None:  # released by jax.clear_caches(): the key itself is kept
            return self._key is not None and not differ(self._key, key)
        if self._statics is None or described is None or self.described is None:
            return False
        (types, tree, context), (old_types, old_tree, old_context) = described, self.described
        if types != old_types or context != old_context or (tree != old_tree and _jax_compat.TREE_UNREAD not in (tree, old_tree)):
            return False
        now = _jax_compat.argument_static_values(key)
        return len(now) == len(self._statics) and all(_same(v, old) for v, old in zip(now, self._statics))


_UNKNOWN = object()
"""A static value that is neither a plain value nor takes a weak reference: nothing can tell it again."""


def _held(value: Any) -> Any:
    if not _holds_objects_in((value,)):
        return value
    ref = weak_ref(value)
    return ref if ref is not None else _UNKNOWN


def _same(value: Any, held: Any) -> bool:
    if type(held) is weakref.ref:
        return held() is value
    if held is value:
        return True
    return type(held) in _COMPARED and type(value) is type(held) and not _holds_objects_in((value,)) and value == held


class _FunctionRecord:
    """What jaxshow remembers about one Python function: identity, source digest, recent keys."""

    __slots__ = ("fun_ref", "fun_id", "name", "jax_names", "qualname", "source_key", "defined_at", "defined_label", "defined_in", "place", "code", "made_by",
                 "traced_by_maker",
                 "inner_ref", "closes_over", "transforms", "parameters",
                 "keys", "from_jax", "loose", "newest_since", "released", "by_head", "entries", "traces", "last_jaxpr", "last_jaxpr_since", "made",
                 "first_status", "placed",
                 "defines", "__weakref__")

    def __init__(self, fun: Any, debug_info: Any, carried: types.FunctionType | None = None,
                 line_place: Callable[[str, int], tuple[str, int] | None] = lambda name, line: None) -> None:
        self.defines = False
        """Whether this is the newest definition at its place (:meth:`Registry.previous_definition`): the next one there
        is diffed against its jaxpr."""
        try:
            self.fun_ref: Callable[[], Any] | None = weakref.ref(fun, functools.partial(_gone, weakref.ref(self)))
        except TypeError:
            self.fun_ref = None
        self.fun_id = id(fun)
        inner = carried or _unwrapped(fun)
        # a user object's attributes are never read: names come from a plain function, else the type
        named = fun if type(fun) is types.FunctionType else inner if type(inner) is types.FunctionType else None
        self.name = str(getattr(debug_info, "func_name", None) or (named.__name__ if named else type(fun).__name__))
        self.qualname = str(named.__qualname__ if named else self.name)
        if carried is not None:  # the wrapper is the library's or JAX's; the name, definition and source are the user's
            self.name, self.qualname = carried.__name__, carried.__qualname__
        self.jax_names: tuple[str, ...] = (self.name,)
        """The names JAX may compile the function under (module ``jit_<name>``): a callable object's ``name`` becomes
        its class's below, where JAX's stays its default (``<unnamed function>``)."""
        self.transforms = transforms(fun)
        self.defined_in = inner.__code__.co_filename if type(inner) is types.FunctionType else None
        self.place = line_place(self.defined_in, inner.__code__.co_firstlineno) if self.defined_in else None  # type: ignore[union-attr]
        """Where this function is defined as the front end names cells (``line_place``: the cell's id, and its line's id
        across edits of the cell), ``None`` outside a cell or where the front end names no cell: another cell's
        function of the same name is no earlier version of it, nor is another cell's or another line's lambda, even of
        the same text (every lambda is named ``<lambda>``)."""
        lambda_place = self.place if self.qualname.rpartition(".")[2] == "<lambda>" else None
        # a functools.partial has no source of its own: a new one of the same function is that function made again
        self.source_key = _source_key(carried or (inner if type(fun) is functools.partial else fun), self.qualname, self.transforms,
                                      lambda_place)
        closed = library_closure_function(inner) if carried is None and type(inner) is types.FunctionType and library_file(
            inner.__code__.co_filename) else None
        self.closes_over = (closed.__code__.co_filename, closed.__qualname__) if closed is not None else None
        """The user's function a library's closure closes over (``hk.transform(fwd).apply``: ``fwd``): the library makes
        one such function per function of the user's, so a new one around another is no re-definition of it."""
        if closed is not None and self.source_key is not None and (own := _source_key(closed, closed.__qualname__, (), None)):
            digest = hashlib.sha1(f"{self.source_key[1]} {own[1]}".encode()).hexdigest()
            self.source_key = (self.source_key[0], digest, *self.source_key[2:])
        self.made_by = _made_by(fun)
        self.traced_by_maker = self.made_by is not None and _maker_running(fun)
        """A wrapper whose maker, a JAX function, made and traced it in one call (``saved_residuals``): no code of the
        user's can make it once."""
        self.inner_ref = weak_ref(inner) if self.made_by is not None and inner is not fun else None
        """The user's function inside a wrapper made per call: a new wrapper of a new one of it was not the wrapper's doing."""
        self.defined_at = _defined_at(inner, debug_info)
        self.code = inner.__code__ if type(inner) is types.FunctionType and carried is None else None
        """The code of the function as it last traced: ``%autoreload`` replaces an edited function's code in place."""
        unnamed = _jax_compat.unknown_name(self.name)
        if unnamed:  # JAX names the module of a function it cannot name jit__unnamed_function
            self.jax_names = _jax_compat.UNNAMED_FUNCTION_NAMES
        if (pullback := _jax_compat.pullback_of(fun)) is not None:  # each call of jax.vjp makes one anew, of f's source
            self.name = self.qualname = pullback.name
            self.defined_at = f"{pullback.file}:{pullback.line}"
            self.made_by = f"jax.{pullback.maker}"
            self.source_key = (self.name, _definition_digest(pullback.file, pullback.line), self.transforms,
                               line_place(pullback.file, pullback.line))
        elif unnamed:  # a callable object: named by its class, as jit's report names it
            found = _jax_compat.unnamed_callable_source(fun)
            if found is not None:
                self.name = self.qualname = found[0]
                self.defined_at = f"{found[1]}:{found[2]}"
        elif self.defined_at is None and (found := _jax_compat.unnamed_callable_source(inner)) is not None:
            self.defined_at = f"{found[1]}:{found[2]}"  # a callable object seen only hitting: its class's __call__
        self.defined_label: str | None = None
        """``defined_at`` with its cell named as when the function first traced (``In[2]:1``): ipykernel names a cell's
        file by its text, so the same text run again later would take that cell's number."""
        self.parameters = parameter_names(_signature(fun))  # names static arguments, as JAX's jit reads the signature
        self.keys: deque[_Kept] = deque()
        self.from_jax = 0
        """How many of ``keys`` were read from JAX's tracing cache (:func:`remember_cached`)."""
        self.loose = 0
        """How many of ``keys`` are loose (held only while JAX's cache keeps them, :class:`_Kept`)."""
        self.newest_since = 0
        """The latest ``since`` of any key kept: a lookup that started after it could find every one."""
        self.released: deque[_Kept] = deque(maxlen=HISTORY_LIMIT)
        """The signatures ``jax.clear_caches()`` emptied from JAX's cache: a later trace of one of them is said to be one."""
        self.by_head: dict[Any, deque[_Kept]] = {}
        self.entries: deque[Any] = deque(maxlen=HISTORY_LIMIT)
        self.traces = 0
        self.last_jaxpr: Any = None  # the newest trace's jaxpr without its constants' values (printed only when diffed)
        self.last_jaxpr_since = 0
        self.made = 0
        """When the first trace jaxshow saw of this function ended (0: none yet); ``first_status``: how jaxshow knew it then."""
        self.first_status = "new"
        self.placed: tuple | None = None
        """Where the arguments of its last direct call that compiled, or of its first call in a ``%%jaxcache`` cell,
        were placed (:func:`~jaxshow.capture.placement.placed_leaves`): a call that compiles again without a trace is
        compared with them."""

    def remember(self, key: Any, described: tuple | None, parts: Any, from_jax: bool = False, since: int | None = None) -> None:
        """Keep ``key`` as the newest of the last :data:`HISTORY_LIMIT` signatures, indexed by its head; ``from_jax``: read
        from JAX's tracing cache, not seen to trace; ``since``: when it was in JAX's cache (default now)."""
        fun = self.fun_ref() if self.fun_ref is not None else None
        loose = _jax_compat.loose_trace_key(key, fun) if fun is not None and _holds_objects(key, parts) else None
        kept = _Kept(key, described, parts, from_jax, moment() if since is None else since, loose)
        self.from_jax += from_jax
        self.loose += loose is not None
        self.newest_since = max(self.newest_since, kept.since)
        if len(self.keys) >= HISTORY_LIMIT:
            oldest = self.keys.popleft()
            self.from_jax -= oldest.from_jax
            self.loose -= oldest.loose
            head = oldest.head
            if head is not None:
                bucket = self.by_head[head]
                bucket.popleft()  # a bucket keeps the order of self.keys, so the oldest is its first
                if not bucket:
                    del self.by_head[head]
        self.keys.append(kept)
        if kept.head is not None:
            bucket = self.by_head.get(kept.head)
            if bucket is None:
                bucket = self.by_head[kept.head] = deque()
            bucket.append(kept)

    def release_keys(self) -> None:
        """JAX emptied its tracing cache (``jax.clear_caches()``): no lookup finds any kept signature from now on."""
        self.released.extend(self.keys)
        self.keys.clear()
        self.by_head.clear()
        self.from_jax = self.loose = 0

    def keep_jaxpr(self, jaxpr: Any) -> None:
        """The newest signature's trace made ``jaxpr``; the one :data:`JAXPRS_KEPT` before it lets its own go."""
        self.keys[-1].jaxpr = jaxpr
        if len(self.keys) > JAXPRS_KEPT:
            self.keys[-1 - JAXPRS_KEPT].jaxpr = None

    def carrying(self, carried: types.FunctionType) -> None:
        """The user's function a library's jitted function traced this time (equinox reuses one per name)."""
        defined_at = _defined_at(carried, None)
        if defined_at != self.defined_at:
            self.defined_at, self.defined_label = defined_at, None
        self.defined_in = carried.__code__.co_filename

    def replaced_code(self, fun: Any, take: bool = True) -> tuple[str | None, str | None] | None:
        """Where ``fun``, this record's function, was defined and is defined now, where its code was replaced in place
        since it last traced (``%autoreload 2`` patches an edited function's ``__code__``); ``take``: the record takes
        the new code. ``None`` where the code is the one that traced."""
        inner = _unwrapped(fun)
        if self.code is None or type(inner) is not types.FunctionType or inner.__code__ is self.code:
            return None
        before, now = self.defined_at, _defined_at(inner, None)
        if take:
            self.code, self.defined_at, self.defined_label = inner.__code__, now, None
        return before, now

    def alive_is(self, fun: Any) -> bool:
        return self.fun_ref is not None and self.fun_ref() is fun

    def gone(self) -> bool:
        """Whether its function no longer exists (``False`` for one that takes no weak reference)."""
        return self.fun_ref is not None and self.fun_ref() is None

    def let_go_if_unused(self) -> None:
        """Drop the jaxprs nothing can diff against: once the function is gone (no trace of its own follows), its
        signatures'; its last one too once a newer definition took its place."""
        if not self.gone():
            return
        for kept in self.keys:
            kept.jaxpr = None
        if not self.defines:
            self.last_jaxpr = None

    def written(self, name: str) -> str:
        """``name`` (the function's name or qualified name) with its transformations as the user wrote them:
        ``grad(jit(grad(f)))`` (``f`` when there are none)."""
        return written(name, self.transforms)


_COMPARED = frozenset({int, float, complex, str, bytes, bool, range, tuple, frozenset})
"""The types of the static values kept as they are that compare by value (others by identity)."""
_VALUES = frozenset({*_COMPARED, type(None)})
"""Static values jaxshow keeps with a key without a second thought: numbers, strings, ``None`` (these exact types), enum
members, classes, and tuples and frozensets of these, which hold nothing of the user's; none of their code is the user's."""


def head_index(parts: Any, loose: bool) -> Any:
    """What a key with ``parts`` is indexed by among a function's signatures: its head (:attr:`TraceKeyParts.head
    <jaxshow._jax_compat.TraceKeyParts.head>`), or for a loose key (one holding a static object, :class:`_Kept`) the
    head's hash, which keeps no object alive; ``None`` where it has none."""
    head = parts.head if parts is not None else None
    return None if head is None else hash(head) if loose else head


def _holds_objects(key: Any, parts: Any = None) -> bool:
    """Whether ``key`` (taken apart as ``parts``, where it is) holds a static argument other than :data:`_VALUES`."""
    return _holds_objects_in(parts.static_values if parts is not None else _jax_compat.argument_static_values(key))


def _holds_objects_in(values: tuple) -> bool:
    """Whether ``values`` are other than :data:`_VALUES` (read by type only: no code of the values' runs)."""
    pending, looked = list(values), 0
    while pending:
        value = pending.pop()
        looked += 1
        kind = type(value)
        if looked > 64 or not (kind in _VALUES or issubclass(kind, (type, enum.Enum))):
            return True
        if kind is tuple or kind is frozenset:
            pending.extend(value)
    return False


def _made_by(fun: Any) -> str | None:
    """What made this function object, when it is a wrapper made per call: ``functools.partial``, a JAX transformation,
    or the JAX function it is defined in (``pallas_call``, public name of ``_pallas_call``)."""
    if type(fun) is functools.partial:
        return "functools.partial"
    if type(fun) is JIT_TYPE:  # jax.jit(jax.jit(f)): the outer jit traces the inner wrapper, a new object per jax.jit call
        return "jax.jit"
    if not jax_made(fun) or _jax_compat.pmapped_target(fun) is not None:  # jax.pmap builds one body per function
        return None
    made = transformation_code(fun)
    return TRANSFORM_NAMES[made.co_name] if made is not None else _maker_name(fun)


def jax_maker(fun: Any) -> str | None:
    """The JAX function that made ``fun``, a wrapper of the user's function that it makes per call and no
    transformation's (``pallas_call`` for ``pl.pallas_call``'s ``_pallas_call.<locals>.wrapped``); else ``None``."""
    if not jax_made(fun) or _jax_compat.pmapped_target(fun) is not None or transformation_code(fun) is not None:
        return None
    return _maker_name(fun)


def _maker_name(fun: Any) -> str:
    """The public name of the JAX function ``fun`` is local to (``pallas_call`` for ``_pallas_call.<locals>.wrapped``)."""
    return (_enclosing_code(fun) or "").lstrip("_") or "JAX transformation"


def _enclosing_code(fun: Any) -> str | None:
    """The name of the code ``fun`` is defined in (``_pallas_call`` for ``_pallas_call.<locals>.wrapped``), from its
    qualified name; ``None`` for a function not local to another."""
    outer, local, _ = getattr(fun, "__qualname__", "").partition(".<locals>.")
    return outer.split(".")[-1] if local else None


def _maker_running(fun: Any) -> bool:
    """Whether the JAX function ``fun`` is local to (``saved_residuals.<locals>.<lambda>``) is on this thread's stack."""
    maker = _enclosing_code(fun)
    if maker is None:
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == maker and is_jax_file(frame.f_code.co_filename):
            return True
        frame = frame.f_back
    return False


def _unwrapped(fun: Any) -> Any:
    """The user's function inside JAX's and functools' wrappers (``__wrapped__``, ``partial.func``, JAX's own
    ``custom_jvp``/``custom_vjp``, a library's callable object's ``__wrapped__``), read by type only."""
    for _ in range(16):
        if type(fun) is functools.partial:
            fun = fun.func
        elif type(fun) is types.MethodType:  # jax.jit(svi.update): the method's function
            fun = fun.__func__
        elif type(fun) is types.FunctionType and "__wrapped__" in fun.__dict__:
            fun = fun.__dict__["__wrapped__"]
        elif is_jax_type(type(fun)) and type(getattr(fun, "__wrapped__", None)) is types.FunctionType:
            fun = fun.__wrapped__
        elif (wrapped := library_wrapped(fun)) is not None:  # nnx.jit's JitFn: the user's function
            fun = wrapped
        else:
            return fun
    return fun


def _signature(fun: Any) -> inspect.Signature | None:
    """``fun``'s signature; of a callable object whose lookups run code of its own, its class's ``__call__``'s without
    ``self`` (``inspect.signature`` would read the object's ``__wrapped__`` and ``__signature__`` and compare it), and
    none for a ``functools.partial`` of one (``inspect.signature`` reads the partial's function so)."""
    try:
        inner = fun
        while type(inner) is functools.partial:
            inner = inner.func
        if inner is not fun and not looks_up_plainly(inner):
            return None
        if looks_up_plainly(fun):
            return inspect.signature(fun)
        call = inspect.getattr_static(type(fun), "__call__", None)
        if type(call) is not types.FunctionType:
            return None
        signature = inspect.signature(call)
        return signature.replace(parameters=tuple(signature.parameters.values())[1:])
    except (TypeError, ValueError):
        return None


def _source_key(fun: Any, qualname: str, transforms: tuple[str, ...],
                place: tuple[str, int] | None) -> tuple[str, str, tuple[str, ...], tuple[str, int] | None] | None:
    if not looks_up_plainly(fun):  # a callable object of the kind inspect has no source for, its lookups never run
        wrapped = inspect.getattr_static(fun, "__wrapped__", None)  # jax.custom_jvp/custom_vjp: update_wrapper's, no code run
        if type(wrapped) is not types.FunctionType:
            return None
        fun = wrapped
    source = _function_source(fun)
    if source is not None:
        source += f"\n{_lambda_column(fun)}"
    else:
        code = getattr(fun, "__code__", None)
        if code is None:
            return None
        source = repr((code.co_code, code.co_consts, code.co_names))
    return qualname, hashlib.sha1(source.encode("utf-8", "replace")).hexdigest(), transforms, place


def _function_source(fun: Any) -> str | None:
    """``fun``'s source as ``inspect`` reads it; ``None`` where it has none, or its file is no regular file (a FIFO,
    whose read would wait inside the user's call)."""
    code = getattr(fun, "__code__", None)
    if code is not None and not lines_readable(code.co_filename):
        return None
    try:
        return inspect.getsource(fun)
    except (OSError, TypeError):
        return None


def _definition_digest(file: str, line: int) -> str:
    """A digest of the definition that starts at ``line`` of ``file`` (a cell's, through ``linecache``), as
    :func:`_source_key` digests a function's source: the same text run again, in any cell, digests alike."""
    lines = linecache.getlines(file)[line - 1:] if line > 0 and lines_readable(file) else []
    try:
        block = "".join(inspect.getblock(lines)) if lines else file
    except (IndentationError, SyntaxError, tokenize.TokenError):
        block = "".join(lines[:1])
    return hashlib.sha1(block.encode("utf-8", "replace")).hexdigest()


def _lambda_column(fun: Any) -> int | None:
    """The column where a lambda's body starts on its line, ``None`` for any other function: ``inspect`` gives two
    lambdas of one line the same source (``f, g = jax.jit(lambda v: v * 2), jax.jit(lambda v: v * 3)``), and their
    columns tell them apart; the same line run again gives the same column."""
    code = getattr(fun, "__code__", None)
    if getattr(fun, "__name__", None) != "<lambda>" or not hasattr(code, "co_positions"):
        return None
    return min((p[2] for p in code.co_positions() if p[2]), default=None)


def _carried(fun: Any, debug_info: Any, key: Any) -> types.FunctionType | None:
    """The user's function a library's jitted function carries among the static values of ``key`` (``eqx.filter_jit``),
    or that JAX's own ``fun`` closes over (``checkify.checkify``)."""
    if jax_made(fun):  # also without debug info: a call counted, never traced while jaxshow looked (jax.pmap's body)
        return closure_function(fun)
    source = _jax_compat.parse_source_info(getattr(debug_info, "func_src_info", None))
    if source is None or key is None or not library_file(source[1]):
        return None
    try:
        return carried_function(source[0], _jax_compat.static_arg_values(key), outside=source[1])
    except Exception:  # noqa: BLE001 - the definition shown is a nicety, never the user's call
        return None


def _defined_at(fun: Any, debug_info: Any) -> str | None:
    code = fun.__code__ if type(fun) is types.FunctionType else None
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    parsed = _jax_compat.parse_source_info(getattr(debug_info, "func_src_info", None))
    if parsed is not None:  # JAX's "f at /path/file.py:12"
        return f"{parsed[1]}:{parsed[2]}" if parsed[2] else parsed[1]
    src = getattr(debug_info, "func_src_info", None)
    return str(src) if src else None


def defined_in_top_level_loop(defined_at: str | None) -> bool:
    """Whether ``defined_at`` (``file:line``) is inside a loop at its module's top level (``for _ in range(2):
    jax.jit(lambda v: v + 1)(x)`` in a script): the module made that definition anew without running again."""
    filename, _, line = (defined_at or "").rpartition(":")
    try:
        status = os.stat(filename)
    except (OSError, ValueError):
        return False
    spans = _top_level_loops(filename, status.st_mtime_ns) if stat.S_ISREG(status.st_mode) else ()
    return line.isdigit() and any(first <= int(line) <= last for first, last in spans)


@functools.lru_cache(maxsize=256)
def _top_level_loops(filename: str, modified: int) -> tuple[tuple[int, int], ...]:
    """The line spans of a module's loops outside any function or class (in its ``if``/``with``/``try`` blocks too)."""
    try:
        with open(filename, "rb") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    spans: list[tuple[int, int]] = []

    def visit(nodes: Any) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                spans.append((node.lineno, node.end_lineno or node.lineno))
            else:
                visit(ast.iter_child_nodes(node))

    visit(tree.body)
    return tuple(spans)


def _gone(record_ref: weakref.ref, _: Any) -> None:
    """A record's function was freed: its jaxpr goes too, unless the next definition at its place will be diffed with it."""
    record = record_ref()
    if record is not None:
        record.let_go_if_unused()


class Registry:
    """Histories of the functions jaxshow saw trace, bounded in functions and in keys per function."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: OrderedDict[int, _FunctionRecord] = OrderedDict()
        self._by_source: dict[tuple[str, str, tuple[str, ...]], weakref.ref] = {}
        self._cleared: set[tuple[str, str, tuple[str, ...]]] = set()
        self._definitions: OrderedDict[tuple[Any, ...], weakref.ref] = OrderedDict()
        self._pmapped: OrderedDict[int, tuple[weakref.ref, weakref.ref]] = OrderedDict()
        """``id(f)`` -> ``(f, the jit body jax.pmap built for f)``, by weak reference: what a call of ``jax.pmap(f)`` traces."""

    def lookup(self, fun: Any) -> _FunctionRecord | None:
        record = self._by_id.get(id(fun))
        return record if record is not None and record.alive_is(fun) else None

    def record_for(self, fun: Any, debug_info: Any, key: Any = None,
                   line_place: Callable[[str, int], tuple[str, int] | None] = lambda name, line: None) -> tuple[_FunctionRecord, str]:
        """The record for ``fun`` (traced with cache key ``key``) and how jaxshow knew it.

        The status is ``"known"`` (seen before), ``"new"``, ``"same_source"``
        (a new object with the qualified name and source of one seen before,
        for a lambda of the same line of the same cell where ``line_place`` names
        the front end's cells) or ``"after_clear"`` (its cache was cleared through jaxshow).
        """
        carried = _carried(fun, debug_info, key)
        with self._lock:
            record = self.lookup(fun)
            if record is not None:
                self._by_id.move_to_end(record.fun_id)
                if carried is not None:
                    record.carrying(carried)
                return record, "known"
            record = _FunctionRecord(fun, debug_info, carried, line_place)
            self._index_pmapped(fun)
            status = self._unseen_status(record)
            if status == "same_source" and record.inner_ref is not None and not self._same_inner(record):
                record.made_by = None  # the function inside the new wrapper is new too: redefined, as it would be bare
            if status == "after_clear":
                self._cleared.discard(record.source_key)
            self._by_id[record.fun_id] = record
            if record.source_key:
                self._by_source[record.source_key] = weakref.ref(record)
            while len(self._by_id) > REGISTRY_LIMIT:
                self._by_id.popitem(last=False)
            return record, status

    def unseen_status(self, record: _FunctionRecord) -> str:
        """How jaxshow knows the function of ``record``, a record not registered: ``"after_clear"``, ``"same_source"`` or
        ``"new"``, as :meth:`record_for` would answer, without registering it."""
        with self._lock:
            return self._unseen_status(record)

    def _same_inner(self, record: _FunctionRecord) -> bool:
        """Whether the earlier function of ``record``'s source, a wrapper made per call too, wrapped the same function."""
        earlier = self._by_source.get(record.source_key)
        earlier_record = earlier() if earlier is not None else None
        inner = earlier_record.inner_ref() if earlier_record is not None and earlier_record.inner_ref is not None else None
        return inner is not None and inner is record.inner_ref()  # type: ignore[misc]

    def _unseen_status(self, record: _FunctionRecord) -> str:
        if record.source_key in self._cleared:
            return "after_clear"
        earlier = self._by_source.get(record.source_key) if record.source_key is not None else None
        return "same_source" if earlier is not None and earlier() is not None else "new"

    def _index_pmapped(self, fun: Any) -> None:
        target = _jax_compat.pmapped_target(fun)
        if target is None:
            return
        try:
            self._pmapped[id(target)] = (weakref.ref(target), weakref.ref(fun))
        except TypeError:  # a callable that takes no weak reference: its pmap calls are not counted
            return
        while len(self._pmapped) > REGISTRY_LIMIT:
            self._pmapped.popitem(last=False)

    def pmapped_body(self, target: Any) -> Any:
        """The jit body ``jax.pmap`` built for ``target`` that jaxshow saw trace (jax >= 0.8), else ``None``."""
        with self._lock:
            refs = self._pmapped.get(id(target))
        return refs[1]() if refs is not None and refs[0]() is target else None

    def previous_definition(self, record: _FunctionRecord, is_cell_file: Callable[[str], bool]) -> _FunctionRecord | None:
        """The record of the definition ``record`` replaces, if it traced: same qualified name and transformations, same
        file (any cell for a cell).

        Where the front end names cells (:attr:`_FunctionRecord.place`), a
        cell's function replaces first the one defined on the same line of the
        same cell, which keeps its place across edits and runs of the cell
        ("Run All" again), and only then the last one of its name in any cell
        (a cell that defines it anew). A lambda's previous definition is only
        on the same line and column (of the file, or of the cell): all lambdas
        share one name.

        ``record`` becomes the definition the next one is compared with. At most
        :data:`REGISTRY_LIMIT` definitions are indexed, by weak reference.
        """
        if record.defined_in is None:
            return None
        cell = is_cell_file(record.defined_in)
        where: tuple[Any, ...] = ("<cell>" if cell else record.defined_in, record.qualname, record.transforms)
        if record.closes_over is not None:  # hk.transform(fwd).apply replaces the one around fwd, never the one around seq
            where += ("<cell>" if is_cell_file(record.closes_over[0]) else record.closes_over[0], record.closes_over[1])
        own: tuple[Any, ...] | None = None
        if record.qualname.rpartition(".")[2] == "<lambda>" and record.defined_at:
            # Every lambda is named <lambda>: only one defined on the same line and column (of the file, or of a
            # cell run again) is taken for its previous definition, never another lambda of the cell or line.
            where += (record.place or record.defined_at.rpartition(":")[2], _lambda_column(record.fun_ref() if record.fun_ref else None))
        elif record.place is not None:
            own = (*where, record.place)
        with self._lock:
            ref = self._definitions.pop(own, None) if own is not None else None
            named = self._definitions.pop(where, None)
            ref = ref if ref is not None else named
            for key in (where, own) if own is not None else (where,):
                self._definitions[key] = weakref.ref(record)
            record.defines = True
            while len(self._definitions) > REGISTRY_LIMIT:
                self._definitions.popitem(last=False)
            earlier = ref() if ref is not None else None
            if earlier is None or earlier is record:
                return None
            if earlier.place is None or self._definitions.get((*where, earlier.place)) is not ref:
                earlier.defines = False  # its jaxpr is let go once used here, if its function is gone (let_go_if_unused)
        return earlier if earlier.last_jaxpr is not None else None

    def forget(self, fun: Any) -> int:
        """Drop ``fun``'s history (after ``clear_cache``); returns how many signatures it held."""
        with self._lock:
            record = self.lookup(fun)
            if record is None:
                return 0
            del self._by_id[record.fun_id]
            if record.source_key:
                self._by_source.pop(record.source_key, None)
                self._cleared.add(record.source_key)
            return len(record.entries)

    def history(self, fun: Any) -> _FunctionRecord | None:
        return self.lookup(fun)

    def caches_cleared(self) -> None:
        """``jax.clear_caches()`` ran: every function's kept signatures are released (:meth:`_FunctionRecord.release_keys`)."""
        with self._lock:
            for record in self._by_id.values():
                record.release_keys()

    def traced_records(self) -> list[_FunctionRecord]:
        """Every function object whose traces jaxshow keeps (alive or not), oldest first."""
        with self._lock:
            return [r for r in self._by_id.values() if r.traces]

    def clear(self) -> None:
        with self._lock:
            self._by_id.clear()
            self._by_source.clear()
            self._cleared.clear()
            self._pmapped.clear()
            self._definitions.clear()


registry = Registry()
_clear_watch = _jax_compat.on_caches_cleared(registry.caches_cleared)  # held here: JAX holds it weakly


def remember_cached(record: _FunctionRecord, fun: Any, debug_info: Any, key: Any, since: int,
                    cached: tuple[int, list | None] | None = None) -> None:
    """Keep, as ``record``'s history, the keys JAX's tracing cache holds for ``fun`` but ``key`` (traces made before jaxshow
    looked, which a session without JAX's own explanation would otherwise call a first trace), there since ``since``, or
    those ``cached`` holds: ``(since, keys)`` read as the lookup started, while another thread's lookup of ``fun`` was open."""
    if cached is not None:
        since, keys = cached
    else:
        keys = _jax_compat.cached_trace_keys(fun, debug_info)
    for old_key in [k for k in keys or () if differ(k, key)][-HISTORY_LIMIT:]:
        record.remember(old_key, _jax_compat.describe_trace_key(old_key), _jax_compat.trace_key_parts(old_key), from_jax=True,
                        since=since)


def kept_before(record: _FunctionRecord, started: int | None, key: Any) -> tuple[int, int]:
    """How many of ``record``'s signatures were in JAX's cache when a lookup of ``key`` started at ``started`` (all where
    ``None``), and how many of those were read from JAX's cache."""
    if not record.loose and (started is None or (record.newest_since <= started and not record.from_jax)):
        return len(record.keys), record.from_jax  # every key visible: one thread's miss, no key JAX may have let go of
    found = [k.from_jax for k in record.keys if _visible(k, started, key)]
    return len(found), sum(found)


def _visible(kept: _Kept, started: int | None, key: Any) -> bool:
    """Whether a lookup of ``key`` that started at ``started`` could find ``kept``; never its own key read from JAX's cache
    (JAX keeps the key of a lookup that raised, and another thread may read the key of a lookup still open), nor a loose
    key JAX let go of (:class:`_Kept`)."""
    if started is not None and (kept.since > started or (kept.from_jax and not differ(kept.key, key))):
        return False
    return not kept.gone()


def let_go(record: _FunctionRecord, key: Any) -> str | None:
    """Where no signature of ``record`` is left to compare ``key`` with: ``"cleared"`` where one ``jax.clear_caches()``
    released was ``key``, ``"same"`` where one JAX let go of (a loose key, :class:`_Kept`) was (:meth:`_Kept.was`),
    ``"released"`` where JAX let go of some but none is known to have been ``key``, ``"caches_cleared"`` where only
    ``jax.clear_caches()`` did, ``None`` where it let go of none."""
    gone = [kept for kept in record.keys if kept.gone()]
    if not gone and not record.released:
        return None
    described = _jax_compat.describe_trace_key(key)
    if any(kept.was(key, described) for kept in record.released):
        return "cleared"
    if any(kept.was(key, described) for kept in gone):
        return "same"
    return "released" if gone else "caches_cleared"


def closest_key(record: _FunctionRecord, key: Any, described: tuple | None, parts: Any = None,
                started: int | None = None) -> _Kept | None:
    """The kept signature of ``record`` most like ``key`` (``parts``: :func:`jaxshow._jax_compat.trace_key_parts` of it),
    among those in JAX's cache when its lookup started at ``started`` (every one where ``None``).

    JAX (>= 0.9) explains a miss against the earlier key whose *first*
    difference, in its order (tracing context, pytree and static arguments,
    debug info, types), comes *earliest*: after ``k(x, 1); k(x, 2)`` it
    explains ``k(x_int, 2)`` as a static-argument change, though ``k(x, 2)``
    differs only in a type. jaxshow picks the key whose first difference
    comes latest, then the fewest differences there, then the fewest after
    it, then the most recent; on
    jax <= 0.8, JAX's own smallest total difference, which agrees. Static
    arguments rank with the pytree on every version, though jax >= 0.11
    keeps them out of it.

    The usual miss (a new shape or dtype) has earlier keys that differ from it
    only in their types; those share its :attr:`TraceKeyParts.head
    <jaxshow._jax_compat.TraceKeyParts.head>` and are found by one dictionary
    look-up, so only they are compared. Any other miss compares every kept key.
    Keys taken apart (jax >= 0.9) are compared as JAX's diff function compares
    them: pytrees and types by equality, not by their text. ``described`` is
    needed only for keys that are not (jax <= 0.8).
    """
    if not record.keys:
        return None
    if parts is not None and parts.head is not None:
        bucket = record.by_head.get(head_index(parts, _holds_objects(key, parts)))
        if bucket:
            best, fewest = None, 0
            for kept in reversed(bucket):  # newest first: the most recent wins a tie
                old = kept.parts if _visible(kept, started, key) else None
                if old is None or (kept.loose and differ(old.head, parts.head)):  # indexed by hash: another head may share it
                    continue
                differing = _jax_compat.type_differences(parts, old) or 1
                if best is None or differing < fewest:
                    best, fewest = kept, differing
                    if differing == 1:
                        break
            if best is not None:
                return best
    ranked = [(_rank(key, described, parts, kept), kept) for kept in reversed(record.keys) if _visible(kept, started, key)]
    if not ranked:
        return None
    first = min(rank for rank, _ in ranked)
    tied = [kept for rank, kept in ranked if rank == first]
    if len(tied) == 1 or parts is None:
        return tied[0]
    return min(tied, key=lambda kept: _differences_after(parts, kept.parts, first[0]))  # min keeps the newest of a tie


def _differences_after(parts: Any, old: Any, rank: int) -> int:
    """How many differences ``old`` has from ``parts`` in what JAX compares after their first (of rank ``rank``, as
    :func:`_rank` ranks): after ``f(net, x8); f(net, x16)``, ``f(net.eval(), x8)`` is closest to the first."""
    if old is None or rank == 0:
        return 0
    later = _jax_compat.type_differences(parts, old) + (rank >= 2 and parts.debug_info != old.debug_info)
    trees_differ = differ(parts.treedef, old.treedef)
    if rank == 3 or (rank == 2 and trees_differ):  # a rank-2 difference in the static arguments alone is the first
        later += _jax_compat.static_arg_differences(parts, old) or 0
    if rank == 3 and trees_differ:
        later += _jax_compat.treedef_differences(parts.treedef, old.treedef)
    return later


def _rank(key: Any, described: tuple | None, parts: Any, kept: _Kept) -> tuple[int, int]:
    """How far ``kept`` is from ``key``: (rank of the first difference, number of differences); see :func:`closest_key`."""
    if parts is not None and kept.parts is not None:
        old = kept.parts
        if differ(parts.context, old.context):
            return 3, sum(differ(a, b) for a, b in zip(parts.context, old.context)) + abs(len(parts.context) - len(old.context))
        if differ(parts.treedef, old.treedef):
            return 2, _jax_compat.treedef_differences(parts.treedef, old.treedef)
        if statics := _jax_compat.static_arg_differences(parts, old):
            return 2, statics
        if parts.debug_info != old.debug_info:
            return 1, 1
        return 0, _jax_compat.type_differences(parts, old) or 1
    distance = _jax_compat.trace_key_distance(key, kept.key)
    if distance is not None:
        return distance, 0
    context, debug_info = _jax_compat.trace_key_context(key)
    old_context, old_debug = _jax_compat.trace_key_context(kept.key)
    types, tree, _ = described if described else ((), "", ())
    old_types, old_tree, _ = kept.described if kept.described else ((), "", ())
    if context != old_context:
        return 3, sum(a != b for a, b in zip(context, old_context)) + abs(len(context) - len(old_context))
    if tree != old_tree:
        return 2, 1
    if statics := _jax_compat.static_arg_changes(key, kept.key):
        return 2, len(statics)
    if debug_info != old_debug:
        return 1, 1
    return 0, sum(a != b for a, b in zip(types, old_types)) or 1
