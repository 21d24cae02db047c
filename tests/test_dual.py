"""Dual and HyperDual on the NumPy surface: forward, hyper-dual and finite differences agree."""

import numpy as np
import pytest

import dualad
from dualad import Dual, HyperDual
from dualad.number import new_tag

from functions import FUNCTIONS, finite_difference_jacobian


def _weights(shape):
    return np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)


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


@pytest.mark.parametrize("name,f,x", FUNCTIONS, ids=[n for n, _, _ in FUNCTIONS])
def test_hyperdual_agrees_with_dual(name, f, x):
    """ε1 and ε2 of a HyperDual pass equal the Dual Jacobian; ε1ε2 equals forward-over-forward."""
    n = x.size
    eye = np.eye(n).reshape(x.shape + (n,))
    tag = new_tag()
    out = f(HyperDual(x, eye, eye, tag=tag))
    jac = dualad.jacfwd(f)(x).reshape(np.shape(out.value) + (n,))
    np.testing.assert_allclose(out.eps1, jac, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.eps2, jac, rtol=1e-12, atol=1e-12)
    scalar = lambda z: np.sum(f(z) * _weights(np.shape(out.value)))  # noqa: E731
    hess = dualad.hessian(scalar)(x)
    nested = dualad.jacfwd(dualad.grad(scalar))(x)
    np.testing.assert_allclose(hess, nested, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(hess, np.swapaxes(hess.reshape(n, n), 0, 1).reshape(hess.shape),
                               rtol=1e-10, atol=1e-10)


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


def test_len_iter_and_shape_attributes():
    d = Dual(np.arange(6.0).reshape(2, 3), np.zeros((2, 3, 4)))
    assert len(d) == 2 and d.shape == (2, 3) and d.ndim == 2 and d.size == 6
    assert [row.shape for row in d] == [(3,), (3,)]
    assert d.T.shape == (3, 2) and d.reshape(3, 2).shape == (3, 2)
    with pytest.raises(TypeError, match="len"):
        len(Dual(1.0, [1.0]))


def test_comparisons_are_by_value():
    a, b = Dual(1.0, [1.0]), Dual(2.0, [-5.0])
    assert a < b and b > a and a <= 1.0 and 2.0 >= b and a != b and a == 1.0
    assert max(a, b) is b
    np.testing.assert_array_equal(Dual(np.array([1.0, 3.0]), np.eye(2)) > 2.0, [False, True])


def test_dual_constructor_validates_shapes():
    with pytest.raises(ValueError, match="partials must have shape"):
        Dual(np.zeros(3), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="eps12"):
        HyperDual(1.0, [1.0], [1.0, 0.0], [[0.0]])


def test_float_and_math_module_raise_clear_errors():
    import math

    d = Dual(1.0, [1.0])
    with pytest.raises(TypeError, match="would drop its derivative.*np.sin.*dualad.math"):
        float(d)
    with pytest.raises(TypeError, match="would drop its derivative"):
        math.sin(d)
    with pytest.raises(TypeError, match="would drop its derivative"):
        np.asarray(Dual(np.ones(2), np.ones((2, 1))))


def test_storing_a_dual_in_a_float_array_raises_clearly():
    y = np.zeros(3)
    # NumPy re-raises our TypeError as "setting an array element with a sequence"; ours is
    # its direct cause, printed in the traceback.
    with pytest.raises((TypeError, ValueError)) as err:
        y[0] = Dual(1.0, [1.0])
    assert "np.zeros_like" in str(err.value) + str(err.value.__cause__)
    with pytest.raises(TypeError, match="a = a \\+ dual"):
        y += Dual(np.ones(3), np.ones((3, 1)))


def test_unsupported_numpy_function_names_itself():
    with pytest.raises(TypeError, match="numpy.fft.fft|fft"):
        np.fft.fft(Dual(np.ones(4), np.ones((4, 1))))
    with pytest.raises(TypeError, match="gcd"):
        np.gcd(Dual(np.ones(4), np.ones((4, 1))), 2)


def test_dual_as_index_is_refused():
    x = Dual(np.ones(3), np.eye(3))
    with pytest.raises(TypeError, match="index"):
        x[Dual(1.0, [1.0])]


def test_int_of_a_dual_truncates_its_value():
    assert int(Dual(2.7, [1.0])) == 2


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
