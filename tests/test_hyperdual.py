"""HyperDual numbers (hyperdual.py): a hyper-dual pass agrees with Dual passes and nested
forward mode on every shared test function; hyper-duals nest inside duals; the constructor."""

import numpy as np
import pytest

import dualad
from dualad import HyperDual
from dualad.number import new_tag
from functions import FUNCTIONS, rosen


def _weights(shape):
    return np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)


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


def test_hessian_of_a_gradient_norm_nests_hyperdual_inside_dual():
    g = dualad.grad(rosen)
    f = lambda x: np.sum(g(x) ** 2)  # noqa: E731
    x = np.array([0.4, 0.9, -0.3])
    np.testing.assert_allclose(dualad.hessian(f)(x), dualad.jacfwd(dualad.grad(f))(x), rtol=1e-12)


def test_hyperdual_constructor_validates_shapes():
    with pytest.raises(ValueError, match="eps12"):
        HyperDual(1.0, [1.0], [1.0, 0.0], [[0.0]])
