"""Library blame: a re-trace of a library's jitted function, traced back to the user's line that led into it.

"The user's own files" are the notebook's cells and the Python files under
the current working directory (the notebook's folder), except those under a
``site-packages`` folder, the standard library, JAX or jaxshow. Any other
file is a library's: an installed package, or a module on ``sys.path`` from
elsewhere. Reads Python frames only; no JAX, no IPython.
"""

from __future__ import annotations

import os
import sysconfig
from typing import Any, Callable

from jaxshow import _jax_compat
from jaxshow.report import LibraryBlame

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIRS = tuple({os.path.abspath(p) + os.sep for k in ("stdlib", "platstdlib") if (p := sysconfig.get_paths().get(k))})
_NOT_LIBRARY_DIRS = (_jax_compat.JAX_DIR, _PACKAGE_DIR, *_STDLIB_DIRS)


def own_file(filename: str, is_cell_file: Callable[[str], bool]) -> bool:
    """Whether ``filename`` is a cell or one of the user's own files (see the module's docstring)."""
    if filename.startswith("<"):
        return filename.startswith("<ipython-input-") or is_cell_file(filename)
    if is_cell_file(filename):
        return True
    path = os.path.abspath(filename)
    cwd = os.path.join(os.getcwd(), "")
    return path.startswith(cwd) and "site-packages" not in path and not path.startswith(_NOT_LIBRARY_DIRS)


def _library_frame(filename: str) -> bool:
    return not filename.startswith("<") and not os.path.abspath(filename).startswith(_NOT_LIBRARY_DIRS)


def library_blame(frame: Any, function: str, defined_in: str | None, is_cell_file: Callable[[str], bool]) -> LibraryBlame | None:
    """Blame for a trace of ``function`` (defined in the file ``defined_in``) seen from ``frame`` out, or ``None``.

    ``None`` when the function is the user's own, or no frame of a library
    lies between the user's line and the trace. Otherwise the innermost frame
    in the user's own code, the outermost library frame it called (the
    library function the user called) and that function's current line.
    """
    if not defined_in or own_file(defined_in, is_cell_file):
        return None
    entry = None
    while frame is not None:
        code = frame.f_code
        if own_file(code.co_filename, is_cell_file):
            if entry is None:
                return None
            name = getattr(entry.f_code, "co_qualname", entry.f_code.co_name)
            module = entry.f_globals.get("__name__")
            return LibraryBlame(
                user_line=f"{code.co_filename}:{frame.f_lineno}",
                library_function=f"{module}.{name}" if module else name,
                library_line=f"{entry.f_code.co_filename}:{entry.f_lineno}",
                traced_function=function,
            )
        if _library_frame(code.co_filename):
            entry = frame
        frame = frame.f_back
    return None
