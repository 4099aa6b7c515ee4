"""Cost of ``%jaxcache on`` on a cache miss with 1,000 cached signatures, and of ``on`` and ``freeze`` on a hot loop of cache hits.

Not run by pytest. Usage::

    python benchmarks/jaxcache_overhead.py            # all three cases
    python benchmarks/jaxcache_overhead.py scale      # only the "10, 100, 1,000 signatures" case
    python benchmarks/jaxcache_overhead.py hot        # only the hot loop (off, %jaxcache on, %jaxcache freeze)
    python benchmarks/jaxcache_overhead.py static     # only a miss of a function with a static object, at 1,000 signatures
    python benchmarks/jaxcache_overhead.py new        # only the first trace of a new function, with 300 to 36,000 cache entries

Each configuration (JAX's flag off with jaxshow off; jaxshow's ``on`` mode, i.e.
the session ``%jaxcache on`` starts; JAX's own ``jax_explain_cache_misses``)
is measured in alternation in one process, and medians are reported.

The scale case measures one miss with 10, 100 and 1,000 earlier signatures of
the same function, two kinds of miss: ``trace`` (``f.trace(ShapeDtypeStruct)``:
trace only, where jaxshow's share is largest) and ``call`` (``f(np.zeros(n))``:
trace, lower and compile). Per level and round a fresh function is filled with
its signatures under an open session (so jaxshow's history is full), then a
block of plain misses (the session stopped: JAX as without jaxshow) and a block
of ``on`` misses (the session started, as ``%jaxcache on`` leaves it between
cells), in alternating order; the first miss of each block is not counted
(``%jaxcache on`` starts its session once, not per miss). It then reports the
size of the report of the 1,000-signature function and the time to build it.
"""

from __future__ import annotations

import logging
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxshow import retrace
from jaxshow._jax_compat import jit_function
from jaxshow.retrace.freeze import Freeze

SIGNATURES = 1_000
MISSES_PER_ROUND = 5
ROUNDS = 6
HOT_CALLS = 10_000
HOT_ROUNDS = 7
SCALE_LEVELS = (10, 100, 1_000)
SCALE_ROUNDS = 12
SCALE_MISSES = 6  # per mode, per round
CACHE_SIZES = (300, 9_000, 36_000)  # entries in JAX's tracing cache, all functions together
NEW_ROUNDS = 6
NEW_FUNCTIONS = 5  # per mode, per round


def fill(f) -> int:
    for n in range(1, SIGNATURES + 1):
        f(jnp.zeros((n,), jnp.float32))
    return SIGNATURES + 1


def time_misses(f, start: int, count: int) -> tuple[list[float], int]:
    samples = []
    n = start
    for _ in range(count):
        x = jnp.zeros((n,), jnp.float32)
        t = time.perf_counter()
        f(x).block_until_ready()
        samples.append(time.perf_counter() - t)
        n += 1
    return samples, n


def _miss(kind: str, f, n: int) -> tuple[float, float]:
    """One miss of ``f`` with a new shape: (wall seconds, CPU seconds of this process)."""
    if kind == "trace":
        x = jax.ShapeDtypeStruct((n,), jnp.float32)
        t, c = time.perf_counter(), time.process_time()
        f.trace(x)
        return time.perf_counter() - t, time.process_time() - c
    x = np.zeros((n,), np.float32)
    t, c = time.perf_counter(), time.process_time()
    f(x).block_until_ready()
    return time.perf_counter() - t, time.process_time() - c


def scale() -> None:
    """The ratio (miss under ``%jaxcache on`` / plain miss) at 10, 100 and 1,000 earlier signatures, and the report's size."""
    samples = {(kind, level, mode): [] for kind in ("trace", "call") for level in SCALE_LEVELS for mode in ("plain", "on")}
    for r in range(SCALE_ROUNDS):
        for level in SCALE_LEVELS:
            for kind in ("trace", "call"):
                def f(x):
                    return x * 2 + 1

                f = jax.jit(f)
                session = retrace.Session(jax_text="when_cheap").start()
                try:
                    for n in range(1, level + 1):
                        f.trace(jax.ShapeDtypeStruct((n,), jnp.float32))
                finally:
                    session.stop()
                session.reset()  # a new cell: the history jaxshow keeps per function stays
                n = level + 1
                for mode in (("plain", "on"), ("on", "plain"))[r % 2]:
                    if mode == "on":
                        session.start()
                    try:
                        _miss(kind, f, n)  # not counted: the first miss after starting or stopping a session
                        n += 1
                        for _ in range(SCALE_MISSES):
                            samples[(kind, level, mode)].append(_miss(kind, f, n))
                            n += 1
                    finally:
                        if mode == "on":
                            session.stop()
    print(f"one miss with N earlier signatures of the function (medians of {SCALE_ROUNDS * SCALE_MISSES} misses each, "
          f"{SCALE_ROUNDS} blocks of {SCALE_MISSES};")
    print("  wall time, and the process's CPU time, which other processes on the machine disturb less):")
    print(f"  {'kind':<6} {'N':>6} {'plain':>10} {'%jaxcache on':>13} {'ratio':>7} {'CPU ratio':>10}")
    for kind in ("trace", "call"):
        for level in SCALE_LEVELS:
            plain = statistics.median(w for w, _ in samples[(kind, level, "plain")])
            on = statistics.median(w for w, _ in samples[(kind, level, "on")])
            plain_cpu = statistics.median(c for _, c in samples[(kind, level, "plain")])
            on_cpu = statistics.median(c for _, c in samples[(kind, level, "on")])
            print(f"  {kind:<6} {level:>6,} {plain * 1e3:7.2f} ms {on * 1e3:10.2f} ms {on / plain:6.2f}x {on_cpu / plain_cpu:9.2f}x")

    # The report of one cell in which a function traced 1,000 times under %jaxcache on.
    def g(x):
        return x - 1

    g = jax.jit(g)
    session = retrace.Session(jax_text="when_cheap").start()
    t = time.perf_counter()
    try:
        for n in range(1, SCALE_LEVELS[-1] + 1):
            g.trace(jax.ShapeDtypeStruct((n,), jnp.float32))
    finally:
        session.stop()
    loop = time.perf_counter() - t
    t = time.perf_counter()
    report = session.report()
    built = time.perf_counter() - t
    t = time.perf_counter()
    page = report._repr_html_()
    html_s = time.perf_counter() - t
    t = time.perf_counter()
    text = str(report)
    text_s = time.perf_counter() - t
    stats = report.functions[0]
    print(f"report of a cell with {SCALE_LEVELS[-1]:,} trace misses of one function (the loop took {loop:.2f} s):")
    print(f"  misses explained in detail: {len(stats.misses)}, left out: {getattr(stats, 'misses_left_out', 0)}")
    print(f"  build {built * 1e3:.1f} ms, HTML {html_s * 1e3:.1f} ms / {len(page.encode()):,} bytes, "
          f"text {text_s * 1e3:.1f} ms / {len(text.encode()):,} bytes")


def misses() -> None:
    """One miss at 1,000 cached signatures: plain, ``%jaxcache on`` and JAX's own flag, alternating."""
    @jax.jit
    def f(x):
        return x * 2 + 1

    n = fill(f)
    modes = {"off": [], "jaxshow_on": [], "jax_flag": []}
    for _ in range(ROUNDS):
        for mode in modes:
            session = retrace.Session(jax_text="when_cheap").start() if mode == "jaxshow_on" else None
            if mode == "jax_flag":
                jax.config.update("jax_explain_cache_misses", True)
            try:
                samples, n = time_misses(f, n, MISSES_PER_ROUND)
            finally:
                if session is not None:
                    session.stop()
                jax.config.update("jax_explain_cache_misses", False)
            modes[mode].extend(samples)
    med = {m: statistics.median(s) for m, s in modes.items()}
    print(f"miss with {SIGNATURES} cached signatures of one function (medians of {ROUNDS * MISSES_PER_ROUND} calls each):")
    for m, v in med.items():
        print(f"  {m:<11} {v * 1e3:8.2f} ms")
    print(f"  ratio %jaxcache on / off        = {med['jaxshow_on'] / med['off']:.2f}x (target <= 2x)")
    print(f"  ratio jax_explain_cache_misses / off = {med['jax_flag'] / med['off']:.2f}x (for comparison)")


def hot_loop() -> None:
    """10,000 calls that hit JAX's C++ cache: plain, under ``%jaxcache on``, and with the function frozen."""

    @jax.jit
    def small(x):
        return x + 1

    x = jnp.ones(4)
    small(x).block_until_ready()
    hot = {"off": [], "jaxshow_on": [], "frozen": []}
    for _ in range(HOT_ROUNDS):
        for mode in hot:
            session = retrace.Session(jax_text="when_cheap").start() if mode == "jaxshow_on" else None
            frozen = Freeze() if mode == "frozen" else None  # %jaxcache freeze small
            if frozen is not None:
                frozen.freeze(0, {"small": jit_function(small)})
            try:
                t = time.perf_counter()
                for _ in range(HOT_CALLS):
                    small(x)
                small(x).block_until_ready()
                hot[mode].append(time.perf_counter() - t)
            finally:
                if session is not None:
                    session.stop()
                if frozen is not None:
                    frozen.stop()
    hmed = {m: statistics.median(s) for m, s in hot.items()}
    print(f"hot loop of {HOT_CALLS:,} cache-hit calls (medians of {HOT_ROUNDS} loops):")
    for m, v in hmed.items():
        print(f"  {m:<11} {v * 1e3:8.1f} ms ({v / HOT_CALLS * 1e6:.2f} us per call)")
    print(f"  ratio %jaxcache on / off        = {hmed['jaxshow_on'] / hmed['off']:.3f}x (target <= 1.05x)")
    print(f"  ratio %jaxcache freeze / off    = {hmed['frozen'] / hmed['off']:.3f}x (target <= 1.05x)")


def static_object() -> None:
    """A trace-only miss of a function with a static config object (hashable, held weakly by jaxshow) at 1,000 signatures."""

    class Config:
        def __init__(self, k: int) -> None:
            self.k = k

        def __hash__(self) -> int:
            return hash(self.k)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Config) and other.k == self.k

    config = Config(2)
    f = jax.jit(lambda x, c: x * c.k, static_argnums=1)
    session = retrace.Session(jax_text="when_cheap").start()
    try:
        for n in range(1, SIGNATURES + 1):
            f.trace(jax.ShapeDtypeStruct((n,), jnp.float32), config)
    finally:
        session.stop()
    session.reset()
    n, samples = SIGNATURES + 1, {"plain": [], "on": []}
    for mode in ("plain", "on") * 4:
        if mode == "on":
            session.start()
        try:
            for _ in range(30):
                x = jax.ShapeDtypeStruct((n,), jnp.float32)
                n += 1
                t = time.perf_counter()
                f.trace(x, config)
                samples[mode].append(time.perf_counter() - t)
        finally:
            if mode == "on":
                session.stop()
    plain, on = statistics.median(samples["plain"]), statistics.median(samples["on"])
    print(f"trace miss with a static object at {SIGNATURES:,} signatures: plain {plain * 1e3:.2f} ms, "
          f"%jaxcache on {on * 1e3:.2f} ms, {on / plain:.2f}x")


def new_functions() -> None:
    """The first trace of a new function under ``%jaxcache on`` with 300, 9,000 and 36,000 entries in JAX's tracing cache.

    A session asks which keys JAX's cache holds for a function it keeps no history of (traces made before it
    looked); listing that cache is O(entries), all functions together. Per round, a block of plain first traces and
    a block under one open session, in alternating order; the session's first is not counted (it lists the cache once).
    """
    filler = jax.jit(lambda x: x * 2 + 1)  # three entries a shape: it, and jax.numpy's multiply and add
    filled = 0
    print(f"the first trace of a new function (medians of {NEW_ROUNDS * NEW_FUNCTIONS} each):")
    print(f"  {'cache entries':>14} {'plain':>10} {'%jaxcache on':>13} {'ratio':>7}")
    for size in CACHE_SIZES:
        while filled < size // 3:
            filled += 1
            filler.trace(jax.ShapeDtypeStruct((filled,), jnp.float32))
        samples = {"plain": [], "on": []}
        session = retrace.Session(jax_text="when_cheap")
        for r in range(NEW_ROUNDS):
            for mode in (("plain", "on"), ("on", "plain"))[r % 2]:
                if mode == "on":
                    session.start()
                try:
                    for i in range(NEW_FUNCTIONS + 1):
                        def f(x):
                            return x * 2 + 1

                        f = jax.jit(f)
                        t = time.perf_counter()
                        f.trace(jax.ShapeDtypeStruct((5,), jnp.float32))
                        if i:
                            samples[mode].append(time.perf_counter() - t)
                finally:
                    if mode == "on":
                        session.stop()
        plain, on = statistics.median(samples["plain"]), statistics.median(samples["on"])
        print(f"  {size:>14,} {plain * 1e3:7.2f} ms {on * 1e3:10.2f} ms {on / plain:6.2f}x")


def main() -> None:
    logging.getLogger("jax._src.interpreters.partial_eval").addHandler(logging.NullHandler())
    logging.getLogger("jax._src.interpreters.partial_eval").propagate = False
    only = sys.argv[1:]
    if only in ([], ["scale"]):
        scale()
    if not only:
        misses()
    if only in ([], ["static"]):
        static_object()
    if only in ([], ["hot"]):
        hot_loop()
    if only in ([], ["new"]):
        new_functions()


if __name__ == "__main__":
    main()
