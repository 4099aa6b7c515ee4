"""Loops, matmul FLOPs and collectives counted from real jaxprs and HLO: trip counts next to XLA's cost."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import jaxshow
from jaxshow.capture.programs import collectives, jaxpr_contents, loop_trip_counts
from jaxshow.report import CollectiveCount, LoopInfo


def _scan_model(layers: int):
    def body(x, w):
        return jnp.tanh(x @ w), None

    @jax.jit
    def model(ws, x):
        y, _ = jax.lax.scan(body, x, ws)
        return y

    return model, jax.ShapeDtypeStruct((layers, 32, 32), jnp.float32), jax.ShapeDtypeStruct((4, 32), jnp.float32)


def test_scan_body_matmuls_count_once_per_iteration():
    model, ws, x = _scan_model(12)
    contents = jaxpr_contents(jax.make_jaxpr(model)(ws, x).jaxpr)
    assert contents.loops == (LoopInfo("scan", 12, 1),)
    assert contents.dot_flops == 12 * 2 * 4 * 32 * 32  # 12 iterations of a (4,32)@(32,32) matmul


def test_cond_counts_its_costliest_branch_and_while_counts_once():
    def f(x, w):
        y = jax.lax.cond(x[0, 0] > 0, lambda v: v @ w @ w, lambda v: v @ w, x)
        return jax.lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] @ w, c[1] + 1), (y, 0))[0]

    contents = jaxpr_contents(jax.make_jaxpr(f)(jnp.ones((2, 8)), jnp.ones((8, 8))).jaxpr)
    assert contents.loops == (LoopInfo("while", None, 1),)
    assert contents.dot_flops == 2 * (2 * 2 * 8 * 8) + 2 * 2 * 8 * 8  # the two-matmul branch, then the body once


def test_stages_report_puts_trip_counts_and_the_estimate_next_to_the_cost():
    model, ws, x = _scan_model(12)
    report = jaxshow.stages(model, ws, x)
    assert report.traced.loops == (LoopInfo("scan", 12, 1),)
    assert report.traced.dot_flops_estimate == 12 * 2 * 4 * 32 * 32
    assert report.compiled.loop_trip_counts == (12,)
    text = " ".join(str(report).split())  # the note wraps at the terminal's width
    note = ("note: the program has loops (scan of length 12; XLA's loops run 12 times (known_trip_count)): XLA's cost "
            "analysis counts each loop body once, not once per iteration, so its FLOPs and bytes leave out the repeats. "
            "Counting each body by its trip count, the matrix multiplies alone come to about 98.30 kFLOP (an estimate "
            "from the jaxpr, whole program)")
    assert note in text
    assert "low by about the trip count" not in text and "98.30 kFLOP" in report._repr_html_()


def test_a_program_without_loops_has_no_estimate():
    report = jaxshow.stages(jax.jit(lambda a, b: a @ b), jnp.ones((4, 4)), jnp.ones((4, 4)))
    assert (report.traced.loops, report.traced.dot_flops_estimate, report.compiled.loop_trip_counts) == ((), None, ())
    assert "the program has loops" not in str(report)


HLO = """HloModule jit_step
ENTRY %main {
  %p = f32[8]{0} parameter(0)
  %all-reduce = f32[8]{0} all-reduce(f32[8]{0} %p), replica_groups={{0,1}}, to_apply=%add
  %ag-start = (f32[8]{0}, f32[16]{0}) all-gather-start(f32[8]{0} %all-reduce), dimensions={0}
  %ag-done = f32[16]{0} all-gather-done((f32[8]{0}, f32[16]{0}) %ag-start)
  %w = (s32[], f32[16]{0}) while((s32[], f32[16]{0}) %t), condition=%c, body=%b, backend_config={"known_trip_count":{"n":"7"}}
  ROOT %all-reduce.1 = f32[16]{0} all-reduce(f32[16]{0} %ag-done), replica_groups={{0,1}}, to_apply=%add
}"""


def test_collectives_count_each_async_pair_once_with_their_lines():
    assert collectives(HLO) == (CollectiveCount("all-reduce", 2, (4, 8)), CollectiveCount("all-gather", 1, (5,)))
    assert loop_trip_counts(HLO) == (7,)
    assert collectives("HloModule m\nENTRY %e { ROOT %p = f32[] parameter(0) }") == () and collectives(None) == ()


def test_the_report_quotes_the_first_lines_of_each_collective():
    from jaxshow.render.limits import DEFAULT_BUDGET
    from jaxshow.render.placement import collective_excerpt
    from jaxshow.report import CompiledStation

    station = CompiledStation(optimized_hlo_text=HLO, hlo_unavailable=None, cost=None, cost_unavailable="-", memory=None,
                              memory_unavailable="-", inputs=(), outputs=(), collectives=collectives(HLO))
    assert collective_excerpt(station, DEFAULT_BUDGET).splitlines() == [
        "4  %all-reduce = f32[8]{0} all-reduce(f32[8]{0} %p), replica_groups={{0,1}}, to_apply=%add",
        "5  %ag-start = (f32[8]{0}, f32[16]{0}) all-gather-start(f32[8]{0} %all-reduce), dimensions={0}",
        "8  ROOT %all-reduce.1 = f32[16]{0} all-reduce(f32[16]{0} %ag-done), replica_groups={{0,1}}, to_apply=%add",
    ]
