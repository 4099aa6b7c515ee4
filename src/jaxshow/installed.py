"""Which files are installed code: the standard library, and what pip installed. Standard library only.

Owns :func:`is_installed`, the one rule both layers ask: capture whose a file is
(:func:`jaxshow.capture.sources.is_user_file`), render which paths a report may
shorten (:func:`jaxshow.render.paths.shown_path`). Installed: a file under the
standard library's or the environment's own folders (sysconfig), a
``site-packages`` or ``dist-packages`` folder, or another folder on ``sys.path``
that pip installed into (one that holds a ``*.dist-info``). A package installed
editable (``pip install -e .``) keeps its files in the project, so they are not.
Imports no other jaxshow module.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig


def _dirs(*keys: str) -> tuple[str, ...]:
    return tuple({os.path.abspath(p) + os.sep for key in keys if (p := sysconfig.get_paths().get(key))})


STDLIB_DIRS = _dirs("stdlib", "platstdlib")
"""The standard library's folders, with trailing separators."""
SITE_DIRS = _dirs("purelib", "platlib")
"""The environment's own folders for installed packages, with trailing separators."""
_INSTALLED_FOLDERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def is_installed(path: str) -> bool:
    """Whether an absolute ``path`` is installed code: the standard library, or what pip installed."""
    return path.startswith(STDLIB_DIRS + SITE_DIRS) or pip_installed(path)


def pip_installed(path: str) -> bool:
    """Whether an absolute ``path`` is in a ``site-packages``/``dist-packages`` folder or another folder pip installed into."""
    return any(f in path for f in _INSTALLED_FOLDERS) or path.startswith(_install_folders(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _install_folders(path_entries: tuple[str, ...]) -> tuple[str, ...]:
    """The folders on ``sys.path`` that hold a ``*.dist-info``: pip installed into them (``pip install --target DIR``
    then ``PYTHONPATH=DIR``, as on a machine whose packages are carried as wheels). The working directory's entry
    (``''``) is left out, so the answer never depends on it."""
    folders = []
    for entry in path_entries:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            with os.scandir(entry) as listed:
                if any(e.name.endswith(".dist-info") for e in listed):
                    folders.append(os.path.abspath(entry) + os.sep)
        except OSError:
            continue
    return tuple(folders)
