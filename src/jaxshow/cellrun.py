"""Run a cell body the way IPython does, optionally routing its calls through a hook.

The cell is transformed, cached under the shell's own cell filename (so
tracebacks and JAX's source locations point at the user's lines), executed once
in ``shell.user_ns``, and its trailing expression is evaluated and returned so
that it becomes ``Out[n]``. Exceptions propagate unchanged.

With a hook, every call written in the cell's own statements, ``f(x)``, runs as
``hook(f)(x)``: the hook sees the callable before the call and returns what to
call, normally ``f`` itself, so the call still happens in the cell's own frame
(``locals()``, ``%time`` and other frame-reading callees behave as before).
Calls inside functions, lambdas, classes and generator expressions defined in
the cell are left alone: they may run after the cell has finished, when the
hook is gone.

Uses only the shell object passed in; no JAX.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable

HOOK_NAME = "__jaxshow_call__"
_CELL_FILENAME = re.compile(r"<ipython-input-\d+-[0-9a-f]+>|[^\s\"'()]*ipykernel_\d+/\d+\.py")


class _CallRewriter(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``__jaxshow_call__(f)(a, *b, k=c)`` in the cell's own statements."""

    def _leave_alone(self, node: ast.AST) -> ast.AST:
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _leave_alone
    visit_GeneratorExp = _leave_alone

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        hook = ast.copy_location(ast.Call(func=ast.Name(id=HOOK_NAME, ctx=ast.Load()), args=[node.func], keywords=[]), node)
        return ast.copy_location(ast.Call(func=hook, args=node.args, keywords=node.keywords), node)


def run_cell(shell: Any, cell: str, hook: Callable | None = None) -> Any:
    """Execute ``cell`` once in the shell's namespace and return its trailing expression's value."""
    __tracebackhide__ = True
    code = shell.transform_cell(cell)
    filename = shell.compile.cache(code, shell.execution_count, raw_code=cell)
    tree = shell.transform_ast(shell.compile.ast_parse(code, filename=filename))
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    if hook is not None:
        tree = ast.fix_missing_locations(_CallRewriter().visit(tree))
        if last is not None:
            last = ast.fix_missing_locations(_CallRewriter().visit(last))
    namespace = shell.user_ns
    had_name = HOOK_NAME in namespace
    if hook is not None:
        namespace[HOOK_NAME] = hook
    try:
        exec(shell.compile(tree, filename, "exec"), namespace)
        return eval(shell.compile(last, filename, "eval"), namespace) if last is not None else None
    finally:
        if hook is not None and not had_name:
            namespace.pop(HOOK_NAME, None)


def run_cell_catching(shell: Any, cell: str, hook: Callable | None = None) -> tuple[Any, BaseException | None]:
    """``run_cell``, returning ``(value, exception)`` so a magic can report before re-raising.

    ``KeyboardInterrupt`` and ``SystemExit`` are not caught: they pass straight through.
    """
    __tracebackhide__ = True
    try:
        return run_cell(shell, cell, hook=hook), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        return None, exc


def label_cells(shell: Any, text: str) -> str:
    """Replace the shell's cell file names in ``text`` by ``In[5]``, as tracebacks name them.

    Terminal IPython names a cell ``<ipython-input-5-…>``, ipykernel
    ``/tmp/ipykernel_…/….py``; both are opaque to a reader.
    """

    def label(match: re.Match) -> str:
        name = shell.compile.format_code_name(match.group())
        return name[1] if name else match.group()

    return _CELL_FILENAME.sub(label, text)
