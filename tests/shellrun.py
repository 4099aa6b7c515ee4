"""Helpers shared by the magic tests (imported by name: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import atexit
import re

import IPython
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
