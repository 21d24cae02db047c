"""One example call per entry of the NumPy registry (dualad/functions), for the generated
tests: each example maps x, a 1-d array of N entries in (0.2, 1.7), to the function's result
on arrays built from x. test_numpy_registry fails when an entry has no example here."""

import numpy as np

from dualad.functions.linalg import _cholesky, _lstsq

N = 12
rng = np.random.default_rng(7)
W = rng.normal(size=(3, 4))
IDX = np.array([[2, 0, 1], [1, 1, 0]])


def matrix(x, n=3):
    """A well-conditioned n×n matrix of x's entries."""
    return np.reshape(x[:n * n], (n, n)) + n * np.eye(n)


def spd(x, n=3):
    """A symmetric positive definite matrix with distinct eigenvalues."""
    a = matrix(x, n)
    return a @ a.T + np.diag(np.arange(1.0, n + 1))


def real_spectrum(x, n=3):
    """A non-symmetric n×n matrix with real, distinct eigenvalues: S diag(d) S⁻¹."""
    s = matrix(x, n)
    d = np.arange(1.0, 1.5 * n + 1.0, 1.5)[:n] + 0.1 * np.tanh(x[:n])
    return s @ (d[:, None] * np.linalg.inv(s))


def m34(x):
    return np.reshape(x, (3, 4))


EXAMPLES = {
    # structure: one operand
    np.reshape: lambda x: np.reshape(x, (4, 3)) * W.T,
    np.ravel: lambda x: np.ravel(m34(x).T),
    np.transpose: lambda x: np.transpose(np.reshape(x, (2, 3, 2)), (1, 2, 0)),
    np.swapaxes: lambda x: np.swapaxes(np.reshape(x, (2, 3, 2)), 0, 2),
    np.moveaxis: lambda x: np.moveaxis(np.reshape(x, (2, 3, 2)), 0, -1),
    np.rollaxis: lambda x: np.rollaxis(np.reshape(x, (2, 3, 2)), 2),
    np.squeeze: lambda x: np.squeeze(np.reshape(x, (1, 12, 1)), axis=0),
    np.expand_dims: lambda x: np.expand_dims(m34(x), (0, 2)),
    np.broadcast_to: lambda x: np.broadcast_to(x[:4], (3, 4)) * W,
    np.copy: lambda x: np.copy(x) ** 2,
    np.roll: lambda x: np.roll(m34(x), (1, -1), axis=(0, 1)),
    np.flip: lambda x: np.flip(m34(x), axis=1),
    np.fliplr: lambda x: np.fliplr(m34(x)),
    np.flipud: lambda x: np.flipud(m34(x)),
    np.rot90: lambda x: np.rot90(m34(x), 3),
    np.take: lambda x: np.take(m34(x), [2, 0, 2], axis=1),
    np.diagonal: lambda x: np.diagonal(np.reshape(x, (2, 2, 3)), 1, 0, 2),
    np.repeat: lambda x: np.repeat(m34(x), [1, 0, 2], axis=0),
    np.tile: lambda x: np.tile(x[:3], (2, 2)),
    np.delete: lambda x: np.delete(m34(x), [0, 2], axis=1),
    np.real: lambda x: np.real(x) * x,
    np.take_along_axis: lambda x: np.take_along_axis(m34(x)[:2, :3], IDX, 1),
    np.pad: lambda x: [np.pad(m34(x), ((1, 0), (2, 1)), mode=m) for m in ("edge", "reflect", "symmetric", "wrap")] + [np.pad(m34(x), 1, constant_values=2.0)],
    # structure: several operands
    np.concatenate: lambda x: np.concatenate([m34(x), np.ones((1, 4)), m34(x)[:1] ** 2]),
    np.stack: lambda x: np.stack([x[:4], np.ones(4), x[4:8] ** 2], axis=1),
    np.hstack: lambda x: np.hstack([x[:3], 1.0, x[5:]]),
    np.vstack: lambda x: np.vstack([x[:4], m34(x)]),
    np.dstack: lambda x: np.dstack([m34(x), np.ones((3, 4))]),
    np.column_stack: lambda x: np.column_stack([x[:3], np.ones(3), m34(x)]),
    np.append: lambda x: np.append(m34(x), np.ones((1, 4)) * x[0], axis=0),
    np.insert: lambda x: np.insert(x, [1, 5], x[:2] ** 2),
    np.where: lambda x: np.where(x > 0.9, x ** 2, 1.0 - x),
    np.atleast_1d: lambda x: np.atleast_1d(x[0] * x[1]),
    np.atleast_2d: lambda x: np.atleast_2d(x),
    np.atleast_3d: lambda x: np.atleast_3d(m34(x)),
    np.sort: lambda x: np.sort(m34(x), axis=0),
    np.partition: lambda x: np.partition(x, 4),
    np.split: lambda x: np.split(m34(x), 2, axis=1)[1],
    np.array_split: lambda x: np.array_split(x, 5)[3],
    np.hsplit: lambda x: np.hsplit(m34(x), [1, 3])[1],
    np.vsplit: lambda x: np.vsplit(m34(x), 3)[2],
    np.dsplit: lambda x: np.dsplit(np.reshape(x, (1, 3, 4)), 2)[0],
    np.tril: lambda x: np.tril(m34(x), -1),
    np.triu: lambda x: np.triu(m34(x), 1),
    np.diag: lambda x: [np.diag(x[:3], 1), np.diag(m34(x), -1)],
    np.diagflat: lambda x: np.diagflat(x[:3], -1),
    np.trace: lambda x: [np.trace(m34(x), 1), np.trace(m34(x), 5)],
    np.select: lambda x: np.select([x < 0.5, x > 1.2], [x ** 2, np.sin(x)], 0.5 * x),
    np.imag: lambda x: np.imag(x) + x,
    np.angle: lambda x: np.angle(x - 1.0) + x,
    np.zeros_like: lambda x: np.zeros_like(x) + x ** 2,
    np.empty_like: lambda x: _filled(np.empty_like(x), x),
    np.ones_like: lambda x: np.ones_like(x) * x,
    np.full_like: lambda x: [np.full_like(x, 2.0) * x, np.full_like(x, x[0])],
    # reductions
    np.sum: lambda x: [np.sum(m34(x), axis=0), np.sum(m34(x) ** 2, keepdims=True)],
    np.cumsum: lambda x: np.cumsum(m34(x), axis=1),
    np.max: lambda x: [np.max(m34(x), axis=1), np.max(np.round(x, 1))],
    np.amax: lambda x: np.amax(m34(x), axis=0, keepdims=True),
    np.min: lambda x: np.min(m34(x) * W, axis=0),
    np.amin: lambda x: np.amin(x),
    np.mean: lambda x: np.mean(m34(x), axis=(0, 1)),
    np.clip: lambda x: np.clip(x, 0.5, 1.2),
    np.prod: lambda x: np.prod(m34(x), axis=0),
    np.cumprod: lambda x: np.cumprod(m34(x), axis=1),
    np.cumprod: lambda x: np.cumprod(m34(x), axis=1),
    np.diff: lambda x: np.diff(m34(x), n=2, axis=1, prepend=0.5),
    np.round: lambda x: np.round(x, 1) * x,
    np.around: lambda x: np.around(x) + x,
    # multilinear
    np.einsum: lambda x: [np.einsum("ij,kj->ik", m34(x), W), np.einsum(m34(x), [0, 1], m34(x), [2, 1], [0, 2])],
    np.matmul: lambda x: [m34(x) @ W.T, x[:3] @ np.reshape(np.tile(x, 2), (2, 3, 4))],
    np.dot: lambda x: [np.dot(m34(x), x[:4]), np.dot(x[0], m34(x))],
    np.inner: lambda x: np.inner(m34(x), W),
    np.vdot: lambda x: np.vdot(m34(x), W),
    np.tensordot: lambda x: np.tensordot(np.reshape(x, (2, 3, 2)), m34(x)[:, :2], axes=([1, 2], [0, 1])),
    np.outer: lambda x: np.outer(x[:3], x[3:7]),
    np.kron: lambda x: np.kron(np.reshape(x[:4], (2, 2)), np.reshape(x[4:10], (2, 3))),
    np.cross: lambda x: [np.cross(m34(x)[:, :3], W[:, :3]), np.cross(x[:3], x[3:6])],
    # linear algebra
    np.linalg.det: lambda x: np.linalg.det(matrix(x)),
    np.linalg.inv: lambda x: np.linalg.inv(matrix(x)),
    np.linalg.solve: lambda x: np.linalg.solve(matrix(x), x[3:6]),
    np.linalg.slogdet: lambda x: np.linalg.slogdet(matrix(x))[1],
    _cholesky: lambda x: _cholesky(spd(x), False),
    np.linalg.cholesky: lambda x: [np.linalg.cholesky(spd(x)), np.linalg.cholesky(spd(x), upper=True)],
    np.linalg.eigh: lambda x: _eigh(spd(x)),
    np.linalg.eigvalsh: lambda x: np.linalg.eigvalsh(spd(x)),
    np.linalg.eig: lambda x: _eig(real_spectrum(x)),
    np.linalg.eigvals: lambda x: np.linalg.eigvals(real_spectrum(x)),
    np.linalg.svd: lambda x: _svd(m34(x)),
    np.linalg.svdvals: lambda x: np.linalg.svdvals(m34(x)),
    np.linalg.qr: lambda x: list(np.linalg.qr(m34(x).T)),
    np.linalg.pinv: lambda x: np.linalg.pinv(m34(x)),
    _lstsq: lambda x: list(_lstsq(m34(x).T, x[:4], None)),
    np.linalg.lstsq: lambda x: np.linalg.lstsq(m34(x).T, x[:4])[0],
    np.linalg.matrix_power: lambda x: [np.linalg.matrix_power(matrix(x) / 4, 3), np.linalg.matrix_power(matrix(x), -2)],
    np.linalg.multi_dot: lambda x: np.linalg.multi_dot([m34(x), W.T, matrix(x)]),
    np.linalg.norm: lambda x: [np.linalg.norm(x), np.linalg.norm(m34(x), 1), np.linalg.norm(m34(x), "nuc"),
                               np.linalg.norm(m34(x), 2), np.linalg.norm(m34(x), axis=1, ord=3)],
    # statistics
    np.var: lambda x: [np.var(m34(x), axis=0), np.var(x, ddof=1)],
    np.std: lambda x: np.std(m34(x), axis=1, keepdims=True),
    np.average: lambda x: np.average(m34(x), axis=1, weights=x[:4]),
    np.nansum: lambda x: np.nansum(m34(x), axis=0),
    np.nanmean: lambda x: np.nanmean(m34(x), axis=1),
    np.nanmax: lambda x: np.nanmax(m34(x), axis=1),
    np.nanmin: lambda x: np.nanmin(m34(x), axis=0, keepdims=True),
    np.nanprod: lambda x: np.nanprod(m34(x), axis=1),
    np.nancumsum: lambda x: np.nancumsum(m34(x), axis=1),
    np.nancumprod: lambda x: np.nancumprod(m34(x), axis=0),
    np.nanvar: lambda x: np.nanvar(m34(x), axis=1, ddof=1),
    np.nanstd: lambda x: np.nanstd(x),
    np.cov: lambda x: np.cov(m34(x)),
    np.corrcoef: lambda x: np.corrcoef(m34(x)),
    np.quantile: lambda x: np.quantile(m34(x), [0.3, 0.8], axis=1),
    np.percentile: lambda x: np.percentile(x, 35.0),
    np.median: lambda x: [np.median(m34(x), axis=0), np.median(x)],
    np.linspace: lambda x: np.linspace(x[0], x[1] + 2.0, 5),
    np.gradient: lambda x: np.gradient(m34(x), axis=1),
    np.interp: lambda x: np.interp(x[:3] * 3.0, [0.0, 1.0, 2.5, 5.5], x[4:8]),
    # elementwise functions outside the rule table
    np.fabs: lambda x: np.fabs(x - 1.0),
    np.degrees: lambda x: np.degrees(x),
    np.radians: lambda x: np.radians(x),
    np.conjugate: lambda x: np.conjugate(x) * x,
    np.fmax: lambda x: np.fmax(x, 1.0),
    np.fmin: lambda x: np.fmin(x[:6], x[6:]),
    np.heaviside: lambda x: np.heaviside(x - 1.0, 0.5) + x,
    np.nan_to_num: lambda x: np.nan_to_num(x),
    np.logaddexp: lambda x: np.logaddexp(x[:6], x[6:]),
    np.logaddexp2: lambda x: np.logaddexp2(x[:6], 2 * x[6:]),
    np.sinc: lambda x: np.sinc(x - 0.9),
}


def _eigh(a):
    w, v = np.linalg.eigh(a)
    return [w, v * v]  # v * v does not depend on the signs LAPACK picks


def _eig(a):
    w, v = np.linalg.eig(a)
    return [w, v * v]  # v * v does not depend on the signs LAPACK picks


def _svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return [s, u * u, vh * vh]


def _filled(buffer, x):
    buffer[...] = x ** 2
    return buffer


# Functions whose result does not depend differentiably on x: the example runs on duals and
# gives NumPy's result.
VALUE_ONLY_EXAMPLES = {
    np.shape: lambda x: np.shape(m34(x)),
    np.ndim: lambda x: np.ndim(m34(x)),
    np.size: lambda x: np.size(x),
    np.argmax: lambda x: np.argmax(m34(x), axis=1),
    np.argmin: lambda x: np.argmin(x),
    np.argsort: lambda x: np.argsort(x),
    np.argpartition: lambda x: np.argpartition(x, 3),
    np.nonzero: lambda x: np.nonzero(x > 1.0),
    np.flatnonzero: lambda x: np.flatnonzero(x > 1.0),
    np.count_nonzero: lambda x: np.count_nonzero(x > 1.0),
    np.isclose: lambda x: np.isclose(x, 1.0, atol=0.2),
    np.allclose: lambda x: np.allclose(x, x),
    np.array_equal: lambda x: np.array_equal(x, x),
    np.searchsorted: lambda x: np.searchsorted(np.sort(x), 1.0),
    np.result_type: lambda x: np.result_type(x, 1.0),
    np.iscomplexobj: lambda x: np.iscomplexobj(x),
    np.isrealobj: lambda x: np.isrealobj(x),
    np.isreal: lambda x: np.isreal(x),
    np.iscomplex: lambda x: np.iscomplex(x),
    np.any: lambda x: np.any(x > 1.5),
    np.all: lambda x: np.all(x > 0.0),
}
