"""dualad.primitive: one registration works in Dual, HyperDual and reverse mode (numba:
tests/compiled/test_primitives_compiled.py)."""

import math

import mpmath
import numpy as np
import pytest
import scipy.special as sp

import dualad
from model_primitives import (X, expected_gradient, expected_hessian_diagonal, gammaln, gammaln_first_only,
                              log_likelihood)


def test_plain_inputs_call_the_value_function():
    assert gammaln(4.0) == pytest.approx(math.log(6.0), rel=1e-15)
    np.testing.assert_array_equal(gammaln(X), sp.gammaln(X))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_gradient_in_both_modes(mode):
    np.testing.assert_allclose(dualad.grad(log_likelihood, mode=mode)(X), expected_gradient(X), rtol=1e-14)


@pytest.mark.parametrize("mode", ["forward", "forward-over-reverse"])
def test_hessian_with_hyperduals_and_through_the_tape(mode):
    hess = dualad.hessian(log_likelihood, mode=mode)(X)
    np.testing.assert_allclose(hess, np.diag(expected_hessian_diagonal(X)), rtol=1e-13, atol=1e-15)


def test_nested_derivatives_use_the_partials_as_primitives():
    d = dualad.derivative
    assert d(gammaln)(2.5) == pytest.approx(float(mpmath.digamma(2.5)), rel=1e-14)
    assert d(d(gammaln))(2.5) == pytest.approx(float(mpmath.polygamma(1, 2.5)), rel=1e-14)
    assert dualad.jacfwd(dualad.jacrev(log_likelihood))(X) == pytest.approx(
        dualad.hessian(log_likelihood)(X), rel=1e-13)


def test_a_primitive_as_partial_gives_any_order():
    trigamma_p = dualad.primitive(lambda x: sp.polygamma(1, x), first=lambda x: sp.polygamma(2, x),
                                  second=lambda x: sp.polygamma(3, x), name="trigamma")
    gammaln4 = dualad.primitive(sp.gammaln, first=sp.digamma, second=trigamma_p, name="gammaln4")
    d = dualad.derivative
    assert d(d(d(gammaln4)))(2.5) == pytest.approx(float(mpmath.polygamma(2, 2.5)), rel=1e-13)
    assert d(d(d(d(gammaln4))))(2.5) == pytest.approx(float(mpmath.polygamma(3, 2.5)), rel=1e-13)


def test_binary_primitive_agrees_with_the_built_in_rules():
    def exp_product(x, z):
        return np.exp(x * z)

    pexp = dualad.primitive(
        exp_product,
        first=(lambda x, z: z * np.exp(x * z), lambda x, z: x * np.exp(x * z)),
        second={(0, 0): lambda x, z: z * z * np.exp(x * z),
                (0, 1): lambda x, z: (1 + x * z) * np.exp(x * z),
                (1, 1): lambda x, z: x * x * np.exp(x * z)})
    v = np.array([0.3, -0.7])
    registered = lambda v: pexp(v[0], v[1]) * v[0]  # noqa: E731
    built_in = lambda v: np.exp(v[0] * v[1]) * v[0]  # noqa: E731
    for transform in (dualad.grad, lambda f: dualad.grad(f, mode="reverse"), dualad.hessian,
                      lambda f: dualad.hessian(f, mode="forward-over-reverse")):
        np.testing.assert_allclose(transform(registered)(v), transform(built_in)(v), rtol=1e-14)
    # a constant operand: only the other partial is used
    assert dualad.derivative(lambda x: pexp(x, 2.0))(0.5) == pytest.approx(2 * math.exp(1.0), rel=1e-15)


def test_missing_partials_say_which_order_is_needed():
    assert dualad.grad(lambda x: np.sum(gammaln_first_only(x)))(X) == pytest.approx(sp.digamma(X))
    with pytest.raises(TypeError, match="'gammaln_first_only' has partials up to order 1 .*second "
                                        "derivative; pass second="):
        dualad.hessian(lambda x: np.sum(gammaln_first_only(x)))(X)
    with pytest.raises(TypeError, match="up to order 2 .*third derivative"):
        dualad.derivative(dualad.derivative(dualad.derivative(gammaln)))(2.0)


def test_registration_errors():
    with pytest.raises(TypeError, match="first= as one function"):
        dualad.primitive(np.sin, first=(np.cos,))
    with pytest.raises(TypeError, match="second= of a two-argument primitive is a dict"):
        dualad.primitive(np.add, first=(np.ones_like, np.ones_like), second=np.zeros_like)
    with pytest.raises(TypeError, match="gammaln takes 1 argument, got 2"):
        gammaln(1.0, 2.0)
