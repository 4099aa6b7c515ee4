"""Read a call's stations on a worker thread while JAX compiles it and while its program runs.

Reading the stations of a big program takes a noticeable share of its compile
time: the printed jaxpr and the Lowered module text (and, for a small module,
its pre-optimisation cost), then the optimised HLO text and XLA's memory and
cost analyses. Most of that is C++ that runs while the calling thread waits in
C++ too: JAX's compile and the program's run release the GIL. So a call's
Traced and Lowered stations are read while JAX compiles it (from the
lowered module, which XLA's compile does not change; from the moment XLA
starts, told by the hook on ``backend_compile_and_load``), and for a long
compile its Compiled station while the program runs. Where the magics ask
(``PrefetchOptions.prepare``), the worker then renders the stations' IR texts
too. The report at the cell's end finds them ready.

When the report will show only the last call, a newer call takes the place of
one still waiting, and only the first :data:`EARLY_READS` calls of a cell are
read before their compile, so a loop of re-traces reads nothing more early.
Only calls whose trace, lowering and compile took at least
:data:`MIN_COMPILE_SECONDS` have their Compiled station read early.

Uses JAX; never IPython.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from jaxshow import _jax_compat
from jaxshow.capture.stations import (
    CallName,
    WalkOptions,
    backend_name,
    compiled_station,
    lowered_station,
    traced_station_from_jaxpr,
)
from jaxshow.report import CompiledStation, LoweredStation, TracedStation

MIN_COMPILE_SECONDS = 0.25
"""Stage seconds from which a call's Compiled station is read while its program runs."""

COMPILE_HANDOVER_SECONDS = 0.002
"""How long a read before the compile waits for the calling thread to enter XLA's compile."""

EARLY_READS = 4
"""Calls per cell whose Traced and Lowered stations are read while JAX compiles them, when the report shows the last call."""


class Stations(NamedTuple):
    """The stations read from one record's JAX objects (``None`` where the call did not get that far)."""

    traced: TracedStation | None
    lowered: LoweredStation | None
    compiled: CompiledStation | None


def read_stations(record: Any, walk: WalkOptions, backend: str | None = None, early: Stations | None = None) -> Stations:
    """The Traced, Lowered and Compiled stations of a :class:`~jaxshow.capture.calls.CallRecord`'s JAX objects.

    ``early`` holds the Traced and Lowered stations already read before the compile.
    """
    if early is None:
        early = Stations(_traced_station(record.jaxpr, record.donated, record.arg_shardings, walk) if record.jaxpr is not None else None,
                         _lowered_station(record.lowered, walk, backend) if record.lowered is not None else None, None)
    compiled = compiled_station(record.compiled, early.traced, backend=backend) if record.compiled is not None else None
    return early._replace(compiled=compiled)


def read_before_compile(jaxpr: Any, computation: Any, donated: tuple[bool, ...], shardings: Any, walk: WalkOptions,
                        backend: str | None = None) -> Stations:
    """The Traced and Lowered stations of a call XLA has started compiling.

    Waits :data:`COMPILE_HANDOVER_SECONDS` first: the calling thread has a few
    lines of Python left before XLA's compile releases the GIL, and the module
    text is printed by C++ that holds it.
    """
    time.sleep(COMPILE_HANDOVER_SECONDS)
    lowered = _jax_compat.lowered_from_computation(computation, jaxpr, donated)
    return Stations(_traced_station(jaxpr, donated, shardings, walk), _lowered_station(lowered, walk, backend), None)


def _traced_station(jaxpr: Any, donated: tuple[bool, ...], shardings: Any, walk: WalkOptions) -> TracedStation:
    return traced_station_from_jaxpr(jaxpr, donated, source_info=walk.debug_info, shardings=shardings,
                                     max_lines=walk.jaxpr_max_lines)


def _lowered_station(lowered: Any, walk: WalkOptions, backend: str | None) -> LoweredStation:
    return lowered_station(lowered, dialect=walk.dialect, debug_info=walk.debug_info,
                           cost_max_chars=walk.lowered_cost_max_chars, backend=backend)


@dataclass(frozen=True, slots=True)
class PrefetchOptions:
    """What to read early: the walk the report will ask for, and which calls it shows (every one, one function's, the last)."""

    walk: WalkOptions
    every_call: bool = False
    name: CallName | None = None
    prepare: Callable[[Stations], None] | None = None
    """Called on the worker with each call's stations once read (the magics render their IR texts ahead of the report)."""

    @property
    def not_only_the_last(self) -> bool:
        """Whether the report shows more than the last call: every call (``--all``), or one function's (``--name``)."""
        return self.every_call or self.name is not None


class Prefetched(NamedTuple):
    """What a worker read (or is reading) for one record, for ``walk``."""

    walk: WalkOptions
    before_compile: concurrent.futures.Future | None
    """The Traced and Lowered stations."""
    after_compile: concurrent.futures.Future | None
    """All three stations."""


class Prefetcher:
    """One worker thread reading the stations of a cell's calls, in the order their stages ended."""

    def __init__(self, options: PrefetchOptions, on_worker_start: Callable[[], None]) -> None:
        self.options = options
        self._cell_thread = threading.get_ident()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxshow-stations",
                                                           initializer=on_worker_start)
        self._waiting: list[concurrent.futures.Future] = []
        self._early_reads = 0

    def compiling(self, record: Any) -> None:
        """XLA started compiling ``record``: read its Traced and Lowered stations meanwhile."""
        if record.jaxpr is None or record.computation is None or not self._shown(record) or (
                not self.options.not_only_the_last and self._early_reads >= EARLY_READS):
            return
        self._early_reads += 1
        walk = self.options.walk
        future = self._submit(read_before_compile, record.jaxpr, record.computation, record.donated,
                              record.arg_shardings, walk, backend_name())
        record.prefetched = Prefetched(walk, future, None)

    def compiled(self, record: Any, stage_seconds: float) -> None:
        """``record``'s program is dispatched: read its Compiled station while it runs, if its stages took long enough."""
        if stage_seconds < MIN_COMPILE_SECONDS or record.compiled is None or not self._shown(record):
            return
        walk = self.options.walk
        early = record.prefetched.before_compile if record.prefetched is not None and record.prefetched.walk == walk else None
        future = self._submit(_read_after, record, walk, backend_name(), early)
        record.prefetched = Prefetched(walk, early, future)

    def close(self) -> None:
        """Drop jobs not started; a job under way finishes on its own."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _shown(self, record: Any) -> bool:
        """Whether the report may show ``record``: every call, one function's, or by default a call of the cell's own thread."""
        name = self.options.name
        if name is not None:
            return name.matches(record.fun, record.name)
        return self.options.every_call or record.thread_id == self._cell_thread

    def _submit(self, read: Callable[..., Stations], *args: Any) -> concurrent.futures.Future:
        if not self.options.every_call:  # not started yet: the report shows only the newest call
            for waiting in self._waiting:
                waiting.cancel()
        self._waiting = [f for f in self._waiting if not f.done()]
        future = self._pool.submit(_read_and_prepare, read, self.options.prepare, *args)
        self._waiting.append(future)
        return future


def _read_and_prepare(read: Callable[..., Stations], prepare: Callable[[Stations], None] | None, *args: Any) -> Stations:
    stations = read(*args)
    if prepare is not None:
        try:
            prepare(stations)
        except Exception:  # noqa: BLE001 - the report renders them again itself, and shows what fails there
            pass
    return stations


def _read_after(record: Any, walk: WalkOptions, backend: str, early: concurrent.futures.Future | None) -> Stations:
    return read_stations(record, walk, backend, _result(early))


def _result(future: concurrent.futures.Future | None) -> Stations | None:
    """A finished read's stations; ``None`` if it was cancelled or failed (they are read again where needed)."""
    if future is None or future.cancelled():
        return None
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - read again by the caller, where the failure becomes the report's note
        return None


def stations_of(record: Any, walk: WalkOptions) -> Stations:
    """``record``'s stations: those read while JAX compiled it and its program ran, when they match ``walk``; the rest now."""
    prefetched, record.prefetched = record.prefetched, None
    if prefetched is None or prefetched.walk != walk:
        return read_stations(record, walk)
    return _result(prefetched.after_compile) or read_stations(record, walk, early=_result(prefetched.before_compile))
