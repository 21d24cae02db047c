"""Randomized cross-check of 2-D arrays of duals, views, in-place operators, writes through
views and overlapping assignment on the compiled path: batches of random statement-level
programs (tests/fuzzing_arrays.py describes them and the checks). DUALAD_FUZZ=<count> runs
max(1, count // 40) batches."""

import numpy as np
import pytest

import dualad
from fuzzing import agree, fail_on
from fuzzing_arrays import BATCHES, LONG_RUN, VALUE_RTOL, close, fd_close, get_array_batch

# numba's float code notes '@' on non-contiguous views, which the programs make on purpose
pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaPerformanceWarning")


def unchanged(messages, b, what, x, call):
    """call(x) on a copy of x; the caller's array must be as it was."""
    arg = x.copy()
    result = call(arg)
    if not np.array_equal(arg, x):
        messages.append(f"{what} changed the caller's x to {arg!r}\n{b.describe()}")
    return result


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_array_programs_values_under_njit_are_numpys(index):
    """With plain floats, numba's batch equals NumPy's (NumPy is the reference for every view,
    overlap and in-place operator), and leaves the same values in the argument. (The float
    version copies an in-place operand that overlaps its target: numba's floats read it late.)"""
    b = get_array_batch(index)
    messages = []
    x_numba, x_numpy = b.x.copy(), b.x.copy()
    close(messages, b, "njit(batch)(x) vs NumPy", b.float_batch(x_numba), b.py_batch(x_numpy),
          rtol=VALUE_RTOL, per_row=True)
    close(messages, b, "x after njit(batch) vs after NumPy", x_numba, x_numpy, rtol=VALUE_RTOL)
    fail_on(messages)


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_array_programs_python_path_against_central_differences(index):
    """The Python path (the compiled path's reference): forward = reverse Jacobian = central
    differences; its Hessian of small = central differences of its gradient."""
    b = get_array_batch(index)
    messages = []
    forward = unchanged(messages, b, "jacobian(mode='forward')", b.x, dualad.jacobian(b.py_batch, mode="forward"))
    reverse = unchanged(messages, b, "jacobian(mode='reverse')", b.x, dualad.jacobian(b.py_batch, mode="reverse"))
    close(messages, b, "Python path: reverse vs forward Jacobian", reverse, forward, per_row=True)
    fd_close(messages, b, "Python path: forward Jacobian vs central differences", forward, b.py_batch, b.x)
    hessian = dualad.hessian(b.py_small, mode="forward")(b.x.copy())
    fd_close(messages, b, "Python path: Hessian of small vs central differences of its gradient", hessian,
             dualad.grad(b.py_small, mode="forward"), b.x)
    fail_on(messages)


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_array_programs_compiled_jacobian(index):
    """Compiled forward and reverse Jacobians (auto too in long runs) equal the Python path's
    and central differences (which of the two paths is wrong, when they differ); no call
    changes the caller's x."""
    b = get_array_batch(index)
    messages = []
    modes = ("forward", "reverse", "auto") if LONG_RUN else ("forward", "reverse")
    for mode in modes:
        kernel = dualad.jacobian(b.nb_batch, mode=mode)
        python = dualad.jacobian(b.py_batch, mode="forward" if mode == "auto" else mode)
        compiled = unchanged(messages, b, f"compiled jacobian(mode={mode!r})", b.x, kernel)
        agree(messages, b, f"compiled jacobian(mode={mode!r})", b.x, lambda y: compiled, python, per_row=True)
        fd_close(messages, b, f"compiled jacobian(mode={mode!r}) vs central differences", compiled,
                 b.py_batch, b.x)
    fail_on(messages)


@pytest.mark.parametrize("index", range(BATCHES))
def test_random_array_programs_compiled_hessian(index):
    """The compiled hyper-dual Hessian of small (the reverse gradient too in long runs) equals
    the Python path's; no call changes the caller's x."""
    b = get_array_batch(index)
    messages = []
    checks = [("compiled hessian", dualad.hessian(b.nb_small), dualad.hessian(b.py_small, mode="forward"))]
    if LONG_RUN:
        checks.append(("compiled grad(mode='reverse')", dualad.grad(b.nb_small, mode="reverse"),
                       dualad.grad(b.py_small, mode="reverse")))
    for what, kernel, python in checks:
        agree(messages, b, what, b.x, lambda y: unchanged(messages, b, what, y, kernel), python, per_row=False)
    fail_on(messages)
