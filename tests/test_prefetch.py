"""Stations are read only for calls a report can show; a long compile's on a worker thread while the program runs,
equal to those read at the cell's end."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from shellrun import run_captured

from jaxshow.capture import calls, prefetch
from jaxshow.capture.calls import CallRecord
from jaxshow.capture.stations import WalkOptions

SETUP = ("import time, jax, jax.numpy as jnp\n"
         "@jax.jit\ndef slow(x):\n    time.sleep(0.3)  # a trace longer than MIN_COMPILE_SECONDS\n    return jnp.sin(x) @ x.T\n"
         "@jax.jit\ndef quick(x):\n    return x + 1\n")


@pytest.fixture
def reads(monkeypatch):
    """Each read of a record's stations, as (thread name, function name)."""
    seen: list[tuple[str, str]] = []
    original = prefetch.read_stations

    def spy(record, walk, backend=None):
        seen.append((threading.current_thread().name, record.name))
        return original(record, walk, backend)

    monkeypatch.setattr(prefetch, "read_stations", spy)
    return seen


@pytest.fixture
def shell(ip):
    ip.run_cell(SETUP)
    ip.run_cell("x = jnp.ones((64, 64))\nx.block_until_ready();")
    return ip


def test_a_long_compile_is_read_on_the_worker_and_gives_the_stations_read_at_the_end(shell, reads, monkeypatch):
    result, _ = run_captured(shell, "%%jaxstages -o early\ny = slow(x)")
    assert result.success
    assert reads == [("jaxshow-stations_0", "slow")]  # once, on the worker, never again at the cell's end

    reads.clear()
    monkeypatch.setattr(prefetch, "MIN_COMPILE_SECONDS", float("inf"))
    shell.run_cell("jax.clear_caches()")
    result, _ = run_captured(shell, "%%jaxstages -o late\ny = slow(x)")
    assert result.success
    assert reads == [("MainThread", "slow")]
    early, late = (shell.user_ns[n].reports[0] for n in ("early", "late"))
    assert early.traced == late.traced
    assert early.lowered == late.lowered
    # The optimised HLO's metadata names each cell's own file; all else is the same.
    assert dataclasses.replace(early.compiled, optimized_hlo_text="") == dataclasses.replace(late.compiled, optimized_hlo_text="")
    assert len(early.compiled.optimized_hlo_text.splitlines()) == len(late.compiled.optimized_hlo_text.splitlines())
    assert early.compiled.memory is not None and early.compiled.optimized_hlo_text.startswith("HloModule jit_slow")


def test_a_short_compile_is_read_at_the_cells_end(shell, reads):
    result, cap = run_captured(shell, "%%jaxstages\ny = quick(x)")
    assert result.success
    assert reads == [("MainThread", "quick")]
    assert "quick: trace" in cap.outputs[-1].data["text/plain"]


@pytest.fixture
def rebuilt(monkeypatch):
    """The names of the records whose Lowered and Compiled were rebuilt from JAX's caches."""
    names: list[str] = []
    original = calls._lower_and_compile

    def spy(record):
        names.append(record.name)
        return original(record)

    monkeypatch.setattr(calls, "_lower_and_compile", spy)
    return names


def test_jaxs_own_eager_operations_are_recorded_but_their_stations_never_rebuilt(shell, rebuilt):
    result, cap = run_captured(shell, "%%jaxstages\ny = jnp.cos(x) + jnp.arange(64.0)\nz = quick(y)")
    assert result.success
    assert rebuilt == ["quick"]
    text = cap.outputs[-1].data["text/plain"]
    assert "quick: trace" in text and "(3 compiles of JAX's own helpers folded away: cos, iota, add)" in text


def test_calls_past_the_records_kept_are_counted_and_never_rebuilt(shell, rebuilt, monkeypatch):
    shell.run_cell("xs = [jnp.ones(n + 1) for n in range(5)]")
    monkeypatch.setattr(calls, "MAX_RECORDS", 3)
    result, cap = run_captured(shell, "%%jaxstages\nfor v in xs:\n    y = quick(v)")
    assert result.success
    assert rebuilt == ["quick"] * 3
    assert "2 more calls reached JAX's Python path in this cell than jaxshow keeps (3); they are not shown" in cap.outputs[-1].data["text/plain"]


def _record(name: str) -> CallRecord:
    return CallRecord(seq=0, path="jit", name=name, compiled=object())


def _blocked_reads(monkeypatch) -> tuple[list[str], threading.Event]:
    """A stand-in for reading stations that holds the worker on its first job until released."""
    order: list[str] = []
    release = threading.Event()

    def read(record, walk, backend=None):
        order.append(record.name)
        release.wait(10)
        return prefetch.Stations(None, None, None)

    monkeypatch.setattr(prefetch, "read_stations", read)
    return order, release


def _submit_three_while_the_first_runs(prefetcher: prefetch.Prefetcher) -> list[CallRecord]:
    records = [_record(n) for n in ("f", "g", "h")]
    prefetcher.submit(records[0], 1.0)
    while not records[0].prefetched[1].running():
        threading.Event().wait(0.005)
    for record in records[1:]:
        prefetcher.submit(record, 1.0)
    return records


def test_only_the_newest_waiting_call_is_read_when_the_report_shows_the_last(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions()), lambda: None)
    f, g, h = _submit_three_while_the_first_runs(prefetcher)
    release.set()
    h.prefetched[1].result(10)
    assert order == ["f", "h"]
    assert g.prefetched[1].cancelled()
    assert prefetch.stations_of(h, WalkOptions()) == prefetch.Stations(None, None, None)
    prefetcher.close()


def test_every_call_is_read_under_all(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions(), every_call=True), lambda: None)
    f, g, h = _submit_three_while_the_first_runs(prefetcher)
    release.set()
    h.prefetched[1].result(10)
    assert order == ["f", "g", "h"]
    prefetcher.close()


def test_name_reads_only_that_function_and_a_short_or_uncompiled_call_is_not_read(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    release.set()
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions(), name="g"), lambda: None)
    f, g, short = _record("f"), _record("g"), _record("g")
    failed = CallRecord(seq=0, path="jit", name="g")
    prefetcher.submit(f, 1.0)
    prefetcher.submit(short, prefetch.MIN_COMPILE_SECONDS / 2)
    prefetcher.submit(failed, 1.0)
    prefetcher.submit(g, 1.0)
    g.prefetched[1].result(10)
    assert order == ["g"]
    assert f.prefetched is short.prefetched is failed.prefetched is None
    prefetcher.close()


def test_stations_read_for_another_walk_are_read_again(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    release.set()
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions()), lambda: None)
    record = _record("f")
    prefetcher.submit(record, 1.0)
    record.prefetched[1].result(10)
    prefetch.stations_of(record, WalkOptions(dialect="hlo"))
    assert order == ["f", "f"]
    prefetcher.close()
