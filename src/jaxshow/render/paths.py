"""How a report names a file of the user's: relative to the kernel's folder, under ``~``, or as it is. No JAX, no IPython.

The records keep each path whole; only what is shown is shortened, and the HTML
keeps the whole path as the ``title`` of the shortened text. Installed code (a
library's file, the standard library's: :func:`jaxshow.installed.is_installed`,
the rule capture asks too) and a cell (``In[4]``) are shown as they are.
"""

from __future__ import annotations

import os
import re
from typing import Callable

from jaxshow.installed import is_installed
from jaxshow.render.limits import TextBudget, clean
from jaxshow.render.markup import Html, escape, escape_attribute, escape_text

Form = Callable[[str, TextBudget], str]
"""How a text is held to the budget: :func:`~jaxshow.render.limits.line` or :func:`~jaxshow.render.limits.message`."""
Place = Callable[[str, TextBudget, Form], str]
""":func:`located` or :func:`located_html`: a text with places in files, in the form being rendered."""
_LOCATED = re.compile(r"(?<![\w.~/-])(/[^\s:()\[\]{}\"'<>,;=]+)(?=:\d)")
"""An absolute path followed by ``:line``, as a report names a place in a file."""


def shown_path(path: str, cwd: str, home: str) -> str:
    """``/work/proj/pkg/layers.py`` -> ``pkg/layers.py`` under ``cwd`` (``/work/proj``), ``~/lib/x.py`` under ``home``;
    any other path, installed code (a library's file, under the current folder or home too) or a cell's name as it is."""
    if not os.path.isabs(path) or is_installed(path):
        return path
    for folder, prefix in ((cwd, ""), (home, "~/")):
        folder = folder.rstrip(os.sep)
        if folder and path.startswith(folder + os.sep):
            return prefix + path[len(folder) + 1:]
    return path


def places(budget: TextBudget) -> tuple[str, str]:
    """The folders a report shortens paths under: the budget's, else the current folder and the home folder."""
    return budget.cwd or os.getcwd(), budget.home or os.path.expanduser("~")


def shortened(text: object, budget: TextBudget) -> tuple[str, dict[str, str]]:
    """``text``, clean, with each ``path:line`` in it shown by :func:`shown_path`, and each shortened path's whole path."""
    text = clean(str(text))
    if "/" not in text:
        return text, {}
    cwd, home = places(budget)
    whole: dict[str, str] = {}

    def shorten(match: re.Match) -> str:
        shown = shown_path(match.group(1), cwd, home)
        if shown != match.group(1):
            whole[shown] = match.group(1)
        return shown

    return _LOCATED.sub(shorten, text), whole


def located(text: object, budget: TextBudget, form: Form | None = None) -> str:
    """``text`` (a place, a note, an explanation) with its paths shortened, through ``form`` (``line``, ``message``)."""
    short, _ = shortened(text, budget)
    return form(short, budget) if form is not None else short


def located_html(text: object, budget: TextBudget, form: Form | None = None) -> Html:
    """:func:`located` as HTML: each shortened path in a ``<span>`` whose ``title`` is the whole path."""
    short, whole = shortened(text, budget)
    html = escape(form(short, budget) if form is not None else short)
    if not whole:
        return html
    shown = re.compile(r"(?<![\w.~/-])(" + "|".join(re.escape(escape_text(s)) for s in sorted(whole, key=len, reverse=True)) + r")(?=:\d)")
    titles = {escape_text(s): w for s, w in whole.items()}
    return Html(shown.sub(lambda m: f'<span title="{escape_attribute(titles[m.group(1)])}">{m.group(1)}</span>', html))
