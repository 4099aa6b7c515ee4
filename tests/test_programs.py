"""Loops, matmul FLOPs and collectives counted from real jaxprs and HLO: trip counts next to XLA's cost."""

from __future__ import annotations

import json

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
            "Counting each body by its trip count, the matrix multiplies and convolutions alone come to about 98.30 kFLOP "
            "(an estimate "
"from the jaxpr, whole program)")
    assert note in text
    assert "low by about the trip count" not in text and "98.30 kFLOP" in report._repr_html_()


def test_a_program_without_loops_has_no_estimate():
    report = jaxshow.stages(jax.jit(lambda a, b: a @ b), jnp.ones((4, 4)), jnp.ones((4, 4)))
    assert (report.traced.loops, report.traced.dot_flops_estimate, report.compiled.loop_trip_counts) == ((), None, ())
    assert "the program has loops" not in str(report)



@jax.jit
def _inner(a, b):
    return a @ b


def _scoped(x, ws):
    """(4,8) @ (8,8) matmuls, 512 FLOPs each: one in a named scope, one in a nested jit, two in a scan's scoped body."""
    with jax.named_scope("encoder"):
        with jax.named_scope("dense"):
            x = jnp.tanh(x @ ws[0])
        x = _inner(x, ws[1])

    def body(c, w):
        with jax.named_scope("block"):
            return c @ w, None

    x, _ = jax.lax.scan(body, x, jnp.stack([ws[2], ws[2]]))
    return x.sum()


SCOPED_ARGS = (jnp.ones((4, 8)), [jnp.ones((8, 8))] * 3)


def test_matmul_flops_are_counted_by_named_scope_nested_jit_and_loop_body():
    contents = jaxpr_contents(jax.make_jaxpr(_scoped)(*SCOPED_ARGS).jaxpr)
    assert dict(contents.flops_by_scope) == {"encoder/dense": 512, "encoder/jit(_inner)": 512, "block": 2 * 512}
    assert contents.dot_flops == 4 * 512
    backward = jaxpr_contents(jax.make_jaxpr(jax.grad(_scoped))(*SCOPED_ARGS).jaxpr)
    assert dict(backward.flops_by_scope) == {  # JAX's names for the forward and the backward pass, as in the HLO's op_name
        "jvp(encoder)/dense": 512, "jvp(encoder)/jit(_inner)": 512, "jvp()/block": 1024,
        "transpose(jvp(encoder))/dense": 512, "transpose(jvp(encoder))/jit(_inner)": 512, "transpose(jvp())/block": 1024}


def test_a_convolution_counts_every_kernel_tap_of_every_output():
    def conv(x, k):
        return jax.lax.conv_general_dilated(x, k, (2, 2), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                            feature_group_count=2)

    x, k = jnp.ones((2, 8, 16, 16)), jnp.ones((32, 4, 3, 3))
    contents = jaxpr_contents(jax.make_jaxpr(conv)(x, k).jaxpr)
    assert contents.dot_flops == 2 * (2 * 32 * 7 * 7) * (4 * 3 * 3)  # each output: 4 input features (of 8, 2 groups) × 3×3
    assert contents.dot_flops == jax.jit(conv).lower(x, k).cost_analysis()["flops"]  # no padding: XLA counts the same


def test_the_traced_station_shows_flops_by_named_scope_costliest_first(tmp_path):
    report = jaxshow.stages(jax.jit(_scoped), *SCOPED_ARGS)
    assert report.traced.flops_by_scope == (("block", 1024.0), ("encoder/dense", 512.0), ("encoder/jit(_inner)", 512.0))
    text = str(report)
    title = ("matrix multiplies and convolutions by named scope, 2.05 kFLOP in all (an estimate from the jaxpr: 2·M·N·K "
             "per matrix multiply, every kernel tap of a convolution, each loop body times its trip count)")
    assert title + ":" in " ".join(text.split())
    lines = text.split("\n")
    header = lines.index("    scope                FLOPs       share")
    assert lines[header:header + 4] == ["    scope                FLOPs       share",
                    "    block                1.02 kFLOP  50%",
                    "    encoder/dense        512 FLOP    25%",
                    "    encoder/jit(_inner)  512 FLOP    25%"]
    html = report._repr_html_()
    assert f"<summary>{title}</summary>" in html
    assert "<tr><td>encoder/jit(_inner)</td><td>512 FLOP</td><td>25%</td></tr>" in html
    jaxshow.save(report, tmp_path)
    (saved_json,) = tmp_path.glob("*.json")
    saved = json.loads(saved_json.read_text())["traced"]["flops_by_scope"]
    assert saved == {"block": 1024.0, "encoder/dense": 512.0, "encoder/jit(_inner)": 512.0}


def test_flops_by_scope_are_left_out_with_one_scope_and_summed_past_the_rows_shown():
    plain = jaxshow.stages(jax.jit(lambda a, b: a @ b @ b), jnp.ones((4, 4)), jnp.ones((4, 4)))
    assert plain.traced.flops_by_scope == () and "by named scope" not in str(plain)

    def mostly_unscoped(a, b):
        with jax.named_scope("tiny"):
            b = b[:2, :2] @ b[:2, :2]  # 16 FLOPs beside 131,072: under 1%, no split worth a table
        return a @ a.T, b

    unsplit = jaxshow.stages(jax.jit(mostly_unscoped), jnp.ones((32, 64)), jnp.ones((4, 4)))
    assert unsplit.traced.flops_by_scope == () and "by named scope" not in str(unsplit)

    def many(x, w):
        for i in range(14):
            with jax.named_scope(f"layer{i:02d}"):
                x = x @ w
        return x @ w

    report = jaxshow.stages(jax.jit(many), jnp.ones((2, 4)), jnp.ones((4, 4)))
    assert len(report.traced.flops_by_scope) == 15
    lines = str(report).split("\n")
    header = lines.index("    scope    FLOPs    share")
    assert lines[header + 1:header + 3] == ["    layer00  64 FLOP  7%", "    layer01  64 FLOP  7%"]
    assert lines[header + 12:header + 14] == [  # the one outside any scope comes last of the equal ones
        "    layer11  64 FLOP  7%", "    … 3 more scopes, 192 FLOP (20%) (all in report.traced.flops_by_scope)"]
    assert report.traced.flops_by_scope[-1] == ("", 64.0)



def test_the_two_passes_of_a_gradient_are_scopes_jax_names_and_the_report_explains():
    loss = jax.grad(lambda w, x: ((x @ w) ** 2).sum())  # forward (4,8)@(8,8); backward for w: (8,4)@(4,8)
    report = jaxshow.stages(jax.jit(loss), jnp.ones((8, 8)), jnp.ones((4, 8)))
    assert report.traced.flops_by_scope == (("jvp()", 512.0), ("transpose(jvp())", 512.0))
    legend = ("jvp(…): the forward pass of a jax.grad, jax.vjp or jax.jvp; transpose(jvp(…)): the backward pass of a "
              "jax.grad or jax.vjp")
    assert legend in " ".join(str(report).split())
    assert legend in report._repr_html_()


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


def test_a_scope_name_is_escaped_in_html_and_a_table_too_wide_for_the_terminal_reads_as_sentences():
    def f(x, w):
        with jax.named_scope("<b>evil</b>&"):
            x = x @ w
        with jax.named_scope("x" * 300):
            return x @ w

    report = jaxshow.stages(jax.jit(f), jnp.ones((4, 4)), jnp.ones((4, 4)))
    assert "<tr><td>&lt;b>evil&lt;/b>&amp;</td><td>128 FLOP</td><td>50%</td></tr>" in report._repr_html_()
    lines = str(report).split("\n")
    at = lines.index("    <b>evil</b>&: 128 FLOP, 50%")
    assert lines[at + 1].startswith("    " + "x" * 100) and lines[at + 2] == "        (300 chars): 128 FLOP, 50%"
