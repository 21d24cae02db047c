"""Compiled auto mode: the compiled tape or forward mode, whichever is cheaper, where f
records onto the tape.

Each part of the choice is made where it can be. Whether f's code records onto the tape is
known when numba types a call: the auto kernel tries to compile the tape kernel for those
argument types then (and is forward mode where it cannot). The sizes are known at run
time: `pick` (one function, also what dualad.choose_mode explains) takes the tape for a
gradient from `reverse_from` inputs on, and for a Jacobian compares ceil(N / chunk) forward
passes with one recording and M sweeps, in units of one evaluation of f; the first call for
a given N runs forward mode, whose result tells M. The costs (reverse_from, pass, record,
sweep) are dualad.modes' COMPILED_* constants, calibrated by
`python benchmarks/modes.py --calibrate` and passed in by dualad.dispatch.

    value_and_grad(f, python, costs)(x, *args) -> (f, ∇f)     grad(...)(x, *args) -> ∇f
    jacobian(f, python, costs)(x, *args) -> J
"""

import math

import numba
from numba.core import types
from numba.core.errors import NumbaError
from numba.core.typing.templates import fold_arguments

from . import adjoint, dual_tape, kernels, sparse, tape
from .cache import overload, register_jitable, set_key
from .tuples import input_size, total_size
from .runtime import int_pointer, pool_address

__all__ = ["value_and_grad", "grad", "jacobian", "hessian", "hvp", "pick", "pick_hessian",
           "pick_hvp", "records_onto_tape"]


@register_jitable
def pick(gradient, n_in, n_out, width, costs):
    """Whether compiled auto takes the tape (True) or forward mode (False), forward mode
    carrying `width` partials per pass. costs = (reverse_from, pass, record, sweep): a
    gradient takes the tape from reverse_from inputs on; an (n_out, n_in) Jacobian when
    record + n_out · sweep < ceil(n_in / width) · pass (in evaluations of f)."""
    reverse_from, pass_cost, record_cost, sweep_cost = costs
    if gradient:
        return n_in >= reverse_from
    return record_cost + n_out * sweep_cost < math.ceil(n_in / width) * pass_cost


def records_onto_tape(reverse, argument_types, from_python=False):
    """Whether the tape kernel `reverse` compiles for these numba argument types (f's code
    records onto the compiled tape). from_python: the types of a call from Python, compiled
    as that call will look them up (typing a call from numba code folds the kernel's *args
    into one tuple type, which a call from Python does not look up: it compiles the kernel a
    second time, a large share of a first Hessian:
    docs/decisions/0001-where-cold-time-goes.md)."""
    try:
        if from_python:  # *args as the call from Python passes them: a plain tuple
            reverse.compile(tuple(fold_arguments(
                reverse._compiler.pysig, tuple(argument_types), {}, lambda index, param, value: value,
                lambda index, param, default: types.Omitted(default),
                lambda index, param, values: types.BaseTuple.from_types(values))))
        else:
            reverse.get_call_template(tuple(argument_types), {})  # compiles it for these types
    except (NumbaError, NotImplementedError):
        return False
    return True


def _choice(forward, reverse, by_size, *fallbacks):
    """A function that numba resolves, per argument types, to by_size(forward, reverse)
    (which chooses at run time), or where reverse does not compile for them (f does not
    record onto its tape) to by_size(forward, the first fallback that does), else to
    forward(...)."""
    def choose(x, *args):
        raise TypeError("dualad.jit.auto's choice runs inside compiled kernels only")

    def typing(x, *args):
        for candidate in (reverse,) + fallbacks:
            if records_onto_tape(candidate, (x,) + tuple(args)):
                return by_size(forward, candidate)
        return lambda x, *args: forward(x, *args)

    overload(choose, strict=False)(typing)
    return set_key(choose, forward, reverse, by_size, *fallbacks)  # the overload is its meaning


def _auto_kernel(choose, f, python):
    def kernel(x, *args):
        return choose(x, *args)

    return kernels.compile_kernel(kernel, f, python)


def value_and_grad(f, python, costs):
    """python: the Python path's value_and_grad (as for every gradient factory)."""
    width = kernels.DEFAULT_CHUNK

    def by_size(forward, reverse):
        def gradient(x, *args):
            if pick(True, input_size(x), 1, width, costs):
                return reverse(x, *args)
            return forward(x, *args)
        return gradient

    # reverse mode: the generated adjoint where it covers f, the tape otherwise
    choose = _choice(kernels.value_and_grad(f, python),
                     adjoint.value_and_grad_or_tape(f, python), by_size)
    return _auto_kernel(choose, f, python)


def grad(f, python, costs):
    return kernels.gradient_of(value_and_grad(f, python, costs), f)


def jacobian(f, python, costs):
    width = kernels.DEFAULT_CHUNK

    def by_cost(forward, reverse):
        def by_size(x, *args):
            # the pick per N, kept between calls: slot 0 holds N + 1 (0: none yet), slot 1 the
            # pick; threads may race here, which can only cost time: both modes are exact
            choice = numba.carray(int_pointer(pool_address(2)), 2)
            n_in = input_size(x)
            if choice[0] != n_in + 1:  # a new N: forward mode this time, which tells M
                jac = forward(x, *args)
                choice[1] = 1 if pick(False, n_in, total_size(jac) // max(n_in, 1), width, costs) else 0
                choice[0] = n_in + 1
                return jac
            if choice[1] == 1:
                return reverse(x, *args)
            return forward(x, *args)
        return by_size

    choose = _choice(kernels.jacfwd(f, python), tape.jacrev(f, python), by_cost)
    return _auto_kernel(choose, f, python)


# ---- second order: HyperDual blocks or forward-over-reverse (dual_tape.py) ----------------------
@register_jitable
def pick_hessian(n_in, hyper_width, dual_width, costs):
    """Whether a compiled auto Hessian is forward-over-reverse (True) or HyperDual blocks
    (False): b = ceil(n_in / hyper_width) blocks cost b(b + 1)/2 HyperDual passes of
    `hyper_pass` evaluations of f each; forward-over-reverse takes ceil(n_in / dual_width)
    recordings and sweeps of `dual_pass` each. costs = (hyper_pass, dual_pass), dualad.modes'
    COMPILED_HYPER_PASS and COMPILED_DUAL_PASS. One block (n_in <= hyper_width) is forward,
    as the Python path's auto there (so both give the HyperDual conventions at special
    points; the two modes cost about the same there:
    docs/decisions/0004-hessians-and-mode-costs.md)."""
    hyper_pass, dual_pass = costs
    blocks = math.ceil(n_in / hyper_width)
    return blocks > 1 and math.ceil(n_in / dual_width) * dual_pass < blocks * (blocks + 1) / 2 * hyper_pass


@register_jitable
def pick_hvp(n_in, width):
    """Whether a compiled auto hvp is forward-over-reverse (True): from the input that one
    HyperDual chunk of `width` no longer holds (then forward mode needs several O(n) passes)."""
    return n_in > width


def hessian(f, python, costs):
    """python: the Python path's hessian. Forward (HyperDual blocks; one block up to ONE_PASS
    inputs, kernels.hessian) where f does not record onto the tape or has at most ONE_PASS
    inputs, else pick_hessian by the input's size. Its forward-over-reverse goes through the
    sparsity detected at x (sparse.detecting_hessian), or where f does not record on
    sparsity tracers, dual_tape.hessian's dense passes."""
    hyper_width, dual_width = kernels.DEFAULT_CHUNK, dual_tape.DEFAULT_CHUNK
    one_pass = kernels.ONE_PASS

    def by_size(forward, over_reverse):
        def hess(x, *args):
            n_in = input_size(x)
            # up to ONE_PASS inputs: one HyperDual block (kernels.hessian), as from Python
            # (dualad.dispatch._auto_hessian, which says why)
            if n_in > one_pass and pick_hessian(n_in, hyper_width, dual_width, costs):
                return over_reverse(x, *args)
            return forward(x, *args)
        return hess

    choose = _choice(kernels.hessian(f, python), sparse.detecting_hessian(f, python), by_size,
                     dual_tape.hessian(f, python))
    return _auto_kernel(choose, f, python)


def hvp(f, python, chunk=None):
    """python: the Python path's hvp; chunk is None (an explicit chunk means forward mode,
    dualad.dispatch)."""
    width = kernels.DEFAULT_CHUNK

    def by_size(forward, over_reverse):
        def product(x, v, *args):
            if pick_hvp(input_size(x), width):
                return over_reverse(x, v, *args)
            return forward(x, v, *args)
        return product

    choose = _choice(kernels.hvp(f, python), dual_tape.hvp(f, python), by_size)
    return _auto_kernel(choose, f, python)
