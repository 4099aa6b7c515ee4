"""Two reports of one function -> a :class:`~jaxshow.report.StagesDiff` (``%%jaxstages --diff``).

Compares what JAX keys its caches on (the arguments' shapes, dtypes, weak
types, shardings and donation, the static values, the trace-context config),
the three IR texts through :mod:`jaxshow.irdiff`, and the cost and memory
figures. Pure: reads report records only; no JAX, no IPython.
"""

from __future__ import annotations

import dataclasses

from jaxshow import irdiff
from jaxshow.report import NO_SCOPE, ArgChange, ArgSpec, MemoryStats, QuantityChange, StagesDiff, StagesReport

_MEMORY = (("arguments", "argument_size_bytes"), ("outputs", "output_size_bytes"), ("aliased", "alias_size_bytes"),
           ("temporaries", "temp_size_bytes"), ("generated code", "generated_code_size_bytes"),
           ("peak", "peak_memory_bytes"))


SCOPES_DIFFED = 8
"""Named scopes whose FLOPs changed shown in the diff's cost table."""


SAME_KEY_PARTS = ("JAX traced again, though the arguments, how they were passed, the static values as printed and the "
                  "config are the same. JAX's cache key also holds the metadata of pytree nodes that your own code "
                  "flattens or prints (jaxshow does not run it to compare them), compares static values with == and hash, not by "
                  "their repr (a field the repr leaves out), and a re-defined function is a new object; %jaxcache on asks "
                  "JAX itself why a call traced")
"""The note of a re-trace whose shown key parts did not change."""


def where(report: StagesReport) -> str:
    """Where a report's call was made: ``In[3]:2``, or the function's name where no call site is known."""
    site = report.cell_site or report.call_site
    return f"{site.file}:{site.line}" if site is not None else report.function


def no_previous(report: StagesReport) -> StagesDiff:
    """The diff of a function ``%%jaxstages`` has not seen compile before."""
    return StagesDiff(
        function=report.function, now=where(report),
        previous_missing=(f"no earlier compile of {report.function} in this session: %%jaxstages keeps the last compile "
                          "of each function it reports, so run a cell with it once, then --diff shows what changed"))


def stages_diff(before: StagesReport, now: StagesReport) -> StagesDiff:
    """What changed from ``before`` (an earlier compile of the function) to ``now``; nothing, where ``now`` has no trace
    to compare (a call refused or failed before JAX traced it, a hit whose stations were not read back)."""
    if now.traced is None:
        return StagesDiff(function=now.function, before=where(before), now=where(now), previous_missing=(
            f"this call has no trace of its own ({now.outcome}): nothing of it to set beside the previous compile of "
            f"{now.function} at {where(before)}"))
    notes = []
    if now.cache_hit:
        notes.append("this call was a cache hit: it ran the program compiled for the same signature, compared here with "
                     "the previous compile of the function")
    lowered_language = "hlo" if now.lowered is not None and now.lowered.dialect == "hlo" else "mlir"
    if before.lowered is not None and now.lowered is not None and before.lowered.dialect != now.lowered.dialect:
        notes.append(f"the previous compile was shown as {before.lowered.dialect}, this one as {now.lowered.dialect}")
    texts = (
        irdiff.text_diff("jaxpr", "jaxpr", before.traced.jaxpr_text if before.traced else None,
                         now.traced.jaxpr_text if now.traced else None),
        irdiff.text_diff("StableHLO" if lowered_language == "mlir" else "lowered HLO", lowered_language,
                         before.lowered.module_text if before.lowered else None, now.lowered.module_text if now.lowered else None),
        irdiff.text_diff("optimised HLO", "hlo", before.compiled.optimized_hlo_text if before.compiled else None,
                         now.compiled.optimized_hlo_text if now.compiled else None),
    )
    changes = key_changes(before, now)
    config_compared = _contexts_read(before, now)
    if not changes and now.timings.trace_seconds is not None and config_compared:
        notes.append(SAME_KEY_PARTS)
    return StagesDiff(
        function=now.function,
        before=where(before),
        now=where(now),
        key_changes=changes,
        texts=texts,
        quantities=quantity_changes(before, now),
        notes=tuple(notes),
        config_compared=config_compared,
    )


def key_changes(before: StagesReport, now: StagesReport) -> tuple[ArgChange, ...]:
    """The differences in what JAX keys its caches on: arguments, how they were passed, static values, trace context."""
    changes: list[ArgChange] = []
    old_list, new_list = (before.traced.args if before.traced else ()), (now.traced.args if now.traced else ())
    if len(old_list) == len(new_list) and (_unnamed(old_list) or _unnamed(new_list)):  # a trace under a transformation
        named = new_list if _unnamed(old_list) else old_list  # its arguments are args[0], …: paired by position
        old_list, new_list = ([dataclasses.replace(a, path=n.path) for a, n in zip(args, named)] for args in (old_list, new_list))
    old_args, new_args = {a.path: a for a in old_list}, {a.path: a for a in new_list}
    for path in dict.fromkeys([*new_args, *old_args]):
        a, b = new_args.get(path), old_args.get(path)
        if a is None or b is None or _arg_text(a) != _arg_text(b):
            changes.append(ArgChange(path, _arg_text(a, b) if a else "(absent)", _arg_text(b, a) if b else "(absent)"))
    if before.passed and now.passed:
        changes += [_around_first_difference(c) for c in _pairs(now.passed, before.passed, "pytree ", absent="(not passed)")]
    changes += _pairs(now.wrapper.static_args, before.wrapper.static_args, "static ")
    changes += _other_objects(now, before, {c.where for c in changes})
    if _contexts_read(before, now):
        changes += _pairs(now.trace_context, before.trace_context, "config ", absent="(not defined)")  # a module defined it
    return tuple(changes)


def _contexts_read(before: StagesReport, now: StagesReport) -> bool:
    """Whether both compiles' config contexts were read: a trace under a transformation's is not, and is not compared."""
    return bool(before.trace_context and now.trace_context)


def _unnamed(args: tuple) -> bool:
    """Whether a trace's arguments carry JAX's positions only (``args[0]``, …), as one under a transformation does."""
    return bool(args) and all(a.path.startswith("args[") for a in args)


def quantity_changes(before: StagesReport, now: StagesReport) -> tuple[QuantityChange, ...]:
    """Cost (compiled, else lowered), collective counts by kind and memory figures that differ between the two compiles."""
    out: list[QuantityChange] = []
    old_cost = (before.compiled.cost if before.compiled else None) or (before.lowered.cost if before.lowered else None)
    new_cost = (now.compiled.cost if now.compiled else None) or (now.lowered.cost if now.lowered else None)
    if old_cost is not None and new_cost is not None:
        for name, attr, unit in (("FLOPs", "flops", "FLOP"), ("transcendentals", "transcendentals", ""),
                                 ("bytes accessed", "bytes_accessed", "B")):
            a, b = getattr(old_cost, attr), getattr(new_cost, attr)
            if a != b:
                out.append(QuantityChange(name, a, b, unit))
    out.extend(_scope_changes(before, now))
    if before.compiled is not None and now.compiled is not None and before.compiled.optimized_hlo_text and now.compiled.optimized_hlo_text:
        old_counts = {c.kind: c.count for c in before.compiled.collectives}
        new_counts = {c.kind: c.count for c in now.compiled.collectives}
        out.extend(QuantityChange(f"collectives: {kind}", old_counts.get(kind, 0), new_counts.get(kind, 0))
                   for kind in sorted({*old_counts, *new_counts}) if old_counts.get(kind, 0) != new_counts.get(kind, 0))
    old_memory: MemoryStats | None = before.compiled.memory if before.compiled else None
    new_memory: MemoryStats | None = now.compiled.memory if now.compiled else None
    if old_memory is not None and new_memory is not None:
        for name, attr in _MEMORY:
            a, b = getattr(old_memory, attr), getattr(new_memory, attr)
            if a != b:
                out.append(QuantityChange(f"memory: {name}", a, b, "B"))
    return tuple(out)


def _scope_changes(before: StagesReport, now: StagesReport) -> list[QuantityChange]:
    """The named scopes whose matmul and convolution FLOPs changed, the largest change first (at most
    :data:`SCOPES_DIFFED`), where both compiles split them by scope (a scope one of them lacks had none there)."""
    old = dict(before.traced.flops_by_scope) if before.traced else {}
    new = dict(now.traced.flops_by_scope) if now.traced else {}
    if not old or not new:
        return []
    changed = [(where, old.get(where, 0.0), new.get(where, 0.0)) for where in {*old, *new}
               if old.get(where, 0.0) != new.get(where, 0.0)]
    changed.sort(key=lambda c: (-abs(c[2] - c[1]), c[0]))
    return [QuantityChange(f"FLOPs in {where or NO_SCOPE} (estimate)", a, b, "FLOP") for where, a, b in changed[:SCOPES_DIFFED]]


def _arg_text(arg: ArgSpec, other: ArgSpec | None = None) -> str:
    """An argument's type, sharding and donation; its sharding by its spec alone where ``other`` is on the same mesh."""
    bits = [arg.type_str + ("{weak}" if arg.weak_type else "")]
    if arg.spec and arg.mesh:
        bits.append(arg.spec if other is not None and other.mesh == arg.mesh else f"{arg.spec} on {arg.mesh}")
    elif arg.sharding:
        bits.append(arg.sharding)
    if arg.donated:
        bits.append("donated")
    return " ".join(bits)


def _pairs(now: tuple[tuple[str, str], ...], before: tuple[tuple[str, str], ...], prefix: str,
           absent: str = "(absent)") -> list[ArgChange]:
    new, old = dict(now), dict(before)
    return [ArgChange(prefix + name, new.get(name, absent), old.get(name, absent))
            for name in dict.fromkeys([*new, *old]) if new.get(name) != old.get(name)]


PYTREE_EXCERPT = 160
"""Characters of each side shown of a changed argument pytree longer than that, around where the two first differ."""


def _around_first_difference(change: ArgChange) -> ArgChange:
    """A change of two long pytree texts (a flax NNX module's GraphDef) as the part of each around where they first
    differ: ``…num_attributes=14, metadata=Linear…``, with ``…`` where cut."""
    now, before = change.now, change.before
    if max(len(now), len(before)) <= PYTREE_EXCERPT:
        return change
    start = next((i for i, (a, b) in enumerate(zip(now, before)) if a != b), min(len(now), len(before)))
    start = max(0, start - PYTREE_EXCERPT // 3)

    def excerpt(text: str) -> str:
        end = start + PYTREE_EXCERPT
        return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")

    return ArgChange(change.where, excerpt(now), excerpt(before))


def _other_objects(now: StagesReport, before: StagesReport, changed: set[str]) -> list[ArgChange]:
    """Static values shown alike that are other objects (a function defined again): JAX compares those by identity."""
    new, old = dict(now.wrapper.static_objects), dict(before.wrapper.static_objects)
    texts = dict(now.wrapper.static_args)
    return [ArgChange(f"static {name}", f"{texts[name]} (another object)", texts[name])
            for name in texts if f"static {name}" not in changed and new.get(name, ()) != old.get(name, ())]
