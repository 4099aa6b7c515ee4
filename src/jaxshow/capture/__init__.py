"""Capture: what JAX did, as plain records (uses JAX; never IPython).

``stations`` reads the four stations (``jax.jit`` wrapper, ``Traced``,
``Lowered``, ``Compiled``) from JAX's objects; ``calls`` records, while a cell
runs, every trace, lowering, compile and run where JAX does it; ``cell`` turns
one cell's calls into a :class:`~jaxshow.report.CellReport`; ``aot`` is
:func:`jaxshow.stages`.
"""
