"""What a program holds, counted: primitives, loops and matmul FLOPs in a jaxpr; collectives and trip counts in HLO.

XLA's cost analysis counts a loop body once, not once per iteration, so a
``scan`` over 12 layers reads 12 times too cheap. :func:`jaxpr_contents`
finds the loops (a ``scan``'s ``length``; a ``while`` has no count before
compilation) and estimates the FLOPs of the matrix multiplies and convolutions with each body counted
by its trip count, in all and by named scope (``jax.named_scope``, a nested ``jax.jit``): XLA gives one
figure per module. :func:`collectives` and :func:`loop_trip_counts` read the
optimised HLO text. Uses JAX objects (jaxprs), never IPython.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from jaxshow import _jax_compat
from jaxshow.report import CollectiveCount, LoopInfo

COLLECTIVE_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                    "collective-broadcast", "ragged-all-to-all")
COLLECTIVE_LINES_MAX = 20
"""Line numbers kept per collective kind; the count is always complete."""

_COLLECTIVE = re.compile(r" (" + "|".join(re.escape(k) for k in COLLECTIVE_KINDS) + r")(?:-start)?\(")
_TRIP_COUNT = re.compile(r'"known_trip_count":\{"n":"(\d+)"')
_COMPUTATION = re.compile(r"^(?:ENTRY )?%([^\s(]+) \(", re.MULTILINE)
_LOOP_BODY = re.compile(r"\bbody=%([^\s,})]+)")
_CALLED = re.compile(r"\b(?:calls|to_apply|body|condition|true_computation|false_computation)=%([^\s,})]+)|branch_computations=\{([^}]*)\}")


@dataclass(frozen=True, slots=True)
class JaxprContents:
    """Counts over a jaxpr and every jaxpr nested in it."""

    primitive_counts: Counter
    loops: tuple[LoopInfo, ...]
    dot_flops: float
    """FLOPs of the matrix multiplies and convolutions, loop bodies times their trip count."""
    equation_weights: tuple[int, ...] = ()
    """Per top-level equation, 1 plus the equations nested in it: about the lines it prints as."""
    flops_by_scope: Counter = field(default_factory=Counter)
    """:attr:`dot_flops` by named scope (:func:`_name_stack`, joined by :func:`_scope`; ``""`` outside any)."""


def jaxpr_contents(jaxpr: Any) -> JaxprContents:
    """Primitive counts (each equation once), loops, and the FLOPs of ``dot_general`` and ``conv_general_dilated``
    with loop bodies times their trip count, in all and by named scope.

    A ``cond`` adds its costliest branch; a ``while`` body counts once (its
    trip count is unknown until XLA compiles it); a ``shard_map`` body, traced
    at one shard's shapes, times its number of shards, so the FLOPs are the
    whole program's. A jaxpr nested in several equations (a ``jax.numpy``
    function's, cached by JAX) is counted once and added to each.
    """
    return _contents(jaxpr, {})


def _contents(jaxpr: Any, seen: dict[int, tuple[Any, JaxprContents]]) -> JaxprContents:
    counts: Counter = Counter()
    loops: Counter = Counter()
    by_scope: Counter = Counter()
    weights = []
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        counts[name] += 1
        times = 1
        if name == "scan":
            times = int(eqn.params.get("length", 1))
            loops[("scan", times)] += 1
        elif name == "while":
            loops[("while", None)] += 1
        elif name == "dot_general":
            by_scope[_name_stack(eqn)] += _dot_flops(eqn)
        elif name == "conv_general_dilated":
            by_scope[_name_stack(eqn)] += _conv_flops(eqn)
        elif name == "shard_map":  # its body's shapes are one shard's
            times = _jax_compat.shard_map_shards(eqn.params)
        inner = []
        for param in eqn.params.values():
            for sub in subjaxprs(param):
                if id(sub) not in seen:
                    seen[id(sub)] = (sub, _contents(sub, seen))  # ``sub`` held with it: no id is reused meanwhile
                inner.append(seen[id(sub)][1])
        for contents in inner:
            counts.update(contents.primitive_counts)
            for loop in contents.loops:
                loops[(loop.primitive, loop.trip_count)] += loop.count
        weights.append(1 + sum(sum(c.equation_weights) for c in inner))
        costly = [max(inner, key=lambda c: c.dot_flops)] if name == "cond" and inner else inner
        if any(c.flops_by_scope for c in costly):
            inside = _name_stack(eqn)  # the inner jaxpr's scopes count from here
            if name in ("jit", "pjit") and "name" in eqn.params:
                inside = _scope(inside, f"jit({eqn.params['name']})")
            for contents in costly:
                for where, flops in contents.flops_by_scope.items():
                    by_scope[_scope(inside, where)] += times * flops
    ordered = sorted(loops.items(), key=lambda kv: (kv[0][0], kv[0][1] is None, kv[0][1] or 0))
    by_scope = Counter({where: flops for where, flops in by_scope.items() if flops})
    return JaxprContents(counts, tuple(LoopInfo(p, n, c) for (p, n), c in ordered), float(sum(by_scope.values())),
                         tuple(weights), by_scope)


def _name_stack(eqn: Any) -> str:
    """An equation's name stack as JAX writes it in the HLO's ``op_name`` (``encoder/dense``,
    ``transpose(jvp(encoder))/dense`` in the backward pass), counted from the jaxpr the equation is in; ``""`` for none."""
    try:
        return str(eqn.source_info.name_stack)
    except Exception:  # noqa: BLE001 - an equation without JAX's source info: its jaxpr's scope
        return ""


def _scope(outer: str, inner: str) -> str:
    """Scope ``inner`` under ``outer``: a nested jaxpr's scopes count from the equation that holds it (a nested
    ``jax.jit``'s from ``jit(inner)``)."""
    return f"{outer}/{inner}" if outer and inner else outer or inner


def collectives(hlo_text: str | None) -> tuple[CollectiveCount, ...]:
    """Collective operations in an HLO module by kind (an async ``-start``/``-done`` pair counts once), with their lines.

    One regex pass over the text; line numbers come from counting newlines
    between matches (a sharded module is megabytes).
    """
    if not hlo_text or not any(kind in hlo_text for kind in ("all-", "collective-", "reduce-scatter")):
        return ()
    found: dict[str, list[int]] = {}
    looped: Counter = Counter()
    spans = _loop_spans(hlo_text)
    line, position = 1, 0
    for match in _COLLECTIVE.finditer(hlo_text):
        line += hlo_text.count("\n", position, match.start())
        position = match.start()
        lines = found.setdefault(match.group(1), [])
        if not lines or lines[-1] != line:
            lines.append(line)
            looped[match.group(1)] += any(start <= position < end for start, end in spans)
    return tuple(CollectiveCount(kind, len(lines), tuple(lines[:COLLECTIVE_LINES_MAX]), looped[kind])
                 for kind, lines in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _loop_spans(hlo_text: str) -> list[tuple[int, int]]:
    """The text spans of the computations a ``while`` loop runs every iteration: its bodies and what they call."""
    bodies = set(_LOOP_BODY.findall(hlo_text))
    if not bodies:
        return []
    headers = list(_COMPUTATION.finditer(hlo_text))
    spans = {m.group(1): (m.start(), headers[i + 1].start() if i + 1 < len(headers) else len(hlo_text))
             for i, m in enumerate(headers)}
    seen, todo = set(), [b for b in bodies if b in spans]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        start, end = spans[name]
        for called, branches in _CALLED.findall(hlo_text, start, end):
            todo.extend(n for n in [called, *re.findall(r"%([^\s,]+)", branches)] if n in spans and n not in seen)
    return sorted(spans[name] for name in seen)


def loop_trip_counts(hlo_text: str | None) -> tuple[int, ...]:
    """The ``known_trip_count`` XLA recorded on each ``while`` loop of an optimised module, in order."""
    if not hlo_text or "known_trip_count" not in hlo_text:
        return ()
    return tuple(int(n) for n in _TRIP_COUNT.findall(hlo_text))


def _dot_flops(eqn: Any) -> float:
    """``2 · (output elements) · (contracted elements)`` for one ``dot_general``."""
    try:
        (contract, _), _ = eqn.params["dimension_numbers"]
        lhs_shape = eqn.invars[0].aval.shape
        out_shape = eqn.outvars[0].aval.shape
        return 2.0 * math.prod(out_shape) * math.prod(lhs_shape[d] for d in contract)
    except Exception:  # noqa: BLE001 - symbolic shapes, unusual avals: this equation adds nothing
        return 0.0


def _conv_flops(eqn: Any) -> float:
    """``2 · (output elements) · (kernel elements per output feature)`` for one ``conv_general_dilated``: every kernel
    tap counted, also where it meets padding (XLA's cost analysis leaves those out)."""
    try:
        rhs_shape = eqn.invars[1].aval.shape
        out_features = rhs_shape[eqn.params["dimension_numbers"].rhs_spec[0]]
        return 2.0 * math.prod(eqn.outvars[0].aval.shape) * math.prod(rhs_shape) / out_features
    except Exception:  # noqa: BLE001 - symbolic shapes, unusual avals: this equation adds nothing
        return 0.0


def functions_run_by(closed: Any, primitives: tuple[str, ...]) -> tuple[tuple[str, str, int], ...]:
    """``(name, file, line)`` of each function the top-level ``primitives`` equations of a jaxpr run (a ``scan``'s
    body, a ``while``'s condition and body, a ``cond``'s branches), from JAX's debug info, each once."""
    found = []
    for eqn in getattr(getattr(closed, "jaxpr", closed), "eqns", ()):
        if eqn.primitive.name in primitives:
            for param in eqn.params.values():
                for sub in subjaxprs(param):
                    source = _jax_compat.parse_source_info(getattr(getattr(sub, "debug_info", None), "func_src_info", None))
                    if source is not None:
                        found.append(source)
    return tuple(dict.fromkeys(found))


def subjaxprs(value: Any):
    """The jaxprs inside one equation parameter (a jaxpr, a closed jaxpr, or a tuple of them: ``cond`` branches)."""
    if hasattr(value, "eqns") and hasattr(value, "invars"):
        yield value
    elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
        yield value.jaxpr
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from subjaxprs(item)


def printed_part(closed: Any, max_lines: int | None, weights: tuple[int, ...] | None = None) -> tuple[Any, int]:
    """The jaxpr to print (all of it, or its first equations up to about ``max_lines``), and how many top-level equations it leaves out.

    Pretty-printing is the costliest part of recording a big program's Traced
    station (0.12 s for a 12-layer transformer step), and a report shows a few
    hundred lines of it.
    """
    inner = closed.jaxpr
    if max_lines is None or len(inner.eqns) <= max_lines:
        return closed, 0
    if weights is None:
        weights = jaxpr_contents(inner).equation_weights
    total = 0
    for kept, weight in enumerate(weights[:max_lines], start=1):
        total += weight
        if total >= max_lines:
            break
    prefix = _jax_compat.jaxpr_prefix(closed, kept)
    return (closed, 0) if prefix is None else (prefix, len(inner.eqns) - kept)


def left_out_line(left_out: int) -> str:
    """The last line of a jaxpr :func:`printed_part` shortened, in place of its ``in (...)``: what it leaves out."""
    return f"  … {left_out:,} more top-level equations, not printed }}"
