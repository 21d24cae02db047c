"""numpy.linalg: each function's JVP, written once with NumPy calls.

Each jvp takes primals and tangents and returns (value, tangent). A tangent carries its N
directions on one trailing axis (dA has shape A.shape + (N,)); a constant operand's tangent
is None. The formulas use NumPy calls that accept dual numbers, so the hyper-dual path runs
these same lines on nested duals for exact second derivatives, and that are linear in the
tangents with operations the reverse tape records, so reverse mode transposes them.
Singular matrices raise numpy.linalg.LinAlgError, as the values do.
"""

from __future__ import annotations

import numpy as np

from .registry import composition, jvp


def _expand(y):
    return y[..., None] if np.ndim(y) else y


def det_jvp(a, da):
    """d det A = det A · tr(A⁻¹ dA)."""
    y = np.linalg.det(a)
    return y, _expand(y) * np.einsum("...ij,...jiz->...z", np.linalg.inv(a), da)


def inv_jvp(a, da):
    """d A⁻¹ = -A⁻¹ dA A⁻¹."""
    y = np.linalg.inv(a)
    return y, -np.einsum("...ij,...jkz,...kl->...ilz", y, da, y)


def solve_jvp(a, b, da, db):
    """x = A⁻¹ b;  dx = A⁻¹ (db - dA x). b is a vector iff b.ndim == 1 (NumPy 2 semantics)."""
    x = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1
    rhs = 0.0 if db is None else db
    if da is not None:
        rhs = rhs - np.einsum("...ijz,...j->...iz" if vector else "...ijz,...jk->...ikz", da, x)
    if vector:
        return x, np.linalg.solve(a, rhs)
    n_dir = rhs.shape[-1]
    merged = rhs.reshape(rhs.shape[:-2] + (rhs.shape[-2] * n_dir,))
    return x, np.linalg.solve(a, merged).reshape(np.shape(x) + (n_dir,))


@jvp(np.linalg.det)
def _det(a):
    return [a], det_jvp


@jvp(np.linalg.inv)
def _inv(a):
    return [a], inv_jvp


@jvp(np.linalg.solve)
def _solve(a, b):
    return [a, b], solve_jvp


@composition(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    """Vector p-norms and the Frobenius norm, composed from primitives (2-norm at 0: nan)."""
    matrix = (axis is None and np.ndim(x) == 2 and ord is not None) or (isinstance(axis, tuple) and len(axis) == 2)
    if matrix and ord not in (None, "fro"):
        raise TypeError(f"numpy.linalg.norm with ord={ord!r} on a matrix is not differentiable "
                        "by dualad (only 'fro'); use a vector norm or compose it")
    if ord in (None, 2, "fro"):
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return np.max(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
    return np.sum(np.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)
