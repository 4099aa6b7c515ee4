"""Syntax highlighting for jaxpr, StableHLO/MLIR and HLO text.

Highlighted: ops (``<b>``), types (``<i>``), keywords (``<b class=k>``), symbols
(``<b class=f>``) and comments, HLO ``metadata={...}`` included (``<i class=c>``).
SSA value names and numbers are left plain: they are most of the tokens of a
module, and colouring them doubled the HTML without helping anyone read it.
Strings are matched, so nothing inside one is taken for a token, and left plain.
Unstyled (a sanitiser stripped the stylesheet), ops read bold and types italic.

The text is escaped first (``<`` then never occurs in it, so the patterns spell
it ``&lt;``); each match is then the gap before a marked token, and the token.
``re`` would try every alternative at every character; the gap instead skips
runs of characters no token starts with, plain tokens (strings, SSA names,
jaxpr names no keyword or dtype starts with) and words at whose start no token
matched (none starts inside a word), so the alternatives are tried at word
starts and a few punctuation marks only. ASCII text, the usual case, gets each
pattern's ``re.ASCII`` twin, whose ``\\w`` and ``\\b`` tests are cheaper; on
ASCII text the two match alike.

On a GPT-2-small report's three IR texts (cut at 500 lines, 100 KB), best of 60
runs per text alternating with the previous version, Python 3.11: 3.6 ms in all
(jaxpr 0.9, StableHLO 1.6, HLO 1.1), where trying the alternatives at every
position with ``finditer`` and escaping between matches took 13.7 ms; callgrind
counts 3.9 times fewer instructions. Pygments ``RegexLexer`` s with inline
styles took 0.73 s for this project's 620 KB MLP train step and tripled the HTML.
"""

from __future__ import annotations

import re

from jaxshow.render.markup import Html, escape_text

_ELEMENTS = {"o": ("<b>", "</b>"), "t": ("<i>", "</i>"), "k": ("<b class=k>", "</b>"), "f": ("<b class=f>", "</b>"), "c": ("<i class=c>", "</i>")}
"""How each kind of token is written; the gap and the text's end (``end``) write no element."""

_STRING = r'"(?:\\.|[^"\\\n])*"'
_XLA_DTYPE = r"(?:pred|token|bf16|f8e4m3fn|f8e5m2|f16|f32|f64|s4|s8|s16|s32|s64|u4|u8|u16|u32|u64|c64|c128)"
_JAX_KEYWORDS = ("lambda", "let", "in")
_JAX_DTYPES = ("bool", "bf16", "f8_e4m3fn", "f8_e5m2", "f16", "f32", "f64", "i4", "i8", "i16", "i32", "i64", "u4", "u8", "u16", "u32", "u64", "c64", "c128", r"key&lt;\w+>")
_JAX_INITIALS = "".join(sorted({word[0] for word in _JAX_KEYWORDS + _JAX_DTYPES}))
_SHAPE = r"\[[^\]\n]*+\](?:\{[^}\n]*+\})?+"

_LANGUAGES = {
    # language: (the characters a marked or plain token can start with,
    #            plain tokens, taken whole and left unmarked (no marked token can start where one does),
    #            marked tokens, the first that matches wins; a quantifier is possessive
    #            where giving back could never help (it can't take the character that must
    #            follow, or nothing follows): same matches, no retries)
    "jaxpr": (
        "#a-zA-Z_",
        (rf"(?<!= )[^\W{_JAX_INITIALS}]\w*",),  # words that start no keyword or dtype and follow no "= " (ops do)
        rf"(?P<c>#[^\n]*)|\b(?:(?P<k>(?:{'|'.join(_JAX_KEYWORDS)})\b)|(?P<t>(?:{'|'.join(_JAX_DTYPES)}){_SHAPE}))|(?P<o>(?<== )[a-z_]\w*)",
    ),
    "stablehlo": (
        '/#"%@a-zA-Z_',
        (_STRING, r"%[\w.#-]+"),
        r"(?P<c>//[^\n]*|#loc\d*|\bloc(?=\())|(?P<f>@[\w.$-]+)"
        r"|\b(?:(?P<k>(?:module|func\.func|public|private|attributes|return|applies|across|dimensions|dense|callsite|unknown|init)\b)"
        r"|(?P<t>tensor&lt;[^>\n]*>|(?:i\d+|ui\d+|si\d+|f\d+|bf16|index|complex)\b)|(?P<o>[a-z_]++\.[a-z_][\w.]*))",
    ),
    "hlo": (
        '/"%a-zA-Z_',
        (_STRING, r"%[\w.-]+"),
        r'(?P<c>/\*.*?\*/|//[^\n]*|\bmetadata=\{(?:[^{}"\n]++|"(?:[^"\\\n]++|\\.)*+")*+\})'
        rf"|\b(?:(?P<k>(?:HloModule|ENTRY|ROOT)\b)|(?P<t>{_XLA_DTYPE}{_SHAPE})|(?P<o>[a-z][\w-]*+(?=\()))",
    ),
}


def _compile(starts: str, plain: tuple[str, ...], marked: str, flags: int) -> re.Pattern[str]:
    """The gap up to the next marked token (or the text's end), then that token.

    The gap takes runs of characters outside ``starts``, plain tokens and the escapes
    ``&lt;`` and ``&amp;`` (no token starts inside one); where those stop, the marked
    tokens are tried (the lazy ``*?``), and failing them the gap takes a whole word or
    one other character. The tail matches at the text's end at the latest, so the
    first way through succeeds and nothing is tried twice.
    """
    run = f"[^&{starts}]*+"
    skip = f"{run}(?:(?:{'|'.join(('&(?:lt|amp);', *plain))}){run})*+"
    return re.compile(rf"(?P<gap>{skip}(?:(?:\w+|[\s\S]){skip})*?)(?:{marked}|\Z(?P<end>))", flags)


def _tags(pattern: re.Pattern[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The start tags and the end tags each group of ``pattern`` is written with, by group number."""
    tags = [("", "")] * (pattern.groups + 1)
    for name, number in pattern.groupindex.items():
        tags[number] = _ELEMENTS.get(name, ("", ""))
    starts, ends = zip(*tags)
    return starts, ends


_PATTERNS = {language: (_compile(*spec, 0), _compile(*spec, re.ASCII)) for language, spec in _LANGUAGES.items()}
"""Each language's pattern for any text, then for ASCII text (indexed by ``str.isascii()``)."""
_TAGS = {language: _tags(patterns[0]) for language, patterns in _PATTERNS.items()}


def highlight_html(text: str, language: str) -> Html:
    """Escaped ``text`` with its ops, types, keywords, symbols and comments marked (see ``_ELEMENTS``)."""
    pattern = _PATTERNS[language][text.isascii()]
    starts, ends = _TAGS[language]
    # Group 1 is the gap; lastindex is the group of the marked token (or of the text's end).
    return Html("".join([f"{m[1]}{starts[k]}{m[k]}{ends[k]}" for m in pattern.finditer(escape_text(text)) for k in (m.lastindex,)]))


def code_html(text: str, language: str, max_highlight_bytes: int) -> Html:
    """Highlight ``text`` if it fits the budget, else escape it plainly."""
    if language in _PATTERNS and len(text) <= max_highlight_bytes:
        return highlight_html(text, language)
    return Html(escape_text(text))
