"""``%jaxconfig`` and ``jaxshow.config_report``: checked against the installed JAX's own config objects."""

from __future__ import annotations

import dataclasses
import fnmatch
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser

import jax
import pytest
from IPython.core.error import UsageError
from jax._src import config as jax_config
from shellrun import run_captured

import jaxshow
from jaxshow import _jax_compat, render
from jaxshow.config_inventory import VALUE_REPR_CHARS, config_report
from jaxshow.reprs import safe_repr
from jaxshow.render import to_html, to_text
from jaxshow.report import ConfigOption, ConfigReport

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
BACKEND_VALIDATED = {"jax_num_cpu_devices", "jax_cpu_get_local_topology_timeout_minutes",
                     "jax_cpu_get_global_topology_timeout_minutes"}
def _flat(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces: the text form wraps prose at the terminal's width."""
    return " ".join(text.split())


USAGE = "%jaxconfig [--changed] [-o NAME] [--scopable | --flags] [FILTER]"


def _enable_x64(value: bool):
    """``jax.enable_x64`` (jax >= 0.8), else ``jax.experimental.enable_x64`` (0.7)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(value)
    from jax.experimental import enable_x64, disable_x64

    return enable_x64() if value else disable_x64()


def _holders():
    return jax.config._value_holders


def _jax_kind(holder) -> str:
    if isinstance(holder, jax_config.State):
        return "scopable"
    return "flag" if isinstance(holder, jax_config.Flag) else "unknown"


def _jax_trace_context() -> set[str] | None:
    """The options in JAX's trace context as JAX lists them (jax >= 0.10.2), else as its definitions in
    ``jax._src.config`` pass ``include_in_trace_context=True`` (a C++ trace context, jax 0.8 to 0.10.1); ``None`` where
    ``trace_context()`` is Python (jax 0.7)."""
    try:
        return set(jax_config.trace_context_names()) & set(jax.config.values)
    except (AttributeError, NotImplementedError):
        pass
    if hasattr(jax_config.trace_context, "__code__"):
        return None
    definitions = re.split(r"\n(?=\s*\w+ = )", inspect.getsource(jax_config))  # indented too: under `if jaxlib_...`
    return {name for chunk in definitions if "include_in_trace_context=True" in chunk
            for name in re.findall(r"name=['\"](\w+)['\"]", chunk)[:1]} & set(jax.config.values)


@pytest.fixture
def debug_nans():
    """``jax_debug_nans`` set globally for one test, and put back whatever happens."""
    before = jax.config.values["jax_debug_nans"]
    jax.config.update("jax_debug_nans", True)
    try:
        yield
    finally:
        jax.config.update("jax_debug_nans", before)


@pytest.fixture(scope="module")
def subprocess_facts():
    """One fresh process with ``JAX_DEBUG_NANS=1``: the report before and after ``jax.devices()``."""
    script = textwrap.dedent("""
        import json, jax
        from jaxshow.config_inventory import config_report
        def facts(report):
            return {"up": report.backends_initialized, "platforms": list(report.backend_platforms),
                    "changed": [(o.name, o.source, o.value_repr, [list(e) for e in o.env_vars]) for o in report.options],
                    "cpu": {o.name: o.backend_start for o in config_report("cpu").options}}
        before = facts(config_report(changed=True))
        from jax._src import xla_bridge
        still_down = not xla_bridge.backends_are_initialized()
        jax.devices()
        after = facts(config_report(changed=True))
        print(json.dumps({"before": before, "after": after, "still_down": still_down,
                          "text": str(config_report("num_cpu"))}))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
    env.update(JAX_DEBUG_NANS="1", PYTHONPATH=os.pathsep.join(filter(None, (SRC, os.environ.get("PYTHONPATH")))))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- the inventory against JAX's own objects -----------------------------------------------------


def test_every_option_of_the_running_jax_with_its_kind():
    report = config_report()
    holders = _holders()
    names = sorted(jax.config.values)
    assert report.total_options == len(jax.config.values) == len(holders)
    assert [o.name for o in report.options] == names
    assert report.scopable_options == sum(isinstance(h, jax_config.State) for h in holders.values())
    assert report.flag_options == sum(isinstance(h, jax_config.Flag) for h in holders.values())
    assert report.scopable_options + report.flag_options == report.total_options
    assert {o.name: o.kind for o in report.options} == {n: _jax_kind(holders[n]) for n in names}
    assert report.jax_version == jax.__version__
    assert repr(report) == (f"<ConfigReport jax {jax.__version__}: {len(names)} options ({report.scopable_options} scopable, "
                            f"{report.flag_options} flags); {len(names)} shown; "
                            f"{'backend up' if report.backends_initialized else 'no backend yet'}>")


def test_values_defaults_and_help_as_jax_has_them():
    report = {o.name: o for o in config_report().options}
    for name, value in jax.config.values.items():
        if value is None or type(value) in (bool, int, float, str):
            assert report[name].value_repr == repr(value), name
    x64 = report["jax_enable_x64"]
    assert (x64.value_repr, x64.default_repr, x64.is_default, x64.source) == ("False", "False", True, "default")
    assert x64.help_text == jax.config.meta["jax_enable_x64"][2]["help"]
    dump = report["jax_dump_ir_to"]
    assert (dump.kind, dump.default_repr, dump.env_vars) == ("flag", "''", (("JAX_DUMP_IR_TO", None),))
    assert dump.help_text == jax.config.meta["jax_dump_ir_to"][2]["help"]
    assert report["jax_logging_level"].default_repr is None
    assert report["jax_logging_level"].default_unavailable.startswith("JAX computes it at import: logging.getLevelName(")


def test_trace_context_and_jit_key_membership():
    report = {o.name: o for o in config_report().options}
    expected = _jax_trace_context()
    if expected is not None:
        assert {n for n, o in report.items() if o.in_trace_context} == expected
    assert report["jax_enable_x64"].in_trace_context is True
    jit_key_known = expected is not None  # jax 0.7 puts some options into jaxlib's jit state through hooks: unknown
    assert expected is None or len(expected) > 20
    for name in ("jax_debug_nans", "jax_log_compiles", "jax_explain_cache_misses"):
        option = report[name]
        assert (option.in_trace_context, option.in_jit_key, option.invalidates_caches) == (
            (False, False, False) if jit_key_known else (False, None, None)), name
    if jit_key_known:
        assert (report["jax_optimization_level"].in_trace_context, report["jax_optimization_level"].in_jit_key) == (False, True)
        assert report["jax_enable_x64"].in_jit_key is True


def test_backend_start_options():
    report = {o.name: o for o in config_report().options}
    assert {n for n, o in report.items() if o.backend_start == "raises"} == BACKEND_VALIDATED & set(report)
    assert report["jax_platforms"].backend_start == "ignored"
    assert "silently ignored" in report["jax_platforms"].backend_start_reason


def test_reading_changes_nothing():
    before = dict(jax.config.values)
    with _enable_x64(True):
        config_report()
        config_report("x64", changed=True, kind="scopable")
    assert dict(jax.config.values) == before


def test_explaining_misses_on_jaxlib_09_warns_of_its_crash(ip):
    """jaxlib 0.9.x can crash the process while it explains a tracing-cache miss (a collection frees a jitted function
    mid-walk); a user who turns jax_explain_cache_misses on there is told, in the report and the text; elsewhere not."""
    from jax._src.lib import version as jaxlib_version

    crashes = (0, 9) <= tuple(jaxlib_version)[:2] < (0, 10)
    assert config_report("explain").notes == ()
    jax.config.update("jax_explain_cache_misses", True)
    try:
        result, cap = run_captured(ip, "%jaxconfig explain -o rep")
    finally:
        jax.config.update("jax_explain_cache_misses", False)
    assert result.success
    from jaxshow.config_inventory import EXPLAINING_CRASHES
    assert ip.user_ns["rep"].notes == ((EXPLAINING_CRASHES,) if crashes else ())
    assert ("can crash the process" in _flat(cap.outputs[0].data["text/plain"])) is crashes


def test_bad_kind_is_a_value_error():
    with pytest.raises(ValueError, match="kind must be 'scopable', 'flag' or None, got 'flags'"):
        config_report(kind="flags")


@pytest.mark.parametrize("wrong", [42, b"x64", ["x64"]])
def test_a_filter_that_is_not_a_str_is_a_type_error_naming_the_argument(wrong):
    # jaxshow.config_report(42) raised "TypeError: 'int' object is not iterable" from config_inventory._matches.
    with pytest.raises(TypeError, match=f"^filter must be a str \\(part of an option's name, or a glob\\) or None, got {type(wrong).__name__}$"):
        jaxshow.config_report(wrong)


@pytest.mark.parametrize("wrong", ["yes", 1, None])
def test_changed_that_is_not_a_bool_is_a_type_error(wrong):
    # jaxshow.config_report(changed="no") kept only the changed options, as True would: any truthy value did.
    with pytest.raises(TypeError, match=f"^changed must be True or False, got {type(wrong).__name__}$"):
        jaxshow.config_report(changed=wrong)


def test_public_api_is_the_inventory():
    report = jaxshow.config_report("x64", kind="scopable")
    assert isinstance(report, jaxshow.ConfigReport)
    assert [o.name for o in report.options] == [n for n in sorted(jax.config.values) if "x64" in n
                                                 and isinstance(_holders()[n], jax_config.State)]


# --- %jaxconfig in a real shell ---------------------------------------------------------------------


def _below_headline(text: str) -> list[str]:
    """The lines after the headline, which ends '… flags (no context manager)' and may wrap."""
    return text.split(" manager)\n", 1)[1].splitlines()


def test_filter_substring_text_and_html(ip):
    result, cap = run_captured(ip, "%jaxconfig x64")
    assert result.success and len(cap.outputs) == 1
    names = [n for n in sorted(jax.config.values) if "x64" in n]
    text = cap.outputs[0].data["text/plain"]
    total = len(jax.config.values)
    assert _below_headline(text)[0] == f"  showing {len(names)} of {total} (matching 'x64')"
    row = next(line for line in text.splitlines() if line.startswith("  jax_enable_x64 "))
    assert row.split() == ["jax_enable_x64", "False", "False", "default", "scopable", "re-trace"]
    html = cap.outputs[0].data["text/html"]
    assert html.count("<details") == len(names) + 1  # one per option's help, one for the column notes
    assert "<summary><code>jax_enable_x64</code></summary>" in html
    assert "Enable 64-bit types to be used" in html
    assert "<script" not in html


def test_filter_glob(ip):
    ip.run_line_magic("jaxconfig", "*cache* -o rep;")
    expected = [n for n in sorted(jax.config.values) if fnmatch.fnmatchcase(n, "*cache*")]
    assert [o.name for o in ip.user_ns["rep"].options] == expected and expected


def test_filter_matching_nothing_lists_near_names(ip):
    result, cap = run_captured(ip, "%jaxconfig x46")
    text = cap.outputs[0].data["text/plain"]
    assert _below_headline(text)[0].startswith(f"  no option name matches 'x46' ({len(jax.config.values)} options); near names: jax_enable_x64")
    assert "no option name matches 'x46'" in cap.outputs[0].data["text/html"]


def test_changed_lists_exactly_the_update(ip, debug_nans):
    ip.run_line_magic("jaxconfig", "--changed -o rep;")
    names = [o.name for o in ip.user_ns["rep"].options]
    assert names == ["jax_debug_nans"]
    option = ip.user_ns["rep"].options[0]
    assert (option.value_repr, option.default_repr, option.source) == ("True", "False", "set")
    result, cap = run_captured(ip, "%jaxconfig --changed")
    text = cap.outputs[0].data["text/plain"]
    assert _flat("1 option differs from the default; none is in JAX's trace context or jit key, so none costs a cache miss") in _flat(text)
    assert "jax_debug_nans  True   False    config.update" in text


def test_an_environment_variable_set_after_import_is_said_to_be_unread(ip, monkeypatch):
    """``os.environ['JAX_DEBUG_NANS'] = '1'`` in a cell after ``import jax`` read 'jax_debug_nans False default', with
    nothing on the variable JAX never read; set before import (or matching the value) it is the value's source, and says
    nothing."""
    monkeypatch.setenv("JAX_DEBUG_NANS", "1")
    result, cap = run_captured(ip, "%jaxconfig debug_nans -o rep")
    assert result.success, result.error_in_exec
    [option] = ip.user_ns["rep"].options
    assert (option.value_repr, option.source, option.env_vars, option.env_unread) == (
        "False", "default", (("JAX_DEBUG_NANS", "1"),), ("JAX_DEBUG_NANS",))
    note = ("JAX_DEBUG_NANS='1' is set, but jax_debug_nans is False: JAX reads JAX_DEBUG_NANS once, at import (it was set "
            "after that, or jax.config.update set another value since); jax.config.update('jax_debug_nans', …) sets it now")
    lines = _below_headline(cap.outputs[0].data["text/plain"])
    at = next(i for i, text in enumerate(lines) if text.startswith("  JAX_DEBUG_NANS="))
    assert lines[at:at + 3] == [
        "  JAX_DEBUG_NANS='1' is set, but jax_debug_nans is False: JAX reads JAX_DEBUG_NANS once, at import",
        "    (it was set after that, or jax.config.update set another value since);",
        "    jax.config.update('jax_debug_nans', …) sets it now"]
    assert note in cap.outputs[0].data["text/html"]
    monkeypatch.setenv("JAX_DEBUG_NANS", "0")
    ip.run_line_magic("jaxconfig", "debug_nans -o rep;")
    assert ip.user_ns["rep"].options[0].env_unread == ()


def test_changed_names_the_options_that_change_cache_keys(ip, debug_nans):
    with _enable_x64(True):
        ip.run_line_magic("jaxconfig", "--changed -o rep;")
    report = ip.user_ns["rep"]
    assert [o.name for o in report.options] == ["jax_debug_nans", "jax_enable_x64"]
    text = _flat(to_text(report))  # prose wraps at the terminal's width
    assert ("2 options differ from the default; 1 of them is in JAX's trace context or jit key, so changing it makes "
            "every jitted function miss its cache at its next call (a value kept the whole session costs nothing): jax_enable_x64") in text
    x64 = report.options[1]
    two = dataclasses.replace(report, options=(x64, dataclasses.replace(x64, name="jax_other")))
    assert ("2 options differ from the default; 2 of them are in JAX's trace context or jit key, so changing one makes "
            "every jitted function miss its cache at its next call") in _flat(to_text(two))


def test_inside_a_context_manager(ip):
    cell = "import jax\nwith _x64(True):\n    get_ipython().run_line_magic('jaxconfig', 'enable_x64 -o rep')"
    ip.user_ns["_x64"] = _enable_x64
    result, cap = run_captured(ip, cell)
    assert result.success
    option = ip.user_ns["rep"].options[0]
    assert (option.name, option.value_repr, option.source, option.global_value_repr) == ("jax_enable_x64", "True", "context", "False")
    text = cap.outputs[0].data["text/plain"]
    row = next(line for line in text.splitlines() if line.startswith("  jax_enable_x64 "))
    assert row.split() == ["jax_enable_x64", "True", "(global:", "False)", "False", "context", "manager", "scopable", "re-trace"]
    assert jax.config.values["jax_enable_x64"] is False


@pytest.mark.parametrize("option, kind", [("--scopable", "scopable"), ("--flags", "flag")])
def test_kind_options(ip, option, kind):
    ip.run_line_magic("jaxconfig", f"{option} -o rep;")
    expected = [n for n in sorted(jax.config.values) if _jax_kind(_holders()[n]) == kind]
    assert [o.name for o in ip.user_ns["rep"].options] == expected


@pytest.mark.parametrize("line, shown", [
    ("*dump* --flags", "matching '*dump*', flags only"),
    ("debug --scopable", "matching 'debug', scopable only"),  # several on every JAX (x64: one on jax 0.7)
])
def test_kind_options_name_what_is_shown_in_the_plural(ip, line, shown):
    """'%jaxconfig *dump* --flags' read 'showing 3 of 133 (matching '*dump*', a flag)': the words for one option."""
    ip.run_line_magic("jaxconfig", f"{line} -o rep;")
    result, cap = run_captured(ip, f"%jaxconfig {line}")
    n, total = len(ip.user_ns["rep"].options), len(jax.config.values)
    assert n > 1 and _below_headline(cap.outputs[0].data["text/plain"])[0] == f"  showing {n} of {total} ({shown})"


def test_changed_names_what_is_shown(ip, debug_nans):
    result, cap = run_captured(ip, "%jaxconfig --changed")
    assert _below_headline(cap.outputs[0].data["text/plain"])[0] == f"  showing 1 of {len(jax.config.values)} (changed from the default)"


def test_flags_and_filter_that_leave_nothing_say_why(ip):
    result, cap = run_captured(ip, "%jaxconfig x64 --flags")
    n = sum("x64" in name for name in jax.config.values)
    assert _below_headline(cap.outputs[0].data["text/plain"])[0] == (
        f"  {n} options match 'x64', but none of them is a flag" if n > 1 else "  1 option matches 'x64', but it is not a flag")


def test_output_stores_the_record_and_semicolon_silences(ip):
    result, cap = run_captured(ip, "%jaxconfig dump_ir -o cfg;")
    assert result.success and cap.outputs == []
    assert isinstance(ip.user_ns["cfg"], ConfigReport)
    assert [o.name for o in ip.user_ns["cfg"].options] == [n for n in sorted(jax.config.values) if "dump_ir" in n]


@pytest.mark.parametrize("line, message", [
    ("--scopable --flags", "argument --flags: not allowed with argument --scopable"),
    ("--bogus", "unrecognized arguments: --bogus"),
    ("x64 extra", "unrecognized arguments: extra"),
    ("-o In", "-o In: In is one of IPython's own names"),
    ("-o 1x", "-o needs a variable name, got '1x'"),
])
def test_bad_options_are_usage_errors(ip, line, message):
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("jaxconfig", line)
    assert type(info.value) is UsageError
    assert str(info.value).startswith(message)
    assert USAGE in str(info.value)


def test_help_is_the_manual(ip):
    doc = ip.find_line_magic("jaxconfig").__doc__
    assert USAGE in doc and "Examples::" in doc and "--flags" in doc


# --- a fresh process: the environment, and the backend -----------------------------------------------


def test_environment_variable_is_the_source(subprocess_facts):
    assert subprocess_facts["before"]["changed"] == [["jax_debug_nans", "environment", "True", [["JAX_DEBUG_NANS", "1"]]]]


def test_backend_status_before_and_after_devices(subprocess_facts):
    before, after = subprocess_facts["before"], subprocess_facts["after"]
    assert (before["up"], before["platforms"]) == (False, [])
    assert subprocess_facts["still_down"]  # the report itself started nothing
    assert (after["up"], after["platforms"]) == (True, ["cpu"])
    assert {n for n, how in after["cpu"].items() if how == "raises"} == BACKEND_VALIDATED
    text = subprocess_facts["text"]
    assert "  backend: up (cpu); options marked 'after start' no longer take a new value" in text
    assert "raises after start (too late now)" in _flat(text)


# --- rendering from hand-built records ----------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_hostile_values_are_escaped_and_bounded():
    hostile = ConfigOption(
        name="jax_</code><script>alert(1)</script>", kind="scopable", value_type="str",
        value_repr=safe_repr("</td><script>x</script>" + "y" * 1000, VALUE_REPR_CHARS), default_repr="'a\u202eb'", is_default=False,
        source="set", help_text="<b>help</b>\n" * 100,
    )
    report = ConfigReport(jax_version="0.0", options=(hostile,), total_options=1, scopable_options=1, flag_options=0,
                          backends_initialized=None, matched_options=1)
    html = to_html(report)
    parser = _Tags()
    parser.feed(html)
    assert "script" not in parser.tags and "b" not in parser.tags
    assert "&lt;/td>&lt;script>" in html
    assert hostile.value_repr.endswith("… (1,025 chars)") and len(hostile.value_repr) < 350
    text = to_text(report)
    assert "\u202e" not in text and "backend: unknown" in text
    assert "… 75 more lines" in html


def test_safe_repr_of_odd_objects():
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no")

    import enum

    class Mode(enum.Enum):
        FAST = "fast"

    class Odd:
        __repr__ = len  # not the user's Python code: run, and it raises

    assert safe_repr(Hostile(), 300) == "<Hostile object; its repr not run>"  # the user's __repr__ is never run
    assert safe_repr(Odd(), 300) == "<Odd object; its repr raised TypeError>"
    assert safe_repr(Mode.FAST, 300) == "Mode.FAST"
    assert safe_repr(None, 300) == "None"
    assert safe_repr("a\nb", 300) == "'a\\nb'"


# --- the _jax_compat shims, on the installed JAX --------------------------------------------------------


def test_compat_holders_and_values():
    holders = _jax_compat.config_holders()
    assert set(holders) == set(jax.config.values)
    state = holders["jax_enable_x64"]
    assert _jax_compat.config_values(state) == (False, False, False)
    with _enable_x64(True):
        assert _jax_compat.config_values(state) == (True, False, True)
    assert _jax_compat.config_values(holders["jax_dump_ir_to"]) == (jax.config.values["jax_dump_ir_to"],) * 2 + (False,)
    assert _jax_compat.config_option_kind(state) == "scopable"
    assert _jax_compat.config_option_kind(holders["jax_dump_ir_to"]) == "flag"
    assert _jax_compat.config_option_kind(object()) == "unknown"


def test_compat_definitions_from_jax_source():
    definitions = _jax_compat.config_definitions(_jax_compat.config_holders())
    assert set(definitions) == set(jax.config.values)
    x64 = definitions["jax_enable_x64"]
    assert (x64.default_known, x64.default, x64.env_vars) == (True, False, ("JAX_ENABLE_X64",))
    dump = definitions["jax_dump_ir_to"]
    assert (dump.default_known, dump.default, dump.env_vars) == (True, "", ("JAX_DUMP_IR_TO",))
    for name, d in definitions.items():
        if d.default_known:
            holder = _holders()[name]
            current = holder.get_global() if hasattr(holder, "get_global") else holder.value
            assert current == d.default or current is d.default, name  # nothing in this process changed them


def test_compat_trace_context_backend_and_validator():
    names, how = _jax_compat.trace_context_option_names(jax.config.values)
    expected = _jax_trace_context()
    if expected is not None:
        listed = _jax_compat.trace_context_names() is not None  # else probed: a C++ trace context, jax 0.8 to 0.10.1
        assert (names, how) == (frozenset(expected), "jax._src.config.trace_context_names()" if listed else
                                _jax_compat.PROBED_TRACE_CONTEXT)
    else:
        assert "jax_enable_x64" in names and "jax_debug_nans" not in names
    up, platforms = _jax_compat.backends_initialized()
    from jax._src import xla_bridge

    assert up is xla_bridge.backends_are_initialized() and up == bool(platforms)
    holders = _jax_compat.config_holders()
    assert {n for n, h in holders.items() if _jax_compat.raises_after_backend_start(h)} == BACKEND_VALIDATED
    assert set(_jax_compat.backend_start_reads(jax.config.values)) <= set(jax.config.values)


def test_a_glob_with_brackets_and_a_quoted_filter_are_filters(ip):
    from shellrun import run_captured

    result, cap = run_captured(ip, "%jaxconfig -o brackets jax_enable_[x]64")
    assert result.success and [o.name for o in ip.user_ns["brackets"].options] == ["jax_enable_x64"]
    result, cap = run_captured(ip, "%jaxconfig -o quoted 'jax_enable_x64'")
    assert result.success and [o.name for o in ip.user_ns["quoted"].options] == ["jax_enable_x64"]
    result, cap = run_captured(ip, "%jaxconfig x64;")
    assert result.success and cap.outputs == []


def test_the_headline_and_the_facts_wrap_at_the_width(ip):
    """The headline ran to 107 columns and the 'backend:' line to 126 (at COLUMNS=100): they wrap with a hanging
    indent, as the notes do."""
    ip.run_cell("import jax\njax.devices()")  # the backend up: the longer 'backend:' line
    run_captured(ip, "%jaxconfig x64 -o rep")
    rep = ip.user_ns["rep"]
    for width in (100, 80):
        assert max(len(piece) for piece in render.to_text(rep, render.TextBudget(width=width)).splitlines()) <= width, width
    lines = render.to_text(rep, render.TextBudget(width=80)).splitlines()
    assert lines[0] + lines[1][1:] == (f"%jaxconfig — jax {jax.__version__}: {rep.total_options} options — {rep.scopable_options} "
                                       f"scopable (with a context manager), {rep.flag_options} flags (no context manager)")
    at = lines.index("  backend: up (cpu); options marked 'after start' no longer take a new value in")
    assert lines[at + 1] == "    this process (set them right after import jax)"


def test_a_table_wider_than_the_terminal_is_a_line_per_option(ip):
    """At 80 columns the whole inventory ran to 189 columns (a 49-character name beside two 39-character values) and
    'x64' to 104: where the names and values alone do not fit, each option is one sentence wrapped at the width."""
    ip.run_line_magic("jaxconfig", "-o everything;")
    lines = render.to_text(ip.user_ns["everything"], render.TextBudget(width=80)).splitlines()
    assert max(len(piece) for piece in lines) <= 80
    assert "  check_vma: False (default) · scopable · a change re-traces" in lines
    ip.run_line_magic("jaxconfig", "jax_num_cpu_devices -o cpus;")
    known = ip.user_ns["cpus"].options[0].in_jit_key is not None  # jax < 0.8 does not say
    cpus = render.to_text(ip.user_ns["cpus"], render.TextBudget(width=60)).splitlines()  # at 80 its table fits
    assert ("  jax_num_cpu_devices: -1 (default) · scopable · " + (
        "raises" if known else "what a")) in cpus  # the backend is up: 'after backend start (too late now)' wraps
    ip.user_ns["_x64"] = _enable_x64
    ip.run_cell("with _x64(True):\n    get_ipython().run_line_magic('jaxconfig', 'jax_enable_x64 -o rep')")
    lines = render.to_text(ip.user_ns["rep"], render.TextBudget(width=60)).splitlines()
    at = lines.index("  jax_enable_x64: True (set by context manager; global")
    assert lines[at + 1] == "      False; default False) · scopable · a change re-traces"
    wide = render.to_text(ip.user_ns["rep"], render.TextBudget(width=120)).splitlines()  # the table where it fits
    assert [piece for piece in wide if piece.startswith("  jax_enable_x64 ")] == [
        "  jax_enable_x64  True (global: False)  False    context manager  scopable  re-trace"]
