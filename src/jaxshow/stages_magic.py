"""``%%jaxstages``: run a cell once, as IPython would, and show the stations of the jitted calls it made.

Glue only: options, opening and closing a :class:`~jaxshow.capture.calls.CallCapture`
around the cell (IPython runs it, see :mod:`jaxshow.cellrun`), and display.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict
from typing import Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument
from IPython.display import display
from traitlets import Bool, Float, Integer

from jaxshow import render
from jaxshow.capture.calls import CallCapture, DirectCalls
from jaxshow.capture.cell import CellOptions, cell_report
from jaxshow.capture.labels import labelled_stations
from jaxshow.capture.placement import process_index
from jaxshow.capture.prefetch import PrefetchOptions, Stations
from jaxshow.capture.stations import CallName, WalkOptions, jit_target, library_jit
from jaxshow.cellrun import (cell_line, cell_number_of, label_cells, label_location, run_cell, run_magic_cell, stacked_magic, unhooked_magics,
                              unregister_events)
from jaxshow.magic_args import (
    GivenOnce,
    bare_name,
    cell_magic_arguments,
    directory_meant,
    expand_variables,
    fitted_errors,
    name_meant,
    output_can_be_silenced,
    output_name_error,
    parse_options,
    usage,
    written_name,
)
from jaxshow.progress import StageProgress
from jaxshow.report import CellReport, SourceLocation, StagesDiff, StagesReport, a_or_an
from jaxshow.stagesdiff import no_previous, stages_diff
from jaxshow.record_files import directory_problem, save_report

TIMEIT_NOTE = ("%timeit's statement runs without jaxshow's call hook, so the times it prints are your calls' alone; "
               "the traces and compiles it caused are reported, its cache hits are not listed")
PRUN_NOTE = ("%prun compiles its statement itself, without jaxshow's call hook: the traces and compiles it caused "
             "are reported, its cache hits are not listed")
RUN_NOTE = ("%run runs its script without jaxshow's call hook: the traces and compiles its calls caused are reported, "
            "its cache hits are not listed")
_UNHOOKED_NOTES = {"timeit": TIMEIT_NOTE, "prun": PRUN_NOTE, "run": RUN_NOTE}


@dataclasses.dataclass
class _OpenCell:
    """A %%jaxstages cell while IPython runs it: its options, capture, progress line and call hook."""

    args: Any
    capture: CallCapture
    progress: StageProgress
    notes: tuple[str, ...]
    calls: DirectCalls


@magics_class
class StagesMagics(Magics):
    """The ``%%jaxstages`` cell magic and its configurable display budgets."""

    highlight_max_bytes = Integer(200_000, help="Highlight IR texts up to this size; larger ones are shown plain.").tag(config=True)
    max_lines = Integer(500, help="Show at most this many lines of each IR text; the record keeps all of it.").tag(config=True)
    lowered_cost_max_chars = Integer(
        50_000, help="Compute the pre-optimisation cost (Lowered.cost_analysis, a StableHLO-to-HLO conversion) only for "
                     "modules up to this many characters; 0 for no limit.").tag(config=True)

    progress_after_seconds = Float(
        1.0, help="Show which stage (tracing, lowering, compiling, running) of which call is under way once one runs "
                  "longer than this many seconds, updated as each stage starts; 0 shows it at once, -1 never.").tag(config=True)

    source = Bool(False, help="Show the linked views in every report, as --source does: your source lines beside the "
                               "jaxpr, StableHLO and optimised HLO lines they made.").tag(config=True)

    diff_functions_kept = Integer(
        16, help="Keep the last compile of this many functions for --diff (least recently compiled dropped first).").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._open: _OpenCell | None = None
        self._compiles: OrderedDict[str, tuple[str | None, StagesReport]] = OrderedDict()
        """The last compile of each function, by its own key, with its name's key (:meth:`_compile_keys`)."""
        self._expanded: tuple[str, str] | None = None
        """This cell's magic line and the line with ``{expr}``/``$name`` filled; forgotten when the cell ends."""
        self.line_place: Callable[[str, int], tuple[str, int] | None] = lambda where, line: None
        """A cell's line as the front end names cells (the extension sets the cell runner's :meth:`~jaxshow.cellrun.CellRunner.line_place`)."""

    @cell_magic_arguments()
    @argument("--all", dest="show_all", action="store_true", help="Show every jitted call of yours the cell made, not only the last.")
    @argument("-n", "--name", metavar="FUNCTION", action=GivenOnce, meaning=name_meant,
              help="Show every call of this jitted function, and no other function's (with --all too).")
    @argument("--hlo", action="store_true", help="Show the lowered module as HLO text instead of StableHLO.")
    @argument("--debug-info", action="store_true", help="Include source locations in the lowered module and the jaxpr.")
    @argument("--source", action="store_true", help="Show your source lines beside the jaxpr, StableHLO and optimised HLO, "
                                                    "each IR line labelled In[n]:line (or the shortest path that tells your files apart); "
                                                    "hover or click a line to highlight the lines it links to, click "
                                                    "elsewhere to clear (also %%config StagesMagics.source=True).")
    @argument("--save", metavar="DIR", action=GivenOnce, meaning=directory_meant, help="Also write the stations (jaxpr, lowered module, optimised HLO, analyses as "
                                           "JSON) and the HTML report to files in DIR, named by function and station.")
    @argument("--all-processes", action="store_true", help="In a multi-process (jax.distributed) run, show the "
                                                               "report in every process, not only in process 0.")
    @argument("--diff", action="store_true", help="Also show what changed since the previous compile of the same function "
                                                   "(cache key, jaxpr, StableHLO, optimised HLO, cost and memory).")
    @argument("-o", "--output", metavar="NAME", action=GivenOnce, help="Also store the report object in the variable NAME.")
    @no_var_expand
    @output_can_be_silenced
    @cell_magic
    @fitted_errors
    def jaxstages(self, line: str, cell: str):
        """Run the cell once, as IPython would; show what JAX did for its jits.

        Every jitted call the cell made, directly or through helpers and
        libraries, is recorded where JAX traces, lowers and compiles it, in the
        call's own context (``with jax.enable_x64(True):`` included). The report
        shows the last call of one of your functions (or all of them, or one
        function's): the ``jax.jit`` wrapper, the ``Traced`` jaxpr and
        signature, the ``Lowered`` module with its pre-optimisation cost, and the
        ``Compiled`` executable with optimised HLO, cost, memory (drawn as one
        bar to scale beside XLA's peak, with the largest buffers of the
        compiled module; nothing is run for it), shardings and formats, plus
        the trace, lowering and compile seconds JAX reported on
        ``jax.monitoring``. A call that hit JAX's caches is headed "cache hit";
        an error is blamed on the phase that raised it. JAX's own functions
        (``jnp``, ``lax``) fold into one line.

        The cell runs exactly once and behaves as without the magic; the report
        is shown after its output.

        Examples::

            %%jaxstages
            loss, grads = train_step(params, batch)

            %%jaxstages --all --hlo
            y = f(x); z = g(y)

            %%jaxstages --name train_step --debug-info -o report
            for batch in batches:
                params = train_step(params, batch)

            %%jaxstages --save runs/baseline
            # writes runs/baseline/train_step.compiled.hlo.txt, ...
            loss = train_step(params, batch)

            %%jaxstages --source
            # In[3]:2 beside each jaxpr, StableHLO and HLO line it made
            y = f(x)

            %%jaxstages --save {run_dir}/step{i}
            # {expr} and $name expand from your namespace
            loss = train_step(params, batch)

            %%jaxstages --diff
            # what changed since train_step last compiled
            loss = train_step(params, bigger_batch)

        ``--diff`` compares each report with the previous compile of the same
        function (by qualified name) that ``%%jaxstages`` reported in this
        session: the arguments, static values and trace-context config that
        JAX keys its caches on, the jaxpr, the lowered module and the optimised
        HLO as folded diffs (names such as ``%add.12`` renumbered first, so a
        pure renaming is no change, and matched across the two modules line by
        line, so one inserted op shows as its own line and its user's, not as
        every later name), and the cost and memory figures.
        """
        __tracebackhide__ = True
        self._parse(line, cell)  # a usage error before anything runs
        if why := stacked_magic("jaxstages", cell):
            raise UsageError(f"{why}\n{usage(self.jaxstages)}")
        if self._open is not None:  # the cell's capture is open: a cell magic under this line, or a cell inside one
            return run_cell(self.shell, cell)
        return run_magic_cell(self.shell, self, line, cell)

    # ``%jaxstages?`` looks for a line magic only (IPython's _ofind): this one carries the cell
    # magic's manual, and typed as a line it only says how %%jaxstages is used.
    @line_magic("jaxstages")
    @fitted_errors
    def jaxstages_usage(self, line: str) -> None:
        raise UsageError("%%jaxstages is a cell magic: write it on the first line of a cell, with the code under it "
                         f"(%%jaxstages? shows the manual)\n{usage(self.jaxstages)}")

    jaxstages_usage.__doc__ = jaxstages.__doc__

    # the runner's protocol (cellrun.CellMagic) ------------------------------------------------

    def accepts(self, line: str, cell: str) -> bool:
        try:
            self._parse(line, cell)
        except UsageError:
            return False
        return True

    def open(self, line: str, raw_cell: str) -> DirectCalls:
        notes = tuple(_UNHOOKED_NOTES[name] for name in unhooked_magics(raw_cell))
        return self._open_capture(self._parse(line, raw_cell), notes=notes)

    def close(self, error: BaseException | None, seconds: float, *, ran: bool = True, notes: tuple[str, ...] = ()) -> None:
        opened = self._open
        self.abandon()
        if opened is None:
            return
        args, capture = opened.args, opened.capture
        if not ran:
            capture.release()
            return
        try:
            cell_options = CellOptions(walk=self._walk(args), show_all=args.show_all, name=self._call_name(args.name))
            report = cell_report(capture, cell_options, cell_seconds=seconds or capture.seconds, cell_error=error,
                                 label=self._label, label_text=self._label_text, name_note=self._name_note,
                                 jit_disabled=opened.calls.jit_disabled_by(), users_functions=opened.calls.unseen_helpers())
            if opened.notes or notes:
                report = dataclasses.replace(report, notes=(*report.notes, *opened.notes, *notes))
            diffs = self._compared(report.reports, shown=args.diff)
            if args.diff:
                report = dataclasses.replace(report, diffs=diffs)
        except Exception as exc:  # noqa: BLE001 - jaxshow's failure must never mask the cell's outcome
            report = CellReport(reports=(), cell_seconds=seconds, jitted_calls=0,
                                notes=(f"jaxshow could not build the report: {type(exc).__name__}: {exc}",))
        budget = self._budget()
        shown = args.all_processes or process_index() == 0  # one report per run, not one per host
        if shown:
            display(render.Rendered(report, budget))
        if args.save is not None and shown:
            display(render.Rendered(save_report(report, args.save, budget), budget))
        if args.output:
            self.shell.user_ns[args.output] = report

    def abandon(self) -> None:
        """End an open capture without a report, and forget the cell's filled line (Ctrl-C while the report is built)."""
        self._expanded = None
        if self._open is not None:
            self._open.capture.close()
            self._open.progress.close()
            self._open = None

    def start_observing(self) -> None:
        """Forget the filled line at the end of every cell (on load)."""
        self.shell.events.register("post_execute", self._forget_expansion)

    def shutdown(self) -> None:
        """End an open capture without a report (called on ``%unload_ext``)."""
        unregister_events(self.shell, post_execute=self._forget_expansion)
        self.abandon()

    # helpers -----------------------------------------------------------------------------------

    def _compared(self, reports: tuple[StagesReport, ...], *, shown: bool) -> tuple[StagesDiff, ...]:
        """Each report against the previous compile of its function (when ``shown``); the compiles are kept for later cells."""
        diffs = []
        for report in reports:
            own, name = self._compile_keys(report.wrapper.qualname, report.wrapper.defined_at)
            if own in self._compiles:
                previous = self._compiles[own][1]
            else:  # the last compile of its name; a lambda's name says nothing (None)
                previous = next((kept for kept_name, kept in reversed(self._compiles.values()) if kept_name == name), None) if name else None
            if shown:
                diffs.append(stages_diff(previous, report) if previous is not None else no_previous(report))
            if report.traced is not None and report.error is None and not report.cache_hit:
                self._compiles[own] = (name, report)
                self._compiles.move_to_end(own)
                while len(self._compiles) > max(self.diff_functions_kept, 0):
                    self._compiles.popitem(last=False)
        return tuple(diffs)

    def _compile_keys(self, qualname: str, where: SourceLocation | None) -> tuple[str, str | None]:
        """Which earlier compile a function's is compared with: ``(its own key, its name's key)``.

        Its own earlier compile first: a cell's function at its place as the front end names cells, kept across edits
        and runs of the cell ("Run All" again compares each cell's ``f`` with that cell's); else the last compile of
        its name in its file, in any cell for a cell's (a cell that defines the name anew replaces it). A lambda is
        compared only with its own, since every lambda has that name.
        """
        if where is None:
            return qualname, qualname
        in_cell = cell_number_of(self.shell, where.file) is not None
        place = self.line_place(where.file, where.line) if in_cell else None
        name = None if "<lambda>" in qualname else qualname if in_cell else f"{qualname} in {where.file}"
        if place is not None:
            return f"{qualname} at cell {place[0]}, line #{place[1]}", name
        return name or f"{qualname} at {where.file}:{where.line}", name

    def _parse(self, line: str, cell: str) -> Any:
        args = parse_options(self.jaxstages, self._expand(line))
        if args.name is not None:
            name = written_name(args.name)
            if name is None:
                raise UsageError(f"--name needs a function name (f, model.step, grad(f)), got {args.name!r}\n{usage(self.jaxstages)}")
            args.name = name  # a name found nowhere may be a library's or a module's function: the report says what ran
        if args.save is not None and (why := directory_problem(args.save)):
            raise UsageError(f"--save {args.save or repr(args.save)}: {why}\n{usage(self.jaxstages)}")
        if args.output is not None and (why := output_name_error(self.shell, args.output)):
            raise UsageError(f"{why}\n{usage(self.jaxstages)}")
        return args

    def _expand(self, line: str) -> str:
        """``{expr}`` and ``$name`` filled once per cell, as IPython fills a magic's line once.

        A cell's line is checked up to four times before the cell runs
        (ipykernel's and IPython's input transforms, ``pre_run_cell``, open); an
        expression such as ``{next(run_ids)}`` must run once and name one directory.
        """
        if self._expanded is None or self._expanded[0] != line:
            self._expanded = (line, expand_variables(self.shell, line))
        return self._expanded[1]

    def _forget_expansion(self) -> None:
        self._expanded = None

    def _open_capture(self, args: Any, *, notes: tuple[str, ...] = ()) -> DirectCalls:
        if self._open is not None:
            self.close(None, 0.0)
        progress = StageProgress(self.progress_after_seconds)
        walk = self._walk(args)
        prefetch = PrefetchOptions(walk, every_call=args.show_all, name=self._call_name(args.name),
                                   prepare=functools.partial(self._prepare, walk, self._budget()))
        capture = CallCapture(cell_line=cell_line(self.shell), progress=progress, prefetch=prefetch)
        capture.__enter__()
        self._open = _OpenCell(args, capture, progress, notes, DirectCalls(capture))
        return self._open.calls

    def _prepare(self, walk: WalkOptions, budget: render.TextBudget, stations: Stations) -> None:
        """Render a call's IR texts as its report will show them, on the thread that read its stations."""
        render.prepare_ir(labelled_stations(stations, walk, self._label_text), budget)

    def _budget(self) -> render.TextBudget:
        """How much of each text the report shows (``max_lines``, ``highlight_max_bytes``)."""
        return render.TextBudget(highlight_max_bytes=self.highlight_max_bytes, max_lines=self.max_lines)

    def _walk(self, args: Any) -> WalkOptions:
        """What the report reads: the IR dialect, source locations, and how much of the jaxpr to print."""
        return WalkOptions(dialect="hlo" if args.hlo else "stablehlo", debug_info=args.debug_info,
                           lowered_cost_max_chars=self.lowered_cost_max_chars or None,
                           jaxpr_max_lines=None if args.save is not None else self.max_lines or None,
                           source=args.source or self.source)

    def _call_name(self, name: str | None) -> CallName | None:
        """``--name NAME``, also matching the function a jit wrapper bound to the variable NAME wraps (read by type only)."""
        if name is None:
            return None
        bare = bare_name(name)
        return CallName.of(name, self.shell.user_ns.get(bare) if bare == name and "." not in name else None, bare)

    def _name_note(self, name: str) -> str | None:
        """Why ``--name NAME`` found nothing, when NAME is a variable that is not a jit wrapper."""
        value = self.shell.user_ns.get(name.split(".")[0], None) if "." not in name else None
        if value is None or jit_target(value) is not None or library_jit(value) is not None:
            return None
        said = f"{name} is {a_or_an(type(value).__name__)}, not a jax.jit wrapper: JAX has no stages to show for it"
        if not callable(value):  # an array or a number: nothing to jit, the name is likely the wrong one
            return said
        return f"{said}. Wrap it with jax.jit, or call jaxshow.stages({name}, ...), which jits it and says so"

    def _label_text(self, text: str) -> str:
        """Cell file names inside an IR text (jaxpr source info, ``loc(...)``, HLO metadata) -> ``In[5]``."""
        return label_cells(self.shell, text) if ("<ipython-input-" in text or "ipykernel_" in text) else text

    def _label(self, location: SourceLocation | None) -> SourceLocation | None:
        return label_location(self.shell, location)

