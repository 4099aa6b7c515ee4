"""Helpers shared by the magic tests (imported by name: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import atexit

from IPython.utils.capture import capture_output


def run_captured(shell, text):
    """Run a cell as a frontend would; return the ExecutionResult and what was displayed."""
    with capture_output() as cap:
        result = shell.run_cell(text, store_history=True)
    return result, cap


def forget_at_exit(shell):
    """Drop the ``atexit`` hook every ``InteractiveShell`` registers: each runs a full ``gc.collect()`` at exit,
    and a few hundred test shells made pytest's exit take as long as its tests (85 s after 85 s of tests)."""
    atexit.unregister(shell.atexit_operations)
