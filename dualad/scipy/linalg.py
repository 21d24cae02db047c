"""Stand-ins of scipy.linalg's solvers and factorisations: solve, solve_triangular,
cholesky, cho_factor, cho_solve, lu_factor, lu_solve, inv, det, expm. Each is SciPy's own
function on plain arrays; on dual numbers of any layer, SciPy's value with the derivatives
of the same mathematics written with numpy.linalg calls whose JVPs are the registry's
(dualad/functions/linalg.py: solve, inv, det, cholesky), on the matrix SciPy reads (the
triangle it is told to read, the transpose it is told to solve with). Two have no NumPy
counterpart and are written here once, as algorithms on the layers: the LU factorisation
(Doolittle elimination in SciPy's pivot order, the pivots a constant) and expm (scaling
and squaring with the degree-13 Padé approximant, Higham 2005, whose derivative is the
Fréchet derivative of the approximant, as scipy.linalg.expm_frechet computes it).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from ..number import primal
from .values import has_layer, on_values, scipy_valued

__all__ = ["solve", "solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "inv", "det", "expm", "STAND_INS"]


def _triangle(a, lower, unit_diagonal=False):
    """The triangular matrix SciPy reads from a: its lower (upper) triangle, with ones on
    the diagonal for unit_diagonal."""
    if unit_diagonal:
        return (np.tril(a, -1) if lower else np.triu(a, 1)) + np.eye(np.shape(a)[-1])
    return np.tril(a) if lower else np.triu(a)


def _symmetric(a, lower):
    """The symmetric matrix SciPy reads from one triangle of a (assume_a='sym', 'pos')."""
    return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2) if lower else \
        np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)


def _valued(expr, function, *args, **kwargs):
    """expr's derivatives with function's value on the plain arguments."""
    return scipy_valued(expr, function(*on_values(args), **on_values(kwargs)))


# ---- linear systems -----------------------------------------------------------------------------
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """scipy.linalg.solve: A x = b (Aᵀ x = b if transposed), A read as assume_a says."""
    options = dict(lower=lower, assume_a=assume_a, transposed=transposed)
    if not has_layer(a, b):
        return scipy.linalg.solve(a, b, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                                  check_finite=check_finite, **options)
    kind = {"symmetric": "sym", "hermitian": "her", "positive definite": "pos"}.get(assume_a, assume_a)
    if kind in ("sym", "her", "pos"):
        matrix = _symmetric(a, lower)
    elif kind in ("lower triangular", "upper triangular"):
        matrix = _triangle(a, kind.startswith("lower"))
    elif kind == "diagonal":
        matrix = np.diag(np.diagonal(a))
    elif kind == "tridiagonal":
        matrix = np.triu(np.tril(a, 1), -1)
    else:
        matrix = a
    if transposed:
        matrix = np.swapaxes(matrix, -1, -2)
    return _valued(np.linalg.solve(matrix, b), scipy.linalg.solve, a, b, **options)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """scipy.linalg.solve_triangular: T x = b (Tᵀ x = b for trans 1, 'T', 2, 'C'), T the
    triangle of a SciPy reads."""
    options = dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    if not has_layer(a, b):
        return scipy.linalg.solve_triangular(a, b, overwrite_b=overwrite_b, check_finite=check_finite,
                                             **options)
    matrix = _triangle(a, lower, unit_diagonal)
    if trans in (1, 2, "T", "C"):
        matrix = np.swapaxes(matrix, -1, -2)
    return _valued(np.linalg.solve(matrix, b), scipy.linalg.solve_triangular, a, b, **options)


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    """scipy.linalg.inv: A⁻¹ (A read as assume_a says)."""
    if not has_layer(a):
        return scipy.linalg.inv(a, overwrite_a=overwrite_a, check_finite=check_finite,
                                assume_a=assume_a, lower=lower)
    matrix = _symmetric(a, lower) if assume_a in ("sym", "her", "pos", "symmetric",
                                                   "hermitian", "positive definite") else a
    return _valued(np.linalg.inv(matrix), scipy.linalg.inv, a, assume_a=assume_a, lower=lower)


def det(a, overwrite_a=False, check_finite=True):
    """scipy.linalg.det."""
    if not has_layer(a):
        return scipy.linalg.det(a, overwrite_a=overwrite_a, check_finite=check_finite)
    return _valued(np.linalg.det(a), scipy.linalg.det, a)


# ---- Cholesky -----------------------------------------------------------------------------------------
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cholesky: U with A = UᵀU (L with A = LLᵀ for lower), from that triangle of A."""
    if not has_layer(a):
        return scipy.linalg.cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)
    return _valued(np.linalg.cholesky(a, upper=not lower), scipy.linalg.cholesky, a, lower=lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cho_factor: (c, lower), the factor in c's lower (upper) triangle and a's
    own entries in the other, as SciPy leaves them."""
    if not has_layer(a):
        return scipy.linalg.cho_factor(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)
    factor = np.linalg.cholesky(a, upper=not lower)
    c = factor + (np.triu(a, 1) if lower else np.tril(a, -1))
    return scipy_valued(c, scipy.linalg.cho_factor(on_values(a), lower=lower)[0]), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """scipy.linalg.cho_solve: A x = b with A = LLᵀ (UᵀU), the factor read from c's triangle:
    two triangular solves."""
    c, lower = c_and_lower
    if not has_layer(c, b):
        return scipy.linalg.cho_solve((c, lower), b, overwrite_b=overwrite_b, check_finite=check_finite)
    factor = _triangle(c, lower)
    first, second = (factor, np.swapaxes(factor, -1, -2)) if lower else (np.swapaxes(factor, -1, -2), factor)
    x = np.linalg.solve(second, np.linalg.solve(first, b))
    return scipy_valued(x, scipy.linalg.cho_solve((on_values(c), lower), on_values(b)))


# ---- LU -----------------------------------------------------------------------------------------------
def _permutation(piv):
    """LAPACK's pivots (row i swapped with piv[i], in turn) as the row order perm: A[perm] = LU."""
    perm = np.arange(len(piv))
    for i, p in enumerate(np.asarray(piv)):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _doolittle(b):
    """L and U (in one matrix, L's unit diagonal implied) of B = LU without pivoting: the
    elimination itself on the layers, one column at a time, so that its derivative is the
    factorisation's."""
    m = b
    for k in range(np.shape(b)[-1] - 1):
        pivot, below = m[k], m[k + 1:]
        multipliers = below[:, k] / pivot[k]
        eliminated = below[:, k + 1:] - multipliers[:, None] * pivot[None, k + 1:]
        below = np.concatenate([below[:, :k], multipliers[:, None], eliminated], axis=1)
        m = np.concatenate([m[:k + 1], below], axis=0)
    return m


def lu_factor(a, overwrite_a=False, check_finite=True):
    """scipy.linalg.lu_factor: (lu, piv), A = P L U with SciPy's pivots (a constant)."""
    if not has_layer(a):
        return scipy.linalg.lu_factor(a, overwrite_a=overwrite_a, check_finite=check_finite)
    lu, piv = scipy.linalg.lu_factor(on_values(a))
    return scipy_valued(_doolittle(a[_permutation(piv)]), lu), piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """scipy.linalg.lu_solve: A x = b (Aᵀ x = b for trans 1, 2) with A[perm] = LU."""
    lu, piv = lu_and_piv
    if not has_layer(lu, b):
        return scipy.linalg.lu_solve((lu, piv), b, trans=trans, overwrite_b=overwrite_b,
                                     check_finite=check_finite)
    perm = _permutation(piv)
    lower, upper = _triangle(lu, True, unit_diagonal=True), _triangle(lu, False)
    if trans in (1, 2):
        z = np.linalg.solve(np.swapaxes(lower, -1, -2), np.linalg.solve(np.swapaxes(upper, -1, -2), b))
        x = z[np.argsort(perm)]
    else:
        x = np.linalg.solve(upper, np.linalg.solve(lower, b[perm]))
    return scipy_valued(x, scipy.linalg.lu_solve((on_values(lu), piv), on_values(b), trans=trans))


# ---- the matrix exponential ---------------------------------------------------------------------------
_PADE_13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
            129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
            40840800., 960960., 16380., 182., 1.)
_THETA_13 = 5.371920351148152  # the 1-norm up to which the degree-13 Padé approximant is exact


def _pade_13(a):
    """r₁₃(A) = (V - U)⁻¹(V + U), U the odd part of the Padé numerator, V the even one."""
    b = _PADE_13
    identity = np.eye(np.shape(a)[-1])
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a2 @ a4
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    return np.linalg.solve(v - u, v + u)


def expm(A):  # noqa: N803 - SciPy's name
    """scipy.linalg.expm: e^A = r₁₃(A/2^s)^(2^s), s from the 1-norm of A's value (a constant)."""
    if not has_layer(A):
        return scipy.linalg.expm(A)
    norm = np.linalg.norm(primal(A), 1)
    s = max(0, math.ceil(math.log2(norm / _THETA_13))) if norm > 0 else 0
    r = _pade_13(A / 2.0 ** s)
    for _ in range(s):
        r = r @ r
    return scipy_valued(r, scipy.linalg.expm(on_values(A)))


STAND_INS = {getattr(scipy.linalg, name): globals()[name] for name in __all__[:-1]}
