"""``%jaxdump``: JAX's and XLA's IR dump files, by function and by the cell that wrote them.

Glue only: options, the cell clock (``pre_run_cell``/``post_run_cell`` note each
cell's ``In[n]``, wall-clock start and end, and the numbers JAX's next dumps
get: a few microseconds and a record per cell), the persistent-hit watcher's lifetime, ``In[n]`` labels, and
display. The capture lives in :mod:`jaxshow.dumps`.
"""

from __future__ import annotations

import functools
import os
import time
from collections import deque
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display
from traitlets import Integer

from jaxshow import dumps, render
from jaxshow.cellrun import cell_number, label_cells, skipped_cell, unregister_events
from jaxshow.magic_args import GivenOnce, counter_meant, directory_meant, expand_variables, fitted_errors, output_name_error, parse_options, silenced, usage

CELLS_KEPT = 10_000


@magics_class
class DumpMagics(Magics):
    """The ``%jaxdump`` line magic, the cell clock it reads, and the persistent-hit watcher."""

    highlight_max_bytes = Integer(200_000, help="Highlight dump texts up to this size; larger ones are shown plain.").tag(config=True)
    max_lines = Integer(500, help="Show at most this many lines of each dump text or diff.").tag(config=True)
    read_max_bytes = Integer(dumps.READ_MAX_BYTES, help="Read at most this many bytes of a dump file to show or diff it.").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._cells: deque[dumps.CellSpan] = deque(maxlen=CELLS_KEPT)
        self._running: dumps.CellSpan | None = None
        self._inner = 0
        """Cells running inside the running one (``get_ipython().run_cell``, ``%%capture``): its span covers them."""
        self._loaded_at: float | None = None
        self._watcher = dumps.HitWatcher()

    # lifecycle (extension.Installation) ---------------------------------------------------------

    def start_observing(self) -> None:
        """Start noting cells and persistent-cache hits (on load)."""
        if self._loaded_at is not None:
            return
        self._loaded_at = time.time()
        self._watcher.start()
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.events.register("post_run_cell", self._post_run_cell)

    def shutdown(self) -> None:
        """Stop noting cells and hits (called on ``%unload_ext``)."""
        unregister_events(self.shell, pre_run_cell=self._pre_run_cell, post_run_cell=self._post_run_cell)
        self._watcher.stop()
        self._loaded_at = None

    def _pre_run_cell(self, info: Any = None) -> None:
        if self._running is not None:
            self._inner += 1
            return
        number = self.shell.execution_count if getattr(info, "store_history", True) else None
        self._running = dumps.CellSpan.began(number)

    def _post_run_cell(self, result: Any = None) -> None:
        if skipped_cell(result):
            return
        if self._inner:
            self._inner -= 1
            return
        running, self._running = self._running, None
        if running is not None:
            number = getattr(result, "execution_count", None) or running.number
            self._cells.append(running.ended(number))

    def cell_spans(self) -> tuple[dumps.CellSpan, ...]:
        spans = list(self._cells)
        if self._running is not None:
            # IPython 9 counts the cell before pre_run_cell (execution_count is already n + 1 there), 8.x after it:
            # while the cell runs, its own result says which it is
            number = self._running.number if self._running.number is None or self._inner else cell_number(self.shell)
            spans.append(self._running.numbered(number))
        return tuple(spans)

    # the magic ---------------------------------------------------------------------------------

    @magic_arguments()
    @argument("name", nargs="?", metavar="NAME", help="A function (f or jit_f), a dump file name, or a counter (2: jax_ir0002_…).")
    @argument("--dir", metavar="DIR", action=GivenOnce, meaning=directory_meant,
              help="Read this directory instead of jax_dump_ir_to (an earlier run's dump, say).")
    @argument("--diff", nargs=2, metavar=("A", "B"), action=GivenOnce, meaning=counter_meant,
              help="Show a unified diff of two dump files, each a file name or counter.")
    @argument("-o", "--output", metavar="NAME", action=GivenOnce, help="Also store the report object in the variable NAME.")
    @no_var_expand
    @line_magic
    @fitted_errors
    def jaxdump(self, line: str):
        """Show JAX's IR dump files: how dumping is set, which cell wrote each.

        JAX writes the StableHLO module of every compile (and, with the modes
        ``jaxpr``, ``jaxpr_html``, ``eqn_count_pprof``, the jaxpr at every
        lowering) to ``jax_dump_ir_to``. The variable ``JAX_DUMP_IR_TO`` is read
        only when JAX is imported; ``jax.config.update('jax_dump_ir_to', dir)``
        works at any time. This magic says which of the two set it, warns when
        the variable was set too late or a mode name is unknown (JAX ignores it
        silently), and lists the files grouped by function and by the cell
        ``In[n]`` that wrote them (files older than ``%load_ext jaxshow`` are
        "before jaxshow was loaded"), explaining the names: counter, module,
        stage. A module dump that a persistent-cache hit served (JAX dumps it
        before the lookup) is marked. XLA's own dump (``--xla_dump_to`` in
        ``XLA_FLAGS``) is listed by module and pass.

        ``%jaxdump NAME`` shows one function's files and its newest jaxpr and
        module, highlighted, with cell file names as ``In[n]``; NAME may also be a
        file name (JAX's or XLA's) or a counter (``2`` is ``jax_ir0002_…``; give a
        jaxpr's file name to pick it). ``--diff A B`` shows a unified diff of two
        files. A trailing ``;`` shows nothing (with ``-o``, the report is still
        stored). Long files are read and shown up to the budget
        (``%config DumpMagics.max_lines``, ``read_max_bytes``), never whole.
        ``{expr}`` and ``$name`` in the line expand from your namespace, and
        ``~`` in ``--dir`` is your home directory.

        Examples::

            %jaxdump
            %jaxdump f
            %jaxdump jax_ir0002_jit_f_compile.mlir
            %jaxdump --diff 2 5
            %jaxdump --dir /tmp/earlier-run -o dumps
        """
        line, silent = silenced(line)
        args = parse_options(self.jaxdump, expand_variables(self.shell, line))
        usage_line = usage(self.jaxdump)
        if args.output is not None and (why := output_name_error(self.shell, args.output)):
            raise UsageError(f"{why}\n{usage_line}")
        if args.diff and args.name:
            raise UsageError(f"--diff A B takes no NAME, got {args.name!r}\n{usage_line}")
        if args.dir is not None and not args.dir.strip():
            raise UsageError(f"--dir needs a directory\n{usage_line}")
        directory = os.path.expanduser(args.dir) if args.dir is not None else None
        label = functools.partial(label_cells, self.shell)
        try:
            if args.diff:
                report: Any = dumps.dump_diff(*args.diff, directory=directory, label_text=label, read_max_bytes=self.read_max_bytes)
            else:
                report = dumps.dump_report(args.name, directory=directory, cells=self.cell_spans(), loaded_at=self._loaded_at,
                                           hits=tuple(self._watcher.hits), label_text=label, read_max_bytes=self.read_max_bytes,
                                           namespace=self.shell.user_ns.values(),
                                           bound=self.shell.user_ns.get(args.name) if args.name and args.name.isidentifier() else None)
        except (LookupError, ValueError) as exc:
            raise UsageError(f"{exc.args[0] if exc.args else exc}\n{usage_line}") from None
        except OSError as exc:
            raise UsageError(f"cannot read the dump: {exc}\n{usage_line}") from None
        if not silent:
            display(render.Rendered(report, render.TextBudget(highlight_max_bytes=self.highlight_max_bytes, max_lines=self.max_lines)))
        if args.output:
            self.shell.user_ns[args.output] = report
        return None
