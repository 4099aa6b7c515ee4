"""Cost of ``%jaxcache on`` on a cache miss with 1,000 cached signatures, and on a hot loop of cache hits.

Not run by pytest. Usage::

    python benchmarks/jaxcache_overhead.py

Each configuration (JAX's flag off with jaxshow off; jaxshow's ``on`` mode, i.e.
the session ``%jaxcache on`` starts; JAX's own ``jax_explain_cache_misses``)
is measured in alternation in one process, and medians are reported.
"""

from __future__ import annotations

import logging
import statistics
import time

import jax
import jax.numpy as jnp

from jaxshow import retrace

SIGNATURES = 1_000
MISSES_PER_ROUND = 5
ROUNDS = 6
HOT_CALLS = 10_000
HOT_ROUNDS = 7


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


def main() -> None:
    logging.getLogger("jax._src.interpreters.partial_eval").addHandler(logging.NullHandler())
    logging.getLogger("jax._src.interpreters.partial_eval").propagate = False

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

    @jax.jit
    def small(x):
        return x + 1

    x = jnp.ones(4)
    small(x).block_until_ready()
    hot = {"off": [], "jaxshow_on": []}
    for _ in range(HOT_ROUNDS):
        for mode in hot:
            session = retrace.Session(jax_text="when_cheap").start() if mode == "jaxshow_on" else None
            try:
                t = time.perf_counter()
                for _ in range(HOT_CALLS):
                    small(x)
                small(x).block_until_ready()
                hot[mode].append(time.perf_counter() - t)
            finally:
                if session is not None:
                    session.stop()
    hmed = {m: statistics.median(s) for m, s in hot.items()}
    print(f"hot loop of {HOT_CALLS:,} cache-hit calls (medians of {HOT_ROUNDS} loops):")
    for m, v in hmed.items():
        print(f"  {m:<11} {v * 1e3:8.1f} ms ({v / HOT_CALLS * 1e6:.2f} us per call)")
    print(f"  ratio %jaxcache on / off        = {hmed['jaxshow_on'] / hmed['off']:.3f}x (target <= 1.05x)")


if __name__ == "__main__":
    main()
