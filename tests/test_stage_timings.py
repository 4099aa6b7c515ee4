"""Stage timings from jax.monitoring, including a compile served from the persistent cache."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp

from jaxshow.timings import EventCollector, timings_from_events

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    import jaxshow

    @jax.jit
    def cached_fn(x):
        return jnp.tanh(x) @ x.T

    report = jaxshow.stages(cached_fn, jnp.ones((32, 32)))
    print(json.dumps({"hit": report.timings.persistent_cache_hit, "compile": report.timings.compile_seconds,
                      "text": " ".join(str(report).split("\\n\\u2460")[0].split())}))  # the head line, unwrapped
    """
)


def test_persistent_cache_hit_is_flagged_in_a_second_process(tmp_path):
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["hit"] is False and runs[0]["compile"] > 0
    assert runs[1]["hit"] is True and runs[1]["compile"] is not None
    assert "served from the persistent cache" in runs[1]["text"]
    assert any(p.name.startswith("jit_cached_fn-") for p in tmp_path.iterdir())


def test_collector_records_each_stage_with_its_function():
    @jax.jit
    def alpha(x):
        return x * 2

    with EventCollector() as collector:
        alpha(jnp.full((3,), 4.0))
    mine = timings_from_events([e for e in collector.events if e.base_name == "alpha"])
    assert mine.stages_run == ("trace", "lower", "compile")
    assert timings_from_events([]).stages_run == ()


def test_a_cell_that_clears_jaxs_listeners_keeps_its_stage_times_and_its_clear(ip):
    """``jax.monitoring.clear_event_listeners()`` in a cell: the report still has the call's stages (it read
    "cache hit: JAX did not trace, lower or compile this call"), the cell's clear holds after it, and the
    runner's close raises no AssertionError from JAX's unregister."""
    from jax._src import monitoring

    from shellrun import run_captured

    assert ip.run_cell("import jax, jax.numpy as jnp\nx = jnp.ones(3)").success
    result, cap = run_captured(ip, "%%jaxstages -o rep\njax.monitoring.clear_event_listeners()\n"
                                   "@jax.jit\ndef f(v):\n    return jnp.sin(v)\ny = f(x)")
    assert result.success and cap.stderr == ""
    [report] = ip.user_ns["rep"].reports
    assert report.function == "f" and report.timings.stages_run == ("trace", "lower", "compile")
    assert not report.cache_hit and report.timings.compile_seconds > 0
    assert monitoring.get_event_duration_listeners() == [] and monitoring.get_event_listeners() == []


NEW_WRAPPERS = ("y = jax.jit(g)(x)", "for i in range(3):\n    y = jax.jit(g)(x + i)", "y = f(x)")


def test_the_users_listener_and_log_compiles_lines_are_as_in_a_plain_run(ip):
    """A call JAX served from its C++ cache through a new ``jax.jit`` wrapper of a function traced before: jaxshow reads
    its stations back through JAX's trace path, which times the trace-cache lookup as a trace. The user's own
    ``jax.monitoring`` listener heard one ``jaxpr_trace_duration`` per such call that a plain run does not emit, and under
    ``jax_log_compiles`` the cell printed 'Finished tracing g for jit in 0.000009 sec' lines of its own."""
    from shellrun import run_captured

    assert ip.run_cell("import jax, jax.numpy as jnp, collections, logging\nheard = collections.Counter()\n"
                       "class Lines(logging.Handler):\n    def emit(self, record):\n        heard[record.getMessage()[:16]] += 1\n"
                       "lines = Lines()\nlogging.getLogger('jax').addHandler(lines)\n"
                       "jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: heard.update([e]))\n"
                       "def g(v):\n    return jnp.sin(v) * 2\nf = jax.jit(g)\nx = jnp.ones(3)\ny = f(x)\n"
                       "jax.config.update('jax_log_compiles', True)").success
    try:
        for cell in NEW_WRAPPERS:  # JAX's own helpers for x + i compiled once, before either run
            assert ip.run_cell(cell).success
        seen = {}
        for magic in ("", "%%jaxstages\n"):
            for cell in NEW_WRAPPERS:
                ip.user_ns["heard"].clear()
                result, cap = run_captured(ip, magic + cell)
                assert result.success
                seen[magic, cell] = dict(ip.user_ns["heard"])
        assert [seen["%%jaxstages\n", cell] for cell in NEW_WRAPPERS] == [{}] * 3
        assert [seen["", cell] for cell in NEW_WRAPPERS] == [{}] * 3
    finally:
        ip.run_cell("jax.config.update('jax_log_compiles', False)\nlogging.getLogger('jax').removeHandler(lines)")


def test_a_read_back_is_unheard_by_other_listeners_on_its_thread_only():
    """Inside ``unheard()`` JAX's events of that thread reach only jaxshow's listeners; another thread's reach everyone,
    and a listener registered meanwhile stays registered after."""
    import threading

    from jax._src import monitoring

    from jaxshow import _jax_compat, timings

    heard, late = [], []
    latecomer = lambda event, duration, **kwargs: late.append(event)  # noqa: E731
    users = lambda event, duration, **kwargs: heard.append((event, threading.current_thread().name))  # noqa: E731
    users.__module__ = None  # a user's function may say anything of itself
    monitoring.register_event_duration_secs_listener(users)
    with EventCollector() as collector:
        with _jax_compat.unheard():
            monitoring.record_event_duration_secs("/jax/core/compile/jaxpr_trace_duration", 0.5, fun_name="mine")
            other = threading.Thread(target=monitoring.record_event_duration_secs, name="other",
                                     args=("/jax/core/compile/jaxpr_trace_duration", 0.25), kwargs={"fun_name": "theirs"})
            other.start()
            other.join()
            monitoring.register_event_duration_secs_listener(latecomer)
        monitoring.record_event_duration_secs("/jax/core/compile/jaxpr_trace_duration", 0.125, fun_name="after")
    assert heard == [("/jax/core/compile/jaxpr_trace_duration", "other"), ("/jax/core/compile/jaxpr_trace_duration", "MainThread")]
    assert late == ["/jax/core/compile/jaxpr_trace_duration"]
    assert [e.base_name for e in collector.events] == ["mine", "theirs", "after"]
    assert type(monitoring._event_duration_secs_listeners) is list and timings._on_duration not in monitoring.get_event_duration_listeners()
    _jax_compat.unregister_duration_listener(users)
    _jax_compat.unregister_duration_listener(latecomer)
