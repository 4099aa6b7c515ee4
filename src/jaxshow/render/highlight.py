"""Syntax highlighting for jaxpr, StableHLO/MLIR and HLO text, within a byte budget.

Pygments has no lexer for any of the three (checked up to 2.21), so small
``RegexLexer`` s live here. Output uses inline styles (``noclasses``), which
survive HTML sanitisers. Text over the budget is shown escaped and unhighlighted:
highlighting costs about 2 s per MB, escaping about 5 ms.
"""

from __future__ import annotations

from pygments import highlight as _pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import RegexLexer, bygroups
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

from jaxshow.render.markup import Html, escape

_DTYPE = r"(?:bf16|f8_e4m3fn|f8_e5m2|f16|f32|f64|i1|i4|i8|i16|i32|i64|u8|u16|u32|u64|c64|c128|bool|pred|s4|s8|s16|s32|s64|token)"


class JaxprLexer(RegexLexer):
    """Lexer for ``jax.make_jaxpr`` / ``Traced.jaxpr`` pretty-printed text."""

    name = "jaxpr"
    aliases = ["jaxpr"]
    tokens = {
        "root": [
            (r"#[^\n]*", Comment.Single),
            (r"\b(lambda|let|in)\b", Keyword),
            (rf"\b{_DTYPE}(?=\[)", Keyword.Type),
            (r"\b([a-z_][\w]*)(\[)", bygroups(Name.Function, Punctuation), "params"),
            (r"(=)(\s*)([a-z_][\w.]*)", bygroups(Operator, Whitespace, Name.Function)),
            (r"-?\d+(\.\d*)?(e[+-]?\d+)?", Number),
            (r"[a-z]+(?=:)", Name.Variable),
            (r"[{}()\[\],.;:]", Punctuation),
            (r"\s+", Whitespace),
            (r".", Text),
        ],
        "params": [
            (r"\[", Punctuation, "#push"),
            (r"\]", Punctuation, "#pop"),
            (r"\b([a-z_]\w*)(=)", bygroups(Name.Attribute, Operator)),
            (r"\b(lambda|let|in)\b", Keyword),
            (rf"\b{_DTYPE}(?=\[)", Keyword.Type),
            (r"-?\d+(\.\d*)?(e[+-]?\d+)?", Number),
            (r"#[^\n]*", Comment.Single),
            (r"[^\[\]=\w#]+", Text),
            (r"\w+", Text),
            (r".", Text),
        ],
    }


class StableHloLexer(RegexLexer):
    """Lexer for MLIR text in the StableHLO, func, sdy and chlo dialects."""

    name = "StableHLO"
    aliases = ["stablehlo", "mlir"]
    tokens = {
        "root": [
            (r"//[^\n]*", Comment.Single),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"#loc\d*|\bloc\(", Comment.Preproc),
            (r"%[\w.#]+", Name.Variable),
            (r"@[\w.$]+", Name.Function),
            (r"\b(module|func\.func|public|private|attributes|return|func\.return|applies|across|dimensions|dense|to|at|callsite|unknown|init)\b", Keyword),
            (r"\b(tensor|memref|vector|complex|index|i\d+|ui\d+|si\d+|f\d+|bf16|tuple|none|token)\b", Keyword.Type),
            (r"\b[a-z_]+\.[\w.]+", Name.Builtin),
            (r"-?\d+(\.\d+)?(e[+-]?\d+)?", Number),
            (r"[{}()\[\]<>,:=]|->", Punctuation),
            (r"\s+", Whitespace),
            (r"\w+", Text),
            (r".", Text),
        ],
    }


class HloLexer(RegexLexer):
    """Lexer for XLA HLO text (``Lowered.as_text('hlo')``, ``Compiled.as_text()``)."""

    name = "HLO"
    aliases = ["hlo"]
    tokens = {
        "root": [
            (r"//[^\n]*|/\*.*?\*/", Comment),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"\b(HloModule|ENTRY|ROOT)\b", Keyword),
            (rf"\b{_DTYPE}(?=\[)", Keyword.Type),
            (r"\b(metadata|backend_config|frontend_attributes|sharding|calls|to_apply|condition|body|kind|dimensions|slice|lhs_contracting_dims|rhs_contracting_dims|lhs_batch_dims|rhs_batch_dims|channel_id|replica_groups|source_target_pairs|custom_call_target|origin)(=)", bygroups(Name.Attribute, Operator)),
            (r"(=)(\s*)(\S+\s)?([a-z][\w-]*)(\()", bygroups(Operator, Whitespace, Keyword.Type, Name.Builtin, Punctuation)),
            (r"%?[\w.-]+(?=\s*=)", Name.Variable),
            (r"%[\w.-]+", Name.Variable),
            (r"-?\d+(\.\d+)?(e[+-]?\d+)?", Number),
            (r"[{}()\[\],:=]|->", Punctuation),
            (r"\s+", Whitespace),
            (r"\w+", Text),
            (r".", Text),
        ],
    }


LEXERS = {"jaxpr": JaxprLexer, "stablehlo": StableHloLexer, "hlo": HloLexer}
_FORMATTER = HtmlFormatter(noclasses=True, nowrap=True, style="default")


def highlight_html(text: str, language: str) -> Html:
    """Highlighted HTML (inline styles, no wrapper) for ``language`` in ``LEXERS``."""
    return Html(_pygments_highlight(text, LEXERS[language](), _FORMATTER))


def code_html(text: str, language: str, max_highlight_bytes: int) -> Html:
    """Highlight ``text`` if it fits the budget, else escape it plainly."""
    if language in LEXERS and len(text.encode("utf-8", "ignore")) <= max_highlight_bytes:
        return highlight_html(text, language)
    return escape(text)
