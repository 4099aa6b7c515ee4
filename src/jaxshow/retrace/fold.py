"""Function objects of one definition, made anew for each call, counted as one row of a ``%jaxcache`` report.

``jax.jit(functools.partial(f))(x)`` or ``jax.jit(lambda x: f(x))(x)`` in a loop
makes a new function object per call; each traces once, for the same reason
(a re-defined function). Shown one by one they are hundreds of equal rows;
:func:`groups` folds them: the same name, qualified name and definition, each
traced once, every re-definition said in the same words. The first object of
the definition, traced for the first time, leads its group.
"""

from __future__ import annotations

from typing import Any

Key = tuple[str, str, "str | None", Any]


def definition(record: Any) -> Key:
    """What a function object's row is folded by: its name, its qualified name as written, where it is defined, and its
    source (two lambdas of one line are two definitions)."""
    return record.name, record.written(record.qualname), record.defined_at, record.source_key


def _sole_first_trace(stats: Any) -> Any:
    """The one miss of a function object that traced once, if it was a first trace (never seen, or re-defined)."""
    if stats.traced != 1 or len(stats.first) != 1:
        return None
    miss = stats.first[0].explained()
    return miss if miss.category in ("never_seen", "redefined") else None


def groups(stats_list: list[Any]) -> list[list[Any]]:
    """The session's per-object counters (``session._Stats``) in order, those of one re-defined definition together.

    A group stands where its first object stood; an object that traced more
    than once, or for another reason, is a group of its own.
    """
    out: list[list[Any]] = []
    leading: dict[Key, list[Any]] = {}  # a definition's first trace, waiting for the re-definitions that follow it
    folded: dict[tuple[Key, str], list[Any]] = {}
    for stats in stats_list:
        miss = _sole_first_trace(stats)
        if miss is None:
            out.append([stats])
            continue
        record = stats.record
        key = definition(record)
        if miss.category == "never_seen":
            out.append([stats])
            leading[key] = out[-1]
            continue
        group = folded.get((key, miss.summary))
        if group is None:
            group = leading.pop(key, None)
            if group is None:
                out.append([])
                group = out[-1]
            folded[(key, miss.summary)] = group
        group.append(stats)
    return out


def sites(misses: list[Any]) -> tuple[tuple[str, int], ...]:
    """Each call site of ``misses`` (``_Miss``) with how many of them were called there, in order of first call."""
    counts: dict[str, int] = {}
    for miss in misses:
        site = miss.explained().call_site or "?"
        counts[site] = counts.get(site, 0) + 1
    return tuple(counts.items())
