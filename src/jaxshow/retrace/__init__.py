"""Explain every trace of a jitted function: what traced, what hit, and why each miss missed.

The capture behind ``%jaxcache`` and :func:`jaxshow.explain`; see
:mod:`jaxshow.retrace.session`. This file only hands names on.
"""

from jaxshow.retrace.session import (
    CONTEXT_POSITION,
    HISTORY_LIMIT,
    JAX_TEXT_MAX_ENTRIES,
    REGISTRY_LIMIT,
    CallCounter,
    Explanation,
    Registry,
    Session,
    _name_static_args,
    clear,
    explain,
    miss_summary,
    parse_explanation,
    registry,
    trace_history,
)

__all__ = [
    "CONTEXT_POSITION",
    "HISTORY_LIMIT",
    "JAX_TEXT_MAX_ENTRIES",
    "REGISTRY_LIMIT",
    "CallCounter",
    "Explanation",
    "Registry",
    "Session",
    "clear",
    "explain",
    "miss_summary",
    "parse_explanation",
    "registry",
    "trace_history",
]
