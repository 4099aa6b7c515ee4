"""Rendering cost and size: a real transformer-ish model, a 10 MB module, 10,000 argument leaves.

Real-model modules reach 1-12 MB of optimised HLO (shared/peers.md §5.1).

1. ``--layers`` (12): the gradient of a transformer-ish loss with that many
   layers (149 parameter leaves), through ``jaxshow.stages``: bytes of HTML per
   byte of text, highlighted elements, ``&#x27;`` escapes, with the default
   budget and with no line limit.
2. ``--megabytes`` (10): a report from a real module, repeated up to the target
   size, timed in both forms with the default budgets (every IR text is stored
   whole; at most ``max_lines`` lines of each are shown, highlighted). With
   ``--browser``, the same report with no line limit is opened in Chromium and
   the optimised HLO's section is unfolded, timed.
3. ``--leaves`` (10,000): the same report with that many argument leaves and input
   placements (a large pytree of parameters); each table shows at most ``max_rows``.

    COLUMNS=100 python benchmarks/render_scale.py [--layers 12] [--megabytes 10] [--leaves 10000] [--browser]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import shutil
import tempfile
import time

import jax
import jax.numpy as jnp

import jaxshow
from jaxshow import render
from jaxshow.report import ArgSpec, PlacementSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--leaves", type=int, default=10_000)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--browser", action="store_true", help="time unfolding the big module in headless Chromium")
    args = parser.parse_args()

    model_sizes(args.layers)

    @jax.jit
    def block(x, w):
        for _ in range(8):
            x = jnp.tanh(x @ w) + x
        return jnp.sum(x**2)

    small = jaxshow.stages(block, jnp.ones((64, 128)), jnp.ones((128, 128)))
    unit = small.compiled.optimized_hlo_text
    big = unit * max(1, int(args.megabytes * 1e6 / len(unit)))
    report = dataclasses.replace(small, compiled=dataclasses.replace(small.compiled, optimized_hlo_text=big))

    start = time.perf_counter()
    page = render.to_html(report)
    html_seconds = time.perf_counter() - start
    start = time.perf_counter()
    text = render.to_text(report)
    text_seconds = time.perf_counter() - start
    print(f"optimised HLO on the record: {len(big) / 1e6:.1f} MB, {big.count(chr(10)):,} lines")
    print(f"HTML: {html_seconds * 1e3:.0f} ms, {len(page) / 1e3:.0f} kB ({len(page) / len(big):.3f} of the text)")
    print(f"text: {text_seconds * 1e3:.0f} ms, {len(text) / 1e3:.0f} kB")
    print(f"shown: {render.TextBudget().max_lines} lines per IR text; the rest is named in a footer")
    if args.browser:
        unfold_in_chromium(report)

    paths = [f"params['layer_{i}']['w']" for i in range(args.leaves)]
    leaves = dataclasses.replace(
        small,
        traced=dataclasses.replace(small.traced, args=tuple(ArgSpec(p, (128, 256), "float32", sharding="SingleDeviceSharding(cpu:0)") for p in paths)),
        compiled=dataclasses.replace(small.compiled, inputs=tuple(PlacementSpec(p, "SingleDeviceSharding(cpu:0)", "{1,0}") for p in paths)),
    )
    start = time.perf_counter()
    page = render.to_html(leaves)
    html_seconds = time.perf_counter() - start
    start = time.perf_counter()
    text = render.to_text(leaves)
    text_seconds = time.perf_counter() - start
    print(f"{args.leaves:,} argument leaves and input placements, {render.TextBudget().max_rows} rows shown per table:")
    print(f"HTML: {html_seconds * 1e3:.0f} ms, {len(page) / 1e3:.0f} kB; text: {text_seconds * 1e3:.0f} ms, {len(text) / 1e3:.0f} kB")


def transformer_params(layers: int, d: int = 64, hidden: int = 256, vocab: int = 512) -> dict:
    ones, zeros = jnp.ones, jnp.zeros
    params = {"embed": zeros((vocab, d)), "pos": zeros((128, d)), "final_ln": {"scale": ones((d,)), "bias": zeros((d,))}}
    for i in range(layers):
        params[f"layer{i}"] = {
            "attn": {name: zeros((d, d)) for name in ("wq", "wk", "wv", "wo")},
            "ln1": {"scale": ones((d,)), "bias": zeros((d,))},
            "ln2": {"scale": ones((d,)), "bias": zeros((d,))},
            "mlp": {"w1": zeros((d, hidden)), "b1": zeros((hidden,)), "w2": zeros((hidden, d)), "b2": zeros((d,))},
        }
    return params


def model_sizes(layers: int) -> None:
    """HTML and text of a real model's report: the ratio the issue measured (2.17x to 2.36x before)."""

    def norm(p, x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * p["scale"] + p["bias"]

    def loss(params, tokens):
        x = params["embed"][tokens] + params["pos"][: tokens.shape[1]]
        for i in range(layers):
            p = params[f"layer{i}"]
            h = norm(p["ln1"], x)
            q, k, v = (h @ p["attn"][name] for name in ("wq", "wk", "wv"))
            x = x + (jax.nn.softmax(q @ k.transpose(0, 2, 1) / 8.0, axis=-1) @ v) @ p["attn"]["wo"]
            h = norm(p["ln2"], x)
            x = x + jax.nn.gelu(h @ p["mlp"]["w1"] + p["mlp"]["b1"]) @ p["mlp"]["w2"] + p["mlp"]["b2"]
        return jnp.mean(norm(params["final_ln"], x) @ params["embed"].T)

    report = jaxshow.stages(jax.jit(jax.value_and_grad(loss)), transformer_params(layers), jnp.zeros((4, 32), jnp.int32))
    print(f"{layers}-layer transformer gradient: {len(report.traced.args)} inputs, optimised HLO "
          f"{len(report.compiled.optimized_hlo_text) / 1e6:.1f} MB")
    for label, budget in (("default budget", render.TextBudget()), ("no line limit", render.TextBudget(max_lines=0))):
        start = time.perf_counter()
        page = render.to_html(report, budget).encode()
        html_seconds = time.perf_counter() - start
        text = render.to_text(report, budget).encode()
        marks = len(re.findall(rb"<(?:span|b|i)[ >]", page))
        print(f"  {label}: HTML {len(page) / 1e3:,.0f} kB ({html_seconds * 1e3:.0f} ms), text {len(text) / 1e3:,.0f} kB, "
              f"HTML/text {len(page) / len(text):.2f}; {marks:,} highlight elements, {page.count(b'&#x27;'):,} &#x27;")


def unfold_in_chromium(report) -> None:
    """Seconds Chromium takes to load the whole report (no line limit) and to unfold the optimised HLO."""
    executable = shutil.which("chromium")
    if executable is None:
        print("browser: no chromium on PATH")
        return
    from playwright.sync_api import sync_playwright

    page_html = render.to_html(report, render.TextBudget(max_lines=0))
    with tempfile.TemporaryDirectory() as directory, sync_playwright() as playwright:
        path = pathlib.Path(directory) / "big.html"
        path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{page_html}</body></html>", encoding="utf-8")
        browser = playwright.chromium.launch(executable_path=executable, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load")
        loaded = time.perf_counter() - start
        unfold = """s => { const t = performance.now();
            s.closest('details.js-station').open = true; s.parentElement.open = true;
            const first = s.parentElement.querySelector('details'); if (first) first.open = true;
            document.body.offsetHeight; return (performance.now() - t) / 1e3; }"""
        seconds = page.locator("summary", has_text="optimised HLO —").first.evaluate(unfold)
        browser.close()
    print(f"browser: {len(page_html) / 1e6:.1f} MB page loaded in {loaded:.2f} s; optimised HLO and its first piece unfolded in {seconds:.2f} s")


if __name__ == "__main__":
    main()
