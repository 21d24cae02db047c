"""The registry's compiled column (docs/numpy.md): every entry marked compiled runs in @njit
code on arrays of duals (1-D, and 2-D for matrices and linalg), and its compiled derivatives
equal the Python path's (forward and reverse Jacobians at an ordinary point and at special
points: ties, zeros, sample points; hyper-dual Hessians for the smooth ones). A few kernels
call them all (a few compiles); tests/compiled/test_matrix_compiled.py tries the 2-D
surface itself (assignment, broadcasting, outputs, singular matrices)."""

import numba
import numpy as np
import pytest

import dualad
from dualad.functions import REGISTRY

W = np.array([0.3, -1.2, 0.8, 0.5])
XP = np.array([0.0, 0.25, 0.5, 1.0])
IDX = np.array([2, 0, 2])
REP = np.array([1, 0, 2, 1])
POINTS = [np.array([0.7, -0.4, 1.3, 0.2]),
          np.array([0.25, 0.25, 0.5, 0.5]),    # ties (max, median, sort), sample points (interp)
          np.array([0.0, 1.0, 0.0, 0.25])]     # zeros (prod, cumprod, heaviside, fabs)


@numba.njit
def array_building(x):
    y = x * x
    buf = np.zeros_like(x)
    buf[0] = np.sum(y)
    empty = np.empty_like(x)
    for i in range(len(x)):
        empty[i] = y[i] - x[0]
    ones = np.ones_like(x) * x[1]
    full = np.full_like(x, 2.0) * x[2]
    return np.concatenate((
        np.stack((np.dot(x, W), x @ W, np.matmul(x, W), np.max(y), np.amax(x), np.min(y), np.amin(x),
                  np.prod(x), np.sum(np.roll(x, 1) * W))),
        np.where(x > 0.5, y, x), buf, empty, ones, full))


@numba.njit
def elementwise(x):
    return np.concatenate((
        np.fabs(x), np.degrees(x), np.radians(x[1]) * x, np.conj(x), np.real(x), x + np.imag(x),
        x * np.angle(x), np.fmax(x, 0.25), np.fmin(x[0], x), np.heaviside(x, 0.5) * x,
        np.heaviside(x[0], x), np.nan_to_num(np.log(x)), np.logaddexp(x, x[0]),
        np.logaddexp2(x[1], x), np.sinc(x), np.sinc(x - x[0]), np.clip(x, 0.0, 0.5),
        np.clip(x, None, 0.5)))


@numba.njit
def statistics(x):
    return np.concatenate((
        np.stack((np.mean(x), np.var(x), np.std(x, ddof=1), np.average(x),
                  np.average(x, weights=XP + 1.0), np.median(x), np.quantile(x, 0.3),
                  np.percentile(x, 75.0), np.linalg.norm(x), np.linalg.norm(x, 1),
                  np.linalg.norm(x, np.inf), np.linalg.norm(x, 3), np.linalg.norm(x, 0),
                  np.interp(x[0], XP, x))),
        np.cumsum(x), np.cumprod(x), np.diff(x), np.diff(x, 2), np.sort(x), np.quantile(x, XP),
        np.linspace(x[0], x[1], 5), np.linspace(0.0, x[2], 4, endpoint=False),
        np.interp(x, XP, XP ** 2), np.interp(np.array([0.1, 0.25, 1.0, 2.0]), XP, x * 2.0)))


@numba.njit
def nan_ignoring(x):
    gaps = np.where(x > 0.6, np.nan, x)  # nan entries: derivative 0 there
    return np.concatenate((
        np.stack((np.nansum(gaps), np.nanprod(gaps), np.nanmax(gaps), np.nanmin(gaps),
                  np.nanmean(gaps), np.nanvar(gaps), np.nanstd(gaps, ddof=1))),
        np.nancumsum(gaps), np.nancumprod(gaps)))


@numba.njit
def structure(x):
    values_only = (np.argmax(x) + np.argmin(x) + np.argsort(x)[0] + np.count_nonzero(x) +
                   len(np.nonzero(x)[0]) + len(np.flatnonzero(x)) + np.any(x) + np.all(x) +
                   np.searchsorted(np.sort(x), 0.4) + np.shape(x)[0] + np.size(x) +
                   np.isclose(x, W)[1] + np.allclose(x, W) + np.array_equal(x, x) +
                   np.isreal(x)[0] + np.iscomplex(x)[1] + np.isrealobj(x) + np.iscomplexobj(x) +
                   np.max(np.argpartition(x, 2)))  # numba orders the entries unlike NumPy
    return np.concatenate((
        np.copy(x), np.ravel(x), np.reshape(x, -1), np.atleast_1d(x), np.flip(x),
        np.take(x, IDX), np.repeat(x, 2), np.repeat(x, REP), np.tile(x, 2), np.append(x, 1.0),
        np.append(np.ones(2), x), np.hstack((x, x)), np.cross(x[:3], W[:3]), x * values_only,
        np.delete(x, 1), np.delete(x, np.array([0, -1])), np.take_along_axis(x, IDX, 0),
        np.round(x * 10.0) + x, np.around(x, 1) * x, np.insert(x, 1, 2.0), np.insert(x, -1, x[:2]),
        np.insert(x, IDX, x[0]), np.insert(W, 4, x[1]), np.insert(x, np.array([1, -1]), W[:2]),
        np.split(x, 2)[1], np.array_split(x, 3)[0], np.split(x, np.array([1, 3]))[1],
        np.hsplit(x, 2)[0],
        # the entries at and before kth are the same whatever the arrangement (numba's, NumPy's)
        np.partition(x, 2)[:3], np.partition(x * x, (1, 3))[3:4],
        np.select([x > 0.5, x < 0.1], [x * 2.0, x ** 2], 0.3),
        np.stack((np.inner(x, W), np.vdot(x, x), np.take(x, 1), np.round(x[0] * 3.0) * x[1]))))


@numba.njit
def methods(x):
    return np.concatenate((
        np.stack((x.sum(), x.prod(), x.mean(), x.max(), x.min(), x.var(), x.std(ddof=1),
                  x.dot(x), x.take(0))),
        x.cumsum(), x.cumprod(), x.copy(), x.flatten(), x.ravel(), x.T, x.clip(0.25, 0.6),
        x.astype(np.float64), x.astype(float), x.repeat(2), x.reshape(-1), x.take(IDX),
        x * (x.argmax() + x.argmin() + x.argsort()[1] + x.any() + x.all())))


WIDE = np.array([[0.3, -1.2, 0.8, 0.5], [1.0, 0.2, -0.4, 0.7]])


@numba.njit
def matrices(x):
    """Functions that make or take 2-D arrays of duals (matrix products, structure)."""
    m = np.outer(x, x[::-1]) + np.eye(4)
    return np.concatenate((
        m @ x, x @ m, np.ravel(m @ m.T), (WIDE @ m).ravel(), np.dot(m, WIDE.T).ravel(),
        np.kron(x[:2], x[2:]), np.kron(m[:2, :2], m[2:, 2:]).ravel(), m.dot(x),
        np.diag(m), np.diag(m, 1), np.diagonal(m, -1), np.tril(m).ravel(), np.triu(m, 1).ravel(),
        np.diag(x).ravel(), np.diag(x, -1).ravel(), np.vstack((x, x * 2.0, WIDE[0])).ravel(),
        np.column_stack((x, WIDE[1])).ravel(), np.stack((x, x), axis=1).ravel(),
        np.array((x, WIDE[0])).ravel(), np.sum(m, axis=0), m.sum(1), x.reshape((2, 2)).ravel(),
        np.reshape(x, (2, -1)).T.ravel(), np.transpose(m)[1], m.T[:, 2], np.diagflat(x[:2], 1).ravel(),
        np.flipud(m)[0], np.fliplr(m)[1], np.flip(m)[2], np.rot90(m)[0], np.rot90(m, 2)[1],
        np.rot90(m, -1)[3], np.swapaxes(m, 0, 1)[0], np.atleast_2d(x)[0], np.atleast_2d(m)[1],
        np.expand_dims(x, 1)[:, 0], np.broadcast_to(x, (2, 4))[1], np.moveaxis(m, 0, 1)[0],
        np.moveaxis(x, 0, -1), np.hsplit(m, 2)[1].ravel(), np.vsplit(m, np.array([1]))[1].ravel(),
        np.split(m, 2)[0][1], np.atleast_3d(x).ravel(), np.atleast_3d(m)[:, 1, 0],
        np.dstack((x, x * x, WIDE[0])).ravel(), np.dstack((m, m.T))[2].ravel(),
        np.dsplit(np.dstack((x, x * x, x ** 3)), np.array([1]))[1].ravel(),
        np.stack((np.trace(m), np.trace(m, 1), np.trace(m, 9), np.sum(m), m.sum(), np.mean(m),
                  np.max(m), m.min(), np.prod(m[:2, :2]), m[1, 2], m[-1, -1]))))


@numba.njit
def linear_algebra(x):
    """numpy.linalg and the covariances on 2-D arrays of duals."""
    a = np.outer(x, x) + np.diag(x * x + 1.0) + 0.1 * WIDE.T @ WIDE
    sign, logdet = np.linalg.slogdet(a)
    samples = np.vstack((x, x * x, np.sin(x)))
    tall_solution, tall_residuals, rank, tall_s = np.linalg.lstsq(a[:, :2], np.cos(x))
    return np.concatenate((
        np.linalg.solve(a, x * 3.0 - 1.0), np.linalg.solve(a, WIDE.T).ravel(),
        np.linalg.inv(a).ravel(), np.linalg.cholesky(a).ravel(),
        np.linalg.solve(WIDE @ WIDE.T + np.eye(2), WIDE @ x),
        np.linalg.matrix_power(a, 0).ravel(), np.linalg.matrix_power(a, 2)[0],
        np.linalg.matrix_power(a, 5)[1], np.linalg.matrix_power(a, -3)[2],
        np.linalg.eigvalsh(a), np.linalg.eigvalsh(a, "U"), np.linalg.eigh(a)[0],
        np.abs(np.linalg.eigh(a)[1]).ravel(), np.abs(np.linalg.eigh(a, UPLO="U")[1][0]),
        np.linalg.qr(a)[0].ravel(), np.linalg.qr(a)[1].ravel(), np.linalg.qr(a[:, :2])[0].ravel(),
        np.linalg.qr(a[:2])[1].ravel(), np.linalg.svd(a)[1], np.abs(np.linalg.svd(a)[0]).ravel(),
        np.abs(np.linalg.svd(a)[2]).ravel(), np.abs(np.linalg.svd(a[:, :3], full_matrices=False)[0]).ravel(),
        np.abs(np.linalg.svd(a[:2], False)[2]).ravel(), np.linalg.svd(a[:2], False)[1],
        np.linalg.pinv(a[:, :3]).ravel(), np.linalg.pinv(a[:2], 1e-10).ravel(), np.linalg.pinv(a)[0],
        np.cov(samples).ravel(), np.cov(x, x * x).ravel(), np.corrcoef(samples).ravel(),
        tall_solution, tall_residuals * rank, tall_s, np.linalg.lstsq(a[:2], x[:2])[0],
        np.linalg.lstsq(a, WIDE.T, 1e-10)[0].ravel(), np.linalg.lstsq(WIDE.T, x * x)[0],
        np.cov(samples, rowvar=False, ddof=0).ravel(), np.corrcoef(x, np.cos(x)).ravel(),
        np.stack((np.linalg.det(a), logdet * sign, np.linalg.norm(a), np.linalg.norm(a, "fro"),
                  np.linalg.norm(a, 1), np.linalg.norm(a, -1), np.linalg.norm(a, np.inf),
                  np.linalg.norm(a, -np.inf), np.linalg.norm(a, 2), np.linalg.norm(a, -2),
                  np.linalg.norm(a, "nuc"), np.cov(x), np.corrcoef(x)))))


EXERCISED = {
    array_building: {np.matmul, np.dot, np.sum, np.max, np.amax, np.min, np.amin, np.prod, np.roll,
                     np.concatenate, np.stack, np.where, np.zeros_like, np.empty_like,
                     np.ones_like, np.full_like},
    elementwise: {np.fabs, np.degrees, np.radians, np.conjugate, np.real, np.imag, np.angle,
                  np.fmax, np.fmin, np.heaviside, np.nan_to_num, np.logaddexp, np.logaddexp2,
                  np.sinc, np.clip},
    statistics: {np.mean, np.var, np.std, np.average, np.median, np.quantile, np.percentile,
                 np.linalg.norm, np.cumsum, np.cumprod, np.diff, np.sort, np.linspace, np.interp},
    nan_ignoring: {np.nansum, np.nanprod, np.nanmax, np.nanmin, np.nanmean, np.nanvar,
                   np.nanstd, np.nancumsum, np.nancumprod},
    structure: {np.copy, np.ravel, np.reshape, np.atleast_1d, np.flip, np.take, np.repeat,
                np.tile, np.append, np.hstack, np.cross, np.inner, np.vdot, np.argmax, np.argmin,
                np.argsort, np.count_nonzero, np.nonzero, np.flatnonzero, np.any, np.all,
                np.searchsorted, np.shape, np.size, np.isclose, np.allclose,
                np.array_equal, np.delete, np.take_along_axis, np.round, np.around, np.insert,
                np.split, np.array_split, np.select, np.isreal, np.iscomplex, np.isrealobj,
                np.iscomplexobj, np.partition, np.argpartition},
    matrices: {np.outer, np.kron, np.diag, np.diagonal, np.tril, np.triu, np.trace, np.vstack,
               np.column_stack, np.transpose, np.diagflat, np.flipud, np.fliplr, np.rot90,
               np.swapaxes, np.atleast_2d, np.expand_dims, np.broadcast_to, np.moveaxis, np.hsplit,
               np.vsplit, np.atleast_3d, np.dstack, np.dsplit},
    linear_algebra: {np.linalg.solve, np.linalg.inv, np.linalg.cholesky, np.linalg.det,
                     np.linalg.slogdet, np.linalg.matrix_power, np.linalg.eigh,
                     np.linalg.eigvalsh, np.linalg.qr, np.linalg.svd, np.linalg.pinv, np.cov,
                     np.corrcoef, np.linalg.lstsq},
}


def test_every_compiled_entry_is_exercised():
    assert set().union(*EXERCISED.values()) == {func for func, entry in REGISTRY.items()
                                                if entry.compiled}


@pytest.mark.parametrize("f", list(EXERCISED) + [methods], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_compiled_entries_match_the_python_path(f, mode):
    compiled, python = dualad.jacobian(f, mode=mode), dualad.jacobian(f, mode=mode, jit=False)
    # linalg: the compiled path's own LU and products round unlike LAPACK's in the last digits
    rtol = 1e-11 if f is linear_algebra else 1e-13
    with np.errstate(all="ignore"):  # log(0), sinc's series: both paths alike
        for x in POINTS:
            np.testing.assert_allclose(compiled(x), python(x), rtol=rtol, atol=1e-15,
                                       err_msg=f"{f.__name__} at {x}")


@numba.njit
def smooth(x):
    return (np.sum(np.sinc(x) * np.logaddexp(x, x[0])) + np.var(x) * np.std(x) +
            np.linalg.norm(x, 3) + np.median(x) * np.mean(np.cumprod(x)) +
            np.interp(x[1], XP, x * x) + np.sum(np.linspace(x[0], x[1], 3) ** 2))


def test_compiled_hessians_of_the_entries_match_the_python_path():
    x = POINTS[0]
    np.testing.assert_allclose(dualad.hessian(smooth)(x), dualad.hessian(smooth, jit=False)(x),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [elementwise, statistics], ids=lambda f: f.__name__)
def test_compiled_sparsity_patterns_of_the_entries_match_the_python_path(f):
    compiled = dualad.jacobian_sparsity(f)(POINTS[0])
    assert (compiled != dualad.jacobian_sparsity(f, jit=False)(POINTS[0])).nnz == 0


def test_compiled_forward_over_reverse_of_the_entries_matches_the_python_path():
    """On the tape in Duals an active's value is a Dual: the compositions that move a value
    onto NumPy's (median, sinc, logaddexp, interp) read its float value."""
    x, v = POINTS[0], np.array([1.0, 0.5, -0.2, 0.3])
    np.testing.assert_allclose(dualad.hvp(smooth, mode="forward-over-reverse")(x, v),
                               dualad.hvp(smooth, jit=False, mode="forward-over-reverse")(x, v),
                               rtol=1e-12, atol=1e-14)


@numba.njit
def products(x):
    return np.concatenate((np.cumprod(x), np.nancumprod(x), np.stack((
        np.prod(x), x.prod(), np.interp(x[0] * np.nan, XP[:1], x[:1] * 3.0)))))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_products_meet_inf_and_zero_in_the_python_paths_order(mode):
    """prod and cumprod multiply in the Python path's order (a tree, a doubling scan), so
    overflow, inf and 0 give the same nan/inf partials; interp of one sample gives fp[0]
    at a nan x, as NumPy."""
    compiled, python = dualad.jacobian(products, mode=mode), dualad.jacobian(products, mode=mode, jit=False)
    with np.errstate(all="ignore"):
        for x in ([1e300, 1e300, 1.0, 2.0], [-np.inf, 1.0, 1.0, 2.0], [0.0, np.inf, 2.0, 1.0],
                  [2.0, 3.0, 0.0, 0.5]):
            x = np.array(x)
            np.testing.assert_allclose(compiled(x), python(x), rtol=1e-13, atol=1e-15,
                                       err_msg=f"{x}")


@numba.njit
def taken(x, i):
    return np.take(x, np.array([0, i]))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_take_out_of_bounds_raises(mode):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(dualad.jacobian(taken, mode=mode)(x, -1), [[1, 0, 0], [0, 0, 1]])
    with pytest.raises(IndexError, match="out of bounds"):
        dualad.jacobian(taken, mode=mode)(x, 5)
