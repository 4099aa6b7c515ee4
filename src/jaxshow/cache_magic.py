"""``%jaxcache`` / ``%%jaxcache``: why a jitted function traced again, and the persistent cache.

Glue only: argument parsing, running the cell through :mod:`jaxshow.cellrun`,
the ``on`` mode's cell hooks, and display. The capture lives in
:mod:`jaxshow.retrace` and :mod:`jaxshow.persistent`.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import types
from collections import deque
from typing import Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from jaxshow import persistent, retrace
from jaxshow.capture.calls import DirectCalls, RecompileWatch, RefusalWatch, pmapped_jit
from jaxshow.capture.stations import jit_target
from jaxshow.cellrun import (INTERRUPTED, cell_line, is_body_of, is_cell_file, label_cells, run_cell, run_magic_cell, skipped_cell,
                              stacked_magic, unhooked_magics, unregister_events, with_cell_names)
from jaxshow.magic_args import GivenOnce, dotted_name, fitted, fitted_errors, output_can_be_silenced, output_name_error, parse_options, silenced, usage
from jaxshow.report import CacheClearReport, CacheReport, ErrorSummary, a_or_an
from jaxshow.retrace.freeze import Freeze

SUBCOMMANDS_HINT = "(subcommands: on | off | persistent | clear NAME | freeze [NAME...] | thaw [NAME...] | NAME)"
OBSERVED_COMPILES_LIMIT = 200


@dataclasses.dataclass
class _OpenCell:
    """A %%jaxcache cell while IPython runs it: its session, ``-o`` name, freeze, notes, call hook and refusal watch."""

    session: retrace.Session
    output: str | None
    freeze: Freeze | None
    notes: tuple[str, ...]
    calls: DirectCalls
    watch: RefusalWatch


@magics_class
class CacheMagics(Magics):
    """``%jaxcache`` in its line and cell forms; ``close()`` undoes ``on`` mode on unload."""

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._on_session: retrace.Session | None = None
        self._on_watch: RecompileWatch | None = None
        self._on_cells: list[str] = []
        """``on`` mode: the raw cells started and not yet ended, outermost first (a cell may run others inside it)."""
        self._on_owner = 0
        """How many of them were running when the cell whose end gets the report started."""
        self._observed_compiles: deque = deque(maxlen=OBSERVED_COMPILES_LIMIT)
        self._cell: _OpenCell | None = None
        self.line_place: Callable[[str, int], tuple[str, int] | None] = lambda filename, line: None
        """A cell's line as the front end names cells (the extension sets the cell runner's :meth:`~jaxshow.cellrun.CellRunner.line_place`)."""
        self._freeze = self._new_freeze() if shell is not None else None

    @magic_arguments()
    @argument("words", nargs="*", metavar="SUBCOMMAND",
              help="on | off | persistent | clear NAME | freeze [NAME...] | thaw [NAME...] | NAME (the cell form takes only freeze).")
    @argument("--max-traces", type=int, metavar="N", action=GivenOnce,
              help="With freeze: the new traces each frozen function may still make before a re-trace raises (default 0).")
    @argument("-o", "--output", metavar="NAME", action=GivenOnce, help="Also store the report object in the variable NAME.")
    @no_var_expand
    @output_can_be_silenced
    @line_cell_magic
    @fitted_errors
    def jaxcache(self, line: str, cell: str | None = None):
        """Explain each re-trace of a jitted function, and the persistent cache.

        Cell form: runs the cell exactly once, as IPython would, with JAX's
        cache-miss explanation on for that cell only, and shows per jitted
        function the calls that traced, the calls that hit, and for each miss its
        category (never-seen or re-defined function, tracing context, static
        arguments, input pytree, input types, or JAX's own words) with the
        evidence. A function that missed many times shows its first and last
        five misses and counts the others by category. Output printed while a
        function was being traced is flagged: it runs once per cache miss, not
        once per call. Each re-trace also shows its jaxpr against the
        function's previous trace as a folded diff, names renumbered so that
        only real changes show (``miss.jaxpr_diff``; ``%%jaxstages --diff``
        compares the lowered and compiled modules too). A function object made
        anew (the cell that defines it ran again) is compared with the
        previous definition of the same name in the same file or in any cell,
        and the diff says which: "jaxpr against the previous definition of f
        (defined at In[3]:1, traced at In[4]:1)".

        Line forms:

        - ``%jaxcache on`` / ``%jaxcache off``: the same report under every
          following cell that traced something, until turned off. Misses are
          classified from jaxshow's own short history per function, so each
          costs about the same however full JAX's cache is; calls that hit are
          not counted (that would slow every call).
        - ``%jaxcache NAME``: the trace history jaxshow observed for the jitted
          function NAME, and its current cache size.
        - ``%jaxcache clear NAME``: clear NAME's cache and say what was cleared
          (and what was not: the persistent cache).
        - ``%jaxcache persistent``: the persistent compilation cache explained:
          directory, gates, entries on disk, and what happened to the compiles
          seen in ``%%jaxcache`` cells.
        - ``%jaxcache freeze [NAME...] [--max-traces N]``: from now on a jitted
          function NAME (every jitted function of the user's or a library's
          when no NAME) that would trace again raises ``jaxshow.RetraceError``
          at the user's line, with the explanation: what changed (a static
          argument by its parameter name, ``n: now 3, before 2``, compared
          with the keys JAX's cache holds, so no warm-up is needed), the
          call's line ``In[n]:line``, and the library function that led there
          (a library is code installed under site-packages; a package of yours
          installed editable is yours). JAX refuses the trace before the
          function's Python runs, so nothing is traced, compiled or cached,
          and the cell stops with the error. Cache hits are unchanged, and a
          ``%jaxcache on`` report is the same as without the freeze.
          ``--max-traces N`` lets each function trace N more times first.
          ``%%jaxcache freeze ...`` freezes one cell only; ``%unload_ext
          jaxshow`` ends every freeze.
        - ``%jaxcache thaw [NAME...]``: end the freeze (of NAME only).

        Examples::

            %%jaxcache
            y = f(jnp.ones(3)); y = f(jnp.ones(4))

            %jaxcache on
            %jaxcache f
            %jaxcache clear f
            %jaxcache persistent -o state
            %jaxcache freeze --max-traces 1 step
            %jaxcache thaw
        """
        __tracebackhide__ = True
        line, silent = silenced(line) if cell is None else (line, False)
        try:
            args = self._parse(line, cell_form=cell is not None)
            if cell is not None and (why := stacked_magic("jaxcache", cell)):
                raise UsageError(f"{why}\n{self._usage()}")
        except UsageError as exc:
            if cell is None:
                raise
            raise UsageError(str(exc).replace(self._usage(), self._cell_usage())) from None
        if cell is not None and self._cell is not None:  # the cell's capture is open: a cell magic under this line
            return run_cell(self.shell, cell)
        if cell is not None:
            return run_magic_cell(self.shell, self, line, cell)
        report = self._line(args.words, args.max_traces)
        if report is None:
            return None
        report = with_cell_names(self.shell, report)
        if not silent:
            display(report)
        if args.output:
            self.shell.user_ns[args.output] = report
        return None

    # --- line forms ---------------------------------------------------------------------

    def _parse(self, line: str, *, cell_form: bool) -> Any:
        try:
            args = parse_options(self.jaxcache, line, intermixed=True)
        except UsageError as exc:
            raise UsageError(f"{exc}\n{SUBCOMMANDS_HINT}") from None
        if cell_form and args.words and args.words[0] != "freeze":
            raise UsageError(f"the cell form takes no subcommand but freeze, got {' '.join(args.words)!r}\n{self._usage()}")
        if args.max_traces is not None and (not args.words or args.words[0] != "freeze"):
            raise UsageError(f"--max-traces goes with freeze only\n{self._usage()}")
        if args.output is not None and not cell_form and args.words and args.words[0] in ("on", "off", "freeze", "thaw"):
            raise UsageError(f"-o goes with a report (%%jaxcache, NAME, clear NAME, persistent); %jaxcache {args.words[0]} "
                             f"shows none\n{self._usage()}")
        if args.max_traces is not None and args.max_traces < 0:
            raise UsageError(f"--max-traces must be 0 or more, got {args.max_traces}\n{self._usage()}")
        if args.words and args.words[0] == "freeze":
            self._frozen_functions(args.words[1:])  # unknown names are a usage error before anything runs
        if args.output is not None and (why := output_name_error(self.shell, args.output)):
            raise UsageError(f"{why}\n{self._usage()}")
        return args

    def _usage(self) -> str:
        return usage(self.jaxcache) + "\n" + SUBCOMMANDS_HINT

    def _cell_usage(self) -> str:
        """The cell form's usage, as it is typed: ``%%jaxcache [--max-traces N] [-o NAME] [freeze [NAME ...]]``."""
        return "%" + usage(self.jaxcache).replace("[SUBCOMMAND ...]", "[freeze [NAME ...]]")

    def _line(self, words: list[str], max_traces: int | None = None):
        if not words:
            raise UsageError(f"%jaxcache needs a subcommand or a function name\n{self._usage()}")
        command, rest = words[0], words[1:]
        if command in ("on", "off", "persistent") and rest:
            raise UsageError(f"%jaxcache {command} takes no argument, got {' '.join(rest)!r}\n{self._usage()}")
        if command == "on":
            self._turn_on()
            print(fitted("%jaxcache on: every following cell that traces a jitted function gets a report; %jaxcache off to stop."))
            return None
        if command == "off":
            was_on = self._on_session is not None
            self._turn_off()
            print("%jaxcache off." if was_on else "%jaxcache was not on.")
            return None
        if command == "persistent":
            return persistent.report(tuple(self._observed_compiles))
        if command == "freeze":
            self._freeze.freeze(max_traces or 0, self._frozen_functions(rest))
            allowed = f"{max_traces} more trace{'s' if max_traces != 1 else ''} each" if max_traces else "no new trace"
            print(fitted(f"%jaxcache freeze: {', '.join(rest) or 'every jitted function'} may make {allowed}; "
                         "a re-trace raises jaxshow.RetraceError. %jaxcache thaw to end."))
            return None
        if command == "thaw":
            if not self._freeze.active:
                print("%jaxcache: nothing is frozen.")
                return None
            if rest and self._freeze.every is not None:
                raise UsageError(f"every jitted function is frozen; %jaxcache thaw (no name) ends the freeze\n{self._usage()}")
            thawed = self._freeze.thaw(self._frozen_functions(rest))
            names = "every jitted function" if thawed == ("*",) else ", ".join(thawed) or "nothing (not frozen)"
            print(fitted(f"%jaxcache thaw: {names} may trace again."))
            return None
        if command == "clear":
            if len(rest) != 1:
                raise UsageError(f"%jaxcache clear needs exactly one function name\n{self._usage()}")
            return self._clear(rest[0])
        if rest:
            why = (f"%jaxcache NAME takes one function name, got {' '.join(words)!r}" if command in self.shell.user_ns
                   else f"unknown subcommand {command!r}")
            raise UsageError(f"{why}\n{self._usage()}")
        return retrace.trace_history(command, self._jitted(command, pmap=True))

    def _jitted(self, word: str, pmap: bool = False) -> Any:
        """The jax.jit wrapper ``word`` names (``pmap``: or a ``jax.pmap``, whose traces jaxshow files too)."""
        name = dotted_name(word)
        if name is None:
            raise UsageError(f"unknown subcommand {word!r}\n{self._usage()}")
        head, *attrs = name.split(".")
        if head not in self.shell.user_ns:
            raise UsageError(f"{name!r} is neither a subcommand nor a name in the namespace\n{self._usage()}")
        value = self.shell.user_ns[head]
        for attr in attrs:
            try:
                value = getattr(value, attr)
            except Exception as exc:  # noqa: BLE001 - the user's object; its error is the answer
                raise UsageError(f"{name!r}: reading .{attr} raised {type(exc).__name__}: {exc}\n{self._usage()}") from None
        target = jit_target(value)
        if target is None and pmap and pmapped_jit(value):
            return value
        if target is None:
            raise UsageError(f"{_not_jitted(name, value)}\n{self._usage()}")
        return target[0]

    def _new_freeze(self) -> Freeze:
        """A freeze that names the shell's cells as tracebacks do and knows them by the front end's ids."""
        return Freeze(functools.partial(label_cells, self.shell), is_cell_file(self.shell), lambda name, line: self.line_place(name, line))

    def _frozen_functions(self, names: list[str]) -> dict[str, Any] | None:
        """The Python functions the jitted ``names`` wrap (``None`` for every function when no name is given)."""
        if not names:
            return None
        return {name: getattr(wrapper, "__wrapped__", wrapper) for name in names for wrapper in [self._jitted(name)]}

    def _clear(self, name: str) -> CacheClearReport:
        report = retrace.clear(name, self._jitted(name))
        if report is None:
            raise UsageError(f"{name!r} has no clear_cache() in this JAX\n{self._usage()}")
        return report

    # --- on mode ------------------------------------------------------------------------

    def _turn_on(self) -> None:
        if self._on_session is not None:
            return
        self._on_session = retrace.Session(jax_text="when_cheap", is_cell_file=is_cell_file(self.shell), line_place=self.line_place,
                                           cell_line=cell_line(self.shell), label=functools.partial(label_cells, self.shell)).start()
        self._on_watch = RecompileWatch(self._on_session).open()
        self._on_cells, self._on_owner = [], 0
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.events.register("post_run_cell", self._post_run_cell)

    def _turn_off(self) -> None:
        session, self._on_session = self._on_session, None
        if session is None:
            return
        unregister_events(self.shell, pre_run_cell=self._pre_run_cell, post_run_cell=self._post_run_cell)
        watch, self._on_watch = self._on_watch, None
        if watch is not None:
            watch.close()
        session.stop()

    def _pre_run_cell(self, info: Any = None) -> None:
        raw = getattr(info, "raw_cell", None) or ""
        cells = self._on_cells
        if not cells and self._on_session is not None:
            self._on_session.reset()
            self._on_owner = 1
        elif len(cells) == self._on_owner and is_body_of(cells[-1], raw):
            self._on_owner += 1  # the body %%capture runs as a cell: its report belongs inside it
        cells.append(raw)

    def _post_run_cell(self, result: Any = None) -> None:
        if skipped_cell(result):
            return
        ending = len(self._on_cells)
        if self._on_cells:
            self._on_cells.pop()
        session = self._on_session
        if session is None or session.paused or ending != self._on_owner:
            return
        try:
            error = getattr(result, "error_in_exec", None)
            report = session.report(hits_counted=False, cell_error=error if isinstance(error, BaseException) else None)
            self._observed_compiles.extend(report.persistent)
            if report.functions:
                display(with_cell_names(self.shell, report))
        except KeyboardInterrupt:  # Ctrl-C after the cell, while its report was built
            print(INTERRUPTED, file=sys.stderr)
        except Exception as exc:  # noqa: BLE001 - never disturb the cell
            print(f"jaxshow: could not build the %jaxcache report: {type(exc).__name__}: {exc}")

    def shutdown(self) -> None:
        """Undo ``%jaxcache on`` and a freeze, saying so, and end an open cell (called on ``%unload_ext``, and by
        ``%reload_ext``, which loads jaxshow afresh)."""
        self.abandon()
        ended = [name for name, active in (("%jaxcache on", self._on_session is not None),
                                           ("%jaxcache freeze", self._freeze is not None and self._freeze.active)) if active]
        self._turn_off()
        if self._freeze is not None:
            self._freeze.stop()
        if ended:
            print(fitted(f"{' and '.join(ended)} ended: jaxshow was unloaded (%unload_ext or %reload_ext); "
                         f"run {' and '.join(ended)} again to go on."))

    # --- cell form: the runner's protocol (cellrun.CellMagic) and run_cell_magic ---------

    def abandon(self) -> None:
        """End an open cell without a report (also Ctrl-C while the report is built); ``%jaxcache on`` goes on."""
        if self._cell is None:
            return
        opened = self._cell
        try:
            opened.watch.close()
            if opened.freeze is not None:
                opened.freeze.stop()
            opened.session.stop()
        finally:
            self._cell = None
            if self._on_session is not None:
                self._on_session.paused = False

    def accepts(self, line: str, cell: str) -> bool:
        try:
            self._parse(line, cell_form=True)
        except UsageError:
            return False
        return True

    def open(self, line: str, raw_cell: str) -> DirectCalls:
        args = self._parse(line, cell_form=True)
        output = args.output
        if self._cell is not None:
            self.close(None, 0.0)
        if self._on_session is not None:
            self._on_session.paused = True
        session = retrace.Session(jax_text="always", is_cell_file=is_cell_file(self.shell), line_place=self.line_place,
                                  cell_line=cell_line(self.shell), label=functools.partial(label_cells, self.shell)).start()
        freeze = None
        if args.words:
            freeze = self._new_freeze()
            freeze.freeze(args.max_traces or 0, self._frozen_functions(args.words[1:]))
        notes = tuple(f"%{name}'s {'script' if name == 'run' else 'statement'} runs without jaxshow's call hook: the traces "
                      "it caused are shown, its calls that hit the cache are not counted" for name in unhooked_magics(raw_cell))
        calls = DirectCalls(None, retrace.CallCounter(session))
        self._cell = _OpenCell(session, output, freeze, notes, calls, RefusalWatch(calls).open())
        return calls

    def close(self, error: BaseException | None, seconds: float, *, ran: bool = True, notes: tuple[str, ...] = ()) -> None:
        if self._cell is None:
            return
        opened = self._cell
        self.abandon()
        if not ran:
            return
        try:
            report = opened.session.report(hits_counted=True, cell_error=error, jit_disabled=opened.calls.jit_disabled_by())
            report = with_cell_names(self.shell, report)
            report = dataclasses.replace(report, notes=(*report.notes, *opened.notes, *notes), unseen_inside=opened.calls.unseen_helpers())
        except Exception as exc:  # noqa: BLE001 - jaxshow's failure must not mask the cell's outcome
            report = CacheReport(functions=(), notes=(f"jaxshow could not build the report: {type(exc).__name__}: {exc}",),
                                 cell_error=ErrorSummary.from_exception(error) if error else None)
        self._observed_compiles.extend(report.persistent)
        display(report)
        if opened.output:
            self.shell.user_ns[opened.output] = report


def _not_jitted(name: str, value: Any) -> str:
    """Why ``name`` has no trace history of its own: jit a plain function first; another library's wrapper jits inside."""
    kind = type(value)
    if pmapped_jit(value):
        return f"{name!r} is a jax.pmap, not a jax.jit wrapper: %jaxcache {name} shows its traces; clear and freeze take a jax.jit wrapper"
    if kind is types.FunctionType or not callable(value):
        return f"{name!r} is not a jitted function (it is {a_or_an(kind.__name__)}); jax.jit it first"
    return (f"{name!r} is a {kind.__module__}.{kind.__qualname__}, not a jax.jit wrapper, so it has no trace history of its own: "
            "%jaxcache on (or %%jaxcache on a cell that calls it) shows the traces of what it jits")
