"""Live progress under %%jaxstages: one display, updated in place as each stage starts, emptied at the end."""

from __future__ import annotations

import pytest
from shellrun import in_a_real_kernel, run_captured

SETUP = ("import time, jax, jax.numpy as jnp\n"
         "@jax.jit\ndef slow(x):\n    time.sleep(0.4)  # a long trace\n    return x * 2\n")


@pytest.fixture
def shell(ip):
    ip.run_cell(SETUP)
    ip.run_cell("x = jnp.ones(3)\nx.block_until_ready();")  # JAX's own helper compiles happen here, not below
    yield ip
    ip.run_line_magic("config", "StagesMagics.progress_after_seconds = 1.0")


def _progress(cap):
    return [(o.update, o.data["text/plain"]) for o in cap.outputs if "display_id" in (o.transient or {})]


def test_a_stage_longer_than_the_threshold_is_shown_while_it_runs_then_updated_and_emptied(shell):
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0.1")
    result, cap = run_captured(shell, "%%jaxstages\ny = slow(x)")
    assert result.success
    lines = _progress(cap)
    ids = {o.transient["display_id"] for o in cap.outputs if o.transient}
    assert len(ids) == 1  # one display, updated in place
    assert [update for update, _ in lines] == [False, True, True, True, True, True]
    texts = [text.split(" (")[0] for _, text in lines]
    assert texts == ["jaxshow: tracing slow", "jaxshow: lowering slow", "jaxshow: compiling slow", "jaxshow: running slow",
                     "jaxshow: slow done", ""]
    assert lines[1][1].startswith("jaxshow: lowering slow (since ") and "; tracing 0." in lines[1][1]
    assert lines[-2][1].startswith("jaxshow: slow done (tracing 0.") and ", running " in lines[-2][1]
    assert "slow: trace" in cap.outputs[-1].data["text/plain"]  # the report comes after the emptied line


def test_a_long_stage_that_starts_just_before_the_timer_fires_is_shown_when_it_is_due(shell):
    # quick's trace (0.2 s) starts the timer; slower's trace starts 0.2 s later and is 0.1 s old when the timer fires
    shell.run_cell("@jax.jit\ndef quick(x):\n    time.sleep(0.2)\n    return x + 1\n"
                   "@jax.jit\ndef slower(x):\n    time.sleep(0.8)\n    return x * 3\n")
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0.3")
    result, cap = run_captured(shell, "%%jaxstages\ny = quick(x)\nz = slower(x)")
    assert result.success
    texts = [text.split(" (")[0] for _, text in _progress(cap)]
    assert texts == ["jaxshow: tracing slower", "jaxshow: lowering slower", "jaxshow: compiling slower",
                     "jaxshow: running slower", "jaxshow: slower done", ""]


def test_a_quick_call_after_a_long_one_leaves_the_line_as_it_is(shell):
    """Once the line was up, every later call's stages replaced it at once, however short: blackjax's second jitted step,
    served from JAX's caches through its Python path, read 'jaxshow: compiling step_fn', then 'step_fn done (tracing
    0.0 s, lowering 0.0 s, compiling 0.0 s)', stages that took no time or never happened. A later call's stage is shown
    once it outlasts the threshold, as the first's was."""
    shell.run_cell("fast = jax.jit(lambda v: v + 1)")
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0.3")
    result, cap = run_captured(shell, "%%jaxstages --all\ny = slow(x)\nz = fast(x)\nw = slow(x)")
    assert result.success
    texts = [text.split(" (")[0] for _, text in _progress(cap)]
    assert texts == ["jaxshow: tracing slow", "jaxshow: lowering slow", "jaxshow: compiling slow", "jaxshow: running slow",
                     "jaxshow: slow done", ""]


def test_fast_stages_show_nothing_but_the_report(shell):
    shell.run_cell("fast = jax.jit(lambda v: v + 1)")
    result, cap = run_captured(shell, "%%jaxstages\ny = fast(x)")
    assert result.success
    assert _progress(cap) == [] and len(cap.outputs) == 1


def test_progress_can_be_turned_off(shell):
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = -1")
    result, cap = run_captured(shell, "%%jaxstages\ny = slow(x)")
    assert result.success and _progress(cap) == [] and len(cap.outputs) == 1


def test_in_a_real_kernel_the_timer_threads_line_reaches_the_cell_and_is_emptied():
    shown, nb = in_a_real_kernel("%load_ext jaxshow\n%config StagesMagics.progress_after_seconds = 0.2\n" + SETUP
                                  + "x = jnp.ones(3)\nx.block_until_ready();", "%%jaxstages\ny = slow(x)")
    assert shown[0] == (1, "display_data", "jaxshow: tracing slow")  # shown by the timer thread, in the cell's output
    texts = [o.get("data", {}).get("text/plain", "") for o in nb.cells[1].outputs]
    assert texts[0] == "" and texts[1].startswith("cell ") and len(texts) == 2  # updated in place, emptied, then the report


def test_in_a_real_kernel_a_thread_started_by_an_earlier_cell_shows_its_line_in_the_running_cell():
    """A thread that runs in an earlier cell's context (``asyncio.to_thread`` and kin copy it) sends its output there;
    the line is the running cell's all the same."""
    shown, nb = in_a_real_kernel(
        "%load_ext jaxshow\n%config StagesMagics.progress_after_seconds = 0\n" + SETUP
        + "import contextvars, threading\ngo, done = threading.Event(), threading.Event()\n"
        "x = jnp.ones(3)\ndef loader():\n    go.wait(60)\n    slow(x)\n    done.set()\n"
        "threading.Thread(target=contextvars.copy_context().run, args=(loader,), daemon=True).start()",
        "%%jaxstages\ngo.set(); done.wait(60)")
    assert nb.cells[0].outputs == []
    assert shown[0] == (1, "display_data", "jaxshow: tracing slow")


def test_a_trace_that_fails_ends_its_line_so_a_slow_rest_of_the_cell_shows_none(shell):
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0.1")
    shell.run_cell("@jax.jit\ndef bad(v):\n    return v + jnp.ones(4)\n")
    result, cap = run_captured(shell, "%%jaxstages\ntry:\n    bad(x)\nexcept TypeError:\n    pass\ntime.sleep(0.4)")
    assert result.success
    assert _progress(cap) == [] and len(cap.outputs) == 1
    assert "bad: failed while tracing" in cap.outputs[0].data["text/plain"]


def test_jaxs_own_helpers_served_from_its_caches_claim_no_stage_so_a_slow_rest_of_the_cell_shows_none(shell):
    """An eager ``jax.grad`` step calls JAX's jitted helpers through its Python path, tracing nothing new: the line
    said "jaxshow: tracing _reduce_sum" all through the cell's sleep after it."""
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0.1")
    shell.run_cell("def loss(w):\n    return jnp.sum(jnp.tanh(w) ** 2)\ng = jax.grad(loss)(x)")
    result, cap = run_captured(shell, "%%jaxstages\ng = jax.grad(loss)(x)\ntime.sleep(0.4)")
    assert result.success
    assert _progress(cap) == [] and len(cap.outputs) == 1


def test_ahead_of_time_the_line_follows_trace_then_compile_and_never_claims_a_stage_that_ended(shell):
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0")
    result, cap = run_captured(shell, "%%jaxstages\ntraced = slow.trace(x)\ntime.sleep(0.2)\ncompiled = traced.lower().compile()")
    assert result.success
    texts = [text.split(" (")[0] for _, text in _progress(cap)]
    assert texts == ["jaxshow: tracing slow", "jaxshow: slow done", "jaxshow: compiling slow", "jaxshow: slow done", ""]
    lines = [text for _, text in _progress(cap)]
    assert lines[1].startswith("jaxshow: slow done (tracing 0.") and lines[3].startswith("jaxshow: slow done (compiling 0.")


def test_a_call_that_fails_after_its_line_was_shown_says_where_it_failed_never_done(shell):
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0.1")
    shell.run_cell("@jax.jit\ndef slow_bad(v):\n    time.sleep(0.4)\n    return v + jnp.ones(4)\n")
    result, cap = run_captured(shell, "%%jaxstages\nslow_bad(x)")
    assert isinstance(result.error_in_exec, TypeError)
    lines = [text for _, text in _progress(cap)]
    assert [text.split(" (")[0] for text in lines] == ["jaxshow: tracing slow_bad", "jaxshow: slow_bad failed while tracing", ""]
    assert lines[1].startswith("jaxshow: slow_bad failed while tracing (tracing 0.")


def test_the_line_names_the_function_as_the_report_does(shell):
    """``jax.jit(jax.grad(g))`` is ``grad(g)`` in the report, and so on the line; a program compiled for it under
    ``jax.vmap`` too."""
    shell.run_line_magic("config", "StagesMagics.progress_after_seconds = 0")
    shell.run_cell("def g(v):\n    time.sleep(0.2)\n    return jnp.sin(v).sum()\nstep = jax.jit(jax.grad(g))\nup = jax.jit(step)\n"
                   "x5, xs = jnp.ones(5), jnp.ones((2, 3))")
    result, cap = run_captured(shell, "%%jaxstages\ny = step(x)")
    assert result.success
    assert [text.split(" (")[0] for _, text in _progress(cap)] == [
        "jaxshow: tracing grad(g)", "jaxshow: lowering grad(g)", "jaxshow: compiling grad(g)", "jaxshow: running grad(g)",
        "jaxshow: grad(g) done", ""]
    assert "grad(g): trace" in cap.outputs[-1].data["text/plain"]
    result, cap = run_captured(shell, "%%jaxstages\ny = up(x5)")
    assert result.success
    assert [text.split(" (")[0] for _, text in _progress(cap)][:2] == ["jaxshow: tracing jit(grad(g))", "jaxshow: lowering jit(grad(g))"]
    assert "jit(grad(g)): trace" in cap.outputs[-1].data["text/plain"]
    result, cap = run_captured(shell, "%%jaxstages\ny = jax.vmap(step)(xs)")
    assert result.success
    assert "jaxshow: lowering grad(g)" in [text.split(" (")[0] for _, text in _progress(cap)]
