"""The compiled path's routing: which kernel factory of dualad.jit a transform of a numba
function uses in each mode. This table is the one place that pairs a (transform, mode) with
a kernel; transforms.py asks it and passes in the Python path's equivalent of the kernel
(what the kernel means where user code runs on the Python path, and what its compile errors
try before they advise jit=False).

    kernel(transform, mode, f, argnums, python, chunk)   a numba dispatcher
    jvp_kernel(f), vjp_kernel(f)                         one kernel per numba function

dualad.jit is imported on first use (numba costs about half a second to import).
"""

from __future__ import annotations

import functools

import numpy as np

from .forward import jvp_forward
from .modes import compiled_costs
from .recording import vjp_recording
from .twin import is_dispatcher, python_twin

__all__ = ["runs_compiled", "compiled_function", "kernel", "jvp_kernel", "vjp_kernel",
           "NO_COMPILED_MODE"]

# (transform, mode) -> (module of dualad.jit, factory, what the factory takes after python)
COMPILED = {
    ("value_and_grad", "forward"): ("kernels", "value_and_grad", "chunk"),
    ("value_and_grad", "reverse"): ("tape", "value_and_grad", None),
    ("value_and_grad", "auto"): ("auto", "value_and_grad", "costs"),
    ("grad", "forward"): ("kernels", "grad", "chunk"),
    ("grad", "reverse"): ("tape", "grad", None),
    ("grad", "auto"): ("auto", "grad", "costs"),
    ("jacobian", "forward"): ("kernels", "jacfwd", "chunk"),
    ("jacobian", "reverse"): ("tape", "jacrev", None),
    ("jacobian", "auto"): ("auto", "jacobian", "costs"),
    ("jacfwd", "forward"): ("kernels", "jacfwd", "chunk"),
    ("jacrev", "reverse"): ("tape", "jacrev", None),
    ("hessian", "forward"): ("kernels", "hessian", "chunk"),
    ("hessian", "auto"): ("kernels", "hessian", "chunk"),  # HyperDual blocks
    ("hvp", "forward"): ("kernels", "hvp", "chunk"),
    ("derivative", "forward"): ("kernels", "derivative", None),
    ("second_derivative", "forward"): ("kernels", "second_derivative", None),
    ("jvp", "forward"): ("kernels", "jvp", None),
    ("vjp", "reverse"): ("tape", "vjp", None),
}

NO_COMPILED_MODE = (
    "this mode has no compiled kernel: pass jit=False to run it on the Python path (a numba "
    "function is differentiated through its pure-Python twin), or mode='forward' for a "
    "compiled forward-mode kernel")


def runs_compiled(f, jit):
    """jit=None compiles iff f is a numba dispatcher; jit=True compiles a plain function with
    numba; jit=False runs the Python path (a dispatcher's pure-Python twin, see twin.py)."""
    return is_dispatcher(f) if jit is None else bool(jit)


def compiled_function(f):
    """f as a numba dispatcher (jit=True on a plain function compiles it)."""
    if is_dispatcher(f):
        return f
    import numba

    return numba.njit(f)


def _checked_argnums(argnums):
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    if not nums or not all(isinstance(i, (int, np.integer)) and i >= 0 for i in nums):
        raise ValueError(f"compiled transforms take argnums as an int or a tuple of ints counted "
                         f"from 0 (got argnums={argnums!r}); pass jit=False for negative argnums")
    return tuple(int(i) for i in nums) if isinstance(argnums, (tuple, list)) else int(argnums)


def kernel(transform, mode, f, argnums, python, chunk=None):
    """The compiled kernel of `transform` in `mode` for f (a function or dispatcher) at
    argnums; python is the same transform on the Python path. An explicit chunk means
    forward mode (the chunk is forward mode's)."""
    from . import jit as compiled_path

    if mode == "auto" and chunk is not None:
        mode = "forward"
    entry = COMPILED.get((transform, mode))
    if entry is None:
        raise NotImplementedError(NO_COMPILED_MODE)
    module, name, takes = entry
    factory = getattr(getattr(compiled_path, module), name)
    options = {"chunk": (chunk,), "costs": (compiled_costs(),), None: ()}[takes]
    return compiled_path.kernels.at_argnum(factory, compiled_function(f), _checked_argnums(argnums),
                                           python, *options)


@functools.lru_cache(maxsize=None)
def jvp_kernel(f):
    """One compiled jvp kernel per numba function: (x, v, *args) -> (f(x), J·v)."""
    twin = python_twin(f)
    return kernel("jvp", "forward", f, 0, lambda x, v, *args: jvp_forward(
        lambda y: twin(y, *args), (x,), (v,)))


@functools.lru_cache(maxsize=None)
def vjp_kernel(f):
    """One compiled vjp kernel per numba function: (x, cotangent, *args) -> (f(x), cotangent·J)."""
    twin = python_twin(f)

    def python(x, cotangent, *args):
        value, pullback = vjp_recording(lambda y: twin(y, *args), (x,), (0,), "vjp_fn")
        return value, pullback(cotangent)[0]

    return kernel("vjp", "reverse", f, 0, python)
