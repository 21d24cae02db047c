"""numpy.linalg (dualad/functions/linalg.py) on every layer: forward = reverse = central
differences at first order; hyper-dual = jacfwd(jacrev) = jacrev(jacfwd) (= central differences
of the gradient) at second order; values identical to NumPy's on Dual, HyperDual and the tape;
the errors where a derivative does not exist (repeated eigen/singular values, rank deficiency).

Eigenvectors and singular vectors are tested through functions blind to their signs
(projectors, squares, u diag(s) vh)."""

import numpy as np
import pytest

import dualad
from dualad import HyperDual
from dualad.functions.linalg import GAP_RTOL

LinAlgError = np.linalg.LinAlgError
RNG = np.random.default_rng(1913)


def _spd(n, *stack):
    """Symmetric positive definite, plus noise in the strict upper triangle (which cholesky,
    eigh and eigvalsh never read: the central differences see a zero derivative there)."""
    b = RNG.normal(size=stack + (n, n))
    return (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
            + np.triu(RNG.normal(size=stack + (n, n)), 1))


def _normal(*shape):
    return RNG.normal(size=shape)


# ---- the checks -------------------------------------------------------------------------------
def central_jacobian(f, x, h=1e-5):
    y = np.asarray(f(x))
    jac = np.zeros(y.shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        jac[(...,) + i] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return jac


def assert_first_order(f, x):
    forward = dualad.jacobian(f, mode="forward")(x)
    reverse = dualad.jacobian(f, mode="reverse")(x)
    ref = central_jacobian(f, x)
    scale = max(1.0, np.max(np.abs(ref)))
    assert forward.shape == np.shape(f(x)) + x.shape
    np.testing.assert_allclose(forward, ref, rtol=1e-6, atol=1e-6 * scale)
    np.testing.assert_allclose(reverse, forward, rtol=1e-12, atol=1e-12 * scale)


def assert_second_order(g, x):
    hyper = dualad.hessian(g, mode="forward")(x)
    fwd_rev = dualad.jacfwd(dualad.jacrev(g))(x)
    rev_fwd = dualad.jacrev(dualad.jacfwd(g))(x)
    scale = max(1.0, np.max(np.abs(hyper)))
    np.testing.assert_allclose(fwd_rev, hyper, rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_allclose(rev_fwd, hyper, rtol=1e-10, atol=1e-10 * scale)
    # the three share one JVP: the exact gradient's differences check its second derivative
    ref = central_jacobian(dualad.grad(g, mode="reverse"), x)
    np.testing.assert_allclose(hyper, ref, rtol=1e-6, atol=1e-6 * scale)


def _primal(tree):
    """The values of a (named) tuple of layers, of NumPy's container types."""
    if isinstance(tree, tuple):
        items = [_primal(item) for item in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else tuple(items)
    return dualad.primal(tree)


def assert_values_exact(f, x):
    """f's value on Dual, HyperDual and the tape is NumPy's, bit for bit, with NumPy's types
    (result namedtuples, lstsq's int rank)."""
    expected = f(x)
    seeds = RNG.normal(size=x.shape + (2,))
    dual_value = dualad.jvp(f, (x,), (np.ones_like(x),))[0]
    hyper = _primal(f(HyperDual(x, seeds, seeds)))
    tape_value = dualad.vjp(f, x)[0]
    for got in (dual_value, hyper, tape_value):
        assert type(got) is type(expected)
        tuples = isinstance(expected, tuple)
        pairs = zip(got, expected, strict=True) if tuples else [(got, expected)]
        for a, b in pairs:
            if isinstance(b, (int, np.integer)):  # lstsq's rank (its type: test_lstsq_tuple)
                assert a == b
                continue
            assert np.shape(a) == np.shape(b)
            # bit for bit (-0.0 and 0.0 differ, nan equals nan)
            assert np.array_equal(np.asarray(a, dtype=np.float64).view(np.uint64),
                                  np.asarray(b, dtype=np.float64).view(np.uint64))


def _sin_sum(f):
    return lambda x: np.sum(np.sin(f(x)))


# ---- what each function is tested through -----------------------------------------------------
def _eigh(uplo="L"):
    def f(a):
        w, v = np.linalg.eigh(a, UPLO=uplo)
        projector = np.einsum("...i,...j->...ij", v[..., :, 0], v[..., :, 0])
        return np.concatenate([w.ravel(), (v * v).ravel(), projector.ravel()])
    return f


def _eig(a):
    """eig through sign-blind pieces: w, v², v₀ ⊗ v₀ (NumPy's vectors have unit norm, any sign)."""
    w, v = np.linalg.eig(a)
    projector = np.einsum("...i,...j->...ij", v[..., :, 0], v[..., :, 0])
    return np.concatenate([w.ravel(), (v * v).ravel(), projector.ravel()])


def _real_spectrum(*stack, n=3):
    """Non-symmetric with real, distinct eigenvalues: S diag(d) S⁻¹."""
    s = RNG.normal(size=stack + (n, n)) + n * np.eye(n)
    d = np.arange(1.0, n + 1.0) * 1.5 + RNG.uniform(-0.2, 0.2, size=stack + (n,))
    return s @ (d[..., :, None] * np.linalg.inv(s))


def _low_rank_pinv(m, n, rank):
    """pinv of B C (B m × rank, C rank × n), both packed in one vector: a matrix of constant
    rank as the entries vary (autograd's low-rank pinv test)."""
    def f(z):
        b, c = z[:m * rank].reshape(m, rank), z[m * rank:].reshape(rank, n)
        return np.linalg.pinv(b @ c)
    return f, RNG.normal(size=m * rank + rank * n)


def _svd(**options):
    def f(a):
        u, s, vh = np.linalg.svd(a, **options)
        k = s.shape[-1]
        first = np.einsum("...i,...j->...ij", u[..., :, 0], vh[..., 0, :])  # u₀ ⊗ v₀: sign-free
        rebuilt = np.einsum("...ik,...k,...kj->...ij", u[..., :, :k], s, vh[..., :k, :])
        return np.concatenate([s.ravel(), (u[..., :, :k] ** 2).ravel(),
                               (vh[..., :k, :] ** 2).ravel(), first.ravel(), rebuilt.ravel()])
    return f


def _qr(mode="reduced"):
    def f(a):
        out = np.linalg.qr(a, mode=mode)
        parts = out if isinstance(out, tuple) else (out,)
        return np.concatenate([np.ravel(t) for t in parts])
    return f


def _lstsq(m, n, k):
    """lstsq of (A, B) packed in one vector: x, residuals and s in one array."""
    b_shape = (m,) if k is None else (m, k)

    def f(z):
        a, b = z[:m * n].reshape(m, n), z[m * n:].reshape(b_shape)
        x, residuals, rank, s = np.linalg.lstsq(a, b)
        assert isinstance(rank, (int, np.integer))
        return np.concatenate([np.ravel(x), np.ravel(residuals), s])
    return f, np.concatenate([_normal(m * n), _normal(*b_shape).ravel()])


def _multi_dot(z):
    a, b, c = z[:6].reshape(2, 3), z[6:18].reshape(3, 4), z[18:22]
    return np.linalg.multi_dot([z[22:24], a, b, c])


def _multi_dot4(z):
    mats = [z[:4].reshape(1, 4), z[4:12].reshape(4, 2), z[12:18].reshape(2, 3),
            z[18:21].reshape(3, 1)]
    return np.linalg.multi_dot(mats)


CASES = {
    "cholesky": (np.linalg.cholesky, _spd(3)),
    "cholesky upper": (lambda a: np.linalg.cholesky(a, upper=True), _spd(3).T.copy()),
    "cholesky stack": (np.linalg.cholesky, _spd(3, 2)),
    "eigh": (_eigh(), _spd(3)),
    "eigh U": (_eigh("U"), _spd(3).T.copy()),
    "eigh stack": (_eigh(), _spd(3, 2)),
    "eigvalsh": (np.linalg.eigvalsh, _spd(4)),
    "eig": (_eig, _real_spectrum()),
    "eig stack": (_eig, _real_spectrum(2)),
    "eigvals": (np.linalg.eigvals, _real_spectrum(n=4)),
    "pinv rank 1 of 3 x 2": _low_rank_pinv(3, 2, 1),
    "pinv rank 2 of 4 x 3": _low_rank_pinv(4, 3, 2),
    "pinv rank 2 of 3 x 5": _low_rank_pinv(3, 5, 2),
    "pinv rank 1 of 2 x 2": _low_rank_pinv(2, 2, 1),
    "eigvalsh stack U": (lambda a: np.linalg.eigvalsh(a, "U"), _spd(3, 2).swapaxes(-1, -2).copy()),
    "svd tall": (_svd(full_matrices=False), _normal(4, 3)),
    "svd wide": (_svd(full_matrices=False), _normal(3, 4)),
    "svd square full": (_svd(), _normal(3, 3)),
    "svd stack": (_svd(full_matrices=False), _normal(2, 4, 3)),
    "svd values": (lambda a: np.linalg.svd(a, compute_uv=False), _normal(2, 3, 4)),
    "slogdet": (lambda a: np.linalg.slogdet(a).logabsdet, _normal(2, 3, 3)),
    "pinv tall": (np.linalg.pinv, _normal(4, 3)),
    "pinv wide": (np.linalg.pinv, _normal(3, 4)),
    "pinv stack": (np.linalg.pinv, _normal(2, 3, 3)),
    "pinv hermitian": (lambda a: np.linalg.pinv(a, hermitian=True), _spd(3)),
    "pinv rtol": (lambda a: np.linalg.pinv(a, rtol=None), _normal(3, 2)),
    "qr tall": (_qr(), _normal(4, 3)),
    "qr wide": (_qr(), _normal(3, 4)),
    "qr stack": (_qr(), _normal(2, 3, 3)),
    "qr r": (_qr("r"), _normal(4, 3)),
    "qr complete wide": (_qr("complete"), _normal(2, 3)),
    "lstsq tall": _lstsq(5, 3, None),
    "lstsq tall, matrix b": _lstsq(4, 2, 2),
    "lstsq wide": _lstsq(2, 4, None),
    "lstsq square": _lstsq(3, 3, 2),
    "matrix_power 0": (lambda a: np.linalg.matrix_power(a, 0), _normal(2, 2)),
    "matrix_power 1": (lambda a: np.linalg.matrix_power(a, 1), _normal(2, 2)),
    "matrix_power 3": (lambda a: np.linalg.matrix_power(a, 3), 0.5 * _normal(2, 3, 3)),
    "matrix_power 6": (lambda a: np.linalg.matrix_power(a, 6), 0.5 * _normal(3, 3)),
    "matrix_power -2": (lambda a: np.linalg.matrix_power(a, -2), _spd(2)),
    "multi_dot 4, vectors": (_multi_dot, _normal(24)),
    "multi_dot 4 matrices": (_multi_dot4, _normal(21)),
    "multi_dot 2": (lambda z: np.linalg.multi_dot([z[:4].reshape(2, 2), z[4:]]), _normal(6)),
}
if hasattr(np.linalg, "svdvals"):
    CASES["svdvals"] = (np.linalg.svdvals, _normal(3, 2))

VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1.5]
MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]
X34, X243 = _normal(3, 4), _normal(2, 4, 3)
for o in VECTOR_ORDS:
    CASES[f"norm vector {o}"] = (lambda x, o=o: np.linalg.norm(x, o, axis=1, keepdims=True), X34)
    CASES[f"norm vector {o}, axis 0"] = (lambda x, o=o: np.linalg.norm(x, o, axis=0), X34)
CASES["norm of a 1-d vector"] = (lambda x: np.linalg.norm(x[0]), X34)
CASES["norm 3-d, default"] = (lambda x: np.linalg.norm(x, keepdims=True), X243)
CASES["norm transposed (memory order)"] = (lambda x: np.linalg.norm(x.T), X243)
for o in MATRIX_ORDS:
    CASES[f"norm matrix {o}"] = (lambda x, o=o: np.linalg.norm(x, o), X34)
    CASES[f"norm matrix {o}, axes (2, 0)"] = (
        lambda x, o=o: np.linalg.norm(x, o, axis=(2, 0), keepdims=True), X243)

# second order: a scalar of each output (through sin, so that the output's own second
# derivative matters), on the smaller inputs
SECOND = ["cholesky", "cholesky upper", "eigh", "eigh stack", "eigvalsh", "eig", "eigvals",
          "pinv rank 2 of 4 x 3", "pinv rank 1 of 2 x 2", "svd tall",
          "svd wide", "svd square full", "svd values", "slogdet", "pinv tall", "pinv wide",
          "pinv hermitian", "qr tall", "qr wide", "qr r", "lstsq tall", "lstsq wide",
          "lstsq square", "matrix_power 3", "matrix_power -2", "multi_dot 4, vectors",
          "norm vector 3", "norm vector None", "norm vector 0.5, axis 0", "norm matrix nuc",
          "norm matrix 2", "norm matrix -2", "norm matrix fro", "norm matrix 1",
          "norm 3-d, default"]


@pytest.mark.parametrize("name", CASES)
def test_first_order(name):
    f, x = CASES[name]
    assert_first_order(f, x)


@pytest.mark.parametrize("name", SECOND)
def test_second_order(name):
    f, x = CASES[name]
    assert_second_order(_sin_sum(f), x)


VALUES = {
    "cholesky": (np.linalg.cholesky, _spd(3, 2)),
    "cholesky upper": (lambda a: np.linalg.cholesky(a, upper=True), _spd(3)),
    "eigh": (lambda a: np.linalg.eigh(a), _spd(3, 2)),
    "eigh U": (lambda a: np.linalg.eigh(a, "U"), _spd(3)),
    "eigvalsh": (np.linalg.eigvalsh, _spd(4)),
    "svd": (lambda a: np.linalg.svd(a, full_matrices=False), _normal(2, 4, 3)),
    "svd full square": (np.linalg.svd, _normal(3, 3)),
    "svd values": (lambda a: np.linalg.svd(a, compute_uv=False), _normal(3, 5)),
    "slogdet": (np.linalg.slogdet, _normal(2, 3, 3)),
    "pinv": (np.linalg.pinv, _normal(2, 4, 3)),
    "pinv hermitian": (lambda a: np.linalg.pinv(a, hermitian=True), _spd(3)),
    "qr": (np.linalg.qr, _normal(2, 4, 3)),
    "qr wide": (np.linalg.qr, _normal(3, 5)),
    "qr r": (lambda a: np.linalg.qr(a, "r"), _normal(4, 3)),
    "lstsq": (lambda a: np.linalg.lstsq(a, np.arange(5.0)), _normal(5, 3)),
    "lstsq wide": (lambda a: np.linalg.lstsq(a, np.ones((3, 2))), _normal(3, 4)),
    "matrix_power": (lambda a: np.linalg.matrix_power(a, 7), 0.5 * _normal(2, 3, 3)),
    "matrix_power 0": (lambda a: np.linalg.matrix_power(a, 0), _normal(3, 3)),
    "matrix_power -3": (lambda a: np.linalg.matrix_power(a, -3), _spd(3)),
    "multi_dot": (_multi_dot, _normal(24)),
    "multi_dot 5": (lambda z: np.linalg.multi_dot([z[:6].reshape(2, 3), z[6:15].reshape(3, 3),
                                                   z[6:12].reshape(3, 2), z[:4].reshape(2, 2),
                                                   z[9:15].reshape(2, 3)]), _normal(15)),
}
if hasattr(np.linalg, "svdvals"):
    VALUES["svdvals"] = (np.linalg.svdvals, _normal(4, 3))
_X = _normal(3, 4, 5) * 3.0
for o in VECTOR_ORDS:
    VALUES[f"norm vector {o}"] = (lambda x, o=o: np.linalg.norm(x, o, axis=-1), _X)
for o in MATRIX_ORDS:
    VALUES[f"norm matrix {o}"] = (lambda x, o=o: np.linalg.norm(x, o, axis=(0, 2)), _X)
VALUES["norm default"] = (np.linalg.norm, _X)
VALUES["norm default, long"] = (np.linalg.norm, _normal(8, 25))  # BLAS dot ≠ np.sum here
VALUES["norm transposed"] = (lambda x: np.linalg.norm(np.transpose(x, (2, 0, 1))[::-1]), _X)
VALUES["norm 2 of a vector"] = (lambda x: np.linalg.norm(x[0, 0], 2), _X)


@pytest.mark.parametrize("name", VALUES)
def test_value_is_numpys(name):
    f, x = VALUES[name]
    assert_values_exact(f, x)


# ---- where a derivative does not exist: errors ------------------------------------------------
def _every_mode(f, x):
    """Each way of differentiating f (an error is expected from each)."""
    return [lambda: dualad.jacobian(f, mode="forward")(x),
            lambda: dualad.jacobian(f, mode="reverse")(x),
            lambda: dualad.hessian(lambda y: np.sum(f(y)), mode="forward")(x)]


REPEATED_EIGENVALUES = np.diag([1.0, 1.0, 2.0]) + np.triu(np.ones((3, 3)), 1)


@pytest.mark.parametrize("f, match", [
    (lambda a: np.linalg.eigh(a).eigenvalues, "numpy.linalg.eigh: repeated eigenvalues"),
    (lambda a: np.linalg.eigh(a).eigenvectors, "numpy.linalg.eigh: repeated eigenvalues"),
    (np.linalg.eigvalsh, "numpy.linalg.eigvalsh: repeated eigenvalues"),
    # the sum of the eigenvalues (the trace) has a derivative, but not through eigvalsh
    (lambda a: np.sum(np.linalg.eigvalsh(a)), "numpy.linalg.eigvalsh: repeated"),
])
def test_repeated_eigenvalues_raise(f, match):
    for run in _every_mode(f, REPEATED_EIGENVALUES):
        with pytest.raises(LinAlgError, match=match):
            run()


def test_gap_tolerance_is_relative():
    # the derivative exists at any positive gap; dualad refuses gaps up to GAP_RTOL · max|λ|
    scale = 1e6
    near = scale * np.diag([1.0, 1.0 + 10 * GAP_RTOL, 3.0])
    dualad.jacobian(np.linalg.eigvalsh)(near)
    with pytest.raises(LinAlgError, match="eigvalsh"):
        dualad.jacobian(np.linalg.eigvalsh)(scale * np.diag([1.0, 1.0 + GAP_RTOL / 10, 3.0]))


ORTHOGONAL = np.linalg.qr(_normal(4, 3))[0]          # singular values 1, 1, 1
RANK_ONE = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])    # singular values (√28, 0)


@pytest.mark.parametrize("f, x, match", [
    (lambda a: np.linalg.svd(a, compute_uv=False), ORTHOGONAL, "numpy.linalg.svd: repeated"),
    (lambda a: np.linalg.svd(a, full_matrices=False).U, 2.0 * ORTHOGONAL, "repeated singular"),
    (lambda a: np.linalg.svd(a, compute_uv=False), RANK_ONE,
     "numpy.linalg.svd: a singular value is zero"),
    (lambda a: np.linalg.norm(a, "nuc"), RANK_ONE, "numpy.linalg.svd.*norm"),
    (lambda a: np.linalg.norm(a, 2), ORTHOGONAL, "numpy.linalg.svd: repeated"),
    (np.linalg.eigvals, np.array([[0.0, -1.0], [1.0, 0.0]]), "numpy.linalg.eigvals: .*complex"),
    (lambda a: np.linalg.eig(a).eigenvalues, np.array([[1.0, -2.0], [3.0, 1.0]]), "numpy.linalg.eig: .*complex"),
    (lambda a: np.linalg.eig(a).eigenvectors, np.array([[2.0, 1.0], [0.0, 2.0]]),
     "numpy.linalg.eig: repeated eigenvalues"),
    (lambda a: np.linalg.lstsq(a, np.ones(3))[0], RANK_ONE, "numpy.linalg.lstsq: .*rank 1"),
    (lambda a: np.linalg.qr(a).R, RANK_ONE, "numpy.linalg.qr: the leading 2 columns"),
    (lambda a: np.linalg.slogdet(a)[1], np.ones((3, 3)), "numpy.linalg.slogdet: .*singular"),
])
def test_no_derivative_raises(f, x, match):
    for run in _every_mode(f, x):
        with pytest.raises(LinAlgError, match=match):
            run()


@pytest.mark.parametrize("f, match", [
    (lambda a: np.linalg.svd(a).U, r"numpy.linalg.svd with full_matrices=True of a 4x3"),
    (lambda a: np.linalg.svd(a[:3], hermitian=True).S, "numpy.linalg.svd with hermitian=True"),
    (lambda a: np.linalg.qr(a, "complete").Q, "numpy.linalg.qr with mode='complete'"),
    (lambda a: np.linalg.qr(a, "raw")[0], "numpy.linalg.qr with mode='raw'"),
    (lambda a: np.linalg.multi_dot([a, a.T], out=np.zeros((4, 4))), "numpy.linalg.multi_dot"),
])
def test_unsupported_options_raise(f, match):
    with pytest.raises((ValueError, TypeError), match=match):
        dualad.jacobian(f)(_normal(4, 3))


def test_lstsq_singular_values_are_nan_where_they_repeat_and_x_is_unaffected():
    b = _normal(4)
    f = lambda a: np.linalg.lstsq(a, b)[0]  # noqa: E731
    assert_first_order(f, 2.0 * ORTHOGONAL)
    assert_second_order(_sin_sum(f), 2.0 * ORTHOGONAL)
    s_jacobian = dualad.jacobian(lambda a: np.linalg.lstsq(a, b)[3])(2.0 * ORTHOGONAL)
    assert np.all(np.isnan(s_jacobian))


def test_lstsq_tuple():
    # the transforms hand back int output leaves as floats, so the types are checked inside f
    a, b = _normal(5, 3), _normal(5)
    expected = np.linalg.lstsq(a, b)

    def f(a):
        x, residuals, rank, s = np.linalg.lstsq(a, b)
        assert type(rank) is type(expected[2]) and rank == 3
        assert residuals.shape == (1,) and s.shape == (3,) and x.shape == (3,)
        return x

    dualad.jacobian(f, mode="forward")(a)
    dualad.jacobian(f, mode="reverse")(a)
    dualad.hessian(lambda a: np.sum(f(a)), mode="forward")(a)


def test_det_is_differentiated_at_a_singular_matrix():
    # d det / dA = adj(A)ᵀ, which exists where A⁻¹ does not
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])
    cofactors = np.array([[(-1.0) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                           for j in range(3)] for i in range(3)])
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(dualad.grad(np.linalg.det, mode=mode)(a), cofactors,
                                   rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dualad.hessian(np.linalg.det)(a),
                               dualad.jacfwd(dualad.jacrev(np.linalg.det))(a), atol=1e-12)
