"""The scoped stylesheet and the few inline styles that must survive sanitisers.

Every selector starts with ``.jaxshow``; colours set both foreground and
background so dark themes stay readable. No fonts, images or URLs.
"""

ROOT_STYLE = "font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: 13px; line-height: 1.4; color: #1f2328; background: #ffffff; padding: 6px 8px; border: 1px solid #d0d7de; border-radius: 6px; margin: 4px 0;"
CODE_STYLE = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; white-space: pre; overflow: auto; max-height: 32em; background: #f6f8fa; color: #1f2328; padding: 6px 8px; margin: 4px 0; border-radius: 4px;"
# The <code> inside each <pre> takes everything from the <pre>: JupyterLab's
# ".jp-RenderedHTMLCommon code" rule would otherwise give it the theme's background and text
# colour (dark in dark themes, behind token colours chosen for a light background) and wrap
# long lines with break-all.
CODE_INNER_STYLE = "background: transparent; color: inherit; font: inherit; white-space: inherit; word-break: normal; overflow-wrap: normal; padding: 0; border: 0;"
MUTED_STYLE = "color: #59636e;"
ERROR_STYLE = "color: #82071e; background: #ffebe9; padding: 4px 6px; border-radius: 4px; margin: 4px 0;"
NOTE_STYLE = "color: #3d444d; background: #fff8c5; padding: 3px 6px; border-radius: 4px; margin: 4px 0;"

STYLESHEET = """
.jaxshow summary { cursor: pointer; font-weight: 600; margin: 2px 0; }
.jaxshow details.js-station { border-left: 3px solid #0969da; padding-left: 8px; margin: 6px 0; }
.jaxshow details.js-station.js-failed { border-left-color: #cf222e; }
.jaxshow details.js-section { margin: 4px 0 4px 4px; }
.jaxshow details.js-section > summary { font-weight: 500; }
.jaxshow table.js-table { border-collapse: collapse; margin: 4px 0; font-size: 12px; }
.jaxshow table.js-table th, .jaxshow table.js-table td { border: 1px solid #d0d7de; padding: 2px 8px; text-align: left; vertical-align: top; background: #ffffff; color: #1f2328; }
.jaxshow table.js-table th { background: #f6f8fa; }
.jaxshow .js-chip { display: inline-block; background: #ddf4ff; color: #0a3069; border-radius: 8px; padding: 0 6px; margin: 1px 2px; font-family: ui-monospace, monospace; font-size: 11px; }
.jaxshow .js-head { font-size: 14px; margin-bottom: 4px; }
.jaxshow .js-code .c { color: #6e7781; font-style: italic; }
.jaxshow .js-code .k { color: #cf222e; font-weight: 600; }
.jaxshow .js-code .t { color: #0550ae; }
.jaxshow .js-code .o { color: #8250df; }
.jaxshow .js-code .f { color: #953800; }
.jaxshow .js-code .v { color: #116329; }
.jaxshow .js-code .a { color: #6639ba; }
.jaxshow .js-code .s { color: #0a3069; }
.jaxshow .js-code .n { color: #0550ae; }
.jaxshow .js-bar { display: flex; height: 10px; border-radius: 3px; overflow: hidden; margin: 4px 0; max-width: 480px; background: #eaeef2; }
""".strip()
