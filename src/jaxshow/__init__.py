"""jaxshow: see what JAX did with your notebook cell.

``%load_ext jaxshow`` adds ``%%jaxstages``, ``%jaxcache``, ``%jaxconfig`` and ``%jaxdump``. Beneath them,
:func:`stages` walks a call through ``jax.jit`` -> ``Traced`` -> ``Lowered`` ->
``Compiled`` and returns a plain record that renders as HTML in a notebook and
as text in a terminal.
"""

from __future__ import annotations

import functools
import sys

from jaxshow.report import (
    ArgSpec,
    CellReport,
    CompiledStation,
    ConfigOption,
    ConfigReport,
    CostAnalysis,
    ErrorSummary,
    LoweredStation,
    MemoryStats,
    SavedFile,
    SavedReport,
    StageTimings,
    StagesReport,
    TracedStation,
    WrapperStation,
)
from jaxshow.errors import RetraceError
from jaxshow import render  # noqa: F401  (fills report.RENDERERS; imports no JAX and no IPython)

__version__ = "0.1.0"

__all__ = [
    "ArgSpec",
    "CellReport",
    "CompiledStation",
    "ConfigOption",
    "ConfigReport",
    "CostAnalysis",
    "ErrorSummary",
    "LoweredStation",
    "MemoryStats",
    "RetraceError",
    "SavedFile",
    "SavedReport",
    "StageTimings",
    "StagesReport",
    "TracedStation",
    "WrapperStation",
    "config_report",
    "dump_report",
    "explain",
    "load_ipython_extension",
    "save",
    "stages",
    "stages_with",
    "unload_ipython_extension",
]


def stages(fn, /, *args, **kwargs):
    """Walk ``fn(*args, **kwargs)`` through JAX's stages ahead of time; see :func:`jaxshow.capture.aot.stages`."""
    return stages_with()(fn, *args, **kwargs)


def stages_with(*, dialect: str = "stablehlo", debug_info: bool = False, source: bool = False):
    """``jaxshow.stages`` with options: ``jaxshow.stages_with(dialect="hlo")(f, x)``; see :func:`jaxshow.capture.aot.stages_with`."""
    from jaxshow.capture.aot import stages_with as _stages_with

    return _stages_with(dialect=dialect, debug_info=debug_info, source=source, **_cell_names())


def _cell_names() -> dict:
    """Where IPython runs this, its names for its cells (``In[4]``, as tracebacks and the magics say), for the Python API's
    reports; elsewhere none."""
    shell = _running_shell()
    if shell is None:
        return {}
    from jaxshow import cellrun

    return {"label": functools.partial(cellrun.label_location, shell), "label_text": functools.partial(cellrun.label_cells, shell)}


def save(report, directory):
    """Write a report's stations and its HTML to ``directory``; see :func:`jaxshow.record_files.save_report`.

    Returns a :class:`~jaxshow.report.SavedReport` listing the files (and any
    that replaced a file of the same name); raises ``OSError`` when
    ``directory`` is not usable or a file could not be written, ``TypeError``
    when ``report`` is not a ``StagesReport`` or ``CellReport``.
    """
    from jaxshow.record_files import save_report
    from jaxshow.report import plural

    saved = save_report(report, directory)
    if saved.error:
        written = f" ({plural(len(saved.files), 'file')} written to {saved.directory} before it)" if saved.files else ""
        raise OSError(f"jaxshow.save: {saved.error}{written}")
    return saved


def config_report(filter=None, *, changed=False, kind=None):  # noqa: A002
    """Every config option of the running JAX that matches; see :func:`jaxshow.config_inventory.config_report`."""
    from jaxshow.config_inventory import config_report as _config_report

    return _config_report(filter, changed=changed, kind=kind)


def _running_shell():
    """The IPython shell this code runs in, else ``None`` (jaxshow's IPython layer is imported only where IPython is)."""
    if "IPython" not in sys.modules:
        return None
    from jaxshow.cellrun import running_shell

    return running_shell()


def explain(*, jax_text: str = "always"):
    """Explain every trace of a jitted function inside a ``with`` block; see :func:`jaxshow.retrace.explain`.

    ``jax_text``: ``"always"`` quotes JAX's own explanation of each miss, ``"when_cheap"`` only while JAX's tracing
    cache is small, ``"never"`` uses jaxshow's own history only.
    """
    from jaxshow.retrace import explain as _explain

    shell = _running_shell()
    if shell is None:
        return _explain(jax_text=jax_text)
    from jaxshow import cellrun

    return _explain(jax_text=jax_text, named=functools.partial(cellrun.with_cell_names, shell),
                    is_cell_file=cellrun.is_cell_file(shell), cell_line=cellrun.cell_line(shell),
                    label=functools.partial(cellrun.label_cells, shell))


def dump_report(name=None, **kwargs):
    """How JAX's IR dumping is set and the dump files by function; see :func:`jaxshow.dumps.dump_report`."""
    from jaxshow.dumps import dump_report as _dump_report

    return _dump_report(name, **kwargs)


def load_ipython_extension(shell) -> None:
    from jaxshow.extension import load_ipython_extension as _load

    _load(shell)


def unload_ipython_extension(shell) -> None:
    from jaxshow.extension import unload_ipython_extension as _unload

    _unload(shell)
