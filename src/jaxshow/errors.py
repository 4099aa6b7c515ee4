"""jaxshow's public exception: :class:`RetraceError` (stdlib only, so ``import jaxshow`` stays free of JAX)."""

from __future__ import annotations

from jaxshow.report import CacheMiss


class RetraceError(RuntimeError):
    """A jitted function was about to trace again inside a frozen region (``%jaxcache freeze``).

    The message is jaxshow's explanation: what changed in the cache key and
    the user's line that made the call. JAX refused the trace before the
    function's Python ran, so nothing was traced, compiled or cached.
    ``miss`` holds the same explanation as a :class:`~jaxshow.report.CacheMiss`
    and ``traces_allowed`` the new traces the freeze allowed the function.
    """

    def __init__(self, message: str, miss: CacheMiss, traces_allowed: int) -> None:
        super().__init__(message)
        self.miss = miss
        self.traces_allowed = traces_allowed
