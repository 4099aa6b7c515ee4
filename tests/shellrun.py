"""Helpers shared by the magic tests (imported by name: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import atexit
import inspect
import re

import IPython
import pytest
from jax._src import config as jax_config
from IPython.utils.capture import capture_output

IPYTHON_7 = IPython.version_info[0] < 8
"""Colab's IPython (7.34): cells are ``<ipython-input-5-…>`` in tracebacks, not ``Cell In[5]``."""


def run_captured(shell, text):
    """Run a cell as a frontend would; return the ExecutionResult and what was displayed."""
    with capture_output() as cap:
        result = shell.run_cell(text, store_history=True)
    return result, cap


def forget_at_exit(shell):
    """Drop the ``atexit`` hook every ``InteractiveShell`` registers: each runs a full ``gc.collect()`` at exit,
    and a few hundred test shells made pytest's exit take as long as its tests (85 s after 85 s of tests)."""
    atexit.unregister(shell.atexit_operations)


def names_cell_line(traceback: str, number: int, line: int) -> bool:
    """Whether a printed traceback points at line ``line`` of cell ``number``, as this IPython prints it.

    IPython 8 and 9: ``Cell In[5], line 3``. IPython 7: ``<ipython-input-5-…> in <cell line: 0>()``
    with an arrow at ``----> 3``, or ``File "<ipython-input-5-…>", line 3`` for a syntax error.
    """
    if not IPYTHON_7:
        return f"In[{number}], line {line}" in traceback
    cell = rf"<ipython-input-{number}-[0-9a-f]+>"
    return bool(re.search(rf'File "{cell}", line {line}\n', traceback)
                or re.search(rf"{cell} in [^\n]*\n(?:(?!<ipython-input-).*\n)*?-+> {line} ", traceback))


def in_a_real_kernel(*cells: str) -> tuple[list[tuple[int, str, str]], object]:
    """Run ``cells`` as a notebook in a real kernel; each output message as ``(cell, type, text before " (")``, and the notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    client = NotebookClient(nb, timeout=180, kernel_name="python3")
    shown = []
    output = client.output

    def spy(outs, msg, display_id, cell_index):
        shown.append((cell_index, msg["msg_type"], msg["content"].get("data", {}).get("text/plain", "").split(" (")[0]))
        return output(outs, msg, display_id, cell_index)

    client.output = spy
    client.execute()
    return shown, nb


def wider_lines(text: str, width: int, *ir_texts: str) -> list[str]:
    """The lines of ``text`` wider than ``width``, less the lines of ``ir_texts`` (IR never wraps): bare, numbered (a
    collective's excerpt) or marked (``+``, ``-``, ``|``), whole or cut short (``… (N chars)``)."""
    ir = {piece.strip() for t in ir_texts if t for piece in t.splitlines()}

    def is_ir(piece: str) -> bool:
        bare = re.sub(r"^(\d+\s+|[+\-|]\s*)", "", piece.strip())
        cut = re.sub(r"… \([\d,]+ chars\)$", "", bare)
        return piece.strip() in ir or bare in ir or cut != bare and any(i.startswith(cut) for i in ir)

    return [piece for piece in text.splitlines() if len(piece) > width and not is_ir(piece)]


def unwrapped(text: str) -> str:
    """``text`` with the lines jaxshow wrapped at the width joined again: a line break and the indent after it read
    as the one space they replaced."""
    return re.sub(r"\n +", " ", text)


DEFINES_OPTION = ("from jax._src import config as C\n"
                  "def define(name):  # a module's option, as jax.experimental.pallas defines its own on jax 0.12\n"
                  "    state = C.bool_state(name, False, 'a test option', include_in_jit_key=True, include_in_trace_context=True)\n"
                  "    setattr(C, '_' + name, state)\n"
                  "def define_state(name):  # a State no option lists (jax.config has no such name), as Pallas's fuser's\n"
                  "    state = C.State(name, False, 'a test state', include_in_jit_key=True, include_in_trace_context=True)\n"
                  "    setattr(C, '_' + name, state)")
"""A kernel's cell that defines ``define(name)``, which adds an option to JAX's trace context, and ``define_state(name)``,
which adds a value no option of ``jax.config`` names (in a kernel of its own: they stay defined)."""

DEFINES_NO_OPTION = pytest.mark.skipif(
    "include_in_trace_context" not in inspect.signature(jax_config.bool_state).parameters,
    reason="jax 0.7's trace context is a fixed tuple: no option can be added to it")
