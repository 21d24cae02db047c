"""Compiled auto mode: the compiled tape or forward mode, whichever is cheaper, where f
records onto the tape.

Each part of the choice is made where it can be. Whether f's code records onto the tape is
known when numba types a call: the auto kernel tries to compile the tape kernel for those
argument types then (and is forward mode where it cannot). The sizes are known at run
time: a gradient takes the tape from dualad.modes.COMPILED_REVERSE_FROM inputs on; a
Jacobian compares ceil(N / chunk) forward passes with one recording and M sweeps, in
units of one evaluation of f (dualad.modes' COMPILED_* constants); the first call for a
given N runs forward mode, whose result tells M. The constants are calibrated by
`python benchmarks/modes.py --calibrate`.

    value_and_grad(f)(x, *args) -> (f, ∇f)    grad(f)(x, *args) -> ∇f    jacobian(f)(x, *args) -> J
"""

import math

import numba
from numba.core.errors import NumbaError
from numba.core.extending import overload

from .. import transforms
from ..modes import COMPILED_PASS, COMPILED_RECORD, COMPILED_REVERSE_FROM, COMPILED_SWEEP
from . import kernels, tape
from .cache import set_key
from .tuples import input_size, total_size
from .types import int_pointer, pool_address

__all__ = ["value_and_grad", "grad", "jacobian"]


def _choice(forward, reverse, by_size):
    """A function that numba resolves, per argument types, to forward(...) where f does not
    record onto the tape, else to by_size(forward, reverse) (which chooses at run time)."""
    def choose(x, *args):
        raise TypeError("dualad.jit.auto's choice runs inside compiled kernels only")

    def typing(x, *args):
        try:
            reverse.get_call_template((x,) + tuple(args), {})  # compiles it for these types
        except (NumbaError, NotImplementedError):
            return lambda x, *args: forward(x, *args)  # f does not record onto the tape
        return by_size(forward, reverse)

    overload(choose, strict=False)(typing)
    return set_key(choose, forward, reverse, by_size)  # the overload is its meaning


def _gradient_by_size(forward, reverse):
    def by_size(x, *args):
        if input_size(x) >= COMPILED_REVERSE_FROM:
            return reverse(x, *args)
        return forward(x, *args)
    return by_size


def _auto_kernel(choose, f, python_equivalent):
    def kernel(x, *args):
        return choose(x, *args)

    return kernels.compile_kernel(kernel, f, python_equivalent)


def _gradient(name, f):
    """The auto kernel of kernels.`name` and tape.`name` ("grad" or "value_and_grad")."""
    choose = _choice(getattr(kernels, name)(f), getattr(tape, name)(f), _gradient_by_size)
    return _auto_kernel(choose, f, getattr(transforms, name)(f, jit=False))


def value_and_grad(f):
    return _gradient("value_and_grad", f)


def grad(f):
    return _gradient("grad", f)


def jacobian(f):
    width = kernels.DEFAULT_CHUNK

    def by_cost(forward, reverse):
        def by_size(x, *args):
            # the pick per N, kept between calls: slot 0 holds N + 1 (0: none yet), slot 1 the
            # pick; threads may race here, which can only cost time: both modes are exact
            choice = numba.carray(int_pointer(pool_address(2)), 2)
            n_in = input_size(x)
            if choice[0] != n_in + 1:  # a new N: forward mode this time, which tells M
                jac = forward(x, *args)
                n_out = total_size(jac) // max(n_in, 1)
                forward_cost = math.ceil(n_in / width) * COMPILED_PASS
                reverse_cost = COMPILED_RECORD + n_out * COMPILED_SWEEP
                choice[1] = 1 if reverse_cost < forward_cost else 0
                choice[0] = n_in + 1
                return jac
            if choice[1] == 1:
                return reverse(x, *args)
            return forward(x, *args)
        return by_size

    choose = _choice(kernels.jacfwd(f), tape.jacrev(f), by_cost)
    return _auto_kernel(choose, f, transforms.jacobian(f, jit=False))
