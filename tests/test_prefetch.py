"""Stations are read only for calls a report can show: Traced and Lowered on a worker thread while JAX compiles,
a long compile's Compiled while the program runs, equal to those read at the cell's end."""

from __future__ import annotations

import dataclasses
import functools
import threading

import pytest
from shellrun import run_captured

from jaxshow import _jax_compat
from jaxshow.capture import calls, prefetch
from jaxshow.capture.calls import CallRecord
from jaxshow.capture.stations import CallName, WalkOptions
from jaxshow.timings import COMPILE_EVENT

SETUP = ("import time, jax, jax.numpy as jnp\n"
         "@jax.jit\ndef slow(x):\n    time.sleep(0.3)  # a trace longer than MIN_COMPILE_SECONDS\n    return jnp.sin(x) @ x.T\n"
         "@jax.jit\ndef quick(x):\n    return x + 1\n")


@pytest.fixture
def reads(monkeypatch):
    """Each read of stations, as (thread name, what was read): "before compile", "f" (all three) or "f: compiled"."""
    seen: list[tuple[str, str]] = []
    read_stations, read_before_compile = prefetch.read_stations, prefetch.read_before_compile

    def spy(record, walk, backend=None, early=None):
        seen.append((threading.current_thread().name, record.name + (": compiled" if early is not None else "")))
        return read_stations(record, walk, backend, early)

    def spy_before(*args):
        seen.append((threading.current_thread().name, "before compile"))
        return read_before_compile(*args)

    monkeypatch.setattr(prefetch, "read_stations", spy)
    monkeypatch.setattr(prefetch, "read_before_compile", spy_before)
    return seen


@pytest.fixture
def short(monkeypatch):
    """``quick``'s stages count as short however loaded the machine: on a busy one they took 0.25 s and its Compiled
    station was read on the worker."""
    monkeypatch.setattr(prefetch, "MIN_COMPILE_SECONDS", float("inf"))


@pytest.fixture
def shell(ip):
    ip.run_cell(SETUP)
    ip.run_cell("x = jnp.ones((64, 64))\nx.block_until_ready();")
    return ip


def test_a_long_compile_is_read_on_the_worker_and_gives_the_stations_read_at_the_end(shell, reads, monkeypatch):
    result, _ = run_captured(shell, "%%jaxstages -o early\ny = slow(x)")
    assert result.success
    # Traced and Lowered while JAX compiled, Compiled while the program ran; never again at the cell's end.
    assert reads == [("jaxshow-stations_0", "before compile"), ("jaxshow-stations_0", "slow: compiled")]

    reads.clear()
    monkeypatch.setattr(prefetch, "MIN_COMPILE_SECONDS", float("inf"))
    monkeypatch.setattr(prefetch, "EARLY_READS", 0)
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


def test_a_short_compile_has_its_compiled_station_read_at_the_cells_end(shell, reads, short):
    result, cap = run_captured(shell, "%%jaxstages\ny = quick(x)")
    assert result.success
    assert reads == [("jaxshow-stations_0", "before compile"), ("MainThread", "quick: compiled")]
    assert "quick: trace" in cap.outputs[-1].data["text/plain"]


def test_a_loop_of_re_traces_reads_only_its_first_calls_before_their_compile(shell, reads, short):
    shell.run_cell("xs = [jnp.ones(n + 1) for n in range(6)]")
    result, cap = run_captured(shell, "%%jaxstages\nfor v in xs:\n    y = quick(v)")
    assert result.success
    assert reads == [("jaxshow-stations_0", "before compile")] * prefetch.EARLY_READS + [("MainThread", "quick")]
    assert "quick: trace" in cap.outputs[-1].data["text/plain"] and "f32[6]" in cap.outputs[-1].data["text/plain"]


def test_an_ahead_of_time_lowering_is_read_while_the_cell_compiles_it(shell, reads, short):
    result, cap = run_captured(shell, "%%jaxstages\ncompiled = quick.trace(x).lower().compile()")
    assert result.success
    assert reads == [("jaxshow-stations_0", "before compile"), ("MainThread", "quick: compiled")]
    assert "lowered ahead of time in the cell (.lower()); compiled too" in cap.outputs[-1].data["text/plain"]


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


def test_the_cells_own_calls_of_jaxs_jitted_functions_that_hit_its_cache_are_never_read_back(shell, rebuilt):
    shell.run_cell("s = jnp.sort(x)")
    result, cap = run_captured(shell, "%%jaxstages -o rep\nfor i in range(3):\n    s = jnp.sort(x)\ny = quick(s)")
    assert result.success and rebuilt == ["quick"]
    assert [r.function for r in shell.user_ns["rep"].reports] == ["quick"] and shell.user_ns["rep"].notes == ()


def test_calls_past_the_records_kept_are_counted_and_never_rebuilt(shell, rebuilt, monkeypatch):
    shell.run_cell("xs = [jnp.ones(n + 1) for n in range(5)]")
    monkeypatch.setattr(calls, "MAX_RECORDS", 3)
    result, cap = run_captured(shell, "%%jaxstages\nfor v in xs:\n    y = quick(v)")
    assert result.success
    assert rebuilt == ["quick"] * 3
    assert "2 more calls reached JAX's Python path in this cell than jaxshow keeps (3); they are not shown" in cap.outputs[-1].data["text/plain"]


GRAD_LOOP = "for i in range({n}):\n    w = w - 0.1 * jax.grad(loss)(w) - 0.01 * jax.hessian(loss)(w) @ w\n"


def test_jaxs_own_helpers_served_from_its_caches_never_crowd_out_the_users_call(shell, rebuilt, monkeypatch):
    """An eager ``jax.grad`` and ``jax.hessian`` loop calls JAX's jitted helpers (``jnp.sum``'s) through JAX's Python
    path on every step (and, on jax 0.7, the jits that run its primitives outside jit under ``jax.hessian``'s
    ``vmap``); with their compiles already made, they count for nothing: the user's call after the loop is shown (it
    was past the records kept, and the report said no jitted call of the user's was seen)."""
    shell.run_cell("def loss(w):\n    return jnp.sum(jnp.tanh(w) ** 2)\nw = jnp.ones(8)\n" + GRAD_LOOP.format(n=1))
    monkeypatch.setattr(calls, "MAX_RECORDS", 3)
    result, cap = run_captured(shell, "%%jaxstages -o rep\n" + GRAD_LOOP.format(n=10) + "y = quick(w)")
    assert result.success
    rep = shell.user_ns["rep"]
    assert [r.function for r in rep.reports] == ["quick"] and rebuilt == ["quick"]
    assert rep.notes == () and rep.helper_compiles.count == 0
    assert cap.outputs[-1].data["text/plain"].startswith("cell ") and "\nquick: trace" in cap.outputs[-1].data["text/plain"]


@pytest.mark.parametrize("n", [1, 25])
def test_an_eager_loops_helper_compiles_are_counted_once_each_however_many_steps(shell, n):
    """The compiles of JAX's own helpers in an eager loop of ``n`` steps: each counted and named as JAX published it."""
    import jax

    shell.run_cell("def loss(w):\n    return jnp.sum(jnp.tanh(w) ** 2)")
    published: list[str] = []

    def listen(event, seconds, **kwargs):
        if event == COMPILE_EVENT:
            published.append(str(kwargs.get("fun_name")))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:  # a shape of its own per n: JAX's helpers compile in the cell
        result, cap = run_captured(shell, f"%%jaxstages -o rep\nw = jnp.ones({n + 100})\n" + GRAD_LOOP.format(n=n))
    finally:
        _jax_compat.unregister_duration_listener(listen)
    assert result.success
    helpers = shell.user_ns["rep"].helper_compiles
    assert published and helpers.count == len(published)
    assert set(helpers.names) == {name.removeprefix("jit(").removesuffix(")") for name in published}


@pytest.fixture
def arguments_read(monkeypatch):
    """The names of the records whose call's arguments and call site were read (what only a report shows)."""
    names: list[str] = []
    original = calls._read_arguments

    def spy(record, *args):
        names.append(record.name)
        return original(record, *args)

    monkeypatch.setattr(calls, "_read_arguments", spy)
    return names


def test_jaxs_own_operations_under_an_eager_transformation_never_crowd_out_the_cells_calls(shell, arguments_read, monkeypatch):
    # jax.jvp of jnp.sin, eagerly: each call reaches JAX's Python path, finds its jaxpr in JAX's tracing cache and
    # runs the jvp of it from the C++ cache. Nothing was traced or compiled: no record, and nothing read for one.
    shell.run_cell("v = jnp.ones(3)\nprimal, tangent = jax.jvp(jnp.sin, (v,), (v,))")
    monkeypatch.setattr(calls, "MAX_RECORDS", 3)
    result, cap = run_captured(shell, "%%jaxstages\nfor _ in range(5):\n    jax.jvp(jnp.sin, (v,), (v,))\ny = quick(v)")
    assert result.success
    text = cap.outputs[-1].data["text/plain"]
    assert "quick: trace" in text and "more calls reached JAX's Python path" not in text
    assert arguments_read == ["quick"]


def _record(name: str, thread_id: int | None = None) -> CallRecord:
    """A compiled call's record, made on this thread (the cell's, as the prefetcher was) unless ``thread_id`` says otherwise."""
    return CallRecord(seq=0, path="jit", name=name, compiled=object(), thread_id=threading.get_ident() if thread_id is None else thread_id)


def _blocked_reads(monkeypatch) -> tuple[list[str], threading.Event]:
    """A stand-in for reading stations that holds the worker on its first job until released."""
    order: list[str] = []
    release = threading.Event()

    def read(record, walk, backend=None, early=None):
        order.append(record.name)
        release.wait(10)
        return prefetch.Stations(None, None, None)

    monkeypatch.setattr(prefetch, "read_stations", read)
    return order, release


def _submit_three_while_the_first_runs(prefetcher: prefetch.Prefetcher) -> list[CallRecord]:
    records = [_record(n) for n in ("f", "g", "h")]
    prefetcher.compiled(records[0], 1.0)
    while not records[0].prefetched.after_compile.running():
        threading.Event().wait(0.005)
    for record in records[1:]:
        prefetcher.compiled(record, 1.0)
    return records


def test_only_the_newest_waiting_call_is_read_when_the_report_shows_the_last(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions()), lambda: None)
    f, g, h = _submit_three_while_the_first_runs(prefetcher)
    release.set()
    h.prefetched.after_compile.result(10)
    assert order == ["f", "h"]
    assert g.prefetched.after_compile.cancelled()
    assert prefetch.stations_of(h, WalkOptions()) == prefetch.Stations(None, None, None)
    prefetcher.close()


def test_another_threads_call_is_read_early_only_when_the_report_may_show_it(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    release.set()
    for options, read in ((prefetch.PrefetchOptions(WalkOptions()), []),
                          (prefetch.PrefetchOptions(WalkOptions(), every_call=True), ["loader"]),
                          (prefetch.PrefetchOptions(WalkOptions(), name=CallName("loader")), ["loader"])):
        prefetcher = prefetch.Prefetcher(options, lambda: None)
        record = _record("loader", thread_id=threading.get_ident() + 1)
        prefetcher.compiled(record, 1.0)
        if record.prefetched is not None:
            record.prefetched.after_compile.result(10)
        assert order == read
        order.clear()
        prefetcher.close()


def test_every_call_is_read_under_all(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions(), every_call=True), lambda: None)
    f, g, h = _submit_three_while_the_first_runs(prefetcher)
    release.set()
    h.prefetched.after_compile.result(10)
    assert order == ["f", "g", "h"]
    prefetcher.close()


def test_name_reads_only_that_function_and_a_short_or_uncompiled_call_is_not_read(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    release.set()
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions(), name=CallName("g")), lambda: None)
    f, g, short = _record("f"), _record("g"), _record("g")
    failed = CallRecord(seq=0, path="jit", name="g")
    prefetcher.compiled(f, 1.0)
    prefetcher.compiled(short, prefetch.MIN_COMPILE_SECONDS / 2)
    prefetcher.compiled(failed, 1.0)
    prefetcher.compiled(g, 1.0)
    g.prefetched.after_compile.result(10)
    assert order == ["g"]
    assert f.prefetched is short.prefetched is failed.prefetched is None
    prefetcher.close()


def test_stations_read_for_another_walk_are_read_again(monkeypatch):
    order, release = _blocked_reads(monkeypatch)
    release.set()
    prefetcher = prefetch.Prefetcher(prefetch.PrefetchOptions(WalkOptions()), lambda: None)
    record = _record("f")
    prefetcher.compiled(record, 1.0)
    record.prefetched.after_compile.result(10)
    prefetch.stations_of(record, WalkOptions(dialect="hlo"))
    assert order == ["f", "f"]
    prefetcher.close()


def test_the_worker_renders_the_shown_ir_texts_as_the_report_shows_them(shell, monkeypatch):
    """The IR texts (cell file names labelled In[n]) are rendered on the worker; the report's output is what the main thread renders alone."""
    from jaxshow import render
    from jaxshow.render import stages as render_stages

    rendered: list[tuple[str, str]] = []  # (thread, language or "text") of each IR text actually rendered

    def spy(function, form):
        def rendering(text, *args):
            rendered.append((threading.current_thread().name, args[0] if form == "html" else "text"))
            return function(text, *args)
        return rendering

    for name, form in (("_shown_ir_html", "html"), ("_shown_ir_text", "text")):
        fresh = getattr(render_stages, name).__wrapped__
        monkeypatch.setattr(render_stages, name, functools.lru_cache(maxsize=render_stages.IR_KEPT)(spy(fresh, form)))
    monkeypatch.setattr(prefetch, "MIN_COMPILE_SECONDS", 0.0)
    result, cap = run_captured(shell, "%%jaxstages --debug-info -o rep\ny = slow(x)")
    assert result.success
    assert rendered == [("jaxshow-stations_0", "jaxpr"), ("jaxshow-stations_0", "jaxpr"), ("jaxshow-stations_0", "text"),
                        ("jaxshow-stations_0", "stablehlo"), ("jaxshow-stations_0", "text"),
                        ("jaxshow-stations_0", "hlo"), ("jaxshow-stations_0", "text")]
    report = shell.user_ns["rep"]
    assert "In[" in report.reports[0].lowered.module_text and "<ipython-input-" not in report.reports[0].lowered.module_text
    shown = cap.outputs[-1].data
    for name in ("_shown_ir_html", "_shown_ir_text"):
        getattr(render_stages, name).cache_clear()
    assert shown["text/html"] == render.to_html(report)
    assert shown["text/plain"] == render.to_text(report)
    assert [thread for thread, _ in rendered[7:]] == ["MainThread"] * 7
