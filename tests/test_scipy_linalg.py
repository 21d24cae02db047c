"""scipy.linalg on dual numbers (dualad/scipy/linalg.py), called as users write it inside the
differentiated function.

Per function: the Jacobian forward = reverse and against central differences of SciPy's own
function, the value SciPy's own, second derivatives three ways (HyperDual, forward over
reverse, jacfwd of jacrev) of a weighted sum of the output; expm's derivative against
scipy.linalg.expm_frechet, sqrtm's against X dX + dX X = dA, logm's against expm_frechet at
log A (the inverse function's), sqrtm's third derivative against differences; the signs of
SciPy's eigenvectors and singular vectors; the refusals, each naming what has no derivative;
and a Gaussian-process likelihood through cho_factor/cho_solve.
"""

import numpy as np
import pytest
import scipy.linalg
from scipy.linalg import cho_factor, cho_solve

import dualad
from helpers import assert_second_order_three_ways, richardson_jacobian
from dualad.scipy import linalg as stand_ins
from dualad.scipy.values import NotDifferentiated

RNG = np.random.default_rng(7)
N = 3
A = RNG.normal(size=(N, N)) + 3.0 * np.eye(N)  # well conditioned, its triangles too
C = np.linalg.cholesky(A @ A.T + N * np.eye(N))  # a factor: f(C Cᵀ) is symmetric positive definite
b = RNG.normal(size=N)
B = RNG.normal(size=(N, 2))


T = RNG.normal(size=(4, 3))  # tall and wide, of full rank
W = RNG.normal(size=(3, 4))
Q = np.array([[1.5, -0.8, 0.2], [0.9, 1.2, -0.3], [0.1, 0.4, 2.0]])  # complex eigenvalues, real sqrt and log


def _spd(c):
    return c @ c.T


def _signed(v):
    """Eigenvectors with the sign of their first row fixed: LAPACK's own sign may flip between
    the points of a central difference."""
    return v * np.sign(v[:1])


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
    "eigh": (lambda c: _signed(scipy.linalg.eigh(_spd(c))[1]), C),
    "eigh eigenvalues": (lambda c: scipy.linalg.eigh(_spd(c))[0], C),
    "eigh upper eigvals_only": (lambda a: scipy.linalg.eigh(a, lower=False, eigvals_only=True), A),
    "eigh subset_by_index": (lambda c: _signed(scipy.linalg.eigh(_spd(c), subset_by_index=[1, 2])[1]), C),
    "eigh subset_by_value": (lambda c: scipy.linalg.eigh(_spd(c), subset_by_value=[3.0, np.inf])[0], C),
    "eigh generalised": (lambda c: _signed(scipy.linalg.eigh(_spd(c), _spd(C) + np.eye(N))[1]), C),
    "eigh generalised b": (lambda c: scipy.linalg.eigh(_spd(C), _spd(c) + np.eye(N), lower=False)[0], C),
    "eigh generalised type 2": (lambda c: _signed(scipy.linalg.eigh(_spd(C), _spd(c), type=2)[1]), C),
    "eigh generalised type 3": (lambda c: _signed(scipy.linalg.eigh(_spd(c), _spd(C), type=3)[1]), C),
    "eigvalsh": (lambda a: scipy.linalg.eigvalsh(a), A),
    "svd U": (lambda a: scipy.linalg.svd(a)[0], A),
    "svd Vh tall": (lambda a: scipy.linalg.svd(a, full_matrices=False)[2], T),
    "svd U wide": (lambda a: scipy.linalg.svd(a, full_matrices=False, lapack_driver="gesvd")[0], W),
    "svd s": (lambda a: scipy.linalg.svd(a, compute_uv=False), W),
    "svdvals": (lambda a: scipy.linalg.svdvals(a), T),
    "qr Q": (lambda a: scipy.linalg.qr(a)[0], A),
    "qr economic Q": (lambda a: scipy.linalg.qr(a, mode="economic")[0], T),
    "qr economic R": (lambda a: scipy.linalg.qr(a, mode="economic")[1], T),
    "qr r tall": (lambda a: scipy.linalg.qr(a, mode="r")[0], T),
    "qr full wide": (lambda a: scipy.linalg.qr(a)[1], W),
    "qr pivoting": (lambda a: scipy.linalg.qr(a, pivoting=True)[1], A),
    "lstsq x": (lambda a: scipy.linalg.lstsq(a, np.arange(4.0))[0], T),
    "lstsq residues": (lambda a: scipy.linalg.lstsq(a, np.arange(4.0))[1], T),
    "lstsq residues of columns": (lambda a: scipy.linalg.lstsq(a, np.arange(8.0).reshape(4, 2) ** 2)[1], T),
    "lstsq s": (lambda a: scipy.linalg.lstsq(a, np.arange(4.0), lapack_driver="gelss")[3], T),
    "lstsq wide": (lambda a: scipy.linalg.lstsq(a, np.arange(3.0))[0], W),
    "lstsq b": (lambda y: scipy.linalg.lstsq(T, y)[0], np.arange(4.0)),
    "pinv": (lambda a: scipy.linalg.pinv(a), T),
    "pinv atol": (lambda a: scipy.linalg.pinv(a, atol=1e-3, rtol=1e-6), W),
    "lu L": (lambda a: scipy.linalg.lu(a)[1], A),
    "lu U": (lambda a: scipy.linalg.lu(a)[2], A),
    "lu tall": (lambda a: scipy.linalg.lu(a)[1], T),
    "lu wide": (lambda a: scipy.linalg.lu(a, p_indices=True)[2], W),
    "lu permute_l": (lambda a: scipy.linalg.lu(a, permute_l=True)[0], A),
    "solve_banded": (lambda a: scipy.linalg.solve_banded((1, 1), a, b), A),
    "solve_banded (1, 2)": (lambda a: scipy.linalg.solve_banded((1, 2), np.vstack([a, a[:1]]) + [[0.0], [0.0], [4.0], [0.0]],
                                                                B), A),
    "solve_banded b": (lambda y: scipy.linalg.solve_banded((2, 0), A + [[4.0], [0.0], [0.0]], y), b),
    "solveh_banded": (lambda a: scipy.linalg.solveh_banded(0.3 * a[:2] + [[0.0], [4.0]], b), A),
    "solveh_banded lower": (lambda a: scipy.linalg.solveh_banded(0.3 * a + [[4.0], [0.0], [0.0]], B, lower=True), A),
    "sqrtm": (lambda a: scipy.linalg.sqrtm(a), A),
    "sqrtm complex eigenvalues": (lambda a: scipy.linalg.sqrtm(a), Q),
    "logm": (lambda a: scipy.linalg.logm(a), A),
    "logm complex eigenvalues": (lambda a: scipy.linalg.logm(a), Q),
    "block_diag": (lambda a: scipy.linalg.block_diag(a, 2.0, a[0], a[:2, :1]), A),
    "toeplitz": (lambda a: scipy.linalg.toeplitz(a[0], a[1, :2]), A),
    "toeplitz symmetric": (lambda a: scipy.linalg.toeplitz(a[0]), A),
    "toeplitz batch": (lambda a: scipy.linalg.toeplitz(a[:2], [9.0, 8.0, 7.0, 6.0]), A),
    "circulant": (lambda a: scipy.linalg.circulant(a[:, 1:]), A),
}


def _differences(f, x, h=1e-4):
    return richardson_jacobian(f, x, h)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacobian_value_and_second_order(name):
    f, x = CASES[name]
    forward = dualad.jacobian(f, mode="forward")(x)
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x), forward, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(forward, _differences(f, x), rtol=1e-8, atol=1e-9)
    value, _ = dualad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(value, f(x))
    assert_second_order_three_ways(f, x, 1e-12, _differences)


def test_expm_derivative_is_the_frechet_derivative():
    a = 3.0 * RNG.normal(size=(4, 4))  # a 1-norm past θ₁₃: scaling and squaring
    e = RNG.normal(size=(4, 4))
    value, tangent = dualad.jvp(lambda a: scipy.linalg.expm(a), (a,), (e,))
    np.testing.assert_array_equal(value, scipy.linalg.expm(a))
    np.testing.assert_allclose(tangent, scipy.linalg.expm_frechet(a, e, compute_expm=False), rtol=1e-11)


# ---- sqrtm and logm: Fréchet derivatives from the block identity ----------------------------------------
E = RNG.normal(size=(N, N))
G = RNG.normal(size=(N, N))


@pytest.mark.parametrize("x", [A, Q], ids=["real eigenvalues", "complex eigenvalues"])
def test_sqrtm_derivative_solves_x_dx_plus_dx_x_equals_da(x):
    value, dx = dualad.jvp(lambda a: scipy.linalg.sqrtm(a), (x,), (E,))
    np.testing.assert_array_equal(value, scipy.linalg.sqrtm(x))
    np.testing.assert_allclose(value @ dx + dx @ value, E, atol=1e-13)


@pytest.mark.parametrize("x", [A, Q], ids=["real eigenvalues", "complex eigenvalues"])
def test_logm_derivative_inverts_scipys_expm_frechet(x):
    value, dx = dualad.jvp(lambda a: scipy.linalg.logm(a), (x,), (E,))  # e^log A = A: L_exp(log A, dX) = dA
    np.testing.assert_array_equal(value, scipy.linalg.logm(x))
    np.testing.assert_allclose(scipy.linalg.expm_frechet(value, dx, compute_expm=False), E, atol=1e-13)


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_one_cotangent_is_the_transposed_block_identity(name):
    """A gradient sweeps one cotangent back: L(Aᵀ, G), one 2n block, with ⟨G, L(A, E)⟩ = ⟨L(Aᵀ, G), E⟩."""
    f = getattr(scipy.linalg, name)
    _, dx = dualad.jvp(lambda a: f(a), (Q,), (E,))
    gradient = dualad.grad(lambda a: np.sum(G * f(a)))(Q)
    np.testing.assert_allclose(np.sum(gradient * E), np.sum(G * dx), rtol=1e-12)


def test_sqrtm_third_derivative_from_x_squared_equals_a():
    def line(s):
        return np.sum(G * scipy.linalg.sqrtm(A + s * E))

    def third_difference(h):
        return (line(2 * h) - 2 * line(h) + 2 * line(-h) - line(-2 * h)) / (2 * h ** 3)
    third = dualad.derivative(dualad.derivative(dualad.derivative(line)))(0.0)
    np.testing.assert_allclose(third, (4 * third_difference(0.01) - third_difference(0.02)) / 3, rtol=1e-6)


def test_logm_third_derivative_is_refused_by_name():
    def line(s):
        return np.sum(scipy.linalg.logm(A + s * E))
    with pytest.raises(NotDifferentiated, match="logm: derivatives of order 3"):
        dualad.derivative(dualad.derivative(dualad.derivative(line)))(0.0)


def test_sqrtm_of_a_stack_is_per_matrix():
    stack, tangents = np.stack([A, Q]), np.stack([E, G])
    value, dx = dualad.jvp(lambda a: scipy.linalg.sqrtm(a), (stack,), (tangents,))
    np.testing.assert_array_equal(value, scipy.linalg.sqrtm(stack))
    for k in range(2):
        alone = dualad.jvp(lambda a: scipy.linalg.sqrtm(a), (stack[k],), (tangents[k],))[1]
        np.testing.assert_array_equal(dx[k], alone)


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_sparsity_of_matrix_functions_is_dense(name):
    f = getattr(scipy.linalg, name)
    assert dualad.jacobian_sparsity(lambda a: f(a))(A).toarray().all()
    assert dualad.hessian_sparsity(lambda a: np.sum(f(a)))(A).toarray().all()


# ---- SciPy's conventions: signs, pivots, the outputs' types --------------------------------------------
DECOMPOSITIONS = {
    "eigh": (lambda c: scipy.linalg.eigh(_spd(c)), C),
    "eigh generalised": (lambda c: scipy.linalg.eigh(_spd(c), _spd(C) + np.eye(N), type=3), C),
    "svd": (lambda a: scipy.linalg.svd(a), A),
    "svd economic": (lambda a: scipy.linalg.svd(a, full_matrices=False), T),
    "qr": (lambda a: scipy.linalg.qr(a), W),
    "qr pivoting economic": (lambda a: scipy.linalg.qr(a, mode="economic", pivoting=True), T),
    "lu": (lambda a: scipy.linalg.lu(a), T),
    "lu p_indices": (lambda a: scipy.linalg.lu(a, p_indices=True), W),
    "pinv return_rank": (lambda a: scipy.linalg.pinv(a, return_rank=True), T),
}


@pytest.mark.parametrize("name", sorted(DECOMPOSITIONS))
def test_every_output_is_scipys_signs_and_pivots_included(name):
    f, x = DECOMPOSITIONS[name]
    value, _ = dualad.jvp(f, (x,), (np.ones_like(x),))
    expected = f(x)
    assert len(value) == len(expected)
    for got, want in zip(value, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("driver", ["gelsd", "gelsy"])
def test_lstsq_returns_scipys_four_outputs(driver):
    want = scipy.linalg.lstsq(T, b[:3].tolist() + [1.0], lapack_driver=driver)
    seen = []

    def f(a, k):
        x, residues, rank, s = scipy.linalg.lstsq(a, b[:3].tolist() + [1.0], lapack_driver=driver)
        seen.append((rank, type(rank), np.shape(residues), s is None))  # plain numbers only
        return (x, residues, s)[k]
    for k in range(2 if driver == "gelsy" else 3):
        value, _ = dualad.jvp(lambda a: f(a, k), (T,), (np.ones_like(T),))
        np.testing.assert_array_equal(value, want[(0, 1, 3)[k]])
    assert seen[-1] == (3, type(want[2]), np.shape(want[1]), driver == "gelsy")


@pytest.mark.parametrize("name", ["eigh", "eigvalsh", "svd", "svdvals", "qr", "lstsq", "pinv", "lu",
                                  "solve_banded", "solveh_banded", "sqrtm", "logm", "block_diag", "toeplitz",
                                  "circulant"])
def test_stand_ins_on_plain_arrays_are_scipys_functions(name):
    args = {"lstsq": (T, b[:3].tolist() + [1.0]), "solve_banded": ((1, 1), A, b),
            "solveh_banded": (np.abs(A[:2]) + [[0.0], [4.0]], b), "block_diag": (A, W), "toeplitz": (b, W[0]),
            "circulant": (b,)}.get(name, (A @ A.T,))
    got, want = getattr(stand_ins, name)(*args), getattr(scipy.linalg, name)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)


# ---- refusals: each names what has no derivative, or the option, and what works ---------------------------
REFUSALS = {
    "svd full_matrices": (lambda a: scipy.linalg.svd(a)[0], T, NotDifferentiated, "full_matrices=False"),
    "qr full of a tall matrix": (lambda a: scipy.linalg.qr(a)[0], T, NotDifferentiated, "mode='economic'"),
    "qr raw": (lambda a: scipy.linalg.qr(a, mode="raw")[1], T, NotDifferentiated, "mode='raw'"),
    "eigh of a stack": (lambda a: scipy.linalg.eigh(a)[0], np.stack([_spd(C)] * 2), NotDifferentiated,
                        "each matrix of the stack"),
    "eigh repeated eigenvalues": (lambda a: scipy.linalg.eigh(a)[1], np.eye(N), np.linalg.LinAlgError,
                                  "repeated eigenvalues"),
    "lstsq rank-deficient": (lambda a: scipy.linalg.lstsq(a, np.ones(4))[0], np.outer(np.arange(1.0, 5.0), b),
                             stand_ins.NoDerivative, "rank 1 < 3.*pinv"),
    "lu zero pivot": (lambda a: scipy.linalg.lu(a)[1], A * [0.0, 1.0, 1.0], stand_ins.NoDerivative,
                      "pivot of column 0 is 0"),
    "sqrtm singular": (lambda a: scipy.linalg.sqrtm(a), np.diag([1.0, 2.0, 0.0]), stand_ins.NoDerivative,
                       "singular"),
    "sqrtm negative eigenvalue": (lambda a: scipy.linalg.sqrtm(a), np.diag([1.0, 2.0, -1.0]), stand_ins.NoDerivative,
                                  "no real principal square root"),
    "logm negative eigenvalue": (lambda a: scipy.linalg.logm(a), np.diag([1.0, 2.0, -1.0]), stand_ins.NoDerivative,
                                 "no real principal logarithm"),
}


@pytest.mark.parametrize("mode", ["forward", "reverse"])
@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_name_what_has_no_derivative(name, mode):
    f, x, error, message = REFUSALS[name]
    with pytest.raises(error, match=message):
        dualad.jacobian(f, mode=mode)(x)


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


def test_logm_second_order_of_a_larger_matrix_warns_that_it_is_slow():
    """logm's Hessian costs n⁴/2 Fréchet blocks and an n⁶ tensor: said, not silent."""
    from dualad.scipy.linalg import SLOW_SECOND_ORDER, _FRECHET
    n = SLOW_SECOND_ORDER
    a = np.eye(n) * 2.0 + 0.1 * RNG.normal(size=(n, n))
    _FRECHET.clear()
    with pytest.warns(dualad.SlowPathWarning, match="logm's second derivatives at n = 6"):
        dualad.hessian(lambda x: np.sum(scipy.linalg.logm(x.reshape(n, n))), mode="forward")(a.ravel())
