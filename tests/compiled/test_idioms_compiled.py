"""Real code as it is written (issue 40) on the compiled path: a loop-carried float array
that becomes an array of duals (the explicit integrator), a right-hand side that returns a
list, and numba-stats' `type(x)(c)` constants. Each against the Python path."""

import numba
import numpy as np
import pytest

import dualad


@numba.njit
def rotation(x, p):
    return np.array([p[0] * x[1], -p[1] * x[0]])


@numba.njit
def euler(p):
    """Explicit Euler steps of x' = rotation(x, p) from a float x0: x is a float array, then
    an array of duals (the standard integrator loop)."""
    x0 = np.array([1.0, 0.0])
    x = x0.copy()
    for _ in range(10):
        x = x + 0.1 * rotation(x, p)
    return x


@numba.njit
def robertson_list(y):
    """A right-hand side that returns a list, with numba-stats' type(x)(c) constants."""
    T = type(y[0])
    return [-T(0.04) * y[0] + T(1e4) * y[1] * y[2], T(0.04) * y[0] - T(1e4) * y[1] * y[2] - T(3e7) * y[1] ** 2,
            T(3e7) * y[1] ** 2]


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_a_loop_carried_float_array_becomes_dual(mode):
    p = np.array([1.0, 2.0])
    np.testing.assert_allclose(dualad.jacobian(euler, mode=mode)(p),
                               dualad.jacobian(euler, jit=False)(p), rtol=1e-13)


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_a_list_output_with_type_of_x_constants(mode):
    y = np.array([1.0, 2e-5, 0.1])
    expected = [[-0.04, 1e4 * y[2], 1e4 * y[1]], [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                [0.0, 6e7 * y[1], 0.0]]
    np.testing.assert_allclose(dualad.jacobian(robertson_list, mode=mode)(y), expected, rtol=1e-13)
    np.testing.assert_allclose(dualad.jacobian(robertson_list, jit=False)(y), expected, rtol=1e-13)
