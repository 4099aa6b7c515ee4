"""%%jaxstages on a program sharded over 8 CPU devices (a fresh process: XLA_FLAGS is read once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json
    import jax
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "jaxshow")
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    x = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P("data", "model")))
    w = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("model", None)))

    @jax.jit
    def layer(x, w):
        return jnp.sum(jnp.tanh(x @ w))
    ''').success
    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda e, d, **k: compiles.append(k["fun_name"]) if e.endswith("backend_compile_duration") else None)
    with capture_output() as cap:
        ok = ip.run_cell("%%jaxstages -o rep\\nout = layer(x, w)").success
    report = ip.user_ns["rep"].reports[0]
    print(json.dumps({
        "ok": ok,
        "devices": jax.device_count(),
        "compiles": compiles.count("jit(layer)"),
        "input_shardings": [p.sharding for p in report.compiled.inputs],
        "arg_shardings": [a.sharding for a in report.traced.args],
        "hlo_has_all_reduce": "all-reduce" in report.compiled.optimized_hlo_text,
        "num_partitions": "num_partitions = 8" in report.lowered.module_text,
        "html_ok": "NamedSharding" in cap.outputs[0].data["text/html"],
    }))
    """
)


def test_sharded_program_on_eight_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["devices"] == 8
    assert result["compiles"] == 1, "the walk compiled the sharded program again"
    assert ["('data', 'model')" in result["input_shardings"][0], "('model', None)" in result["input_shardings"][1]] == [True, True], result
    assert all('NamedSharding' in s for s in result['input_shardings'] + result['arg_shardings'])
    assert result["hlo_has_all_reduce"] and result["num_partitions"] and result["html_ok"]
