"""HTML and text for the ``%jaxdump`` records: settings, files by function and by cell, XLA modules, texts, diffs."""

from __future__ import annotations

import html
from typing import Iterator, Sequence

from jaxshow import render
from jaxshow.render.highlight import code_html
from jaxshow.render.limits import TextBudget, block, clip_ir, clip_lines, ir_footer, limit_rows, line, message
from jaxshow.render.markup import Html, code_block, details, join, muted, table, tag
from jaxshow.render.plain import KEEP, paragraph, table_or_sentences
from jaxshow.render.style import ERROR_STYLE, NOTE_STYLE
from jaxshow.report import DUMP_KIND_WORDS, DumpDiff, DumpFile, DumpReport, DumpText, XlaDumpModule, format_bytes, plural

NAMING = (
    "jax_ir{counter}_{module}_{stage}.mlir: counter = this process's running number of module dumps (4 digits, shared by all "
    "directories), module = the compiled module (jit(name) with each character other than a letter, digit, _ . or - made _, "
    "trailing ones dropped: jit(<lambda>) gives jit__lambda), "
    "stage = compile (handed to XLA; also on persistent-cache hits). jax_{counter}_{function}.jaxpr.txt: the jaxpr, written "
    "when the function is lowered, with its own 6-digit counter (jax 0.7: {function}.jaxpr.txt)."
)
HIT_NOTE = "persistent-cache hit: served from disk, not compiled"
_FILE_HEADER = ("cell", "file", "what", "size", "note")
_XLA_HEADER = ("module", "files", "what XLA wrote")
_PLUS_STYLE = "color: #116329; background: #dafbe1;"
_MINUS_STYLE = "color: #82071e; background: #ffebe9;"
_HUNK_STYLE = "color: #0550ae; background: #ddf4ff;"


def _module_of(files: Sequence[DumpFile]) -> str | None:
    """The one module a function's files were dumped from, named once in its heading; ``None`` for several."""
    modules = {f.module for f in files if f.module}
    return modules.pop() if len(modules) == 1 else None


def _what(f: DumpFile, heading_module: str | None) -> str:
    if f.kind == "stablehlo":
        stage = "compile (handed to XLA)" if f.stage == "compile" else f.stage
        return f"stage {stage}" if f.module == heading_module else f"module {f.module}, stage {stage}"
    return f"{DUMP_KIND_WORDS.get(f.kind, f.kind)} (at lowering)"


def _note(f: DumpFile) -> str:
    return HIT_NOTE if f.persistent_hit else ""


def _file_rows(files: Sequence[DumpFile], heading_module: str | None = None) -> list[tuple[str, ...]]:
    return [(f.cell or "—", f.name, _what(f, heading_module), format_bytes(f.size_bytes), _note(f)) for f in files]


def _function_heading(files: Sequence[DumpFile], module: str | None) -> str:
    """``2 files · module jit_train_step``, after the function's name: its ``files`` and their one ``module``."""
    return plural(len(files), "file") + (f" · module {module}" if module else "")


def _headline(r: DumpReport) -> str:
    if r.listing_unavailable and not r.files:
        return r.listing_unavailable
    n, k = len(r.files), len(r.functions)
    files = f"{n} file{'s' if n != 1 else ''}"
    if r.selection:
        return f"{files} in {r.directory}"
    return f"{files} of {k} function{'s' if k != 1 else ''} in {r.directory}"


def _cells(r: DumpReport) -> list[tuple[str, str]]:
    rows = []
    for cell, names in r.by_cell().items():
        functions = dict.fromkeys(r.named(f.function) for f in r.files if f.cell == cell)
        rows.append((cell or "—", f"{', '.join(functions)} ({len(names)} file{'s' if len(names) != 1 else ''})"))
    return rows


_HELPERS = "JAX's own eager operations"
_HELPER_NAMES_SHOWN = 12


def _split(r: DumpReport) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The functions listed one by one, and JAX's own eager operations folded into one entry (all listed for a NAME)."""
    helpers = () if r.selection else r.jax_functions
    return tuple(f for f in r.functions if f not in helpers), helpers


def _helpers_summary(r: DumpReport, helpers: Sequence[str]) -> str:
    names = ", ".join(helpers[:_HELPER_NAMES_SHOWN]) + (" …" if len(helpers) > _HELPER_NAMES_SHOWN else "")
    count = sum(1 for f in r.files if f.jax_own)
    return (f"({plural(count, 'file')}: jnp/lax calls outside jit, each compiled as its own module; "
            f"%jaxdump NAME shows one): {names}")


def _xla_rows(modules: Sequence[XlaDumpModule]) -> list[tuple[str, str, str]]:
    return [(f"module_{m.number:04d}.{m.module}", str(len(m.files)), _xla_kinds(m)) for m in modules]


def _xla_kinds(m: XlaDumpModule) -> str:
    counts: dict[str, int] = {}
    for f in m.files:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    words = []
    for kind, n in counts.items():
        if kind == "pass":
            passes = dict.fromkeys(f.pass_name for f in m.files if f.kind == "pass" and f.pass_name)
            words.append(f"{plural(n, 'per-pass dump')} (after {', '.join(passes)})")
        else:
            words.append(kind if n == 1 else f"{kind} ×{n}")
    return "; ".join(words)


def _text_shown(t: DumpText, budget: TextBudget) -> tuple[str, str | None]:
    shown, hidden, cut = clip_ir(t.text, budget)
    parts = [left_out] if (left_out := ir_footer(hidden, cut, budget)) else []
    if t.read_bytes and t.read_bytes < t.total_bytes:
        parts.append(f"{t.total_bytes - t.read_bytes:,} more bytes not read")
    footer = f"… {'; '.join(parts)}; full text in the file {t.file}" if parts else None
    return shown, footer


# --- HTML --------------------------------------------------------------------------------------


def _settings_html(r: DumpReport, budget: TextBudget) -> Html:
    return table(("option", "value", "set by"), [(s.option, s.value, s.source) for s in r.settings], budget)


def _text_html(t: DumpText, budget: TextBudget) -> Html:
    shown, footer = _text_shown(t, budget)
    body: list[object] = [code_block(code_html(shown, t.language, budget.highlight_max_bytes))]
    if footer:
        body.append(muted(footer))
    return details(join([line(t.file, budget), " ", muted(format_bytes(t.total_bytes))]), *body, open=True)


def _function_files(r: DumpReport, functions: Sequence[str], budget: TextBudget
                    ) -> Iterator[tuple[str, tuple[DumpFile, ...], str | None, Sequence[DumpFile], str | None]]:
    """Each function with all its files, their module, the files shown and the line for those left out."""
    for function in functions:
        every = r.files_of(function)
        files, more = limit_rows(every, budget, f"report.files_of({function!r})")
        yield function, every, _module_of(every), files, more


@render.html_body.register
def _(r: DumpReport, budget: TextBudget) -> Html:
    title = "%jaxdump" + (f" {r.selection}" if r.selection else "")
    parts: list[object] = [tag("div", tag("strong", line(title, budget)), " — ", message(_headline(r), budget), cls="js-head")]
    parts.extend(tag("div", message(w, budget), style=ERROR_STYLE) for w in r.warnings)
    parts.append(details("how dumping is set", _settings_html(r, budget), open=not r.files))
    own, helpers = _split(r)
    functions, more_functions = limit_rows(own, budget, "report.functions")
    for function, every, module, files, more in _function_files(r, functions, budget):
        summary = join([line(r.named(function), budget), " ", muted(line(_function_heading(every, module), budget))])
        rows = _file_rows(files, module)
        parts.append(details(summary, table(_FILE_HEADER, rows, budget, more=more), open=len(functions) <= 5))
    if more_functions:
        parts.append(muted(more_functions))
    if helpers:
        files, more = limit_rows([f for f in r.files if f.jax_own], budget, "[f for f in report.files if f.jax_own]")
        parts.append(details(join([_HELPERS, " ", muted(line(_helpers_summary(r, helpers), budget))]),
                             table(_FILE_HEADER, _file_rows(files), budget, more=more)))
    if r.files:
        cells, more_cells = limit_rows(_cells(r), budget, "report.by_cell()")
        parts.append(details("by cell", table(("cell", "functions"), cells, budget, more=more_cells), open=True))
        parts.append(details("how to read the names", tag("div", NAMING)))
    if r.listing_unavailable and r.files:
        parts.append(tag("div", message(r.listing_unavailable, budget), style=NOTE_STYLE))
    if r.xla_modules or r.xla_directory:
        modules, more = limit_rows(r.xla_modules, budget, "report.xla_modules")
        head = "XLA's dump" + (f" ({line(r.xla_directory, budget)})" if r.xla_directory else "")
        body: list[object] = [table(_XLA_HEADER, _xla_rows(modules), budget, more=more)] if modules else []
        if r.xla_unavailable:
            body.append(muted(message(r.xla_unavailable, budget)))
        parts.append(details(head, *body, open=True))
    parts.extend(_text_html(t, budget) for t in r.texts)
    parts.extend(tag("div", muted(message(n, budget))) for n in r.notes)
    return join(parts)


def _diff_html(text: str, budget: TextBudget) -> Html:
    shown, hidden = clip_lines(text, budget.max_lines)
    out = []
    for piece in shown.split("\n"):
        escaped = html.escape(block(piece, budget, 1), quote=False)
        style = _PLUS_STYLE if piece.startswith("+") else _MINUS_STYLE if piece.startswith("-") else _HUNK_STYLE if piece.startswith("@@") else None
        out.append(f'<span style="{style}">{escaped}</span>' if style else escaped)
    result = [code_block(Html("\n".join(out)))]
    if hidden:
        result.append(muted(f"… {plural(hidden, 'more line')} (all in report.diff_text)"))
    return join(result)


@render.html_body.register
def _(d: DumpDiff, budget: TextBudget) -> Html:
    parts: list[object] = [
        tag("div", tag("strong", "%jaxdump --diff"), " ", line(d.a.name, budget), " → ", line(d.b.name, budget), " ",
            muted(f"+{d.added_lines:,} −{d.removed_lines:,} lines"), cls="js-head"),
    ]
    if d.diff_text:
        parts.append(_diff_html(d.diff_text, budget))
    parts.extend(tag("div", muted(message(n, budget))) for n in d.notes)
    return join(parts)


# --- text --------------------------------------------------------------------------------------


def _file_sentence(row: tuple[str, ...]) -> str:
    """A file's row as one sentence, for a terminal narrower than the table: ``In[3] jax_ir0002_jit_f_compile.mlir (2.30 KiB): …``."""
    cell, name, what, size, note = row
    return f"{cell} {name} ({size.replace(' ', KEEP)}): {what}" + (f" · {note}" if note else "")


def _xla_sentence(row: tuple[str, ...]) -> str:
    """An XLA module's row as one sentence: ``module_0004.jit_f (31 files): before optimizations; …``."""
    module, files, what = row
    return f"{module} ({files} file{'' if files == '1' else 's'}): {what}"


@render.text_body.register
def _(r: DumpReport, budget: TextBudget) -> str:
    title = "%jaxdump" + (f" {line(r.selection, budget)}" if r.selection else "")
    lines = [paragraph(f"{title} — ", message(_headline(r), budget), "  ", budget)]
    lines.extend(paragraph("  warning: ", message(w, budget), "    ", budget) for w in r.warnings)
    lines.extend(paragraph(f"  {s.option}: ", f"{line(s.value, budget)}  ({line(s.source, budget)})", "    ", budget) for s in r.settings)
    own, helpers = _split(r)
    functions, more_functions = limit_rows(own, budget, "report.functions")
    for function, every, module, files, more in _function_files(r, functions, budget):
        lines.append(paragraph(f"  {line(r.named(function), budget)}: ", line(_function_heading(every, module), budget), "    ", budget))
        lines.extend(table_or_sentences(_file_rows(files, module), _FILE_HEADER, budget, _file_sentence, indent="    ", more=more))
    if more_functions:
        lines.append(f"  {more_functions}")
    if helpers:
        lines.append(paragraph(f"  {_HELPERS} ", line(_helpers_summary(r, helpers), budget), "    ", budget))
    if r.files:
        cells, more_cells = limit_rows(_cells(r), budget, "report.by_cell()")
        lines.append("  by cell:")
        lines.extend(paragraph(f"    {line(cell, budget)}: ", line(functions_text, budget), "      ", budget) for cell, functions_text in cells)
        if more_cells:
            lines.append(f"    {more_cells}")
        lines.append(paragraph("  names: ", NAMING, "    ", budget))
    if r.listing_unavailable and r.files:
        lines.append("  " + message(r.listing_unavailable, budget))
    if r.xla_modules or r.xla_directory:
        modules, more = limit_rows(r.xla_modules, budget, "report.xla_modules")
        lines.append("  XLA's dump" + (f" ({line(r.xla_directory, budget)})" if r.xla_directory else "") + ":")
        if modules:
            lines.extend(table_or_sentences(_xla_rows(modules), _XLA_HEADER, budget, _xla_sentence, indent="    ", more=more))
        if r.xla_unavailable:
            lines.append("    " + message(r.xla_unavailable, budget))
    for t in r.texts:
        shown, footer = _text_shown(t, budget)
        lines.append(paragraph("  ", f"{line(t.file, budget)} ({format_bytes(t.total_bytes)}):", "    ", budget))
        lines.extend("    | " + piece for piece in block(shown, budget, 0).split("\n"))
        if footer:
            lines.append("    " + footer)
    lines.extend(paragraph("  note: ", message(n, budget), "    ", budget) for n in r.notes)
    return "\n".join(lines)


@render.text_body.register
def _(d: DumpDiff, budget: TextBudget) -> str:
    lines = [f"%jaxdump --diff {line(d.a.name, budget)} → {line(d.b.name, budget)}  (+{d.added_lines:,} −{d.removed_lines:,} lines)"]
    if d.diff_text:
        shown, hidden = clip_lines(d.diff_text, budget.max_lines)
        lines.extend("  " + piece for piece in block(shown, budget, 0).split("\n"))
        if hidden:
            lines.append(f"  … {plural(hidden, 'more line')} (all in report.diff_text)")
    lines.extend(paragraph("  note: ", message(n, budget), "    ", budget) for n in d.notes)
    return "\n".join(lines)

