"""dualad: exact derivatives, Jacobians and Hessians by dual and hyper-dual numbers.

    import numpy as np, dualad
    dualad.grad(f)(x)         dualad.jacobian(f)(x)      dualad.hessian(f)(x)

See README.md for the tour and docs/architecture.md for the layers.
"""

from . import numpy_functions as _numpy_functions  # noqa: F401  (registers __array_function__)
import types as _types

from . import allocation as _allocation
from . import math, rules, tree
from .dual import Dual
from .hyperdual import HyperDual
from .number import EscapedPerturbation, SlowPathWarning, primal
from .modes import ModeDecision, choose_hessian_mode, choose_mode
from .primitives import _ON_REGISTER, primitive
from .reverse import checkpoint, checkpointed_loop
from .tree import static, tree_map
from .transforms import (default_chunk, default_hessian_chunk, derivative, grad, hessian,
                         hessian_sparsity, hvp, jacfwd, jacobian, jacobian_sparsity, jacrev, jvp,
                         second_derivative, value_and_grad, vjp)
from .batching import vmap
from . import dispatch as _dispatch

stop_gradient = primal  # JAX's name: the value with its derivative dropped.


def _load_compiled_path():
    """numba resolves a primitive's name in @njit code when it compiles: its overloads must
    exist by then, so registering a primitive loads the compiled path (dualad.jit)."""
    from . import jit  # noqa: F401


_ON_REGISTER.append(_load_compiled_path)

# SciPy's solvers (scipy.optimize.root, solve_ivp, quad, ...) seen through f's view are
# stand-ins that differentiate their solutions (dualad/solvers, issue 42).
from .allocation import STAND_INS as _STAND_INS  # noqa: E402
from .solvers import stand_in as _solver_stand_in  # noqa: E402
_STAND_INS.append(_solver_stand_in)


def _scipy_stand_in(value):
    """allocation.STAND_INS' hook: what f's view sees instead of a SciPy function or object
    (dualad/scipy/, imported on the first one met: scipy stays out of import dualad); None
    at once for anything that is not SciPy's."""
    kind = type(value)
    if kind is _types.FunctionType or kind is _types.MethodType or isinstance(value, type):
        owner = value.__module__  # a class (scipy.interpolate.CubicSpline) by its own module
    elif kind.__module__.startswith("_cython_"):
        # SciPy's compiled functions (behind scipy.linalg's batching wrappers) are seen as
        # themselves: allocation.object_view would subclass their type, which crashes CPython
        return value if (getattr(value, "__module__", None) or "").startswith("scipy.") else None
    else:
        owner = kind.__module__
    if not (owner or "").startswith("scipy."):
        return None
    from .scipy import stand_in  # noqa: PLC0415
    return stand_in(value)


_allocation.STAND_INS.append(_scipy_stand_in)

# A pickled kernel is rebuilt by the transform that made it (dispatch.rebuilt), found here:
# dispatch.py sits below the transforms and never imports them.
_dispatch.TRANSFORMS.update(derivative=derivative, second_derivative=second_derivative, grad=grad,
                            value_and_grad=value_and_grad, jacfwd=jacfwd, jacrev=jacrev,
                            jacobian=jacobian, hessian=hessian, hvp=hvp)

__version__ = "0.1.0"

__all__ = ["Dual", "HyperDual", "primal", "stop_gradient", "math", "rules", "jvp",
           "derivative", "second_derivative", "grad", "value_and_grad", "jacfwd", "jacobian",
           "hessian", "hvp", "default_chunk", "default_hessian_chunk", "vjp", "jacrev",
           "choose_mode", "choose_hessian_mode", "ModeDecision", "checkpoint", "checkpointed_loop", "tree", "static",
           "tree_map", "primitive", "EscapedPerturbation", "SlowPathWarning", "jacobian_sparsity", "hessian_sparsity",
           "vmap"]
