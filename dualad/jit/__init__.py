"""The compiled path: numba types for dual numbers and compiled derivative kernels.

Imported lazily (importing numba costs about half a second): dualad.dispatch loads it when a
transform is given a numba dispatcher, or jit=True, and registering a primitive loads it.
"""

from . import overloads, protocol, matrix, tensor, numpy_overloads  # noqa: F401  (overloads, in this order)
from . import numpy_elementwise, numpy_statistics, numpy_matrix, numpy_linalg, numpy_structure  # noqa: F401
from . import numpy_tensor  # noqa: F401
from . import adjoint, auto, dual_tape, kernels, sparse, tape, types  # noqa: F401
