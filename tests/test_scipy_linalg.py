"""scipy.linalg on dual numbers (dualad/scipy/linalg.py), called as users write it inside the
differentiated function.

Per function: the Jacobian forward = reverse and against central differences of SciPy's own
function, the value SciPy's own, second derivatives three ways (HyperDual, forward over
reverse, jacfwd of jacrev) of a weighted sum of the output; expm's derivative against
scipy.linalg.expm_frechet; and a Gaussian-process likelihood through cho_factor/cho_solve.
"""

import numpy as np
import pytest
import scipy.linalg
from scipy.linalg import cho_factor, cho_solve

import dualad

RNG = np.random.default_rng(7)
N = 3
A = RNG.normal(size=(N, N)) + 3.0 * np.eye(N)  # well conditioned, its triangles too
C = np.linalg.cholesky(A @ A.T + N * np.eye(N))  # a factor: f(C Cᵀ) is symmetric positive definite
b = RNG.normal(size=N)
B = RNG.normal(size=(N, 2))


def _spd(c):
    return c @ c.T


# name -> (f of one matrix, the point); a matrix SciPy reads as symmetric is made from a factor
CASES = {
    "solve": (lambda a: scipy.linalg.solve(a, b), A),
    "solve transposed": (lambda a: scipy.linalg.solve(a, B, transposed=True), A),
    "solve pos": (lambda c: scipy.linalg.solve(_spd(c), B, assume_a="pos"), C),
    "solve sym lower": (lambda a: scipy.linalg.solve(a, b, assume_a="sym", lower=True), A),
    "solve_triangular": (lambda a: scipy.linalg.solve_triangular(a, b, lower=True), A),
    "solve_triangular trans": (lambda a: scipy.linalg.solve_triangular(a, B, trans="T", unit_diagonal=True), A),
    "cholesky": (lambda c: scipy.linalg.cholesky(_spd(c)), C),
    "cholesky lower": (lambda c: scipy.linalg.cholesky(_spd(c), lower=True), C),
    "cho_factor": (lambda c: scipy.linalg.cho_factor(_spd(c), lower=True)[0], C),
    "cho_solve": (lambda c: cho_solve(cho_factor(_spd(c)), B), C),
    "cho_solve lower": (lambda c: cho_solve(cho_factor(_spd(c), lower=True), b), C),
    "lu_factor": (lambda a: scipy.linalg.lu_factor(a)[0], A),
    "lu_solve": (lambda a: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), B), A),
    "lu_solve trans": (lambda a: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=1), A),
    "inv": (lambda a: scipy.linalg.inv(a), A),
    "det": (lambda a: scipy.linalg.det(a), A),
    "expm": (lambda a: scipy.linalg.expm(a), A),
}


def _differences(f, x, h=1e-4):
    """∂f/∂x by central differences, Richardson extrapolated: shape f(x).shape + x.shape."""
    def central(step):
        columns = []
        for index in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[index] = step
            columns.append((f(x + e) - f(x - e)) / (2 * step))
        return np.moveaxis(np.array(columns).reshape(x.shape + np.shape(f(x))),
                           list(range(x.ndim)), list(range(-x.ndim, 0)))
    return (4 * central(h / 2) - central(h)) / 3


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacobian_value_and_second_order(name):
    f, x = CASES[name]
    forward = dualad.jacobian(f, mode="forward")(x)
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x), forward, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(forward, _differences(f, x), rtol=1e-8, atol=1e-9)
    value, _ = dualad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(value, f(x))
    weights = np.linspace(0.5, 1.5, np.size(f(x))).reshape(np.shape(f(x)))

    def g(x):
        return np.sum(weights * f(x))
    hessian = dualad.hessian(g, mode="forward")(x)
    np.testing.assert_allclose(dualad.hessian(g, mode="forward-over-reverse")(x), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(g))(x), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian, _differences(dualad.grad(g), x), rtol=1e-6, atol=1e-7)


def test_expm_derivative_is_the_frechet_derivative():
    a = 3.0 * RNG.normal(size=(4, 4))  # a 1-norm past θ₁₃: scaling and squaring
    e = RNG.normal(size=(4, 4))
    value, tangent = dualad.jvp(lambda a: scipy.linalg.expm(a), (a,), (e,))
    np.testing.assert_array_equal(value, scipy.linalg.expm(a))
    np.testing.assert_allclose(tangent, scipy.linalg.expm_frechet(a, e, compute_expm=False), rtol=1e-11)


def test_plain_arrays_are_scipys():
    def f(x):
        return x * scipy.linalg.det(A) + np.sum(scipy.linalg.solve(A, b))
    assert float(dualad.grad(f)(1.0)) == scipy.linalg.det(A)


# ---- end to end: a Gaussian process's log marginal likelihood ----------------------------------------
X = np.linspace(0.0, 5.0, 12)
Y = np.sin(X) + 0.1 * np.cos(3.0 * X)


def gp_log_likelihood(theta):
    """log N(y; 0, K), K = σ² exp(-(x - x')²/2ℓ²) + s² I, θ = log(σ, ℓ, s)."""
    sigma, length, noise = np.exp(theta)
    k = sigma ** 2 * np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / length ** 2) + noise ** 2 * np.eye(X.size)
    factor = cho_factor(k, lower=True)
    alpha = cho_solve(factor, Y)
    return -0.5 * Y @ alpha - np.sum(np.log(np.diag(factor[0]))) - 0.5 * X.size * np.log(2 * np.pi)


def gp_log_likelihood_numpy(theta):
    sigma, length, noise = np.exp(theta)
    k = sigma ** 2 * np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / length ** 2) + noise ** 2 * np.eye(X.size)
    sign, logdet = np.linalg.slogdet(k)
    return -0.5 * Y @ np.linalg.solve(k, Y) - 0.5 * logdet - 0.5 * X.size * np.log(2 * np.pi)


def test_a_gaussian_process_likelihood_through_cho_solve():
    theta = np.log([1.3, 0.8, 0.2])
    reference = dualad.grad(gp_log_likelihood_numpy)(theta)
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(dualad.grad(gp_log_likelihood, mode=mode)(theta), reference, rtol=1e-10)
    np.testing.assert_allclose(reference, _differences(gp_log_likelihood, theta), rtol=1e-7)
    hessian = dualad.hessian(gp_log_likelihood)(theta)
    np.testing.assert_allclose(hessian, dualad.hessian(gp_log_likelihood_numpy)(theta), rtol=1e-9)
    np.testing.assert_allclose(dualad.hessian(gp_log_likelihood, mode="forward-over-reverse")(theta), hessian,
                               rtol=1e-10)
    value, _ = dualad.value_and_grad(gp_log_likelihood)(theta)
    assert value == gp_log_likelihood(theta)
