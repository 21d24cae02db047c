"""The compiled path: numba types for dual numbers and compiled derivative kernels.

Imported lazily (importing numba costs about half a second): dualad's transforms load it
when they are given a numba dispatcher, or jit=True.
"""

from . import kernels, overloads, types  # noqa: F401
