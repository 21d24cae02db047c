"""2-D arrays of duals in compiled code (jit/matrix.py, numpy_matrix.py, numpy_linalg.py):
allocation and assignment, views, broadcasting of every operand kind, matrix outputs, second
order and sparsity through linalg, singular matrices, and the errors that name a rewrite."""

import numba
import numpy as np
import pytest

import dualad
from dualad.jit.layout import keep_order
from dualad.jit.numpy_linalg import division_free_det

WIDE = np.array([[0.3, -1.2, 0.8], [1.0, 0.2, -0.4]])
POINTS = [np.array([0.7, -0.4, 1.3]), np.array([0.5, 0.5, 0.0])]


@numba.njit
def surface(x):
    """Buffers filled entry by entry, by rows, columns and blocks; rules on matrices with
    matrices, rows, float matrices and scalars; comparisons by value."""
    m = np.zeros((3, 3))
    for i in range(3):
        m[i] = x * (i + 1.0)          # a row from a dual vector
        m[i, i] = x[i] ** 2           # an entry
    m[:, 0] = 1.0                     # a column from a number
    m[1:, 1:] = np.outer(x[:2], x[1:])  # a block from a dual matrix
    m[0, 2] = 0.5                     # a number into an entry
    e = np.exp(m) * 2.0 - m / (1.0 + m * m) + np.sin(m) ** 2 + WIDE.T @ WIDE
    f = m - x + x[0] * (WIDE.T @ WIDE) + np.hypot(m, 1.0) + WIDE[0]
    g = np.where(m[0] > 0.6, m[1], m[2])
    h = np.concatenate((np.where(m > 0.6, m, x).ravel(), np.where(m < 0.2, 0.5, m * m).ravel(),
                        np.clip(m, 0.2, 0.9).ravel(), np.fmax(m, 0.5).ravel(), np.fmin(x, m).ravel(),
                        np.logaddexp(m, x[0]).ravel(), np.sinc(m).ravel(), np.fabs(m - 0.5).ravel()))
    rows = 0.0
    for row in range(3):
        rows += np.sum(m[row] * x)
    built = np.concatenate((np.array([[x[0], 1.0], [x[1] * x[2], x[2]]]).ravel(),  # nested lists
                            np.array((x[:2], (x[2], 0.5))).ravel(), x.reshape(3, 1).ravel(),
                            m.reshape(1, 9)[0]))
    return np.concatenate((e.ravel(), f.ravel(), g, h, (m > 0.6).ravel() * x[0], m.ravel(), built,
                           np.stack((rows, len(m) * x[1], m.shape[1] * x[2], m.size * x[0]))))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_matrix_surface_matches_the_python_path(mode):
    compiled, python = dualad.jacobian(surface, mode=mode), dualad.jacobian(surface, mode=mode, jit=False)
    for x in POINTS:
        np.testing.assert_allclose(compiled(x), python(x), rtol=1e-13, atol=1e-15, err_msg=f"{x}")


@numba.njit
def model(p):
    """f: R^3 -> R^(2 x 3), its output allocated 2-D and filled in place."""
    out = np.empty((2, 3))
    for i in range(2):
        for j in range(3):
            out[i, j] = p[j] ** (i + 1) * WIDE[i, j]
    return out


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_matrix_output_has_a_jacobian_shaped_like_the_python_paths(mode):
    x = POINTS[0]
    jac = dualad.jacobian(model, mode=mode)(x)
    assert jac.shape == (2, 3, 3)
    np.testing.assert_allclose(jac, dualad.jacobian(model, mode=mode, jit=False)(x), rtol=1e-14)
    sparse = dualad.jacobian(model, mode=mode, sparsity=True)(x)  # rows: the entries in C order
    np.testing.assert_allclose(sparse.toarray(), jac.reshape(6, 3), rtol=1e-14)
    cotangent = np.arange(6.0).reshape(2, 3)
    value, pullback = dualad.vjp(model, x)
    np.testing.assert_allclose(pullback(cotangent)[0], np.einsum("ij,ijk->k", cotangent, jac), rtol=1e-14)
    np.testing.assert_allclose(value, model.py_func(x))


@numba.njit
def energy(x):
    """A scalar through linalg and matrix products: exact second derivatives by hyper-duals
    and by forward-over-reverse."""
    a = np.outer(x, x) + np.diag(x * x + 1.0) + WIDE.T @ WIDE
    chol = np.linalg.cholesky(a)
    return (np.linalg.det(a) + np.linalg.slogdet(a)[1] + x @ np.linalg.solve(a, x) +
            np.trace(np.linalg.inv(a) @ a.T) + np.sum(chol * chol.T) + np.linalg.norm(a))


def test_second_order_through_linalg_matches_the_python_path():
    x, v = POINTS[0], np.array([0.2, -1.0, 0.5])
    expected = dualad.hessian(energy, jit=False)(x)
    np.testing.assert_allclose(dualad.hessian(energy)(x), expected, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(dualad.hvp(energy, mode="forward-over-reverse")(x, v), expected @ v,
                               rtol=1e-11, atol=1e-12)


@numba.njit
def coupled(x):
    a = np.diag(x + 2.0)
    a[0, 1] = x[2]
    return np.linalg.solve(a, x) + np.tril(np.outer(x, x)).sum(axis=1)


def test_sparsity_through_matrices_matches_the_python_path():
    x = POINTS[0]
    compiled = dualad.jacobian_sparsity(coupled)(x)
    assert (compiled != dualad.jacobian_sparsity(coupled, jit=False)(x)).nnz == 0


@numba.njit
def determinant(x):
    a = np.outer(x, x)  # rank 1: singular for 3 entries; det = 0, its derivative the adjugate
    a[0, 0] += x[1]
    return np.linalg.det(a)


@numba.njit
def berkowitz(x):
    return division_free_det(np.outer(x, x[::-1]) + np.diag(x) + WIDE.T @ WIDE)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_det_at_a_singular_matrix_has_the_adjugate_derivative(mode):
    """A zero pivot: the division-free algorithm gives det's derivative (the Python path's
    adjugate), exact at second order too; equal to LU's det away from singular matrices."""
    x = np.array([1.0, 0.0, 2.0])  # a[0, 0] += 0 keeps the rank-1 matrix singular
    np.testing.assert_allclose(dualad.grad(determinant, mode=mode)(x),
                               dualad.grad(determinant, mode=mode, jit=False)(x), atol=1e-14)
    x = POINTS[0]
    np.testing.assert_allclose(dualad.grad(berkowitz, mode=mode)(x),
                               dualad.grad(lambda x: np.linalg.det(np.outer(x, x[::-1]) + np.diag(x) +
                                                                   WIDE.T @ WIDE))(x), rtol=1e-12)


def test_det_at_a_singular_matrix_at_second_order():
    x = np.array([1.0, 0.0, 2.0])
    np.testing.assert_allclose(dualad.hessian(determinant)(x), dualad.hessian(determinant, jit=False)(x),
                               atol=1e-13)


@numba.njit
def inverse(x):
    return np.linalg.inv(np.outer(x, x)).ravel()


@numba.njit
def factor(x):
    return np.linalg.cholesky(np.outer(x, x) - np.eye(3)).ravel()


@numba.njit
def spectral_norm(x):
    return np.linalg.norm(np.outer(x, x), 2)


@numba.njit
def hypercube(x):
    buffer = np.zeros((2, 2, 2, 2))
    buffer[0, 0, 0, 0] = x[0]
    return buffer.ravel()


@numba.njit
def one_variable(x):
    return np.cov(np.vstack((x,))).ravel()


def test_what_cannot_be_differentiated_raises_an_error_naming_the_problem():
    with pytest.raises(ValueError, match="single variable.*1-D array"):
        dualad.jacobian(one_variable)(POINTS[0])  # NumPy: 0-d, numba: refused
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        dualad.jacobian(inverse)(np.array([1.0, 2.0, 4.0]))  # exactly singular, as NumPy finds it
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        dualad.jacobian(inverse, jit=False)(np.array([1.0, 2.0, 4.0]))
    x = POINTS[0]
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        dualad.jacobian(factor)(x)
    with pytest.raises(np.linalg.LinAlgError, match="repeated or zero singular values"):
        dualad.grad(spectral_norm)(x)  # the outer product has rank 1
    with pytest.raises(Exception, match="4-D array that receives duals.*1 to 3 dimensions"):
        dualad.jacobian(hypercube)(x)


@numba.njit
def spectrum(x):
    a = np.outer(x, x) + np.diag(x)
    return np.sum(np.linalg.eigvalsh(a) ** 3)


@numba.njit
def factors(x):
    """eigh, eigvalsh, svd (tall and wide), qr (tall and wide) and the spectral norms."""
    a = np.outer(x, x) + np.diag(x) + WIDE.T @ WIDE
    w, v = np.linalg.eigh(a)
    tall = WIDE.T * x[0] + np.outer(x, WIDE[:, 0]) ** 2
    u, s, vt = np.linalg.svd(tall[:, :2].copy(), full_matrices=False)
    q, r = np.linalg.qr(tall.T[:, :2].copy())
    q_wide, r_wide = np.linalg.qr(tall.T.copy())
    return (np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 3) + np.sum(v[:, 0] * x) ** 2 + np.sum(v * v[::-1])
            + np.sum(s ** 3) + np.sum(u[:, 0] * x) * np.sum(vt[1] * x[:2]) + np.sum(w * s[0])
            + np.sum(q * np.sin(tall.T[:, :2])) + np.sum(r ** 2 * x[0]) + np.sum(q_wide * r_wide[:, :2])
            + np.linalg.norm(tall, 2) + np.linalg.norm(tall.T, "nuc") + np.linalg.norm(tall, -2))


def test_eigh_svd_qr_are_exact_to_second_order():
    """NumPy's factors refined on the duals (Jacobi rotations, Cholesky re-orthonormalisation)
    differentiate at every compiled order: hyper-dual Hessian and forward-over-reverse hvp
    equal the Python path's."""
    x = POINTS[0]
    expected = dualad.hessian(factors, jit=False)(x)
    np.testing.assert_allclose(dualad.hessian(factors)(x), expected, rtol=1e-11, atol=1e-12)
    v = np.array([0.3, -1.0, 0.5])
    np.testing.assert_allclose(dualad.hvp(factors)(x, v), expected @ v, rtol=1e-11, atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalues"):
        dualad.grad(spectrum)(np.array([1.0, 0.0, 0.0]))  # diag(2, 0, 0): 0 twice
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalues"):
        dualad.grad(spectrum, jit=False)(np.array([1.0, 0.0, 0.0]))


# ---- NumPy's semantics of writes: views, overlaps, in-place operators --------------------------
@numba.njit
def add_into(m, x):
    m += x


@numba.njit
def aliasing(x):
    m = np.zeros((3, 3))
    for i in range(3):
        m[i] = x * (i + 1.0) + x[i]
    m[1:, :] = m[:-1, :]              # overlapping blocks: NumPy reads the source first
    t = np.zeros((3, 3))
    t[:] = m
    t[:] = t.T                        # an in-place transpose through an overlapping view
    r = m[0]
    m += x                            # in place: the view r sees it
    add_into(m, x)                    # ... and so does the caller's array
    m *= x[1]
    flat_view = m.ravel()
    flat_view[0] = 7.0 * x[2]         # a write through ravel's view reaches m
    np.flipud(m)[0, 0] = x[0] * 5.0   # ... and through flipud's (m[2, 0])
    y = np.zeros(3)
    y[:] = x
    y[1:] = y[:-1]                    # 1-D overlap
    y += y[::-1]
    w = np.zeros(4)
    w[:] = np.append(x, x[0])
    grid = w.reshape((2, 2))
    grid[1, 1] = x[1] ** 2            # a write through reshape's view reaches w
    a = np.zeros((2, 2))
    a[0, 0], a[0, 1], a[1, 0], a[1, 1] = 2.0 + x[0], x[1], x[2], -1.0
    return np.concatenate((m.ravel(), t.ravel(), r, y, w, np.linalg.eigvalsh(a, UPLO="l"),
                           np.split(x, np.array([2, 1]))[2], np.insert(x, np.array([1]), x[:2] * 2.0)))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_writes_follow_numpys_views_overlaps_and_in_place_operators(mode):
    compiled, python = dualad.jacobian(aliasing, mode=mode), dualad.jacobian(aliasing, mode=mode, jit=False)
    for x in POINTS:
        np.testing.assert_allclose(compiled(x), python(x), rtol=1e-13, atol=1e-15, err_msg=f"{x}")


@numba.njit
def nine(x):
    a = x.reshape((3, 3))
    return np.concatenate((np.linalg.inv(a).ravel(), np.linalg.solve(a, x[:3]),
                           np.stack((np.linalg.det(a), np.linalg.slogdet(a)[1]))))


def test_singular_and_non_finite_matrices_as_numpy_finds_them():
    """Singular by LAPACK's pivots (the compiled elimination's own rounding leaves 1e-16
    there): LinAlgError on both paths; a nan entry: nan derivatives on both paths."""
    for jit in (True, False):
        with pytest.raises(np.linalg.LinAlgError):
            dualad.jacobian(nine, jit=jit)(np.arange(1.0, 10.0))
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0])
    with np.errstate(all="ignore"):
        for mode in ("forward", "reverse"):
            np.testing.assert_array_equal(np.isnan(dualad.jacobian(nine, mode=mode)(x)),
                                          np.isnan(dualad.jacobian(nine, mode=mode, jit=False)(x)))


@numba.njit
def _keep_order(shape, first, second):
    return keep_order(shape, (first, second))


def _strided_operand(shape, rng):
    """An operand of this shape: a transposed, stepped, flipped view, one axis maybe of length 1."""
    nd = len(shape)
    axes = rng.permutation(nd)
    steps = rng.choice([1, 2, -1, -2], nd)
    base = np.ones([shape[a] * abs(s) for a, s in zip(axes, steps)])
    view = base[tuple(slice(None, None, s) for s in steps)].transpose(np.argsort(axes))
    if rng.random() < 0.3:
        view = view[tuple(slice(0, 1) if k == rng.integers(nd) else slice(None) for k in range(nd))]
    return view


def test_new_arrays_are_laid_out_as_numpys_order_k():
    """layout.keep_order (the axis order of a compiled elementwise result) is NumPy's on random
    strided, transposed, flipped and broadcast operands, 2-D and 3-D."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        shape = tuple(int(n) for n in rng.integers(1, 5, rng.choice([2, 3])))
        operands = [_strided_operand(shape, rng) for _ in range(rng.choice([1, 2]))]
        result = np.sin(operands[0]) if len(operands) == 1 else operands[0] + operands[1]
        shape = result.shape  # an operand of length 1 along an axis broadcasts there
        strides = [tuple(0 if n == 1 else s for n, s in zip(op.shape, op.strides)) for op in operands]
        order = _keep_order(shape, strides[0], strides[-1])
        step, expected = 8, [0] * len(shape)
        for axis in order:
            expected[axis], step = step, step * shape[axis]
        assert all(n == 1 or a == b for n, a, b in zip(shape, result.strides, expected)), \
            (shape, [op.strides for op in operands], result.strides, expected)


@numba.njit
def joins_and_conversions(x):
    """Blocks joined (hstack, vstack, concatenate on either axis, column_stack with a vector),
    cumsum along each axis and whole, and NumPy's view-or-copy rules of ascontiguousarray,
    asfortranarray and astype: a write through a view reaches the array, a write into a copy
    does not."""
    m = np.outer(x[:2], x[2:4])
    a = np.hstack((m, m.T, np.ones((2, 1))))
    b = np.vstack((m, np.eye(2), m.T))
    c = np.concatenate((m, m * 2.0), axis=1)
    d = np.concatenate((m.T, m), axis=-2)
    e = np.column_stack((m, x[:2]))
    f = np.cumsum(m.T, axis=0) + m.cumsum(axis=1) + np.cumsum(m, -1)
    g = np.cumsum(m.T)
    h = np.ascontiguousarray(m.T)
    h[0, 1] = x[0] * 5.0           # a copy: m unchanged
    k = np.ascontiguousarray(m)
    k[1, 0] = x[3] * 7.0           # m itself: m changes
    y = x * 1.0
    np.ascontiguousarray(y)[2] = x[1] ** 2   # y itself
    z = np.ascontiguousarray(y[::2])
    z[0] = 9.0 * x[3]                        # a copy
    t = m.astype(np.float64)
    t[0, 0] = 3.0 * x[2]                     # a copy
    u = np.asfortranarray(m)                 # an F-ordered copy: its ravel is a copy too
    u.ravel()[1] = 6.0 * x[1]
    return np.concatenate((a.ravel(), b.ravel(), c.ravel(), d.ravel(), e.ravel(), f.ravel(), g,
                           h.ravel(), k.ravel(), m.ravel(), y, z, t.ravel(), u.ravel()))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_joins_cumsum_and_conversions_follow_numpy(mode):
    x = np.array([0.5, -1.0, 0.25, 2.0])
    np.testing.assert_allclose(joins_and_conversions(x), joins_and_conversions.py_func(x), rtol=1e-15)
    python = dualad.jacobian(joins_and_conversions, mode=mode, jit=False)(x)
    h = 1e-6
    central = np.stack([(joins_and_conversions.py_func(x + h * e) - joins_and_conversions.py_func(x - h * e))
                        / (2 * h) for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(python, central, atol=1e-7)
    np.testing.assert_allclose(dualad.jacobian(joins_and_conversions, mode=mode)(x), python, rtol=1e-14)
