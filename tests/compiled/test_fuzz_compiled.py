"""Randomized cross-check on the compiled path: batches of random programs (tests/fuzzing.py)
in one @njit function, whose compiled Jacobians, gradient and Hessian kernels must equal the
Python path's at a smooth input and at special points."""

import numba
import numpy as np
import pytest

import dualad
from fuzzing import (BATCHES, LONG_RUN, NAMESPACE, agree, comparable, compile_source, fail_on,
                     get_batch, special_points)


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
            agree(messages, b, f"compiled jacobian(mode={mode!r})", x, kernel, python, per_row=True,
                  rows=comparable(b, x, per_row=True))
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
            agree(messages, b, what, x, kernel, python, per_row=False,
                  rows=comparable(b, x, per_row=False))
    fail_on(messages)


BLOCKS = 7  # copies of a batch's inputs: 14 to 35 inputs, past one HyperDual block


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_programs_compiled_hessian_through_detected_sparsity(index):
    """The default compiled Hessian beyond one HyperDual block detects H's sparsity at x
    (jit.sparse.detecting_hessian): of Σ_j c_j small(x_j) over BLOCKS slices x_j, a block
    diagonal H, it must equal the Python path's forward-over-reverse at the smooth input and
    at special points (where anything recorded is not finite, by the dense passes)."""
    b = get_batch(index)
    n = b.x.size
    wide = "def wide(x):\n    return " + " + ".join(
        f"{1.0 + 0.25 * j!r} * small(x[{j * n}:{(j + 1) * n}])" for j in range(BLOCKS)) + "\n"
    python = compile_source(wide, "wide", dict(NAMESPACE, small=b.py_small))
    compiled = numba.njit(compile_source(wide, "wide", dict(NAMESPACE, small=b.nb_small)))
    kernel = dualad.hessian(compiled)
    expected = dualad.hessian(python, mode="forward-over-reverse")
    messages = []
    for x in [b.x] + special_points(n):
        agree(messages, b, "compiled hessian (detected sparsity)", np.tile(x, BLOCKS), kernel,
              expected, per_row=False, rows=comparable(b, x, per_row=False))
    fail_on(messages)
