"""The documentation against the magics it documents: each usage line the docs quote names the options the magic
takes, no more and no fewer, and each option and subcommand the magic's help lists is documented on its page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from shellrun import run_captured

from jaxshow.cache_magic import CacheMagics
from jaxshow.config_magic import JaxConfigMagics
from jaxshow.dump_magic import DumpMagics
from jaxshow.stages_magic import StagesMagics

ROOT = Path(__file__).resolve().parent.parent
PARSERS = {
    "jaxstages": StagesMagics.jaxstages.parser,
    "jaxcache": CacheMagics.jaxcache.parser,
    "jaxconfig": JaxConfigMagics.jaxconfig.parser,
    "jaxdump": DumpMagics.jaxdump.parser,
}
PAGES = {"jaxstages": "docs/user-guide.md", "jaxcache": "docs/jaxcache.md", "jaxconfig": "docs/jaxconfig.md",
         "jaxdump": "docs/jaxdump.md"}


def _page(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def _bracket_groups(usage: str) -> list[str]:
    """The outermost ``[...]`` parts of a usage line, spaces collapsed: ``[--save DIR]``, ``[--scopable | --flags]``."""
    groups, depth, start = [], 0, 0
    for i, char in enumerate(usage):
        if char == "[":
            depth, start = depth + 1, i if depth == 0 else start
        elif char == "]":
            depth -= 1
            if depth == 0:
                groups.append(" ".join(usage[start:i + 1].split()))
    return groups


def _magic_usage(magic: str) -> list[str]:
    """The option groups of the magic's own usage line, as ``%magic?`` prints it."""
    return _bracket_groups(PARSERS[magic].format_usage())


def _quoted_usages(path: str, magic: str) -> list[str]:
    """Each usage line of ``magic`` the page quotes, in a code span or block (a table's ``\\|`` read as ``|``)."""
    return [line.replace("\\|", "|") for line in re.findall(rf"%%?{magic}( \[[^`\n]*)", _page(path))]


@pytest.mark.parametrize(("magic", "path"), [
    ("jaxstages", "README.md"), ("jaxstages", "docs/user-guide.md"),
    ("jaxconfig", "README.md"), ("jaxconfig", "docs/jaxconfig.md"),
    ("jaxdump", "README.md"), ("jaxdump", "docs/jaxdump.md"),
])
def test_a_quoted_usage_line_names_the_options_the_magic_takes(magic, path):
    usages = _quoted_usages(path, magic)
    assert usages, f"{path} quotes no usage line of %{magic}"
    for usage in usages:
        assert sorted(_bracket_groups(usage)) == sorted(_magic_usage(magic)), usage


@pytest.mark.parametrize("magic", sorted(PARSERS))
def test_each_option_of_a_magic_is_documented_on_its_page(magic):
    page = _page(PAGES[magic])
    options = [action.option_strings for action in PARSERS[magic]._actions if action.option_strings]
    undocumented = [strings for strings in options
                    if not any(re.search(rf"`[^`\n]*(?<![\w-]){re.escape(s)}(?![\w-])[^`\n]*`", page) for s in strings)]
    assert options and undocumented == []


def test_each_subcommand_of_jaxcache_is_documented_with_its_line():
    words = next(action for action in PARSERS["jaxcache"]._actions if action.dest == "words")
    subcommands = [part.split()[0] for part in words.help.split(" (")[0].split(" | ") if part.split()[0] != "NAME"]
    assert subcommands == ["on", "off", "persistent", "clear", "freeze", "thaw"]
    page = _page(PAGES["jaxcache"])
    assert [word for word in subcommands if f"`%jaxcache {word}" not in page] == []


def _fenced_blocks(path: str) -> list[str]:
    """The texts of the page's fenced code blocks, in order."""
    return re.findall(r"^```[a-z]*\n(.*?)^```$", _page(path), flags=re.M | re.S)


def _jaxshows_own_lines(text: str) -> list[str]:
    """The lines of a %jaxcache report that are jaxshow's on every JAX: less JAX's own explanation (``| …``), the user's
    trace-time print (jax 0.7 writes a tracer ``JitTracer<float32[3]>``) and the count of JAX's helper compiles (fewer
    where an earlier test compiled the same eager operations)."""
    return [line for line in text.splitlines()
            if not line.lstrip().startswith("|") and "JitTracer" not in line and "its own helper functions" not in line]


def test_the_quoted_jaxcache_report_of_a_print_at_trace_time_is_what_jaxcache_shows(ip):
    blocks = _fenced_blocks(PAGES["jaxcache"])
    at = next(i for i, block in enumerate(blocks) if block.startswith("%%jaxcache\nf(jnp.ones(3))"))
    definition, cell, quoted = blocks[at - 1:at + 2]
    for source in ("import jax, jax.numpy as jnp", definition, cell):
        result, cap = run_captured(ip, source)
        assert result.success, source
    assert _jaxshows_own_lines(cap.outputs[-1].data["text/plain"]) == _jaxshows_own_lines(quoted)
