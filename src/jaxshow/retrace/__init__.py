"""Explain every trace of a jitted function: what traced, what hit, and why each miss missed.

The capture behind ``%jaxcache`` and :func:`jaxshow.explain`. ``session`` runs
it (:class:`Session`, :func:`explain`); it asks ``classify`` why a trace
missed, which reads JAX's explanation with ``miss_text`` and the function's
earlier signatures in ``history``. Imports go that way only. This file hands
on the names the rest of jaxshow, its tests and benchmarks use.
"""

from jaxshow.retrace.classify import _name_static_args
from jaxshow.retrace.history import HISTORY_LIMIT, REGISTRY_LIMIT, Registry, registry
from jaxshow.retrace.miss_text import CONTEXT_POSITION, miss_summary, parse_explanation
from jaxshow.retrace.session import (
    JAX_TEXT_MAX_ENTRIES,
    MISSES_KEPT_FIRST,
    MISSES_KEPT_LAST,
    CallCounter,
    Explanation,
    Session,
    clear,
    explain,
    trace_history,
)

__all__ = [
    "CONTEXT_POSITION",
    "HISTORY_LIMIT",
    "JAX_TEXT_MAX_ENTRIES",
    "MISSES_KEPT_FIRST",
    "MISSES_KEPT_LAST",
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
