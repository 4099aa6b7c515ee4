"""Load and unload jaxshow in an IPython shell, leaving JAX and the shell as they were found.

``load_ipython_extension`` registers the magics (``%%jaxstages``, ``%jaxcache``,
``%jaxconfig``, ``%jaxdump``) and the cell runner (an input transformer and two
events, see :mod:`jaxshow.cellrun`), and starts ``%jaxdump``'s cell clock (two more
events), its persistent-hit listener and the ``post_execute`` event at which
``%%jaxstages`` forgets a cell's filled-in line;
``unload_ipython_extension`` ends any open capture, lets each magics class undo
its own changes (JAX hooks, log handlers, config flags), removes the runner and
the magics, closes every ``jax.monitoring`` collector and forgets the trace
histories ``%jaxcache`` kept, so a reload starts afresh. Loading twice is
harmless, and ten load/unload cycles leave what one leaves.
"""

from __future__ import annotations

from typing import Any

from jaxshow import retrace, timings
from jaxshow.cache_magic import CacheMagics
from jaxshow.cellrun import CellRunner
from jaxshow.config_magic import JaxConfigMagics
from jaxshow.dump_magic import DumpMagics
from jaxshow.stages_magic import StagesMagics

_INSTALLED = "_jaxshow_installation"


class Installation:
    """Everything jaxshow added to one shell, so unload can take exactly that away."""

    def __init__(self, shell: Any) -> None:
        self.stages = StagesMagics(shell=shell, config=shell.config)
        self.cache = CacheMagics(shell=shell, config=shell.config)
        self.config = JaxConfigMagics(shell=shell, config=shell.config)
        self.dump = DumpMagics(shell=shell, config=shell.config)
        self.runner = CellRunner(shell)
        self.runner.magics.update(jaxstages=self.stages, jaxcache=self.cache)
        self.cache.line_place = self.stages.line_place = self.runner.line_place

    @property
    def magics(self) -> tuple[Any, ...]:
        return (self.stages, self.cache, self.config, self.dump)


def load_ipython_extension(shell: Any) -> None:
    """Register ``%%jaxstages``, ``%jaxcache``, ``%jaxconfig`` and ``%jaxdump`` on ``shell``."""
    if getattr(shell, _INSTALLED, None) is not None:
        return
    installation = Installation(shell)
    for magics in installation.magics:
        shell.register_magics(magics)  # Magics.__init__ has already joined shell.configurables
    installation.runner.install()
    installation.stages.start_observing()
    installation.dump.start_observing()
    setattr(shell, _INSTALLED, installation)


def unload_ipython_extension(shell: Any) -> None:
    """Undo everything jaxshow did to ``shell`` and to JAX."""
    installation = getattr(shell, _INSTALLED, None)
    if installation is None:
        return
    installation.runner.uninstall()
    manager = shell.magics_manager
    for magics in reversed(installation.magics):
        magics.shutdown()
        for kind, names in magics.magics.items():
            for name in names:
                manager.magics[kind].pop(name, None)
        manager.registry.pop(type(magics).__name__, None)
        while magics in shell.configurables:
            shell.configurables.remove(magics)
    timings.close_all_collectors()
    retrace.registry.clear()
    delattr(shell, _INSTALLED)
