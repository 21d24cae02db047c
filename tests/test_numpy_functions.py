"""NumPy functions on dual numbers (numpy_functions.py): every shared test function's Jacobian
matches finite differences and its value is untouched by the duals; buffers, linear algebra's
second derivatives and the errors for what is not supported."""

import numpy as np
import pytest

import dualad
from dualad import Dual
from functions import FUNCTIONS, finite_difference_jacobian


@pytest.mark.parametrize("name,f,x", FUNCTIONS, ids=[n for n, _, _ in FUNCTIONS])
def test_jacobian_matches_finite_differences(name, f, x):
    jac = dualad.jacobian(f)(x)
    ref = finite_difference_jacobian(f, x)
    assert jac.shape == np.shape(f(x)) + x.shape
    np.testing.assert_allclose(jac, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,f,x", FUNCTIONS, ids=[n for n, _, _ in FUNCTIONS])
def test_value_unchanged_by_duals(name, f, x):
    out = dualad.jvp(f, (x,), (np.ones_like(x),))[0]
    np.testing.assert_allclose(out, f(x), rtol=1e-14, atol=0)


def test_item_assignment_into_zeros_like_buffer():
    def f(x):
        y = np.zeros_like(x)
        y[0] = x[0] * x[1]
        y[1] = 3.0
        return y

    np.testing.assert_array_equal(dualad.jacobian(f)(np.array([2.0, 5.0])), [[5.0, 2.0], [0.0, 0.0]])


def test_buffer_from_one_transform_filled_by_a_nested_one():
    # The inner transform's perturbation lands in a buffer allocated from the outer input.
    def outer(x):
        buf = np.zeros_like(np.stack([x, x]))
        buf[0] = dualad.derivative(lambda y: y * x)(1.0)
        return buf[0]

    assert dualad.derivative(outer)(3.0) == 1.0


def test_linalg_second_derivatives_exact():
    # d²/dt² det(A + tB) at t=0 = 2·det(A)·(c2) with c2 the second invariant of A⁻¹B: check
    # against the closed form for 2x2: det(A + tB) is a quadratic in t with t² coefficient det(B).
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    bm = np.array([[0.3, -1.0], [2.0, 0.7]])
    f = lambda t: np.linalg.det(a + t * bm)  # noqa: E731
    assert dualad.second_derivative(f)(0.0) == pytest.approx(2 * np.linalg.det(bm), rel=1e-13)
    g = lambda t: np.linalg.inv(a + t * bm)[0, 1]  # noqa: E731
    # d²/dt² (A+tB)⁻¹ = 2 A⁻¹ B A⁻¹ B A⁻¹ at t = 0
    ai = np.linalg.inv(a)
    assert dualad.second_derivative(g)(0.0) == pytest.approx((2 * ai @ bm @ ai @ bm @ ai)[0, 1], rel=1e-12)


def test_unsupported_numpy_function_names_itself():
    with pytest.raises(TypeError, match="numpy.fft.fft|fft"):
        np.fft.fft(Dual(np.ones(4), np.ones((4, 1))))
    with pytest.raises(TypeError, match="gcd"):
        np.gcd(Dual(np.ones(4), np.ones((4, 1))), 2)



@pytest.mark.parametrize("f", [
    lambda x: np.matmul(np.ones((0, 2, 2)), x.reshape(2, 2)),
    lambda x: np.einsum("...i,...i->...i", np.ones((0, 4)), x.reshape(1, 4)),
    lambda x: np.einsum("ab,bc,cd->ad", np.ones((2, 0)), np.ones((0, 1)), x.reshape(1, 4)),
    lambda x: np.linalg.inv(np.ones((0, 2, 2)) + x.reshape(2, 2)),
    lambda x: np.linalg.det(np.ones((0, 2, 2)) + x.reshape(2, 2)),
])
def test_contractions_with_empty_axes_have_empty_or_zero_jacobians(f):
    """Length-0 axes reach np.einsum itself (the matmul plans size every letter at least 1)."""
    x = np.array([1.0, 2.0, 3.0, 5.0])
    expected = np.zeros(np.shape(f(x)) + x.shape)
    for transform in (dualad.jacfwd, dualad.jacrev):
        np.testing.assert_array_equal(transform(f)(x), expected)
