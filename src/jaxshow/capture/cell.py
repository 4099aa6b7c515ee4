"""One cell's calls -> a :class:`~jaxshow.report.CellReport` (uses JAX's objects; never IPython).

Which calls headline the report: the user's own jitted functions (defined in
a cell or in the user's files), then a library's (optax, equinox); JAX's own
(``jnp``, ``lax``, eager operations) never do, they fold into one line. A
record becomes plain data here, and its JAX objects are dropped.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax

from jaxshow import _jax_compat
from jaxshow.capture.carried import closure_function
from jaxshow.capture.definitions import definition_note
from jaxshow.capture.equinox_args import named_leaves, output_names as equinox_output_names
from jaxshow.capture.flax_args import graph_leaf_names, graph_output_names
from jaxshow.capture.calls import (CONTROL_FLOW, EAGER_CONTROL_FLOW, TRACED_ONLY, USER_CODE_HELPERS, CallCapture, CallRecord,
                                   LibraryCalls, finish_ahead_of_time)
from jaxshow.capture.labels import file_label, labelled_error, labelled_stations, labelled_wrapper
from jaxshow.capture.linked import linked_views, located_stablehlo
from jaxshow.capture.prefetch import stations_of
from jaxshow.capture.programs import functions_run_by
from jaxshow.capture.sources import is_jax_file
from jaxshow.capture.stations import (
    CallName,
    WalkOptions,
    arg_names_of,
    defined_at_of,
    jit_target,
    library_wrapped,
    pmapped_defined_at,
    qualname_of,
    type_module,
    with_unused_donations,
    wrapper_station,
)
from jaxshow.capture.written import innermost, jax_made, transforms, written
from jaxshow.report import (
    CellReport,
    CompiledStation,
    ErrorSummary,
    HelperCompiles,
    LinkedViews,
    LoweredStation,
    SourceLocation,
    StagesReport,
    jit_disabled_note,
    unseen_hits,
)
from jaxshow.timings import timings_from_events


@dataclass(frozen=True, slots=True)
class CellOptions:
    """What ``%%jaxstages`` was asked to show."""

    walk: WalkOptions = WalkOptions()
    show_all: bool = False
    name: CallName | None = None


def cell_report(capture: CallCapture, options: CellOptions, *, cell_seconds: float, cell_error: BaseException | None,
                label: Callable[[SourceLocation | None], SourceLocation | None] = lambda loc: loc,
                label_text: Callable[[str], str] = lambda text: text,
                name_note: Callable[[str], str | None] = lambda name: None, jit_disabled: str | None = None,
                users_functions: Sequence[str] = ()) -> CellReport:
    """Build the report of one cell from its capture, then release every JAX object the capture held.

    Args:
        capture: the closed capture of the cell.
        options: which calls to show and how.
        cell_seconds: the cell's wall time.
        cell_error: the exception the cell raised, if any.
        label: renames a cell's file to ``In[n]`` (the front end knows how).
        label_text: the same for cell file names inside IR texts (jaxpr source info, ``loc(...)``, HLO metadata).
        name_note: why ``options.name`` made no jitted call, when the front end can tell.
        jit_disabled: how jit was disabled in the cell (:meth:`DirectCalls.jit_disabled_by`), said unless a shown call
            ran op by op.
        users_functions: the user's functions the cell called (:attr:`DirectCalls.helpers`), named where no call was
            seen.
    """
    main = capture.thread_id
    _read_transforms(capture.records)
    _errors_as_raised(capture.records, cell_error)
    records = [r for r in capture.records if not r.cut_off and (r.path != "events" or r.events)]
    candidates = [r for r in records if r.kind != "jax" and r.path != "events" and not _librarys_own_trace(r)]
    groups: dict[tuple, list[CallRecord]] = {}
    for record in candidates:
        groups.setdefault(_signature_key(record), []).append(record)
    if options.name is not None:
        chosen = [g for g in groups.values() if options.name.matches(g[0].fun, g[0].name, g[0].written)]
    elif options.show_all:
        chosen = list(groups.values())
    else:
        last = _headline([r for r in candidates if r.rerun_of is None] or candidates, main)
        chosen = [groups[_signature_key(last)]] if last is not None else []
    notes: list[str] = []
    reports = []
    last_compile = max((r.seq for r in records if _compiled(r)), default=-1)
    for group in chosen:
        try:
            counted = any(group[0].fun is calls.fun for calls in capture.library_calls.values())  # said in a note of its own
            raised_first = cell_error is not None and last_compile < group[0].seq
            reports.append(_group_report(group, options.walk, main, label, label_text, counted, raised_first))
        except Exception as exc:  # noqa: BLE001 - jaxshow's failure is a note, never the cell's outcome
            notes.append(f"jaxshow could not read the stations of {group[0].written}: {type(exc).__name__}: {exc}")
    shown = [r for g in chosen for r in g]
    others = [r for r in candidates if all(r is not s for s in shown)]
    programs = _more_programs(others, shown)
    others = [r for r in others if all(r is not p for p in programs)]
    ahead = [r for r in others if r.ahead_of_time is not None and not _called(r)]
    others = [r for r in others if r.ahead_of_time is None or _called(r)]
    if options.name is None:
        for name in dict.fromkeys(r.written for r in programs if r.path == "transform"):
            n = sum(1 for r in programs if r.written == name and r.path == "transform")
            notes.append(f"also compiled for {name} under a transformation: {n} more program{'s' if n > 1 else ''} (jax.grad "
                         f"compiles a forward and a backward pass, jax.vmap a batched one; use --all to show "
                         f"{'them' if n > 1 else 'it'})")
        if ahead:
            traced = list(dict.fromkeys(_ahead_of_time_text(r) for r in ahead))
            notes.append(f"also traced, not called: {', '.join(traced[:12])}{' …' if len(traced) > 12 else ''} "
                         "(use --all or --name to show them)")
        for rerun_of in dict.fromkeys(r.rerun_of for r in others):
            names = _also_called([r for r in others if r.rerun_of == rerun_of], shown, label)
            listed = f"{', '.join(names[:12])}{' …' if len(names) > 12 else ''} (use --all or --name to show them)"
            notes.append(f"also called: {listed}" if rerun_of is None else
                         f"JAX's de-optimized re-run of {rerun_of} (jax_debug_nans, jax_debug_infs) called its jitted "
                         f"functions each on its own: {listed}")
    cut = [r for r in capture.records if r.cut_off]
    if cut:
        notes.append("still under way on another thread when the cell ended, so not shown: "
                     + ", ".join(f"{r.written} ({_stage_under_way(r)})" for r in cut[:8]) + (" …" if len(cut) > 8 else ""))
    own = [r for r in records if r.thread_id == main]
    helpers = [r for r in own if r.kind == "jax" or r.path == "events"]
    loops = [r for r in helpers if r.kind == "jax" and r.name in EAGER_CONTROL_FLOW]
    helpers = [r for r in helpers if all(r is not loop for loop in loops)]
    loop_runs = [(r.name, _loop_bodies(r, label)) for r in loops if _compiled(r)]
    eager_loops = dataclasses.replace(_folded([e for r in loops for e in r.events], loops),
                                      names=tuple(dict.fromkeys(f"{kind} running {', '.join(bodies)}" if bodies else kind
                                                                for kind, bodies in loop_runs)))
    helper_compiles = _folded([e for r in helpers for e in r.events] + [e for r in shown if r.thread_id == main for e in r.nested_events],
                              helpers, [e for r in shown if r.thread_id == main for e in r.nested_in_trace],
                              tuple(dict.fromkeys(r.written for r in shown if r.thread_id == main and r.nested_in_trace)))
    unseen = _library_hits(capture, records)
    notes += [note for _, note in unseen]
    disabled = jit_disabled if not any(r.jit_disabled for r in reports) else None
    if options.name is not None and not chosen:
        if not any(options.name.matches(calls.fun, calls.name) for calls, _ in unseen):
            called = list(dict.fromkeys(r.written for r in candidates))
            listed = f"; the cell called {', '.join(called[:12])}{' …' if len(called) > 12 else ''}" if called else ""
            notes.append(name_note(options.name.text) or f"{options.name.text} made no jitted call in this cell{listed}")
    elif not candidates and (note := _no_call_note(helper_compiles.names, raised=cell_error is not None,
                                                   library_calls=bool(unseen), jit_disabled=disabled, helpers=users_functions)):
        notes.append(note)
        disabled = None  # its first words
    if disabled is not None:
        notes.append(jit_disabled_note(disabled))
    if capture.dropped:
        notes.append(f"{capture.dropped:,} more calls reached JAX's Python path in this cell than jaxshow keeps "
                     f"({len(capture.records):,}); they are not shown")
    if not capture.hooks_installed:
        notes.append("this JAX's miss path could not be hooked: only the cell's own calls were seen, with JAX's events")
    own_others = [r for r in others if r.thread_id == main]
    own_programs = [r for r in programs if r.thread_id == main]
    own_ahead = [r for r in ahead if r.thread_id == main]
    report = CellReport(
        reports=tuple(reports),
        cell_seconds=cell_seconds,
        jitted_calls=_calls(candidates),
        helper_compiles=helper_compiles,
        eager_loops=eager_loops,
        other_compiles=dataclasses.replace(_folded([e for r in own_others for e in r.events], own_others, named=_as_written),
                                           yours=all(r.kind == "user" for r in own_others if r.events)),
        more_programs=dataclasses.replace(_folded([e for r in own_programs for e in r.events], own_programs),
                                          names=tuple(dict.fromkeys(r.written for r in own_programs))),
        ahead_of_time=_folded([e for r in own_ahead for e in r.events], own_ahead, named=_as_written),
        other_threads=_alongside([r for r in capture.records if r.thread_id != main and (r.events or r.nested_events or r.nested_in_trace)]),
        notes=tuple(notes),
        cell_error=labelled_error(cell_error, None, label_text),
    )
    capture.release()
    return report


def _folded(events: list, records: list[CallRecord], inside: list | None = None, inside_of: tuple[str, ...] = (),
            named: Callable[[CallRecord], str] = lambda r: r.name) -> HelperCompiles:
    """Compiles not shown as reports, folded into one line: count, seconds, and the names that compiled (each
    compile counted to its own call's name, or else to the name it was made for).

    ``inside``: more such events, made while a shown call (of those named ``inside_of``) traced; JAX's trace time
    for that call holds their seconds, so they are counted and named but their seconds are kept apart
    (``inside_seconds``). ``named``: how a record is named (JAX's helpers by JAX's name, the user's calls as written).
    """
    compiled = {e.base_name for e in inside or () if e.stage == "compile"}
    inside = [e for e in inside or () if e.base_name in compiled]  # a jitted function inlined in the trace compiles nothing
    compiles = [e for e in (*events, *inside) if e.stage == "compile"]
    made_for = {e.base_name for e in compiles}
    folded = [r for r in records if r.name in made_for or _compiled(r)]
    owned = {id(e) for r in folded for e in r.events}
    by_name = {r.name: named(r) for r in reversed(folded)}
    unowned = [by_name.get(e.base_name, e.base_name) for e in compiles if id(e) not in owned]
    names = [named(r) for r in folded] + unowned
    times = Counter(named(r) for r in folded for e in r.events if e.stage == "compile")
    times.update(unowned)
    return HelperCompiles(count=len(compiles), seconds=sum(e.seconds for e in events), names=tuple(dict.fromkeys(names)),
                          repeated=tuple((name, n) for name, n in times.items() if n > 1),
                          inside_seconds=sum(e.seconds for e in inside), inside_of=inside_of if inside else ())


def _also_called(records: list[CallRecord], shown: list[CallRecord],
                 label: Callable[[SourceLocation | None], SourceLocation | None]) -> list[str]:
    """How 'also called' names the calls not shown: by name, and beside a shown call of that name by what sets them apart.

    ``f with another signature (f32[4])``, ``f with 2 other signatures (f32[4]; i32[2])``, ``f with other static
    arguments (n=3)``, ``f, a call that raised``, ``f, another function of that name (called at In[3]:2)``, ``f on its
    own, not under a transformation (called at In[3]:2)`` (beside a program JAX compiled for ``f`` under one), ``f,
    another call of it (called at In[3]:2)`` (where a jaxpr was not read, so what sets them apart is not known), ``f in
    another config context (jax_default_matmul_precision='highest')``, ``f with another input pytree (…)``, ``f traced
    again after jax.clear_caches() emptied JAX's cache``, ``f traced again with the same signature and jaxpr (…)``.
    """
    details: dict[tuple[str, str], list[str]] = {}
    for record in records:
        kind, detail = _set_apart(record, [s for s in shown if s.written == record.written], label)
        found = details.setdefault((record.written, kind), [])
        if detail and detail not in found:
            found.append(detail)
    return [_also_called_text(name, kind, found) for (name, kind), found in details.items()]


def _set_apart(record: CallRecord, namesakes: list[CallRecord],
               label: Callable[[SourceLocation | None], SourceLocation | None]) -> tuple[str, str | None]:
    """What sets a call apart from the shown calls of its name, and its detail (the types, the static values, the site)."""
    if not namesakes:
        return "", None
    if all(_program_of(s, record) for s in namesakes):
        site = label(record.site)
        return "untransformed", f"{site.file}:{site.line}" if site else None
    if all(s.fun is not record.fun for s in namesakes):
        site = label(record.site)
        return "function", f"{site.file}:{site.line}" if site else None
    if record.failed_in is not None and all(s.failed_in is None for s in namesakes):
        return "raised", None
    if record.jaxpr is not None and any(s.jaxpr is record.jaxpr for s in namesakes):
        return "placement", _placement(record, namesakes)
    types, theirs = _arg_types(record), [_arg_types(s) for s in namesakes]
    known = types is not None and None not in theirs  # a call with no jaxpr read (a hit not read back): types unknown
    if known and all(t != types for t in theirs):
        return "signature", _types_apart(record, types, theirs)
    placed = _arg_types(record, meshes=True)
    if known and all(_arg_types(s, meshes=True) != placed for s in namesakes):
        return "signature", _types_apart(record, placed, [_arg_types(s, meshes=True) for s in namesakes])
    if record.static_args and all(s.static_args != record.static_args for s in namesakes):
        return "static", _first([f"{name}={value}" for name, value, _ in record.static_args])
    if record.passed and all(s.passed and s.passed != record.passed for s in namesakes):
        return "pytree", _first(_passed_apart(record.passed, namesakes[0].passed))
    if not known:
        site = label(record.site)
        return "call", f"{site.file}:{site.line}" if site else None
    changed = _context_changes(record, namesakes)
    if changed:
        return "context", _first(changed)
    if any(s.clears_before != record.clears_before for s in namesakes):
        return "cleared", None
    return ("again", None) if any(_same_jaxpr(s, record) for s in namesakes) else ("pytree", None)


def _passed_apart(mine: tuple[tuple[str, str], ...], theirs: tuple[tuple[str, str], ...]) -> list[str]:
    """How a call passed its arguments where a shown call passed them otherwise: ``x: by keyword``, ``y: not passed``."""
    own, other = dict(mine), dict(theirs)
    return ([f"{name}: {how}" for name, how in mine if other.get(name) != how]
            + [f"{name}: not passed" for name in other if name not in own])


def _same_jaxpr(shown: CallRecord, record: CallRecord) -> bool:
    """Whether two traces of one signature made the same jaxpr: JAX let go of the first (``jax.clear_caches()``), or the
    input pytree changed where the jaxpr does not show it (a list for a tuple); only a jaxpr that differs tells a pytree."""
    mine, its = record.jaxpr, shown.jaxpr
    return len(mine.eqns) == len(its.eqns) and str(mine) == str(its)


def _program_of(program: CallRecord, record: CallRecord) -> bool:
    """Whether ``program`` is one JAX compiled for ``record``'s function under a transformation (it has no function
    object of its own, only the name and file of its jaxpr), and ``record`` a call of that function outside one."""
    return (program.path == "transform" and not record.under_transform and record.path != "transform"
            and (program.name, program.source_file) == (record.name, record.source_file))


def _context_changes(record: CallRecord, namesakes: list[CallRecord]) -> list[str]:
    """The config options whose values set a call's context apart from every shown call's (``option=value``), and those
    only one of them had (a module imported between the calls defined them); none where a call's context was not read
    (a trace under a transformation)."""
    if not record.trace_context.names or not all(s.trace_context.names for s in namesakes):
        return []
    own = dict(_jax_compat.describe_trace_context(record.trace_context))
    apart = [s for s in namesakes if dict(_jax_compat.describe_trace_context(s.trace_context)) != own]
    if len(apart) < len(namesakes):
        return []
    theirs = dict(_jax_compat.describe_trace_context(apart[0].trace_context))
    changed = [f"{name}={value}" for name, value in own.items() if name in theirs and theirs[name] != value]
    defined = "which a module imported between the calls defined"  # JAX keys on the options it has at each call
    if added := [f"{name}={value}" for name, value in own.items() if name not in theirs]:
        changed.append(f"also {', '.join(added)}, {defined}")
    if missing := [name for name in theirs if name not in own]:
        changed.append(f"without {', '.join(missing)}, {defined}")
    return changed


def _also_called_text(name: str, kind: str, details: list[str]) -> str:
    n = len(details)
    shown = f"{'; '.join(details[:4])}{'; …' if n > 4 else ''}"
    listed = f" ({shown})" if details else ""
    if kind == "function":
        return f"{name}, another function of that name" + (f" (called at {shown})" if details else "")
    if kind == "call":
        return f"{name}, another call of it" + (f" (called at {shown})" if details else "")
    if kind == "untransformed":
        return f"{name} on its own, not under a transformation" + (f" (called at {shown})" if details else "")
    if kind == "raised":
        return f"{name}, a call that raised"
    if kind == "signature":
        return f"{name} with " + (f"{n} other signatures" if n > 1 else "another signature") + listed
    if kind == "static":
        return f"{name} with " + (f"{n} other sets of static arguments" if n > 1 else "other static arguments") + listed
    if kind == "placement":
        return f"{name} compiled again for " + (f"{n} other placements" if n > 1 else "another placement") + f" of its arguments{listed}"
    if kind == "context":
        return f"{name} in another config context{listed}"
    if kind == "pytree":
        return f"{name} with another input pytree" + (listed or " (the same argument types, traced again)")
    if kind == "cleared":
        return f"{name} traced again after jax.clear_caches() emptied JAX's cache"
    if kind == "again":
        return f"{name} traced again with the same signature and jaxpr (its clear_cache() emptied its cache, or another input pytree)"
    return name


def _types_apart(record: CallRecord, types: list[str], theirs: list[list[str] | None]) -> str:
    """A call's argument types as they set it apart from the shown calls' (``theirs``).

    Where a shown call has as many arguments and some alike, only the types that differ from the closest one's, named
    (``x: f32[8,4]``): the first few of all would be the ones both calls share. Otherwise the first few.
    """
    differ = min(([i for i, (mine, its) in enumerate(zip(types, other)) if mine != its]
                  for other in theirs if other is not None and len(other) == len(types)), key=len, default=None)
    if not differ or len(differ) == len(types):
        return _first(types)
    names = _flat_arg_names(record, len(types))
    return _first([f"{names[i]}: {types[i]}" if names[i] else types[i] for i in differ])


def _flat_arg_names(record: CallRecord, count: int) -> tuple[str, ...]:
    """JAX's names of a call's ``count`` flat arguments (``params['w']``), ``""`` for each it names not (consts come first)."""
    names = arg_names_of(record.jaxpr) or ()
    return (("",) * (count - len(names)) + tuple(names))[-count:]


def _placement(record: CallRecord, namesakes: list[CallRecord]) -> str | None:
    """A call's arguments placed on a mesh, by name and spec (``x P('data', None), w P('model', None)``), with their one
    mesh where the shown calls' arguments are on another (the same axes over other devices); ``None`` if none is."""
    placed = record.arg_shardings
    if not placed:
        return None
    names = _flat_arg_names(record, len(placed))
    specs = _first([f"{name} {texts[1]}".strip() for name, texts in zip(names, placed) if texts is not None and texts[1]])
    meshes = _meshes(record)
    apart = len(meshes) == 1 and all(_meshes(s) != meshes for s in namesakes)
    return f"{specs} on {meshes.pop()}" if apart else specs


def _meshes(record: CallRecord) -> set[str]:
    """The meshes a call's arguments are placed on, with their devices where JAX's text leaves out what sets them apart
    (:func:`~jaxshow.capture.stations.placed_shardings`)."""
    return {texts[2] + texts[3] for texts in record.arg_shardings or () if texts is not None and texts[2]}


def _first(items: list[str], n: int = 4) -> str:
    return ", ".join(items[:n]) + (f", … ({len(items):,} in all)" if len(items) > n else "")


def _arg_types(record: CallRecord, meshes: bool = False) -> list[str] | None:
    """The types of a call's array arguments as its jaxpr spells them (``f32[3]``); ``None`` where it has no jaxpr.

    ``meshes`` adds each type's mesh, which JAX's spelling leaves out and its cache keys on
    (``f32[8,8] on mesh ('data': 2, 'model': 4)``; ``f32[8,8] (no mesh)``: an array on one device).
    """
    avals = getattr(record.jaxpr, "in_avals", None)
    if avals is None:
        return None
    return [(a.str_short(True) if hasattr(a, "str_short") else str(a)) + ("{weak_type=True}" if getattr(a, "weak_type", False) else "")
            + (_mesh_text(a) if meshes else "") for a in avals]


def _mesh_text(aval: Any) -> str:
    sizes = _jax_compat.mesh_sizes(getattr(getattr(aval, "sharding", None), "mesh", None))
    return f" on mesh ({sizes})" if sizes else " (no mesh)"


def _ahead_of_time_text(record: CallRecord) -> str:
    """``f (jax.make_jaxpr)``, ``g (.trace(), then lowered and compiled)``: a call traced ahead of time and what followed."""
    compiled = _compiled(record)
    if record.continued is not None:
        done = "lowered" if record.continued == "Traced" else "compiled"
        return (f"{record.written} ({done} from a jax.stages.{record.continued} made before this cell"
                f"{', and compiled' if compiled and done == 'lowered' else ''})")
    then = (" and compiled" if compiled else "") if record.ahead_of_time in (".lower()", "jax.export") else (
        ", then lowered and compiled" if compiled else ", then lowered" if record.computation is not None else "")
    return f"{record.written} ({record.ahead_of_time}{then})"


def _as_written(record: CallRecord) -> str:
    """The name a report gives the user's call (:attr:`CallRecord.written`), for :func:`_folded`."""
    return record.written


def _errors_as_raised(records: list[CallRecord], cell_error: BaseException | None) -> None:
    """Each call's error as the cell raised it, where JAX caught it and raised another in its place (``jax.jit`` raises
    ``ValueError: Received incompatible devices ...`` from None for its ``DeviceAssignmentMismatchError``); an error the
    user's code raised over a call's keeps the call's own."""
    tb = cell_error.__traceback__ if cell_error is not None else None
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or not is_jax_file(tb.tb_frame.f_code.co_filename) or cell_error.__context__ is None:
        return
    for record in records:
        if record.error is cell_error.__context__:
            record.error = cell_error


def _read_transforms(records: list[CallRecord]) -> None:
    """Read the transformations written around each record's function (:attr:`CallRecord.transforms`), so that a report
    names it as ``%jaxcache`` does: ``grad(g)``. A program JAX compiled under a transformation has no function of its
    own: it takes those of the latest call before it of a function with its name and file, the call it transformed."""
    latest: dict[tuple[str, str | None], tuple[str, ...]] = {}
    for record in sorted(records, key=lambda r: r.seq):
        if record.fun is not None:
            record.transforms = latest[(record.name, record.source_file)] = transforms(record.fun)
        elif record.path == "transform":
            record.transforms = latest.get((record.name, record.source_file), ())


def _more_programs(others: list[CallRecord], shown: list[CallRecord]) -> list[CallRecord]:
    """The records of a shown function under a transformation (``grad`` of a jitted ``f``: its trace inside ``grad``,
    the forward pass beside the backward one shown): not other calls, though JAX called ``f``'s ``jit_p`` for each.
    A transformed program knows its function by the name and file of its jaxpr only."""
    functions = {(r.name, r.source_file) for r in shown}
    return [r for r in others if (r.path == "transform" or r.under_transform) and r.rerun_of is None
            and (r.name, r.source_file) in functions]


def _headline(candidates: list[CallRecord], main_thread: int) -> CallRecord | None:
    """The call a report shows by default: the cell's own thread's last call of the user's, else of a library's, not
    one a host callback made while another call's program ran; a call before a lowering ahead of time before a trace
    alone.

    A thread the cell did not start (a data loader, an async checkpoint) may
    compile while the cell runs; its calls headline only a cell whose own thread made none.
    """
    own = [r for r in candidates if r.thread_id == main_thread]
    pool = own or candidates
    pool = [r for r in pool if r.kind == "user"] or pool
    pool = [r for r in pool if r.callback_of is None] or pool  # a call's host callback made these as its program ran
    best = max(map(_called_rank, pool), default=0)
    return next((r for r in reversed(pool) if _called_rank(r) == best), None)


def _called_rank(record: CallRecord) -> int:
    """A call the cell made (2; a call of the ``jax.stages.Compiled`` a lowering made) before one lowered ahead of time (1)
    before one only traced (0: ``jax.eval_shape``,
    ``jax.make_jaxpr``, ``.trace()``): a trace made after a real call never takes its headline."""
    return 2 if record.ahead_of_time is None or _called(record) else 1 if record.computation is not None else 0


def _called(record: CallRecord) -> bool:
    """Whether the cell called the ``jax.stages.Compiled`` made from ``record``'s lowering (a call that raised too)."""
    return record.compiled_called or bool(record.compiled_raised)


def _librarys_own_trace(record: CallRecord) -> bool:
    """A library's function that the library itself traced without calling it (flax linen checks each parameter's
    shape with ``jax.eval_shape`` of a lambda): not a call of the cell's, and nothing was compiled."""
    return record.kind == "library" and record.traced_by_library and record.ahead_of_time in TRACED_ONLY


def _alongside(records: list[CallRecord]) -> HelperCompiles:
    """JAX's stages on threads other than the cell's: they ran alongside it, so they are not part of its time line.
    Named after the functions that compiled (the line says "N compiles: …"), or where none did, those that ran stages."""
    events = [e for r in records for e in (*r.events, *r.nested_events, *r.nested_in_trace)]
    alongside = _folded(events, records, named=_as_written)
    return alongside if alongside.count else dataclasses.replace(alongside, names=tuple(dict.fromkeys(r.written for r in records)))


def _user_names(record: CallRecord, traced: Any, compiled: Any) -> tuple[Any, Any]:
    """The stations with their arguments by the user's names: ``v``, not ``jax.pmap``'s ``flat_args[0]``; ``model[3]``,
    not ``eqx.filter_jit``'s ``dynamic_nodonate['first'][3]``; ``model.l1.kernel``, not ``nnx.jit``'s
    ``model.states[0][7]`` (as ``%jaxcache`` names them)."""
    paths = [a.path for a in traced.args]
    renamed = named_leaves(paths, record.leaf_labels, record.name)
    if record.pmap:
        renamed = _jax_compat.pmapped_arg_names(record.fun, paths) or renamed
    out_paths = [o.path for o in traced.out_info]
    outputs = equinox_output_names(out_paths) if renamed and record.leaf_labels is not None else {}
    if not renamed and record.in_tree is not None:
        renamed = graph_leaf_names(record.in_tree, paths)
        outputs = graph_output_names(record.in_tree, paths, record.out_tree, out_paths)
    if not renamed and not outputs:
        return traced, compiled
    traced = dataclasses.replace(traced, args=tuple(dataclasses.replace(a, path=renamed.get(a.path, a.path)) for a in traced.args),
                                 out_info=tuple(dataclasses.replace(o, path=outputs.get(o.path, o.path)) for o in traced.out_info))
    if compiled is not None:
        compiled = dataclasses.replace(
            compiled, inputs=tuple(dataclasses.replace(p, path=renamed.get(p.path, p.path)) for p in compiled.inputs),
            outputs=tuple(dataclasses.replace(p, path=outputs.get(p.path, p.path)) for p in compiled.outputs),
            sharding_views=tuple(dataclasses.replace(v, example=renamed.get(v.example, v.example)) for v in compiled.sharding_views),
            buffers=tuple(dataclasses.replace(b, detail=re.sub(r"\(([^()]+)\)", lambda m: f"({renamed.get(m[1], m[1])})",
                                                              b.detail)) if b.detail else b for b in compiled.buffers))
    return traced, compiled


def _stage_under_way(record: CallRecord) -> str:
    """The stage a cut-off call had reached when the cell ended."""
    if record.jaxpr is None:
        return "tracing"
    if record.computation is None:
        return "lowering"
    return "running" if any(e.stage == "compile" for e in record.events) else "compiling"


def _signature_key(record: CallRecord) -> tuple:
    """Calls of one function object with one signature are one report, however many there were.

    A transformed call (``grad``'s forward and backward programs) is its own
    jaxpr; a call that failed is kept apart from those that did not, and so is a call traced under another
    transformation (``jax.grad`` and ``jax.vmap`` over examples of the same shapes get one trace of the function).
    A call's jaxpr is the entry JAX's tracing cache gave it, so calls with one jaxpr are the calls JAX found one
    signature in: argument types, static values, and also the input pytree and the config context, which two calls
    of equal types can differ in (a pytree's metadata, ``jax.default_matmul_precision``), and JAX then traces again.
    Calls of one jaxpr with another lowering are another program: JAX lowered and compiled that trace again for
    another placement of the arguments (a sharding under Auto mesh axes, a device).
    """
    jaxpr = record.jaxpr
    program = record.computation if record.continued == "Lowered" else record.executable
    shape = (("jaxpr", id(jaxpr), id(record.computation)) if jaxpr is not None else ("program", id(program)) if program is not None
             else ("record", record.seq))
    return (id(record.fun) if record.fun is not None else record.name, record.path == "transform", record.transformed_by,
            shape, record.static_args, record.failed_in)


def _group_report(group: list[CallRecord], walk: WalkOptions, main_thread: int,
                  label: Callable[[SourceLocation | None], SourceLocation | None],
                  label_text: Callable[[str], str], counted: bool = False, raised_first: bool = False) -> StagesReport:
    """The report of the first call of a group, with the stage seconds of all of them and the call count.

    ``counted``: the cell's calls of the library object that made these (``nnx.jit``) are counted in a note of
    their own, so a library's unseen hits are not said here again. ``raised_first``: the cell raised, and JAX compiled
    nothing after the group's first call.
    """
    first = group[0]
    ahead = first.ahead_of_time is not None and not first.compiled_called  # the calls came after, through the jit
    compiled_later = ahead and not _compiled(first) and any(_compiled(r) for r in group[1:])
    report = stages_report(first, walk, main_thread, label, label_text, compiled_later=compiled_later, raised_first=raised_first)
    calls = _calls(group)
    if len(group) > 1:
        report = dataclasses.replace(report, timings=timings_from_events([e for r in group for e in r.events]))
    # Hits are counted only for calls the call hook saw (written in the cell, or in a cell it ran): inside a function,
    # one that hit JAX's C++ cache is unseen. Compared as labelled: a body that a cell magic ran as code of its own
    # (%%jaxstages over %%time) is the cell's.
    inside = next((_code_name(label(r.site) or r.site) for r in group
                   if r.site is not None and not r.hooked and label(r.site) != label(r.cell_site)), None)
    if not counted:  # a call a library made: its calls that hit JAX's cache there are unseen too
        inside = inside or next((r.through_library for r in group if r.through_library is not None), None)
    return _with_repeats(report, calls, inside, then=ahead)


def _calls(records: Sequence[CallRecord]) -> int:
    """How many calls ``records`` are: a trace or lowering ahead of time is none, unless its Compiled was called."""
    return sum((r.ahead_of_time is None or r.compiled_called) + r.repeat_hits for r in records)


def _code_name(site: SourceLocation) -> str:
    """The function a call site is in; a file's top level (``<module>``: a ``%run`` script, a module importing) by its file."""
    return os.path.basename(site.file) if site.function == "<module>" else site.function


def _with_repeats(report: StagesReport, calls: int, inside: str | None = None, then: bool = False) -> StagesReport:
    """``report`` with a note of its calls; ``then``: its record traced ahead of time, and the calls came after. None
    seen of a trace ahead of time is no note, even where unseen calls could hide (``jax.make_jaxpr`` inside a function)."""
    if calls == 0 or (calls == 1 and not then and inside is None):
        return report
    called = "then called" if then else "called"
    count = "once" if calls == 1 else f"{calls:,} times"
    if inside is None:
        note = f"{called} {count} with this signature in the cell"
    else:
        note = (f"{called} at least {count} with this signature in the cell "
                f"(calls from inside {inside} that hit JAX's cache are not seen)")
    notes = tuple(n for n in report.notes if not n.startswith("called ")) + (note,)
    return dataclasses.replace(report, notes=notes, repeat_hits=max(calls - 1, 0))


def _defined_at(record: CallRecord) -> SourceLocation | None:
    """Where the user's function is defined, where JAX's jit info does not say (a callable object, ``jax.pmap``, a transform)."""
    if record.defined_at is not None or record.exported:  # an Exported keeps its function's name, not where it is defined
        return record.defined_at
    if record.pmap:
        return pmapped_defined_at(record.fun)
    return defined_at_of(record.jaxpr) if record.jit_info is None else None


COMPILED_WITH_OPTIONS = ("compiled too, with compiler_options or device_assignment given to .compile(), so JAX keeps the "
                         "executable only in the jax.stages.Compiled it returned: ④ is read from it when the cell calls it")
"""The note's end for a lowering ahead of time whose ``.compile()`` JAX did not cache on it, and whose Compiled the cell
did not call."""


def stages_report(record: CallRecord, walk: WalkOptions, main_thread: int,
                  label: Callable[[SourceLocation | None], SourceLocation | None] = lambda loc: loc,
                  label_text: Callable[[str], str] = lambda text: text, *, compiled_later: bool = False,
                  raised_first: bool = False) -> StagesReport:
    """One record as a :class:`StagesReport`: stations from the JAX objects taken inside the call.

    ``compiled_later``: a lowering ahead of time that a later call of the same signature compiled, not ``.compile()``.
    ``raised_first``: the cell raised, and JAX compiled nothing after this call.
    """
    notes = list(record.notes)
    if record.callback_of is not None:
        notes.append(f"made by your host callback as {record.callback_of}'s program ran (jax.debug.callback, "
                     f"jax.pure_callback or io_callback): compiled on its own, not part of {record.callback_of}'s program")
    if record.path == "jit" and record.lowered is None and record.computation is not None:
        finish_ahead_of_time(record)
        compiled = ("not compiled by .compile(): a later call compiled it" if compiled_later else
                    "compiled too" if record.compiled is not None else
                    COMPILED_WITH_OPTIONS if "compile" in record.stages_run and record.failed_in != "compile" else "not compiled")
        if record.continued == "Traced" and record.compiled is not None and not _compiled(record):
            compiled = "compiled before this cell (its Compiled station is the executable JAX kept)"
        how = "exported with jax.export in the cell (traced and lowered)" if record.ahead_of_time == "jax.export" else (
            "lowered ahead of time in the cell (.lower())")
        notes.append(f"{how}; {compiled}" if record.continued is None else
                     f"lowered from a jax.stages.Traced made before this cell (.lower()); {compiled}" if record.continued == "Traced" else
                     "compiled from a jax.stages.Lowered made before this cell (.compile())")
        if record.compiled_called:
            notes.append("then called through the jax.stages.Compiled made of it: its executable ran, with no trace, "
                         "lowering or compile")
        if record.compiled_raised:
            calls = "a call" if len(record.compiled_raised) == 1 else f"{len(record.compiled_raised)} calls"
            notes.append(f"{calls} of the jax.stages.Compiled made of it raised" + (
                ", and the cell caught the error" if all(record.compiled_raised) else " the cell's error"))
    elif record.continued == "Traced":  # jax 0.7's Traced lowers with the function it was made with, where no hook is
        notes.append(f"lowered from a jax.stages.Traced made before this cell (.lower()); jax {jax.__version__}'s Traced lowers "
                     "where jaxshow does not see the lowering, so the Lowered station is not shown")
    elif record.continued == "Compiled":
        notes.append("a call of a jax.stages.Compiled made before this cell (lowered.compile()): it ran the executable compiled "
                     "then")
    elif record.ahead_of_time in TRACED_ONLY and record.computation is None:
        notes.append(f"traced by {record.ahead_of_time}, not called: JAX lowered and compiled nothing for it")
    stations = stations_of(record, walk)
    linked = _linked(record, stations.lowered, stations.compiled, label, notes, walk.jaxpr_max_lines) if walk.source else None
    traced, lowered, compiled = labelled_stations(stations, walk, label_text)
    traced, unused = with_unused_donations(traced, lowered, _jax_compat.kept_inputs(record.computation))
    if traced is not None:
        traced, compiled = _user_names(record, traced, compiled)
    if unused:
        notes.append(unused)
    if record.under_transform and record.computation is None:
        notes.append(_transformed_note(record.transformed_by, raised_first))
    if record.exported:
        notes.append(f"the program of {record.written}, exported with jax.export, run by Exported.call outside jit: JAX "
                     "compiled it inside a program of its own, call_exported")
    if record.path == "transform":
        how = (f"under {record.transformed_by}" if record.transformed_by else
               "(its derivative under jax.grad, its batched form under jax.vmap, …)")
        notes.append(f"compiled for a transformation of {record.written} {how}: the jaxpr and arguments are the transformed ones")
    if record.path == "hit" and record.lowered is not None:
        notes.append("stations read from JAX's caches in the call's own context")
    if record.fun is not None and (note := definition_note(record.fun, record.written)) is not None:
        notes.append(note)
    error = labelled_error(record.error, record.failed_in, label_text)
    if (found := _jax_compat.special_value_found(record.error)) is not None:
        program, value = found
        flag = "jax_debug_nans" if value == "nan" else "jax_debug_infs"
        error = ErrorSummary(f"{value} in the output", f"{flag}'s check found {value} in the output of {program}, after it ran",
                             record.failed_in)
        notes.append(f"the program compiled and ran; {flag} then made JAX run {record.written} again de-optimized (its Python, "
                     "each operation dispatched on its own) to find the operation, then raise FloatingPointError; "
                     "that re-run's compiles are counted among JAX's own helpers")
    elif record.failed_in == "compile" and any(e.stage == "compile" for e in record.events):
        notes.append("its compile is timed though it failed: JAX times its compile step however it ends (an XLA error, or "
                     "Ctrl-C, which Python takes only once XLA returns); JAX kept no executable, and the program did not run")
    elif record.failed_in == "run" and _jax_compat.refused_to_run(record.error):
        notes.append("the program compiled; JAX did not run it: jax.no_execution() was in effect")
    elif record.failed_in == "run":
        notes.append("the program compiled; it failed while running or while its arguments were placed (a callback, a runtime "
                     "check, memory, a deleted input, a transfer jax.transfer_guard disallows)")
    return StagesReport(
        function=record.written,
        wrapper=labelled_wrapper(wrapper_station(
            None if record.exported else record.jit_info, name=record.written,
            qualname=written(_qualname(record), record.transforms),
            kind=_wrapper_kind(record),
            static_args=record.static_args, defined_at=_defined_at(record),
            options_unavailable=f"not known: the jax.stages.{record.continued} made before this cell does not keep them"
            if record.continued else "none: JAX's own jit around the exported program (call_exported)" if record.exported
            else None), label),
        traced=traced,
        lowered=lowered,
        compiled=compiled,
        timings=timings_from_events(record.events),
        stopped_at=record.failed_in,
        error=error,
        notes=tuple(notes),
        executed=record.path != "hit" or record.error is None,
        call_site=label(record.site),
        cell_site=label(_cell_line_apart(record.cell_site, record.site)),  # compared as files, not labels: two cells may read alike
        kind=record.kind,
        repeat_hits=record.repeat_hits,
        other_thread=record.thread_id != main_thread,
        jit_disabled=record.jit_disabled,
        under_transform=record.under_transform and record.path == "jit",
        transformed_by=record.transformed_by if record.path == "jit" else None,
        linked=linked,
        trace_context=_jax_compat.describe_trace_context(record.trace_context),
        passed=record.passed,
        caught_refusal=record.caught_refusal,
        continued=record.continued,  # type: ignore[arg-type]
    )


def _cell_line_apart(cell_site: SourceLocation | None, site: SourceLocation | None) -> SourceLocation | None:
    """The cell line that led to the call, where it is another line than the call's own (a lambda on the cell's line
    is on that line: ``called at In[5]:2 in <lambda>`` says it all)."""
    if cell_site is None or (site is not None and (cell_site.file, cell_site.line) == (site.file, site.line)):
        return None
    return cell_site


def _qualname(record: CallRecord) -> str:
    """The qualified name of the user's function inside JAX's wrappers (a jit wrapper, checkify's ``checked_fun``);
    the body of a ``jax.pmap`` is named for the function it carries."""
    if record.pmap or record.exported:
        return record.name
    inner = innermost(record.fun)
    if jax_made(inner):  # JAX's own closure around the user's function
        inner = closure_function(inner) or inner
    return qualname_of(inner, record.name)


def _transformed_note(api: str | None, raised_first: bool) -> str:
    """What JAX compiled for a call traced under another function's tracers (``api``, where jaxshow knows it), or would
    have compiled where the cell raised first (``jax.vmap`` of an ordered ``io_callback``)."""
    if raised_first:
        whole = f"the whole {api} with this call inlined" if api in CONTROL_FLOW else "the transformed function"
        return (f"traced inside {api or 'a transformation (jax.grad, jax.vmap or an outer jit)'}: the cell raised before "
                f"JAX compiled {whole}, which is what it compiles, not this function on its own")
    if api in CONTROL_FLOW:
        return (f"traced inside {api}, called outside jit: JAX compiled the whole {api} with this call inlined, as its own "
                f"eager {CONTROL_FLOW[api]} (in the cell line's eager loops), not this function on its own")
    return (f"traced inside {api or 'a transformation (jax.grad, jax.vmap or an outer jit)'}: "
            "what JAX compiled is the transformed function, shown as its own call")


def _linked(record: CallRecord, lowered: LoweredStation | None, compiled: CompiledStation | None,
            label: Callable[[SourceLocation | None], SourceLocation | None], notes: list[str],
            jaxpr_max_lines: int | None) -> LinkedViews | None:
    """The linked views of a record, from the JAX objects taken inside the call; a failure is a note."""
    try:
        return linked_views(record.jaxpr, located_stablehlo(record.lowered, lowered), compiled.optimized_hlo_text if compiled else None,
                            functools.partial(file_label, label=label),
                            jaxpr_max_lines)
    except Exception as exc:  # noqa: BLE001 - jaxshow's failure is a note, never the cell's outcome
        notes.append(f"jaxshow could not link the source to the IR: {type(exc).__name__}: {exc}")
        return None


def _wrapper_kind(record: CallRecord) -> str:
    if record.pmap or record.path == "wrapper":
        return "jax.pmap"
    if record.ahead_of_time in ("jax.make_jaxpr", "jax.eval_shape"):
        if type(record.fun) is functools.partial and jit_target(record.fun) is not None:  # eval_shape(partial(f, 3)), f jitted
            return (f"jax.jit that {record.ahead_of_time} made around functools.partial({record.name}, …): the options below "
                    f"are that jit's, not {record.name}'s")
        return f"jax.jit (inside {record.ahead_of_time})"
    if record.exported:
        return "jax.export (Exported.call)"
    if record.path == "transform":
        return "jit_p (inside a transformation)"
    if record.jitted_by is not None:
        library, name = record.jitted_by, record.name
        return f"jax.jit of {library}'s own function around {name}: the options below are {library}'s, not {name}'s"
    if record.through_library is not None and library_wrapped(record.fun) is not None:
        # flax's nnx.jit, called through flax's code: a jax.jit of its JitFn, which wraps the user's function
        kind = type(record.fun)
        library = type_module(kind).split(".")[0]
        return f"jax.jit of {library}'s {kind.__name__} around {record.name}: the options below are the ones {library} passed"
    return "jax.jit"


EAGER_SHARD_MAP = ("_prim_applier", "_match", "_unmatch")
"""The functions ``jax.shard_map`` called outside jit compiles (``jax/_src/shard_map.py``): each operation of the
user's function on every device's block, and the moves between the global array and those blocks."""


def _no_call_note(names: tuple[str, ...], *, raised: bool, library_calls: bool = False,
                  jit_disabled: str | None = None, helpers: Sequence[str] = ()) -> str | None:
    """The note of a cell without a jitted call of the user's; ``names``: JAX's own functions that compiled in it.

    The report's folded lines name them (and the eager loops); the note says what they were for, naming only
    shard_map's, and a cell that raised is not said to have run normally. A cell that called a
    library's jitted function (``library_calls``, said in a note of its own) did make jitted calls. Where jit was
    disabled (``jit_disabled``: how), the jitted calls inside the user's helpers ran unseen: the note says so instead.
    Else, where the cell called functions of the user's (``helpers``), a jitted call inside one that hit JAX's cache is
    unseen: said too.
    """
    sharded = [n for n in EAGER_SHARD_MAP if n in names]
    what = ["eager jax.numpy operations"] if any(n not in EAGER_SHARD_MAP and n not in USER_CODE_HELPERS for n in names) else []
    what.extend(f"{n}: {USER_CODE_HELPERS[n]}" for n in dict.fromkeys(names) if n in USER_CODE_HELPERS)
    if sharded:
        what.append(f"{', '.join(sharded)}: jax.shard_map run outside jit, which runs the function it maps (yours too, if any) "
                    "one operation at a time on each device's block and splits and joins the arrays; under jax.jit it "
                    "compiles as one program")
    compiled = f"JAX compiled its own helpers ({'; '.join(what)})"
    if library_calls and jit_disabled is None:
        return compiled if what else None
    unseen = helpers and jit_disabled is None
    if jit_disabled is not None:
        seen = jit_disabled_note(jit_disabled)
    else:
        seen = "no jitted call of yours seen in this cell"  # a call on another thread that hit JAX's cache is never seen
    note = seen + ("" if raised else "; the cell ran normally")
    sentences = [note, *([compiled] if what else []), *([unseen_hits(helpers, capital=True)] if unseen else [])]
    return ". ".join(sentences)


def _compiled(record: CallRecord) -> bool:
    return any(e.stage == "compile" for e in record.events)


def _loop_bodies(record: CallRecord, label: Callable[[SourceLocation | None], SourceLocation | None]) -> tuple[str, ...]:
    """``("step (In[4]:2)",)``: the functions an eager loop or branch ran that are not JAX's own."""
    bodies = []
    for name, file, line in functions_run_by(record.jaxpr, EAGER_CONTROL_FLOW) if record.jaxpr is not None else ():
        if not is_jax_file(file):
            where = file_label(file, label)
            bodies.append(f"{name} ({where}:{line})" if line else f"{name} ({where})")
    return tuple(dict.fromkeys(bodies))


def _library_hits(capture: CallCapture, records: list[CallRecord]) -> list[tuple[LibraryCalls, str]]:
    """The cell's calls of a library's jitted object (``nnx.jit``) that JAX served from its cache inside the library,
    unseen: each such object with a note that says so."""
    unseen = []
    for calls in capture.library_calls.values():
        seen = sum(1 + r.repeat_hits for r in records if r.path == "jit" and r.fun is calls.fun)
        hits = calls.calls - seen
        if hits <= 0:
            continue
        library = calls.holder.split("'")[0]
        if seen:
            note = (f"{calls.name} ({calls.holder}): {hits:,} more call{'s' if hits > 1 else ''} in this cell "
                    f"{'were' if hits > 1 else 'was'} served from JAX's cache inside {library}, where jaxshow cannot see a call")
        else:
            note = (f"{calls.name} ({calls.holder}) was called {hits:,} time{'s' if hits > 1 else ''} in this cell, "
                    f"{'each' if hits > 1 else ''} served from JAX's cache inside {library}, where jaxshow cannot see a call: "
                    "no stages to show (a call that traces, the first or one after a change, shows them)")
        unseen.append((calls, note.replace(",  served", ", served")))
    return unseen
