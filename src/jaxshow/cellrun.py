"""Let IPython itself run a ``%%jaxstages`` / ``%%jaxcache`` cell, with a capture open around it.

A cleanup input transformer turns the magic's first line into a comment
(same line count, so every location stays right) when its options parse;
``pre_run_cell`` opens the magic's capture and ``post_run_cell`` closes it and
shows the report. Between them IPython runs the cell exactly as any other:
top-level ``await``, every ``ast_node_interactivity`` mode, ``Out[n]`` and
``_``, ``;``, history, ``%time`` inside, tracebacks naming ``In[n]``, one
execution. Options that do not parse leave the cell alone, so the registered
magic raises its usage error before anything runs; so does a magic line with
another cell magic under it (``%%jaxstages`` then ``%%time``), whose body only
IPython's cell-magic call can run: the registered magic then runs it with
:func:`run_cell` under the capture ``pre_run_cell`` opened. A front end that
calls ``run_cell_magic`` directly gets the same capture through :func:`run_magic_cell`.

While a capture is open, an AST transformer rewrites the cell's own calls
``f(x)`` as ``(H.post(H.pre(f, line, col)(x)) or H.after(H.held()()))[0]``
with ``H`` a name in ``builtins`` (never in the user's namespace), so calls
that hit JAX's caches are seen too, with no extra frame between cell and
callee and the argument list evaluated as written.

Uses only the shell object passed in; no JAX.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import difflib
import functools
import itertools
import linecache
import re
import sys
import time
from typing import Any, Callable, Iterator, NamedTuple, Protocol, Sequence

from IPython.core.inputtransformer2 import leading_indent

from jaxshow.capture.labels import labelled_summary
from jaxshow.report import CacheReport, SourceLocation, TraceHistory

HOOK_NAME = "__jaxshow_calls__"
INTERRUPTED = "jaxshow: report interrupted (KeyboardInterrupt); the cell itself had already ended"
_TERMINAL_CELL = re.compile(r"<ipython-input-(\d+)-[0-9a-f]+>")
_KERNEL_CELL_TAIL = re.compile(r"ipykernel_\d+/\d+\.py")
_CELL_LABEL = re.compile(r"In\[(\d+)\]")
_PATH_ENDS = frozenset(" \t\n\"'()")
_UNHOOKED = re.compile(r"(?m)^\s*%%?(timeit|prun|run)\b")


class CellMagic(Protocol):
    """What a magic gives the runner: check options, open before the cell, close after it."""

    def accepts(self, line: str, cell: str) -> bool:
        """Whether ``line`` (the options after ``%%name``) is valid for ``cell`` (the lines under it); if not, the
        magic itself says why."""

    def open(self, line: str, raw_cell: str) -> Any:
        """Start capturing (before the cell runs); returns the call hook for the cell's own calls, or ``None``."""

    def close(self, error: BaseException | None, seconds: float, *, ran: bool = True, notes: tuple[str, ...] = ()) -> None:
        """Stop capturing and show the report, with ``notes``; ``ran=False`` (the cell did not compile): show nothing."""

    def abandon(self) -> None:
        """Stop capturing without a report (idempotent)."""


UNLOADED_MID_CELL = ("jaxshow was unloaded inside this cell (%unload_ext or %reload_ext jaxshow): the report ends there; "
                     "what the cell did after it is not in it")
"""The note of a report whose cell went on after jaxshow was unloaded in it."""


class CellRunner:
    """Installs the transformer and the two events on a shell; dispatches to the magic named on line 1."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.magics: dict[str, CellMagic] = {}
        self._active: tuple[CellMagic, float, _CallRewriter | None] | None = None
        self._running = 0
        """Cells started and not yet ended: above 1, a cell runs inside another (``get_ipython().run_cell(...)``)."""
        self._owner = 0
        """The ``_running`` depth of the cell whose end closes the open capture."""
        self._under: str | None = None
        """The raw cell of the open capture, when its magic line came under another cell magic's
        (``%%capture`` then ``%%jaxstages``), whose body may run as a cell of its own."""
        self._transform = _FirstLineTransform(self)
        self._one_line = _OneLineBody(shell, self._transform)
        self._runs: dict[int, _Run] = {}
        """The front end's id of each cell that ran since jaxshow loaded, with the ids of its lines, by execution count
        (ipykernel 6 passes on the ``cellId`` JupyterLab and VS Code send; terminal IPython and Colab's ipykernel 5 have none)."""
        self._last_ended = 0
        """The execution count of the last cell that ended."""
        self._running_runs: list[_Run | None] = []
        """The runs of the cells started and not yet ended, outermost first (IPython 8 numbers a cell after
        ``pre_run_cell``, IPython 9 before: a running cell's number is read from its file name)."""
        self._last_lines: dict[str, tuple[list[str], tuple[int, ...]]] = {}
        """Each cell's lines as it last ran, with their ids, by the front end's id of the cell."""
        self._line_ids: Iterator[int] = itertools.count(1)

    def install(self) -> None:
        self.shell.input_transformers_cleanup.append(self._transform)
        self.shell.input_transformers_post.append(self._one_line)
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.events.register("post_run_cell", self._post_run_cell)

    def uninstall(self) -> None:
        if self._active is not None:
            self._finish(None, mid_cell=self._running > 0)
        transforms = self.shell.input_transformers_cleanup
        if self._transform in transforms:
            transforms.remove(self._transform)
        if self._one_line in self.shell.input_transformers_post:
            self.shell.input_transformers_post.remove(self._one_line)
        unregister_events(self.shell, pre_run_cell=self._pre_run_cell, post_run_cell=self._post_run_cell)

    # IPython's hooks -----------------------------------------------------------------------

    def _magic_line(self, lines: list[str], *, under_other_magics: bool = False) -> tuple[int, CellMagic, str] | None:
        """The first line naming one of our magics; with ``under_other_magics``, also under ``%%time`` and kin.

        ``%%time`` then ``%%jaxstages`` runs our magic's line inside ``%%time``'s
        body: the capture opens for the whole cell, and the body's own transform
        comments the line out.
        """
        for index, line in enumerate(lines):
            if not line.strip():
                continue
            for name, magic in self.magics.items():
                head = "%%" + name
                if line.startswith(head) and (len(line) == len(head) or line[len(head)].isspace()):
                    return index, magic, line[len(head):].strip()
            if not (under_other_magics and line.startswith("%%")):
                return None
        return None

    def capturing_for_another(self, magic: CellMagic) -> bool:
        """Whether a capture of another of jaxshow's magics is open: a cell that names ``magic`` runs inside that
        magic's cell (``get_ipython().run_cell("%%jaxcache ...")`` in a ``%%jaxstages`` cell)."""
        return self._active is not None and self._active[0] is not magic

    def line_place(self, where: str, line: int) -> tuple[str, int] | None:
        """Line ``line`` of the cell compiled to file ``where``, or labelled ``where`` (``In[5]``), as the front end names
        cells: ``(the cell's id, the line's id)``, which the line keeps when its cell is edited and run again
        (:func:`carried_line_ids`); ``None`` for another file, where the front end sent no id, or for a cell running
        inside another."""
        run = self._run_of(where)
        return (run.cell_id, run.line_ids[line - 1]) if run is not None and 0 < line <= len(run.line_ids) else None

    def _run_of(self, where: str) -> _Run | None:
        number = cell_number_of(self.shell, where)
        if number is None:
            return None
        if number in self._runs:
            return self._runs[number]
        return self._running_runs[0] if len(self._running_runs) == 1 and number > self._last_ended else None

    def _pre_run_cell(self, info: Any = None) -> None:
        self._running += 1
        raw = getattr(info, "raw_cell", None) or ""
        cell_id = getattr(info, "cell_id", None)
        self._running_runs.append(self._run(cell_id, raw) if isinstance(cell_id, str) and getattr(info, "store_history", False) else None)
        if self._active is not None:
            if self._running > 1:  # a cell run inside ours: ours goes on, its calls still hooked
                if self._under is not None and self._owner == self._running - 1 and is_body_of(self._under, raw):
                    self._owner = self._running  # the body of the magic above ours (%%capture): it ends there, inside it
                return
            self._finish(None)
        lines = raw.splitlines(keepends=True)
        found = self._magic_line(lines, under_other_magics=True)
        if found is None:
            return
        index, magic, options = found
        body = "".join(lines[index + 1:])
        if not magic.accepts(options, body) or _magic_under(body):
            return  # the registered magic raises its usage error: nothing runs
        hook = magic.open(options, raw)
        rewriter = self._install_call_hook(hook, raw) if hook is not None else None
        self._active = (magic, time.perf_counter(), rewriter)
        self._owner, self._under = self._running, raw if index else None

    def _post_run_cell(self, result: Any = None) -> None:
        if skipped_cell(result):
            return
        ending = self._running
        self._running = max(self._running - 1, 0)
        run = self._running_runs.pop() if self._running_runs else None
        number = getattr(result, "execution_count", None)
        if isinstance(number, int):
            self._last_ended = max(self._last_ended, number)
            if run is not None:
                self._runs[number] = run
                if len(self._runs) > RUNS_KEPT:
                    del self._runs[next(iter(self._runs))]
        if self._active is None or ending != self._owner:
            return
        ran = getattr(result, "error_before_exec", None) is None
        self._finish(getattr(result, "error_in_exec", None), ran=ran)

    def _run(self, cell_id: str, raw: str) -> _Run:
        """The run of cell ``cell_id`` starting with text ``raw``: its lines' ids carried over from the cell's last run."""
        lines = _leading_empty_lines_dropped(raw.splitlines())
        before, ids = self._last_lines.pop(cell_id, ([], ()))
        line_ids = carried_line_ids(before, ids, lines, self._line_ids)
        self._last_lines[cell_id] = (lines, line_ids)  # the cells run last kept, as the runs are
        if len(self._last_lines) > RUNS_KEPT:
            del self._last_lines[next(iter(self._last_lines))]
        return _Run(cell_id, line_ids)

    def _finish(self, error: BaseException | None, *, ran: bool = True, mid_cell: bool = False) -> None:
        """End the open capture; ``mid_cell``: the cell still runs (``%unload_ext jaxshow`` in it), so its hook stays bound to its end."""
        magic, started, rewriter = self._active  # type: ignore[misc]
        self._active = None
        if rewriter is not None and not mid_cell:
            _calls_ended(rewriter.binding.hook, error)
        self._remove_call_hook(rewriter, after_cell=mid_cell)
        try:
            magic.close(error, time.perf_counter() - started, ran=ran, notes=(UNLOADED_MID_CELL,) if mid_cell else ())
        except KeyboardInterrupt:  # Ctrl-C after the cell, while its report was built: a line, not jaxshow's traceback
            magic.abandon()
            print(INTERRUPTED, file=sys.stderr)

    # the call hook --------------------------------------------------------------------------

    def _install_call_hook(self, hook: Any, cell: str) -> _CallRewriter:
        rewriter = _CallRewriter(_BuiltinName(hook, cell, self.shell.user_ns, self.shell.user_global_ns))
        self.shell.ast_transformers.append(rewriter)
        return rewriter

    def _remove_call_hook(self, rewriter: _CallRewriter | None, *, after_cell: bool = False) -> None:
        """Stop rewriting; unbind the hook now, or (``after_cell``) once the running cell, whose code names it, has ended."""
        if rewriter is None:
            return
        if rewriter in self.shell.ast_transformers:
            self.shell.ast_transformers.remove(rewriter)
        if not after_cell:
            rewriter.binding.remove()
            return
        events = self.shell.events

        def unbind(result: Any = None) -> None:
            rewriter.binding.remove()
            events.unregister("post_run_cell", unbind)

        events.register("post_run_cell", unbind)


class _Run(NamedTuple):
    """One run of a cell the front end named: its id, and the ids of its lines (line 1 first)."""

    cell_id: str
    line_ids: tuple[int, ...]


RUNS_KEPT = 5000
"""How many cell runs keep their ids (:meth:`CellRunner.line_place`), and how many cells their last text: a function
defined in an older run is said to be in no cell the front end named, as in a terminal."""

LINES_COMPARED = 200
"""How many pairs of an old and a new line one run of a cell compares for likeness, at most (about 10 ms)."""


def carried_line_ids(before: Sequence[str], ids: Sequence[int], after: Sequence[str], fresh: Iterator[int]) -> tuple[int, ...]:
    """The ids of a cell's lines ``after`` an edit, given its lines ``before`` and their ``ids``.

    A line kept (as ``difflib`` pairs the two texts), moved elsewhere in the
    cell, or changed in place (the most alike, by half or more, of the lines
    the edit replaced there, in blocks of at most :data:`LINES_COMPARED` pairs
    all told) keeps its id; any other line takes the next id of ``fresh``, as
    does every empty line the edit touched.
    """
    carried: list[int | None] = [None] * len(after)
    blocks, unpaired = [], {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            carried[j1:j2] = ids[i1:i2]
            continue
        blocks.append((range(i1, i2), range(j1, j2)))
        for i in range(i1, i2):
            unpaired.setdefault(before[i], []).append(i)
    taken = set()
    for _, new in blocks:  # moved
        for j in new:
            if after[j].strip() and unpaired.get(after[j]):
                i = unpaired[after[j]].pop(0)
                taken.add(i)
                carried[j] = ids[i]
    budget = LINES_COMPARED
    for old, new in blocks:  # changed in place: a few lines edited, not a cell rewritten (a paste would cost seconds)
        if len(old) * len(new) > budget:
            continue
        budget -= len(old) * len(new)
        for j in (j for j in new if carried[j] is None and after[j].strip()):
            alike = [(difflib.SequenceMatcher(None, before[i], after[j]).ratio(), -i) for i in old if i not in taken]
            if alike and max(alike)[0] >= 0.5:
                i = -max(alike)[1]
                taken.add(i)
                carried[j] = ids[i]
    return tuple(next(fresh) if line_id is None else line_id for line_id in carried)


def _leading_empty_lines_dropped(lines: list[str]) -> list[str]:
    """``lines`` as IPython compiles them: without the empty lines a cell starts with (``leading_empty_lines``)."""
    start = next((i for i, line in enumerate(lines) if line.strip()), 0)
    return lines[start:]


_MISSING = object()


def unregister_events(shell: Any, **callbacks: Callable[..., Any]) -> None:
    """Take each callback off its IPython event (``post_run_cell=f``); one no longer registered is left alone."""
    for event, callback in callbacks.items():
        try:
            shell.events.unregister(event, callback)
        except ValueError:
            pass


def skipped_cell(result: Any) -> bool:
    """Whether ``post_run_cell``'s ``result`` is of an empty cell, which IPython ends with no ``pre_run_cell`` before
    it: its end ends no cell that started (``get_ipython().run_cell("")`` inside a cell)."""
    raw = getattr(getattr(result, "info", None), "raw_cell", None)
    return isinstance(raw, str) and not raw.strip()


def is_body_of(outer: str, cell: str) -> bool:
    """Whether ``cell`` is ``outer`` without one or more of its first lines, each a cell magic's (``%%capture out``):
    the body that magic runs as a cell of its own, inside ``outer``."""
    lines = outer.splitlines(keepends=True)
    wanted = cell.strip()
    for index, line in enumerate(lines):
        if line.strip() and not line.startswith("%%"):
            return False
        if line.strip() and "".join(lines[index + 1:]).strip() == wanted:
            return True
    return False


CELL_MAGICS = ("jaxstages", "jaxcache")
"""jaxshow's cell magics: one per cell, since each comments out its own line and the one under would not run."""


def _magic_under(body: str) -> str | None:
    """The one of jaxshow's cell magics that opens ``body`` (``%%jaxcache`` under ``%%jaxstages``), else ``None``."""
    found = re.match(r"\s*%%(\w+)", next((line for line in body.splitlines() if line.strip()), ""))
    return found.group(1) if found is not None and found.group(1) in CELL_MAGICS else None


def stacked_magic(magic: str, body: str) -> str | None:
    """Why ``%%magic`` cannot take ``body``, which opens with another of jaxshow's cell magics; else ``None``."""
    under = _magic_under(body)
    if under is None:
        return None
    both = " (for both reports: %jaxcache on, then %%jaxstages alone)" if {magic, under} == set(CELL_MAGICS) else ""
    return f"%%{magic} over %%{under}: one of jaxshow's cell magics per cell{both}"


def _cell_magic_follows(lines: list[str]) -> bool:
    """Whether the first line with text in ``lines`` names a cell magic (``%%time``): a comment cannot stand above it."""
    return next((line.startswith("%%") for line in lines if line.strip()), False)


class _BuiltinName:
    """The call hook under a name in ``builtins`` that no user namespace shadows, nor the cell names; put back as found by ``remove``."""

    def __init__(self, hook: Any, cell: str, *namespaces: dict) -> None:
        name = HOOK_NAME
        while name in cell or any(name in namespace for namespace in namespaces):
            name = "_" + name
        self.name = name
        self.hook = hook
        self._saved = builtins.__dict__.get(name, _MISSING)
        builtins.__dict__[name] = hook

    def remove(self) -> None:
        if self._saved is _MISSING:
            builtins.__dict__.pop(self.name, None)
        else:
            builtins.__dict__[self.name] = self._saved


class _FirstLineTransform:
    """``%%jaxstages ARGS`` -> ``# %%jaxstages ARGS`` when the options parse (an IPython cleanup transform)."""

    has_side_effects = True  # so IPython's check_complete skips it: the terminal still waits for the cell's body

    def __init__(self, runner: CellRunner) -> None:
        self._runner = runner
        self.commented: str | None = None
        """The magic line this transform last made a comment of, for :class:`_OneLineBody`."""

    def __call__(self, lines: list[str]) -> list[str]:
        found = self._runner._magic_line(lines)
        if found is None:
            return lines
        index, magic, options = found
        if not magic.accepts(options, "".join(lines[index + 1:])) or _cell_magic_follows(lines[index + 1:]):
            return lines  # IPython calls the registered magic: a usage error, or a body that starts with a cell magic
        if self._runner.capturing_for_another(magic):
            return lines  # a cell run inside the other magic's cell: the registered magic reports on it, as run_cell_magic
        self.commented = "# " + lines[index].rstrip("\n") + "\n"
        return [*lines[:index], self.commented, *_dedented(lines[index + 1:])]


def _dedented(body: list[str]) -> list[str]:
    """A magic's body as IPython cleans up a cell: the indentation of its first line that is not empty taken off each
    line that starts with it (``leading_indent``), so an indented body (pasted from a function) runs as it does
    without the magic, its empty lines left in place so that its line numbers stay the cell's."""
    start = next((i for i, line in enumerate(body) if line.strip()), len(body))
    return [*body[:start], *leading_indent(body[start:])]


class _OneLineBody:
    """A magic cell's one-line body gets IPython's dynamic transforms (automagic ``pip install x``, autocall), as
    ``%%time``'s body does (an IPython post transform).

    IPython applies them to a cell of one line only, and the commented magic
    line (:class:`_FirstLineTransform`) makes the cell two.
    """

    def __init__(self, shell: Any, first_line: _FirstLineTransform) -> None:
        self._shell = shell
        self._first_line = first_line

    def __call__(self, lines: list[str]) -> list[str]:
        commented, self._first_line.commented = self._first_line.commented, None
        index = next((i for i, line in enumerate(lines) if line == commented), None) if commented else None
        if index is None or len(lines) != index + 2:
            return lines
        with self._shell.builtin_trap:
            body = self._shell.prefilter_manager.prefilter_lines(lines[index + 1]) + "\n"
        return [*lines[:index + 1], body]


class _CallRewriter(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``(H.post(H.pre(f, line, col)(a, *b, k=c)) or H.after(H.held()()))[0]`` in the cell's own statements.

    The argument list stays one call's, so CPython evaluates and unpacks it
    as written (:class:`jaxshow.capture.calls.DirectCalls`). Calls inside
    ``def``, ``lambda`` and generator expressions are left alone: they may run
    after the cell, when the hook is gone. A ``class`` body runs as the cell
    defines it: its own calls are rewritten, its methods left alone.
    """

    def __init__(self, binding: _BuiltinName) -> None:
        self.binding = binding
        self.name = binding.name

    def _leave_alone(self, node: ast.AST) -> ast.AST:
        return node

    # ``type X = ...`` (Python 3.12) is evaluated lazily too, like a body
    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_TypeAlias = _leave_alone

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        """Left alone (it runs as it is consumed, maybe after the cell); one that calls anything is named where the
        report says which jitted calls that hit JAX's cache it could not see."""
        if any(isinstance(child, ast.Call) for child in ast.walk(node)):
            self.binding.hook.left_alone("a generator expression")
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        """``x: h(1) = v``: the annotation stays as written (``from __future__ import annotations`` keeps its text)."""
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def _hook(self, method: str, *args: ast.expr) -> ast.Call:
        attribute = ast.Attribute(value=ast.Name(id=self.name, ctx=ast.Load()), attr=method, ctx=ast.Load())
        return ast.Call(func=attribute, args=list(args), keywords=[])

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        pre = self._hook("pre", node.func, ast.Constant(node.lineno), ast.Constant(node.col_offset))
        call = ast.copy_location(ast.Call(func=pre, args=node.args, keywords=node.keywords), node)
        made = ast.copy_location(ast.Call(func=self._hook("held"), args=[], keywords=[]), node)
        either = ast.BoolOp(op=ast.Or(), values=[self._hook("post", call), self._hook("after", made)])
        return ast.copy_location(ast.Subscript(value=either, slice=ast.Constant(0), ctx=ast.Load()), node)

    def visit_Module(self, node: ast.Module) -> ast.AST:
        if _timing_statement() or _too_deep(node):
            return node
        return ast.fix_missing_locations(self.generic_visit(node))

    visit_Interactive = visit_Expression = visit_Module


MAX_DEPTH = 120
"""Deepest cell (AST levels, each call counting the five levels its rewrite adds) whose calls are rewritten.

The rewrite recurses once per level, and CPython's compiler has a depth limit of
its own: a 500-term sum or 170 chained calls raised RecursionError in the
rewrite, and IPython then dropped the transformer. Deeper cells run as written;
their jitted calls are still seen where JAX traces, lowers or compiles them.
"""


def _too_deep(tree: ast.AST) -> bool:
    """Whether ``tree`` (walked without recursion) is deeper than :data:`MAX_DEPTH` once its calls are rewritten."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        depth += 6 if isinstance(node, ast.Call) else 1
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return False


def _timing_statement() -> bool:
    """Whether IPython's ``%timeit`` is transforming the statement it will time (``shell.transform_ast``).

    Its loop must time the user's calls alone: a hook around each call
    would be in every figure it prints (15 µs became 49 µs per call).
    """
    frame = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_name == "timeit" and frame.f_globals.get("__name__") == "IPython.core.magics.execution":
            return True
        frame = frame.f_back
    return False


def unhooked_magics(cell: str) -> tuple[str, ...]:
    """The magics in ``cell`` whose statement runs without the call hook: ``%timeit`` (left alone, so its times are
    the user's calls' alone), ``%prun`` (which compiles its statement itself) and ``%run`` (a script IPython runs
    as a file); their cache hits go unseen."""
    return tuple(dict.fromkeys(match.group(1) for match in _UNHOOKED.finditer(cell)))


def cell_number(shell: Any) -> int:
    """The running cell's ``In[n]``: IPython 9 has already counted it when a cell magic runs, 8.12 not."""
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    number = getattr(result, "execution_count", None)
    return number if number is not None else shell.execution_count


def run_cell(shell: Any, cell: str, hook: Any = None) -> Any:
    """Execute ``cell`` once in the shell's namespace (for ``run_cell_magic`` callers); return its value.

    The body is cached under the running cell's own file name, so tracebacks
    and JAX's source locations say ``In[n]``; its trailing expression's value
    is returned for the magic to return. ``hook``, if given, sees the cell's
    own calls as under IPython's own run, also in code that IPython compiles for
    a magic in the body (``%time f(x)``, a ``%%time`` body).
    """
    __tracebackhide__ = True
    namespace = shell.user_ns
    rewriter = _CallRewriter(_BuiltinName(hook, cell, namespace)) if hook is not None else None
    if rewriter is not None:
        shell.ast_transformers.append(rewriter)
    try:
        code = shell.transform_cell(cell)
        filename = shell.compile.cache(code, cell_number(shell), raw_code=cell)
        tree = shell.transform_ast(shell.compile.ast_parse(code, filename=filename))
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(shell.compile(tree, filename, "exec"), namespace)
        return eval(shell.compile(last, filename, "eval"), namespace) if last is not None else None
    finally:
        if rewriter is not None:
            if rewriter in shell.ast_transformers:
                shell.ast_transformers.remove(rewriter)
            rewriter.binding.remove()


def _calls_ended(hook: Any, error: BaseException | None = None) -> None:
    """Tell the call hook that the cell's calls are over, raising ``error`` (``finish``): a call that raised never reached its ``after``."""
    finish = getattr(hook, "finish", None)
    if finish is not None:
        finish(error)


def run_magic_cell(shell: Any, magic: CellMagic, line: str, cell: str) -> Any:
    """A direct ``run_cell_magic`` call: open the magic's capture, run the body once, close it, re-raise its error."""
    __tracebackhide__ = True
    hook = magic.open(line, cell)
    try:
        value = run_cell(shell, cell, hook=hook)
    except BaseException as exc:  # KeyboardInterrupt and SystemExit too: the report names them, as under IPython's run
        _calls_ended(hook, exc)
        magic.close(exc, 0.0)
        raise
    _calls_ended(hook)
    magic.close(None, 0.0)
    return value


def cell_label(shell: Any, filename: str) -> str | None:
    """``In[5]`` for one of the shell's cell file names, as tracebacks name it; ``None`` for any other file.

    IPython 8 asks its compiler (``format_code_name``, which ipykernel 6
    extends to its ``/tmp/ipykernel_…`` files); IPython 7 (Colab's 7.34, with
    ipykernel 5) names every cell ``<ipython-input-5-…>``, which says its number,
    and keeps its source in ``linecache`` (a name it did not compile is not its cell).
    """
    format_code_name = getattr(shell.compile, "format_code_name", None)
    try:
        if format_code_name is not None:
            found = format_code_name(filename)
            return found[1] if found else None
    except Exception:  # noqa: BLE001 - a file name jaxshow cannot read is not a cell's
        return None
    match = _TERMINAL_CELL.fullmatch(filename)
    return f"In[{match.group(1)}]" if match and filename in linecache.cache else None


_MAGIC_BODIES = frozenset({"<timed exec>", "<timed eval>", "<magic-timeit>"})
"""The file names IPython compiles a ``%time``/``%%time`` or ``%timeit``/``%%timeit`` statement under (``%prun``'s
is cProfile's ``<string>``: :func:`_profiled_body`)."""
_TOP_LEVEL = ("<module>", "<cell line: ")
_RUN_MAGIC = ("run_cell_magic", "run_line_magic")


def cell_line(shell: Any) -> Callable[[Any], tuple[str, int, Any] | None]:
    """A reader of where a frame's line is in the cell as the user sees it (line 1 is the cell's first line).

    It returns ``(cell file, line, outermost frame that line stands for)``, or
    ``None`` for a frame of no cell. A cell magic's body (``%%time``'s
    ``<timed exec>``, the cell ``%%capture`` runs, the body
    :func:`run_cell` runs under ``%%jaxstages``) numbers its lines from its
    own first line: its line k is line L + k of the cell whose line L ran the
    magic, also in a function the body defined while the body runs; a line
    magic's statement (``%time f(x)``) is on the magic's line.
    """

    def located(frame: Any) -> tuple[str, int, Any] | None:
        filename = frame.f_code.co_filename
        body = filename in _MAGIC_BODIES or _profiled_body(frame)
        if not body and cell_label(shell, filename) is None:
            return None
        line, outer = frame.f_lineno or 0, frame.f_back
        while outer is not None:
            code = outer.f_code
            if code.co_name in _RUN_MAGIC and outer.f_globals.get("__name__") == "IPython.core.interactiveshell":
                runner = outer.f_back
                found = located(runner) if runner is not None and runner.f_code.co_name.startswith(_TOP_LEVEL) else None
                if found is None:
                    break
                return found[0], found[1] + line if code.co_name == "run_cell_magic" else found[1], found[2]
            if code.co_filename == filename and code.co_name.startswith(_TOP_LEVEL):  # a function the body defined
                found = located(outer)
                return (found[0], found[1] + line - (outer.f_lineno or 0), frame) if found is not None else None
            if code.co_filename in _MAGIC_BODIES or cell_label(shell, code.co_filename) is not None:
                break
            outer = outer.f_back
        return (filename, line, frame) if not body else None

    return located


def _profiled_body(frame: Any) -> bool:
    """Whether ``frame`` is the statement ``%prun``/``%%prun`` runs: a string cProfile compiled (``<string>``) and runs
    from its ``runctx``; never the other code made from a string (a dataclass's ``__init__``)."""
    caller = frame.f_back
    return (frame.f_code.co_filename == "<string>" and caller is not None and caller.f_code.co_name == "runctx"
            and caller.f_globals.get("__name__") in ("cProfile", "profile"))


def cell_number_of(shell: Any, where: str) -> int | None:
    """The number of the shell's cell compiled to file ``where``, or labelled ``where`` (``In[5]``); ``None`` for any other."""
    match = _CELL_LABEL.fullmatch(where) or _CELL_LABEL.fullmatch(cell_label(shell, where) or "")
    return int(match.group(1)) if match else None


def label_location(shell: Any, location: SourceLocation | None) -> SourceLocation | None:
    """``/tmp/ipykernel_1/123.py`` or ``<ipython-input-5-…>`` -> ``In[5]``, as tracebacks say."""
    if location is None:
        return None
    name = cell_label(shell, location.file)
    return dataclasses.replace(location, file=name) if name else location


def running_shell() -> Any | None:
    """The IPython shell this code runs in (a notebook's kernel, terminal IPython), else ``None``; asked only where
    IPython is imported already."""
    ipython = sys.modules.get("IPython")
    try:
        return ipython.get_ipython() if ipython is not None else None
    except Exception:  # noqa: BLE001 - a shell that cannot be asked is none to name cells by
        return None


def with_cell_names(shell: Any, report: Any) -> Any:
    """A ``%jaxcache`` report (:class:`CacheReport`, :class:`TraceHistory`) with the shell's cell file names read ``In[5]``
    in call sites, definitions, JAX's quoted explanations, the notes and the cell's error."""
    name = functools.partial(label_cells, shell)
    if isinstance(report, CacheReport):
        functions = tuple(
            dataclasses.replace(
                f,
                defined_at=f.defined_at and name(f.defined_at),
                misses=tuple(dataclasses.replace(m, call_site=m.call_site and name(m.call_site), evidence=name(m.evidence),
                                                 evidence_notes=tuple(map(name, m.evidence_notes)),
                                                 summary=name(m.summary),
                                                 blame=m.blame and dataclasses.replace(m.blame, user_line=name(m.blame.user_line)),
                                                 jaxpr_diff=m.jaxpr_diff and dataclasses.replace(m.jaxpr_diff, stage=name(m.jaxpr_diff.stage)))
                             for m in f.misses),
                folded_sites=tuple((name(site), n) for site, n in f.folded_sites),
            )
            for f in report.functions
        )
        return dataclasses.replace(report, functions=functions, notes=tuple(map(name, report.notes)),
                                   cell_error=labelled_summary(report.cell_error, name))
    if isinstance(report, TraceHistory):
        return dataclasses.replace(report, defined_at=report.defined_at and name(report.defined_at))
    return report


def is_cell_file(shell: Any) -> Callable[[str], bool]:
    """A test for "this file name is one of the shell's cells" (cheap: a dict lookup)."""
    return lambda filename: cell_label(shell, filename) is not None


def label_cells(shell: Any, text: str) -> str:
    """Replace the shell's cell file names in ``text`` by ``In[5]``, as tracebacks name them.

    Terminal IPython names a cell ``<ipython-input-5-…>``, ipykernel
    ``/tmp/ipykernel_…/….py``; both are opaque to a reader. Linear in the
    text (an optimised HLO module of megabytes carries them in its metadata).
    """

    def label(name: str) -> str:
        return cell_label(shell, name) or name

    if "<ipython-input-" in text:
        text = _TERMINAL_CELL.sub(lambda m: label(m.group()), text)
    if "ipykernel_" not in text:
        return text
    pieces, done = [], 0
    for match in _KERNEL_CELL_TAIL.finditer(text):
        start = match.start()
        while start > done and text[start - 1] not in _PATH_ENDS:
            start -= 1
        pieces += [text[done:start], label(text[start:match.end()])]
        done = match.end()
    return "".join(pieces) + text[done:]
