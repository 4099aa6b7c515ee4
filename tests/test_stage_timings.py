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
