"""Why one trace missed JAX's tracing cache: a miss -> category, changed values, evidence.

Owns :func:`classify_miss`, which weighs the two sources of evidence (JAX's own
explanation, and jaxshow's diff against the closest signature it kept), and the
rewording of what JAX leaves unnamed (static arguments by parameter name, as
``%%jaxstages`` names them; trace-context values by option name). Pure: it reads a function's history and
never changes it. Reads JAX's trace keys only through :mod:`jaxshow._jax_compat`;
imports :mod:`jaxshow.retrace.miss_text` and :mod:`jaxshow.retrace.history`,
never :mod:`jaxshow.retrace.session`, and no IPython.
"""

from __future__ import annotations

import re
import types
import weakref
from typing import Any


from jaxshow import _jax_compat
from jaxshow.capture.carried import closure_function, library_file, package_of
from jaxshow.capture.sources import is_jax_file
from jaxshow.capture.stations import argument_label, is_jax_type
from jaxshow.report import MISS_TITLES, ArgChange, MissCategory, plural
from jaxshow.reprs import ANOTHER_OBJECT, differ
from jaxshow.retrace.history import _FunctionRecord
from jaxshow.retrace.identity import identity_part
from jaxshow.retrace.miss_text import (BY_KEYWORD, BY_POSITION, BY_POSITION_COUNT, CLEARED_HINT, CONTEXT_POSITION,
                                       DEFINED_AT, EQUAL_AS_PRINTED, NO_SITE_HINT, NOT_PASSED, SAME_LINE_HINT, TRACE_CONTEXT, class_made_anew,
                                       input_path_name, parse_explanation, value_change)

def classify_miss(
    record: _FunctionRecord, status: str, key: Any, jax_text: str | None, old: Any, kept: int, from_jax: int = 0,
    inside_own: bool = False,
) -> tuple[MissCategory, tuple[ArgChange, ...], str, str, tuple[str, ...], bool, str | None]:
    """Why a trace of ``record``'s function missed:
    ``(category, changes, evidence, evidence_source, evidence_notes, same_line_hint, call_site)``.

    ``record`` and ``status`` are what :meth:`Registry.record_for` answered;
    ``key`` is the trace's cache key (``None`` where JAX gives none);
    ``jax_text`` is JAX's own explanation of this miss, if it gave one; ``old``
    is the closest earlier key (:func:`closest_key`) and ``kept`` the number of
    keys it was chosen from, ``from_jax`` how many of those were read from JAX's
    tracing cache (traced before jaxshow looked), all as they were when the
    trace missed (``None`` and 0 for a function not seen before), so the
    answer is the same whenever it is asked. ``evidence`` is JAX's text as JAX
    wrote it, or jaxshow's diff; ``evidence_notes`` are jaxshow's own sentences about JAX's text.
    ``inside_own``: the trace ran inside the function's own trace, not yet in JAX's cache, whose key is ``old``.
    """
    source = "none"
    evidence = ""
    notes: list[str] = []
    if status != "known":
        old = None
    if old is not None and _same_key(key, old):
        return "not_kept", (), "", source, (), False, None
    text = _jax_compat.diff_trace_keys(key, old) if old is not None else None
    if text and jax_text is not None and text.startswith(_jax_compat.EXPLANATION_UNAVAILABLE):
        text = None  # jaxshow's comparison failed (a static value's repr or ==): JAX's words are the evidence
    if text:
        category, changes, same_line, site = parse_explanation(text)
        if jax_text is not None:
            evidence, source = _url_apart(jax_text), "jax"
            jax_category, jax_changes, _, site = parse_explanation(jax_text)
            closer = f"The most similar earlier signature differs thus:\n  {_url_apart(text.strip())})"
            if inside_own:
                notes.append(_inside_own_note(record.name))
            elif jax_category == "other":
                notes.append(f"(JAX gave no reason. {closer}")
            elif (jax_category, {c.where for c in jax_changes}) != (category, {c.where for c in changes}):  # not a mere value
                notes.append(f"(JAX explained it against another earlier signature: {MISS_TITLES[jax_category]}. {closer}")
        else:
            compared = f"the signature of the trace of {record.name} it ran inside" if inside_own else _compared_with(kept, from_jax)
            evidence = f"  for {record.name} defined at {record.defined_at}\n  {compared}:\n  {_url_apart(text)}"
            source = "jaxshow"
    elif jax_text is not None:
        evidence, source = _url_apart(jax_text), "jax"
        category, changes, same_line, site = parse_explanation(evidence)
    elif status != "known" or not kept:
        category, changes, same_line, site = "never_seen", (), False, None
    else:
        category, changes, same_line, site = "other", (), False, None
    if source == "jax" and SAME_LINE_HINT in evidence:
        if status == "after_clear":
            same_line = False
            notes.append(CLEARED_HINT)
        elif not same_line:
            notes.append(NO_SITE_HINT)
        elif (library := _library_site(site)) is not None:
            same_line = False
            notes.append(_library_site_hint(library))
    if key is not None and old is not None and (switched := _static_switches(key, old, record.parameters)):
        # JAX's words on the same arguments, and jax <= 0.8's lists of static values, which no longer align
        said = {where for c, path in switched for where in (c.where, input_path_name(path))} | {"static args", "static kwargs"}
        category, changes = "static_args", (*(c for c, _ in switched), *(c for c in changes if c.where not in said))
    if category == "input_types" and key is not None and any(_on_other_meshes(c) for c in changes):
        changes = _with_meshes(changes, key, old, record)
    if category == "input_types":
        changes = tuple(_without_shared_mesh_types(c) for c in changes)
    if category == "static_args":
        changes = _name_static_args(changes, key, old if text else None, record.parameters)
    if category in ("static_args", "input_pytree"):
        changes = _name_positional_count(changes, record.parameters)
        if old is not None and any(_prints_alike(c) for c in changes):
            changes = _name_identity_part(changes, key, old, record.parameters)
        if category == "input_pytree" and key is not None and old is not None:
            changes = _static_fields(changes, key, old)
        if text and key is not None:  # jaxshow's comparison with old: JAX's diff stops at its first difference
            changes = _unsaid_parts(changes, key, old, record.parameters)
        if category == "input_pytree" and _all_static(changes, key, old, record.parameters):
            category = "static_args"
        elif category == "input_pytree" and key is not None:
            changes = _name_tree_paths(changes, key, record.parameters)
            if old is not None:
                changes = _classes_made_anew(changes, key, old)
    elif category == "tracing_context" and all(c.where.startswith(CONTEXT_POSITION) for c in changes):
        changes = (_context_changes(key, old) if key is not None else ()) or _named_positions(changes)
    if category == "tracing_context" and key is not None and _said_ambiguously(changes):
        changes = _context_changes(key, old) or changes
    if category == "tracing_context" and key is not None and old is not None:
        changes = _unsaid_parts(_context_values_shown(_shard_map_context(changes, key, old), key, old), key, old, record.parameters)
    if category == "tracing_context":
        changes = tuple(_mesh_context(c) for c in changes)
    if category == "debug_info" and key is not None and old is not None:
        changes = _unsaid_parts(_debug_info_changes(key, old), key, old, record.parameters)
    if category == "never_seen":
        if status == "same_source":  # JAX's same-line hint alone is no proof: it compares call sites, not definitions
            category = "redefined"
    return category, changes, evidence, source, tuple(notes), same_line, site


def _debug_info_changes(key: Any, old: Any) -> tuple[ArgChange, ...]:
    """What differs in two keys' debug infos, where JAX says only "Debug info doesn't match.": the definition's place
    (``file:line``), the argument names, what it was traced for."""
    (_, now), (_, before) = _jax_compat.trace_key_context(key), _jax_compat.trace_key_context(old)
    if now is None or before is None:
        return ()
    changes = []
    places = [_jax_compat.parse_source_info(getattr(info, "func_src_info", None)) for info in (now, before)]
    if places[0] != places[1]:
        changes.append(ArgChange(DEFINED_AT, *(f"{p[1]}:{p[2]}" if p is not None else "?" for p in places)))
    names = [tuple(getattr(info, "arg_names", None) or ()) for info in (now, before)]
    if names[0] != names[1]:
        changes.append(ArgChange("argument names", *(", ".join(n) or "none" for n in names)))
    traced_for = [str(getattr(info, "traced_for", "")) for info in (now, before)]
    if traced_for[0] != traced_for[1]:
        changes.append(ArgChange("traced for", *traced_for))
    return tuple(changes)


def _url_apart(text: str) -> str:
    """JAX's words with a space before the link it appends with none (``f32[3]{weak_type=True}https://docs.jax.dev/…``)."""
    return re.sub(r"(?<=\S)(?=https?://)", " ", text)


def _inside_own_note(function: str) -> str:
    """jaxshow's sentence on JAX's "never seen function" for a trace inside the function's own trace (a recursive call)."""
    return (f"(JAX's cache held no signature of {function} yet: this call ran inside {function}'s own trace (a recursive "
            "call), whose key JAX's cache holds only once that trace ends. What differs is said against that trace's "
            "signature.)")


def _compared_with(kept: int, from_jax: int) -> str:
    """Which earlier signatures jaxshow's diff chose from: those it saw trace, and those read from JAX's tracing cache."""
    read = "read from JAX's tracing cache (traced before jaxshow looked)"
    if kept == 1:
        return f"the only earlier signature, {read}" if from_jax else "the only earlier signature jaxshow kept"
    if from_jax == kept:
        return f"closest of the {kept} earlier signatures {read}"
    return f"closest of the last {kept} signatures jaxshow kept" + (f", {from_jax} of them {read}" if from_jax else "")


_SITE_FILE = re.compile(r"^(?P<file>.+?):\d+(?::\d+)? \(")


def _library_site(site: str | None) -> str | None:
    """The library whose file JAX's call site of a miss is in (flax's ``nnx.jit`` calls every function it jits from one line
    of ``compilation.py``), else ``None``."""
    match = _SITE_FILE.match(site or "")
    return package_of(match.group("file")) if match and library_file(match.group("file")) else None


def _library_site_hint(library: str) -> str:
    """Why JAX's same-line hint says nothing where its call site is a library's line."""
    return (f"(JAX's same-line hint compares call sites, and this one is a line of {library}'s, which calls every function "
            "it jits from there: here it is no sign of a re-definition)")


def _same_key(key: Any, old: Any) -> bool:
    """Whether ``key`` is the earlier key ``old`` itself (compared as JAX's cache compares them; a user's ``==`` that raises: no)."""
    return not differ(key, old)


_MESH_TYPES = re.compile(r"\(\{[^()]*(?:\([^()]*\)[^()]*)*\}\)$")
"""JAX's mesh axis types after a type, ``({Auto: ('data', 'model')})``; ``({})`` for no mesh."""


def _meshes_apart(change: ArgChange) -> bool:
    """Whether a type change is one of meshes only: spelled the same both ways, or but for JAX's axis types of each
    type's mesh (``f32[8,8]({})``, ``f32[8,8]({Auto: ('data', 'model')})``)."""
    return change.now == change.before or (
        _MESH_TYPES.search(change.now) is not None and _MESH_TYPES.sub("", change.now) == _MESH_TYPES.sub("", change.before))


def _on_other_meshes(change: ArgChange) -> bool:
    """Whether a type change is said with JAX's mesh axis types, other on each side (``f32[8@i,8]({Explicit: ('i',)})``,
    ``f32[8,8]({Auto: ('data', 'model')})``): its meshes are said too (:func:`_with_meshes`), not JAX's notation."""
    now, before = _MESH_TYPES.search(change.now), _MESH_TYPES.search(change.before)
    return _meshes_apart(change) or (now is not None and before is not None and now.group() != before.group())


def _without_shared_mesh_types(change: ArgChange) -> ArgChange:
    """A type change JAX writes with the same mesh axis types on both sides (``f32[8@model,8]({Explicit: ('data',
    'model')})`` and ``f32[8@data,8]({Explicit: ('data', 'model')})``), said without them: the types tell the change."""
    now, before = _MESH_TYPES.search(change.now), _MESH_TYPES.search(change.before)
    if now is None or before is None or now.group() != before.group() or change.now == change.before:
        return change
    return ArgChange(change.where, change.now[:now.start()], change.before[:before.start()])


def _with_meshes(changes: tuple[ArgChange, ...], key: Any, old: Any, record: _FunctionRecord) -> tuple[ArgChange, ...]:
    """A type change JAX spells the same both ways (``f32[8,8]({Auto: ('data', 'model')})`` twice: only the
    mesh's axis sizes differ, as after ``jax.make_mesh((4, 2), ...)`` replaced a ``(2, 4)`` mesh), or but for its
    mesh's axis types (``f32[8,8]({})``: no mesh, an array on one device), said with the meshes; where their axis
    sizes are the same too, with the kind of devices each names (an ``AbstractMesh`` made by hand names none).

    The earlier key is ``old`` (the closest jaxshow kept), else the latest of JAX's cached keys whose types
    differ from this one's only in their meshes where JAX saw a change (a trace made before the session).
    """
    if old is not None:
        candidates = [old]
    else:
        fun = record.fun_ref() if record.fun_ref is not None else None
        candidates = list(reversed(_jax_compat.cached_trace_keys(fun, _jax_compat.trace_key_context(key)[1], other_than=key) or ()))
    for devices in (False, True):  # the kind of devices only where the meshes' axis sizes do not tell them apart
        told = _told_by_meshes(changes, key, candidates, devices)
        if told is not None:
            return told
    return changes


def _told_by_meshes(changes: tuple[ArgChange, ...], key: Any, candidates: list, devices: bool) -> tuple[ArgChange, ...] | None:
    """``changes`` said with the meshes (and ``devices``, their kind of devices) against the first of ``candidates``
    whose types then differ from this key's at every argument whose change is one of meshes only; ``None`` if none do."""
    now = _jax_compat.describe_trace_key(key, mesh=True, devices=devices)
    if now is None:
        return None
    names = [name for name, _ in now[0]]
    wanted = [names.index(c.where) for c in changes if _on_other_meshes(c) and c.where in names]
    for candidate in candidates:  # by position: a key JAX kept may carry no argument names
        described = _jax_compat.describe_trace_key(candidate, mesh=True, devices=devices)
        before = [text for _, text in described[0]] if described else []
        if len(before) == len(names) and wanted and all(before[i] != now[0][i][1] for i in wanted):
            return tuple(ArgChange(c.where, now[0][names.index(c.where)][1], before[names.index(c.where)])
                         if _on_other_meshes(c) and c.where in names else c for c in changes)
    return None


def _name_static_args(changes: tuple[ArgChange, ...], key: Any, old: Any, names: tuple[str, ...]) -> tuple[ArgChange, ...]:
    """Each changed static argument by its parameter name (``names``: the positional ones), as ``%%jaxstages`` shows them.

    jax >= 0.9 gives input paths (``argument 1``, ``keyword 'n'`` once read);
    jax <= 0.8 says ``now 3 and before 2`` for static arguments and
    ``now {n: 3} and before {n: 2}`` for keywords, naming neither.
    """
    if moved := _static_passed_another_way(changes, key, old):
        return moved
    positions = _jax_compat.static_arg_positions(key) if key is not None else None
    named: list[ArgChange] = []
    for change in changes:
        if change.where == "static args" and positions and change.now != EQUAL_AS_PRINTED:
            now, before = change.now.split(", "), change.before.split(", ")
            if len(positions) == len(now) == len(before):
                named.extend(ArgChange(argument_label(names, p), n or NOT_PASSED, b or NOT_PASSED)
                             for p, n, b in zip(positions, now, before) if n != b)
                continue
        elif change.where == "static kwargs":
            now_kw, before_kw = _static_kwargs(change.now), _static_kwargs(change.before)
            if now_kw.keys() == before_kw.keys():
                named.extend(ArgChange(k, now_kw[k], before_kw[k]) for k in now_kw if now_kw[k] != before_kw[k])
                continue
        elif m := _PATH_NAME.match(change.where):
            where = argument_label(names, int(m.group("i"))) if m.group("i") is not None else m.group("k")
            change = ArgChange(where, change.now, change.before)
        named.append(change)
    return tuple(dict.fromkeys(named)) or changes


def _all_static(changes: tuple[ArgChange, ...], key: Any, old: Any, names: tuple[str, ...]) -> bool:
    """Whether every part of a pytree miss is a static argument of ``key`` or ``old``: jax >= 0.9 words a static
    argument passed another way (``n``, then ``n=``) or a static keyword passed now and left out before as a pytree
    of another shape; jax <= 0.8, and jaxshow, call them static arguments."""
    if not changes or key is None or old is None:
        return False
    statics = {_static_name(p, names) for k in (key, old) for p in _jax_compat.static_argument_paths(k)}
    return all(c.where in statics for c in changes)


def _static_switches(key: Any, old: Any, names: tuple[str, ...]) -> tuple[tuple[ArgChange, str], ...]:
    """The arguments static in one key and traced in the other (another ``jax.jit`` of the function, with other
    ``static_argnums``/``static_argnames``): ``n: now static (20), before traced (i32[])``, each with the input path of
    its static side, in parameter order. JAX words this as a pytree node of another type (jax 0.9-0.10), other debug
    info (jax >= 0.11) or other ``static_argnums`` (jax <= 0.8). A static argument passed another way, or left out, is
    no switch."""
    if _jax_compat.static_argument_paths(key) == _jax_compat.static_argument_paths(old):
        return ()  # the same arguments static both times (the usual miss): no value is shown, nothing to read
    statics = [{_static_name(p, names): (p, text) for p, text in _jax_compat.static_argument_texts(k).items()} for k in (key, old)]
    traced = [dict(d[0]) if d is not None else {} for d in map(_jax_compat.describe_trace_key, (key, old))]
    switched = []
    for name in sorted(statics[0].keys() ^ statics[1].keys(), key=lambda n: (names.index(n) if n in names else len(names), n)):
        now, before = (0, 1) if name in statics[0] else (1, 0)
        if name not in traced[before]:
            continue
        path, value = statics[now][name]
        sides = f"static ({value})", f"traced ({traced[before][name]})"
        switched.append((ArgChange(name, *(sides if now == 0 else sides[::-1])), path))
    return tuple(switched)


def _unsaid_parts(changes: tuple[ArgChange, ...], key: Any, old: Any, names: tuple[str, ...]) -> tuple[ArgChange, ...]:
    """``changes`` and, after them, what JAX's diff left unsaid because it stops at its first difference (the trace
    context, a keyword passed another way, the debug info): each static value passed the same way both times that
    differs, then each input type that differs, by argument name, in JAX's order of categories."""
    said = {c.where for c in changes}
    statics = [value_change(_static_name(p, names), now, before) for p, now, before in _jax_compat.static_value_changes(key, old)]
    now, before = (_jax_compat.describe_trace_key(k) for k in (key, old))
    types: list[ArgChange] = []
    if now is not None and before is not None:
        earlier = dict(before[0])
        unique = len(earlier) == len(before[0]) and len(dict(now[0])) == len(now[0])
        types = [ArgChange(n, t, earlier[n]) for n, t in now[0] if unique and n in earlier and t != earlier[n]]
    return (*changes, *(c for c in (*statics, *types) if c.where not in said))


def _static_name(path: str, names: tuple[str, ...]) -> str:
    """``[0][2]`` -> the parameter at position 2; ``[1]['n']`` -> ``n``."""
    m = _INPUT_PATH.match(path)
    if m is None:
        return path
    return argument_label(names, int(m.group("i"))) if m.group("i") is not None else m.group("k")


_INPUT_PATH = re.compile(r"^\[0\]\[(?P<i>\d+)\]$|^\[1\]\['(?P<k>[^']*)'\]$")


def _name_identity_part(changes: tuple[ArgChange, ...], key: Any, old: Any, names: tuple[str, ...]) -> tuple[ArgChange, ...]:
    """A change of two values that print alike (:data:`EQUAL_AS_PRINTED`, or alike but for their addresses) as the part
    of them that is another object (``avg_pool = functools.partial(…)`` both ways) or that their repr hid (``k = 2``,
    ``k = 1``), where the keys' first unequal static value or pytree metadata holds one; jax <= 0.8's ``static args``
    and ``static kwargs`` by parameter name (``names``: the positional ones)."""
    found = _jax_compat.unequal_node_data(key, old)
    parts = identity_part(found[0], found[1]) if found is not None else None
    first = next(i for i, c in enumerate(changes) if _prints_alike(c))
    if not _part_named(changes[first], parts):
        return changes
    where = changes[first].where
    positions = _jax_compat.static_arg_positions(key) or ()
    keywords = _jax_compat.static_kwarg_names(key)
    if where == "static args" and found[2] is not None and found[2] < len(positions):
        where = argument_label(names, positions[found[2]])
    elif where == "static kwargs" and found[2] is not None and 0 <= found[2] - len(positions) < len(keywords):
        where = keywords[found[2] - len(positions)]
    return (*changes[:first], ArgChange(where, *parts), *changes[first + 1:])


def _static_fields(changes: tuple[ArgChange, ...], key: Any, old: Any) -> tuple[ArgChange, ...]:
    """A change of a dataclass node's pytree metadata (``c (Cfg's pytree metadata): now ('relu', 3, 2.0), before
    ('relu', 3, 1.0)``, the values of its static fields) as each static field that differs, by name: ``c.scale (a static
    field of Cfg): now 2.0, before 1.0`` (``jax.tree_util.register_dataclass``, flax's ``struct.dataclass``)."""
    found = _jax_compat.static_fields_apart(key, old)
    if found is None or not found[1]:
        return changes
    kind, fields = found
    suffix = f" ({kind.__name__}'s pytree metadata)"
    first = next((i for i, c in enumerate(changes) if c.where.endswith(suffix)), None)  # the node found: JAX's first
    if first is None:
        return changes
    node = changes[first].where.removesuffix(suffix)
    named = (_field_change(f"{node}.{name} (a static field of {kind.__name__})", *field) for name, *field in fields)
    return (*changes[:first], *named, *changes[first + 1:])


def _field_change(where: str, now: Any, before: Any, now_text: str, before_text: str) -> ArgChange:
    """A static field's change, as the part that changed; for two values that print alike, the part of them that is
    another object or that their repr hid (:func:`identity_part`), as :func:`_name_identity_part` finds it."""
    change = value_change(where, now_text, before_text)
    if not _prints_alike(change):
        return change
    parts = identity_part(now, before)
    return ArgChange(where, *parts) if _part_named(change, parts) else change


def _part_named(change: ArgChange, parts: tuple[str, str] | None) -> bool:
    """Whether :func:`identity_part`'s ``parts`` say more than ``change``, two values that print alike: not where nothing
    was found, nor where the two print alike but for an address and the part found prints alike too (an object compared
    by identity, printed with its address: made anew, as its text says)."""
    return parts is not None and (change.now == EQUAL_AS_PRINTED or parts[0] != parts[1])


def _classes_made_anew(changes: tuple[ArgChange, ...], key: Any, old: Any) -> tuple[ArgChange, ...]:
    """A change of a pytree node's class to another that prints alike (``<class 'mod.Params'>`` both ways) as the class
    its module or cell made anew (:func:`class_made_anew`), not as a value compared by identity."""
    found = _jax_compat.node_classes_apart(key, old)
    if found is None:
        return changes
    text = repr(found[0])
    return tuple(class_made_anew(c.where, found[0].__module__, found[0].__qualname__) if c.now == c.before == text else c
                 for c in changes)


def _prints_alike(change: ArgChange) -> bool:
    """Whether a change's two values print alike (:data:`EQUAL_AS_PRINTED`), or alike but for their addresses (a class
    with its own ``__eq__`` and Python's default repr: the attribute that differs says more than the address)."""
    return change.now == change.before == EQUAL_AS_PRINTED or change.now.endswith(ANOTHER_OBJECT)


_TREE_PATH = re.compile(r"^(?:argument (?P<i>\d+)|\[0\]\[(?P<j>\d+)\])(?P<rest>.*)$|^(?:keyword '(?P<k>[^']*)'|\[1\]\['(?P<l>[^']*)'\])(?P<tail>.*)$",
                        re.S)


def _name_tree_paths(changes: tuple[ArgChange, ...], key: Any, names: tuple[str, ...]) -> tuple[ArgChange, ...]:
    """A changed pytree node by the parameter it is in: ``argument 1`` is ``pair``, ``[0][1]._graphdef`` (an NNX
    module's graph) ``model._graphdef``, ``[1]['opts'][0]`` ``opts[0]``. A position is named only where no positional
    argument is static: JAX numbers the traced ones alone on some versions, all of them on others."""
    positional_statics = bool(_jax_compat.static_arg_positions(key)) or any(
        p.startswith("[0]") for p in _jax_compat.static_argument_paths(key))
    named = []
    for change in changes:
        m = _TREE_PATH.match(change.where)
        position = m and (m["i"] or m["j"])
        if m is None or (position and positional_statics):
            named.append(change)
            continue
        head = argument_label(names, int(position)) if position else m["k"] or m["l"]
        named.append(ArgChange(head + (m["rest"] if position else m["tail"]), change.now, change.before))
    return tuple(named)


def _name_positional_count(changes: tuple[ArgChange, ...], names: tuple[str, ...]) -> tuple[ArgChange, ...]:
    """``arguments passed by position: now 2, before 1`` as the parameters it was about (``names``: the positional
    ones): ``mode: now by position, before not passed``."""
    named: list[ArgChange] = []
    for change in changes:
        now, before = (int(n) if change.where == BY_POSITION_COUNT and n.isdigit() else None for n in (change.now, change.before))
        if now is None or before is None or max(now, before) > len(names):
            named.append(change)
            continue
        how = (BY_POSITION, NOT_PASSED) if now > before else (NOT_PASSED, BY_POSITION)
        named.extend(ArgChange(names[i], *how) for i in range(min(now, before), max(now, before)))
    return tuple(named)


def _static_passed_another_way(changes: tuple[ArgChange, ...], key: Any, old: Any) -> tuple[ArgChange, ...]:
    """jax <= 0.8's static keywords that are now passed another way (``now {} and before {n: 2}`` beside static args
    ``now 2 and before``): ``n: now by position, before by keyword``, as :func:`miss_text.parse_explanation` says it
    on later JAX; empty where the keywords are the same. By position where the two keys (``old``: the one the changes
    compare with, else ``None``) hold different numbers of positional static values, else where static args changed."""
    kw = next((c for c in changes if c.where == "static kwargs"), None)
    if kw is None:
        return ()
    now_kw, before_kw = _static_kwargs(kw.now), _static_kwargs(kw.before)
    counts = [len(_jax_compat.static_arg_positions(k) or ()) for k in (key, old)] if key is not None and old is not None else None
    by_position = counts[0] != counts[1] if counts else any(c.where == "static args" for c in changes)
    other = BY_POSITION if by_position else NOT_PASSED
    return tuple([ArgChange(k, BY_KEYWORD, other) for k in now_kw if k not in before_kw]
                 + [ArgChange(k, other, BY_KEYWORD) for k in before_kw if k not in now_kw])


_PATH_NAME = re.compile(r"^argument (?P<i>\d+)$|^keyword '(?P<k>[^']*)'$")
_KWARG = re.compile(r"(?P<k>\w+): (?P<v>.*?)(?=, \w+: |$)")


def _static_kwargs(text: str) -> dict[str, str]:
    """``{mode: 'a', n: 3}`` (jax <= 0.8's words) -> ``{"mode": "'a'", "n": "3"}``."""
    return {m.group("k"): m.group("v") for m in _KWARG.finditer(text.strip()[1:-1])}


def _context_changes(key: Any, old: Any) -> tuple[ArgChange, ...]:
    """The trace-context values that differ from ``old`` (the closest key jaxshow kept), by name where JAX gives names.

    jax 0.9-0.10.1 says only "Tracing context doesn't match"; jax <= 0.8 gives
    positions. jaxshow compares the two context tuples itself (O(length)), and names each position where this JAX
    can be read for names (:func:`jaxshow._jax_compat.trace_context_positions`: every JAX from 0.7).
    """
    if old is None:
        return ()
    now, _ = _jax_compat.trace_key_context(key)
    before, _ = _jax_compat.trace_key_context(old)
    if len(now) < len(before):
        return ()
    names = _jax_compat.trace_context_positions()
    if names is not None and len(names) < len(now):
        names = None
    changes = [_context_change(names[i] if names else f"{CONTEXT_POSITION}[{i}]", a, b)
               for i, (a, b) in enumerate(zip(now, before)) if a != b]
    if len(now) > len(before):
        changes.append(_options_defined_since(names[len(before):len(now)] if names else None, now[len(before):]))
    return tuple(changes)


def _context_change(name: str, now: Any, before: Any) -> ArgChange:
    return ArgChange(name, str(_jax_compat.context_value(name, now)), str(_jax_compat.context_value(name, before)))


def _said_ambiguously(changes: tuple[ArgChange, ...]) -> bool:
    """Whether JAX's words name a trace-context value by a name it gives several positions (each ``jax.make_user_context``
    is a ``user_context``): jaxshow's own comparison names them apart (``user_context 2``)."""
    names = set(_jax_compat.trace_context_positions() or ())
    return any(f"{c.where} 2" in names for c in changes)


def _context_values_shown(changes: tuple[ArgChange, ...], key: Any, old: Any) -> tuple[ArgChange, ...]:
    """JAX's words on a trace-context value it writes as its holder's default repr (``set_xla_metadata``'s: ``<...XlaMetadata
    object at 0x7f…>``) said from the two keys' values instead, as :func:`_jax_compat.context_value` shows them."""
    names = _jax_compat.trace_context_positions()
    (now, _), (before, _) = _jax_compat.trace_key_context(key), _jax_compat.trace_key_context(old)
    if names is None:
        return changes
    shown = []
    for change in changes:
        i = names.index(change.where) if change.where in names else None
        if i is not None and i < min(len(now), len(before)) and any(
                _jax_compat.context_value(change.where, value) is not value for value in (now[i], before[i])):
            change = _context_change(change.where, now[i], before[i])
        shown.append(change)
    return tuple(shown)


def _options_defined_since(names: tuple[str, ...] | None, values: tuple[Any, ...]) -> ArgChange:
    """The options a key's trace context holds past the end of an earlier key's, by name where this JAX names them:
    JAX appends each option a module defines to its trace context as the module is imported (``jax.experimental.pallas``
    adds ``pallas_grid_context`` on jax 0.12), so every jitted function traced before traces once more."""
    if names is not None:
        added = ", ".join(f"{name} ({value})" for name, value in zip(names, values))
    else:
        added = f"{plural(len(values), 'option')} ({', '.join(str(v) for v in values)})"
    them = "it" if len(values) == 1 else "them"
    return ArgChange(TRACE_CONTEXT, f"also {added}", f"without {them} (a module imported since defined {them})")


_AXIS_TYPES = re.compile(r"axis_types=\([^()]*\), ?")


def _shard_map_context(changes: tuple[ArgChange, ...], key: Any, old: Any) -> tuple[ArgChange, ...]:
    """The trace-context values ``jax.shard_map`` sets (its axis names, its mesh of Manual axes, check_vma), where one
    of the two traces ran inside one, said as one change: ``shard_map: now outside shard_map, before inside shard_map
    over mesh ('data': 4, 'model': 2) (axis names data, model bound)``, not JAX's ``<jax._src.core.AxisEnv object at
    0x…>`` twice. A mesh that differs in more than its axis types stays apart."""
    by_name = {c.where: c for c in changes}
    mesh = by_name.get("abstract_mesh_context_manager")
    axes = _jax_compat.bound_axes(key), _jax_compat.bound_axes(old)
    if "axis_env_state" not in by_name or mesh is None or axes[0] is None or axes[1] is None:
        return changes
    inside = [bool(a) and "Manual" in text for a, text in zip(axes, (mesh.now, mesh.before))]
    if inside.count(True) != 1:
        return changes
    shard_mesh, other = (mesh.now, mesh.before) if inside[0] else (mesh.before, mesh.now)
    no_other_mesh = other == "None" or other.startswith("AbstractMesh((),")
    same_mesh = no_other_mesh or _AXIS_TYPES.sub("", other) == _AXIS_TYPES.sub("", shard_mesh)
    folded = {"axis_env_state", "check_vma"} | ({mesh.where} if same_mesh else set())
    now, before = (_shard_map_side(a, i) for a, i in zip(axes, inside))
    first = next(i for i, c in enumerate(changes) if c.where in folded)
    kept = [c for c in changes if c.where not in folded]
    return (*kept[:first], ArgChange("shard_map", now, before), *kept[first:])


def _shard_map_side(axes: tuple[tuple[str, int], ...], inside: bool) -> str:
    names = ", ".join(name for name, _ in axes)
    if inside:
        sizes = ", ".join(f"{name!r}: {size}" for name, size in axes)
        return f"inside shard_map over mesh ({sizes}) (axis names {names} bound)"
    return f"outside shard_map (axis names {names} bound)" if axes else "outside shard_map"


_MESH_DEVICES = re.compile(r", device_kind=.*, num_cores=[^,]*(?:, platform=[^,]*)?$")  # no platform on jax 0.8 and 0.9
_NO_MESH = ("None", "AbstractMesh((), axis_types=())")


def _mesh_context(change: ArgChange) -> ArgChange:
    """JAX's ``abstract_mesh_context_manager`` change said as the mesh lines say meshes: ``mesh ('data': 2, 'model': 4,
    axis_types=(Auto, Auto))``, and ``no mesh`` for JAX's ``None`` or ``AbstractMesh((), axis_types=())``; the kind of
    devices only where the meshes differ in nothing else."""
    if change.where != "abstract_mesh_context_manager":
        return change
    now, before = (_mesh_text(text, devices=False) for text in (change.now, change.before))
    if now == before:
        now, before = (_mesh_text(text, devices=True) for text in (change.now, change.before))
    return ArgChange(_jax_compat.MESH_CONTEXT, now, before)


def _mesh_text(text: str, *, devices: bool) -> str:
    if text in _NO_MESH:
        return "no mesh"
    inner = text[len("AbstractMesh("):-1] if text.startswith("AbstractMesh(") and text.endswith(")") else None
    if inner is None:
        return text
    return f"mesh ({inner if devices else _MESH_DEVICES.sub('', inner)})"


def _named_positions(changes: tuple[ArgChange, ...]) -> tuple[ArgChange, ...]:
    """JAX's positional context changes (``trace context [5]``, jax <= 0.8) by option name, where this JAX can be read for them."""
    names = _jax_compat.trace_context_positions() or ()
    named = []
    for change in changes:
        position = change.where[len(CONTEXT_POSITION):].strip("[]")
        index = int(position) if position.isdigit() else len(names)
        named.append(ArgChange(names[index], change.now, change.before) if index < len(names) else change)
    return tuple(named)


_LOOKED_AT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""The functions :func:`_is_user_function` looked at, each with the source info it was traced under and its answer:
every trace looks each ``jax.numpy`` operation it calls up in JAX's tracing cache again, and each miss its own function,
so the answer is kept, not worked out."""


def _is_user_function(debug_info: Any, fun: Any = None) -> bool:
    source = getattr(debug_info, "func_src_info", None)
    if type(fun).__hash__ is not object.__hash__:  # JAX's own are functions and partials: no __hash__ of the user's runs
        source = None
    try:
        known = _LOOKED_AT.get(fun) if source is not None else None
    except TypeError:  # not weakly referenceable
        source = known = None
    if known is not None and known[0] == source:
        return known[1]
    user = _works_out_user_function(debug_info, fun)
    if source is not None:
        _LOOKED_AT[fun] = (source, user)
    return user


def _works_out_user_function(debug_info: Any, fun: Any) -> bool:
    if _jax_compat.evaluates_closed_jaxpr(fun):  # JAX's own re-trace of the user's jaxpr (checkify, a transpose)
        return False
    filename = getattr(debug_info, "func_filename", None)
    if not filename and fun is not None:
        # a callable JAX could not name: eager shard_map's per-primitive HashablePartials are JAX's own
        found = _jax_compat.unnamed_callable_source(fun)
        filename = found[1] if found is not None else None
    if not filename:
        return True
    return not is_jax_file(filename) or closure_function(fun) is not None  # jax.jit(checkify.checkify(f)) is the user's f


def jax_own(fun: Any) -> bool:
    """Whether ``fun``, a jit wrapper's target, is JAX's own function (``jnp.sin``'s, also under ``jax.jit(jnp.sin)``):
    the traces :func:`_is_user_function` leaves out. Only JAX's wrappers and plain functions are unwrapped."""
    for _ in range(8):
        if type(fun) is types.FunctionType:
            return is_jax_file(fun.__code__.co_filename) and closure_function(fun) is None
        if not is_jax_type(type(fun)):
            return False
        fun = getattr(fun, "__wrapped__", None)
    return False

