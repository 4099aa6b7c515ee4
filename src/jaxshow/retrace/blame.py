"""Library blame: a re-trace of a library's jitted function, traced back to the user's line that led into it.

"The user's own files" are what :func:`jaxshow.capture.sources.is_user_file`
says (cells, and any file not installed under ``site-packages``, the standard
library, JAX or jaxshow). A library frame is one in a file
:func:`jaxshow.capture.sources.is_library_file` calls a library's. Reads Python frames only; no IPython.
"""

from __future__ import annotations

from typing import Any

from jaxshow.capture.calls import CellLine, no_cell
from jaxshow.capture.sources import called_frame, frame_function, is_library_file, is_user_file
from jaxshow.report import LibraryBlame


def library_blame(frame: Any, function: str, defined_in: str | None, cell_line: CellLine = no_cell) -> LibraryBlame | None:
    """Blame for a trace of ``function`` (defined in the file ``defined_in``) seen from ``frame`` out, or ``None``.

    ``None`` when the function is the user's own, no frame of a library
    lies between the user's line and the trace, or the library function the
    user's line called is the traced one. Otherwise the innermost frame
    in the user's own code (a cell magic's body too, at its line of the cell
    as ``cell_line`` reads it), the outermost library frame it called (the
    library function the user called) and that function's current line.
    """
    if not defined_in or is_user_file(defined_in):
        return None
    entries: list[Any] = []  # the library frames met, innermost first
    while frame is not None:
        code = frame.f_code
        in_cell = cell_line(frame)
        if in_cell is not None or is_user_file(code.co_filename):
            entry = called_frame(entries)
            called = frame_function(entry) if entry is not None else None
            if called is None or called.rpartition(".")[2] == function:
                # no library between, or the user's line called the jitted function itself, through the library's jit
                # wrapper (diffrax.diffeqsolve under eqx.filter_jit): the arguments are the user's
                return None
            return LibraryBlame(
                user_line=f"{in_cell[0]}:{in_cell[1]}" if in_cell is not None else f"{code.co_filename}:{frame.f_lineno}",
                library_function=called,
                library_line=f"{entry.f_code.co_filename}:{entry.f_lineno}",
                traced_function=function,
            )
        if is_library_file(code.co_filename):
            entries.append(frame)
        frame = frame.f_back
    return None
