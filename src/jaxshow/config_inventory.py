"""JAX's config options as they are now: value, default, where the value came from, what a change costs.

This module owns ``%jaxconfig``'s capture: :func:`config_report` reads every
option of the running JAX (``jax.config.values``, never a list of our own) and
returns a frozen :class:`~jaxshow.report.ConfigReport`. It only reads: it never
calls ``jax.config.update`` or ``jax.config.read`` and never starts a backend.
It imports JAX and never IPython; everything private goes through
:mod:`jaxshow._jax_compat` (jax-facts §7).
"""

from __future__ import annotations

import difflib
import enum
import fnmatch
import os
import threading
from typing import Any, Literal

import jax

from jaxshow import _jax_compat
from jaxshow.report import ConfigOption, ConfigReport, ValueSource
from jaxshow.reprs import safe_repr

VALUE_REPR_CHARS = 300
"""Characters kept of a value's ``repr`` (the rest is counted): options can hold any object."""
NEAR_NAMES = 5
_TRUE_WORDS = frozenset({"y", "yes", "t", "true", "on", "1"})
_FALSE_WORDS = frozenset({"n", "no", "f", "false", "off", "0"})
_GLOB_CHARACTERS = frozenset("*?[")


def config_report(
    filter: str | None = None,  # noqa: A002 - the magic's word for it
    *,
    changed: bool = False,
    kind: Literal["scopable", "flag"] | None = None,
) -> ConfigReport:
    """Every config option of the running JAX that matches, as this thread sees it now.

    Args:
        filter: a substring of the option names (``"x64"``), or a glob when it
            contains ``*``, ``?`` or ``[`` (``"*cache*"``); case-insensitive.
        changed: keep only the options whose value differs from JAX's default.
        kind: ``"scopable"`` (options with a context manager, JAX's ``State``)
            or ``"flag"`` (``Flag``: no context manager); ``None`` for both.

    Returns:
        A :class:`~jaxshow.report.ConfigReport` with the selected options,
        sorted by name, and the counts of all options.
    """
    if filter is not None and not isinstance(filter, str):
        raise TypeError(f"filter must be a str (part of an option's name, or a glob) or None, got {type(filter).__name__}")
    if type(changed) is not bool:
        raise TypeError(f"changed must be True or False, got {type(changed).__name__}")
    if kind not in (None, "scopable", "flag"):
        raise ValueError(f"kind must be 'scopable', 'flag' or None, got {kind!r}")
    names = sorted(jax.config.values)
    holders = _jax_compat.config_holders()
    definitions = _jax_compat.config_definitions({n: holders[n] for n in names if n in holders})
    kinds = {n: _jax_compat.config_option_kind(holders[n]) if n in holders else "unknown" for n in names}
    matched = [n for n in names if _matches(n, filter)]
    selected = [n for n in matched if kind is None or kinds[n] == kind]

    in_trace, trace_source = _jax_compat.trace_context_option_names(names)
    python_trace_context = in_trace is not None and trace_source == _jax_compat.PYTHON_TRACE_CONTEXT
    jit_key_unavailable = (
        "jax < 0.8 also puts options into jaxlib's jit state through update hooks, so their definitions do not say"
        if python_trace_context else None
    )
    up, platforms = _jax_compat.backends_initialized()
    late = _jax_compat.backend_start_reads(names)

    options = []
    for name in selected:
        option = _option(name, holders.get(name), kinds[name], definitions.get(name), in_trace, jit_key_unavailable, late)
        if not changed or option.is_default is False:
            options.append(option)

    unknown = tuple(n for n in selected if n not in definitions or not definitions[n].default_known)
    return ConfigReport(
        jax_version=jax.__version__,
        options=tuple(options),
        total_options=len(names),
        scopable_options=sum(1 for k in kinds.values() if k == "scopable"),
        flag_options=sum(1 for k in kinds.values() if k == "flag"),
        backends_initialized=up,
        backend_platforms=platforms,
        filter=filter,
        changed_only=changed,
        kind=kind,
        matched_options=len(matched),
        near_names=near_names(filter, names) if filter and not matched else (),
        trace_context_source=trace_source if in_trace is not None else "",
        trace_context_unavailable=None if in_trace is not None else trace_source,
        jit_key_unavailable=jit_key_unavailable,
        unknown_defaults=unknown,
        thread_name=threading.current_thread().name,
        notes=_notes(holders),
    )


def _matches(name: str, pattern: str | None) -> bool:
    if not pattern:
        return True
    if _GLOB_CHARACTERS & set(pattern):
        return fnmatch.fnmatchcase(name.lower(), pattern.lower())
    return pattern.lower() in name.lower()


def near_names(pattern: str, names: list[str], limit: int = NEAR_NAMES) -> tuple[str, ...]:
    """Option names close to ``pattern`` (by whole name, name without ``jax_``, or one of its words)."""
    word = pattern.lower().strip("*?[]")
    if not word:
        return ()

    def score(name: str) -> float:
        parts = [name, name.removeprefix("jax_"), *name.split("_")]
        return max(difflib.SequenceMatcher(None, word, part).ratio() for part in parts)

    scored = sorted(((score(n), n) for n in names), key=lambda pair: (-pair[0], pair[1]))
    return tuple(n for s, n in scored[:limit] if s >= 0.6)


def _option(
    name: str,
    holder: Any,
    kind: str,
    definition: _jax_compat.ConfigDefinition | None,
    in_trace: frozenset[str] | None,
    jit_key_unavailable: str | None,
    late: dict[str, str],
) -> ConfigOption:
    value_type, meta = _jax_compat.config_meta(name)
    try:
        value, global_value, context = _jax_compat.config_values(holder) if holder is not None else (
            jax.config.values.get(name), jax.config.values.get(name), False)
    except Exception as exc:  # noqa: BLE001 - an odd holder; its error is the answer
        return ConfigOption(name=name, kind=kind, value_type=value_type, value_repr=f"<could not read: {type(exc).__name__}>",  # type: ignore[arg-type]
                            default_repr=None, is_default=None, source="unknown",
                            default_unavailable=f"reading the value raised {type(exc).__name__}")
    env_vars = tuple((var, os.environ.get(var)) for var in (definition.env_vars if definition else (name.upper(),)))
    known = definition is not None and definition.default_known
    is_default = _equal(value, definition.default) if known else None
    source = _source(global_value, context, is_default, env_vars)
    backend_start, reason = None, ""
    if holder is not None and _jax_compat.raises_after_backend_start(holder):
        backend_start, reason = "raises", "JAX's validator (xla_bridge._validate_backend_not_initialized) raises on a new value once a backend is up"
    elif name in late:
        backend_start, reason = "ignored", late[name] + "; a later change is silently ignored"
    return ConfigOption(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        value_type=value_type,
        value_repr=safe_repr(value, VALUE_REPR_CHARS),
        default_repr=safe_repr(definition.default, VALUE_REPR_CHARS) if known else None,
        is_default=is_default,
        source=source,
        global_value_repr=safe_repr(global_value, VALUE_REPR_CHARS) if context else None,
        env_vars=env_vars,
        env_unread=tuple(var for var, text in env_vars if text is not None and _unread(text, global_value)),
        in_trace_context=None if in_trace is None else name in in_trace,
        in_jit_key=None if (jit_key_unavailable or definition is None) else definition.include_in_jit_key,
        backend_start=backend_start,  # type: ignore[arg-type]
        backend_start_reason=reason,
        default_unavailable=None if known else _default_unavailable(definition),
        enum_values=_enum_values(meta),
        help_text=_jax_compat.config_help(name, holder) if holder is not None else "",
    )


def _default_unavailable(definition: _jax_compat.ConfigDefinition | None) -> str:
    if definition is None:
        return "its definition was not found in JAX's source"
    return f"JAX computes it at import: {definition.default_text}"


def _source(global_value: Any, context: bool, is_default: bool | None,
            env_vars: tuple[tuple[str, str | None], ...]) -> ValueSource:
    if context:
        return "context"
    if is_default:
        return "default"
    if any(text is not None and env_gives(text, global_value) for _, text in env_vars):
        return "environment"
    return "set" if is_default is False else "unknown"


def _unread(text: str, value: Any) -> bool:
    """Whether an environment variable's ``text`` now is not what the option's global ``value`` came from: told only
    where :func:`env_gives` can read the value's type (an empty text, a list or a path object are left alone)."""
    if not text.strip() or not (value is None or isinstance(value, (bool, int, float, str, enum.Enum))):
        return False
    return value is None or not env_gives(text, value)


def env_gives(text: str, value: Any) -> bool:
    """Whether JAX, reading ``text`` from the environment at import, would have set ``value``."""
    word = text.strip().lower()
    if isinstance(value, bool):
        return (word in _TRUE_WORDS) if value else (word in _FALSE_WORDS)
    if isinstance(value, enum.Enum):
        return word in (str(value.value).lower(), value.name.lower())
    if isinstance(value, (int, float)):
        try:
            return float(word) == value
        except ValueError:
            return False
    return isinstance(value, str) and word == value.lower()


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b) or (a is b)
    except Exception:  # noqa: BLE001 - an object whose __eq__ raises
        return a is b


def _enum_values(meta: dict[str, Any]) -> tuple[str, ...]:
    values = meta.get("enum_values")
    enum_class = meta.get("enum_class")
    if values is None and isinstance(enum_class, type) and issubclass(enum_class, enum.Enum):
        values = [f"{enum_class.__name__}.{m.name}" for m in enum_class]
    try:
        return tuple(str(v) for v in values or ())
    except TypeError:
        return ()


EXPLAINING_CRASHES = (
    "jax_explain_cache_misses is on, and this jaxlib (0.9.x) can crash the process (a segmentation fault) while it "
    "explains a tracing-cache miss, when a garbage collection frees a jitted function meanwhile (fixed in jaxlib 0.10.0). "
    "%%jaxcache and %jaxcache on keep the collector off while they explain; upgrade, or turn the option off")


def _notes(holders: dict[str, Any]) -> tuple[str, ...]:
    notes = []
    if not holders:
        notes.append("this JAX has no jax.config._value_holders: kinds, sources and defaults are unknown")
    if jax.config.values.get("jax_explain_cache_misses") and _jax_compat.lists_keys_unsafely():
        notes.append(EXPLAINING_CRASHES)
    return tuple(notes)
