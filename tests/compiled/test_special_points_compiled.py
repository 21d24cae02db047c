"""Special points on the compiled path: every kernel gives exactly the Python path's numbers
at every row of the tables (tests/special_points.py), inf and nan included."""

import numpy as np
import pytest

import dualad
from special_points import (BINARY, BINARY_EXPRS, BINARY_F, SCALAR, SCALAR_EXPRS, SCALAR_F, python_binary,
                            python_scalar, same)


# ---- compiled kernels: exactly the Python path's numbers --------------------------------------
# Built once, shared by the tests below (each is one numba compilation of the whole table).
KERNELS = {}


def kernel(name):
    if name not in KERNELS:
        KERNELS[name] = {
            "scalar value_and_grad": lambda: dualad.value_and_grad(SCALAR_F),
            "scalar derivative": lambda: dualad.derivative(SCALAR_F),
            "scalar second_derivative": lambda: dualad.second_derivative(SCALAR_F),
            "binary value_and_grad": lambda: dualad.value_and_grad(BINARY_F, mode="forward"),
            "binary grad reverse": lambda: dualad.grad(BINARY_F, mode="reverse"),
            "binary hessian": lambda: dualad.hessian(BINARY_F),
            "binary hessian over reverse": lambda: dualad.hessian(BINARY_F, mode="forward-over-reverse"),
            "binary hvp over reverse": lambda: dualad.hvp(BINARY_F, mode="forward-over-reverse"),
        }[name]()
    return KERNELS[name]


@pytest.mark.parametrize("expr, t, value, first, second", SCALAR)
def test_compiled_scalar_kernels_match_the_python_path(expr, t, value, first, second):
    k = SCALAR_EXPRS.index(expr)
    expected = python_scalar(expr, t)
    got_value, got_first = kernel("scalar value_and_grad")(t, k)
    got = (got_value, got_first, kernel("scalar second_derivative")(t, k))
    assert all(same(g, e) for g, e in zip(got, expected)), (expr, t, got, expected)
    assert same(kernel("scalar derivative")(t, k), expected[1])


@pytest.mark.parametrize("expr, x, value, gradient, hessian", BINARY)
def test_compiled_gradient_and_hessian_kernels_match_the_python_path(expr, x, value, gradient,
                                                                     hessian):
    k, x = BINARY_EXPRS.index(expr), np.array(x)
    expected = python_binary(expr, x)
    got_value, got_gradient = kernel("binary value_and_grad")(x, k)
    got = (got_value, got_gradient, kernel("binary hessian")(x, k))
    assert all(same(g, e) for g, e in zip(got, expected)), (expr, x, got, expected)
    with np.errstate(all="ignore"):
        reverse = dualad.grad(BINARY_F, mode="reverse", jit=False)(x, k)
    assert same(kernel("binary grad reverse")(x, k), reverse), (expr, x, reverse)


@pytest.mark.parametrize("expr, x, value, gradient, hessian", BINARY)
def test_compiled_forward_over_reverse_matches_the_python_tape(expr, x, value, gradient, hessian):
    """Hessians and hvps along each axis (a tangent that is 0 in one input) by forward over
    reverse: the compiled tape's numbers are the Python tape's, inf and nan included."""
    k, x = BINARY_EXPRS.index(expr), np.array(x)
    with np.errstate(all="ignore"):
        expected = dualad.hessian(BINARY_F, mode="forward-over-reverse", jit=False)(x, k)
        products = [dualad.hvp(BINARY_F, mode="forward-over-reverse", jit=False)(x, v, k)
                    for v in np.eye(2)]
    got = kernel("binary hessian over reverse")(x, k)
    assert same(got, expected), (expr, x, got, expected)
    for v, product in zip(np.eye(2), products):
        got = kernel("binary hvp over reverse")(x, v, k)
        assert same(got, product), (expr, x, v, got, product)


@pytest.mark.parametrize("name, x", [
    ("min", [1.0, np.inf, 0.5, 0.5]), ("max", [1.0, -np.inf, 2.0, 2.0]),
    ("median", [1.0, np.inf, 0.5, 0.7]), ("quantile", [1.0, np.inf, 0.5, 0.7]),
    ("percentile", [1.0, -np.inf, 0.5, 0.7])])
def test_weighted_reductions_weight_an_infinite_entry_by_zero_without_a_nan_value(name, x):
    """np.min over [1, inf, 0.5, 0.5] is 0.5: its forward derivatives (Duals, HyperDuals) are
    the tied entries' mean, as on the Python path, and an order statistic's the weighted
    entries'. Guards: 0 · the inf entry making the dual's value nan, and every derivative
    after it (numpy_overloads.weighted)."""
    import numba

    f = numba.njit({"min": lambda x: np.min(x) * x[0], "max": lambda x: np.max(x) * x[0],
                    "median": lambda x: np.median(x) * x[0],
                    "quantile": lambda x: np.quantile(x, 0.25) * x[0],
                    "percentile": lambda x: np.percentile(x, 60.0) * x[0]}[name])
    x = np.array(x)
    with np.errstate(all="ignore"):
        # the tape's actives too (reverse, and forward-over-reverse, whose values are Duals):
        # guards: 0 · the inf entry making the recorded value nan
        for transform, mode in ((dualad.grad, "forward"), (dualad.hessian, "forward"),
                                (dualad.grad, "reverse"), (dualad.hessian, "forward-over-reverse")):
            got = transform(f, mode=mode)(x)
            expected = transform(f.py_func, jit=False, mode=mode)(x)
            assert np.all(np.isfinite(got)), (name, transform, mode, got)
            np.testing.assert_array_equal(got, expected)
