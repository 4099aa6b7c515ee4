"""``%%jaxstages --source``: the user's source lines linked to the jaxpr, StableHLO and optimised HLO lines they made.

Real shells and real JAX; the HTML is also checked in headless Chromium (hover and click a line,
the lit lines are exactly those with its label, computed from the record).
"""

from __future__ import annotations

import html.parser
import os
import re
import sysconfig

import jax
import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError
from shellrun import run_captured
from test_browser import ARTIFACTS, browser  # noqa: F401  (the module-scoped Chromium fixture)

import jaxshow
from jaxshow import _jax_compat, render
from jaxshow.capture import linked
from jaxshow.render.linked import linked_html, linked_text
from jaxshow.report import LinkedIR, LinkedViews, SourceText

DEFINE = """\
def f(x):
    y = x * 2
    z = jnp.sin(y)
    return jnp.cos(z) + y
f = jax.jit(f)
"""
EXPECTED_SOURCE = ("def f(x):", "    y = x * 2", "    z = jnp.sin(y)", "    return jnp.cos(z) + y", "f = jax.jit(f)")
# The op each source line makes, as each IR spells it.
OPS = {
    "jaxpr": {"In[2]:2": [" = mul "], "In[2]:3": [" = sin "], "In[2]:4": [" = cos ", " = add "]},
    "StableHLO": {"In[2]:2": ["stablehlo.multiply "], "In[2]:3": ["stablehlo.sine "],
                  "In[2]:4": ["stablehlo.cosine ", "stablehlo.add "]},
}


def _setup(ip, extra: str = "") -> None:
    for cell in ("import jax, jax.numpy as jnp\nx = jnp.ones(3)" + extra, DEFINE):
        result, _ = run_captured(ip, cell)
        assert result.success, result.error_in_exec


def _labelled(ir: LinkedIR) -> dict[str, str]:
    """IR line text -> its label, for the labelled lines."""
    return {text: label for text, label in zip(ir.lines, ir.sources) if label is not None}


def _linked_report(ip, line: str = "--source"):
    _setup(ip)
    result, cap = run_captured(ip, f"%%jaxstages {line} -o rep\nout = f(x)")
    assert result.success and ip.execution_count == 4
    return ip.user_ns["rep"].reports[0], cap


def test_each_ir_line_carries_the_source_line_that_made_it(ip):
    report, _ = _linked_report(ip)
    linked = report.linked
    assert linked.sources == (SourceText("In[2]", 1, EXPECTED_SOURCE),)
    assert [ir.title for ir in linked.irs] == ["jaxpr", "StableHLO", "optimised HLO"]
    jaxpr, stablehlo, hlo = linked.irs
    for ir in (jaxpr, stablehlo):
        labelled = _labelled(ir)
        assert set(labelled.values()) == {"In[2]:2", "In[2]:3", "In[2]:4"}
        for label, ops in OPS[ir.title].items():
            for op in ops:
                assert [lab for text, lab in labelled.items() if op in text] == [label], (ir.title, op)
    assert sum(1 for label in jaxpr.sources if label) == 4  # mul, sin, cos, add: one line each
    labelled = _labelled(hlo)
    for op, label in (("multiply(", "In[2]:2"), ("sine(", "In[2]:3"), ("cosine(", "In[2]:4")):
        assert {lab for text, lab in labelled.items() if f" {op}" in text} == {label}, op
    assert set(labelled.values()) <= {"In[2]:2", "In[2]:3", "In[2]:4"}
    # locations are folded into the labels, never printed raw
    assert not any("metadata=" in t or "stack_frame_id" in t for t in hlo.lines)
    assert not any(t in ("FileNames", "StackFrames", "FileLocations") for t in hlo.lines)
    assert not any(" loc(" in t or t.startswith("#loc") for t in stablehlo.lines)
    assert not any(re.search(r"# .*:\d+", t) for t in jaxpr.lines)
    # the report's own stations are unchanged by --source
    assert report.compiled.optimized_hlo_text and "metadata=" in report.compiled.optimized_hlo_text


def test_text_form_puts_the_label_beside_each_line(ip):
    report, cap = _linked_report(ip)
    text = cap.outputs[0].data["text/plain"]
    jaxpr_text = "\n".join(report.linked.irs[0].lines)
    sin_line = next(t for t in report.linked.irs[0].lines if " = sin " in t)
    assert "⇄ Linked views: each line after the source line that made it" in text
    assert "\n  source In[2]:\n    In[2]:1  def f(x):\n    In[2]:2      y = x * 2\n    In[2]:3      z = jnp.sin(y)\n" in text
    assert f"\n    In[2]:3  {sin_line}\n" in text
    assert "\n  jaxpr:\n             { lambda ; a:f32[3]. let\n" in text and jaxpr_text.startswith("{ lambda ; a:f32[3]. let")
    assert "metadata=" not in text.split("⇄ Linked views")[1]


def test_with_debug_info_the_linked_view_reads_the_lowered_stations_own_located_text(ip, monkeypatch):
    import jax._src.stages as jax_stages

    asked = []
    original = jax_stages.Lowered.as_text
    monkeypatch.setattr(jax_stages.Lowered, "as_text", lambda self, *a, **k: asked.append((a, k)) or original(self, *a, **k))
    report, _ = _linked_report(ip, "--source --debug-info")
    assert asked == [(("stablehlo",), {"debug_info": True})]  # once, for the Lowered station; the view reuses it
    assert {label for label in report.linked.irs[1].sources if label} == {"In[2]:2", "In[2]:3", "In[2]:4"}


def test_without_source_there_is_no_linked_view_and_the_config_option_turns_it_on(ip):
    _setup(ip)
    run_captured(ip, "%%jaxstages -o plain\nout = f(x)")
    assert ip.user_ns["plain"].reports[0].linked is None
    ip.run_line_magic("config", "StagesMagics.source = True")
    result, cap = run_captured(ip, "%%jaxstages -o configured\nout2 = f(x)")
    assert result.success
    linked = ip.user_ns["configured"].reports[0].linked
    assert linked is not None and linked.sources[0].name == "In[2]"
    assert "⇄ Linked views" in cap.outputs[0].data["text/plain"]
    assert (ip.user_ns["out2"] == ip.user_ns["out"]).all()


def test_source_is_listed_in_the_usage_and_a_bad_value_is_a_usage_error(ip):
    assert "--source" in ip.find_cell_magic("jaxstages").__doc__
    with pytest.raises(UsageError, match="--source"):
        ip.run_cell_magic("jaxstages", "--source=yes", "sentinel = 1")
    assert "sentinel" not in ip.user_ns


def test_library_frames_are_skipped_and_user_files_are_named(ip, tmp_path, monkeypatch):
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "tinylib.py").write_text("def double(v):\n    return v * 2\n")
    (tmp_path / "mymodel.py").write_text("import jax.numpy as jnp\n\n\ndef squash(v):\n    return jnp.tanh(v)\n")
    monkeypatch.syspath_prepend(str(library))
    monkeypatch.syspath_prepend(str(tmp_path))
    _setup(ip, "\nimport tinylib, mymodel")
    result, _ = run_captured(ip, "%%jaxstages --source -o rep\ng = jax.jit(lambda v: mymodel.squash(tinylib.double(v)))\nout = g(x)")
    assert result.success
    linked = ip.user_ns["rep"].reports[0].linked
    labelled = _labelled(linked.irs[0])
    assert [lab for t, lab in labelled.items() if " = mul " in t] == ["In[3]:2"]  # the user's line, not tinylib.py:2
    mymodel = str(tmp_path / "mymodel.py")  # the record keeps the path whole; the report shortens it
    assert [lab for t, lab in labelled.items() if " = tanh " in t] == [f"{mymodel}:5"]
    assert [s.name for s in linked.sources] == ["In[3]", mymodel]
    assert linked.sources[1] == SourceText(mymodel, 5, ("    return jnp.tanh(v)",))
    assert not any("tinylib" in (lab or "") for ir in linked.irs for lab in ir.sources)


def test_stages_with_source_links_ahead_of_time(tmp_path, monkeypatch):
    (tmp_path / "aotmodel.py").write_text("import jax.numpy as jnp\n\n\ndef h(v):\n    w = v + 1\n    return jnp.exp(w)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import aotmodel

    report = jaxshow.stages_with(source=True)(jax.jit(aotmodel.h), jnp.ones(2))
    jaxpr, stablehlo, hlo = report.linked.irs
    where = str(tmp_path / "aotmodel.py")
    assert set(_labelled(jaxpr).values()) == set(_labelled(stablehlo).values()) == {f"{where}:5", f"{where}:6"}
    assert [lab for t, lab in _labelled(stablehlo).items() if "stablehlo.exponential " in t] == [f"{where}:6"]
    assert report.linked.sources == (SourceText(where, 5, ("    w = v + 1", "    return jnp.exp(w)")),)
    assert jaxshow.stages(jax.jit(aotmodel.h), jnp.ones(2)).linked is None


def test_equation_frames_shim_gives_the_users_line_innermost_first(tmp_path, monkeypatch):
    (tmp_path / "framemodel.py").write_text("def k(v):\n    return v * 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import framemodel

    (eqn,) = jax.make_jaxpr(framemodel.k)(1.0).jaxpr.eqns
    frames = _jax_compat.equation_frames(eqn)
    user = [f for f in frames if f[0].endswith("framemodel.py")]
    assert user == [(str(tmp_path / "framemodel.py"), 2)]
    assert frames[0][0].startswith(_jax_compat.JAX_DIR)  # innermost first: JAX's bind, then the user's line
    assert next(f for f in frames if not f[0].startswith(_jax_compat.JAX_DIR)) == user[0]


# --- rendering from hand-built records ----------------------------------------------------------

HOSTILE = LinkedViews(
    sources=(SourceText("In[7]", 1, ("x = '</pre><script>alert(1)</script>'", "y = x & 2")),),
    irs=(LinkedIR("jaxpr", ("{ lambda ; a:f32[]. let", "    b:f32[] = mul a 2.0", "  in (b,) }"), (None, "In[7]:2", None), "report.linked.irs[0]"),),
)


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_is_escaped_self_contained_and_css_only():
    out = linked_html(HOSTILE, render.DEFAULT_BUDGET)
    assert "<script>" not in out and "&lt;/pre>&lt;script>" in out
    parser = _Tags()
    parser.feed(out)
    lines = [a for t, a in parser.tags if t == "span" and "tabindex" in a]
    assert [(a["class"], a["tabindex"]) for a in lines] == [("js-s0 js-c0", "-1"), ("js-s1 js-c1", "-1"), ("js-s1 js-c1", "-1")]
    # only tags a strict sanitiser keeps (nbconvert's --sanitize-html escapes the others into text), and the <style>
    assert {t for t, _ in parser.tags} == {"div", "span", "b", "pre", "code", "style"}
    assert not any("id" in a for _, a in parser.tags)
    assert all(word not in out for word in ("url(", "@import", "src=", "href=", "javascript:"))
    assert "In[7]:2  " in out  # the label is text: legible with styles stripped


def test_a_files_label_is_shown_without_terminal_escapes_or_bidi_overrides():
    # A function compiled from a file named '/tmp/m\x1b[31m\u202e.py' (exec(compile(src, name, 'exec'))) had its --source
    # labels written as the name was: the escape turned the terminal red and the override reversed the rest of the line.
    name = "/tmp/m\x1b[31m\u202e.py"
    views = LinkedViews(sources=(SourceText(name, 1, ("y = v * 2",)),),
                        irs=(LinkedIR("jaxpr", ("{ lambda ; a:f32[]. let", "  in (b,) }"), (None, f"{name}:1"), "report.linked.irs[0]"),))
    text, page = linked_text(views, render.DEFAULT_BUDGET), linked_html(views, render.DEFAULT_BUDGET)
    for out in (text, page):
        assert "\x1b" not in out and "\u202e" not in out
    assert text.splitlines() == ["  source /tmp/m.py:", "    /tmp/m.py:1  y = v * 2", "  jaxpr:",
                                 "                 { lambda ; a:f32[]. let", "    /tmp/m.py:1    in (b,) }"]


def test_a_labelled_line_costs_at_most_55_bytes_beyond_its_text():
    lines = tuple(f"  %add.{i} = f32[8]{{0}} add(%p.{i}, %q.{i})" for i in range(200))
    views = LinkedViews(sources=(), irs=(LinkedIR("optimised HLO", lines, tuple(f"In[3]:{i % 20 + 1}" for i in range(200)), "a"),))
    out = linked_html(views, render.DEFAULT_BUDGET)
    pre = out[out.index("<pre"):out.index("</pre>")]
    text = sum(len(f"In[3]:{i % 20 + 1}".ljust(8)) + 2 + len(t) + 1 for i, t in enumerate(lines))
    assert (len(pre.encode()) - text) / 200 <= 55


def test_a_users_file_is_shown_under_the_current_folder_or_home_and_a_librarys_as_it_is():
    from jaxshow.render.paths import shown_path

    cwd, home = "/work/proj", "/home/ann"
    assert shown_path("/work/proj/model.py", cwd, home) == "model.py"
    assert shown_path("/work/proj/pkg/layers.py", cwd, home) == "pkg/layers.py"
    assert shown_path("/home/ann/lib/x.py", cwd, home) == "~/lib/x.py"
    assert shown_path("/work/project2/model.py", cwd, home) == "/work/project2/model.py"
    assert shown_path("/work/proj/.venv/lib/python3.12/site-packages/optax/_src/update.py", cwd, home).startswith("/work/proj/")
    assert shown_path("In[3]", cwd, home) == "In[3]"
    assert shown_path("/work/proj/model.py", "", "") == "/work/proj/model.py"


def test_installed_code_under_the_current_folder_or_home_is_shown_as_it_is(tmp_path, monkeypatch):
    """A folder pip installed into ('pip install --target DIR', DIR on sys.path) and the standard library are installed
    code wherever they lie, as capture calls them (one rule, jaxshow.installed): named whole under the current folder
    or home too. A project's own files beside them (an editable install's included) are the user's, and shortened."""
    from jaxshow.capture.sources import is_user_file
    from jaxshow.render.paths import shown_path

    deps = tmp_path / "deps"
    (deps / "deplib-1.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(deps))
    cwd, home = str(tmp_path), "/home/ann"
    library, own = f"{deps}/deplib/core.py", f"{tmp_path}/src/mylib/core.py"
    assert (shown_path(library, cwd, home), is_user_file(library)) == (library, False)
    assert (shown_path(own, cwd, home), is_user_file(own)) == ("src/mylib/core.py", True)
    stdlib = sysconfig.get_paths()["stdlib"]
    assert shown_path(f"{stdlib}/functools.py", os.path.dirname(stdlib), home) == f"{stdlib}/functools.py"


def test_two_model_py_files_get_distinct_labels_in_a_real_shell(ip, tmp_path, monkeypatch):
    for package, op in (("pa", "sin"), ("pb", "cos")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "model.py").write_text(f"import jax.numpy as jnp\n\n\ndef step(v):\n    return jnp.{op}(v)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)  # the report shows a file under the current folder relative to it
    _setup(ip, "\nimport pa.model, pb.model")
    result, cap = run_captured(ip, "%%jaxstages --source -o rep\ng = jax.jit(lambda v: pa.model.step(pb.model.step(v)))\nout = g(x)")
    assert result.success
    linked = ip.user_ns["rep"].reports[0].linked
    assert [s.name for s in linked.sources] == [str(tmp_path / "pb" / "model.py"), str(tmp_path / "pa" / "model.py")]
    labelled = _labelled(linked.irs[0])
    assert [lab for t, lab in labelled.items() if " = sin " in t] == [f"{tmp_path}/pa/model.py:5"]
    assert [lab for t, lab in labelled.items() if " = cos " in t] == [f"{tmp_path}/pb/model.py:5"]
    assert "\n  source pa/model.py:\n    pa/model.py:5      return jnp.sin(v)\n" in cap.outputs[0].data["text/plain"]


def test_text_and_html_keep_to_the_line_budget():
    lines = tuple(f"    v{i} = add v{i - 1} 1" for i in range(30))
    views = LinkedViews(sources=(), irs=(LinkedIR("jaxpr", lines, ("In[1]:1",) * 30, "report.linked.irs[0]"),))
    budget = render.TextBudget(max_lines=10)
    text = linked_text(views, budget)
    assert text.splitlines()[-1] == "    … 20 more lines; all 30 in report.linked.irs[0].lines"
    assert len(text.splitlines()) == 12
    assert linked_html(views, budget).count('tabindex="-1"') == 10


# --- a real browser -----------------------------------------------------------------------------


def _lit(page) -> list[str]:
    """The text of every line drawn lit (outlined), in page order."""
    return page.eval_on_selector_all(
        ".js-linked code > span", "els => els.filter(e => getComputedStyle(e).outlineStyle === 'solid').map(e => e.textContent.trimEnd())")


def _expected(linked: LinkedViews, label: str) -> list[str]:
    """The lines with ``label``, pane by pane, as the page shows them (gutter included)."""
    out = []
    for source in linked.sources:
        width = max(len(source.label(i)) for i in range(len(source.lines)))
        out += [f"{source.label(i).ljust(width)}  {t}".rstrip() for i, t in enumerate(source.lines) if source.label(i) == label]
    for ir in linked.irs:
        width = max(len(lab) for lab in ir.sources if lab)
        out += [f"{lab.ljust(width)}  {t}".rstrip() for lab, t in zip(ir.sources, ir.lines) if lab == label]
    return out


@pytest.mark.browser
def test_hover_and_click_light_exactly_the_linked_lines_in_chromium(ip, browser, tmp_path):
    report, cap = _linked_report(ip)
    linked = report.linked
    page_file = tmp_path / "linked.html"
    page_file.write_text(f"<!doctype html><meta charset=utf-8><body>{cap.outputs[0].data['text/html']}</body>", encoding="utf-8")
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    blocked = []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
               else (blocked.append(route.request.url), route.abort()))
    page.goto(page_file.as_uri())
    page.locator("details.js-station", has_text="Linked views").locator("summary").first.wait_for()
    assert _lit(page) == []
    source_line = page.locator(".js-pane", has_text="source In[2]").locator("[tabindex]", has_text="jnp.sin(y)")
    source_line.hover()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".js-linked").screenshot(path=str(ARTIFACTS / "linked-hover-sin.png"))
    assert _lit(page) == _expected(linked, "In[2]:3")
    assert len(_expected(linked, "In[2]:3")) >= 4  # the source line, and at least one line in each IR
    # click a line of the optimised HLO: the source line and its lines in every IR stay lit after the mouse leaves
    page.locator(".js-pane", has_text="optimised HLO").locator("[tabindex]", has_text=" cosine(").first.click()
    page.mouse.move(0, 0)
    page.locator(".js-linked").screenshot(path=str(ARTIFACTS / "linked-click-cos.png"))
    assert _lit(page) == _expected(linked, "In[2]:4")
    # clicking another line moves the pin; clicking outside the lines clears it
    page.locator(".js-pane", has_text="StableHLO").locator("[tabindex]", has_text="stablehlo.multiply").first.click()
    page.mouse.move(0, 0)
    assert _lit(page) == _expected(linked, "In[2]:2")
    page.locator(".js-linked").locator("b", has_text="jaxpr").click()
    page.mouse.move(0, 0)
    page.locator(".js-linked").screenshot(path=str(ARTIFACTS / "linked-cleared.png"))
    assert _lit(page) == []
    assert blocked == []
    page.close()


WIDE = "stacked = jax.jit(lambda *a: jnp.stack(a))\nout = stacked(*[x + i for i in range(40)])"


def _page(browser, tmp_path, name: str, body: str):
    page_file = tmp_path / name
    page_file.write_text(f"<!doctype html><meta charset=utf-8><body>{body}</body>", encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(page_file.as_uri())
    return page


@pytest.mark.browser
def test_a_300_character_hlo_line_wraps_inside_its_pane_with_the_label_beside_it(ip, browser, tmp_path):
    _setup(ip)
    result, cap = run_captured(ip, f"%%jaxstages --source -o rep\n{WIDE}")
    assert result.success
    hlo = ip.user_ns["rep"].reports[0].linked.irs[2]
    wide = max((t for t, lab in zip(hlo.lines, hlo.sources) if lab == "In[3]:2"), key=len)
    assert len(wide) >= 300
    page = _page(browser, tmp_path, "linked-wide.html", cap.outputs[0].data["text/html"])
    pane = page.locator(".js-pane", has_text="optimised HLO")
    line = pane.locator("[tabindex]", has_text=wide.strip()[:40]).first
    line.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    pane.screenshot(path=str(ARTIFACTS / "linked-wide-hlo-line.png"))
    geometry = line.evaluate("""e => {
        const pre = e.closest('pre'), box = pre.getBoundingClientRect(), r = document.createRange();
        r.setStart(e.firstChild, 0); r.setEnd(e.firstChild, 1);
        const first = r.getBoundingClientRect();
        const text = e.firstChild.textContent.trimEnd();
        r.setStart(e.firstChild, text.length - 1); r.setEnd(e.firstChild, text.length);
        const last = r.getBoundingClientRect();
        const lines = [...e.getClientRects()].length;
        return {overflow: pre.scrollWidth - pre.clientWidth, left: box.left, right: box.right,
                first: first.left, lastRight: last.right, height: e.getBoundingClientRect().height,
                lineHeight: parseFloat(getComputedStyle(e).lineHeight) || first.height,
                indent: [...e.getClientRects()].length, start: e.textContent.slice(0, 9)};
    }""")
    assert geometry["overflow"] == 0, "the pane must not need a horizontal scroll"
    assert geometry["start"] == "In[3]:2  "
    assert geometry["left"] < geometry["first"] < geometry["left"] + 20  # the label starts the line
    assert geometry["lastRight"] <= geometry["right"]  # the line's last character is on screen, inside the pane
    assert geometry["height"] >= 3 * geometry["lineHeight"]  # wrapped onto several rows
    page.close()


@pytest.mark.browser
def test_the_linked_view_reads_as_labelled_text_in_nbconverts_sanitised_export(ip, browser, tmp_path):
    import nbformat
    from nbconvert import HTMLExporter

    report, cap = _linked_report(ip)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "%%jaxstages --source\nout = f(x)", outputs=[nbformat.v4.new_output("display_data", data=cap.outputs[0].data)])])
    exported, _ = HTMLExporter(sanitize_html=True).from_notebook_node(notebook)
    page = _page(browser, tmp_path, "linked-sanitised.html", exported)
    panes = page.locator("div.jaxshow .js-pane")
    texts = panes.evaluate_all("ps => ps.map(p => p.innerText)")
    page.locator("div.jaxshow .js-linked").screenshot(path=str(ARTIFACTS / "linked-sanitised.png"))
    page.close()
    expected: list[list[str]] = []  # the text form's panes: title, then each line without its indent
    for line in linked_text(report.linked, render.DEFAULT_BUDGET).split("\n"):
        if re.match(r"  \S", line):
            expected.append([line.strip().removesuffix(":")])
        else:
            expected[-1].append(line[4:])
    assert len(texts) == len(expected) == 4
    for shown, lines in zip(texts, expected):
        assert [s.rstrip() for s in shown.split("\n") if s.strip()] == [line for line in lines if line.strip()]
        assert not re.search(r"<(/?)(span|label|input|div|pre|code|b)\b", shown)  # no tag printed as text


def test_a_long_jaxpr_is_printed_and_linked_only_as_far_as_the_report_shows_it():
    from jaxshow.capture.linked import linked_views

    def chain(x):
        for _ in range(60):
            x = jnp.sin(x)
        return x

    closed = jax.make_jaxpr(chain)(1.0)
    views = linked_views(closed, None, None, jaxpr_max_lines=20)
    jaxpr = views.irs[0]
    assert views.notes[0] == ("jaxpr: printed and linked as far as the report shows it (20 of 60 top-level equations; "
                              "--save links all of it)")
    assert jaxpr.lines[-1] == "  … 40 more top-level equations, not printed }"
    assert sum(1 for line in jaxpr.lines if " = sin " in line) == 20
    whole = linked_views(closed, None, None)
    assert sum(1 for line in whole.irs[0].lines if " = sin " in line) == 60 and len(whole.notes) == 2


def test_a_reloaded_modules_source_is_shown_as_the_file_reads_now(ip, tmp_path, monkeypatch):
    """--source after importlib.reload of an edited module showed the line as the first --source had read it
    ('return jnp.sin(x) * 2  # two') beside the jaxpr of the new code (cos, 3): Python's linecache keeps a file's lines
    until asked to check them."""
    module = tmp_path / "srcmod_reload.py"
    module.write_text("import jax, jax.numpy as jnp\n\n@jax.jit\ndef g(x):\n    return jnp.sin(x) * 2  # two\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _setup(ip, "\nimport importlib, srcmod_reload")
    run_captured(ip, "%%jaxstages --source -o rep\ny = srcmod_reload.g(x)")
    assert ip.user_ns["rep"].reports[0].linked.sources[-1] == SourceText(str(module), 5, ("    return jnp.sin(x) * 2  # two",))
    module.write_text("import jax, jax.numpy as jnp\n\n@jax.jit\ndef g(x):\n    return jnp.cos(x) * 3  # three\n")
    run_captured(ip, "importlib.reload(srcmod_reload)")
    result, _ = run_captured(ip, "%%jaxstages --source -o rep\ny = srcmod_reload.g(x)")
    assert result.success
    assert ip.user_ns["rep"].reports[0].linked.sources[-1] == SourceText(str(module), 5, ("    return jnp.cos(x) * 3  # three",))
