"""The tour notebook, executed in a real kernel, exported to HTML and opened in a real browser.

``notebooks/tour.ipynb`` runs under nbclient, is exported twice with nbconvert's ``HTMLExporter``
(as is, and with ``sanitize_html=True``), and both files are written to ``artifacts/``. The
structural checks need no browser. The browser checks open each file in Debian's Chromium through
Playwright, with every non-``file:`` request aborted and recorded, and save screenshots next to
the HTML. They are skipped, with the reason, where Chromium is missing or will not start; no
``playwright install`` happens here.
"""

from __future__ import annotations

import html.parser
import pathlib
import shutil

import nbformat
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
TOUR = REPO / "notebooks" / "tour.ipynb"
ARTIFACTS = REPO / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FORBIDDEN_TAGS = {"script", "link", "iframe", "img", "object", "embed"}
FORBIDDEN_TEXT = ("url(", "@import", "src=", "href=", "javascript:")


@pytest.fixture(scope="module")
def tour():
    """The executed tour notebook and its two HTML exports, written under ``artifacts/``."""
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = nbformat.read(TOUR, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(TOUR.parent)}}).execute()
    ARTIFACTS.mkdir(exist_ok=True)
    paths = {}
    for name, options in (("tour.html", {}), ("tour-sanitized.html", {"sanitize_html": True})):
        body, _ = HTMLExporter(**options).from_notebook_node(notebook)
        paths[name] = ARTIFACTS / name
        paths[name].write_text(body, encoding="utf-8")
    return notebook, paths


def _jaxshow_outputs(notebook) -> list[str]:
    return [
        output["data"]["text/html"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", ())
        if "text/html" in output.get("data", {}) and 'class="jaxshow"' in output["data"]["text/html"]
    ]


class _Structure(html.parser.HTMLParser):
    """Top-level elements, every tag name, and the classes seen, of one HTML fragment."""

    VOID = {"br", "hr", "img", "input", "meta", "link", "col", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.roots: list[tuple[str, str]] = []
        self.tags: list[str] = []
        self.closed_details = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append(tag)
        if self.depth == 0:
            self.roots.append((tag, attributes.get("class") or ""))
        if tag == "details" and "open" not in attributes:
            self.closed_details += 1
        if tag not in self.VOID:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag not in self.VOID:
            self.depth -= 1


def test_every_jaxshow_output_is_one_self_contained_root(tour):
    notebook, paths = tour
    outputs = _jaxshow_outputs(notebook)
    assert len(outputs) >= 10, "the tour shows a report in each %%jaxstages cell and for jaxshow.stages"
    for fragment in outputs:
        parsed = _Structure()
        parsed.feed(fragment)
        parsed.close()
        assert parsed.roots == [("div", "jaxshow")]
        assert parsed.depth == 0, "unbalanced tags"
        assert not FORBIDDEN_TAGS & set(parsed.tags)
        assert parsed.tags.count("style") == 1
        for text in FORBIDDEN_TEXT:
            assert text not in fragment
    exported = paths["tour.html"].read_text(encoding="utf-8")
    assert exported.count('class="jaxshow"') == len(outputs)


# --- the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium); the browser test needs a real Chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.skip(f"the playwright package is not installed: {exc}")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Exception as exc:  # noqa: BLE001 - any launch failure is a reason to skip
            pytest.skip(f"playwright could not launch {executable}: {str(exc).splitlines()[0]}")
        yield launched
        launched.close()


class _Page:
    """A page on a local file, with outside requests aborted and console errors recorded."""

    def __init__(self, browser, path: pathlib.Path) -> None:
        self.blocked: list[str] = []
        self.console_errors: list[tuple[str, str]] = []
        self.page_errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.page.route("**/*", self._route)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        self.page.goto(path.as_uri(), wait_until="load")

    def _route(self, route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _console(self, message) -> None:
        if message.type == "error":
            self.console_errors.append((message.text, (message.location or {}).get("url", "")))


def _assert_outside_traffic_is_the_templates(page: _Page, exported: str, roots_html: list[str]) -> None:
    """Every blocked request and console error belongs to nbconvert's template, none to jaxshow."""
    for url in page.blocked:
        assert url.split("?")[0] in exported, f"request from nowhere in the page: {url}"
        assert not any(url.split("?")[0] in root for root in roots_html), f"jaxshow output requested {url}"
    for text, url in page.console_errors:
        blocked = url and any(url.split("?")[0] == b.split("?")[0] for b in page.blocked)
        failed_load = "Failed to load resource" in text or "ERR_FAILED" in text
        assert blocked or failed_load, f"console error not caused by a blocked template request: {text} at {url}"
    for error in page.page_errors:
        assert "jaxshow" not in error, error


@pytest.mark.browser
def test_reports_render_and_fold_open_in_chromium(tour, browser):
    _, paths = tour
    view = _Page(browser, paths["tour.html"])
    page = view.page
    roots = page.locator("div.jaxshow")
    assert roots.count() >= 10
    first = roots.first
    first.scroll_into_view_if_needed()
    assert first.is_visible()
    assert "train_step" in first.inner_text()
    assert "② Traced" in first.inner_text()
    first.screenshot(path=str(ARTIFACTS / "tour-first-report.png"))

    lowered = first.locator("details.js-station", has=page.locator("summary", has_text="③ Lowered")).first
    assert lowered.evaluate("d => d.open") is False
    code = lowered.locator("pre.js-code").first
    assert not code.is_visible()
    lowered.locator("summary").first.click()
    assert lowered.evaluate("d => d.open") is True
    module = lowered.locator("details", has=page.locator("summary", has_text="StableHLO")).first
    if not module.evaluate("d => d.open"):
        module.locator("summary").first.click()
    assert module.evaluate("d => d.open") is True
    assert code.is_visible()
    colours = code.evaluate(
        """pre => {
            const base = getComputedStyle(pre).color;
            return [...pre.querySelectorAll('b, i')].map(s => getComputedStyle(s).color).filter(c => c !== base);
        }"""
    )
    assert len(set(colours)) >= 3, "the StableHLO should be highlighted in several colours"
    looks = code.evaluate(
        """pre => { const a = getComputedStyle(pre), b = getComputedStyle(pre.querySelector('code'));
                    return [a.whiteSpace, b.whiteSpace, a.backgroundColor, b.backgroundColor]; }"""
    )
    assert looks[0] == looks[1] == "pre", "long IR lines must scroll, not wrap (the template styles <code> with pre-wrap)"
    assert looks[3] == "rgba(0, 0, 0, 0)", "the <code> must not paint the theme's code background over the <pre>"
    lowered.scroll_into_view_if_needed()
    lowered.screenshot(path=str(ARTIFACTS / "tour-lowered-opened.png"))

    failed = roots.filter(has_text="TracerBoolConversionError").first
    assert failed.is_visible()
    failed.screenshot(path=str(ARTIFACTS / "tour-failed-call.png"))

    exported = paths["tour.html"].read_text(encoding="utf-8")
    _assert_outside_traffic_is_the_templates(view, exported, roots.evaluate_all("rs => rs.map(r => r.outerHTML)"))
    page.close()


@pytest.mark.browser
def test_sanitized_export_stays_legible_in_chromium(tour, browser):
    _, paths = tour
    view = _Page(browser, paths["tour-sanitized.html"])
    page = view.page
    roots = page.locator("div.jaxshow")
    assert roots.count() >= 10
    first = roots.first
    first.scroll_into_view_if_needed()
    text = first.inner_text()
    for expected in ("train_step", "① jax.jit wrapper", "② Traced", "③ Lowered", "④ Compiled", "params['layer0']['w']", "f32[16,32]"):
        assert expected in text
    code = first.locator("pre.js-code").first
    assert code.is_visible()
    assert "dot_general" in code.inner_text()
    font_family, font_size, colour, background, white_space = code.locator("code").evaluate(
        "c => { const s = getComputedStyle(c); return [s.fontFamily, s.fontSize, s.color, s.backgroundColor, s.whiteSpace]; }"
    )
    assert "mono" in font_family.lower(), f"code is not in a monospace font: {font_family}"
    assert float(font_size.removesuffix("px")) >= 10
    assert colour != background
    assert white_space.startswith("pre"), "line breaks of the IR must survive"
    for root_text in roots.evaluate_all("rs => rs.map(r => r.innerText)"):
        for rule in (".jaxshow", "--js-", "font-family", "{color:"):
            assert rule not in root_text, f"the stylesheet shows as text ({rule!r}): the sanitiser escaped <style>"
    assert _lowest_contrast(code.locator("code").evaluate_all(EFFECTIVE_COLOURS)) >= 4.5
    x, y, width, height = first.evaluate("e => { const r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }")
    page.screenshot(
        path=str(ARTIFACTS / "tour-sanitized-first-report.png"),
        full_page=True,
        clip={"x": x, "y": y, "width": width, "height": min(height, 1400)},
    )
    exported = paths["tour-sanitized.html"].read_text(encoding="utf-8")
    _assert_outside_traffic_is_the_templates(view, exported, roots.evaluate_all("rs => rs.map(r => r.outerHTML)"))
    page.close()


# --- themes: every colour readable on its background -------------------------------------------

VSCODE_DARK = {  # VS Code's "Dark Modern" values for the variables the stylesheet reads
    "--vscode-editor-background": "#1f1f1f",
    "--vscode-editor-foreground": "#cccccc",
    "--vscode-debugTokenExpression-name": "#c586c0",
    "--vscode-debugTokenExpression-string": "#ce9178",
    "--vscode-symbolIcon-functionForeground": "#b180d7",
    "--vscode-textLink-foreground": "#4daafc",
}
CONTRAST_PROBES = {
    "head": ".js-head",
    "summary": "summary",
    "muted": ".js-muted",
    "table cell": "table.js-table td",
    "note": ".js-note",
    "error": ".js-error",
    "code": "pre.js-code code",
    "op": "pre.js-code b:not([class])",
    "type": "pre.js-code i:not([class])",
    "keyword": "pre.js-code b.k",
    "symbol": "pre.js-code b.f",
    "comment": "pre.js-code i.c",
}
EFFECTIVE_COLOURS = """els => els.map(e => {
    const chain = [];
    let opacity = 1;
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
        const s = getComputedStyle(n);
        chain.push(s.backgroundColor);
        opacity *= parseFloat(s.opacity);
    }
    return {fg: getComputedStyle(e).color, backgrounds: chain, opacity};
})"""


def _rgba(css: str) -> tuple[float, float, float, float]:
    values = [float(v) for v in css[css.index("(") + 1 : css.index(")")].replace("/", ",").replace(" ", ",").split(",") if v]
    return (*values[:3], values[3] if len(values) > 3 else 1.0)


def _over(top: tuple[float, ...], below: tuple[float, float, float]) -> tuple[float, float, float]:
    alpha = top[3]
    return tuple(top[i] * alpha + below[i] * (1 - alpha) for i in range(3))


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: tuple[float, float, float], bg: tuple[float, float, float]) -> float:
    """WCAG 2 contrast ratio of two opaque colours."""
    high, low = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _ratios(page) -> dict[str, float]:
    """The lowest contrast of each probe's text on what is painted behind it (backgrounds and opacity composited)."""
    page.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")
    worst = {}
    for name, selector in CONTRAST_PROBES.items():
        found = page.locator(f"div.jaxshow {selector}").evaluate_all(EFFECTIVE_COLOURS)
        assert found, f"nothing matches {selector}"
        worst[name] = _lowest_contrast(found)
    return worst


def _lowest_contrast(found: list[dict]) -> float:
    """The lowest contrast among elements measured by ``EFFECTIVE_COLOURS``."""
    lowest = 99.0
    for item in found:
        backdrop = (255.0, 255.0, 255.0)  # the canvas
        for layer in reversed(item["backgrounds"]):
            backdrop = _over(_rgba(layer), backdrop)
        text = _over((*_rgba(item["fg"])[:3], _rgba(item["fg"])[3] * item["opacity"]), backdrop)
        lowest = min(lowest, contrast(text, backdrop))
    return lowest


def _theme_page(name: str, head_css: str = "", body_style: str = "") -> pathlib.Path:
    """A page holding one rendered report (hand-built: no JAX), under ``artifacts/``."""
    from test_render import _report

    from jaxshow import render
    from jaxshow.report import ErrorSummary, LoweredStation

    module = "\n".join([
        "module @jit_step attributes {mhlo.num_partitions = 1 : i32} {",
        "  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>) {",
        '    %0 = stablehlo.sine %arg0 : tensor<3xf32> loc(#loc2)  // the sine',
        "    return %0 : tensor<3xf32>",
        "  }",
        "}",
    ])
    report = _report(
        notes=("a note about this call",),
        error=ErrorSummary("ValueError", "an error, shown tinted", "compile"),
        lowered=LoweredStation("stablehlo", module, False, None, "not reported here"),
    )
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"theme-{name}.html"
    path.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{head_css}</style></head>"
        f"<body style='{body_style}'>{render.to_html(report)}</body></html>",
        encoding="utf-8",
    )
    return path


def _lab_theme(name: str) -> str:
    """JupyterLab's CSS and one of its themes, as nbconvert's lab template ships them."""
    from jupyter_core.paths import jupyter_path

    for directory in jupyter_path("nbconvert", "templates", "lab", "static"):
        css = pathlib.Path(directory) / f"theme-{name}.css"
        if css.exists():
            return (css.parent / "index.css").read_text(encoding="utf-8") + css.read_text(encoding="utf-8")
    pytest.skip(f"nbconvert's lab template has no theme-{name}.css here")


@pytest.mark.browser
@pytest.mark.parametrize(
    "theme, scheme",
    [("default", "light"), ("default", "dark"), ("jupyterlab-light", "dark"), ("jupyterlab-dark", "light"), ("vscode-dark", "light")],
    ids=lambda v: v,
)
def test_every_text_colour_reaches_wcag_aa_in_each_theme(browser, theme, scheme):
    """Light and dark, from the front end's variables or the colour scheme: text, notes and every token ≥ 4.5:1.

    The JupyterLab themes are nbconvert's copies of JupyterLab's own; each is tried under the
    opposite OS colour scheme, since the theme, not the OS, sets the notebook's colours.
    """
    if theme.startswith("jupyterlab"):
        path = _theme_page(theme, _lab_theme(theme.split("-")[1]), "background: var(--jp-layout-color0)")
    elif theme == "vscode-dark":
        variables = "".join(f"{k}: {v};" for k, v in VSCODE_DARK.items())
        path = _theme_page(theme, f":root {{ {variables} }}", "background: var(--vscode-editor-background)")
    else:
        path = _theme_page(f"{theme}-{scheme}")
    page = browser.new_page(viewport={"width": 1000, "height": 1200}, color_scheme=scheme)
    page.goto(path.as_uri(), wait_until="load")
    ratios = _ratios(page)
    root = page.locator("div.jaxshow").first
    root.screenshot(path=str(ARTIFACTS / f"theme-{theme}-{scheme}.png"))
    background = _rgba(root.evaluate("e => getComputedStyle(e).backgroundColor"))
    page.close()
    dark = _luminance(background[:3]) < 0.2
    assert dark == (theme.endswith("dark") or (theme == "default" and scheme == "dark")), f"the report is not in the {theme} theme's colours"
    low = {name: round(ratio, 2) for name, ratio in ratios.items() if ratio < 4.5}
    assert not low, f"below WCAG AA (4.5:1) in {theme}/{scheme}: {low}"


# --- long names and values wrap inside the report ----------------------------------------------

LONG_NAMES = """
import jax, jax.numpy as jnp
from functools import partial

@partial(jax.jit, static_argnums=1)
def scale_the_inputs_by_a_mode_with_a_name_long_enough_to_need_more_than_one_line_in_a_narrow_notebook_column(v, mode):
    return v * 2

x = jnp.ones(3)
y = scale_the_inputs_by_a_mode_with_a_name_long_enough_to_need_more_than_one_line_in_a_narrow_notebook_column(x, "<b>&" + "z" * 200)
"""
OUTSIDE_THE_ROOT = """root => {
    const right = root.getBoundingClientRect().right;
    const scrolls = e => { for (let p = e.parentElement; p && p !== root; p = p.parentElement) {
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
    return [...root.querySelectorAll('*')].filter(e => e.getBoundingClientRect().width > 0 && !scrolls(e)
        && e.getBoundingClientRect().right > right + 1).map(e => `${e.tagName}: ${e.textContent.slice(0, 60)}`);
}"""


@pytest.mark.browser
def test_a_long_function_name_and_static_value_wrap_inside_a_narrow_report(browser, ip):
    """A %%jaxcache report at a 600-pixel page, of a function with a 103-character name whose static string argument
    changed (200 characters each time): the function table, the miss's line and its where/now/before table ran past
    the report's border, the 'before' column out of sight. A long word now breaks in its cell or line (a soft wrap:
    copied text stays whole); only code scrolls in its box."""
    from shellrun import run_captured

    assert ip.run_cell(LONG_NAMES).success
    call = LONG_NAMES.strip().splitlines()[-1].replace('"z"', '"y"')
    result, cap = run_captured(ip, "%%jaxcache\n" + call)
    assert result.success, result.error_in_exec
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "long-names-600.html"
    path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{cap.outputs[-1].data['text/html']}</body></html>",
                    encoding="utf-8")
    page = browser.new_page(viewport={"width": 600, "height": 900})
    page.goto(path.as_uri(), wait_until="load")
    page.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")
    root = page.locator("div.jaxshow").first
    outside = root.evaluate(OUTSIDE_THE_ROOT)
    root.screenshot(path=str(ARTIFACTS / "long-names-600.png"))
    page.close()
    assert outside == []
