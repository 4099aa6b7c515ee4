"""Shared fixtures: a real, history-free IPython shell with jaxshow loaded."""

from __future__ import annotations

import os
import tempfile

import pytest
from IPython.core.interactiveshell import InteractiveShell
from shellrun import forget_at_exit
from traitlets.config import Config

# The text form wraps at the terminal's width, and the tests assert lines as wrapped at 100 columns (the width when
# there is no terminal): pinned, so that a run in an 80-column terminal, or with COLUMNS set, asserts the same lines.
os.environ["COLUMNS"] = "100"
# jaxshow keeps the parts of the persistent-cache keys it sees (jaxshow.keyparts) under ~/.cache/jaxshow: the tests', and
# their subprocesses', in a folder of their own.
os.environ["JAXSHOW_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxshow-test-keys-")


@pytest.fixture
def ip():
    """A fresh singleton ``InteractiveShell`` (so ``display()`` reaches it) with jaxshow loaded."""
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryAccessor.enabled = False
    # %%jaxstages' live line shows once a stage outlasts a second, as a compile on a loaded machine can, and comes
    # before the report: off, so that the tests reading a cell's outputs find its report first (test_progress.py sets it)
    config.StagesMagics.progress_after_seconds = -1.0
    shell = InteractiveShell.instance(config=config)
    shell.run_line_magic("load_ext", "jaxshow")
    yield shell
    shell.run_line_magic("unload_ext", "jaxshow")
    InteractiveShell.clear_instance()
    forget_at_exit(shell)

