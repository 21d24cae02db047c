"""Randomized cross-check on the compiled path: batches of random programs (tests/fuzzing.py)
in one @njit function, whose compiled Jacobians, gradient and Hessian kernels must equal the
Python path's at a smooth input and at special points."""

import numpy as np
import pytest

import dualad
from fuzzing import BATCHES, LONG_RUN, agree, fail_on, get_batch, special_points


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_programs_compiled_jacobian(index):
    """Compiled forward and reverse Jacobians (auto too in long runs) equal the Python path's
    in the same mode: at the batch's smooth input and at special points."""
    b = get_batch(index)
    messages = []
    modes = ("forward", "reverse", "auto") if LONG_RUN else ("forward", "reverse")
    for mode in modes:
        kernel = dualad.jacobian(b.nb_batch, mode=mode)
        python = dualad.jacobian(b.py_batch, mode="forward" if mode == "auto" else mode)
        for x in [b.x] + special_points(len(b.x)):
            agree(messages, b, f"compiled jacobian(mode={mode!r})", x, kernel, python, per_row=True)
    fail_on(messages)


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_programs_compiled_gradient_and_hessian(index):
    """The hyper-dual Hessian kernel (the reverse gradient and hvp too in long runs) equals
    the Python path's, at the smooth input and at special points."""
    b = get_batch(index)
    messages = []
    v = np.linspace(-1.0, 1.0, b.x.size)
    checks = [("compiled hessian", dualad.hessian(b.nb_small), dualad.hessian(b.py_small, mode="forward"))]
    if LONG_RUN:
        checks.append(("compiled grad(mode='reverse')", dualad.grad(b.nb_small, mode="reverse"),
                       dualad.grad(b.py_small, mode="reverse")))
        hvp_c, hvp_p = dualad.hvp(b.nb_small), dualad.hvp(b.py_small)
        checks.append(("compiled hvp", lambda y: hvp_c(y, v), lambda y: hvp_p(y, v)))
    for what, kernel, python in checks:
        for x in [b.x] + special_points(len(b.x)):
            agree(messages, b, what, x, kernel, python, per_row=False)
    fail_on(messages)
