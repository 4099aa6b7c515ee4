"""Helpers shared by the magic tests (imported by name: pytest puts tests/ on sys.path)."""

from __future__ import annotations

from IPython.utils.capture import capture_output


def run_captured(shell, text):
    """Run a cell as a frontend would; return the ExecutionResult and what was displayed."""
    with capture_output() as cap:
        result = shell.run_cell(text, store_history=True)
    return result, cap
