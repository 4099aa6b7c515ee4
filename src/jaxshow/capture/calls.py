"""Record every jitted call a cell makes, where JAX does the work, in the call's own context.

While a :class:`CallCapture` is open, hooks on JAX's Python miss path
(:func:`jaxshow._jax_compat.install_call_hooks`) see each trace, lowering,
compile and Python dispatch as it happens, on the calling thread, inside the
user's call: under ``with jax.enable_x64(True):`` the record is taken inside
the block. Each call that reached JAX's Python path becomes one
:class:`CallRecord` holding JAX's own ``Traced``/``Lowered``/``Compiled``
objects, rebuilt from JAX's caches right there (nothing is traced twice), the
``jax.monitoring`` events it emitted, the phase an error came from, and the
user's line that led to it. A call that hit the C++ cache never reaches
Python; :class:`DirectCalls` sees those among the cell's own calls.

Records are attributed by the Python stack and the thread, never by function
name. Uses JAX; never IPython.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import jax

from jaxshow import _jax_compat
from jaxshow.capture.arguments import users_code
from jaxshow.capture.carried import carried_function, closure_function, library_file, package_of
from jaxshow.capture.equinox_args import LeafLabels, leaf_labels, static_leaves
from jaxshow.capture.helpers import held_apart, held_by_module, jax_helper, jax_own_wrapper, may_call_jit
from jaxshow.capture.prefetch import Prefetcher, PrefetchOptions
from jaxshow.capture.sources import called_frame, frame_function, is_jax_file, is_library_file, is_user_file
from jaxshow.capture.stations import (
    COMPILED_TYPE,
    JIT_TYPE,
    PMAP_CODE,
    StaticValue,
    dynamic_arguments,
    is_jax_type,
    jit_target,
    library_jit,
    library_wrapped_jit,
    passed_arguments,
    placed_shardings,
    shown_statics,
    source_location,
    stageable,
    static_arguments,
    static_values,
    type_module,
)
from jaxshow.capture.written import transforms, written
from jaxshow.report import NO_TRACING_INSTEAD, SourceLocation, a_or_an
from jaxshow.reprs import is_a
from jaxshow.timings import EventCollector, StageEvent, keep_listening

Phase = Literal["trace", "lower", "compile", "run", "call"]
Kind = Literal["user", "library", "jax"]

HIT_THAT_RAISED = "JAX served this call from its cache (it did not trace, lower or compile it)"
"""How the note on a cache hit that raised starts (:data:`RAISED_HIT`, or what JAX did after a nan)."""
RAISED_HIT = (f"{HIT_THAT_RAISED}, and the call raised: while its arguments were placed (a deleted or donated "
              "input, a transfer jax.transfer_guard disallows), while its program ran, or in a check JAX makes after it "
              "(jax_debug_nans, jax_debug_infs); "
              "jaxshow reads a cache hit's stations only once the call returns, so none are shown")
DISABLE_JIT = jax.disable_jit
"""Told apart by identity among the cell's calls: under it, the jitted calls inside the user's helpers run unseen."""


def _rerun_hit(found: tuple[str, str], name: str) -> str:
    """The note on a cache hit whose output held a nan (or inf): what JAX did after it ran."""
    value = found[1]
    flag = "jax_debug_nans" if value == "nan" else "jax_debug_infs"
    return (f"{HIT_THAT_RAISED} and ran it, and the call raised: "
            f"{flag}'s check found {value} in its output after it ran, so JAX ran {name} again de-optimized "
            "(its Python, each operation dispatched on its own) to find the operation, and raised FloatingPointError from "
            "there; jaxshow reads a cache hit's stations only once the call returns, so none are shown")


MAX_RECORDS = 2000
"""Records kept per capture; later calls are counted, not recorded (a loop that re-traces every step)."""


@dataclass(eq=False)
class CallRecord:
    """One call that JAX handled in Python while a capture was open (mutable while the cell runs)."""

    seq: int
    path: Literal["jit", "transform", "hit", "events", "wrapper"]
    name: str = "?"
    source_file: str | None = None
    transforms: tuple[str, ...] = ()
    """The JAX transformations and jits written around the function, outermost first (``("grad",)`` for
    ``jax.jit(jax.grad(g))``): read when the cell's report is built (:func:`jaxshow.capture.cell.cell_report`)."""
    fun: Any = None
    jit_info: Any = None
    static_args: tuple[StaticValue, ...] = ()
    trace_context: _jax_compat.TraceContext = _jax_compat.TraceContext((), ())
    """JAX's trace context as the call saw it (:func:`jaxshow._jax_compat.trace_context_snapshot`)."""
    passed: tuple[tuple[str, str], ...] = ()
    """How the call passed each argument JAX flattens (:func:`jaxshow.capture.stations.passed_arguments`)."""
    arg_shardings: tuple[tuple[str, str | None, str | None, str] | None, ...] | None = None
    site: SourceLocation | None = None
    cell_site: SourceLocation | None = None
    thread_id: int = 0
    jaxpr: Any = None
    clears_before: int = 0
    """How many times ``jax.clear_caches()`` ran in the cell before this call traced."""
    computation: Any = None
    lowered: Any = None
    compiled: Any = None
    donated: tuple[bool, ...] = ()
    events: list[StageEvent] = field(default_factory=list)
    nested_events: list[StageEvent] = field(default_factory=list)
    nested_in_trace: list[StageEvent] = field(default_factory=list)
    """Events of other functions while this call was tracing (JAX's eager helpers a library runs on concrete values,
    an inner jit's trace before jax 0.10): JAX's trace time for this call already holds their seconds."""
    error: BaseException | None = None
    failed_in: Phase | None = None
    under_transform: bool = False
    through_library: str | None = None
    """The library function the user's code called that made this call (``jaxopt.LBFGS.run``), if a library's did."""
    transformed_by: str | None = None
    """The JAX function the user's code called that traced this call under its tracers (``jax.lax.scan``,
    ``jax.grad``), where jaxshow knows it."""
    ran: bool = False
    repeat_hits: int = 0
    hooked: bool = False
    """Made by a call in the cell's own code that the call hook saw (also in a cell the cell ran with ``run_cell``):
    its later calls there that JAX served from its C++ cache are counted in ``repeat_hits``."""
    jit_disabled: bool = False
    ahead_of_time: str | None = None
    traced_by_library: bool = False
    """A library's code, not the user's, called the ahead-of-time API (flax linen's ``jax.eval_shape`` shape checks)."""
    pmap: bool = False
    notes: list[str] = field(default_factory=list)
    defined_at: SourceLocation | None = None
    """Where the user's function is defined, where JAX's jit info does not say (:func:`_name_users_function`)."""
    jitted_by: str | None = None
    """The library whose own function JAX jitted, carrying the user's (``equinox`` for ``eqx.filter_jit``): the jit
    options are that function's, not the user's."""
    leaf_labels: LeafLabels | None = None
    """The user's names of the leaves ``eqx.filter_jit`` passes its jitted function, read from its static argument."""
    in_tree: Any = None
    """The pytree definition of an ``nnx.jit`` call's arguments, whose graph nodes name their leaves
    (:func:`jaxshow.capture.flax_args.graph_leaf_names`)."""
    out_tree: Any = None
    """The pytree definition of an ``nnx.jit`` call's outputs: the graph nodes it passes back, and the function's own."""
    kept: bool = True
    """``False`` past :data:`MAX_RECORDS`: counted, never shown, so neither its call site nor its stations are read."""
    prefetched: Any = None
    """The stations being read while JAX compiled and ran the call (:class:`jaxshow.capture.prefetch.Prefetched`)."""
    ongoing: bool = False
    """Its thread is inside the call (from its trace's start to its dispatch's end)."""
    cut_off: bool = False
    """The cell ended while another thread was still inside this call: its stages are not all known, and it is never walked."""
    rerun_of: str | None = None
    """Made while JAX ran this function de-optimized after ``jax_debug_nans`` found a nan in its output: JAX's call, not the cell's."""
    callback_of: str | None = None
    """Made by a host callback of the user's (``jax.debug.callback``, ``jax.pure_callback``) that this call's program ran."""
    users_jit: bool = False
    """A function of JAX's in a ``jax.jit`` the user's code made (``jax.jit(jax.random.normal, static_argnums=1)``): the user's call."""
    exported: bool = False
    """``Exported.call`` outside jit: JAX's own ``call_exported`` program around the user's exported function, named for it."""
    caught_refusal: bool = False
    """JAX refused this call for certain before any trace (a static value it cannot hash), and the cell caught the error."""
    continued: str | None = None
    """The stage object made before the cell that this record goes on from: ``"Traced"`` (its ``.lower()``),
    ``"Lowered"`` (its ``.compile()``) or ``"Compiled"`` (a call of it, which ran its ``executable``)."""
    executable: Any = None
    compiled_called: bool = False
    """The cell called the ``jax.stages.Compiled`` made in it from this record's lowering (more calls: ``repeat_hits``)."""
    compiled_raised: list[bool] = field(default_factory=list)
    """Calls of that ``jax.stages.Compiled`` that raised: whether the cell caught each error."""

    @property
    def kind(self) -> Kind:
        """Whose function this is: the user's (a cell or the user's files, or JAX's in a jit the user made), a library's,
        or JAX's own."""
        if self.users_jit:
            return "user"
        if self.source_file is None:
            return "library"
        if is_jax_file(self.source_file):
            return "jax"
        if is_user_file(self.source_file):
            return "user"
        # code made from a string (exec, eval) has no file: the user's where it runs in the notebook's own namespace
        fun = self.fun
        made_from_text = self.source_file.startswith("<") and type(fun) is types.FunctionType
        return "user" if made_from_text and fun.__globals__.get("__name__") == "__main__" else "library"

    @property
    def written(self) -> str:
        """The function as the user wrote it, as ``%jaxcache`` names it: ``grad(g)`` (``name`` stays ``g``)."""
        return written(self.name, self.transforms)

    @property
    def stages_run(self) -> tuple[str, ...]:
        """The stages JAX did for this call (from its events), in order; empty for a cache hit."""
        done = {e.stage for e in self.events}
        return tuple(s for s in ("trace", "lower", "compile") if s in done)

    def release(self) -> None:
        """Drop every JAX object and the user's function (after the report is built)."""
        self.fun = self.jit_info = self.jaxpr = self.computation = self.lowered = self.compiled = self.error = None
        self.prefetched = self.executable = None


@dataclass(eq=False, slots=True)
class LibraryCalls:
    """The cell's calls of one library object that jits inside the library (flax's ``nnx.jit``): a call JAX
    serves from its cache there reaches no hook and makes no record, so the cell's own calls are counted."""

    name: str
    holder: str
    """The object's type and its library: ``flax's JitWrapped``."""
    wrapper: Any
    """The library's ``jax.jit`` wrapper; the function it traces (``fun``) is a record's when one of these calls traced."""
    fun: Any
    calls: int = 0


def _name_users_function(record: CallRecord, jit_info: Any, args: tuple, kwargs: dict) -> None:
    """Name the user's function where JAX's jit info does not: a callable JAX left unnamed (a callable object,
    JAX's ``HashablePartial``), read from its type; a library's jitted function, from the user's function it
    carries among its static arguments (``eqx.filter_jit``); JAX's own closure around it (``checkify``)."""
    _name_unnamed_callable(record)
    if library_file(record.source_file):
        try:
            carried = carried_function(record.name, (value for _, value in static_arguments(jit_info, args, kwargs)),
                                       outside=record.source_file)
        except Exception:  # noqa: BLE001 - the name is a nicety, never the call's outcome
            carried = None
        if carried is not None:
            code = carried.__code__
            record.jitted_by = package_of(record.source_file)
            record.source_file = code.co_filename
            record.defined_at = SourceLocation(code.co_filename, code.co_firstlineno, carried.__name__)
    elif record.kind == "jax" and _jax_compat.pmapped_target(record.fun) is None:  # jax.pmap's body: named on its trace
        carried = closure_function(record.fun)
        if carried is not None:  # jax.jit(checkify.checkify(f)): JAX's closure, named for f
            code = carried.__code__
            wrapper_file = os.path.relpath(os.path.abspath(record.source_file), os.path.dirname(_jax_compat.JAX_DIR.rstrip(os.sep)))
            record.notes.append(f"JAX names it {record.name}: JAX's wrapper around {carried.__name__} ({wrapper_file})")
            record.name, record.source_file = carried.__name__, code.co_filename
            record.defined_at = SourceLocation(code.co_filename, code.co_firstlineno, carried.__name__)


def _name_unnamed_callable(record: CallRecord) -> None:
    """Name a callable JAX left unnamed (a callable object, JAX's ``HashablePartial``, the ``VJP`` of ``jax.vjp``) from its type."""
    if record.source_file is None and _jax_compat.unknown_name(record.name):
        found = _jax_compat.unnamed_callable_source(record.fun)
        if found is not None:
            record.name, record.source_file = found[0], found[1]
            record.defined_at = SourceLocation(found[1], found[2], found[0])


@dataclass(eq=False, slots=True)
class _Frame:
    record: CallRecord | None
    """``None`` for a call of one of JAX's own helpers whose record is not made yet (``helper``)."""
    nested: bool
    phase: Literal["trace", "run"]
    misses: int | None = None
    """JAX's tracing-cache misses as the trace began (:func:`_jax_compat.trace_cache_misses`), for a call's own trace."""
    clears: int = 0
    """``jax.clear_caches()`` calls on this thread as the trace began (:func:`_jax_compat.clears_on_this_thread`): one
    in the trace empties the misses counted."""
    helper: tuple[Any, Any, Any] | None = None
    """``(fun, jit_info, jaxpr)`` of a call of one of JAX's own jitted helpers on the cell's thread (``jnp.sum`` under
    ``jax.grad``, :func:`~jaxshow.capture.helpers.jax_helper`; the jaxpr ``None`` while it traces): its record is made
    only once the report would count it (:meth:`CallCapture._helper_made`), so an eager loop's calls that JAX serves
    from its caches, or dispatches in Python from them (jax 0.8), cost no record."""
    computation: Any = None
    """Such a call's lowering, found in JAX's cache before its record is made (a compile that follows makes it)."""
    caller: Any = None
    """The Python frame of JAX's that began this frame's work: a host callback entered above it runs the user's code."""


CellLine = Callable[[Any], "tuple[str, int, Any] | None"]
"""Where a frame's line is in a notebook cell as the user sees it: ``(cell file, line, the outermost frame that line
stands for)``, or ``None`` for a frame of no cell; the front end knows (``%%time``'s body is its cell's next lines)."""


def no_cell(frame: Any) -> None:
    """The :data:`CellLine` with no notebook: no frame is a cell's."""
    return None


def _in_cell(frame: Any, cell_line: CellLine) -> tuple[SourceLocation, Any] | None:
    """``frame``'s line as its cell shows it, and the outermost frame it stands for; ``None`` for a frame of no cell.

    A comprehension's frame (Python 3.11) stands for the code around it, as
    Python 3.12 runs it: its line is the cell's, in the function around it.
    """
    filename = frame.f_code.co_filename
    found = cell_line(frame) if filename.startswith("<") or is_user_file(filename) else None
    if found is None:
        return None
    outer = found[2]
    if _is_comprehension(outer):
        around = _in_cell(outer.f_back, cell_line)
        if around is not None:
            return SourceLocation(found[0], found[1], around[0].function), around[1]
    return SourceLocation(found[0], found[1], _location(outer).function), outer


def user_site(frame: Any, cell_line: CellLine = no_cell) -> SourceLocation | None:
    """The innermost frame in the user's code from ``frame`` out, its line as the cell shows it (``cell_line``): the
    first of :func:`_sites`, found without walking further."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<") or is_user_file(filename):  # else JAX's, jaxshow's or a library's: passed at once
            in_cell = _in_cell(frame, cell_line)
            if in_cell is not None:
                return in_cell[0]
            if is_user_file(filename):
                return _location(frame)
        frame = frame.f_back
    return None


def _sites(frame: Any, cell_line: CellLine) -> tuple[SourceLocation | None, SourceLocation | None, str | None]:
    """``(innermost frame in the user's code, outermost frame in a cell)`` of the stack from ``frame`` out, each line as
    the cell shows it (``cell_line``), and the library function the user's innermost frame called on the way (``None``
    where the user's code called JAX itself): a call from there that JAX serves from its C++ cache is never seen."""
    site = cell = None
    through: list[Any] = []  # the library frames before the user's innermost one, innermost first
    while frame is not None:
        filename = frame.f_code.co_filename
        in_cell = _in_cell(frame, cell_line)
        if in_cell is not None:
            cell, frame = in_cell
            site = site or cell
        elif site is None and is_user_file(filename):
            site = _location(frame)
        elif site is None and is_library_file(filename):
            through.append(frame)
        frame = frame.f_back
    return site, cell, frame_function(called_frame(through)) if through else None


_AHEAD_OF_TIME_NAMES = {"make_jaxpr_f": "jax.make_jaxpr", "eval_shape": "jax.eval_shape", "jit_eval_shape": ".eval_shape()",
                        "jit_lower": ".lower()", "jit_trace": ".trace()", "do_export": "jax.export"}


TRACED_ONLY = ("jax.make_jaxpr", "jax.eval_shape", ".eval_shape()", ".trace()")
"""The ahead-of-time APIs that trace and stop there: JAX lowers and compiles nothing for them."""


def traced_only_by_library(frame: Any) -> bool:
    """Whether the trace under way at ``frame`` is a library's own ``jax.eval_shape`` (or kin) of its own function,
    as flax linen's shape check of every parameter, from the library's code and not the user's."""
    api, by_library = _ahead_of_time_api(frame)
    return by_library and api in TRACED_ONLY


def traced_ahead_of_time(frame: Any) -> bool:
    """Whether the trace under way at ``frame`` is the user's own ahead of time (``.lower()``, ``.trace()``,
    ``jax.make_jaxpr``, ``jax.eval_shape``, ``jax.export``): no call."""
    api, by_library = _ahead_of_time_api(frame)
    return api is not None and not by_library


def _ahead_of_time_api(frame: Any) -> tuple[str | None, bool]:
    """The JAX API that traced ahead of time (``jax.make_jaxpr``, ``.lower()``), or ``None`` for a call, and
    whether a library's code called it.

    A call's trace comes through the wrapper's C++ cache miss (``cache_miss``);
    anything else came through ``jit_trace``, under the JAX function the user
    called, the outermost JAX frame below the user's. The walk stops at a call's
    cache miss: below it, an API found is a library's own, made while JAX lowered
    or ran that call (lineax's ``jax.eval_shape`` in equinox's primitives).
    """
    api, by_library = None, False
    while frame is not None:
        name, filename = frame.f_code.co_name, frame.f_code.co_filename
        if name == "cache_miss" or is_user_file(filename):
            break
        in_jax = is_jax_file(filename)
        if name in _AHEAD_OF_TIME_NAMES and in_jax:
            api, by_library = _AHEAD_OF_TIME_NAMES[name], False
        elif api is not None and not in_jax:
            by_library = True
        frame = frame.f_back
    return api, by_library


_TRANSFORMATIONS = {
    ("loops.py", "scan"): "jax.lax.scan", ("loops.py", "fori_loop"): "jax.lax.fori_loop",
    ("loops.py", "while_loop"): "jax.lax.while_loop", ("loops.py", "map"): "jax.lax.map",
    ("conditionals.py", "cond"): "jax.lax.cond", ("conditionals.py", "switch"): "jax.lax.switch",
    ("api.py", "grad_f"): "jax.grad", ("api.py", "grad_f_aux"): "jax.grad", ("api.py", "value_and_grad_f"): "jax.value_and_grad",
    ("api.py", "jacfun"): "jax.jacfwd/jax.jacrev", ("api.py", "vmap_f"): "jax.vmap", ("api.py", "jvp"): "jax.jvp",
    ("api.py", "vjp"): "jax.vjp", ("api.py", "linearize"): "jax.linearize", ("ad_checkpoint.py", "fun_remat"): "jax.checkpoint",
}
"""JAX's functions that trace a function under their tracers, by file name and code name (jax 0.7 to 0.12)."""
CONTROL_FLOW = {"jax.lax.scan": "scan", "jax.lax.fori_loop": "scan or while", "jax.lax.while_loop": "while",
                "jax.lax.map": "scan", "jax.lax.cond": "cond", "jax.lax.switch": "cond"}
"""JAX's control flow, with the primitive it compiles as when called outside jit."""
EAGER_CONTROL_FLOW = ("scan", "while", "cond")
"""JAX's control-flow primitives, named so when run outside jit (``jax.lax.scan``, ``fori_loop``, ``while_loop``,
``map``, ``cond``, ``switch``): each compiles the functions it runs inside it."""
USER_CODE_HELPERS = {"_odeint_wrapper": "jax.experimental.ode.odeint's solver, which JAX jits with your function in it",
                     "_piecewise": "jnp.piecewise's body, which JAX jits with your functions in it"}
"""JAX's own jitted functions that run the user's code (a function passed as a static argument), by name, in words."""


def _transformation_api(frame: Any) -> str | None:
    """The JAX function (:data:`_TRANSFORMATIONS`) whose tracers a call made at ``frame`` is under: the outermost one
    in the first stretch of JAX's own frames below the call that holds one (``jax.grad`` over the ``vjp`` it calls).

    The user's and libraries' frames between are passed over: a loss that calls a jitted model under
    ``jax.grad``, a lambda that calls one under ``jax.lax.scan``.
    """
    api = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if is_jax_file(filename):
            api = _TRANSFORMATIONS.get((os.path.basename(filename), frame.f_code.co_name), api)
        elif api is not None:  # the stretch of JAX's frames that held one has ended
            return api
        frame = frame.f_back
    return api


_COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>"})
"""The code objects Python 3.11 makes of a comprehension, which Python 3.12 inlines in the code around it (PEP 709)."""


def _is_comprehension(frame: Any) -> bool:
    """Whether ``frame`` runs a comprehension (Python 3.11) of the code in the frame that called it."""
    outer = frame.f_back
    return frame.f_code.co_name in _COMPREHENSIONS and outer is not None and outer.f_code.co_filename == frame.f_code.co_filename


def _location(frame: Any) -> SourceLocation:
    """``frame``'s file, line and function; a comprehension's function is the one around it, as on Python 3.12."""
    line, outer = frame.f_lineno or 0, frame
    while _is_comprehension(outer):
        outer = outer.f_back
    name = outer.f_code.co_name
    if name.startswith("<cell line: "):  # IPython 7 on Python >= 3.10 names a cell's top level so; IPython 8, <module>
        name = "<module>"
    return SourceLocation(frame.f_code.co_filename, line, name)


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.stack: list[_Frame] = []
        self.suspended: list[list[_Frame]] = []
        """The stacks set aside while a call's program runs a host callback of the user's (``jax.debug.callback``,
        ``jax.pure_callback``) on this thread: the calls that callback makes are the user's own, not parts of that call."""
        self.pending: CallRecord | None = None
        self.helper_traced: tuple[Any, Any, Any] | None = None
        """``(fun, jit_info, jaxpr)`` of the last call of JAX's own helper this thread traced with no record made: its
        Python dispatch, if one follows, goes on without one (:meth:`CallCapture.run_started`) until it lowers, compiles
        or fails."""
        self.lowering: CallRecord | None = None
        """The call traced ahead of time whose ``.lower()`` is under way on this thread (matched by its jaxpr)."""
        self.busy = False
        self.rebuilding: CallRecord | None = None
        self.rebuild_events: list[StageEvent] = []
        """JAX's stage events while ``rebuilding``: each one a stage that jaxshow's read-back ran again, but for a trace
        event of a lookup that found its jaxpr in JAX's tracing cache."""
        self.mine: list[CallRecord] = []
        self.compiling_next: CallRecord | None = None
        """The record whose stations are read once XLA starts compiling it (its lowering just ended)."""
        self.reruns: list[str] = []
        """The functions JAX is running de-optimized on this thread (``jax_debug_nans``), innermost last."""
        self.reran: list[tuple[Any, tuple[str, str] | None]] = []
        """Each de-optimized re-run started on this thread: the function, and the program and value JAX's check found."""


class CallCapture(_jax_compat.CallObserver):
    """Open while a cell runs: every jitted call's records, in the order JAX started them.

    Args:
        cell_line: where a frame's line is in a notebook cell (:data:`CellLine`, the front end knows);
            used to find the cell line a call came from.
        progress: called as each stage of a call starts, ``progress("compiling", "f")``,
            and with ``None`` when the call's stages end, ``progress(None, "f", "compile")``
            where they ended in an error (the stage it failed in); from the calling thread.
        prefetch: read the stations of the calls a report shows while JAX compiles and runs them, for this walk.
    """

    def __init__(self, cell_line: CellLine = no_cell,
                 progress: Callable[..., None] | None = None,
                 prefetch: PrefetchOptions | None = None) -> None:
        self.cell_line = cell_line
        self.progress = progress
        self._prefetcher = Prefetcher(prefetch, self._mark_busy) if prefetch is not None else None
        self.records: list[CallRecord] = []
        self.library_calls: dict[int, LibraryCalls] = {}
        self._carried: dict[tuple[str, str | None], tuple[str, str | None, SourceLocation | None] | None] = {}
        """The user's function a library's jitted function carried (``eqx.filter_jit``), by the library function's
        name and file as JAX's debug info gives them: a transformation of that call (``jax.grad`` of it) is named
        from it, as its jaxpr names only the library. ``None`` where two of the user's functions share the key."""
        self.dropped = 0
        self.hooks_installed = False
        self.thread_id = threading.get_ident()
        self._local = _ThreadState()
        self._lock = threading.Lock()
        self._events = EventCollector(on_event=self._on_event)
        self._uninstall: Callable[[], None] | None = None
        self._opened_at = time.perf_counter()
        self._closed_at: float | None = None
        self.clears = 0
        """How many times ``jax.clear_caches()`` ran while the capture was open."""
        self._clear_watch = _jax_compat.on_caches_cleared(self._caches_cleared)

    # lifecycle -------------------------------------------------------------------------

    @property
    def seconds(self) -> float:
        """Wall time the capture has been (or was) open."""
        return (self._closed_at or time.perf_counter()) - self._opened_at

    def __enter__(self) -> CallCapture:
        self._opened_at = time.perf_counter()
        self._events.__enter__()
        self._uninstall = _hooks.open(self)
        self.hooks_installed = self._uninstall is not None
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def release(self) -> None:
        """Drop the records and every JAX object they hold."""
        if self._prefetcher is not None:
            self._prefetcher.close()
        for record in self.records:
            record.release()
        self.records.clear()
        self.library_calls.clear()

    def close(self) -> None:
        """Remove the hooks and the event listener; the records stay.

        A call another thread is still inside is cut off (:attr:`CallRecord.cut_off`):
        what its thread does after this is not recorded.
        """
        self._closed_at = self._closed_at or time.perf_counter()
        self._clear_watch = None  # JAX holds it weakly: no later clear is heard
        _hooks.close(self)
        self._events.__exit__(None, None, None)
        with self._lock:
            for record in self.records:
                if record.ongoing and record.thread_id != self.thread_id:
                    record.cut_off = True

    @property
    def closed(self) -> bool:
        return self._closed_at is not None

    def _caches_cleared(self) -> None:
        self.clears += 1

    # the observer (called from JAX's miss path, on the calling thread) -------------------

    def busy(self) -> bool:
        return self._local.busy

    def _mark_busy(self) -> None:
        """On the prefetch worker: whatever JAX does there is jaxshow's own, never a record."""
        self._local.busy = True

    def _set_aside_for_callback(self, caller: Any) -> None:
        """Set this thread's stack aside where the work starting at ``caller`` is a host callback's, which the program
        of the call on top of the stack is running: the callback is the user's code, and its calls are its own."""
        state = self._local
        if state.stack and _jax_compat.host_callback_frame(caller, state.stack[-1].caller) is not None:
            state.suspended.append(state.stack)
            state.stack = []

    def trace_started(self, fun: Any, jit_info: Any, args: tuple, kwargs: dict) -> _Frame:
        state = self._local
        caller = _jax_compat.outside_jaxshow(sys._getframe(1))  # JAX's frame that called the hook
        self._set_aside_for_callback(caller)
        if state.stack:
            frame = _Frame(state.stack[0].record, nested=True, phase="trace")
        elif state.lowering is not None:
            frame = _Frame(state.lowering, nested=True, phase="run")  # JAX's own jitted helpers, traced to lower a scan
        elif (threading.get_ident() == self.thread_id and jax_helper(fun)
              and _ahead_of_time_api(sys._getframe(1))[0] is None):  # a call of JAX's own helper: nothing read yet
            keep_listening()
            frame = _Frame(None, nested=False, phase="trace", misses=_jax_compat.trace_cache_misses(), helper=(fun, jit_info, None))
        else:
            keep_listening()
            record = self._new_record("jit", sys._getframe(2))
            record.fun, record.jit_info = fun, jit_info
            record.name, record.source_file = _jax_compat.jit_info_function(jit_info)
            library_key = (record.name, record.source_file)
            _name_users_function(record, jit_info, args, kwargs)
            record.transforms = transforms(fun)  # the progress line names it as the report will: grad(g)
            if record.defined_at is not None and library_file(library_key[1]):
                named = (record.name, record.source_file, record.defined_at)
                with self._lock:
                    self._carried[library_key] = named if self._carried.get(library_key, named) == named else None
            if record.kept:  # what only a report shows
                _read_arguments(record, jit_info, args, kwargs)
            record.under_transform = not _jax_compat.trace_state_clean()
            if record.under_transform:
                record.transformed_by = _transformation_api(sys._getframe(1))
            record.ahead_of_time, record.traced_by_library = _ahead_of_time_api(sys._getframe(1))
            record.jit_disabled = _jax_compat.jit_disabled()
            record.ongoing = True
            frame = _Frame(record, nested=False, phase="trace", misses=_jax_compat.trace_cache_misses(),
                           clears=_jax_compat.clears_on_this_thread())
            self._report_progress("tracing", record.written)
        return self._pushed(frame, caller)

    def _pushed(self, frame: _Frame, caller: Any) -> _Frame:
        """``frame`` on top of this thread's stack, its work begun at ``caller`` (JAX's frame that called the hook)."""
        frame.caller = caller
        self._local.stack.append(frame)
        return frame

    def _report_progress(self, stage: str | None, name: str, failed_in: str | None = None) -> None:
        if self.progress is not None and not self.closed:
            try:
                self.progress(stage, name, failed_in)
            except Exception:  # noqa: BLE001 - a display problem must never reach the user's call
                self.progress = None

    def _closed(self, frame: _Frame | None) -> CallRecord | None:
        """Take ``frame`` off this thread's stack; its record, unless it was a nested frame."""
        state = self._local
        if state.stack and state.stack[-1] is frame:
            state.stack.pop()
        elif frame is not None and (aside := next((i for i, s in enumerate(state.suspended) if frame in s), None)) is not None:
            # the host callbacks its program ran returned: its stack is this thread's again, as it was below the frame
            stack = state.suspended[aside]
            state.stack, state.suspended = stack[:stack.index(frame)], state.suspended[:aside]
        return None if frame is None or frame.nested else frame.record

    def _helper_made(self, frame: _Frame) -> CallRecord:
        """The record of ``frame``'s call of JAX's own helper (:attr:`_Frame.helper`), made now that the report counts
        it (a stage event, its compile, an error): named as any call, its call site read from here out (the user's line is still on
        the stack; ``Exported.call``'s program, which JAX runs as a primitive of its own, is shown as the user's); its
        arguments are never read."""
        fun, jit_info, jaxpr = frame.helper  # type: ignore[misc]  # set wherever record is None
        record = frame.record = self._new_record("jit", sys._getframe(1))
        record.fun, record.jit_info = fun, jit_info
        record.name, record.source_file = _jax_compat.jit_info_function(jit_info)
        record.ongoing = True
        if jaxpr is not None:
            _traced_as(record, jaxpr)
        record.computation = frame.computation
        return record

    def trace_ended(self, frame: _Frame, jaxpr: Any, args_flat: list | None, error: BaseException | None, out_tree: Any) -> None:
        state = self._local
        if frame is not None and frame.record is None and frame.helper is not None:
            if error is None:  # served from JAX's caches so far: still no record
                self._closed(frame)
                # the pending trace stays: JAX traces its helpers while it lowers a jaxpr of high types (an unreduced
                # value in a scan's carry) between the user's trace and its dispatch
                state.helper_traced = (*frame.helper[:2], jaxpr)
                return
            self._helper_made(frame)
        record = self._closed(frame)
        if record is None or self.closed:  # closed: another thread's call, cut off when the cell ended
            return
        if error is not None:
            record.error, record.failed_in, record.ongoing = error, "trace", False
            self._report_progress(None, record.written, "trace")  # no lowering follows: the cell goes on without this call
            return
        if record.in_tree is not None:
            record.out_tree = out_tree  # nnx.jit's: the updated graph's leaves named when shown
        if (frame.misses is not None and _jax_compat.trace_cache_misses() == frame.misses
                and _jax_compat.clears_on_this_thread() == frame.clears):
            # jax >= 0.9 times its cached trace_to_jaxpr: a lookup that found the jaxpr (a new wrapper of a function
            # traced before) publishes a trace event too, though nothing was traced
            record.events[:] = [e for e in record.events if e.stage != "trace"]
        if record.kept and frame.helper is None:  # a helper's arguments are never shown
            try:
                record.arg_shardings = placed_shardings(args_flat)
            except Exception as exc:  # noqa: BLE001 - the call's record must still meet its dispatch, or it reads as another program
                record.notes.append(f"jaxshow could not read where this call's arguments are placed: {type(exc).__name__}: {exc}")
        _traced_as(record, jaxpr)
        record.clears_before = self.clears
        state.pending = record
        if record.ahead_of_time is not None:  # no dispatch follows: .lower() and .compile() may come later, or never
            record.ongoing = False
            self._report_progress(None, record.written)

    def run_started(self, jaxpr: Any, name: str, donated: tuple[bool, ...]) -> _Frame:
        state = self._local
        caller = _jax_compat.outside_jaxshow(sys._getframe(1))  # JAX's frame that called the hook
        self._set_aside_for_callback(caller)
        if state.stack:
            frame = _Frame(state.stack[0].record, nested=True, phase="run")
        else:
            helper, state.helper_traced = state.helper_traced, None
            pending_jaxpr = state.pending.jaxpr if state.pending is not None else None
            traced = _as_traced(jaxpr, sys._getframe(1), pending_jaxpr, helper[2] if helper is not None else None)
            record = state.pending if state.pending is not None and state.pending.jaxpr is traced else None
            if record is None and helper is not None and helper[2] is traced:  # JAX's own helper, dispatched in Python
                state.pending = None  # a record once it lowers, compiles or fails
                return self._pushed(_Frame(None, nested=False, phase="run", helper=helper), caller)
            if record is None:
                keep_listening()
                record = self._new_record("transform", sys._getframe(2))
                record.transformed_by = _transformation_api(sys._getframe(1))
                record.jaxpr = jaxpr
                record.name, record.source_file = _jax_compat.jaxpr_function(jaxpr)
                if record.name == "?":
                    record.name = name
                carried = self._carried.get((record.name, record.source_file))
                if carried is not None:  # jax.grad of an eqx.filter_jit function: the user's, as its trace was named
                    record.name, record.source_file, record.defined_at = carried
                record.transforms = next((r.transforms for r in reversed(state.mine) if r.fun is not None
                                          and (r.name, r.source_file) == (record.name, record.source_file)), ())
                record.ongoing = True
            record.donated = donated
            frame = _Frame(record, nested=False, phase="run")
            self._report_progress("lowering", record.written)
        state.pending = None
        return self._pushed(frame, caller)

    def lower_started(self, jaxpr: Any, donated: tuple[bool, ...]) -> None:
        if not self._local.stack:  # an ahead-of-time Traced.lower(): the call traced to this jaxpr, whichever came last
            traced = _jax_compat.lowered_from(sys._getframe(1), jaxpr) or jaxpr  # its high types lowered (0.12.1)
            self._local.lowering = self._ahead_of_time(lambda r: r.jaxpr is traced) or self._continued(
                "Traced", sys._getframe(1), jaxpr=jaxpr, donated=donated)

    def lowered(self, computation: Any, error: BaseException | None) -> None:
        stack = self._local.stack
        if not stack:
            record, self._local.lowering = self._local.lowering, None
            if record is not None and error is None:
                record.computation = computation
                self._read_while_compiling(record)
            return
        if stack[-1].nested or stack[-1].phase != "run":
            return
        record = stack[-1].record
        if record is None and error is None:  # JAX's own helper, its lowering from JAX's cache: no record yet
            stack[-1].computation = computation
            return
        record = record or self._helper_made(stack[-1])
        if error is not None:
            record.error, record.failed_in = error, "lower"
        else:
            record.computation = computation
            self._report_progress("compiling", record.written)
            self._read_while_compiling(record)

    def _read_while_compiling(self, record: CallRecord) -> None:
        """Read a report's Traced and Lowered stations once XLA's compile of it starts."""
        if self._prefetcher is not None and _stations_shown(record):
            self._local.compiling_next = record

    def compiling(self) -> None:
        record, self._local.compiling_next = self._local.compiling_next, None
        stack = self._local.stack
        if stack:
            top = stack[-1]
            compiled = top.record if top.record is not None or top.helper is None else self._helper_made(top)
        else:
            compiled = self._compiled_ahead_of_time(sys._getframe(1))
        if not stack and compiled is not None:
            self._report_progress("compiling", compiled.written)
        if record is not None and record is compiled:
            self._prefetcher.compiling(record)  # type: ignore[union-attr]  # set only with a prefetcher

    def _ahead_of_time(self, match: Callable[[CallRecord], bool]) -> CallRecord | None:
        """This thread's last call traced ahead of time (``.trace()``, ``.lower()``) that ``match``es."""
        return next((r for r in reversed(self._local.mine) if r.ahead_of_time is not None and match(r)), None)

    def _compiled_ahead_of_time(self, frame: Any) -> CallRecord | None:
        """The call traced ahead of time whose lowering ``Lowered.compile()`` is compiling at ``frame``, by its computation;
        a lowering the cell did not make is a ``Lowered`` made before it."""
        computation = _jax_compat.computation_compiling(frame)
        if computation is None:
            return None
        found = self._ahead_of_time(lambda r: r.computation is computation)
        if found is None:  # lowered where no hook saw it (jax 0.7's Traced.lower): its jaxpr's debug info is the computation's
            info = _jax_compat.program_debug_info(computation)
            found = self._ahead_of_time(lambda r: r.computation is None and r.jaxpr is not None and info is not None
                                        and _jax_compat.jaxpr_debug_info(r.jaxpr) is info)
            if found is not None:
                found.computation = computation
        return found or self._continued("Lowered", frame, computation=computation)

    def _lowered_unhooked(self, frame: Any) -> CallRecord | None:
        """The call whose ``Traced.lower()`` emitted a lowering event at ``frame`` without reaching a hook (jax 0.7's
        Traced calls the ``_resolve_and_lower`` it was made with): the cell's own trace of its jaxpr, or a Traced
        made before the cell."""
        traced = _jax_compat.traced_lowering(frame)
        if traced is None:
            return None
        jaxpr = traced.jaxpr
        return self._ahead_of_time(lambda r: r.jaxpr is jaxpr) or self._continued(
            "Traced", frame, jaxpr=jaxpr, donated=_jax_compat.traced_donated(traced))

    def _continued(self, stage: str, frame: Any, *, jaxpr: Any = None, donated: tuple[bool, ...] = (),
                   computation: Any = None) -> CallRecord:
        """A record of JAX's work on a ``stage`` object made before this cell (``Traced.lower()``, ``Lowered.compile()``):
        named from the jaxpr the Traced holds, or the debug info the lowering keeps."""
        keep_listening()
        record = self._new_record("jit", frame)
        record.continued, record.ahead_of_time = stage, (".lower()" if stage == "Traced" else ".compile()")
        record.jaxpr, record.donated, record.computation = jaxpr, donated, computation
        info = _jax_compat.program_debug_info(computation) if jaxpr is None else _jax_compat.jaxpr_debug_info(jaxpr)
        _name_from_debug_info(record, info)
        return record

    def run_ended(self, frame: _Frame, executable: Any, error: BaseException | None) -> None:
        if frame is not None and frame.record is None and frame.helper is not None and error is not None:
            self._helper_made(frame)  # JAX's own helper whose run failed: shown
        record = self._closed(frame)
        if record is None or self.closed:  # closed: another thread's call, cut off when the cell ended
            return
        try:
            self._dispatched(record, executable, error)
        finally:
            record.ongoing = False

    def _dispatched(self, record: CallRecord, executable: Any, error: BaseException | None) -> None:
        """A call's dispatch ended: how it ended, and its Lowered and Compiled stations from JAX's caches."""
        record.ran = error is None
        if error is not None and record.error is None:
            compiled = executable is not None or _jax_compat.computation_compiled(record.computation)
            record.error = error
            record.failed_in = "lower" if record.computation is None else ("run" if compiled else "compile")
        self._report_progress(None, record.written, record.failed_in if error is not None else None)
        if record.computation is None or not _stations_shown(record):
            return
        self.read_back(record)
        if self._prefetcher is not None and record.error is None:
            self._prefetcher.compiled(record, sum(e.seconds for e in record.events))

    # events ----------------------------------------------------------------------------

    def _on_event(self, event: StageEvent) -> None:
        state = self._local
        if state.busy:
            if state.rebuilding is not None:
                state.rebuild_events.append(event)
            return
        if state.stack:
            root = state.stack[0]
            record = root.record or self._helper_made(root)  # JAX's own helper's first stage: counted from here on
            if len(state.stack) == 1 and not state.stack[0].nested:
                record.events.append(event)
            else:
                (record.nested_in_trace if state.stack[0].phase == "trace" else record.nested_events).append(event)
            if event.stage == "compile" and len(state.stack) == 1 and not state.stack[0].nested:
                self._report_progress("running", record.written)
            return
        aot = state.lowering or (self._compiled_ahead_of_time(sys._getframe(1)) if event.stage == "compile" else
                                 self._lowered_unhooked(sys._getframe(1)) if event.stage == "lower" else None)
        if aot is not None:  # .lower(), .compile() after its trace
            aot.events.append(event)
            if event.stage == "compile":
                self._report_progress(None, aot.written)
            return
        record = self._new_record("events", sys._getframe(1))
        record.name = event.base_name
        record.events.append(event)

    # direct calls of the cell's own statements ------------------------------------------

    def records_made(self) -> int:
        """Records started on this thread so far."""
        return len(self._local.mine)

    def library_call(self, obj: Any, wrapper: Any) -> None:
        """The cell called ``obj``, a library's object that calls the ``jax.jit`` ``wrapper`` (:class:`LibraryCalls`)."""
        calls = self.library_calls.get(id(wrapper))
        if calls is None:
            name = object.__getattribute__(obj, "__dict__").get("__name__")
            kind = type(obj)
            calls = self.library_calls[id(wrapper)] = LibraryCalls(
                name if isinstance(name, str) else kind.__name__, f"{type_module(kind).split('.')[0]}'s {kind.__name__}",
                wrapper, _jax_compat.jit_function(wrapper))
        calls.calls += 1

    def own_records(self, since: int) -> list[CallRecord]:
        """The records started on this thread after the first ``since``."""
        return self._local.mine[since:]

    def own_record(self, since: int, fun: Any) -> CallRecord | None:
        """The first record of a jit call of ``fun`` started on this thread after the first ``since``.

        ``None`` means that call hit JAX's caches: whatever else compiled
        meanwhile (JAX's eager helpers under ``disable_jit``) was not it.
        """
        for record in self._local.mine[since:]:
            if record.path == "jit" and record.fun is fun:
                return record
        return None

    def read_back(self, record: CallRecord) -> None:
        """Read a dispatched call's Lowered and Compiled stations from JAX's caches, after the call."""
        self._quiet_rebuild(record, functools.partial(_lower_and_compile, record))

    def record_hit(self, wrapper: Any, args: tuple, kwargs: dict, site: SourceLocation | None) -> CallRecord:
        """A direct call that hit the C++ cache: its stations from JAX's caches, in this (the call's) context."""
        record, info = self._direct_record("hit", wrapper, site)
        record.jit_disabled = _jax_compat.jit_disabled()
        _name_users_function(record, info, args, kwargs)
        _read_arguments(record, info, args, kwargs)
        if record.jit_disabled:
            return record
        # JAX's caches are keyed on the function too, compared with its class's __eq__ as a static value is
        users = users_code(dynamic_arguments(info, args, kwargs), [record.fun, *(v for _, v in static_arguments(info, args, kwargs))])
        if users is not None:
            record.notes.append(f"its stations are not read from JAX's caches: looking them up parses the call's arguments "
                                f"again, which would run your {users} a second time")
            return record

        def walk() -> None:
            record.jaxpr, record.donated, record.computation, args_flat = _jax_compat.lower_cached(wrapper, args, kwargs)
            record.arg_shardings = placed_shardings(args_flat)
            if not _jax_compat.computation_compiled(record.computation):
                self._other_wrappers_lowering(record, wrapper, args, kwargs)
            if record.computation is not None:
                _lower_and_compile(record)

        self._quiet_rebuild(record, walk)
        return record

    def _other_wrappers_lowering(self, record: CallRecord, wrapper: Any, args: tuple, kwargs: dict) -> None:
        """A C++ cache hit whose lowering for this wrapper's options holds no executable: it ran the
        executable another ``jax.jit`` wrapper of its function compiled with another ``inline`` (or ``keep_unused``, before
        jax 0.12.1), which JAX's C++ cache does not key on. Its computation, the one JAX's lowering cache holds compiled; else none, and a note."""
        variants = _jax_compat.cpp_unkeyed_variants(wrapper)
        unkeyed_options = " or ".join(o for o in _jax_compat.CPP_UNKEYED_CANDIDATES if any(o in v for v in variants)) or "some options"
        for unkeyed in variants:
            computation = _jax_compat.lower_cached(wrapper, args, kwargs, unkeyed)[2]
            if _jax_compat.computation_compiled(computation):
                record.computation = computation
                given = ", ".join(f"{k}={getattr(v, 'name', v)}" for k, v in unkeyed.items())
                record.notes.append(f"JAX ran the executable it compiled for another jax.jit wrapper of {record.name}, one "
                                    f"with {given}: JAX's C++ cache does not key a call on {unkeyed_options}, so wrappers "
                                    "that differ only there share executables; ③ and ④ are that program")
                return
        record.computation = None
        record.notes.append(f"JAX ran an executable it had compiled before, and its lowering cache holds no compiled lowering "
                            f"of this call with this wrapper's options: the executable was compiled for another jax.jit wrapper of "
                            f"{record.name} with another {unkeyed_options} (JAX's C++ cache does not key a call on "
                            f"{'it' if ' or ' not in unkeyed_options else 'them'}), or JAX let that lowering go; ③ and ④ are not "
                            "shown, as jaxshow does not know that program")

    def record_pmap_hit(self, wrapper: Any, args: tuple, kwargs: dict, site: SourceLocation | None) -> CallRecord:
        """A direct call of ``jax.pmap``'s wrapper (jax >= 0.8) that hit JAX's cache: the hit of the jit it called, read as
        :meth:`record_hit` reads one, with the jit and flat arguments pmap looks up again (:func:`_jax_compat.pmap_jit_call`).
        Where that would run the user's code again (a pytree flatten, a static value's ``__hash__``), or this JAX's
        pmap cannot be asked, the hit is named with no stations."""
        found, users = pmap_jit_call(wrapper, args, kwargs)
        if found is not None:
            return self.record_hit(found[0], tuple(found[1]), {}, site)
        record = self._new_record("hit", None)
        record.site = record.cell_site = site
        record.pmap = True
        inner = _jax_compat.pmap_function(wrapper)  # the user's function
        if type(inner) is types.FunctionType:
            code = inner.__code__
            record.name, record.source_file = inner.__name__, code.co_filename
            record.defined_at = SourceLocation(code.co_filename, code.co_firstlineno, inner.__name__)
        why = (f"looking them up parses the call's arguments again, which would run your {users} a second time" if users
               else f"jax {jax.__version__}'s pmap cannot be asked for the jit it called without calling it again")
        record.notes.append(f"its stations are not read from JAX's caches: {why}")
        return record

    def record_compiled_call(self, compiled: Any, site: SourceLocation | None, caught: bool | None = None) -> CallRecord:
        """A direct call of a ``jax.stages.Compiled``: it ran the executable compiled ahead of time, with no trace, lowering
        or compile; named from the debug info its executable keeps, its Compiled station read from it. A Compiled made in
        the cell (``f.lower(x).compile()``) is called on the record of its lowering; one that raised (``caught``: whether
        the cell caught its error) is noted there."""
        executable = _jax_compat.compiled_executable(compiled)
        made = self._ahead_of_time(lambda r: r.computation is not None and _jax_compat.compiled_from(r.computation, executable))
        if (made is not None and made.compiled is None and _stations_shown(made)
                and not _jax_compat.computation_compiled(made.computation)):
            # compiled with compiler_options or a device_assignment: JAX keeps that executable only in this Compiled
            made.compiled = self._quiet_rebuild(made, functools.partial(_jax_compat.flat_compiled, compiled))
        if made is not None and caught is not None:
            made.compiled_raised.append(caught)
            return made
        if made is not None:
            made.repeat_hits += made.compiled_called  # its first call is the record's own; a call at another site adds one
            made.compiled_called = True
            return made
        record = self._new_record("hit", None)
        record.site = record.cell_site = site
        record.continued = "Compiled"
        record.executable = executable
        _name_from_debug_info(record, _jax_compat.program_debug_info(record.executable))
        if _stations_shown(record):
            record.compiled = self._quiet_rebuild(record, functools.partial(_jax_compat.flat_compiled, compiled))
        return record

    def record_raised_hit(self, wrapper: Any, site: SourceLocation | None, since: int, reruns_since: int = 0) -> CallRecord:
        """A direct call that JAX served from its C++ cache and that raised: named, with no stations (:meth:`DirectCalls.finish`).

        Made once the cell has ended, it is put before the records this thread started while the call ran (after the
        first ``since``: its de-optimized re-run's calls under ``jax_debug_nans``), in the order the calls were made.
        Where JAX re-ran its function de-optimized meanwhile (after the first ``reruns_since`` re-runs), the note says so.
        """
        record, _ = self._direct_record("hit", wrapper, site)
        found = next((found for fun, found in self._local.reran[reruns_since:] if fun is record.fun and found), None)
        record.notes.append(RAISED_HIT if found is None else _rerun_hit(found, record.written))
        during = self._local.mine[since:-1]
        with self._lock:
            if during and during[0] in self.records and self.records[-1] is record:
                self.records.insert(self.records.index(during[0]), self.records.pop())
        return record

    def record_unseen_raise(self, wrapper: Any, site: SourceLocation | None, users: str) -> CallRecord:
        """A direct call that raised an error the cell caught, before JAX's cache lookup or after it: jaxshow saw neither.

        JAX's dispatch ran ``users`` (the user's flatten or ``__hash__``) before
        the lookup; only running it again would tell a refusal from a hit that
        raised, so the record claims neither.
        """
        record, _ = self._direct_record("jit", wrapper, site)
        record.failed_in, record.ongoing = "call", False  # and no error: it was not seen
        record.notes.append(f"jaxshow does not see an error the cell catches: JAX refused the call if your {users} raised "
                            f"before its cache lookup, else the call hit the cache and raised while running; telling which "
                            f"would run your {users} again")
        return record

    def record_wrapper_call(self, since: int, wrapper: Any, site: SourceLocation | None) -> CallRecord:
        """A direct call of a JAX wrapper that compiles outside jit's path (``jax.pmap`` on jax 0.7).

        No hook sees it: its record is the events it emitted on this thread
        (gathered from the event-only records made since ``since``), with no
        stations, which could only be read again by tracing it again.
        """
        orphans = [r for r in self._local.mine[since:] if r.path == "events"]
        record = self._new_record("wrapper", None)
        record.site = record.cell_site = site
        inner = getattr(wrapper, "__wrapped__", None)  # JAX's wrapper, made with functools.wraps
        if type(inner) is types.FunctionType:
            record.name, record.source_file = inner.__name__, inner.__code__.co_filename
            record.defined_at = SourceLocation(inner.__code__.co_filename, inner.__code__.co_firstlineno, inner.__name__)
        for orphan in orphans:
            record.events.extend(orphan.events)
            with self._lock:
                if orphan in self.records:
                    self.records.remove(orphan)
        record.notes.append(f"{type(wrapper).__name__} compiles outside jax.jit's path on jax {jax.__version__}: "
                            "its timings are shown; its stations are not read back (that would trace it again)")
        return record

    def record_refused(self, wrapper: Any, args: tuple, kwargs: dict, site: SourceLocation | None,
                       error: BaseException | None, unhashable: str | None = None, no_tracing: bool = False) -> CallRecord:
        """A direct call JAX's C++ dispatch refused before any trace (a static argument it cannot hash or compare, a pytree whose
        flatten raised, ``jax.no_tracing()`` where the call missed its C++ cache), where no hook runs.

        ``error`` is ``None`` where the cell caught it; JAX refused the call for
        certain all the same, for the static argument ``unhashable`` names
        (``s is a list, which has no hash``), or ``no_tracing``.
        """
        record, info = self._direct_record("jit", wrapper, site)
        record.error, record.failed_in, record.ongoing, record.caught_refusal = error, "call", False, error is None
        try:
            _name_users_function(record, info, args, kwargs)
            record.static_args = static_values(info, args, kwargs)
        except Exception:  # noqa: BLE001 - the name and values are niceties; the error is the user's own
            pass
        why = f", as it refuses every call whose static argument {unhashable}" if error is None and unhashable else ""
        if no_tracing:
            why = (": jax.no_tracing() was in effect, and the call missed JAX's C++ dispatch cache (JAX raised before it "
                   f"looked up its traces, so it says neither whether it would have traced nor why; {NO_TRACING_INSTEAD})")
        record.notes.append(f"JAX refused the call before tracing it{why}: nothing was traced, lowered or compiled")
        return record

    # internals -------------------------------------------------------------------------

    def _direct_record(self, path: str, wrapper: Any, site: SourceLocation | None) -> tuple[CallRecord, Any]:
        """A new record of a cell's direct call of the jit ``wrapper`` at ``site``, named from JAX's jit info; and that info."""
        record = self._new_record(path, None)
        record.site = record.cell_site = site
        record.jit_info = info = _jax_compat.jit_info(wrapper)
        record.fun = _jax_compat.jit_function(wrapper)
        record.name, record.source_file = _jax_compat.jit_info_function(info)
        pmapped = _jax_compat.pmapped_function(record.fun)
        if pmapped is not None:  # the jit jax.pmap calls (jax >= 0.8): named for the user's function, as on its trace
            record.name, record.source_file = pmapped
            record.pmap = True
        _name_unnamed_callable(record)  # a callable object's kind is its type's (jax.jit(f_vjp) of jax.vjp's VJP)
        _mark_users_jit(record, wrapper)
        return record, info

    def rerun_started(self, fun: Any, signal: BaseException | None = None) -> bool:
        if self.closed:
            return False
        name = getattr(fun, "__name__", None)
        self._local.reruns.append(name if isinstance(name, str) else "?")
        if len(self._local.reran) < MAX_RECORDS:
            self._local.reran.append((fun, _jax_compat.special_value_found(signal)))
        return True

    def reruns_made(self) -> int:
        """How many de-optimized re-runs this thread has started (:meth:`record_raised_hit` looks at those after)."""
        return len(self._local.reran)

    def rerun_ended(self, started: bool) -> None:
        if started and self._local.reruns:
            self._local.reruns.pop()

    def _new_record(self, path: str, frame: Any) -> CallRecord:
        state = self._local
        with self._lock:
            record = CallRecord(seq=len(self.records) + self.dropped, path=path, thread_id=threading.get_ident())  # type: ignore[arg-type]
            record.rerun_of = state.reruns[-1] if state.reruns else None
            if state.suspended and not state.stack and (running := state.suspended[-1][0].record) is not None:
                record.callback_of = running.written
            if len(self.records) < MAX_RECORDS:
                self.records.append(record)
            else:
                record.kept = False
                self.dropped += 1
        if frame is not None and record.kept:
            record.site, record.cell_site, record.through_library = _sites(frame, self.cell_line)
        if len(state.mine) < MAX_RECORDS:
            state.mine.append(record)
        return record

    def _quiet_rebuild(self, record: CallRecord, build: Callable[[], Any]) -> Any:
        """Run ``build`` with every hook passing through; a failure is a note, never the user's error."""
        state = self._local
        state.busy, state.rebuilding, state.rebuild_events = True, record, []
        misses = _jax_compat.trace_cache_misses()
        try:
            with _jax_compat.unheard():
                return build()
        except Exception as exc:  # noqa: BLE001 - the user's call already succeeded or raised its own error
            record.notes.append(f"jaxshow could not read this call's stages back from JAX's caches: {type(exc).__name__}: {exc}")
            return None
        finally:
            events, state.busy, state.rebuilding, state.rebuild_events = state.rebuild_events, False, None, []
            looked_up = misses is not None and _jax_compat.trace_cache_misses() == misses  # JAX's trace event for a cache hit
            record.notes.extend(f"jaxshow's read-back of the stations ran JAX's {e.stage} again ({e.fun_name})"
                                for e in events if not (e.stage == "trace" and looked_up))


def _as_traced(jaxpr: Any, frame: Any, *traced: Any) -> Any:
    """The jaxpr a call traced to that JAX dispatches at ``frame`` as ``jaxpr``, where one of ``traced`` (this thread's
    last traces) is: JAX lowered it to ``jaxpr`` for its high types (an ``unreduced`` sharding, jax 0.12.1); else
    ``jaxpr``. The stack is read only where none of ``traced`` is ``jaxpr`` itself."""
    if jaxpr is None or all(t is None for t in traced) or any(t is jaxpr for t in traced):
        return jaxpr
    return _jax_compat.lowered_from(frame, jaxpr) or jaxpr


def _traced_as(record: CallRecord, jaxpr: Any) -> None:
    """Keep the jaxpr a call traced to, and name the call from it: JAX's name for its function, or the user's function
    JAX's own wrapper ran (an exported function's ``call_exported``, ``jax.pmap``'s jit)."""
    record.jaxpr = jaxpr
    name, source = _jax_compat.jaxpr_function(jaxpr)
    if not _jax_compat.unknown_name(name) and record.defined_at is None:  # else jaxshow named the user's function
        record.name = name
    if record.defined_at is None:  # else jaxshow found the user's function JAX's debug info does not name
        record.source_file = source or record.source_file
    if (exported := _jax_compat.exported_function(jaxpr)) is not None:  # exp.call(x) outside jit: JAX's call_exported
        record.name, record.users_jit, record.exported = exported, True, True
    pmapped = _jax_compat.pmapped_function(record.fun)
    if pmapped is not None:
        record.name, record.source_file = pmapped
        record.pmap = True


def _name_from_debug_info(record: CallRecord, info: Any) -> None:
    """Name a record of a stage object made before the cell, and place its function, from JAX's ``DebugInfo``."""
    record.name, record.source_file = _jax_compat.debug_info_function(info)
    record.defined_at = source_location(getattr(info, "func_src_info", None))


def _mark_users_jit(record: CallRecord, wrapper: Any) -> bool:
    """Mark a cell's direct call of a function of JAX's or a library's as the user's where the user's code made its
    ``jax.jit`` (``jax.jit(jnp.linalg.solve)``, :func:`users_jit_of_jax`; ``jax.jit(linear)`` of an ``nnx.Linear``,
    :func:`users_jit_of_library`), and say whether it did."""
    kind = record.kind
    if not (kind == "jax" and users_jit_of_jax(wrapper) or kind == "library" and users_jit_of_library(wrapper)):
        return False
    record.users_jit = True
    owner = "JAX's" if kind == "jax" else f"{package_of(record.source_file)}'s" if record.source_file else "a library's"
    record.notes.append(f"jax.jit of {owner} own {record.name}, made by your code: shown as your call")
    return True


def users_jit_of_library(wrapper: Any) -> bool:
    """Whether a jit wrapper of a library's function or callable object was made by code outside the library: a callable
    object (``jax.jit(linear)`` of an ``nnx.Linear``) or bound method, or a function at the top of its module that the
    module does not hold jitted; a function defined inside another (``<locals>``) was jitted where the library made it."""
    try:
        fun = _jax_compat.jit_function(wrapper)
        if type(fun) is not types.FunctionType:
            return type(fun) is types.MethodType or not is_jax_type(type(fun))
        if "<locals>" in fun.__qualname__:
            return False
        return not any(value is wrapper for value in vars(sys.modules[fun.__module__]).values())
    except Exception:  # noqa: BLE001 - a function without a module: the library's, as found
        return False


def users_jit_of_jax(wrapper: Any) -> bool:
    """Whether a jit wrapper of a function of JAX's was made by code outside JAX: JAX's own jitted functions
    (``jnp.sin``) are the wrappers their modules hold under the function's name (all 240 of jnp, lax, nn, random,
    scipy and linalg, jax 0.7 to 0.12); ``jax.jit(jnp.sin)`` and ``jax.jit(jax.random.normal)`` are not."""
    try:
        fun = _jax_compat.jit_function(wrapper)
        return held_by_module(fun) is not wrapper
    except Exception:  # noqa: BLE001 - a function without a module: JAX's, as found
        return False


def users_jit_traced(fun: Any, frame: Any, cell_line: CellLine = no_cell) -> bool:
    """Whether a trace of ``fun``, a function of JAX's, under way at ``frame`` is of a ``jax.jit`` the user's code made
    and called (``normal = jax.jit(jax.random.normal)``; ``normal(k, (3,))``): the user's, as :func:`users_jit_of_jax`
    tells for a cell's direct call. The wrapper's caller is the user's, and JAX's module holds ``fun`` itself under its
    name (or nothing): not a jit of it, as it holds ``jnp.sin``'s, nor an object around JAX's own jit of it, as the
    ``jnp.negative`` ufunc holds the jit that ``-x`` calls."""
    try:
        if held_apart(fun):  # read first: the frame walk costs more, and jnp's operations stop here
            return False
    except Exception:  # noqa: BLE001 - a callable without a module: JAX's, as found
        return False
    caller = _jax_compat.jit_caller(frame)
    return caller is not None and (is_user_file(caller.f_code.co_filename) or _in_cell(caller, cell_line) is not None)


def _stations_shown(record: CallRecord) -> bool:
    """Whether a report may show this record's stations: never JAX's own eager operations', nor a record past MAX_RECORDS."""
    return record.kept and record.kind != "jax"


def _read_arguments(record: CallRecord, jit_info: Any, args: tuple, kwargs: dict) -> None:
    """What the call's arguments and context say, read in the call: static values (and the user's names of the leaves
    of a library's jitted function that carries the user's, ``eqx.filter_jit``), trace-context config."""
    record.static_args = static_values(jit_info, args, kwargs)
    if record.jitted_by is not None:
        statics = tuple(value for _, value in static_arguments(jit_info, args, kwargs))
        record.leaf_labels = leaf_labels(statics)
        if (leaves := static_leaves(statics)) is not None:  # eqx.filter_jit's one static value, as the user's arguments
            record.static_args = shown_statics(leaves)
    if ("flax.nnx" in sys.modules and any(type(a).__name__ == "NodeStates" for a in args)
            and users_code((args, kwargs), []) is None):  # flattened again only where no flatten of the user's runs
        record.in_tree = jax.tree_util.tree_structure((args, kwargs))  # nnx.jit's: its leaves named when shown
    record.trace_context = _jax_compat.trace_context_snapshot()
    record.passed = passed_arguments(jit_info, args, kwargs)


def finish_ahead_of_time(record: CallRecord) -> None:
    """Stations of a call lowered (and maybe compiled) ahead of time in the cell: ``f.lower(x).compile()``.

    The executable is taken only if JAX has it cached: nothing is compiled for the report.
    """
    if record.lowered is not None or record.computation is None or (record.jaxpr is None and record.continued != "Lowered"):
        return
    record.lowered = _jax_compat.lowered_from_computation(record.computation, record.jaxpr, record.donated)
    if _jax_compat.computation_compiled(record.computation):
        record.compiled = record.lowered.compile()


def _lower_and_compile(record: CallRecord) -> None:
    """Public ``Lowered`` and ``Compiled`` around the computation JAX lowered for the call (its cached executable).

    Built from the flat argument types, so no user pytree is rebuilt.
    """
    record.lowered = _jax_compat.lowered_from_computation(record.computation, record.jaxpr, record.donated)
    if record.failed_in != "compile":
        record.compiled = record.lowered.compile()


class _Hooks:
    """JAX's miss-path hooks, installed while at least one capture is open; fans each callback out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._captures: tuple[CallCapture, ...] = ()  # replaced whole, so the hooks read it without the lock
        self._uninstall: Callable[[], None] | None = None

    def open(self, capture: CallCapture) -> Callable[[], None] | None:
        with self._lock:
            if not self._captures:
                self._uninstall = _jax_compat.install_call_hooks(_FanOut(self))
            self._captures = (*self._captures, capture)
            return self._uninstall

    def close(self, capture: CallCapture) -> None:
        with self._lock:
            if capture not in self._captures:
                return
            self._captures = tuple(c for c in self._captures if c is not capture)
            if not self._captures and self._uninstall is not None:
                self._uninstall()
                self._uninstall = None

    def captures(self) -> tuple[CallCapture, ...]:
        return self._captures


class _FanOut(_jax_compat.CallObserver):
    """The one observer JAX's hooks call: passes each callback to every open capture."""

    def __init__(self, hooks: _Hooks) -> None:
        self._hooks = hooks

    def busy(self) -> bool:
        return any(c.busy() for c in self._hooks.captures())

    def trace_started(self, fun: Any, jit_info: Any, args: tuple, kwargs: dict) -> list:
        return [(c, c.trace_started(fun, jit_info, args, kwargs)) for c in self._hooks.captures()]

    def trace_ended(self, tokens: list, jaxpr: Any, args_flat: list | None, error: BaseException | None, out_tree: Any) -> None:
        for capture, frame in tokens or ():
            capture.trace_ended(frame, jaxpr, args_flat, error, out_tree)

    def run_started(self, jaxpr: Any, name: str, donated: tuple[bool, ...]) -> list:
        return [(c, c.run_started(jaxpr, name, donated)) for c in self._hooks.captures()]

    def lower_started(self, jaxpr: Any, donated: tuple[bool, ...]) -> None:
        for capture in self._hooks.captures():
            capture.lower_started(jaxpr, donated)

    def lowered(self, computation: Any, error: BaseException | None) -> None:
        for capture in self._hooks.captures():
            capture.lowered(computation, error)

    def run_ended(self, tokens: list, executable: Any, error: BaseException | None) -> None:
        for capture, frame in tokens or ():
            capture.run_ended(frame, executable, error)

    def compiling(self) -> None:
        for capture in self._hooks.captures():
            capture.compiling()

    def rerun_started(self, fun: Any, signal: BaseException | None = None) -> list:
        return [(c, c.rerun_started(fun, signal)) for c in self._hooks.captures()]

    def rerun_ended(self, tokens: list) -> None:
        for capture, token in tokens or ():
            capture.rerun_ended(token)


_hooks = _Hooks()


class _Watch(_jax_compat.CallObserver):
    """An observer of JAX's miss-path hooks beside any capture, opened and closed with its owner; each hook it does
    not override passes through."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._open = False

    def open(self) -> Any:
        _hooks.open(self)  # type: ignore[arg-type]
        self._open = True
        return self

    def close(self) -> None:
        if self._open:
            self._open = False
            _hooks.close(self)  # type: ignore[arg-type]

    def busy(self) -> bool:
        return False

    def run_started(self, jaxpr: Any, name: str, donated: tuple[bool, ...]) -> Any:
        return None

    def lowered(self, computation: Any, error: BaseException | None) -> None:
        return None

    def run_ended(self, token: Any, executable: Any, error: BaseException | None) -> None:
        return None


class RefusalWatch(_Watch):
    """JAX's miss-path hooks for the cell's calls where no capture is open (``%%jaxcache``): tells ``calls`` the error
    JAX's entry (``_infer_params``) raised for a call (arguments it cannot trace, an ``in_shardings`` that does not
    divide them, a failed trace), which the cell may catch, so ``DirectCalls`` would never see it."""

    def __init__(self, calls: DirectCalls) -> None:
        super().__init__()
        self._calls = calls

    def trace_started(self, fun: Any, jit_info: Any, args: tuple, kwargs: dict) -> tuple[Any, bool]:
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        return fun, depth == 0

    def trace_ended(self, token: tuple[Any, bool], jaxpr: Any, args_flat: list | None, error: BaseException | None,
                    out_tree: Any) -> None:
        self._local.depth = max(getattr(self._local, "depth", 1) - 1, 0)
        if error is not None and token[1]:
            self._calls.refused(token[0], error)


class RecompileWatch(_Watch):
    """JAX's miss-path hooks under ``%jaxcache on``, which counts no call: a call of a jit wrapper that JAX compiled
    without tracing (an argument placed on another device or sharded otherwise, donation, another wrapper's options)
    is told to ``counter.compiled_again(fun)``. A call traced where ``counter.traced_count(fun)`` grew over its entry;
    the compile is the call's where JAX dispatches the jaxpr its entry returned (a compile ahead of time, or one
    under another call, is not)."""

    def __init__(self, counter: Any) -> None:
        super().__init__()
        self._counter = counter

    def trace_started(self, fun: Any, jit_info: Any, args: tuple, kwargs: dict) -> tuple[Any, int]:
        return fun, self._counter.traced_count(fun)

    def trace_ended(self, token: tuple[Any, int], jaxpr: Any, args_flat: list | None, error: BaseException | None,
                    out_tree: Any) -> None:
        fun, traced_before = token
        self._local.entered = None if error is not None else (fun, self._counter.traced_count(fun) > traced_before, jaxpr)

    def run_started(self, jaxpr: Any, name: str, donated: tuple[bool, ...]) -> list:
        entered, self._local.entered = getattr(self._local, "entered", None), None
        traced = _as_traced(jaxpr, sys._getframe(1), entered[2] if entered is not None else None)
        call = [entered[0] if entered is not None and entered[2] is traced and not entered[1] else None]
        self._local.running = [*getattr(self._local, "running", ()), call]
        return call

    def compiling(self) -> None:
        running = getattr(self._local, "running", None)
        if running and running[-1][0] is not None:
            fun, running[-1][0] = running[-1][0], None  # one compile a call
            self._counter.compiled_again(fun)

    def run_ended(self, token: list, executable: Any, error: BaseException | None) -> None:
        running = getattr(self._local, "running", None)
        if running and running[-1] is token:
            self._local.running = running[:-1]


def pmap_jit_call(wrapper: Any, args: tuple, kwargs: dict) -> tuple[tuple[Any, list] | None, str | None]:
    """``(the jit and flat arguments a call of jax.pmap's wrapper called, looked up again; None)``, or ``(None, the
    user's code looking them up would run a second time)``: a pytree flatten, a static value's ``__hash__``.
    ``(None, None)`` where this JAX's pmap cannot be asked (:func:`_jax_compat.pmap_jit_call`)."""
    statics = [args[i] for i in _jax_compat.pmap_static_argnums(wrapper) if -len(args) <= i < len(args)]
    users = users_code((args, kwargs), statics)
    if users is not None:
        return None, users
    try:
        return _jax_compat.pmap_jit_call(wrapper, args, kwargs), None
    except Exception:  # noqa: BLE001 - the call already succeeded; what it called is a nicety
        return None, None


def pmap_outside_jit(wrapper: Any) -> bool:
    """Whether ``wrapper`` is jax 0.7's ``jax.pmap`` (a ``PmapFunction``), whose traces and compiles take a path of their own,
    outside ``jax.jit``'s, that jaxshow's hooks and tracing-cache probe do not see."""
    return PMAP_CODE is None and type(wrapper) is not JIT_TYPE and type(wrapper) is not COMPILED_TYPE and stageable(wrapper) is not None


def pmapped_jit(wrapper: Any) -> bool:
    """Whether ``wrapper`` is ``jax.pmap``'s, where pmap is a jit of ``shard_map`` (jax >= 0.8) that JAX's hooks see."""
    return type(wrapper) is types.FunctionType and wrapper.__code__ is PMAP_CODE


class CallCounter:
    """What :class:`DirectCalls` tells about each direct call of a jit wrapper (``%%jaxcache`` counts them)."""

    def before(self, wrapper: Any, call: Any) -> Any:  # pragma: no cover - interface
        """``call`` holds the call's arguments (``call.args``, ``call.keywords``), to be read only after it."""
        raise NotImplementedError

    def after(self, wrapper: Any, token: Any, maybe_refused: bool = False,
              error: BaseException | None = None, refused: bool = False) -> None:  # pragma: no cover - interface
        """The call returned, or raised ``error``; ``maybe_refused``: it raised an error the cell caught, and JAX may have
        refused it before any cache lookup (counted only if it traced); ``refused``: ``error`` is ``jax.no_tracing()``'s
        refusal (:func:`jaxshow._jax_compat.refused_by_no_tracing`)."""
        raise NotImplementedError


def call_arguments(call: Any) -> tuple[tuple, dict]:
    """``(args, kwargs)`` of a direct call of a jit wrapper, a ``functools.partial`` CPython merged into it unpacked;
    a library's object that calls one (flax's ``nnx.jit``) is called with the arguments as written."""
    _, lead, bound = jit_target(call.func) or (None, (), {})
    return (*lead, *call.args), {**bound, **call.keywords}


class _Arguments(functools.partial):
    """One jit call's function and arguments, built by CPython from the cell's own argument list; calling it makes the call."""

    __slots__ = ()


class _ArgumentList(functools.partial):
    """Stands in for a jit wrapper ``fn`` while CPython evaluates the call's argument list: ``self(*a, **k)`` is ``_Arguments(fn, *a, **k)``.

    All in C, so no jaxshow frame is ever on the stack. CPython names the
    callee in an unpacking error (``f() argument after * must be an
    iterable``) by its ``__qualname__``, ``__module__`` or ``str``: each
    is ``fn``'s, read only then, as CPython would read ``fn``'s.
    """

    __slots__ = ()
    __module__ = property(lambda self: self.args[0].__module__)  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        if name == "__qualname__":
            return self.args[0].__qualname__
        raise AttributeError(name)

    def __str__(self) -> str:
        return str(self.args[0])


def _unhashable(value: Any) -> bool:
    """Whether JAX's dispatch cannot hash ``value`` as a static argument, told from types alone (no ``__hash__`` runs):
    no ``__hash__``, a JAX array's (which raises), or a tuple holding one."""
    return (type(value).__hash__ is None or is_a(value, jax.Array)
            or (type(value) is tuple and any(_unhashable(v) for v in value)))


def _unhashable_text(name: str, value: Any) -> str:
    """``s is a list, which has no hash``: why JAX refuses a call with this static value (:func:`_unhashable`), from its type alone."""
    if is_a(value, jax.Array):
        return f"{name} is a JAX array, whose hash raises"
    if type(value) is tuple:
        return f"{name} is a tuple holding a value JAX cannot hash"
    return f"{name} is {a_or_an(type(value).__name__)}, which has no hash"


def _refused(error: BaseException, below: types.TracebackType | None) -> bool:
    """Whether JAX's C++ dispatch refused a call over its arguments, told from the ``error`` out of its line and what ran ``below`` it.

    Before any cache lookup the dispatch runs Python of the user's (or a
    library's): a static value's ``__hash__`` and ``__eq__``, a pytree node's
    flatten and its aux data's ``__eq__``. Their error comes out as it was
    raised, the first frame below the call theirs (JAX's own, where a program
    that ran raised in JAX's Python: a deleted input), or wrapped in one of
    jaxlib's messages. ``FloatingPointError`` is JAX's de-optimized re-run
    (``jax_debug_nans``), which runs the user's function below the call.
    """
    if _jax_compat.dispatch_refusal(error):
        return True
    return (below is not None and not isinstance(error, FloatingPointError)
            and not is_jax_file(below.tb_frame.f_code.co_filename))


class _Pending:
    """A direct call of a jit wrapper between ``pre`` and ``after``.

    ``key`` is the call's place (code object, line, column) and wrapper, by ids;
    ``fresh`` says it is the first call there, the only one whose site and
    arguments are recorded (a loop's later calls are counted).
    """

    __slots__ = ("wrapper", "key", "fresh", "site", "call", "made_before", "reruns_before", "walk_args", "token")

    def __init__(self, wrapper: Any, key: tuple, fresh: bool, site: SourceLocation | None) -> None:
        self.wrapper, self.key, self.fresh, self.site = wrapper, key, fresh, site
        self.call: _Arguments | None = None
        self.made_before = self.reruns_before = 0
        self.walk_args: tuple[tuple, dict] | None = None
        self.token: Any = None


HELPERS_NAMED = 3
"""How many of the user's functions a cell called :attr:`DirectCalls.helpers` names."""


class DirectCalls:
    """The cell's own calls, ``f(a, *b, k=c)`` rewritten as ``(post(pre(f, line, col)(a, *b, k=c)) or after(held()()))[0]``.

    ``pre`` returns ``f`` itself unless calling it calls a jit wrapper, so
    any other call runs as written and ``post`` boxes its value. For a jit
    wrapper ``pre`` returns an :class:`_ArgumentList`: CPython evaluates the
    cell's argument list into it exactly as into ``f`` (same order, same
    errors), ``post`` sees the arguments before the call, ``held`` hands
    them back and the cell itself calls ``f`` with them (through C, so a
    traceback the user prints is their own); ``after`` runs once the call has
    returned, still inside the cell's expression and so in its context. A
    call that reached none of JAX's Python hooks hit the C++ cache: the first
    such call per line and function gets its stations from JAX's caches there
    (donated arguments are made abstract before the call, so donation is harmless);
    later ones are counted on that line's first record. A call of
    ``jax.disable_jit`` is noted (:meth:`jit_disabled_by`): the jitted calls
    inside the user's helpers then run op by op, where no hook sees them.

    Args:
        capture: the open capture whose records tell hits from misses.
        counter: optional; told about every direct call of a jit wrapper.
    """

    def __init__(self, capture: CallCapture | None, counter: CallCounter | None = None) -> None:
        self.capture = capture
        self.counter = counter
        self._local = threading.local()
        self._first: dict[tuple, CallRecord | None] = {}
        self._codes: dict[int, Any] = {}
        self._plain: dict[int, type] = {}
        """Types whose calls never call a jit wrapper (builtins, plain functions, the user's classes), and JAX's own
        jitted functions (``jnp.sort``: neither report counts their calls), by id: a type's own hash may be its
        metaclass's Python code (or raise), which the plain cell would never run."""
        self.helpers: list[str] = []
        """The first of the user's own functions the cell called that may call a jitted function (``train``): a jitted
        call inside one that hits JAX's cache runs in C++, where no hook sees it."""
        self._functions: dict[int, types.CodeType] = {}
        self._disabled = "the option jax_disable_jit" if _jax_compat.jit_disabled() else None
        self._disabling = False
        """``jax.disable_jit`` was the cell's last call: the next one (inside its ``with``) reads whether it disabled jit."""

    def refused(self, fun: Any, error: BaseException) -> None:
        """JAX's reading or trace of a call of ``fun`` on this thread raised ``error``: if that is the cell's call under way,
        the counter is told now, with the error, as the cell may catch it (and later calls trace) before :meth:`finish`."""
        stack = getattr(self._local, "stack", None)
        if (self.counter is None or not stack or stack[-1].call is None or stack[-1].token is None
                or _jax_compat.jit_function(stack[-1].wrapper) is not fun):
            return
        pending = stack[-1]
        token, pending.token = pending.token, None  # counted: finish's counter.after passes it by
        try:
            self.counter.after(pending.wrapper, token, error=error)
        except Exception:  # noqa: BLE001 - never disturb the cell
            pass

    def jit_disabled_by(self) -> str | None:
        """How jit was disabled in the cell, if it was: ``jax.disable_jit()`` among its calls, or ``jax_disable_jit``
        on as the cell started or ended (call it as the cell ends, on its thread)."""
        if self._disabled is None and _jax_compat.jit_disabled():
            self._disabled = "the option jax_disable_jit"
        return self._disabled

    def _stack(self) -> list[_Pending]:
        stack = getattr(self._local, "stack", None)
        if stack is None or len(stack) > 1000:  # calls that raised never reach after
            stack = self._local.stack = []
        return stack

    def pre(self, fn: Any, line: int = 0, column: int = 0) -> Any:
        if self._disabling:
            self._disabling = False
            if _jax_compat.jit_disabled():
                self._disabled = "jax.disable_jit()"
        if fn is DISABLE_JIT:
            self._disabling = True
            return fn
        kind = type(fn)
        if (kind is types.FunctionType or kind is types.MethodType) and len(self.helpers) < HELPERS_NAMED:
            self._called_function(fn)
        elif kind is functools.partial and type(fn.func) in (types.FunctionType, types.MethodType) and len(self.helpers) < HELPERS_NAMED:
            self._called_function(fn.func)  # partial(train_step, model): the function it calls
        jitting = None
        if kind is types.FunctionType and fn.__code__ is PMAP_CODE:  # jax.pmap on jax >= 0.8: a function of JAX's
            target: tuple | None = (fn, (), {})
        elif kind is COMPILED_TYPE:  # runs its executable through C++: no hook sees the call
            if self.capture is None and self.counter is None:
                return fn
            target = (fn, (), {})
        elif kind is types.FunctionType and "__wrapped__" in fn.__dict__ and (jitting := library_wrapped_jit(fn)) is not None:
            target = None  # nnx.cached_partial(train_step, ...): a call of the nnx.jit it wraps
        elif self._plain.get(id(kind)) is kind or self._plain.get(id(fn)) is fn:  # a plain kind, or a plain class
            return fn
        else:
            target = jit_target(fn)
        from_jax = type_module(kind).startswith("jax")
        if target is None and from_jax:
            target = stageable(fn)  # another JAX wrapper: jax.pmap on jax 0.7
        if target is None:
            if jitting is None and (from_jax or kind is functools.partial or kind is types.MethodType):
                return fn
            obj, jitted = jitting or (fn, library_jit(fn))
            if jitted is None:
                if len(self.helpers) < HELPERS_NAMED:
                    self._called_object(fn, kind)
                plain = fn if issubclass(kind, type) else kind  # a class is plain on its own: another may be the user's
                self._plain[id(plain)] = plain  # held, so the id is never another object's
                return fn
            if self.capture is not None:
                try:
                    self.capture.library_call(obj, jitted)
                except Exception:  # noqa: BLE001 - never disturb the cell
                    pass
            if self.counter is None:
                return fn
            target = (jitted,)  # %%jaxcache counts the call as one of the jax.jit wrapper the library calls
        frame = sys._getframe(1)
        code = frame.f_code
        key = (id(code), line, column, id(target[0]))  # hashing the code object would hash all its constants, every call
        fresh = key not in self._first
        if fresh and kind is JIT_TYPE and target[0] is fn and jax_own_wrapper(fn):  # jnp.sort: no report counts its calls
            self._plain[id(fn)] = fn
            return fn
        if fresh:
            self._codes[id(code)] = code  # alive while its id is in a key
        self._stack().append(_Pending(target[0], key, fresh, self._site(frame, line) if fresh else None))
        return _ArgumentList(_Arguments, fn)

    def left_alone(self, code: str) -> None:
        """Name ``code`` (``"a generator expression"``) among :attr:`helpers`: the cell's own code whose calls the hook
        does not see."""
        if code not in self.helpers and len(self.helpers) < HELPERS_NAMED:
            self.helpers.append(code)

    def unseen_helpers(self) -> tuple[str, ...]:
        """:attr:`helpers`, where a jitted call inside one could have hit JAX's cache: JAX's tracing cache holds a
        function that is not JAX's own (a jitted function of the user's or a library's; one it cannot place counts)."""
        if not self.helpers:
            return ()
        traced = _jax_compat.traced_functions()
        if traced is not None and all(type(fun) is types.FunctionType and is_jax_file(fun.__code__.co_filename)
                                      for fun in traced):  # a callable object's own lookups are never run
            return ()
        return tuple(self.helpers)

    def _called_object(self, fn: Any, kind: type) -> None:
        """Name the function of the user's that calling ``fn`` runs, a class's ``__init__`` or an object's ``__call__``
        (a model's forward pass), among :attr:`helpers`; read from the class dictionaries, running none of its code."""
        try:
            method = (inspect.getattr_static(fn, "__init__", None) if issubclass(kind, type)
                      else inspect.getattr_static(kind, "__call__", None))
        except Exception:  # noqa: BLE001 - a class whose dictionaries cannot be read: nothing named
            return
        if type(method) is types.FunctionType:
            self._called_function(method)

    def _called_function(self, fn: Any) -> None:
        """Name ``fn`` among :attr:`helpers` if its code is the user's (a cell's, a file of theirs) and may call a jitted
        function (:func:`~jaxshow.capture.helpers.may_call_jit`), read once per code."""
        function = fn.__func__ if type(fn) is types.MethodType else fn
        if type(function) is not types.FunctionType:
            return
        code = function.__code__
        if self._functions.get(id(code)) is not code:
            self._functions[id(code)] = code  # held, so the id is never another code's
            if is_user_file(code.co_filename) and code.co_qualname not in self.helpers and may_call_jit(fn):
                self.helpers.append(code.co_qualname)

    def _site(self, frame: Any, line: int) -> SourceLocation:
        """The call's line: in the cell, or, for code IPython compiles itself (``%timeit``), the cell line that ran it."""
        filename = frame.f_code.co_filename
        in_cell = self.capture.cell_line(frame) if self.capture is not None else None
        if in_cell is not None and in_cell[2] is not frame:  # a cell magic's body: its lines follow the magic's line
            return SourceLocation(in_cell[0], in_cell[1] + line - (frame.f_lineno or 0))
        if is_user_file(filename) or self.capture is None:
            return SourceLocation(filename, line)
        return _sites(frame, self.capture.cell_line)[0] or SourceLocation(filename, line)

    def post(self, value: Any) -> tuple:
        """``(value,)`` for a call made; ``()`` for a jit call's arguments, which ``held`` hands back to the cell to call."""
        if type(value) is not _Arguments:
            return (value,)
        pending = self._local.stack[-1]  # pre() pushed it on this thread
        pending.call = value
        try:
            self._before(pending, value)
        except Exception:  # noqa: BLE001 - never disturb the cell
            pass
        return ()

    def held(self) -> _Arguments:
        return self._local.stack[-1].call

    def after(self, value: Any) -> tuple:
        """``(value,)``, once the jit call ``held`` gave has returned."""
        pending = self._local.stack.pop()
        pending.call = None
        try:
            self._after(pending)
            first = self._first.get(pending.key)
            if first is not None:
                first.hooked = True
        except Exception:  # noqa: BLE001 - never disturb the cell
            pass
        return (value,)

    def finish(self, error: BaseException | None = None) -> None:
        """The cell has ended (raising ``error``, if it did): its own jit calls that raised, which never reached ``after``, are told apart.

        A call that raised left a record if it traced, lowered, compiled or
        dispatched in Python (its failure is on it). One that left none went no
        further than JAX's C++ dispatch: refused before any trace where a static
        argument's type has no hash, or the cell's error came out of the call from
        a ``__hash__``, ``__eq__`` or pytree flatten the dispatch ran (:func:`_refused`;
        recorded with ``error`` when the cell's error came out of it; JAX made no
        call, so nothing is counted), else served from
        JAX's cache and raised while it ran or in a check JAX makes after it
        (``jax_debug_nans``' re-run): recorded without stations, which jaxshow
        reads from JAX's caches only once a call returns.
        """
        stack = getattr(self._local, "stack", None)
        self._local.stack = []
        for pending in stack or ():
            call, pending.call = pending.call, None
            if call is None:  # its arguments raised: no call was made
                continue
            try:
                self._raised(pending, call, error)
            except Exception:  # noqa: BLE001 - never disturb the cell
                pass

    def _raised(self, pending: _Pending, call: _Arguments, error: BaseException | None) -> None:
        if type(pending.wrapper) is COMPILED_TYPE:  # its check of the arguments, or its program, raised: not counted
            if self.capture is not None:
                at_call = self._raised_at(pending, error) if error is not None else None
                record = self.capture.record_compiled_call(pending.wrapper, pending.site, caught=at_call is None)
                if record.continued == "Compiled":  # made before the cell: the call's own record
                    record.error, record.failed_in = (error if at_call is not None else None), "call"
            return
        jitted = type(pending.wrapper) is JIT_TYPE
        users = None
        if jitted:
            args, kwargs = call_arguments(call)
            info = _jax_compat.jit_info(pending.wrapper)
            named = static_arguments(info, args, kwargs)
            statics = [value for _, value in named]
            at_call = self._raised_at(pending, error) if error is not None else None
            unhashable = next((_unhashable_text(name, value) for name, value in named if _unhashable(value)), None)
            no_tracing = error is not None and _jax_compat.refused_by_no_tracing(error)
            if unhashable is not None or no_tracing or (at_call is not None and _refused(error, at_call.tb_next)):  # type: ignore[arg-type]
                if self.capture is not None and at_call is not None:
                    code = self._codes[pending.key[0]]
                    self.capture.record_refused(pending.wrapper, args, kwargs, pending.site or SourceLocation(code.co_filename, pending.key[1]),
                                                error, no_tracing=no_tracing)
                elif self.capture is not None:  # the cell caught it: refused for certain all the same
                    first = self._first.get(pending.key)
                    if first is not None and first.caught_refusal:
                        first.repeat_hits += 1
                    else:
                        self._first[pending.key] = self.capture.record_refused(pending.wrapper, args, kwargs, pending.site, None, unhashable,
                                                                               no_tracing)
                if no_tracing and self.counter is not None:  # JAX looked the call up and refused it: counted, not as a hit
                    self.counter.after(pending.wrapper, pending.token, error=error, refused=True)
                return
            if at_call is None:  # the cell caught the call's error: refused over code of the user's, if any ran, or a hit that raised
                users = users_code(dynamic_arguments(info, args, kwargs), statics)
        if self.counter is not None:
            self.counter.after(pending.wrapper, pending.token, maybe_refused=users is not None, error=error)
        if self.capture is None or not jitted:
            return
        if self.capture.own_record(pending.made_before, _jax_compat.jit_function(pending.wrapper)) is not None:
            return
        first = self._first.get(pending.key)
        unseen = first is not None and first.failed_in == "call" and first.error is None
        if first is not None and (unseen if users is not None else first.notes[:1] != [] and first.notes[0].startswith(HIT_THAT_RAISED)):
            first.repeat_hits += 1
        elif users is not None:
            self._first[pending.key] = self.capture.record_unseen_raise(pending.wrapper, pending.site, users)
        else:
            self._first[pending.key] = self.capture.record_raised_hit(pending.wrapper, pending.site, pending.made_before,
                                                                      pending.reruns_before)

    def _raised_at(self, pending: _Pending, error: BaseException) -> types.TracebackType | None:
        """Where ``error``'s traceback passes the line of the call ``pending``: ``None`` if it came out of a later line."""
        code, line = self._codes.get(pending.key[0]), pending.key[1]
        tb = error.__traceback__
        while tb is not None and not (tb.tb_frame.f_code is code and tb.tb_lineno == line):
            tb = tb.tb_next
        return tb

    def _before(self, pending: _Pending, call: _Arguments) -> None:
        if self.counter is not None:
            pending.token = self.counter.before(pending.wrapper, call)
        if self.capture is None:
            return
        pending.made_before = self.capture.records_made()
        pending.reruns_before = self.capture.reruns_made()
        if pending.fresh and (type(pending.wrapper) is JIT_TYPE or pmapped_jit(pending.wrapper)):
            pending.walk_args = call_arguments(call)

    def _after(self, pending: _Pending) -> None:
        if self.counter is not None:
            self.counter.after(pending.wrapper, pending.token)
        if self.capture is None:
            return
        key = pending.key
        if pmapped_jit(pending.wrapper):  # a jit of JAX's own: its record, if the call traced, is pmap's jit body's
            own = next((r for r in self.capture.own_records(pending.made_before) if r.pmap), None)
            if key not in self._first:
                if own is None and pending.walk_args is not None:  # a hit: JAX's C++ cache served pmap's jit
                    own = self.capture.record_pmap_hit(pending.wrapper, *pending.walk_args, pending.site)
                self._first[key] = own
            elif own is None and self._first[key] is not None:
                self._first[key].repeat_hits += 1  # type: ignore[union-attr]
            return
        if type(pending.wrapper) is COMPILED_TYPE:
            if key in self._first:
                self._first[key].repeat_hits += 1  # type: ignore[union-attr]
            else:
                self._first[key] = self.capture.record_compiled_call(pending.wrapper, pending.site)
            return
        if type(pending.wrapper) is not JIT_TYPE:
            if key in self._first:
                self._first[key].repeat_hits += 1  # type: ignore[union-attr]
            else:
                self._first[key] = self.capture.record_wrapper_call(pending.made_before, pending.wrapper, pending.site)
            return
        if not pending.fresh and key in self._first and self.capture.records_made() == pending.made_before:
            first = self._first[key]  # a loop's later call that JAX served from its C++ cache: counted, nothing else
            if first is not None:
                first.repeat_hits += 1
            return
        own = self.capture.own_record(pending.made_before, _jax_compat.jit_function(pending.wrapper))
        if key in self._first:
            first = self._first[key]
            if first is not None and own is None:
                first.repeat_hits += 1
            return
        if own is not None:
            if _mark_users_jit(own, pending.wrapper) and own.computation is not None and own.lowered is None:
                self.capture.read_back(own)  # its dispatch took it for JAX's own and read no stations
            self._first[key] = own
        elif pending.walk_args is not None:
            self._first[key] = self.capture.record_hit(pending.wrapper, *pending.walk_args, pending.site)
