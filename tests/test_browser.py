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
            return [...pre.querySelectorAll('span')].map(s => getComputedStyle(s).color).filter(c => c !== base);
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
    x, y, width, height = first.evaluate("e => { const r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }")
    page.screenshot(
        path=str(ARTIFACTS / "tour-sanitized-first-report.png"),
        full_page=True,
        clip={"x": x, "y": y, "width": width, "height": min(height, 1400)},
    )
    exported = paths["tour-sanitized.html"].read_text(encoding="utf-8")
    _assert_outside_traffic_is_the_templates(view, exported, roots.evaluate_all("rs => rs.map(r => r.outerHTML)"))
    page.close()
