"""The scoped stylesheet and the few inline styles that must survive sanitisers.

Every selector starts with ``.jaxshow``. No fonts, images or URLs.

Colours follow the front end's theme: JupyterLab's ``--jp-*`` variables first,
then VS Code's ``--vscode-*``, then our own light palette, switched to a dark
one under ``@media (prefers-color-scheme: dark)`` (classic Notebook, Colab,
a browser). Background, text and token colours always come from the same
source, so a dark background never meets light-theme tokens. Code blocks, table headers,
notes and chips are tinted with translucent colours over that background, which
read the same in light and dark themes.

The inline styles carry no colour at all: where a sanitiser strips the
stylesheet, the report takes the page's own text and background colours (so it
is never a white card on a dark page) and keeps its layout: monospace ``<pre>``
blocks that scroll, bordered tables, tinted notes. The stylesheet sits inside
``<!-- -->``, which CSS ignores: a sanitiser that escapes ``<style>`` instead of
removing it (nbconvert's ``--sanitize-html``) then drops the rules as an HTML
comment instead of printing them as text.
"""

from __future__ import annotations

MONOSPACE = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
ROOT_STYLE = "font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: 13px; line-height: 1.4; padding: 6px 8px; border: 1px solid rgba(128, 128, 128, 0.4); border-radius: 6px; margin: 4px 0;"
CODE_STYLE = f"font-family: {MONOSPACE}; font-size: 12px; white-space: pre; overflow: auto; max-height: 32em; padding: 6px 8px; margin: 4px 0; border-radius: 4px; border: 1px solid rgba(128, 128, 128, 0.25);"
# The <code> inside each <pre> takes everything from the <pre>: JupyterLab's
# ".jp-RenderedHTMLCommon code" rule would otherwise give it the theme's code background and
# wrap long lines with break-all.
CODE_INNER_STYLE = "background: transparent; color: inherit; font: inherit; white-space: inherit; word-break: normal; overflow-wrap: normal; padding: 0; border: 0;"
TABLE_STYLE = "border-collapse: collapse; margin: 4px 0; font-size: 12px;"
MUTED_STYLE = "opacity: 0.75;"
ERROR_STYLE = "background: rgba(207, 34, 46, 0.12); border-left: 3px solid #cf222e; padding: 4px 6px; margin: 4px 0; white-space: pre-wrap;"
NOTE_STYLE = "background: rgba(212, 167, 44, 0.16); border-left: 3px solid #d4a72c; padding: 3px 6px; margin: 4px 0; white-space: pre-wrap;"

LINK_COLOURS = ((9, 105, 218), (191, 57, 137), (26, 127, 55), (154, 103, 0), (130, 80, 223), (207, 34, 46),
                (27, 124, 131), (188, 76, 0))
"""The linked views' colours, one per source line in turn: a faint tint always, a strong one when lit."""

# Token colours: (JupyterLab variable, VS Code variable, light default, dark default).
# Each default reaches a WCAG contrast of 4.5 on its code background (tests/test_browser.py).
# The highlighter (highlight.py) writes an op as <b>, a type as <i>, a keyword as <b class=k>,
# a symbol as <b class=f>, a comment as <i class=c>: short, and legible unstyled.
TOKEN_SELECTORS = {"o": "pre b", "t": "pre i", "k": "pre b.k", "f": "pre b.f"}
_TOKENS = {
    "o": ("--jp-mirror-editor-property-color", "--vscode-symbolIcon-functionForeground", "#0550ae", "#79c0ff"),
    "t": ("--jp-mirror-editor-string-color", "--vscode-debugTokenExpression-string", "#953800", "#ffa657"),
    "k": ("--jp-mirror-editor-keyword-color", "--vscode-debugTokenExpression-name", "#116329", "#7ee787"),
    "f": ("--jp-mirror-editor-variable-2-color", "--vscode-textLink-foreground", "#8250df", "#d2a8ff"),
}
_LIGHT = {"fg": "#1f2328", "bg": "#ffffff"}
_DARK = {"fg": "#e6edf3", "bg": "#0d1117"}


def _defaults(palette: dict[str, str], index: int) -> str:
    values = {**{f"--js-{k}": v for k, v in palette.items()}, **{f"--js-{k}": v[index] for k, v in _TOKENS.items()}}
    return ";".join(f"{k}:{v}" for k, v in values.items())


def _token_rules() -> str:
    return "".join(f".jaxshow {TOKEN_SELECTORS[k]}{{color:var({jp},var({vs},var(--js-{k})))}}" for k, (jp, vs, _, _) in _TOKENS.items())


STYLESHEET = (
    f".jaxshow{{{_defaults(_LIGHT, 2)};overflow-wrap:break-word;"
    "color:var(--jp-ui-font-color0,var(--vscode-editor-foreground,var(--js-fg)));"
    "background:var(--jp-layout-color0,var(--vscode-editor-background,var(--js-bg)))}"
    f"@media (prefers-color-scheme:dark){{.jaxshow{{{_defaults(_DARK, 3)}}}}}"
    ".jaxshow pre.js-code{background:rgba(128,128,128,.1);color:inherit}"
    ".jaxshow pre b,.jaxshow pre i{font-weight:normal;font-style:normal}"
    ".jaxshow pre b.k{font-weight:600}.jaxshow pre i.c{font-style:italic;color:inherit;opacity:.7}"
    + _token_rules()
    + ".jaxshow summary{cursor:pointer;font-weight:600;margin:2px 0}"
    ".jaxshow details.js-station{border-left:3px solid #388bfd;padding-left:8px;margin:6px 0}"
    ".jaxshow details.js-failed{border-left-color:#f85149}"
    ".jaxshow details.js-section{margin:4px 0 4px 4px}.jaxshow details.js-section>summary{font-weight:500}"
    ".jaxshow table.js-table td{border:1px solid rgba(128,128,128,.35);padding:2px 8px;text-align:left;vertical-align:top;color:inherit;background:transparent}"
    ".jaxshow table.js-table tr.js-th td{font-weight:600;background:rgba(128,128,128,.12)}"
    ".jaxshow table.js-table td.js-long{overflow-wrap:anywhere}"
    ".jaxshow .js-chip{display:inline-block;background:rgba(56,139,253,.15);border-radius:8px;padding:0 6px;margin:1px 2px;"
    f"font-family:{MONOSPACE};font-size:11px}}"
    ".jaxshow .js-head{font-size:14px;margin-bottom:4px}"
    ".jaxshow .js-bar{display:flex;height:10px;border-radius:3px;overflow:hidden;margin:4px 0;max-width:480px;background:rgba(128,128,128,.2)}"
    ".jaxshow .js-linked code>span{display:block;white-space:pre-wrap;overflow-wrap:anywhere;"
    "padding-left:var(--js-hang);text-indent:calc(-1*var(--js-hang))}"
    ".jaxshow .js-linked [tabindex]{cursor:pointer;outline:none}"
    + "".join(f".jaxshow .js-linked .js-c{n}{{background:rgba({r},{g},{b},.1);--js-lit:rgba({r},{g},{b},.45)}}"
              for n, (r, g, b) in enumerate(LINK_COLOURS))
)
"""The stylesheet, one line, every selector under ``.jaxshow``."""

STYLE_ELEMENT = f"<style><!--\n{STYLESHEET}\n--></style>"
"""The ``<style>`` element each output carries (self-contained: exports need no other file)."""
