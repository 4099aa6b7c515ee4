"""Collect the stage timings JAX publishes on its ``jax.monitoring`` event bus.

JAX emits ``/jax/core/compile/{jaxpr_trace,jaxpr_to_mlir_module,backend_compile}_duration``
with a single keyword, ``fun_name`` (``f`` for the trace, ``jit(f)`` for lowering
and compile). Listeners are process-global and called synchronously, and an
exception in one reaches the user's jit call, so jaxshow registers one guarded
dispatcher per listener kind only while at least one collector is open, and
removes it when the last one closes. Nothing stays registered between cells.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import jax.monitoring

from jaxshow import _jax_compat
from jaxshow.report import StageTimings

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
PERSISTENT_HIT_EVENT = "/jax/compilation_cache/cache_hits"
STAGE_EVENTS = {TRACE_EVENT: "trace", LOWER_EVENT: "lower", COMPILE_EVENT: "compile"}


@dataclass(frozen=True, slots=True)
class StageEvent:
    """One duration event: which stage, for which ``fun_name``, how long, on which thread."""

    stage: str
    fun_name: str
    seconds: float
    thread_id: int
    persistent_cache_hit: bool = False

    @property
    def base_name(self) -> str:
        """``jit(f)`` -> ``f``; the trace event already carries the bare name."""
        name = self.fun_name
        if name.startswith("jit(") and name.endswith(")"):
            return name[4:-1]
        return name


class EventCollector:
    """Context manager that records every stage event while it is open.

    Args:
        on_event: optional; called with each stage event, synchronously on the
            thread that emitted it, instead of keeping it in ``events``.
    """

    def __init__(self, on_event: Callable[[StageEvent], None] | None = None) -> None:
        self.events: list[StageEvent] = []
        self._on_event = on_event
        self._compile_hits: dict[int, bool] = {}

    def __enter__(self) -> EventCollector:
        _bus.open(self)
        return self

    def __exit__(self, *exc) -> None:
        _bus.close(self)

    def _on_duration(self, event: str, seconds: float, fun_name: str, thread_id: int) -> None:
        stage = STAGE_EVENTS.get(event)
        if stage is None:
            return
        hit = stage == "compile" and self._compile_hits.pop(thread_id, False)
        event = StageEvent(stage, fun_name, seconds, thread_id, hit)
        if self._on_event is None:
            self.events.append(event)
        else:
            self._on_event(event)

    def _on_persistent_hit(self, thread_id: int) -> None:
        self._compile_hits[thread_id] = True


def timings_from_events(events: list[StageEvent]) -> StageTimings:
    """Total seconds per stage; a stage with no event stays ``None``."""
    totals: dict[str, float] = {}
    for e in events:
        totals[e.stage] = totals.get(e.stage, 0.0) + e.seconds
    return StageTimings(
        trace_seconds=totals.get("trace"),
        lowering_seconds=totals.get("lower"),
        compile_seconds=totals.get("compile"),
        persistent_cache_hit=any(e.persistent_cache_hit for e in events),
    )


class _EventBus:
    """Registers jaxshow's listeners while collectors are open; never raises into JAX."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._collectors: list[EventCollector] = []

    @property
    def registered(self) -> bool:
        return bool(self._collectors)

    def open(self, collector: EventCollector) -> None:
        with self._lock:
            if not self._collectors:
                jax.monitoring.register_event_duration_secs_listener(_on_duration)
                jax.monitoring.register_event_listener(_on_event)
            self._collectors.append(collector)

    def close(self, collector: EventCollector) -> None:
        with self._lock:
            if collector not in self._collectors:
                return
            self._collectors.remove(collector)
            if not self._collectors:
                _jax_compat.unregister_duration_listener(_on_duration)
                _jax_compat.unregister_event_listener(_on_event)

    def close_all(self) -> None:
        for collector in list(self._collectors):
            self.close(collector)

    def keep_registered(self) -> None:
        """Register again a listener the user's code removed while collectors are open (``jax.monitoring.clear_event_listeners()``)."""
        with self._lock:
            if not self._collectors:
                return
            duration_gone, event_gone = _jax_compat.removed_listeners(_on_duration, _on_event)
            if duration_gone:
                jax.monitoring.register_event_duration_secs_listener(_on_duration)
            if event_gone:
                jax.monitoring.register_event_listener(_on_event)

    def snapshot(self) -> list[EventCollector]:
        return list(self._collectors)


_bus = _EventBus()


def _on_duration(event: str, duration_secs: float, **kwargs) -> None:
    try:
        if event not in STAGE_EVENTS:
            return
        name = str(kwargs.get("fun_name", "?"))
        tid = threading.get_ident()
        for collector in _bus.snapshot():
            collector._on_duration(event, float(duration_secs), name, tid)
    except Exception:  # noqa: BLE001 - a listener must never break the user's call
        pass


def _on_event(event: str, **kwargs) -> None:
    try:
        if event != PERSISTENT_HIT_EVENT:
            return
        tid = threading.get_ident()
        for collector in _bus.snapshot():
            collector._on_persistent_hit(tid)
    except Exception:  # noqa: BLE001
        pass


def listeners_registered() -> bool:
    """Whether jaxshow currently has listeners on ``jax.monitoring``."""
    return _bus.registered


def keep_listening() -> None:
    """Before a stage starts: jaxshow's listeners are on ``jax.monitoring`` while a collector is open, even after the cell cleared them."""
    _bus.keep_registered()


def close_all_collectors() -> None:
    """Close every open collector (used on ``%unload_ext``)."""
    _bus.close_all()
