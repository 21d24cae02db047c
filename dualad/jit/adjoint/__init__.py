"""Compiled reverse mode by source transformation (issue 43, phase 1).

From an @njit function f(x, *args) -> float, x a 1-D float64 array, this package writes
the source of a plain-float numba function computing f and its gradient (a forward sweep
that keeps what the reverse sweep needs, then the reverse sweep) and compiles it, as
Tapenade, Enzyme or google/tangent do, instead of recording a tape at run time.

    lower.py       f's source (AST) -> a structured three-address program (program.py);
                   other @njit functions inlined
    jumps.py       break, continue and return -> flags
    ssa.py         one name per value, phis at joins and loop headers
    inference.py   numba's type inference of the program's primal
    activity.py    which values depend on x
    generate.py    the forward and reverse sweeps' source (what is saved, what recomputed)
    partials.py    the rule table's partials and values (dualad.rules)
    stack.py       the stacks loops save onto
    kernel.py      the numba dispatcher, specialised per argument types

    value_and_grad(f)(x, *args)  -> (f(x, *args), ∇f)
    grad(f)(x, *args)            -> ∇f
    covers(f)                    -> (True, "") or (False, the construct not covered)

A construct outside the covered subset raises Unsupported (a NotImplementedError) naming
it, when the kernel is made, so that a caller can fall back to the tape (dualad.jit.tape).
"""

from .kernel import covers, make_kernel
from .program import Unsupported

__all__ = ["value_and_grad", "grad", "covers", "Unsupported", "value_and_grad_or_tape", "grad_or_tape"]

_MADE = {}


def _kernel(f, value, python):
    """The kernel of f, one per function; a new one for dualad.dispatch (python given), which
    keeps its own and changes how it is called from Python (kernels.called_from_python)."""
    if python is not None:
        kernel = make_kernel(f, value)
        kernel.__dualad_python__ = python
        return kernel
    key = (getattr(f, "py_func", f), value)
    if key not in _MADE:
        _MADE[key] = make_kernel(f, value)
    return _MADE[key]


def value_and_grad(f, python=None):
    """A numba dispatcher kernel(x, *args) -> (f(x, *args), ∇f), callable from Python and
    from @njit code. python: the Python path's equivalent (dualad.dispatch passes it)."""
    return _kernel(f, True, python)


def grad(f, python=None):
    """A numba dispatcher kernel(x, *args) -> ∇f (the forward sweep computes only what the
    reverse sweep needs)."""
    return _kernel(f, False, None if python is None else (lambda *args: python(*args)[1]))


def value_and_grad_or_tape(f, python):
    """The generated adjoint where it covers f, else the tape's kernel (dualad.dispatch)."""
    if covers(f)[0]:
        return value_and_grad(f, python)
    from .. import tape

    return tape.value_and_grad(f, python)


def grad_or_tape(f, python):
    """python: the Python path's value_and_grad, as for every gradient factory."""
    if covers(f)[0]:
        return grad(f, python)
    from .. import tape

    return tape.grad(f, python)
