"""The compiled path's routing: which kernel factory of dualad.jit a transform of a numba
function uses in each mode. This table is the one place that pairs a (transform, mode) with
a kernel; transforms.py asks it and passes in the Python path's equivalent of the kernel
(what the kernel means where user code runs on the Python path, and what its compile errors
try before they advise jit=False).

    kernel(transform, mode, f, argnums, python, chunk)   a numba dispatcher
    jvp_kernel(f), vjp_kernel(f)                         one kernel per numba function

A kernel pickles as the call that made it (`rebuilt`): the unpickling process finds the
user's function by module and name and calls the same transform there, which compiles the
kernel or loads it from the disk cache. The public transforms reach this layer through
TRANSFORMS, which dualad/__init__.py fills (this module never imports transforms.py).

dualad.jit is imported on first use (numba costs about half a second to import).
"""

from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from .forward import jvp_forward
from .modes import compiled_costs, compiled_hessian_costs
from .recording import vjp_recording
from .twin import is_dispatcher, python_twin

__all__ = ["runs_compiled", "compiled_function", "kernel", "jvp_kernel", "vjp_kernel",
           "NO_COMPILED_MODE", "TRANSFORMS", "rebuilt"]

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
    ("hessian", "forward-over-reverse"): ("dual_tape", "hessian", "chunk"),
    ("hessian", "auto"): ("auto", "hessian", "hessian_costs"),
    ("hvp", "forward"): ("kernels", "hvp", "chunk"),
    ("hvp", "forward-over-reverse"): ("dual_tape", "hvp", None),
    ("hvp", "auto"): ("auto", "hvp", "chunk"),
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

    requested = mode
    if mode == "auto" and chunk is not None:
        mode = "forward"
    entry = COMPILED.get((transform, mode))
    if entry is None:
        raise NotImplementedError(NO_COMPILED_MODE)
    module, name, takes = entry
    factory = getattr(getattr(compiled_path, module), name)
    options = {"chunk": (chunk,), "costs": (compiled_costs(),),
               "hessian_costs": (compiled_hessian_costs(),), None: ()}[takes]
    argnums = _checked_argnums(argnums)
    made = compiled_path.kernels.at_argnum(factory, compiled_function(f), argnums, python, *options)
    return _picklable(made, transform, f, (("argnums", argnums), ("mode", requested), ("chunk", chunk)))


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


# ---- pickling: a kernel travels as the call that made it --------------------------------------------
# The public transforms by name (grad, jacobian, ...), filled by dualad/__init__.py; the jvp
# and vjp kernels are this module's own (jvp_kernel, vjp_kernel).
TRANSFORMS = {}

# Kernels alive in this process by what made them: unpickling here gives back the kernel
# itself (as numba does for dispatchers), and a process that unpickles a kernel many times
# (a Dask worker, once per task) makes it once.
_MADE = weakref.WeakValueDictionary()


def _picklable(made, transform, f, options):
    try:
        _MADE[(transform, f, options)] = made
    except TypeError:  # an unhashable f (a callable object) cannot be named in another process either
        pass
    return _kernels().pickled_as(
        made, rebuilt, lambda: (transform, *_kernels().named(f), options))


def _kernels():
    from .jit import kernels

    return kernels


def rebuilt(transform, module, qualname, options):
    """The kernel that transform(f, **options) makes, f being module.qualname: the kernel
    alive in this process, else a new one (compiled, or loaded from the disk cache)."""
    f = _kernels().resolve(module, qualname)
    made = _MADE.get((transform, f, options))
    if made is not None:
        return made
    if transform in ("jvp", "vjp"):  # the kernels of jvp's and vjp's compiled path, one per f
        return {"jvp": jvp_kernel, "vjp": vjp_kernel}[transform](f)
    public = TRANSFORMS[transform]
    takes = inspect.signature(public).parameters
    return public(f, jit=True, **{name: value for name, value in options if name in takes})
