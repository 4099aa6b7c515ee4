"""Scanning IR text: brackets and quoted strings balanced."""

from __future__ import annotations

from jaxshow.irtext import closing, split_top_level


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
