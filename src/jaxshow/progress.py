"""A line under a running cell while a long trace, lowering or compile is under way (IPython display glue).

``StageProgress`` is handed to a capture as its ``progress`` callback. Nothing
is shown for a stage that ends within ``after_seconds``; once one runs longer,
a display shows ``compiling train_step (since 12:03:05)…`` and is updated in
place as each later stage of that call starts, through its display id, and
emptied when the cell ends (the report follows). Another call's stage, or a
later call's, takes the line only once it too outlasts ``after_seconds``. Every display is made in the context
(``contextvars``) of the cell that opened the capture, so the kernel sends it
to that cell's output whichever thread makes it: the timer's, or a thread
that compiles while the cell runs.
"""

from __future__ import annotations

import contextvars
import html
import threading
import time
from typing import Any, Callable

from IPython.display import display, update_display

from jaxshow.render.style import MUTED_STYLE


_DOING = {"trace": "tracing", "lower": "lowering", "compile": "compiling", "run": "running"}
"""The stage a call failed in (``CallRecord.failed_in``), as the line says it."""


class StageProgress:
    """Shows which stage of which call is under way once a stage outlasts ``after_seconds`` (0: at once; < 0: never)."""

    def __init__(self, after_seconds: float = 1.0, *, clock: Callable[[], float] = time.time) -> None:
        self.after_seconds = after_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._stage: tuple[str, str, float] | None = None
        self._done: list[str] = []
        self._display_id: str | None = None
        self._showing = False
        """Whether the line shows the stage under way: then the call's next stages replace it at once; another call's
        (or this one's after it ended) only once it too outlasts ``after_seconds``."""
        self._timer: threading.Timer | None = None
        self._closed = False
        self._context = contextvars.copy_context()

    def __call__(self, stage: str | None, function: str, failed_in: str | None = None) -> None:
        """A stage of ``function`` started (``None``: its stages ended, in an error in the stage ``failed_in`` if given)."""
        if self.after_seconds < 0:
            return
        with self._lock:
            if self._closed:
                return
            if self._stage is not None and self._stage[1] == function:
                self._done.append(f"{self._stage[0]} {self._clock() - self._stage[2]:.1f} s")
            if stage is None:
                if self._showing and self._done:
                    outcome = f"failed while {_DOING.get(failed_in, failed_in)}" if failed_in else "done"
                    self._update(f"jaxshow: {function} {outcome} ({', '.join(self._done)})")
                self._stage, self._done, self._showing = None, [], False
                return
            if self._stage is None or self._stage[1] != function:
                self._done, self._showing = [], False
            self._stage = (stage, function, self._clock())
            if self._showing or self.after_seconds == 0:
                self._show()
            elif self._timer is None:
                self._arm(self.after_seconds)

    def close(self) -> None:
        """The cell ended: stop the timer and empty the line, if one was shown."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._display_id is not None:
                self._context.run(update_display, {"text/plain": ""}, raw=True, display_id=self._display_id)

    def _arm(self, seconds: float) -> None:
        """Look again in ``seconds`` (called with the lock held)."""
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or self._stage is None:
                return
            age = self._clock() - self._stage[2]
            if age >= self.after_seconds * 0.99:
                self._show()
            else:  # a stage that started after the timer did (a compile after a short trace): looked at when it is due
                self._arm(self.after_seconds - age)

    def _show(self) -> None:
        """Display or update the line for the stage under way (called with the lock held)."""
        assert self._stage is not None
        stage, function, started = self._stage
        since = time.strftime("%H:%M:%S", time.localtime(started))
        done = f"; {', '.join(self._done)}" if self._done else ""
        self._update(f"jaxshow: {stage} {function} (since {since}{done})…")
        self._showing = True

    def _update(self, text: str) -> None:
        bundle: dict[str, Any] = {
            "text/plain": text,
            "text/html": f'<div class="jaxshow-progress" style="{MUTED_STYLE}">{html.escape(text, quote=False)}</div>',
        }
        if self._display_id is None:
            handle = self._context.run(display, bundle, raw=True, display_id=True)
            self._display_id = getattr(handle, "display_id", None)
        else:
            self._context.run(update_display, bundle, raw=True, display_id=self._display_id)
