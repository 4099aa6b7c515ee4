"""Freeze mode: a jitted function that would trace again inside a frozen region raises :class:`RetraceError` instead.

Owns :class:`Freeze`, a probe on JAX's tracing cache (:func:`jaxshow._jax_compat.install_trace_probe`)
that refuses traces. A lookup of a frozen function that has used up its
allowance runs under ``jax.no_tracing`` and ``jax.explain_cache_misses``
(:func:`jaxshow._jax_compat.refusing_traces`): a hit is served as usual, a
miss makes JAX log why it missed and raise before the function's Python runs.
jaxshow then raises :class:`RetraceError`, whose message is its explanation
(what changed, against the keys JAX's cache holds; the user's line; the
library that led there). Allowed traces are only counted: a freeze adds
nothing to jaxshow's history, so a ``%jaxcache`` session open at the same
time reports its misses as it would alone. A hit on JAX's
C++ fast path never reaches Python, so a hot loop pays nothing. Uses JAX;
never IPython.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
from typing import Any, Callable

from jaxshow import _jax_compat
from jaxshow.errors import RetraceError
from jaxshow.report import CacheMiss, miss_title
from jaxshow.retrace.classify import _is_user_function
from jaxshow.retrace.history import _FunctionRecord, closest_key, kept_before, registry
from jaxshow.retrace.miss_text import change_line
from jaxshow.retrace.session import _levels, explain_miss, miss_site, module_ran_again


class Freeze(_jax_compat.TraceProbe):
    """The frozen functions (or every function) and the new traces each may still make.

    Args:
        label: rewrites cell file names in a text (``In[5]``).
        is_cell_file: tells a notebook cell's file name (a function defined there is no module's).
        line_place: a line of a cell as the front end names cells (:class:`jaxshow.retrace.Session`'s).
    """

    def __init__(self, label: Callable[[str], str] = str, is_cell_file: Callable[[str], bool] = lambda name: False,
                 line_place: Callable[[str, int], tuple[str, int] | None] = lambda name, line: None) -> None:
        self.label, self.is_cell_file, self.line_place = label, is_cell_file, line_place
        self.every: int | None = None  # new traces allowed per function when every function is frozen
        self.named: dict[int, tuple[Any, str, int]] = {}  # id(function) -> (function, name, new traces allowed)
        self.traced: dict[int, int] = {}  # new traces per function since it was frozen
        self._local = threading.local()
        self._uninstall: Callable[[], None] | None = None
        self._logger: logging.Logger | None = None

    @property
    def active(self) -> bool:
        return self.every is not None or bool(self.named)

    def freeze(self, max_traces: int, functions: dict[str, Any] | None = None) -> None:
        """Freeze ``functions`` (name -> the Python function a jit wraps), or every function when ``None``."""
        if functions is None:
            self.every, self.named = max_traces, {}
        else:
            for name, fun in functions.items():
                self.named[id(fun)] = (fun, name, max_traces)
                self.traced.pop(id(fun), None)
        if self._uninstall is None:
            self._start()

    def thaw(self, functions: dict[str, Any] | None = None) -> tuple[str, ...]:
        """Thaw ``functions``, or everything when ``None``; returns the names thawed (``("*",)`` for every function)."""
        if functions is None:
            thawed = ("*",) if self.every is not None else tuple(name for _, name, _ in self.named.values())
            self.every, self.named = None, {}
        else:
            thawed = tuple(name for name, fun in functions.items() if self.named.pop(id(fun), None) is not None)
        if not self.active:
            self.stop()
        return thawed

    def _start(self) -> None:
        self._uninstall = _jax_compat.install_trace_probe(self)
        if self._uninstall is None:
            raise RuntimeError("this JAX has no tracing-cache probe, so jaxshow cannot freeze")
        self._logger = logging.getLogger(_jax_compat.explain_logger_name())
        self._logger.filters.insert(0, self)  # before a %jaxcache session's filter: the refused miss is ours
        _levels.lower(self._logger, logging.WARNING)

    def stop(self) -> None:
        self.every, self.named = None, {}
        self.traced.clear()
        uninstall, self._uninstall = self._uninstall, None
        if uninstall is not None:
            uninstall()
        if self._logger is not None:
            self._logger.removeFilter(self)
            _levels.release(self._logger)
            self._logger = None

    # the probe ---------------------------------------------------------------------------

    def _allowed(self, fun: Any, debug_info: Any) -> tuple[str, int] | None:
        """``(name, new traces allowed)`` when ``fun`` is frozen, else ``None``."""
        named = self.named.get(id(fun))
        if named is not None and named[0] is fun:
            return named[1], named[2]
        if self.every is not None and _is_user_function(debug_info, fun):
            return str(getattr(debug_info, "func_name", None) or getattr(fun, "__name__", "?")), self.every
        return None

    def enter(self, fun: Any, debug_info: Any) -> Any:
        return (fun, debug_info) if self._allowed(fun, debug_info) is not None else None

    def exit(self, token: Any, missed: bool, key: Any) -> None:
        self._local.jax_text = self._local.capturing = None
        if token is not None and missed:  # an allowed trace: counted, and left to JAX's cache (and a %jaxcache session)
            self.traced[id(token[0])] = self.traced.get(id(token[0]), 0) + 1

    def refuses(self, fun: Any, debug_info: Any) -> Any:
        allowed = self._allowed(fun, debug_info)
        if allowed is None or self.traced.get(id(fun), 0) < allowed[1]:
            return None
        self._local.capturing, self._local.jax_text = True, None
        return fun, debug_info, allowed[1]

    def refusal(self, token: Any, key: Any) -> RetraceError:
        fun, debug_info, allowed = token
        jax_text, self._local.jax_text = self._local.jax_text, None
        miss = self._explain(fun, debug_info, key, jax_text, sys._getframe(2))
        return RetraceError(self.label(retrace_message(miss, allowed)), miss, allowed)

    def filter(self, record: logging.LogRecord) -> bool:
        """JAX's explanation of a lookup this freeze refuses: kept for the error, not printed."""
        if not getattr(self._local, "capturing", None):
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - logging must never break the user's call
            return True
        if not message.startswith("TRACING CACHE MISS"):
            return True
        self._local.jax_text = message
        return False

    def _explain(self, fun: Any, debug_info: Any, key: Any, jax_text: str | None, frame: Any) -> CacheMiss:
        """The refused miss explained as ``%jaxcache`` would (:func:`explain_miss`), without adding it to jaxshow's history."""
        record, status = _history(fun, debug_info, key, self.line_place)
        parts = _jax_compat.trace_key_parts(key)
        described = _jax_compat.describe_trace_key(key)
        old = closest_key(record, key, described, parts) if status == "known" else None
        blame, call_site = miss_site(frame, record, debug_info)
        if blame is not None:
            blame = dataclasses.replace(blame, user_line=self.label(blame.user_line))
        seen = registry.lookup(fun)  # the code it traced with, where jaxshow saw it trace
        replaced = seen.replaced_code(fun, take=False) if seen is not None and status == "known" else None
        miss = explain_miss(record, status, key, jax_text, old.key if old is not None else None, *kept_before(record, None, key),
                            described=described, call_site=call_site and self.label(call_site), blame=blame,
                            reloaded=module_ran_again(record, status, self.is_cell_file),
                            replaced=replaced and tuple(self.label(at) if at else "?" for at in replaced))
        return dataclasses.replace(miss, evidence=self.label(miss.evidence), evidence_notes=tuple(map(self.label, miss.evidence_notes)))


def _history(fun: Any, debug_info: Any, key: Any, line_place: Callable[[str, int], tuple[str, int] | None]) -> tuple[_FunctionRecord, str]:
    """What a refused lookup of ``fun`` is compared with: the keys JAX's tracing cache holds for it, and its status.

    JAX's cache knows every earlier trace, whether or not jaxshow saw it (jax
    <= 0.8 explains a miss only after tracing, jax >= 0.11 not a static
    argument). Those jaxshow saw, in a ``%jaxcache`` session, come last and in
    its order, so a tie goes to the most recent, as it does for a
    ``%jaxcache`` miss. Where JAX cannot list its keys, jaxshow's own
    history. A function object jaxshow never saw trace may be a new object of a definition it saw (``"same_source"``). The
    record is not registered: a refusal leaves no history.
    """
    record = registry.lookup(fun)
    seen = [k for kept in record.keys if (k := kept.key) is not None] if record is not None else []
    cached = _jax_compat.cached_trace_keys(fun, debug_info, other_than=key)
    if cached is None and record is not None:
        return record, "known"
    history = _FunctionRecord(fun, debug_info, line_place=line_place)
    for old_key in [k for k in cached or () if k not in seen] + [k for k in seen if k in (cached or ())]:
        history.remember(old_key, _jax_compat.describe_trace_key(old_key), _jax_compat.trace_key_parts(old_key), from_jax=old_key not in seen)
    if cached:
        return history, "known"
    return history, "new" if record is not None else registry.unseen_status(history)


def retrace_message(miss: CacheMiss, allowed: int) -> str:
    """The text of a :class:`RetraceError`: what changed, where it was called, and how to let it trace."""
    again = "" if miss.category == "never_seen" else " again"  # a first trace is refused too: 'again' is untrue of it
    lines = [f"{miss.function} would trace{again} inside a frozen region (%jaxcache freeze, "
             f"{allowed} new trace{'s' if allowed != 1 else ''} allowed): "
             f"{miss_title(miss.category, miss.blame is not None, miss.reloaded, miss.made_in, miss.made_by)}"]
    lines += [f"  {change_line(miss.category, c, miss.blame is not None)}" for c in miss.changes] or [f"  {miss.summary}"]
    if miss.blame is not None:
        b = miss.blame
        effect = b.effect(miss.category, miss.changes)
        lines.append(f"  called at {b.user_line}, through the library function {b.library_function} ({b.library_line})"
                     + (f", {effect}" if effect else ""))
    elif miss.call_site:
        lines.append(f"  called at {miss.call_site}")
    lines.append(f"JAX did not trace or compile it. %jaxcache thaw lets it trace{again}.")
    return "\n".join(lines)
