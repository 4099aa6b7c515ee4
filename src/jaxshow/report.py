"""Plain, immutable records of what JAX did with a call.

This module owns the data model shared by capture and rendering. It imports only
the standard library: no JAX, no IPython, no Pygments, and never
:mod:`jaxshow.render`. Display methods look their renderers up in
:data:`RENDERERS`, which render fills when it is imported.

Absence is explicit: where JAX returns ``None`` (a backend that cannot answer),
the record holds ``None`` and a sentence saying why, never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, NamedTuple, Sequence

CONTEXT_POSITION = "trace context "
"""Prefix of a trace-context value named by its position, ``trace context [5]``: in JAX's words on jax <= 0.8, and where
this JAX cannot name a position (a user's ``jax.make_user_context`` on jax 0.8 and 0.9)."""

Stage = Literal["trace", "lower", "compile", "run", "call"]
STAGES: tuple[Stage, ...] = ("trace", "lower", "compile")
"""The stages JAX reports timings for; ``"run"`` (executing the compiled program) and ``"call"`` (JAX's dispatch, before any
trace: an unhashable static argument) are phases an error can come from too."""
_DOING = {"trace": "tracing", "lower": "lowering", "compile": "compiling", "run": "running", "call": "dispatching, before any trace"}


class Renderers(NamedTuple):
    """The two display forms of one record type: HTML for notebooks, text for terminals."""

    html: Callable[[object], str]
    text: Callable[[object], str]


RENDERERS: dict[type, Renderers] = {}
"""Record type -> its renderers. :mod:`jaxshow.render` fills it when imported, so this module never imports render."""


class _Displayable:
    """Mixin: HTML for notebooks, text for terminals, one line for ``repr``.

    Without a registered renderer (render not imported) every form is the one-line ``repr``.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._summary()}>"

    def _summary(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str | None:
        renderers = RENDERERS.get(type(self))
        return renderers.html(self) if renderers else None

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(self.__repr__() if cycle else self.__str__())

    def __str__(self) -> str:
        renderers = RENDERERS.get(type(self))
        return renderers.text(self) if renderers else self.__repr__()


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where a piece of Python lives: file, line and enclosing function."""

    file: str
    line: int
    function: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where} ({self.function})" if self.function else where


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """One argument leaf as JAX saw it: abstract value only, never the array."""

    path: str
    shape: tuple[int, ...]
    dtype: str
    weak_type: bool = False
    sharding: str | None = None
    donated: bool = False
    donation_unused: bool = False
    """Donated, but the lowered program reuses its buffer for no output (JAX warned: 'Some donated buffers were not usable')."""
    ref: bool = False
    """A mutable array reference (``jax.new_ref``), not an array."""
    spec: str | None = None
    """The sharding's ``P(...)`` where it has a mesh (``mesh``): what a table shows once the mesh is named above it."""
    mesh: str | None = None

    @property
    def type_str(self) -> str:
        """JAX's short spelling, e.g. ``f32[4,3]``, ``Ref{f32[]}``."""
        short = short_type(self.dtype, self.shape)
        return f"Ref{{{short}}}" if self.ref else short


@dataclass(frozen=True, slots=True)
class ErrorSummary:
    """An exception reduced to printable text, and the stage it came from."""

    type_name: str
    message: str
    stage: Stage | None = None

    @classmethod
    def from_exception(cls, exc: BaseException, stage: Stage | None = None) -> ErrorSummary:
        """The exception's type name and at most 20 lines of its message: the first 12 and the last 7.

        A long message keeps its end: a callback's error from JAX ends with
        the Python exception that caused it. A Python traceback JAX wrote into
        its message (a static value's ``__hash__`` that raised) is cut to that
        exception's line: the cell's own traceback shows where it was raised.
        """
        try:
            lines = _without_tracebacks(str(exc).strip().splitlines())
        except Exception:  # noqa: BLE001 - a user exception whose __str__ raises
            lines = [f"<{type(exc).__name__} object; its str() raised>"]
        if len(lines) > 20:
            lines = [*lines[:12], f"… {len(lines) - 19:,} lines …", *lines[-7:]]
        return cls(type(exc).__name__, "\n".join(lines), stage)


_TRACEBACK = "Traceback (most recent call last):"


def _without_tracebacks(lines: list[str]) -> list[str]:
    """``lines`` with each embedded Python traceback's header and frames (its indented lines) left out."""
    kept, in_traceback = [], False
    for text in lines:
        if _TRACEBACK in text:
            head = text[:text.index(_TRACEBACK)].rstrip()
            if head:
                kept.append(head)
            in_traceback = True
        elif not (in_traceback and text[:1].isspace()):
            kept.append(text)
            in_traceback = False
    return kept


@dataclass(frozen=True, slots=True)
class WrapperStation:
    """The ``jax.jit`` wrapper: what function, defined where, with which options."""

    name: str
    qualname: str
    kind: str
    defined_at: SourceLocation | None = None
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    donate_argnames: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    """The other options the wrapper was given, as ``(jax.jit's keyword, value)``: ``in_shardings``, ``out_shardings``,
    ``in_layouts``, ``out_layouts``, ``keep_unused``, ``inline``, ``compiler_options``, ``backend``, ``device``; those
    left at their defaults are left out."""
    options_unavailable: str | None = None
    wrapped_by_jaxshow: bool = False
    static_args: tuple[tuple[str, str], ...] = ()
    static_objects: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The memory addresses left out of ``static_args``' reprs, by name: which objects they were, in this process only."""


@dataclass(frozen=True, slots=True)
class LoopInfo:
    """Loops of one kind and trip count in a jaxpr: ``scan`` with its ``length``, ``while`` (trip count unknown)."""

    primitive: str
    trip_count: int | None
    count: int = 1


@dataclass(frozen=True, slots=True)
class TracedStation:
    """The ``Traced`` stage: the jaxpr and the abstract signature."""

    jaxpr_text: str
    jaxpr_source_text: str | None
    args: tuple[ArgSpec, ...]
    out_info: tuple[ArgSpec, ...]
    effects: tuple[str, ...]
    equation_count: int
    primitive_counts: tuple[tuple[str, int], ...]
    const_count: int = 0
    ref_count: int = 0
    """Of the closed-over constants, the ``jax.new_ref`` refs: JAX passes them to the program as inputs, not baked in."""
    notes: tuple[str, ...] = ()
    loops: tuple[LoopInfo, ...] = ()
    dot_flops_estimate: float | None = None
    """FLOPs of the matrix multiplies (``2·M·N·K`` per ``dot_general``) and convolutions, each loop body counted by its
    trip count; an estimate, given where the program has loops."""
    flops_by_scope: tuple[tuple[str, float], ...] = ()
    """Those FLOPs by named scope (``jax.named_scope``, a nested ``jax.jit`` as ``jit(name)``, JAX's ``jvp(...)`` and
    ``transpose(...)`` around the backward pass's), costliest first, ``""`` for none; given where there are two or more."""


NO_SCOPE = "(no named scope)"
"""How :attr:`TracedStation.flops_by_scope` names the equations outside any named scope."""


@dataclass(frozen=True, slots=True)
class CostAnalysis:
    """XLA's cost estimate; ``entries`` keeps every key JAX returned."""

    flops: float | None
    transcendentals: float | None
    bytes_accessed: float | None
    entries: tuple[tuple[str, float], ...]
    optimized: bool


@dataclass(frozen=True, slots=True)
class LoweredStation:
    """The ``Lowered`` stage: the module text and its pre-optimisation cost."""

    dialect: str
    module_text: str
    debug_info: bool
    cost: CostAnalysis | None
    cost_unavailable: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryStats:
    """``Compiled.memory_analysis()`` in bytes; ``None`` where not reported."""

    argument_size_bytes: int | None
    output_size_bytes: int | None
    alias_size_bytes: int | None
    temp_size_bytes: int | None
    generated_code_size_bytes: int | None
    host_temp_size_bytes: int | None = None
    peak_memory_bytes: int | None = None
    peak_unavailable: str | None = None
    """Why ``peak_memory_bytes`` is ``None``: this JAX or backend does not report ``peak_memory_in_bytes``."""

    @property
    def estimated_total_bytes(self) -> int | None:
        """``argument + output + temp - alias``, the usual footprint estimate."""
        parts = (self.argument_size_bytes, self.output_size_bytes, self.temp_size_bytes, self.alias_size_bytes)
        if any(p is None for p in parts):
            return None
        arg, out, temp, alias = parts
        return arg + out + temp - alias


BufferKind = Literal["parameter", "output", "temporary", "constant"]


@dataclass(frozen=True, slots=True)
class BufferSpec:
    """One value of the compiled program's entry computation, read from the optimised HLO text.

    ``type_text`` is HLO's type without its layout (``f32[1024,1024]``, or a
    tuple ``(f32[8], s32[])``); ``size_bytes`` its elements' bytes. ``detail``
    says what it is: ``parameter 0 (a)``, ``donated: reused as output {0}``,
    or the JAX operation that made a temporary.
    """

    name: str
    kind: BufferKind
    type_text: str
    size_bytes: int
    opcode: str
    detail: str | None = None


HOME_MEMORY_KINDS = ("device", "unpinned_host", None)
"""Memory kinds an array has where nothing was asked (a device's own; a CPU's, on jax 0.7): not said beside a spec."""


@dataclass(frozen=True, slots=True)
class PlacementSpec:
    """Sharding and memory format of one input or output leaf."""

    path: str
    sharding: str | None
    layout: str | None
    spec: str | None = None
    memory_kind: str | None = None
    default_layout: bool = False
    """Whether ``layout`` is XLA's default: row-major, untiled."""


@dataclass(frozen=True, slots=True)
class DeviceTile:
    """One block of an array and the devices holding it: rows and columns as ``[start, stop)`` index ranges."""

    rows: tuple[int, int]
    cols: tuple[int, int]
    devices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ShardingView:
    """Which device holds which block, for one distinct sharding (``jax.debug.visualize_array_sharding``'s picture).

    ``dims`` are the array dimensions drawn: rows then columns for a matrix,
    columns only for a vector, the (at most two) split ones for higher ranks;
    ``rows`` of a tile is ``(0, 1)`` when only one dimension is drawn.
    ``leaves`` counts the inputs and outputs placed this way.
    """

    spec: str
    shape: tuple[int, ...]
    dims: tuple[int, ...]
    tiles: tuple[DeviceTile, ...]
    leaves: int
    example: str
    unshown_split_dims: int = 0


@dataclass(frozen=True, slots=True)
class CollectiveCount:
    """Collective operations of one kind in the optimised HLO, with the first lines they are on (1-based);
    ``in_loops`` of them are in a ``while`` loop's body (or a computation it calls), run every iteration."""

    kind: str
    count: int
    lines: tuple[int, ...]
    in_loops: int = 0


@dataclass(frozen=True, slots=True)
class CompiledStation:
    """The ``Compiled`` executable: optimised HLO, cost, memory, placements."""

    optimized_hlo_text: str | None
    hlo_unavailable: str | None
    cost: CostAnalysis | None
    cost_unavailable: str | None
    memory: MemoryStats | None
    memory_unavailable: str | None
    inputs: tuple[PlacementSpec, ...]
    outputs: tuple[PlacementSpec, ...]
    placements_unavailable: str | None = None
    mesh: str | None = None
    device_count: int | None = None
    sharding_views: tuple[ShardingView, ...] = ()
    more_sharding_views: int = 0
    collectives: tuple[CollectiveCount, ...] = ()
    loop_trip_counts: tuple[int, ...] = ()
    """``known_trip_count`` of each ``while`` loop XLA kept, in the optimised HLO."""
    buffers: tuple[BufferSpec, ...] = ()
    """The largest values of the entry computation, largest first (at most ``BUFFERS_KEPT`` in capture)."""
    buffer_count: int = 0
    """How many values the entry computation holds, ``buffers`` being the largest of them."""

    @property
    def per_device(self) -> bool:
        """The program runs partitioned over several devices: its cost analysis is one device's share."""
        return (self.device_count or 1) > 1


@dataclass(frozen=True, slots=True)
class StageTimings:
    """Seconds JAX reported on ``jax.monitoring`` for one function.

    ``None`` means JAX emitted no event for that stage (a cache hit), not zero.
    """

    trace_seconds: float | None = None
    lowering_seconds: float | None = None
    compile_seconds: float | None = None
    persistent_cache_hit: bool = False

    @property
    def total_seconds(self) -> float:
        return sum(s for s in (self.trace_seconds, self.lowering_seconds, self.compile_seconds) if s)

    @property
    def stages_run(self) -> tuple[Stage, ...]:
        seconds = (self.trace_seconds, self.lowering_seconds, self.compile_seconds)
        return tuple(stage for stage, s in zip(STAGES, seconds) if s is not None)


@dataclass(frozen=True, slots=True)
class HelperCompiles:
    """Compiles of functions the report does not show (JAX's own eager helpers)."""

    count: int = 0
    seconds: float = 0.0
    names: tuple[str, ...] = ()
    repeated: tuple[tuple[str, int], ...] = ()
    """The names of ``names`` that made more than one of the ``count`` compiles, each with its compiles."""
    yours: bool = True
    """Every function of the group is the user's (a cell's calls not shown: said "your other calls" only then)."""
    inside_seconds: float = 0.0
    """Stage seconds of these compiles made while a shown call traced: inside that call's trace time, so not in
    ``seconds`` (the cell's time line would count them twice)."""
    inside_of: tuple[str, ...] = ()
    """The shown calls whose traces ``inside_seconds`` ran in."""


@dataclass(frozen=True, slots=True)
class SourceText:
    """Lines of one source the IR points at: a cell whole, or a file's lines from the first to the last one used."""

    name: str
    first_line: int
    lines: tuple[str, ...]

    def label(self, index: int) -> str:
        """``In[4]:2``: the label of ``lines[index]``, as the IR lines carry it."""
        return f"{self.name}:{self.first_line + index}"


@dataclass(frozen=True, slots=True)
class LinkedIR:
    """One IR text line by line (location syntax folded away), each line with its user source label or ``None``."""

    title: str
    lines: tuple[str, ...]
    sources: tuple[str | None, ...]
    attribute: str


@dataclass(frozen=True, slots=True)
class LinkedViews:
    """``%%jaxstages --source``: the user's source lines beside the jaxpr, StableHLO and optimised HLO they made."""

    sources: tuple[SourceText, ...]
    irs: tuple[LinkedIR, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class StagesReport(_Displayable):
    """All four stations of one jitted call, as far as the walk got."""

    function: str
    wrapper: WrapperStation
    traced: TracedStation | None = None
    lowered: LoweredStation | None = None
    compiled: CompiledStation | None = None
    timings: StageTimings = field(default_factory=StageTimings)
    stopped_at: Stage | None = None
    error: ErrorSummary | None = None
    notes: tuple[str, ...] = ()
    executed: bool = True
    call_site: SourceLocation | None = None
    cell_site: SourceLocation | None = None
    kind: Literal["user", "library", "jax"] = "user"
    repeat_hits: int = 0
    other_thread: bool = False
    jit_disabled: bool = False
    under_transform: bool = False
    transformed_by: str | None = None
    """The JAX function that traced this call under its tracers (``jax.lax.scan``, ``jax.grad``), where known."""
    linked: LinkedViews | None = None
    """The linked source and IR views (``--source``), or ``None``."""
    trace_context: tuple[tuple[str, str], ...] = ()
    """JAX's trace context (part of its cache key) as the call saw it, by name: ``("jax_enable_x64", "True")``."""
    passed: tuple[tuple[str, str], ...] = ()
    """How the call passed each argument JAX flattens, part of its cache key too: ``("x", "by keyword")``,
    ``("y", "None, by position")``; empty where not read (a trace under a transformation)."""
    caught_refusal: bool = False
    """JAX refused the call for certain before any trace (a static value it cannot hash), and the cell caught the error."""
    continued: Literal["Traced", "Lowered", "Compiled"] | None = None
    """The ``jax.stages`` object made before the cell that this call went on from (``traced.lower()``,
    ``lowered.compile()``, ``compiled(x)``): the stations before it are not kept in it."""

    @property
    def stations_reached(self) -> tuple[str, ...]:
        names = ("traced", "lowered", "compiled")
        return tuple(n for n in names if getattr(self, n) is not None)

    @property
    def cache_hit(self) -> bool:
        """JAX did none of trace, lower or compile for this call, nothing failed, jit was on, and no transformation hid it."""
        return (self.error is None and self.stopped_at is None and not self.jit_disabled and not self.under_transform
                and not self.timings.stages_run)

    @property
    def raised_unseen(self) -> bool:
        """The call raised an error the cell caught, refused before JAX's cache lookup or a hit that raised: jaxshow saw neither."""
        return self.stopped_at == "call" and self.error is None and not self.caught_refusal

    @property
    def outcome(self) -> str:
        """One phrase: ``failed while running``, ``cache hit``, or the stages JAX ran with their seconds."""
        if self.error is not None and self.stopped_at is not None:
            return f"failed while {_DOING.get(self.stopped_at, self.stopped_at)}"
        if self.caught_refusal:
            return f"failed while {_DOING['call']}; the cell caught the error"
        if self.raised_unseen and self.continued == "Compiled":
            return "raised, and the cell caught the error"
        if self.raised_unseen:
            return "raised, and the cell caught the error: refused before any trace, or a cache hit that raised"
        if self.jit_disabled:
            return "ran op by op: jax.disable_jit() was in effect, so JAX did not trace, lower or compile it"
        if self.under_transform and not self.timings.stages_run:
            return f"reached inside {self.transformed_by or 'a transformation (jax.grad, jax.vmap, an outer jit)'}: JAX reports no stage timings there"
        if self.cache_hit and self.continued == "Compiled":
            return "ran its executable compiled ahead of time (a jax.stages.Compiled): JAX did not trace, lower or compile this call"
        if self.cache_hit and self.continued == "Traced":
            return "lowering cache hit: JAX's lowering cache served this .lower(); it lowered and compiled nothing"
        if self.cache_hit:
            return "cache hit: JAX did not trace, lower or compile this call"
        parts = [
            f"{label} {format_seconds(s)}"
            for label, s in (("trace", self.timings.trace_seconds), ("lower", self.timings.lowering_seconds),
                             ("compile", self.timings.compile_seconds))
            if s is not None
        ]
        return " · ".join(parts) + (" (served from the persistent cache)" if self.timings.persistent_cache_hit else "")

    def _summary(self) -> str:
        reached = ", ".join(self.stations_reached) or "no station"
        stop = f"; failed while {_DOING.get(self.stopped_at, self.stopped_at)}" if self.stopped_at else ""
        if self.timings.stages_run:
            spent = format_seconds(self.timings.total_seconds)
        else:
            spent = "jit disabled" if self.jit_disabled else ("cache hit" if self.cache_hit else "no stage timings")
        return f"{self.function!r}: {reached}{stop}; {spent}"


@dataclass(frozen=True, slots=True)
class TextDiff:
    """Two texts of one stage aligned line by line after renumbering (:mod:`jaxshow.irdiff`).

    Each line of ``lines`` starts with ``" "`` (in both), ``"-"`` (before only) or
    ``"+"`` (now only); renderers fold the unchanged runs. ``unavailable`` says
    why a side was missing (then ``lines`` is empty).
    """

    stage: str
    language: str
    lines: tuple[str, ...] = ()
    added_lines: int = 0
    removed_lines: int = 0
    unavailable: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.added_lines or self.removed_lines)


@dataclass(frozen=True, slots=True)
class QuantityChange:
    """One analysis figure of two compiles: ``flops``, before ``1.2e6``, now ``2.4e6``; ``unit`` ``"B"`` for bytes."""

    name: str
    before: float | None
    now: float | None
    unit: str = ""


@dataclass(frozen=True, slots=True, repr=False)
class StagesDiff(_Displayable):
    """``%%jaxstages --diff``: what changed between the previous compile of a function and this one.

    ``key_changes`` are the differences in what JAX keys its caches on
    (arguments, static values, trace-context config); ``texts`` the jaxpr,
    lowered module and optimised HLO diffs; ``quantities`` the cost and memory
    figures that differ. ``previous_missing`` says why there is nothing to compare.
    """

    function: str
    before: str = ""
    now: str = ""
    key_changes: tuple[ArgChange, ...] = ()
    texts: tuple[TextDiff, ...] = ()
    quantities: tuple[QuantityChange, ...] = ()
    previous_missing: str | None = None
    notes: tuple[str, ...] = ()
    config_compared: bool = True
    """Whether both compiles' config contexts were read (a trace under a transformation's is not)."""

    @property
    def changed(self) -> bool:
        return bool(self.key_changes or self.quantities or any(t.changed for t in self.texts))

    def _summary(self) -> str:
        if self.previous_missing:
            return f"{self.function!r}: nothing to compare"
        changed = [t.stage for t in self.texts if t.changed]
        return f"{self.function!r}: " + (", ".join(changed) + " changed" if changed else "no change in the IR")


@dataclass(frozen=True, slots=True, repr=False)
class CellReport(_Displayable):
    """What ``%%jaxstages`` saw in one cell: the reports shown and the cell's time."""

    reports: tuple[StagesReport, ...]
    cell_seconds: float
    jitted_calls: int
    helper_compiles: HelperCompiles = field(default_factory=HelperCompiles)
    notes: tuple[str, ...] = ()
    cell_error: ErrorSummary | None = None
    eager_loops: HelperCompiles = field(default_factory=HelperCompiles)
    """Compiles of ``jax.lax`` loops and branches run outside jit, each named with the functions it runs (``scan running step (In[4]:2)``)."""
    other_compiles: HelperCompiles = field(default_factory=HelperCompiles)
    """Stage seconds of the user's jitted calls not shown as reports (``--all`` shows them)."""
    diffs: tuple[StagesDiff, ...] = ()
    """``--diff``: each shown report against the previous compile of its function."""
    other_threads: HelperCompiles = field(default_factory=HelperCompiles)
    """Stage seconds on threads other than the cell's, alongside it: not in the cell's time line (the other fields are its own thread's)."""
    more_programs: HelperCompiles = field(default_factory=HelperCompiles)
    """Stage seconds of the other programs JAX compiled for a shown function under a transformation (``jax.grad``'s
    forward pass beside the backward one shown), not shown as reports; ``names``: those functions."""
    ahead_of_time: HelperCompiles = field(default_factory=HelperCompiles)
    """Stage seconds of the calls traced ahead of time and not called (``jax.make_jaxpr``, ``.trace()``, ``.lower()``), not shown as reports."""

    @property
    def compile_pipeline_seconds(self) -> float:
        """JAX's stage seconds on the cell's own thread."""
        shown = sum(r.timings.total_seconds for r in self.reports if not r.other_thread)
        folded = (self.eager_loops, self.helper_compiles, self.other_compiles, self.more_programs, self.ahead_of_time)
        return shown + sum(f.seconds for f in folded)

    def _summary(self) -> str:
        names = ", ".join(repr(r.function) for r in self.reports) or "no jitted call"
        return f"{names}; cell {format_seconds(self.cell_seconds)}"


@dataclass(frozen=True, slots=True)
class SavedFile:
    """One file ``--save`` wrote: its name in the directory, what it holds, its size, and whether it replaced a file of that name."""

    name: str
    holds: str
    size_bytes: int
    replaced: bool = False


@dataclass(frozen=True, slots=True, repr=False)
class SavedReport(_Displayable):
    """Where ``%%jaxstages --save DIR`` (or ``jaxshow.save``) wrote a report's stations, or why it could not."""

    directory: str
    files: tuple[SavedFile, ...] = ()
    error: str | None = None
    kept: tuple[str, ...] = ()
    """Names already in the directory that this save did not write (an earlier save's files): left as they were."""

    def _summary(self) -> str:
        return f"{self.directory}: {self.error}" if self.error else f"{plural(len(self.files), 'file')} in {self.directory}"


# --- %jaxcache: tracing-cache misses, trace histories, the persistent cache -------------------

MissCategory = Literal[
    "never_seen", "redefined", "tracing_context", "static_args", "input_pytree", "debug_info", "input_types", "not_kept",
    "other"
]
MISS_CATEGORIES: tuple[MissCategory, ...] = (
    "never_seen", "redefined", "tracing_context", "static_args", "input_pytree", "debug_info", "input_types", "not_kept",
    "other"
)
"""Miss categories in the order JAX's explanation checks them; the first difference wins. ``not_kept``: no difference
at all, the same signature as an earlier trace that JAX's cache does not hold (it failed, or the cache was cleared)."""

MISS_TITLES: dict[str, str] = {
    "never_seen": "never-seen function (first trace)",
    "redefined": "re-defined function (re-run cell or definition in a loop)",
    "tracing_context": "different tracing context (a config option or context manager)",
    "static_args": "different static arguments",
    "input_pytree": "different input pytree",
    "debug_info": "different debug info",
    "input_types": "different input types",
    "not_kept": "signature traced before, not kept by JAX",
    "other": "other (JAX's words)",
}
LIBRARY_REDEFINED_TITLE = "re-defined function (a library made it again, inside a call of yours)"
"""The ``redefined`` title where the function is a library's, made again by the library (a miss with a :class:`LibraryBlame`)."""
RELOADED_TITLE = "re-defined function (its module reloaded or run again)"
"""The ``redefined`` title where the function is at the top of a module of the user's, which ran again (:attr:`CacheMiss.reloaded`)."""


NO_TRACING_INSTEAD = "%jaxcache freeze refuses traces as jax.no_tracing() does, and says what changed"
"""Where a ``jax.no_tracing()`` refusal is named: the mode that refuses traces and explains each."""


def jit_disabled_note(cause: str) -> str:
    """What a report says where jit was disabled in its cell (``cause``: how) and no direct call of it said so."""
    return (f"jit was disabled in this cell ({cause}): jitted functions called from inside your helpers ran op by op, "
            "where jaxshow does not see them")


MADE_KINDS = {"jax.vjp": "pullback", "jax.linearize": "jvp function"}
"""What JAX's functions that return a new function per call (not a wrapper of the user's) return: ``jax.vjp``'s pullback."""


def made_kind(made_by: str) -> str:
    """What ``made_by`` makes per call: a ``pullback`` (:data:`MADE_KINDS`), else a ``wrapper`` of the user's function."""
    return MADE_KINDS.get(made_by, "wrapper")


def redefined_cause(reloaded: bool, made_in: str | None, made_by: str | None = None) -> str:
    """Why a function was made anew, as the title of its ``redefined`` miss says it in brackets."""
    return str(miss_title("redefined", False, reloaded, made_in, made_by)).partition(" (")[2].removesuffix(")")


def miss_title(category: str, blamed: bool, reloaded: bool = False, made_in: str | None = None,
               made_by: str | None = None) -> str | None:
    """The title of a miss of ``category`` (``None`` for a category jaxshow does not know); ``blamed``: a library traced it;
    ``reloaded``: its module ran again; ``made_in``: the function whose every call makes it anew; ``made_by``: what
    makes a new wrapper per call."""
    if category == "redefined" and (blamed or reloaded):
        return LIBRARY_REDEFINED_TITLE if blamed else RELOADED_TITLE
    if category == "redefined" and made_by:
        return f"re-defined function (a new {made_by} {made_kind(made_by)}, made per call)"
    if category == "redefined" and made_in:
        return f"re-defined function (made anew inside {made_in})"
    return MISS_TITLES.get(category)


@dataclass(frozen=True, slots=True)
class ArgChange:
    """One difference between a miss and the closest earlier key: ``x``, now ``f32[4]``, before ``f32[3]``."""

    where: str
    now: str
    before: str


@dataclass(frozen=True, slots=True)
class LibraryBlame:
    """A library's jitted function traced again: the user's line that led into the library, and the library's function.

    ``user_line`` is the innermost frame in a cell or the user's own files
    (``In[5]:3``); ``library_function`` the library function that line called
    (``mylib.update``) and ``library_line`` where that library's code went on
    towards the trace; ``traced_function`` the jitted function that traced.
    """

    user_line: str
    library_function: str
    library_line: str
    traced_function: str

    def effect(self, category: str, changes: tuple[ArgChange, ...]) -> str | None:
        """What the library did that traced again, for a miss of ``category``: ``which passed factor differently to
        _scaled``; ``None`` for a first trace, where nothing was traced again."""
        traced = self.traced_function
        if category == "never_seen":
            return None
        if category == "redefined":
            return (f"which made a new {traced} function object, so JAX's cache, which is keyed on the function object, "
                    "could not find the earlier trace")
        if category == "tracing_context":
            return f"which called {traced} under another config option or context manager"
        if category == "not_kept":
            return f"which called {traced} again after a trace JAX did not keep"
        changed = " and ".join(dict.fromkeys(c.where for c in changes)) or "its arguments"
        return f"which passed {changed} differently to {traced}"


@dataclass(frozen=True, slots=True)
class CacheMiss:
    """One call that traced, why, and the evidence (JAX's text, or jaxshow's own diff in the same words)."""

    function: str
    category: MissCategory
    summary: str
    changes: tuple[ArgChange, ...] = ()
    evidence: str = ""
    evidence_source: Literal["jax", "jaxshow", "none"] = "none"
    evidence_notes: tuple[str, ...] = ()
    """jaxshow's own sentences about the evidence (JAX compared with another signature, its same-line hint means nothing
    here), shown under it; ``evidence`` holds JAX's words only as JAX wrote them."""
    call_site: str | None = None
    signature: tuple[tuple[str, str], ...] = ()
    same_line_hint: bool = False
    wall_time: float = 0.0
    jaxpr_diff: TextDiff | None = None
    """The jaxpr of this trace against the function's previous trace (``None``: the first trace, or not kept)."""
    blame: LibraryBlame | None = None
    reloaded: bool = False
    """A ``redefined`` function at the top of a module of the user's: the module ran again (``importlib.reload``,
    ``%autoreload``, ``%run``), which made each of its functions anew."""
    made_in: str | None = None
    """A ``redefined`` function defined inside another function (``make_and_run``), each call of which makes it anew."""
    thread: str | None = None
    """The name of the thread the trace ran on, where it is not the cell's (``call_site`` also says it, where there is one)."""
    made_by: str | None = None
    """A ``redefined`` function that is a wrapper made per call (``functools.partial``, ``jax.jit``, ``checkify.checkify``,
    a JAX transformation such as ``pl.pallas_call``'s), named by what makes it."""
    trace_error: ErrorSummary | None = None
    """What this trace raised (the cell's ``try`` may have caught it): it made no program."""


@dataclass(frozen=True, slots=True)
class FunctionCacheStats:
    """Per jitted function in one cell: calls, traces, hits, misses and trace-time output.

    ``misses`` holds the misses explained in detail: all of them, or for a
    function that missed many times the first and the last few (in order, the
    gap after the first ``left_out_after``). The ``misses_left_out`` others are
    counted by category in ``left_out_by_category`` (in the order of
    :data:`MISS_CATEGORIES`); ``traced`` counts every trace. A row may count
    several function objects of one definition (``objects``).
    """

    function: str
    qualname: str
    """As shown: the qualified name with the transformations written around it (``grad(jit(Model.loss))``)."""
    defined_at: str | None
    traced: int
    calls: int | None = None
    hits: int | None = None
    cache_size: int | None = None
    recompiled: tuple[str, ...] = ()
    """Per call that JAX compiled without tracing (an earlier trace lowered anew): where its arguments were placed."""
    recompiled_options: str = ""
    """Of the last such call: how its ``jax.jit`` wrapper's options differ from the wrapper of the call before it
    (``differs from the one of the call before in compiler_options: now {...}, before not set``), or the options it
    was given where no call before was seen (``was given keep_unused=True``); ``""`` where none are known."""
    misses: tuple[CacheMiss, ...] = ()
    trace_time_output: tuple[str, ...] = ()
    misses_left_out: int = 0
    left_out_by_category: tuple[tuple[MissCategory, int], ...] = ()
    left_out_after: int = 0
    objects: int = 1
    """Function objects counted in this row: more than one where calls made new objects of one definition, each traced
    once for the same reason (``jax.jit(lambda …)`` or ``functools.partial`` in a loop); the misses left out are theirs."""
    folded_sites: tuple[tuple[str, int], ...] = ()
    """Of a folded row (``objects > 1``): where the misses left out were called, and how many at each site."""
    jit_disabled: int = 0
    """Calls that ran op by op under ``jax.disable_jit()``: counted in ``calls``, neither traced nor hits."""
    refused: int = 0
    """Calls ``jax.no_tracing()`` refused (they missed JAX's C++ cache; JAX raised before it looked up its traces):
    counted in ``calls``, neither traced nor hits."""
    untracked_calls: int = 0
    """Calls of jax 0.7's ``jax.pmap``, which traces and compiles outside ``jax.jit``'s path, where jaxshow sees neither:
    counted in ``calls``, neither traced nor hits."""
    compiled_calls: int = 0
    """Calls of a ``jax.stages.Compiled`` of this function (its executable, compiled ahead of time): counted in
    ``calls``, neither traced nor hits."""
    traced_calls: int | None = None
    """Of ``calls``, those that traced (where calls are counted): ``traced`` beyond them and ``traced_ahead`` came from
    calls not written in the cell (inside a function of the user's, a library's, another trace), which ``calls`` and
    ``hits`` do not count."""
    traced_ahead: int = 0
    """Traces the user's code made ahead of time (``.lower()``, ``.trace()``, ``jax.make_jaxpr``): no calls."""


def told_apart(f: FunctionCacheStats, functions: Sequence[FunctionCacheStats]) -> str:
    """``f.qualname``, with ``(defined at In[1]:4)`` after it where another of ``functions`` has that name (two
    ``<lambda>`` rows, a function defined again in another cell)."""
    if f.defined_at and any(g.qualname == f.qualname and g.defined_at != f.defined_at for g in functions):
        return f"{f.qualname} (defined at {f.defined_at})"
    return f.qualname


PersistentVerdict = Literal["written", "skipped", "hit", "not_cached", "unknown"]


@dataclass(frozen=True, slots=True)
class PersistentCompile:
    """What the persistent compilation cache did with one compile: written, skipped (why), or hit."""

    module: str
    verdict: PersistentVerdict
    reason: str = ""
    compile_seconds: float | None = None
    missed: str = ""
    """Why its lookup found no entry where the directory holds other entries of its module: in which parts of JAX's key
    the nearest one differs (:mod:`jaxshow.keyparts`); ``""`` where none are there."""


@dataclass(frozen=True, slots=True, repr=False)
class CacheReport(_Displayable):
    """What ``%%jaxcache`` (or ``jaxshow.explain()``) saw: traces, hits, misses and their reasons."""

    functions: tuple[FunctionCacheStats, ...]
    persistent: tuple[PersistentCompile, ...] = ()
    hits_counted: bool = True
    notes: tuple[str, ...] = ()
    cell_error: ErrorSummary | None = None
    jit_disabled: bool = False
    """Jit was disabled in the cell and no row's calls say so: its notes say how (:func:`jit_disabled_note`)."""
    unseen_inside: tuple[str, ...] = ()
    """The user's functions the cell called (``train``): a jitted call inside one that hit JAX's cache is not counted,
    said where it shows (no row, or a row traced from a call not written in the cell)."""

    @property
    def misses(self) -> tuple[CacheMiss, ...]:
        """The misses explained in detail, of every function (see :class:`FunctionCacheStats` for those left out)."""
        return tuple(m for f in self.functions for m in f.misses)

    def _summary(self) -> str:
        traced = sum(f.traced for f in self.functions)
        names = ", ".join(repr(f.function) for f in self.functions) or "no jitted function traced"
        return f"{traced} trace(s): {names}"


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One traced signature in a function's history as jaxshow observed it."""

    signature: tuple[tuple[str, str], ...]
    wall_time: float
    category: MissCategory
    summary: str
    reloaded: bool = False
    """As :attr:`CacheMiss.reloaded`: a re-definition by its module running again."""
    made_in: str | None = None
    """As :attr:`CacheMiss.made_in`: the function whose every call makes it anew."""
    made_by: str | None = None
    """As :attr:`CacheMiss.made_by`: what makes a new wrapper per call."""


@dataclass(frozen=True, slots=True, repr=False)
class TraceHistory(_Displayable):
    """``%jaxcache NAME``: a function's traces seen by jaxshow and its current cache size."""

    name: str
    qualname: str
    defined_at: str | None
    entries: tuple[TraceEntry, ...]
    traces_observed: int
    cache_size: int | None
    cache_size_unavailable: str | None = None
    history_limit: int = 0
    objects: int = 1
    """Function objects of this definition jaxshow saw trace, this one included: more than one where calls made it
    anew (``jax.jit(functools.partial(f))`` or ``jax.jit(lambda …)`` in a loop), which a report folds into one row."""
    objects_traced: int = 0
    """The traces of those ``objects``, in all."""
    made: str = ""
    """How those ``objects`` were made, as their misses' titles say it (``re-run cell or definition in a loop``)."""

    def _summary(self) -> str:
        return f"{self.name!r}: {self.traces_observed} trace(s) observed; cache size {self.cache_size}"


@dataclass(frozen=True, slots=True, repr=False)
class CacheClearReport(_Displayable):
    """``%jaxcache clear NAME``: what was cleared, and what was not."""

    name: str
    entries_before: int | None
    entries_after: int | None
    history_entries_cleared: int
    not_cleared: tuple[str, ...]

    def _summary(self) -> str:
        return f"{self.name!r}: cleared {plural(self.entries_before, 'entry', 'entries') if self.entries_before is not None else '? entries'}"


@dataclass(frozen=True, slots=True)
class PersistentGate:
    """One setting that decides whether a compile is written to the persistent cache."""

    option: str
    value: str
    meaning: str


@dataclass(frozen=True, slots=True, repr=False)
class PersistentCacheReport(_Displayable):
    """``%jaxcache persistent``: configuration, gates, entries on disk, and observed compiles."""

    directory: str | None
    directory_source: str
    directory_in_use: str | None
    enabled: bool
    initialized: bool | None
    gates: tuple[PersistentGate, ...]
    entry_count: int | None
    total_bytes: int | None
    newest_entry: str | None
    newest_mtime: float | None
    listing_unavailable: str | None
    compiles: tuple[PersistentCompile, ...]
    notes: tuple[str, ...] = ()
    not_opened: str | None = None
    """Why JAX holds no open cache in this process and will not open one by itself; ``None`` where it does, or yet may."""
    key_store: str = ""
    """Where jaxshow keeps the parts of the keys it saw, to say why a later lookup missed (:mod:`jaxshow.keyparts`),
    and how many."""

    def _summary(self) -> str:
        where = self.directory or "no directory"
        return f"{where}; {plural(self.entry_count, 'entry', 'entries') if self.entry_count is not None else '? entries'}"


# --- %jaxconfig: JAX's config options, where each value came from, what changing it costs ------

ConfigKind = Literal["scopable", "flag", "unknown"]
"""``scopable``: a ``State`` (a global value, and a context manager that sets it for one thread);
``flag``: a ``Flag`` (one process-wide value, no context manager)."""
ValueSource = Literal["default", "environment", "set", "context", "unknown"]
"""Where the value this thread sees came from: JAX's default, an environment variable read at
import, a global set after import (``jax.config.update``), or a context manager active now."""
BackendStart = Literal["raises", "ignored"]
"""What setting an option does once a backend is up: raises (JAX's validator), or nothing (read only at start)."""


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One of JAX's config options as this thread sees it now.

    Values are kept as bounded ``repr`` strings (the options hold arbitrary
    objects: devices, enums, callables). ``None`` means unknown, with the
    reason on the report (``default_repr``: ``default_unavailable``).
    """

    name: str
    kind: ConfigKind
    value_type: str
    value_repr: str
    default_repr: str | None
    is_default: bool | None
    source: ValueSource
    global_value_repr: str | None = None
    """The global value under an active context manager (``source == "context"``), else ``None``."""
    env_vars: tuple[tuple[str, str | None], ...] = ()
    """The environment variables JAX reads for this option at import, each with its text now (``None``: unset)."""
    env_unread: tuple[str, ...] = ()
    """Of ``env_vars``, those set now to a text that does not give the global value: set after import, when JAX no longer
    reads them, or overridden by ``jax.config.update`` since."""
    in_trace_context: bool | None = None
    in_jit_key: bool | None = None
    backend_start: BackendStart | None = None
    backend_start_reason: str = ""
    default_unavailable: str | None = None
    enum_values: tuple[str, ...] = ()
    help_text: str = ""

    @property
    def invalidates_caches(self) -> bool | None:
        """Whether a change of this option misses JAX's caches for every jitted function (trace context or jit key)."""
        if self.in_trace_context or self.in_jit_key:
            return True
        if self.in_trace_context is None or self.in_jit_key is None:
            return None
        return False


@dataclass(frozen=True, slots=True, repr=False)
class ConfigReport(_Displayable):
    """``%jaxconfig``: the options of the running JAX that match a selection, with counts of all of them."""

    jax_version: str
    options: tuple[ConfigOption, ...]
    total_options: int
    scopable_options: int
    flag_options: int
    backends_initialized: bool | None
    backend_platforms: tuple[str, ...] = ()
    filter: str | None = None
    changed_only: bool = False
    kind: Literal["scopable", "flag"] | None = None
    matched_options: int = 0
    """Options whose name matched ``filter`` (all when there is none), before ``changed_only`` and ``kind``."""
    near_names: tuple[str, ...] = ()
    """Names close to a ``filter`` that matched no option at all."""
    trace_context_source: str = ""
    trace_context_unavailable: str | None = None
    jit_key_unavailable: str | None = None
    unknown_defaults: tuple[str, ...] = ()
    """Selected options whose default JAX computes at import in a way jaxshow does not evaluate (never counted as changed)."""
    thread_name: str = ""
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> tuple[ConfigOption, ...]:
        """The shown options whose value differs from JAX's default."""
        return tuple(o for o in self.options if o.is_default is False)

    def _summary(self) -> str:
        selection = [f"filter {self.filter!r}"] if self.filter else []
        selection += ["changed only"] if self.changed_only else []
        selection += [f"{self.kind} only"] if self.kind else []
        shown = f"{len(self.options)} shown" + (f" ({', '.join(selection)})" if selection else "")
        backend = {True: "backend up", False: "no backend yet", None: "backend state unknown"}[self.backends_initialized]
        return (f"jax {self.jax_version}: {self.total_options} options ({self.scopable_options} scopable, "
                f"{self.flag_options} flags); {shown}; {backend}")


# --- %jaxdump: the files JAX and XLA dump, by function and by cell ------------------------------

DumpKind = Literal["stablehlo", "jaxpr", "jaxpr_html", "eqn_count_pprof"]
DUMP_KIND_WORDS: dict[str, str] = {
    "stablehlo": "StableHLO module",
    "jaxpr": "jaxpr",
    "jaxpr_html": "jaxpr (HTML view)",
    "eqn_count_pprof": "equation-count profile",
}


@dataclass(frozen=True, slots=True)
class DumpFile:
    """One file JAX dumped: what its name says, and when and where (which cell) it was written.

    ``counter`` is JAX's process-wide number in the name (``jax_ir0002_…`` -> 2,
    ``jax_000002_…`` -> 2; ``None`` for jax 0.7's ``f.jaxpr.txt``), ``module``
    the compiled module (``jit_f``; ``None`` for jaxpr files), ``function`` the
    name the files are grouped under, ``stage`` the stage of a module dump
    (``compile``). ``cell`` is ``In[n]`` or a sentence ("before jaxshow was
    loaded"); ``""`` when no cells were observed.
    """

    name: str
    kind: DumpKind
    counter: int | None
    module: str | None
    function: str
    stage: str | None
    size_bytes: int
    mtime: float
    cell: str = ""
    persistent_hit: bool = False
    jax_own: bool = False
    """A module JAX compiled for its own eager operation (``jit_sin`` for ``jnp.sin(x)`` outside jit), told by its name."""


@dataclass(frozen=True, slots=True)
class XlaDumpFile:
    """One file of XLA's ``--xla_dump_to`` dump: its kind, and the pass for per-pass dumps."""

    name: str
    kind: str
    pass_name: str | None
    size_bytes: int


@dataclass(frozen=True, slots=True)
class XlaDumpModule:
    """XLA's files for one compiled module: ``module_0004.jit_f.*``."""

    number: int
    module: str
    files: tuple[XlaDumpFile, ...]


@dataclass(frozen=True, slots=True)
class DumpSetting:
    """One option that decides what JAX or XLA dumps: its value now and where that value came from."""

    option: str
    value: str
    source: str


@dataclass(frozen=True, slots=True)
class DumpText:
    """The head of one dump file as read for display, with the cell file names relabelled ``In[n]``."""

    file: str
    language: str
    text: str
    total_bytes: int
    read_bytes: int


@dataclass(frozen=True, slots=True, repr=False)
class DumpReport(_Displayable):
    """``%jaxdump``: how dumping is set, and the dump files by function and by cell.

    ``selection`` is the NAME asked for (a function, file name or counter) with
    ``texts`` the files shown; ``None`` lists the whole directory.
    """

    directory: str | None
    enabled: bool
    settings: tuple[DumpSetting, ...]
    files: tuple[DumpFile, ...]
    other_files: int = 0
    listing_unavailable: str | None = None
    xla_directory: str | None = None
    xla_modules: tuple[XlaDumpModule, ...] = ()
    xla_unavailable: str | None = None
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    selection: str | None = None
    texts: tuple[DumpText, ...] = ()
    report_names: tuple[tuple[str, str], ...] = ()
    """``(function, name)``: the names ``%%jaxstages`` and ``%jaxcache`` give the jitted functions of the user's
    namespace whose files are grouped under ``function``, where one differs from it (``("g", "grad(g)")`` for
    ``jax.jit(jax.grad(g))``; JAX names the files ``jit_g``)."""

    def named(self, function: str) -> str:
        """``function`` as the reports name it (:attr:`report_names`): ``grad(g)``; ``grad(g) or g`` where the namespace
        holds both, which the files cannot tell apart."""
        return " or ".join(name for group, name in self.report_names if group == function) or function

    @property
    def functions(self) -> tuple[str, ...]:
        """The functions with files, in the order they first appear."""
        return tuple(dict.fromkeys(f.function for f in self.files))

    @property
    def jax_functions(self) -> tuple[str, ...]:
        """The functions whose files are JAX's own eager operations, in the order they first appear."""
        return tuple(dict.fromkeys(f.function for f in self.files if f.jax_own))

    def files_of(self, function: str) -> tuple[DumpFile, ...]:
        return tuple(f for f in self.files if f.function == function)

    def by_cell(self) -> dict[str, tuple[str, ...]]:
        """Cell -> the file names it produced, in order."""
        cells: dict[str, list[str]] = {}
        for f in self.files:
            cells.setdefault(f.cell, []).append(f.name)
        return {cell: tuple(names) for cell, names in cells.items()}

    def _summary(self) -> str:
        where = self.directory or "no directory"
        return f"{where}: {plural(len(self.files), 'file')} of {plural(len(self.functions), 'function')}"


@dataclass(frozen=True, slots=True, repr=False)
class DumpDiff(_Displayable):
    """``%jaxdump --diff A B``: a unified diff of two dump files (of one function, usually)."""

    directory: str
    a: DumpFile | XlaDumpFile
    b: DumpFile | XlaDumpFile
    language: str
    diff_text: str
    added_lines: int
    removed_lines: int
    notes: tuple[str, ...] = ()

    def _summary(self) -> str:
        return f"{self.a.name} -> {self.b.name}: +{self.added_lines} -{self.removed_lines}"


def short_type(dtype: str, shape: tuple[int, ...]) -> str:
    """Spell an abstract value the way jaxprs do: ``f32[4,3]``."""
    return f"{_DTYPE_SHORT.get(dtype, dtype)}[{','.join(str(d) for d in shape)}]"


def format_seconds(seconds: float | None) -> str:
    """``0.0123`` -> ``'12.3 ms'``; ``None`` -> ``'—'``."""
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def format_bytes(n: float | None) -> str:
    """``1536`` -> ``'1.50 KiB'``; ``None`` -> ``'—'``."""
    if n is None:
        return "—"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``plural(1, 'input')`` -> ``'1 input'``, ``plural(2500, 'input')`` -> ``'2,500 inputs'``."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def a_or_an(noun: str) -> str:
    """``a_or_an('function')`` -> ``'a function'``, ``a_or_an('ArrayImpl')`` -> ``'an ArrayImpl'``, ``a_or_an('MLP')``
    -> ``'an MLP'``, ``a_or_an('UnitVec')`` -> ``'a UnitVec'``: by the sound of its first letter, said as a word or, in
    an acronym, as a letter; a vowel said as a consonant (``Use…``, ``Uni…``, ``One…``) takes ``a``."""
    if noun[:2].isupper():
        vowel_sound = noun[:1] in "AEFHILMNORSX"
    else:
        vowel_sound = noun[:1] in "AEIOUaeiou" and not noun.lower().startswith(_CONSONANT_SOUNDING)
    return f"{'an' if vowel_sound else 'a'} {noun}"


_CONSONANT_SOUNDING = ("unic", "unif", "unio", "uniq", "unit", "univ", "unix", "use", "usu", "uti", "one", "once")
"""Beginnings of words whose vowel is said as a consonant (``a unit``, ``a user``, ``a one-hot``)."""


def unseen_hits(helpers: Sequence[str], *, capital: bool = False) -> str:
    """Why a report lacks the calls inside ``helpers`` (the user's functions the cell called) that hit JAX's cache."""
    return (f"{'J' if capital else 'j'}itted calls inside {' or '.join(helpers)} that hit JAX's cache are not seen: JAX "
            "serves a hit in C++, where jaxshow does not look; a call in the cell's top-level code is seen")


def format_count(n: float | None, unit: str = "") -> str:
    """``4.2e9`` -> ``'4.20 G'`` plus unit; ``None`` -> ``'—'``."""
    if n is None:
        return "—"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {prefix}{unit}"
    return f"{n:g} {unit}".rstrip()


_DTYPE_SHORT = {
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
    "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8",
    "bool": "bool", "complex64": "c64", "complex128": "c128",
    "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2",
}
