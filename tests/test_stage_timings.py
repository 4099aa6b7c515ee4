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
                      "text": str(report).splitlines()[0]}))
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
