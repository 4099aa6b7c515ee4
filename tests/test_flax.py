"""flax NNX through the magics, in a child process (flax is not a test extra: CI's newest-JAX leg installs it)."""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("flax") is None, reason="flax is not installed")

SCRIPT = textwrap.dedent(
    """
    import json
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    config.StagesMagics.progress_after_seconds = -1.0
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "jaxshow")
    assert ip.run_cell('''
    import jax, jax.numpy as jnp
    from flax import nnx
    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(4, 16, rngs=rngs)
            self.bn = nnx.BatchNorm(16, rngs=rngs)
            self.l2 = nnx.Linear(16, 2, rngs=rngs)
        def __call__(self, x):
            return self.l2(nnx.relu(self.bn(self.l1(x))))
    model = MLP(nnx.Rngs(0))
    @nnx.jit
    def predict(model, x):
        return model(x)
    x = jnp.ones((3, 4))
    ''').success
    texts = {}
    for name, cell in (
        ("stages", "%%jaxstages\\ny = predict(model, x)"),
        ("cache", "%%jaxcache\\nmodel.l1.kernel.value = model.l1.kernel.value.astype(jnp.bfloat16)\\ny = predict(model, x)"),
    ):
        with capture_output() as cap:
            assert ip.run_cell(cell).success
        texts[name] = cap.outputs[-1].data["text/plain"].splitlines()
    ip.run_cell("seq = nnx.Sequential(nnx.Linear(4, 3, rngs=nnx.Rngs(0)), nnx.Linear(3, 2, rngs=nnx.Rngs(1)))")
    with capture_output():
        assert ip.run_cell("%%jaxstages -o rep\\ny = predict(seq, x)").success
    texts["sequential"] = [a.path for a in ip.user_ns["rep"].reports[0].traced.args]
    assert ip.run_cell('''
    flattened = []
    @jax.tree_util.register_pytree_node_class
    class Batch:
        def __init__(self, v): self.v = v
        def tree_flatten(self):
            flattened.append(1)
            return (self.v,), None
        @classmethod
        def tree_unflatten(cls, aux, children): return cls(*children)
    @nnx.jit
    def scored(model, batch):
        return model(batch.v).sum()
    ''').success
    counts = []
    for magic in ("", "%%jaxstages\\n", "", "%%jaxstages\\n"):
        ip.run_cell("flattened.clear()")
        with capture_output():
            assert ip.run_cell(magic + f"s = scored(model, Batch(jnp.ones(({len(counts) + 5}, 4))))").success
        counts.append(len(ip.user_ns["flattened"]))
    texts["flattens"] = counts
    print(json.dumps(texts))
    """
)


@functools.cache
def _run() -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_nnx_jit_leaves_are_named_by_their_variables_paths():
    """``nnx.jit`` passes each module as a flat list of leaves, which JAX names ``model.states[0][7]``: the Traced
    station listed ten such rows and ``%jaxcache`` read 'model.states[0][7]: now bf16[4,16], before f32[4,16]'. Both now
    name each leaf by its variable's path in the module, as flax itself flattens it."""
    texts = _run()
    stages = texts["stages"]
    start = stages.index("    argument         type       sharding  donated")
    assert [" ".join(row.split()) for row in stages[start + 1:start + 10]] == [
        "model.bn.bias f32[16] — no", "model.bn.mean f32[16] — no", "model.bn.scale f32[16] — no",
        "model.bn.var f32[16] — no", "model.l1.bias f32[16] — no", "model.l1.kernel f32[4,16] — no",
        "model.l2.bias f32[2] — no", "model.l2.kernel f32[16,2] — no", "x f32[3,4] — no"]
    # its outputs: the module passed back, updated, read 'result[0][0].states[0][5]', and its own output 'result[2]'
    start = stages.index("    output           type       sharding")
    assert [" ".join(row.split()) for row in stages[start + 1:start + 11]] == [
        "model.bn.bias f32[16] —", "model.bn.mean f32[16] —", "model.bn.scale f32[16] —", "model.bn.var f32[16] —",
        "model.l1.bias f32[16] —", "model.l1.kernel f32[4,16] —", "model.l2.bias f32[2] —", "model.l2.kernel f32[16,2] —",
        "result f32[3,2] —", "effects: none (pure)"]
    cache = " ".join(" ".join(texts["cache"]).split())
    # a pytree node of the user's beside the module is flattened as often as without the magic (the names read no more)
    plain, magic = texts["flattens"][0::2], texts["flattens"][1::2]
    assert magic == plain, texts["flattens"]
    assert "1. different input types: model.l1.kernel: now bf16[4,16], before f32[4,16] called at In[" in cache, cache


def test_nnx_jit_leaves_under_a_list_are_named_by_index():
    """``nnx.Sequential``'s layers (a list) read ``model.layers.0.kernel``, and an optimizer's state
    ``optimizer.opt_state.0.mu.linear1.bias``: flax's path keys joined by dots. A list's index now reads as Python
    reaches it, ``model.layers[0].kernel``."""
    assert _run()["sequential"] == ["model.layers[0].bias", "model.layers[0].kernel", "model.layers[1].bias",
                                    "model.layers[1].kernel", "x"]


def test_nnx_jit_wrapper_is_named_as_flax_made_it():
    """``@nnx.jit`` makes a ``jax.jit`` of flax's ``JitFn``, which wraps the user's function: the wrapper station read
    'wrapper jax.jit', as for a ``jax.jit`` the user wrote. It now says whose jit it is and whose its options are."""
    stages = _run()["stages"]
    start = next(i for i, row in enumerate(stages) if row.startswith("    wrapper "))
    assert stages[start:start + 3] == [
        "    wrapper          jax.jit of flax's JitFn around predict: the options below are the ones flax",
        "                     passed",
        "    defined at       In[1]:11 (predict)"]
