"""The NumPy functions dualad differentiates, each classified once (registry.py), by topic:

    registry.py     the entry kinds and the table every layer builds from
    structure.py    array manipulation, buffers, value-only functions
    reductions.py   sum, cumsum, max/min, mean, prod, ...
    multilinear.py  einsum, matmul, dot, tensordot, outer, kron, cross
    linalg.py       numpy.linalg: each function's JVP
    elementwise.py  ufuncs and functions outside the rule table, as compositions
    statistics.py   var, std, average, median, quantile, cov, ...
"""

from . import elementwise, linalg, multilinear, reductions, statistics, structure  # noqa: F401  (fill the registry)
from .registry import KINDS, REGISTRY, Entry

__all__ = ["REGISTRY", "KINDS", "Entry"]
