"""Option parsing shared by jaxshow's magics: ``magic_arguments`` with usage in every error (IPython only).

IPython builds a magic's usage line from its function name after one ``%``
(``MagicHelpFormatter``'s prefix), right for a line magic and wrong for a cell
magic, which is typed ``%%name``. :func:`cell_magic_arguments` names the parser
``%name`` through IPython's own ``magic_arguments(name=...)``, so the docstring
(``%%jaxstages?``) and every usage error show ``%%jaxstages [--all] ...``.
"""

from __future__ import annotations

import argparse
import functools
import keyword
import re
import unicodedata
from pathlib import Path
from typing import Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic_arguments import magic_arguments, parse_argstring, real_name

try:
    from IPython.core.magic import output_can_be_silenced
except ImportError:  # IPython 7 (Colab's 7.34): a trailing ';' never silenced a magic's value there

    def output_can_be_silenced(magic: Any) -> Any:
        return magic

from IPython.utils.process import arg_split
from IPython.utils.text import DollarFormatter

from jaxshow.render.limits import TextBudget
from jaxshow.render.plain import KEEP, paragraph

_IPYTHON_OUTPUT_NAME = re.compile(r"^_+$|^_i+$|^_i?\d+$")


class cell_magic_arguments(magic_arguments):  # noqa: N801 - named like the decorator it extends
    """``@magic_arguments()`` for a cell magic: its usage reads ``%%name``, as the magic is typed."""

    def __call__(self, func: Any) -> Any:
        self.name = "%" + real_name(func)
        return super().__call__(func)


class GivenOnce(argparse.Action):
    """``action=`` of an option that takes a value: given again with another value (``--save a --save b``), a usage
    error naming both, where argparse would keep the last without a word; given again with the same value, that value.
    A flag (``store_true``) given twice is the flag given once.

    ``meaning=`` (one of :func:`directory_meant`, :func:`name_meant`, :func:`counter_meant`) reads a value as the magic
    takes it, so that one value spelled two ways (``--save runs --save ./runs/``, ``-n f -n ｆ``) counts once."""

    def __init__(self, *args: Any, meaning: Callable[[str], Any] = str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.meaning = meaning

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        earlier = getattr(namespace, self.dest, self.default)
        if earlier is not self.default and self._meant(earlier) != self._meant(values):
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice, {_given(earlier)} and {_given(values)}; "
                         "give it once")
        setattr(namespace, self.dest, values)

    def _meant(self, value: Any) -> Any:
        values = value if isinstance(value, list) else [value]
        return [self.meaning(_unquote(v)) if isinstance(v, str) else v for v in values]


def directory_meant(text: str) -> str:
    """A directory option's value as the path it names from here: ``runs``, ``./runs/`` and ``~/x`` read absolute; an
    empty one (refused by the magic) as typed."""
    return str(Path(text).expanduser().absolute()) if text.strip() else text


def name_meant(text: str) -> str:
    """A function name as :func:`written_name` reads it (``ｆ`` is ``f``, ``grad( f )`` is ``grad(f)``), else as typed."""
    return written_name(text) or text


def counter_meant(text: str) -> Any:
    """A dump file named by its counter (``2``, ``02``) or its file name, as ``%jaxdump`` reads it."""
    return int(text) if text.isdigit() else text


def _given(value: Any) -> str:
    """An option's value as typed, quoted: ``'runs/a'``, ``'1 2'`` for ``--diff 1 2``."""
    return repr(" ".join(map(str, value)) if isinstance(value, list) else _unquote(str(value)))


def fitted(text: str, taken: str = "") -> str:
    """``text`` wrapped at the terminal's width line by line, after ``taken`` (what IPython writes before it): a usage
    line under its options, each ``[...]`` whole; any other line two columns in."""
    out = []
    for number, piece in enumerate(text.split("\n")):
        first = taken if number == 0 else ""
        if re.match(r"%%?\w+ \[", piece):
            name, options = piece.split(" ", 1)
            kept = re.sub(r"\[[^\]]*\]", lambda m: m[0].replace(" ", KEEP), options)
            out.append(paragraph(f"{first}{name} ", kept, " " * (len(name) + 1), TextBudget()))
        else:
            out.append(paragraph(first, piece, "  ", TextBudget()))
    return "\n".join(out)[len(taken):]


def fitted_errors(magic: Any) -> Any:
    """``magic`` whose ``UsageError`` is :func:`fitted` after IPython's ``UsageError: ``."""

    @functools.wraps(magic)
    def run(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        try:
            return magic(*args, **kwargs)
        except UsageError as exc:
            raise UsageError(fitted(str(exc), "UsageError: ")) from None

    return run


def usage(magic: Any) -> str:
    """The magic's usage on one line, as it is typed: ``%%jaxstages [--all] ... [-o NAME]``, ``%jaxcache [-o NAME] ...``."""
    text = magic.parser.format_usage()
    return " ".join(text.split("::", 1)[-1].split())


def parse_options(magic: Any, line: str, *, intermixed: bool = False) -> Any:
    """``parse_argstring`` whose ``UsageError`` also carries the usage line, with quoted words unquoted.

    IPython splits a magic's line keeping the quotes around a quoted word
    (``--save "my runs"`` gives ``'"my runs"'``); here they go, and a quote left open is a ``UsageError`` too
    (the split's ``ValueError: No closing quotation``). ``intermixed``
    lets options come between positional words (``freeze --max-traces 2 step``).
    """
    try:
        args = magic.parser.parse_intermixed_args(arg_split(line)) if intermixed else parse_argstring(magic, line)
    except (UsageError, ValueError) as exc:
        raise UsageError(f"{exc}{_manual_hint(magic, line)}\n{usage(magic)}") from None
    for key, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, key, _unquote(value))
        elif isinstance(value, list):
            setattr(args, key, [_unquote(v) if isinstance(v, str) else v for v in value])
    return args


def _manual_hint(magic: Any, line: str) -> str:
    """`` (%%jaxstages? shows the manual)`` for a line that asked for help as a shell command does (``-h``, ``--help``):
    a magic's manual is its ``?``, which the options do not offer."""
    asked = {"-h", "--help"} & set(line.split())
    return f" ({usage(magic).split()[0]}? shows the manual)" if asked else ""


def silenced(line: str) -> tuple[str, bool]:
    """A line magic's options without a trailing ``;``, and whether there was one (then nothing is displayed).

    IPython's ``output_can_be_silenced`` only drops a returned value, and
    tokenizes the line to look for the ``;`` (an option like ``jax_[a-z]*``
    then raises); the line magics that display check for it here instead.
    """
    stripped = line.rstrip()
    return (stripped[:-1], True) if stripped.endswith(";") else (line, False)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def expand_variables(shell: Any, line: str) -> str:
    """``{expr}`` and ``$name`` in a magic's line filled from the user's namespace, as IPython expands line magics.

    A line that does not expand (an unknown name, a stray brace) stays as written.
    """
    if "{" not in line and "$" not in line:
        return line
    try:
        return DollarFormatter().vformat(line, args=[], kwargs=shell.user_ns)
    except Exception:  # noqa: BLE001 - IPython's var_expand keeps the line on any error too
        return line


def dotted_name(text: str) -> str | None:
    """``text`` as Python reads a name (``step``, ``model.step``, ``損失``) in source, or ``None`` if it is not one.

    Python normalises identifiers (NFKC), so ``ｆ`` typed in a magic's line is the ``f`` of the cell.
    """
    name = unicodedata.normalize("NFKC", text)
    return name if all(part.isidentifier() for part in name.split(".")) else None


def written_name(text: str) -> str | None:
    """``text`` as a report names a function, ``step``, ``model.step`` or with the transformations written around it
    (``grad(g)``, ``jit(vmap(f))``), normalised as :func:`dotted_name`; ``None`` if it is none of these."""
    layers = []
    name = text.replace(" ", "")
    while name.endswith(")") and "(" in name:
        layer, _, name = name[:-1].partition("(")
        if not layer.isidentifier():
            return None
        layers.append(layer)
    inner = dotted_name(name)
    return None if inner is None else "".join(f"{layer}(" for layer in layers) + inner + ")" * len(layers)


def bare_name(written: str) -> str:
    """The function's own name in a name :func:`written_name` gives: ``g`` in ``grad(jit(g))``."""
    return written[written.rfind("(") + 1:].rstrip(")")


def output_name_error(shell: Any, name: str) -> str | None:
    """Why ``name`` cannot receive a report (``-o NAME``), or ``None`` when it can.

    It must be a plain identifier that is not a keyword, a dunder name
    (``__builtins__``), or one of IPython's own names (``In``, ``Out``, ``_``,
    ``_i3``, ``get_ipython``), which the shell owns.
    """
    if not name.isidentifier():
        return f"-o needs a variable name, got {name!r}"
    if keyword.iskeyword(name):
        return f"-o {name}: {name!r} is a Python keyword"
    if name.startswith("__") and name.endswith("__"):
        return f"-o {name}: names like {name} belong to Python"
    if _IPYTHON_OUTPUT_NAME.match(name) or name in getattr(shell, "user_ns_hidden", {}):
        return f"-o {name}: {name} is one of IPython's own names"
    return None
