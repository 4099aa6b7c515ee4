"""HTML and text for ``ConfigReport`` (``%jaxconfig``): one row per option, help texts folded."""

from __future__ import annotations

from jaxshow import render
from jaxshow.render.limits import MESSAGE_LINES, TextBudget, block, limit_rows, line, message
from jaxshow.render.markup import Html, details, join, muted, tag
from jaxshow.render.plain import columns, paragraph, text_table, text_width
from jaxshow.render.style import NOTE_STYLE
from jaxshow.report import ConfigOption, ConfigReport

HEADER = ("option", "value", "default", "set by", "kind", "a change costs", "backend start")
TEXT_HELP_MAX_OPTIONS = 20
"""The text form prints help texts only for a selection this small (the HTML folds every one)."""
HELP_MAX_CHARS = 2_000
HELP_LINES = MESSAGE_LINES + 5

KIND_WORDS = {"scopable": "scopable", "flag": "flag", "unknown": "unknown"}
COLUMN_NOTES = (
    ("value", "what this thread sees now: a context manager's value while one is active, else the global value"),
    ("default", "JAX's default from the option's definition in JAX's source, before any environment variable"),
    ("set by", "default; env (an environment variable JAX read at import); config.update (a global value set "
               "after import); context manager (one active now on this thread)"),
    ("kind", "scopable: a State, with a context manager for one thread (jax.config.update sets the global value); "
             "flag: a Flag, one value for the process, no context manager"),
    ("a change costs", "re-trace: the option is in JAX's trace context, so every jitted function traces again; "
                       "new jit entry: it is in the jit key only, so each function gets a new cache entry; "
                       "—: neither"),
    ("backend start", "raises after start: JAX refuses a new value once a backend is up; ignored after start: "
                      "read only when a backend starts, so a later change does nothing"),
)


# --- shared wording ---------------------------------------------------------------------------


def _source_words(o: ConfigOption) -> str:
    if o.source == "context":
        return "context manager"
    if o.source == "environment":
        return "env " + ", ".join(f"{var}={text}" for var, text in o.env_vars if text is not None)
    if o.source == "set":
        return "config.update"
    return {"default": "default", "unknown": "unknown"}[o.source]


def _value_words(o: ConfigOption) -> str:
    if o.global_value_repr is not None:
        return f"{o.value_repr} (global: {o.global_value_repr})"
    return o.value_repr


def _default_words(o: ConfigOption) -> str:
    return o.default_repr if o.default_repr is not None else "? (computed at import)"


def _cost_words(o: ConfigOption) -> str:
    if o.in_trace_context:
        return "re-trace"
    if o.in_jit_key:
        return "new jit entry"
    if o.in_trace_context is None or o.in_jit_key is None:
        return "unknown"
    return "—"


def _backend_words(o: ConfigOption, report: ConfigReport) -> str:
    if o.backend_start is None:
        return ""
    words = {"raises": "raises after start", "ignored": "ignored after start"}[o.backend_start]
    return words + (" (too late now)" if report.backends_initialized else "")


def _row(o: ConfigOption, report: ConfigReport) -> tuple[str, ...]:
    return (o.name, _value_words(o), _default_words(o), _source_words(o), KIND_WORDS.get(o.kind, o.kind),
            _cost_words(o), _backend_words(o, report))


def _option_words(o: ConfigOption, report: ConfigReport) -> str:
    """One option as a sentence, for a terminal narrower than the table: ``jax_enable_x64: False (default) · ...``."""
    default = "default computed at import" if o.default_repr is None else f"default {o.default_repr}"
    where = ["default"] if o.source == "default" else [
        "source unknown" if o.source == "unknown" else f"set by {_source_words(o)}",
        *([f"global {o.global_value_repr}"] if o.global_value_repr is not None else []), default]
    cost = {"re-trace": "a change re-traces", "new jit entry": "a change adds a jit cache entry",
            "unknown": "what a change costs is unknown", "—": ""}[_cost_words(o)]
    backend = _backend_words(o, report).replace(" after start", " after backend start")
    parts = [KIND_WORDS.get(o.kind, o.kind), cost, backend]
    return f"{o.name}: {o.value_repr} ({'; '.join(where)})" + "".join(f" · {p}" for p in parts if p)


def _headline(report: ConfigReport) -> str:
    return (f"jax {report.jax_version}: {report.total_options} options — {report.scopable_options} scopable "
            f"(with a context manager), {report.flag_options} flags (no context manager)")


def _selection(report: ConfigReport) -> str:
    """What is shown, and why nothing is when nothing is."""
    if report.filter and report.matched_options == 0:
        near = f"; near names: {', '.join(report.near_names)}" if report.near_names else ""
        return f"no option name matches {report.filter!r} ({report.total_options} options){near}"
    wanted = (["changed from its default"] if report.changed_only else []) + (
        [{"scopable": "scopable", "flag": "a flag"}[report.kind]] if report.kind else [])
    if not report.options:
        if report.filter:
            n, wanted_words = report.matched_options, " and ".join(wanted)
            if n == 1:
                return f"1 option matches {report.filter!r}, but it is not {wanted_words}"
            return f"{n} options match {report.filter!r}, but none of them is {wanted_words}"
        return f"none of the {report.total_options} options is {' and '.join(wanted)}"
    shown = (["changed from the default"] if report.changed_only else []) + (
        [{"scopable": "scopable only", "flag": "flags only"}[report.kind]] if report.kind else [])
    criteria = ([f"matching {report.filter!r}"] if report.filter else []) + shown
    return f"showing {len(report.options)} of {report.total_options}" + (f" ({', '.join(criteria)})" if criteria else "")


def _backend(report: ConfigReport) -> str:
    if report.backends_initialized is None:
        return "backend: unknown (this JAX does not say whether its backends are up)"
    if report.backends_initialized:
        platforms = ", ".join(report.backend_platforms) or "?"
        return (f"backend: up ({platforms}); options marked 'after start' no longer take a new value "
                "in this process (set them right after import jax)")
    return "backend: not started yet; options marked 'after start' can still be set"


def _changed_line(report: ConfigReport) -> str | None:
    """For ``--changed``: how many differ, and which of them miss JAX's caches."""
    if not report.changed_only:
        return None
    costly = [o.name for o in report.options if o.invalidates_caches]
    n = len(report.options)
    if not n:
        return None
    differ = "1 option differs" if n == 1 else f"{n} options differ"
    if not costly:
        return f"{differ} from the default; none is in JAX's trace context or jit key, so none costs a cache miss"
    return (f"{differ} from the default; {len(costly)} of them {'is' if len(costly) == 1 else 'are'} in JAX's trace "
            f"context or jit key, so changing {'it' if len(costly) == 1 else 'one'} makes every jitted function miss its "
            f"cache at its next call (a value kept the whole session costs nothing): {', '.join(costly)}")


def _unread_env(report: ConfigReport) -> list[str]:
    """An environment variable set now that the option's value did not come from: read at import, set after it."""
    return [f"{var}={text!r} is set, but {o.name} is {o.global_value_repr or o.value_repr}: JAX reads {var} once, at import "
            f"(it was set after that, or jax.config.update set another value since); jax.config.update({o.name!r}, …) "
            "sets it now"
            for o in report.options for var, text in o.env_vars if var in o.env_unread]


def _caveats(report: ConfigReport) -> list[str]:
    notes = []
    if report.trace_context_unavailable:
        notes.append(f"trace context: unknown ({report.trace_context_unavailable})")
    if report.jit_key_unavailable:
        notes.append(f"jit key: unknown ({report.jit_key_unavailable})")
    if report.changed_only and report.unknown_defaults:
        names = ", ".join(report.unknown_defaults)
        notes.append(f"not compared (JAX computes the default at import): {names}")
    return notes + list(report.notes)


def _help(o: ConfigOption) -> str:
    text = o.help_text[:HELP_MAX_CHARS] + ("…" if len(o.help_text) > HELP_MAX_CHARS else "")
    parts = [text] if text else ["(JAX gives no help text)"]
    if o.enum_values:
        parts.append("values: " + ", ".join(o.enum_values))
    env = [var for var, _ in o.env_vars]
    if env:
        parts.append("environment: " + ", ".join(env) + " (read at import)")
    if o.default_unavailable:
        parts.append(f"default: {o.default_unavailable}")
    if o.backend_start_reason:
        parts.append(f"backend start: {o.backend_start_reason}")
    return "\n".join(parts)


# --- HTML --------------------------------------------------------------------------------------


def _name_cell(o: ConfigOption, budget: TextBudget) -> Html:
    body = tag("div", block(_help(o), budget, HELP_LINES), style="white-space: pre-wrap; max-width: 60em; font-weight: normal;")
    return details(tag("code", line(o.name, budget)), body, cls="js-section")


@render.html_body.register
def _(report: ConfigReport, budget: TextBudget) -> Html:
    parts: list[object] = [
        tag("div", tag("strong", "%jaxconfig"), " — ", _headline(report), cls="js-head"),
        tag("div", _selection(report)),
        tag("div", muted(_backend(report))),
    ]
    if changed := _changed_line(report):
        parts.append(tag("div", changed, style=NOTE_STYLE))
    parts.extend(tag("div", message(n, budget), style=NOTE_STYLE) for n in _unread_env(report))
    if report.options:
        options, more = limit_rows(report.options, budget, "report.options")
        head = tag("thead", tag("tr", *(tag("th", h) for h in HEADER)))
        rows = [tag("tr", tag("td", _name_cell(o, budget)), *(tag("td", line(c, budget)) for c in _row(o, report)[1:]))
                for o in options]
        if more:
            rows.append(tag("tr", tag("td", more, cls="js-more", style="color: #59636e;", colspan=str(len(HEADER)))))
        parts.append(tag("table", head, tag("tbody", *rows), cls="js-table"))
        parts.append(details("what the columns mean",
                             tag("ul", *(tag("li", tag("strong", k), ": ", v) for k, v in COLUMN_NOTES))))
    parts.extend(tag("div", muted(message(n, budget))) for n in _caveats(report))
    return join(parts)


# --- text --------------------------------------------------------------------------------------


@render.text_body.register
def _(report: ConfigReport, budget: TextBudget) -> str:
    lines = [paragraph("%jaxconfig — ", _headline(report), "  ", budget), paragraph("  ", _selection(report), "    ", budget),
             paragraph("  ", _backend(report), "    ", budget)]
    if changed := _changed_line(report):
        lines.append(paragraph("  ", changed, "    ", budget))
    lines.extend(paragraph("  ", message(n, budget), "    ", budget) for n in _unread_env(report))
    options, more = limit_rows(report.options, budget, "report.options")
    if options:
        table = text_table([_row(o, report) for o in options], HEADER, budget, indent="  ", rule=True, more=more)
        if max(columns(t) for t in table) <= text_width(budget):
            lines.extend(table)
        else:  # names and values alone are wider than the terminal: a line per option
            lines.extend(paragraph("  ", line(_option_words(o, report), budget), "      ", budget) for o in options)
            lines.extend([f"  {more}"] if more else [])
        if len(report.options) <= TEXT_HELP_MAX_OPTIONS:
            for o in options:
                lines.append(f"  {line(o.name, budget)}:")
                lines.append(paragraph("    ", block(_help(o), budget, HELP_LINES), "    ", budget))
        else:
            lines.append(paragraph("  help texts: ", f"select at most {TEXT_HELP_MAX_OPTIONS} options (a FILTER), or read "
                                   "report.options[i].help_text", "    ", budget))
        lines.append("  columns:")
        lines.extend(paragraph(f"    {k}: ", v, "      ", budget) for k, v in COLUMN_NOTES)
    lines.extend(paragraph("  note: ", message(n, budget), "    ", budget) for n in _caveats(report))
    return "\n".join(lines)
