"""Scanning IR text: brackets and quoted strings balanced."""

from __future__ import annotations

from jaxshow.irtext import closing, donors, split_top_level


def test_closing_skips_nested_brackets_and_brackets_inside_quotes():
    text = 'x loc(callsite("f(" at fused["a)", loc(y)])) tail'
    start = text.index("loc(") + 4
    assert text[closing(text, start)] == ")" and text[closing(text, start) + 1:] == " tail"
    assert closing('{a="}\\"}", b={c}} rest', 1) == len('{a="}\\"}", b={c}')
    assert closing("(unbalanced", 1) == len("(unbalanced")


def test_split_top_level_splits_only_outside_brackets_and_quotes():
    assert split_top_level('a, f(b, c), "d, e", [g, h]', ", ") == ["a", "f(b, c)", '"d, e"', "[g, h]"]
    assert split_top_level('"f" at "g" at "h"', " at ", 1) == ['"f"', '"g" at "h"']
    assert split_top_level("no separator", ",") == ["no separator"]


def test_donors_are_the_entry_parameters_whose_buffers_the_program_may_reuse():
    stablehlo = ('module @jit_f {\n  func.func public @main(%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: '
                 'tensor<2x2xf32>, %arg2: tensor<3xf32> {jax.buffer_donor = true}) -> (tensor<3xf32>) {\n')
    assert donors(stablehlo, "stablehlo") == (3, frozenset({0, 2}))
    hlo = ("HloModule jit_f, input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (2, {}) }, "
           "entry_computation_layout={(f32[3]{0}, f32[2,2]{1,0}, f32[3]{0})->(f32[3]{0}, f32[])}\n")
    assert donors(hlo, "hlo") == (3, frozenset({0, 2}))
    assert donors("HloModule m, entry_computation_layout={()->f32[]}\n", "hlo") == (0, frozenset())
    assert donors("module @m {\n}", "stablehlo") is None
