"""Load and unload jaxshow in an IPython shell, leaving JAX as it was found.

``load_ipython_extension`` registers the magics; ``unload_ipython_extension``
closes every ``jax.monitoring`` collector, lets each magics class undo its own
changes (log handlers, config flags), and removes the magics from the shell.
Loading twice is harmless, so ``%reload_ext jaxshow`` works.
"""

from __future__ import annotations

from typing import Any

from jaxshow import timings
from jaxshow.cache_magic import CacheMagics
from jaxshow.stages_magic import StagesMagics

_MAGICS_CLASSES = (StagesMagics, CacheMagics)
_INSTALLED = "_jaxshow_magics"


def load_ipython_extension(shell: Any) -> None:
    """Register ``%%jaxstages`` and ``%jaxcache`` on ``shell``."""
    if getattr(shell, _INSTALLED, None):
        return
    instances = []
    for cls in _MAGICS_CLASSES:
        magics = cls(shell=shell, config=shell.config)
        shell.register_magics(magics)
        shell.configurables.append(magics)
        instances.append(magics)
    setattr(shell, _INSTALLED, instances)


def unload_ipython_extension(shell: Any) -> None:
    """Undo everything jaxshow did to ``shell`` and to JAX."""
    instances = getattr(shell, _INSTALLED, None) or []
    for magics in reversed(instances):
        close = getattr(magics, "close", None)
        if close is not None:
            close()
        manager = shell.magics_manager
        for kind, names in magics.magics.items():
            for name in names:
                manager.magics[kind].pop(name, None)
        manager.registry.pop(type(magics).__name__, None)
        if magics in shell.configurables:
            shell.configurables.remove(magics)
    timings.close_all_collectors()
    if hasattr(shell, _INSTALLED):
        delattr(shell, _INSTALLED)
