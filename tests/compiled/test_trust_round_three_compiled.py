"""Regression tests for issue 39 (round three) on the compiled path; each fails on the code
before its fix. One kernel function covers the layout and broadcasting items, so that its
kernels compile once for the file."""

import numba
import numpy as np
import pytest

import dualad


@numba.njit
def views_and_broadcasts(x):
    """x of length 8: an F-ordered matrix written through its reshape to its own shape (a
    view in NumPy and in numba on floats), length-1 operands broadcast, a 3-D array's sum
    method along an axis, and the standard deviation of one entry."""
    m = np.asfortranarray(np.sin(x[:6].reshape(2, 3)))
    v = m.reshape(m.shape)
    v[0, 0] = 10.0 * x[5]
    b = x[:1] * x + np.sin(x[:1]) + x
    t = x.reshape(2, 2, 2) * 1.0
    return np.concatenate((m.ravel(), b, t.sum(axis=0).ravel(), np.array([np.std(x[:1])])))


X = np.linspace(0.3, 1.1, 8)


@pytest.fixture(scope="module")
def python_jacobian():
    return dualad.jacobian(views_and_broadcasts, jit=False)(X)


def test_the_python_twin_is_numpys(python_jacobian):
    np.testing.assert_allclose(views_and_broadcasts(X), views_and_broadcasts.py_func(X), rtol=1e-15)
    assert python_jacobian[0, 5] == 10.0 and python_jacobian[0, 0] == 0.0  # the write through v
    assert np.all(python_jacobian[-1] == 0.0)                                # std of one entry


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_compiled_jacobians_of_views_and_broadcasts_are_the_python_paths(mode, python_jacobian):
    np.testing.assert_allclose(dualad.jacobian(views_and_broadcasts, mode=mode)(X), python_jacobian,
                               rtol=1e-14, atol=1e-14)


def test_compiled_sparse_jacobian_of_views_and_broadcasts(python_jacobian):
    sparse = dualad.jacobian(views_and_broadcasts, sparsity=True)(X).toarray()
    np.testing.assert_allclose(sparse, python_jacobian, rtol=1e-14, atol=1e-14)


@numba.njit
def picks(x, k):
    if x[1] > 0.0:
        return x * x[k]
    return np.sin(x)


def test_a_compiled_sparse_plan_is_checked_where_it_may_not_hold():
    """Kept per integer argument; a plan detected where f branched on x is checked at a new
    x, and detected again where the other branch needs more nonzeros."""
    jac = dualad.jacobian(picks, sparsity=True)
    x = np.array([0.5, 1.0, 2.0, 3.0])
    for k in (0, 2, 3):
        np.testing.assert_allclose(jac(x, k).toarray(), dualad.jacobian(picks, jit=False)(x, k))
    y = np.array([0.5, -1.0, 2.0, 3.0])
    np.testing.assert_allclose(jac(y, 1).toarray(), np.diag(np.cos(y)))
    np.testing.assert_allclose(jac(x, 1).toarray(), dualad.jacobian(picks, jit=False)(x, 1))


@numba.njit
def squares(x):
    return np.sum(x ** 2)


def test_compiled_derivatives_of_float32_inputs_are_float32():
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    for mode in ("forward", "reverse"):
        g = dualad.grad(squares, mode=mode)(x)
        assert g.dtype == np.float32 and np.array_equal(g, 2 * x)
    assert dualad.hessian(squares)(x).dtype == np.float32


def test_compiled_fancy_index_assignment_is_an_error_that_names_the_python_path():
    @numba.njit
    def repeated(x):
        y = x.copy()
        y[np.array([1, 1])] = x[2:]
        return y
    for mode in ("forward", "reverse"):
        with pytest.raises(numba.core.errors.TypingError, match="(?s)takes an integer or a slice.*jit=False"):
            dualad.jacobian(repeated, mode=mode)(np.arange(4.0))
