"""dualad.primitive in compiled kernels: a registered primitive whose functions numba compiles
works in every kernel; one it cannot compile names itself."""

import numba
import numpy as np
import pytest
import scipy.special as sp

import dualad
from model_primitives import X, expected_gradient, expected_hessian_diagonal, gammaln, lgamma


@numba.njit(cache=True)
def log_likelihood_loop(x):
    s = 0.0
    for i in range(len(x)):
        s += lgamma(x[i]) * x[i]
    return s


@numba.njit(cache=True)
def log_likelihood_vectorised(x):
    return np.sum(lgamma(x) * x)


def test_compiled_primitive_in_every_compiled_kernel():
    assert log_likelihood_loop(X) == pytest.approx(np.sum(sp.gammaln(X) * X), rel=1e-14)
    expected = expected_gradient(X)
    python_path = dualad.grad(log_likelihood_loop, jit=False)(X)  # the same functions, not compiled
    np.testing.assert_allclose(python_path, expected, rtol=1e-12)
    np.testing.assert_allclose(dualad.grad(log_likelihood_loop)(X), python_path, rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(log_likelihood_loop, mode="reverse")(X), expected, rtol=1e-12)
    np.testing.assert_allclose(dualad.grad(log_likelihood_vectorised)(X), expected, rtol=1e-12)
    np.testing.assert_allclose(dualad.hessian(log_likelihood_loop)(X),
                               np.diag(expected_hessian_diagonal(X)), rtol=1e-12, atol=1e-14)


def test_compiled_primitive_that_numba_cannot_compile_names_itself():
    @numba.njit
    def uses_scipy(x):
        return gammaln(x[0])

    with pytest.raises(numba.core.errors.TypingError,
                       match="(?s)dualad.primitive 'gammaln': numba cannot compile .*jit=False"):
        dualad.grad(uses_scipy)(X)
    np.testing.assert_allclose(dualad.grad(uses_scipy, jit=False)(X), [sp.digamma(0.7), 0, 0, 0])
