"""Read a long compile's stations on a worker thread while its program runs.

A jitted call returns once its program is dispatched. The cell then waits for
the result, or goes on with other work. Reading the stations of a big program
takes a noticeable share of its compile time: the optimised HLO text, XLA's
memory and cost analyses, the printed jaxpr. Most of that is C++ that releases
the GIL. So it is done in that time, on one worker thread per cell, and the
report at the cell's end finds it ready.

Only calls whose trace, lowering and compile took at least
:data:`MIN_COMPILE_SECONDS` are read early, so a loop of small re-traces costs
nothing extra. When the report will show only the last call, a newer call
takes the place of one still waiting.

Uses JAX; never IPython.
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from jaxshow.capture.stations import (
    WalkOptions,
    backend_name,
    compiled_station,
    lowered_station,
    qualname_of,
    traced_station_from_jaxpr,
)
from jaxshow.report import CompiledStation, LoweredStation, TracedStation

MIN_COMPILE_SECONDS = 0.25
"""Stage seconds from which a call's stations are read while its program runs."""


class Stations(NamedTuple):
    """The stations read from one record's JAX objects (``None`` where the call did not get that far)."""

    traced: TracedStation | None
    lowered: LoweredStation | None
    compiled: CompiledStation | None


def read_stations(record: Any, walk: WalkOptions, backend: str | None = None) -> Stations:
    """The Traced, Lowered and Compiled stations of a :class:`~jaxshow.capture.calls.CallRecord`'s JAX objects."""
    traced = None
    if record.jaxpr is not None:
        traced = traced_station_from_jaxpr(record.jaxpr, record.donated, source_info=walk.debug_info,
                                           shardings=record.arg_shardings, max_lines=walk.jaxpr_max_lines)
    lowered = None
    if record.lowered is not None:
        lowered = lowered_station(record.lowered, dialect=walk.dialect, debug_info=walk.debug_info,
                                  cost_max_chars=walk.lowered_cost_max_chars, backend=backend)
    compiled = compiled_station(record.compiled, traced, backend=backend) if record.compiled is not None else None
    return Stations(traced, lowered, compiled)


@dataclass(frozen=True, slots=True)
class PrefetchOptions:
    """What to read early: the walk the report will ask for, and which calls it shows (every one, one function's, the last)."""

    walk: WalkOptions
    every_call: bool = False
    name: str | None = None


class Prefetcher:
    """One worker thread reading the stations of long compiles, in the order they finished."""

    def __init__(self, options: PrefetchOptions, on_worker_start: Callable[[], None]) -> None:
        self.options = options
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxshow-stations",
                                                           initializer=on_worker_start)
        self._waiting: concurrent.futures.Future | None = None

    def submit(self, record: Any, stage_seconds: float) -> None:
        """Start reading ``record``'s stations if its stages took long enough to be worth it."""
        name = self.options.name
        if stage_seconds < MIN_COMPILE_SECONDS or record.compiled is None or (
                name is not None and name not in (record.name, qualname_of(record.fun, record.name))):
            return
        if self._waiting is not None and not self.options.every_call:
            self._waiting.cancel()  # not started yet: the report shows only the newest call
        walk = self.options.walk
        self._waiting = self._pool.submit(read_stations, record, walk, backend_name())
        record.prefetched = (walk, self._waiting)

    def close(self) -> None:
        """Drop jobs not started; a job under way finishes on its own."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def stations_of(record: Any, walk: WalkOptions) -> Stations:
    """``record``'s stations: the ones read while its program ran when they match ``walk``, else read now."""
    prefetched, record.prefetched = record.prefetched, None
    future: Any = prefetched[1] if prefetched is not None and prefetched[0] == walk else None
    if future is not None and not future.cancelled():
        try:
            return future.result()
        except Exception:  # noqa: BLE001 - read again here, where the failure becomes the report's note
            pass
    return read_stations(record, walk)
