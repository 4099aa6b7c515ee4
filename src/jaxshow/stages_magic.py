"""``%%jaxstages``: run a cell once and show every station of its jitted calls.

Glue only: argument parsing, running the cell through :mod:`jaxshow.cellrun`,
and display. The JAX work lives in :mod:`jaxshow.capture`.
"""

from __future__ import annotations

import dataclasses
import re

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand, output_can_be_silenced
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Integer, observe

from jaxshow import capture, render
from jaxshow.cellrun import label_cells, run_cell_catching
from jaxshow.report import CellReport, ErrorSummary, SourceLocation, StagesReport
from jaxshow.timings import EventCollector, Stopwatch

_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*$")


def parse_options(magic, line: str):
    """``parse_argstring`` whose ``UsageError`` also carries the usage line."""
    try:
        return parse_argstring(magic, line)
    except UsageError as exc:
        raise UsageError(f"{exc}\n{magic.parser.format_usage()}") from None


@magics_class
class StagesMagics(Magics):
    """The ``%%jaxstages`` cell magic and its configurable display budgets."""

    highlight_max_bytes = Integer(200_000, help="Highlight IR texts up to this size; larger ones are shown plain.").tag(config=True)
    max_lines = Integer(500, help="Show at most this many lines of each IR text; the record keeps all of it.").tag(config=True)

    @observe("highlight_max_bytes", "max_lines")
    def _budget_changed(self, change) -> None:
        render.set_budget(**{change["name"]: change["new"]})

    @magic_arguments()
    @argument("--all", dest="show_all", action="store_true", help="Show every distinct jitted call the cell made, not only the last.")
    @argument("-n", "--name", metavar="FUNCTION", help="Show the calls of this jitted function only.")
    @argument("--hlo", action="store_true", help="Show the lowered module as HLO text instead of StableHLO.")
    @argument("--debug-info", action="store_true", help="Include source locations in the lowered module and the jaxpr.")
    @argument("-o", "--output", metavar="NAME", help="Also store the report object in the variable NAME.")
    @no_var_expand
    @output_can_be_silenced
    @cell_magic
    def jaxstages(self, line: str, cell: str):
        """Run the cell once and show what JAX did for its jitted call(s).

        For the last jitted call the cell's own statements make (or all of
        them, or one function's), shows the four stations: the ``jax.jit``
        wrapper, the ``Traced`` jaxpr and signature, the ``Lowered`` module with
        its pre-optimisation cost, and the ``Compiled`` executable with
        optimised HLO, cost, memory, shardings and formats, plus the trace,
        lowering and compile seconds JAX reported on ``jax.monitoring``.

        The cell runs exactly once: its value is the cell's output, its
        exceptions raise as usual, and the stations are read back from JAX's
        caches afterwards, so nothing is compiled twice.

        Examples::

            %%jaxstages
            loss, grads = train_step(params, batch)

            %%jaxstages --all --hlo
            y = f(x); z = g(y)

            %%jaxstages --name train_step --debug-info -o report
            for batch in batches:
                params = train_step(params, batch)
        """
        __tracebackhide__ = True
        args = parse_options(self.jaxstages, line)
        if args.name is not None and not _IDENTIFIER.match(args.name):
            raise UsageError(f"--name needs a function name, got {args.name!r}\n{self.jaxstages.parser.format_usage()}")
        if args.name is not None and args.name.split(".")[0] not in self.shell.user_ns and not re.search(rf"\b{re.escape(args.name.split('.')[0])}\b", cell):
            raise UsageError(f"--name {args.name}: no such name in the namespace or in this cell\n{self.jaxstages.parser.format_usage()}")
        options = capture.WalkOptions(dialect="hlo" if args.hlo else "stablehlo", debug_info=args.debug_info)

        collector = EventCollector()
        recorder = capture.CallRecorder(collector)
        with collector, Stopwatch() as watch:
            value, cell_error = run_cell_catching(self.shell, cell, hook=recorder)
        report = self._build_report(recorder, collector, watch.seconds, args, options, cell_error)
        display(report)
        if args.output:
            self.shell.user_ns[args.output] = report
        if cell_error is not None:
            raise cell_error
        return value

    def _cell_name(self, location: SourceLocation | None) -> SourceLocation | None:
        """``/tmp/ipykernel_1/123.py`` or ``<ipython-input-5-…>`` -> ``In[5]``, as tracebacks say."""
        if location is None:
            return None
        return dataclasses.replace(location, file=label_cells(self.shell, location.file))

    def _with_cell_names(self, report: StagesReport) -> StagesReport:
        wrapper = dataclasses.replace(report.wrapper, defined_at=self._cell_name(report.wrapper.defined_at))
        return dataclasses.replace(report, wrapper=wrapper, call_site=self._cell_name(report.call_site))

    def _name_note(self, name: str) -> str:
        target = self.shell.user_ns.get(name)
        if target is not None and not capture.is_stageable(target):
            return (
                f"{name} is a {type(target).__name__}, not a jax.jit wrapper (nothing with .trace or .lower): "
                f"JAX has no stages to show for it. Wrap it with jax.jit, or call jaxshow.stages({name}, ...), "
                "which jits it and says so"
            )
        return f"{name} was not called by this cell's own statements"

    def _build_report(self, recorder, collector, seconds, args, options, cell_error) -> CellReport:
        """Walk the chosen calls; an error in jaxshow becomes a note, never the cell's outcome."""
        notes = list(recorder.recording_errors)
        try:
            chosen = capture.calls_to_show(recorder.calls, show_all=args.show_all, name=args.name)
            reports = tuple(self._with_cell_names(capture.report_for_call(call, options)) for call in chosen)
        except Exception as exc:  # noqa: BLE001
            reports = ()
            notes.append(f"jaxshow could not walk the stations: {type(exc).__name__}: {exc}")
        shown = {r.function for r in reports}
        if args.name is not None and not reports:
            notes.append(self._name_note(args.name))
        elif not recorder.calls:
            notes.append(_no_call_note(collector))
        elif not args.show_all and len({c.name for c in recorder.calls}) > 1:
            others = sorted({c.name for c in recorder.calls} - shown)
            notes.append(f"also called: {', '.join(others)} (use --all or --name to show them)")
        return CellReport(
            reports=reports,
            cell_seconds=seconds,
            jitted_calls=len(recorder.calls),
            helper_compiles=collector.helper_compiles(shown),
            notes=tuple(notes),
            cell_error=ErrorSummary.from_exception(cell_error) if cell_error is not None else None,
        )


def _no_call_note(collector: EventCollector) -> str:
    compiled = sorted({e.base_name for e in collector.events if e.stage == "trace"})
    note = "no jitted call made by this cell's own statements; the cell ran normally"
    if compiled:
        note += f". JAX traced {', '.join(compiled)} while it ran (called from inside other functions or eager jax.numpy operations)"
    return note
