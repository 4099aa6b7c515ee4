"""JAX's and XLA's IR dump files: how dumping is set, what is on disk, and which cell wrote each file.

This module owns ``%jaxdump``'s capture. It reads JAX's public config and the
environment (``JAX_DUMP_IR_TO``, ``JAX_DUMP_IR_MODES``,
``JAX_INCLUDE_DEBUG_INFO_IN_DUMPS``, ``XLA_FLAGS``), lists a dump directory
by name and ``stat`` only (no file is read to be listed), parses JAX's names
(``jax_ir0002_jit_f_compile.mlir``, ``jax_000002_f.jaxpr.txt``, jax 0.7's
``f.jaxpr.txt``) and XLA's (``module_0004.jit_f.cpu_after_optimizations.txt``),
and returns frozen records from :mod:`jaxshow.report`. Which cell wrote a
file comes from its dump number (or, without one, its mtime) and the cell
start/end times and dump numbers the caller observed;
which module dump a persistent-cache hit served comes from :class:`HitWatcher`.
File names are never trusted to build paths: only names listed in the
directory are opened, and only inside it.

It imports JAX and never IPython; anything private goes through
:mod:`jaxshow._jax_compat`.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import inspect
import os
import re
import shlex
import time
import types
from collections import deque
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Sequence

import jax
import jax.monitoring

from jaxshow import _jax_compat
from jaxshow.capture.written import innermost, jax_made, transforms, written
from jaxshow.config_inventory import env_gives
from jaxshow.persistent import module_name
from jaxshow.report import DumpDiff, DumpFile, DumpReport, DumpSetting, DumpText, XlaDumpFile, XlaDumpModule, plural

ENV_DIR = "JAX_DUMP_IR_TO"
ENV_MODES = "JAX_DUMP_IR_MODES"
ENV_DEBUG_INFO = "JAX_INCLUDE_DEBUG_INFO_IN_DUMPS"
HIT_EVENT = "/jax/compilation_cache/cache_hits"
READ_MAX_BYTES = 2_000_000
"""Bytes read of one file to show or diff it; the rest stays on disk (a 10 MB module is not read whole)."""
MTIME_SLACK_SECONDS = 0.05
"""File times come from the kernel's coarse clock, which may lag ``time.time()`` by a tick (1–10 ms)."""
CLOCK_TICK_SECONDS = 0.01
"""The most a file's time lags ``time.time()`` (a tick of the kernel's coarse clock at 100 Hz)."""
HITS_KEPT = 10_000

BEFORE_LOAD = "before jaxshow was loaded"
BETWEEN_CELLS = "outside any cell (another process, or a thread after its cell ended)"
FORGOTTEN_CELL = "an earlier cell (jaxshow remembers the last 10,000)"
NO_HISTORY_CELL = "a cell run without a history number"

_STAGES = ("compile", "export", "verification", "before_refine_polymorphic_shapes")
_IR = re.compile(rf"^jax_ir(?P<n>\d{{4,}})_(?P<m>.+)_(?P<stage>{'|'.join(_STAGES)})\.mlir$")
_IR_OTHER_STAGE = re.compile(r"^jax_ir(?P<n>\d{4,})_(?P<m>.+)_(?P<stage>[A-Za-z]+)\.mlir$")
_JAXPR_EXT = {"jaxpr.txt": "jaxpr", "jaxpr.html": "jaxpr_html", "eqn_count_pprof": "eqn_count_pprof"}
_JAXPR = re.compile(r"^jax_(?P<n>\d{6,})_(?P<f>.+)\.(?P<ext>jaxpr\.txt|jaxpr\.html|eqn_count_pprof)$")
_JAXPR_07 = re.compile(r"^(?P<f>.+)\.(?P<ext>jaxpr\.txt|jaxpr\.html|eqn_count_pprof)$")
_XLA = re.compile(r"^module_(?P<n>\d+)\.(?P<m>[^.]+)(?:\.(?P<rest>.+))?$")
_XLA_PASS = re.compile(r"^(?P<i>\d{4})\.(?P<pipe>[\w-]+)\.after_(?P<after>[\w-]+)(?:\.before_(?P<before>[\w-]+))?\.txt$")
"""A per-pass dump: ``0005.simplification.after_pipeline-start.before_algsimp.txt``, or a pass's own step with no next pass
(``0013.copy-insertion.after_adding_copies_to_resolve_interference.txt``: named by the pass, ``copy-insertion``)."""
_XLA_KINDS = (
    (re.compile(r"^before_optimizations\.txt$"), "before optimizations"),
    # the platform before "_after_": cpu, tpu, or a GPU's compute capability and platform (sm_9.0a_gpu); none where XLA
    # loaded the executable from the persistent cache instead of compiling it
    (re.compile(r"^(?:[\w.]+_)?after_optimizations\.txt$"), "after optimizations"),
    (re.compile(r"^[\w.]+_after_optimizations-buffer-assignment\.txt$"), "buffer assignment"),
    (re.compile(r"^[\w.]+_after_optimizations-buffer-assignment-values\.txt$"), "buffer assignment values"),
    (re.compile(r"^[\w.]+_after_optimizations-live-range\.txt$"), "live ranges"),
    (re.compile(r"^[\w.]+_after_optimizations-memory-usage-report\.txt$"), "memory usage report"),
    (re.compile(r"^after_spmd_partitioner\.txt$"), "after SPMD partitioning"),
    (re.compile(r"^before_config_assignment\.txt$"), "before config assignment"),
    (re.compile(r"^autotune_results\.pbtxt$"), "autotuning results"),
    (re.compile(r"^gpu_target_config\.pbtxt$"), "GPU target"),
    (re.compile(r"^config\.pbtxt$"), "module config"),
    (re.compile(r"^thunk_sequence\.txt$"), "thunk sequence"),
    (re.compile(r"^thunk_metadata\.txt$"), "thunk metadata"),
    (re.compile(r"^debug_options$"), "debug options"),
    (re.compile(r".*\.ll$"), "LLVM IR"),
    (re.compile(r".*\.o$"), "object code"),
    (re.compile(r".*\.ptx$"), "PTX"),
    (re.compile(r".*\.mlir$"), "MLIR"),
)
_XLA_KIND_ORDER = {kind: rank for rank, kind in enumerate(
    ("before optimizations", "after optimizations", "pass", *(k for _, k in _XLA_KINDS[2:]), "module directory"))}
XLA_HLO_KINDS = frozenset({"before optimizations", "after optimizations", "after SPMD partitioning",
                           "before config assignment", "pass"})
_XLA_DUMP_TO = re.compile(r"^--xla_dump_to=(?P<d>.*)$")
_XLA_PASS_RE = re.compile(r"^--xla_dump_hlo_pass_re=(?P<r>.*)$")


@dataclass(frozen=True, slots=True)
class CellSpan:
    """One cell the shell ran: its ``In[n]`` (``None`` without history) and wall-clock start and end (``None``: running)."""

    number: int | None
    start: float
    end: float | None
    first: tuple[int | None, int | None] = (None, None)
    """The numbers JAX's next module dump and next jaxpr dump had when the cell began (:func:`_jax_compat.dump_next_numbers`)."""
    after: tuple[int | None, int | None] | None = None
    """The same when it ended (``None``: running): a dump numbered from ``first`` up to ``after`` is this cell's."""

    @classmethod
    def began(cls, number: int | None) -> CellSpan:
        """A cell beginning now."""
        return cls(number, time.time(), None, _jax_compat.dump_next_numbers())

    def ended(self, number: int | None) -> CellSpan:
        """This cell, ended now, as ``In[number]``."""
        return dataclasses.replace(self, number=number, end=time.time(), after=_jax_compat.dump_next_numbers())

    def numbered(self, number: int | None) -> CellSpan:
        """This cell as ``In[number]``."""
        return dataclasses.replace(self, number=number)


@dataclass(frozen=True, slots=True)
class PersistentHit:
    """A compile served from the persistent cache: the dump directory then, the counter of its module dump, when."""

    directory: str
    ir_number: int | None
    wall_time: float


class HitWatcher:
    """Records each persistent-cache hit (``/jax/compilation_cache/cache_hits``) while started.

    JAX dumps the compile-stage module at the top of ``compile_or_get_cached``,
    before the cache lookup, so on a hit the module dump just written is the
    one whose counter JAX handed out last. Each event costs a string compare;
    a hit also reads one config value and the counter (no directory listing).
    """

    def __init__(self) -> None:
        self.hits: deque[PersistentHit] = deque(maxlen=HITS_KEPT)
        self._started = False

    def start(self) -> HitWatcher:
        if not self._started:
            jax.monitoring.register_event_listener(self._on_event)
            self._started = True
        return self

    def stop(self) -> None:
        if self._started:
            _jax_compat.unregister_event_listener(self._on_event)
            self._started = False

    def _on_event(self, event: str, **kwargs: object) -> None:
        if event != HIT_EVENT:
            return
        directory = _config("jax_dump_ir_to")
        if not directory:
            return
        following = _jax_compat.dump_next_numbers()[0]
        self.hits.append(PersistentHit(str(directory), None if following is None else following - 1, time.time()))


# --- settings ----------------------------------------------------------------------------------


def _config(name: str) -> object:
    return jax.config.values.get(name)


def known_modes() -> tuple[str, ...]:
    """The values of ``jax_dump_ir_modes`` this JAX acts on (others are ignored without a word)."""
    modes = ("stablehlo", "jaxpr", "eqn_count_pprof")
    return modes + (("jaxpr_html",) if _jax_compat.JAX_VERSION >= (0, 10, 1) else ())


def _env_source(env_name: str, env: str | None, value: str, default: str) -> str:
    if env is not None and env == value:
        return f"environment variable {env_name}, read when JAX was imported"
    if env is None and value == default:
        return "default"
    if env is None:
        return "jax.config.update"
    return f"jax.config.update, or {env_name} changed after JAX was imported"


def settings() -> tuple[tuple[DumpSetting, ...], tuple[str, ...]]:
    """The three dump options with their values and sources, and the warnings about them."""
    warnings: list[str] = []
    directory = str(_config("jax_dump_ir_to") or "")
    modes = str(_config("jax_dump_ir_modes") or "")
    debug_info = _config("jax_include_debug_info_in_dumps")
    env_dir, env_modes, env_debug = (os.environ.get(n) for n in (ENV_DIR, ENV_MODES, ENV_DEBUG_INFO))
    rows = [
        DumpSetting("jax_dump_ir_to", directory or "'' (off)", _env_source(ENV_DIR, env_dir, directory, "")),
        DumpSetting("jax_dump_ir_modes", modes, _env_source(ENV_MODES, env_modes, modes, "stablehlo")),
        DumpSetting("jax_include_debug_info_in_dumps", str(debug_info), _debug_info_source(env_debug, debug_info)),
    ]
    if env_dir and not directory:
        warnings.append(
            f"{ENV_DIR}={env_dir!r} is set, but jax_dump_ir_to is empty: JAX reads the variable only when it is imported, so it "
            f"was set too late for the env-var route (or jax.config.update turned dumping off since). Use "
            f"jax.config.update('jax_dump_ir_to', {env_dir!r}) now, or restart and set it before import jax."
        )
    elif env_dir is not None and directory and env_dir != directory:
        warnings.append(
            f"{ENV_DIR}={env_dir!r} but jax_dump_ir_to is {directory!r}: either the variable was changed after JAX was imported "
            "(too late: JAX keeps what it read at import) or jax.config.update set another directory. Files go to "
            f"{directory!r}."
        )
    if directory.startswith("~"):
        warnings.append(
            f"jax_dump_ir_to is {directory!r}: JAX does not expand '~', so it writes to a directory named '~' under the working "
            f"directory ({os.path.abspath(directory)}), not to {os.path.expanduser(directory)}. Give the full path: "
            f"jax.config.update('jax_dump_ir_to', {os.path.expanduser(directory)!r})."
        )
    if env_modes is not None and env_modes != modes:
        warnings.append(
            f"{ENV_MODES}={env_modes!r} but jax_dump_ir_modes is {modes!r}: the variable was changed after JAX was imported "
            f"(too late; use jax.config.update('jax_dump_ir_modes', {env_modes!r})) or jax.config.update changed the modes."
        )
    known = known_modes()
    for mode in modes.split(","):
        if mode in known:
            continue
        hint = ""
        if mode.strip() in known:
            hint = f" (JAX does not strip spaces: write {','.join(m.strip() for m in modes.split(','))!r})"
        elif mode == "jaxpr_html":
            hint = " (jaxpr_html needs jax >= 0.10.1)"
        warnings.append(f"jax_dump_ir_modes: {mode!r} is not a mode this JAX knows ({', '.join(known)}); JAX ignores it without a word{hint}")
    return tuple(rows), tuple(warnings)


def _debug_info_source(env: str | None, value: object) -> str:
    if env is None:
        return "default" if value is True else "jax.config.update"
    if env_gives(env, value):
        return f"environment variable {ENV_DEBUG_INFO}, read when JAX was imported"
    return f"jax.config.update, or {ENV_DEBUG_INFO} changed after JAX was imported"


def xla_flags() -> tuple[str | None, str | None]:
    """``(--xla_dump_to, --xla_dump_hlo_pass_re)`` from ``XLA_FLAGS`` as set now; ``None`` where absent."""
    dump_to = pass_re = None
    try:
        words = shlex.split(os.environ.get("XLA_FLAGS", ""))
    except ValueError:
        words = os.environ.get("XLA_FLAGS", "").split()
    for word in words:
        if m := _XLA_DUMP_TO.match(word):
            dump_to = m.group("d")
        elif m := _XLA_PASS_RE.match(word):
            pass_re = m.group("r")
    return dump_to, pass_re


# --- names ---------------------------------------------------------------------------------------


def function_of_module(module: str) -> str:
    """``jit_f`` -> ``f``: the name the module's files are grouped under (other modules keep their name)."""
    return module[4:] if module.startswith("jit_") and len(module) > 4 else module


def parse_name(name: str, size_bytes: int = 0, mtime: float = 0.0) -> DumpFile | None:
    """What a JAX dump file's name says, or ``None`` for any other name."""
    if m := (_IR.match(name) or _IR_OTHER_STAGE.match(name)):
        module = m.group("m")
        return DumpFile(name, "stablehlo", int(m.group("n")), module, function_of_module(module), m.group("stage"), size_bytes, mtime)
    m = _JAXPR.match(name)
    counter = int(m.group("n")) if m else None
    m = m or (None if name.startswith(("jax_ir", "module_")) else _JAXPR_07.match(name))
    if m:
        function = m.group("f")
        return DumpFile(name, _JAXPR_EXT[m.group("ext")], counter, None, _group_of_function(function), None, size_bytes, mtime)  # type: ignore[arg-type]
    return None


def _group_of_function(function: str) -> str:
    """A jaxpr's function name, as the module dumps of the same function are grouped (``<lambda>`` -> ``_lambda``)."""
    return function_of_module(module_name(function))


def report_names(values: Iterable[object]) -> tuple[tuple[str, str], ...]:
    """``(function, name)`` for the ``jax.jit`` wrappers among a namespace's ``values`` whose files are grouped under
    ``function`` (``g``), named as the reports name them (``grad(g)``): only functions one of them names otherwise.
    Told by type only."""
    wrapper_type = _jax_compat.jit_wrapper_type()
    found: dict[str, dict[str, bool]] = {}
    for value in values:
        if type(value) is not wrapper_type:
            continue
        fun = _jax_compat.jit_function(value)
        inner = innermost(fun)
        if type(inner) is types.FunctionType and not jax_made(inner):
            name = written(inner.__name__, transforms(fun))
            found.setdefault(_group_of_function(inner.__name__), {})[name] = name != inner.__name__
        elif inner is fun and inspect.getattr_static(fun, "__name__", None) is None:
            for unnamed in _jax_compat.UNNAMED_FUNCTION_NAMES:  # a callable object: named by its class, as the reports do
                found.setdefault(_group_of_function(unnamed), {})[type(fun).__name__] = True
    return tuple((group, name) for group, names in found.items() if any(names.values()) for name in names)


def _group_of_wrapper(value: object) -> str | None:
    """The group a ``jax.jit`` wrapper's files are under (``f = jax.jit(lambda …)``: ``_lambda``), or ``None`` for any
    other value. Told by type only, as :func:`report_names`."""
    if type(value) is not _jax_compat.jit_wrapper_type():
        return None
    fun = _jax_compat.jit_function(value)
    inner = innermost(fun)
    if type(inner) is types.FunctionType:
        return _group_of_function(inner.__name__)
    return _group_of_function(_jax_compat.UNNAMED_FUNCTION_NAMES[0]) if inspect.getattr_static(fun, "__name__", None) is None else None


def _bound_group(name: str, bound: object, values: Sequence[object], notes: list[str]) -> str | None:
    """The group of the jitted function the user's namespace binds ``name`` to, noting the other jitted functions whose
    files share its module name (two lambdas both compile as ``jit__lambda``)."""
    group = _group_of_wrapper(bound)
    if group is None:
        return None
    others = {id(_jax_compat.jit_function(v)) for v in values if v is not bound and _group_of_wrapper(v) == group}
    others.discard(id(_jax_compat.jit_function(bound)))
    if others:
        notes.append(f"{name} compiles as the module jit_{group}, as {plural(len(others), 'other jitted function')} of yours "
                     f"{'does' if len(others) == 1 else 'do'}: the files listed are all of theirs, which their names do not "
                     f"tell apart (a def with a name of its own does)")
    return group


def _xla_file_order(file: XlaDumpFile) -> tuple[int, str]:
    """XLA's files of one module: the HLO before and after optimisation first, then the passes, the rest, unknown last."""
    return _XLA_KIND_ORDER.get(file.kind, len(_XLA_KIND_ORDER)), file.name


def parse_xla_name(name: str, size_bytes: int = 0) -> tuple[int, str, XlaDumpFile] | None:
    """``module_0004.jit_f.before_optimizations.txt`` -> ``(4, 'jit_f', file)``, or ``None``."""
    m = _XLA.match(name)
    if m is None:
        return None
    rest = m.group("rest")
    kind, pass_name = "module directory" if rest is None else "other", None
    if rest is not None:
        if p := _XLA_PASS.match(rest):
            kind, pass_name = "pass", p.group("after") if p.group("before") else p.group("pipe")
        else:
            kind = next((k for pattern, k in _XLA_KINDS if pattern.match(rest)), "other")
    return int(m.group("n")), m.group("m"), XlaDumpFile(name, kind, pass_name, size_bytes)


# --- listing -----------------------------------------------------------------------------------


def _scan(directory: str) -> tuple[list[DumpFile], list[XlaDumpModule], int, str | None]:
    """JAX's files, XLA's modules, the count of other entries, and why listing failed (or ``None``)."""
    if not os.path.exists(directory):
        return [], [], 0, f"{directory} does not exist"
    if not os.path.isdir(directory):
        return [], [], 0, f"{directory} is not a directory"
    files: list[DumpFile] = []
    xla: dict[tuple[int, str], list[XlaDumpFile]] = {}
    other = 0
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    listed = _list_entry(entry, files, xla)
                except FileNotFoundError:  # deleted since the directory was read (a cleanup, another process): gone
                    continue
                other += not listed
    except OSError as exc:
        return [], [], 0, f"cannot list {directory}: {exc}"
    modules = [XlaDumpModule(n, m, tuple(sorted(fs, key=_xla_file_order))) for (n, m), fs in sorted(xla.items())]
    return files, modules, other, None


def _list_entry(entry: os.DirEntry, files: list[DumpFile], xla: dict[tuple[int, str], list[XlaDumpFile]]) -> bool:
    """Add ``entry`` to JAX's ``files`` or to ``xla``'s modules; ``False`` for any other entry (a link is one)."""
    if entry.is_symlink():
        return False
    parsed = parse_name(entry.name) if entry.is_file() else None
    if parsed is not None:
        st = entry.stat()
        files.append(_with_stat(parsed, st.st_size, st.st_mtime))
        return True
    xla_parsed = parse_xla_name(entry.name)
    if xla_parsed is not None and (entry.is_file() or xla_parsed[2].kind == "module directory"):
        number, module, file = xla_parsed
        size = entry.stat().st_size if entry.is_file() else 0
        xla.setdefault((number, module), []).append(XlaDumpFile(file.name, file.kind, file.pass_name, size))
        return True
    return False


def _with_stat(file: DumpFile, size: int, mtime: float) -> DumpFile:
    return DumpFile(file.name, file.kind, file.counter, file.module, file.function, file.stage, size, mtime)


def _order(file: DumpFile) -> tuple:
    return (file.mtime, file.counter if file.counter is not None else -1, 0 if file.kind != "stablehlo" else 1, file.name)


def cell_of(mtime: float, spans: Sequence[CellSpan], loaded_at: float | None, ends: Sequence[float] | None = None) -> str:
    """The cell that wrote a file last modified at ``mtime``: ``In[n]`` or a sentence; ``""`` with no observation."""
    if loaded_at is None:
        return ""
    if mtime < loaded_at - MTIME_SLACK_SECONDS:
        return BEFORE_LOAD
    ends = ends if ends is not None else [s.end if s.end is not None else float("inf") for s in spans]
    k = bisect.bisect_left(ends, mtime)
    if k == len(spans):
        return BETWEEN_CELLS
    span = spans[k]
    if mtime >= span.start - MTIME_SLACK_SECONDS:
        return f"In[{span.number}]" if span.number is not None else NO_HISTORY_CELL
    if k == 0 and spans and mtime < spans[0].start and loaded_at < spans[0].start - MTIME_SLACK_SECONDS and len(spans) >= HITS_KEPT:
        return FORGOTTEN_CELL
    return BETWEEN_CELLS


def _attribute(files: list[DumpFile], spans: Sequence[CellSpan], loaded_at: float | None,
               hits: Iterable[PersistentHit], directory: str, users: Collection[str]) -> list[DumpFile]:
    jax_names = _jax_compat.jax_operation_names() - set(users)
    ends = [s.end if s.end is not None else float("inf") for s in spans]
    real = os.path.realpath(directory)
    hit_numbers = {h.ir_number: h.wall_time for h in hits if h.ir_number is not None and os.path.realpath(h.directory) == real}
    numbered = _NumberedSpans(spans)
    out, unnumbered = [], []
    for f in files:
        hit_time = hit_numbers.get(f.counter) if f.kind == "stablehlo" and f.stage == "compile" else None
        hit = hit_time is not None and f.mtime <= hit_time + MTIME_SLACK_SECONDS
        cell = numbered.cell_of(f) if loaded_at is not None and f.mtime >= loaded_at - MTIME_SLACK_SECONDS else None
        if cell is None and f.kind != "stablehlo":
            unnumbered.append(len(out))
        out.append(DumpFile(f.name, f.kind, f.counter, f.module, f.function, f.stage, f.size_bytes, f.mtime,
                            cell or cell_of(f.mtime, spans, loaded_at, ends), hit, f.function in jax_names))
    modules = sorted((f for f in out if f.kind == "stablehlo"), key=_order)
    starts = {f"In[{s.number}]": s.start for s in spans if s.number is not None}
    for i in unnumbered:
        # a jaxpr JAX did not number (0.7) stamped a tick before its cell began (cells run back to back) is that cell's
        # where the module its trace was lowered to (the same function's next module dump) is
        f = out[i]
        lowered = next((m for m in modules if m.function == f.function and m.mtime >= f.mtime), None)
        if lowered is not None and lowered.cell != f.cell and f.mtime >= starts.get(lowered.cell, float("inf")) - CLOCK_TICK_SECONDS:
            out[i] = dataclasses.replace(f, cell=lowered.cell)
    return out


class _NumberedSpans:
    """Which cell wrote a dump, by its number: JAX numbers dumps as it writes them, and each cell noted the next numbers.

    File times cannot tell cells run back to back apart: the kernel stamps a
    file with its coarse clock, a tick (up to 10 ms) behind ``time.time()``, so
    a dump written as ``In[4]`` began reads as ``In[3]``'s. A number settles it
    where the file's time agrees (within the slack) with the cell it points at;
    0.7's jaxpr dumps carry no number, and another process's do not count.
    """

    def __init__(self, spans: Sequence[CellSpan]) -> None:
        self._spans = spans
        self._firsts = tuple(tuple(s.first[which] for s in spans) for which in (0, 1))

    def cell_of(self, file: DumpFile) -> str | None:
        which = 0 if file.kind == "stablehlo" else 1
        firsts = self._firsts[which]
        if file.counter is None or (file.kind != "stablehlo" and file.kind not in _JAXPR_EXT.values()) or None in firsts:
            return None
        k = bisect.bisect_right(firsts, file.counter) - 1
        if k < 0:
            return None
        span = self._spans[k]
        after = span.after[which] if span.after is not None else None
        if (span.after is not None and (after is None or file.counter >= after)) or file.mtime < span.start - MTIME_SLACK_SECONDS \
                or (span.end is not None and file.mtime > span.end + MTIME_SLACK_SECONDS):
            return None
        return f"In[{span.number}]" if span.number is not None else NO_HISTORY_CELL


def dump_directory() -> tuple[str | None, str | None]:
    """The directory JAX dumps to now, and why there is none (off, or ``sponge`` without its variable)."""
    value = str(_config("jax_dump_ir_to") or "")
    if not value:
        return None, "dumping is off (jax_dump_ir_to is empty)"
    if value == "sponge":
        outputs = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", "")
        if not outputs:
            return None, "jax_dump_ir_to is 'sponge' but TEST_UNDECLARED_OUTPUTS_DIR is not set: JAX raises ValueError at the next dump"
        return outputs, None
    return value, None


def _configured_directory(directory: str | None, notes: list[str]) -> tuple[str | None, str | None]:
    """:func:`dump_directory`, made absolute where it is relative and no ``directory`` was given (said in ``notes``)."""
    configured, why_none = dump_directory()
    if directory is None and configured is not None and not os.path.isabs(configured) and not configured.startswith("~"):
        configured = os.path.abspath(configured)
        notes.append(f"jax_dump_ir_to is a relative path: JAX writes under the working directory of each dump, so here "
                     f"{configured}; files dumped before a %cd or os.chdir are under the directory that was current then")
    return configured, why_none


def dump_report(
    name: str | None = None,
    *,
    directory: str | None = None,
    cells: Sequence[CellSpan] = (),
    loaded_at: float | None = None,
    hits: Iterable[PersistentHit] = (),
    label_text: Callable[[str], str] | None = None,
    read_max_bytes: int = READ_MAX_BYTES,
    namespace: Iterable[object] = (),
    bound: object = None,
) -> DumpReport:
    """How dumping is set, and the dump files by function and by cell; with ``name``, that function's (or file's) texts.

    Args:
        name: a function (``f``, or its module ``jit_f``), a file name, or a counter (``2``: the
            ``jax_ir0002_…`` module if there is one, else the jaxpr numbered 2). ``None`` lists everything.
        directory: a directory to read instead of ``jax_dump_ir_to`` (an earlier run's, say).
        cells: the cells observed, oldest first, to say which cell wrote each file.
        loaded_at: when observation began (files older are "before jaxshow was loaded"); ``None``: no cells.
        hits: persistent-cache hits seen (:class:`HitWatcher`), to mark the module dumps they served.
        label_text: rewrites cell file names in the texts shown (``In[n]``).
        read_max_bytes: at most this much of each shown file is read.
        namespace: the user's namespace's values; a file of a jitted function among them is never counted
            as JAX's own operation, though JAX has one of that name.
        bound: what the user's namespace binds ``name`` to: a jitted function's files are those of its function's
            name (``f = jax.jit(lambda …)``: ``jit__lambda``'s).

    Raises:
        LookupError: ``name`` matches no file, counter or function (the message lists what exists).
        TypeError: ``name`` is not a str or int, or ``directory`` not a path.
    """
    if type(name) is int:
        name = str(name)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a function or file name, or a counter (str or int), got {type(name).__name__}")
    if directory is not None:
        if not isinstance(directory, (str, os.PathLike)) or not isinstance(path := os.fspath(directory), str):
            raise TypeError(f"directory must be a path (str or os.PathLike), got {type(directory).__name__}")
        directory = path
    values = list(namespace)
    names = report_names(values)
    setting_rows, warnings = settings()
    notes: list[str] = []
    configured, why_none = _configured_directory(directory, notes)
    listed = directory if directory is not None else configured
    enabled = configured is not None
    files: list[DumpFile] = []
    xla_modules: list[XlaDumpModule] = []
    other = 0
    unavailable = None
    if listed is None:
        unavailable = f"{why_none}; turn it on with jax.config.update('jax_dump_ir_to', path) (takes effect at the next compile)"
    else:
        files, xla_modules, other, unavailable = _scan(listed)
        if directory is None and unavailable == f"{listed} does not exist":
            unavailable += " yet (JAX creates it at the first dump)"
        if unavailable is None and not files and not xla_modules:
            unavailable = (f"{listed} is empty" if other == 0 else
                           f"{listed} holds {plural(other, 'entry', 'entries')}, none named like a JAX dump (jax_ir…_….mlir, jax_…_….jaxpr.txt) "
                           "or an XLA dump (module_….txt)")
            if directory is None and other == 0:
                unavailable += ": nothing compiled since dumping was turned on (an in-memory cache hit writes nothing)"
        files = sorted(_attribute(files, cells, loaded_at, hits, listed, _jax_compat.jitted_function_names(values)), key=_order)
    if directory is not None:
        notes.append("--dir: the settings above are this process's; the files were read from the directory given")
    xla_directory, xla_modules_own, xla_unavailable, xla_notes = _xla_section(listed if directory is not None else None)
    if directory is None:
        xla_modules = xla_modules_own
    notes.extend(xla_notes)
    if any(f.kind == "stablehlo" and f.stage == "compile" for f in files):
        notes.append("persistent-cache hits are marked for compiles this process made while jaxshow was loaded; a module "
                     "served from the persistent cache is dumped all the same (the dump comes before the cache lookup)")
    if any(f.counter is None for f in files):
        notes.append("jax 0.7 names jaxpr files f.jaxpr.txt with no counter: each lowering of f overwrites the last")
    texts: tuple[DumpText, ...] = ()
    if name is not None:
        groups = [group for group, as_named in names if as_named == name]  # grad(g): g's files; Scale: jit__unnamed_…'s
        if (group := _bound_group(name, bound, values, notes)) is not None and not select(name, files, xla_modules)[0]:
            groups.insert(0, group)
        picked = next((group for group in groups if any(_matches_function(f, group) for f in files)), groups[0] if groups else name)
        chosen, xla_chosen = select(picked, files, xla_modules)
        of_function = [f for f in files if _matches_function(f, picked)] if not chosen else []
        if not chosen and not xla_chosen and not of_function:
            raise LookupError(_no_match(name, files, listed, unavailable))
        files = list(chosen) if chosen else of_function
        if xla_chosen:
            xla_modules = [m for m in xla_modules if any(x in m.files for x in xla_chosen)]
        else:
            modules = {f.module or f"jit_{f.function}" for f in files}  # a jaxpr file names no module: its function's jit module
            xla_modules = [m for m in xla_modules if m.module in modules]
        xla_read_from = listed if directory is not None else xla_directory
        texts = tuple(_read_text((xla_read_from if isinstance(shown, XlaDumpFile) else listed) or "", shown, label_text, read_max_bytes)
                      for shown in _to_show(chosen, xla_chosen, files))  # type: ignore[arg-type]
    return DumpReport(
        directory=listed, enabled=enabled, settings=setting_rows, files=tuple(files), other_files=other,
        listing_unavailable=unavailable, xla_directory=xla_directory, xla_modules=tuple(xla_modules),
        xla_unavailable=xla_unavailable, warnings=warnings, notes=tuple(notes), selection=name, texts=texts,
        report_names=names,
    )


def _xla_section(listed_dir: str | None) -> tuple[str | None, list[XlaDumpModule], str | None, list[str]]:
    """XLA's dump directory from ``XLA_FLAGS``, its modules, why none, and notes (flags set after the backend started)."""
    notes: list[str] = []
    dump_to, pass_re = xla_flags()
    in_effect = _jax_compat.xla_dump_to_in_effect()
    if in_effect is not None and (dump_to or "") != in_effect:
        notes.append(
            f"XLA_FLAGS now says --xla_dump_to={dump_to or ''} but XLA read --xla_dump_to={in_effect or ''} when the backend "
            "started: XLA_FLAGS was set too late (XLA reads it once per process); restart with it set before the first computation"
        )
        dump_to = in_effect or None
    if pass_re is not None:
        notes.append(f"--xla_dump_hlo_pass_re={pass_re}: XLA also wrote the module after each matching pass")
    if listed_dir is not None or not dump_to:
        return None, [], None, notes
    if not os.path.isabs(dump_to):
        dump_to = os.path.abspath(dump_to)
        notes.append(f"--xla_dump_to is a relative path: XLA writes under the working directory of each dump, so here "
                     f"{dump_to}; modules dumped before a %cd or os.chdir are under the directory that was current then")
    _, modules, _, unavailable = _scan(dump_to)
    return dump_to, modules, unavailable, notes


def _matches_function(file: DumpFile, name: str) -> bool:
    return name in (file.function, file.module) or file.function == _group_of_function(name)


def select(name: str, files: Sequence[DumpFile], xla_modules: Sequence[XlaDumpModule]) -> tuple[list[DumpFile], list[XlaDumpFile]]:
    """The files ``name`` picks: a file name (JAX's or XLA's), a counter, or (empty lists) a function or nothing."""
    exact = [f for f in files if f.name == name]
    if exact:
        return exact, []
    xla_exact = [x for m in xla_modules for x in m.files if x.name == name]
    if xla_exact:
        return [], xla_exact
    if name.isdigit():
        number = int(name)
        modules = [f for f in files if f.kind == "stablehlo" and f.counter == number]
        return (modules or [f for f in files if f.kind != "stablehlo" and f.counter == number]), []
    if any(_matches_function(f, name) for f in files):
        return [], []
    xla_module = [x for m in xla_modules if m.module in (name, module_name(name)) for x in m.files]
    return [], xla_module


def _no_match(name: str, files: Sequence[DumpFile], directory: str | None, unavailable: str | None) -> str:
    if unavailable:
        return f"{name!r}: {unavailable}"
    functions = list(dict.fromkeys(f.function for f in files))
    shown = ", ".join(functions[:20]) + (f", … ({len(functions)} in all)" if len(functions) > 20 else "")
    return f"no dump file, counter or function named {name!r} in {directory}; functions with files: {shown or 'none'}"


def _to_show(chosen: Sequence[DumpFile], xla_chosen: Sequence[XlaDumpFile], files: Sequence[DumpFile]) -> list[object]:
    """A file or counter: those files. A function: its newest module dump and newest jaxpr. An XLA module: before/after."""
    if chosen:
        return list(chosen)
    if xla_chosen:
        if len(xla_chosen) == 1:
            return list(xla_chosen)
        return [x for x in xla_chosen if x.kind in ("before optimizations", "after optimizations")]
    newest: dict[str, DumpFile] = {}
    for f in files:
        if f.kind in ("stablehlo", "jaxpr"):
            newest[f.kind] = f
    return [newest[k] for k in ("jaxpr", "stablehlo") if k in newest]


def language_of(file: DumpFile | XlaDumpFile) -> str:
    """The highlighter for a file: ``stablehlo``, ``jaxpr``, ``hlo``, or ``""`` (plain)."""
    if isinstance(file, DumpFile):
        return {"stablehlo": "stablehlo", "jaxpr": "jaxpr"}.get(file.kind, "")
    return "hlo" if file.kind in XLA_HLO_KINDS else ""


def safe_path(directory: str, name: str) -> str:
    """``directory/name`` for a name listed in ``directory``; ``ValueError`` if it would lead anywhere else."""
    if not name or name in (".", "..") or os.sep in name or (os.altsep and os.altsep in name) or "\x00" in name:
        raise ValueError(f"{name!r} is not a file name")
    root = os.path.realpath(directory)
    path = os.path.realpath(os.path.join(root, name))
    if os.path.dirname(path) != root:
        raise ValueError(f"{name!r} leads outside {directory}")
    return path


def _read_head(directory: str, name: str, max_bytes: int) -> tuple[str, int, int]:
    path = safe_path(directory, name)
    with open(path, "rb") as handle:
        total = os.fstat(handle.fileno()).st_size
        data = handle.read(max_bytes if max_bytes > 0 else -1)
    return data.decode("utf-8", errors="replace"), total, len(data)


def _read_text(directory: str, file: DumpFile | XlaDumpFile, label_text: Callable[[str], str] | None, max_bytes: int) -> DumpText:
    language = language_of(file)
    if isinstance(file, DumpFile) and file.kind == "eqn_count_pprof":
        return DumpText(file.name, "", f"(a binary pprof profile: open it with `pprof -http=: {safe_path(directory, file.name)}`)", file.size_bytes, 0)
    if isinstance(file, DumpFile) and file.kind == "jaxpr_html":
        return DumpText(file.name, "", f"(an HTML page with scripts: open it in a browser, {safe_path(directory, file.name)})", file.size_bytes, 0)
    if isinstance(file, XlaDumpFile) and file.kind in ("object code", "module directory"):
        return DumpText(file.name, "", f"({file.kind}: not text)", file.size_bytes, 0)
    try:
        text, total, read = _read_head(directory, file.name, max_bytes)
    except OSError as exc:  # deleted or made unreadable since it was listed
        return DumpText(file.name, "", f"(cannot read it: {exc.strerror or exc})", file.size_bytes, 0)
    if read < total and "\n" in text:
        text = text[: text.rfind("\n") + 1]
    if label_text is not None:
        text = label_text(text)
    return DumpText(file.name, language, text, total, read)


def dump_diff(
    a: str,
    b: str,
    *,
    directory: str | None = None,
    label_text: Callable[[str], str] | None = None,
    read_max_bytes: int = READ_MAX_BYTES,
    context_lines: int = 3,
) -> DumpDiff:
    """A unified diff of two dump files, each named by file name or counter (see :func:`dump_report`).

    Raises:
        LookupError: a name matches no file, or more than one.
    """
    notes: list[str] = []
    configured, why_none = _configured_directory(directory, notes)
    listed = directory if directory is not None else configured
    if listed is None:
        raise LookupError(f"{why_none}; give --dir DIR to diff the files of another directory")
    files, modules, _, unavailable = _scan(listed)
    xla_directory = listed
    if directory is None:
        xla_directory, modules, _, _ = _xla_section(None)
    if unavailable is not None and not modules:
        raise LookupError(unavailable)
    picked = [_one(name, files, modules, listed) for name in (a, b)]
    texts = []
    for file in picked:
        text = _read_text((xla_directory if isinstance(file, XlaDumpFile) else listed) or "", file, label_text, read_max_bytes)
        if text.read_bytes < text.total_bytes:
            notes.append(f"{file.name}: only the first {text.read_bytes:,} of {text.total_bytes:,} bytes were compared")
        texts.append(text.text)
    first, second = picked
    if isinstance(first, DumpFile) and isinstance(second, DumpFile) and first.function != second.function:
        notes.append(f"the two files are dumps of different functions ({first.function}, {second.function})")
    if type(first) is not type(second) or language_of(first) != language_of(second):
        notes.append("the two files are of different kinds")
    lines = list(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(), fromfile=first.name, tofile=second.name,
                                      n=context_lines, lineterm=""))
    added = sum(1 for x in lines[2:] if x.startswith("+"))
    removed = sum(1 for x in lines[2:] if x.startswith("-"))
    if not lines:
        notes.append("the two files are identical" + (" (in the bytes compared)" if any("only the first" in n for n in notes) else ""))
    return DumpDiff(listed, first, second, language_of(first), "\n".join(lines), added, removed, tuple(notes))


def _one(name: str, files: Sequence[DumpFile], modules: Sequence[XlaDumpModule], directory: str) -> DumpFile | XlaDumpFile:
    chosen, xla_chosen = select(name, files, modules)
    found: list[DumpFile | XlaDumpFile] = [*chosen, *xla_chosen]
    if len(found) == 1:
        return found[0]
    if not found:
        if any(_matches_function(f, name) for f in files):
            names = ", ".join(f.name for f in files if _matches_function(f, name))
            raise LookupError(f"{name!r} is a function; --diff needs two files or counters, e.g. two of: {names}")
        raise LookupError(_no_match(name, files, directory, None))
    raise LookupError(f"{name!r} matches {len(found)} files ({', '.join(f.name for f in found[:5])}); give one file name")
