"""Stand-ins of scipy.linalg's solvers, factorisations and matrix functions. Each is SciPy's
own function on plain arrays; on dual numbers of any layer, SciPy's value with the
derivatives of the same mathematics written with numpy.linalg calls whose JVPs are the
registry's (dualad/functions/linalg.py: solve, inv, det, cholesky, eigh, eigvalsh, svd, qr,
lstsq, pinv), on the matrix SciPy reads (the triangle it is told to read, the transpose it
is told to solve with, the band it is given). Decompositions take SciPy's conventions as
constants: its pivots (lu, qr with pivoting) and the signs of its singular vectors and
eigenvectors (NumPy's, each column multiplied by the sign that makes it SciPy's).
Constructions (block_diag, toeplitz, circulant, the dense matrix of a banded one) are NumPy
selections, which every layer differentiates.

Three have no NumPy counterpart and are written here once:
  * the LU factorisation: Doolittle elimination in SciPy's pivot order (the pivots a
    constant) on the layers;
  * expm: scaling and squaring with the degree-13 Padé approximant (Higham 2005) on the
    layers, whose derivative is the Fréchet derivative of the approximant, as
    scipy.linalg.expm_frechet computes it;
  * sqrtm and logm: SciPy's value, and the derivatives of the exact function from the block
    identity f([[A, E], [0, A]]) = [[f(A), L(A, E)], [0, f(A)]] of a primary matrix function,
    evaluated with SciPy's own f (see _Frechet). With A₀ the plain matrix and Δ = A - A₀
    (every layer, value 0), f(A) = f(A₀) + L(A₀, Δ) + (terms of order 2 and up in Δ), and
    the terms of order above the layers' depth vanish. L(A₀, ·) is a linear map with
    constant coefficients: forward numbers apply it to each component (a 2n block per
    direction), the reverse tape records it with the VJP L(A₀ᵀ, ·), its transpose. sqrtm's
    higher terms come from X² = A order by order: X_k = -L(Σ_{i+j=k} X_i X_j), so sqrtm is
    exact at every order; logm's second term is ½ L²(A₀, Δ, Δ), from the 4n block identity
    for the second Fréchet derivative (Higham & Relton 2014), and its third and higher
    derivatives are an error.
A matrix where the function has no derivative (rank-deficient lstsq, a zero LU pivot, a
singular matrix for sqrtm or logm, repeated eigenvalues or singular values) is an error that
says so; an option of SciPy's that dualad does not differentiate is NotDifferentiated,
naming it and what works.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg

from ..functions.linalg import GAP_RTOL
from ..functions.registry import stack_lists
from ..number import ForwardNumber, SlowPathWarning, is_layer, primal
from ..reverse.traced import Traced, record
from ..hyperdual import layer_depth
from .values import NotDifferentiated, has_layer, on_values, scipy_valued

__all__ = ["solve", "solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "inv", "det", "expm", "eigh", "eigvalsh", "svd", "svdvals", "qr", "lstsq",
           "pinv", "lu", "solve_banded", "solveh_banded", "sqrtm", "logm", "block_diag", "toeplitz",
           "circulant", "STAND_INS"]


_NO_VALUE = object()  # an option not given (SciPy's own sentinel is private)


class NoDerivative(NotDifferentiated, np.linalg.LinAlgError):
    """A matrix at which a stand-in's function has no derivative (a rank-deficient least
    squares problem, a zero LU pivot, a singular matrix for sqrtm or logm), named. A
    numpy.linalg.LinAlgError, final as NotDifferentiated is (f's views pass it through)."""


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


def _doolittle(b, name):
    """L and U (in one M x N matrix, L's unit diagonal implied) of B = LU without pivoting:
    the elimination itself on the layers, one column at a time, so that its derivative is
    the factorisation's. A zero pivot (B singular there, after SciPy's row order) is an
    error: the factors have no derivative."""
    m = b
    rows, columns = np.shape(b)
    for k in range(min(rows - 1, columns)):
        pivot, below = m[k], m[k + 1:]
        if primal(pivot[k]) == 0:
            raise NoDerivative(f"scipy.linalg.{name}: the pivot of column {k} is 0 (no nonzero entry "
                               "left in that column: the matrix is rank-deficient), where the LU "
                               "factors have no derivative")
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
    return scipy_valued(_doolittle(a[_permutation(piv)], "lu_factor"), lu), piv


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


# ---- shapes, signs ------------------------------------------------------------------------------------
def _matrix(a, name):
    """a (lists stacked) as one matrix: a stack is NotDifferentiated, by name."""
    a = stack_lists(a)
    if np.ndim(a) != 2:
        raise NotDifferentiated(
            f"scipy.linalg.{name} of a {np.ndim(a)}-d array on dual numbers: dualad differentiates "
            "one matrix (2-d) per call; call it on each matrix of the stack")
    return a


def _signs(vectors, reference):
    """±1 per column (a row vector) that turns the columns of the vectors' value into SciPy's
    reference vectors (equal up to sign): a constant."""
    signs = np.sign(np.sum(np.asarray(on_values(vectors)) * reference, axis=-2, keepdims=True))
    return np.where(signs == 0, 1.0, signs)


# ---- symmetric eigenproblems --------------------------------------------------------------------------
def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,  # noqa: A002
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """scipy.linalg.eigh: w (and V) of the symmetric matrix read from a's lower (upper)
    triangle, by numpy.linalg.eigh; with b, the generalised problem of type 1 (A v = λ B v),
    2 (A B v = λ v) or 3 (B A v = λ v) reduced by the Cholesky factor B = L Lᵀ as LAPACK
    does (C = L⁻¹ A L⁻ᵀ or Lᵀ A L), SciPy's normalisation. Eigenvectors take SciPy's signs;
    subset_by_index and subset_by_value select from the whole decomposition (every
    eigenvalue distinct)."""
    options = dict(lower=lower, eigvals_only=eigvals_only, type=type, subset_by_index=subset_by_index,
                   subset_by_value=subset_by_value, driver=driver)
    if not has_layer(a, b):
        return scipy.linalg.eigh(a, b, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                                 check_finite=check_finite, **options)
    value = scipy.linalg.eigh(on_values(a), on_values(b), **options)
    a = _matrix(a, "eigh")
    if b is None:
        uplo = "L" if lower else "U"
        w, v = (np.linalg.eigvalsh(a, UPLO=uplo), None) if eigvals_only else np.linalg.eigh(a, UPLO=uplo)
    else:
        factor = np.linalg.cholesky(_symmetric(_matrix(b, "eigh"), lower))
        symmetric = _symmetric(a, lower)
        if type == 1:
            c = np.linalg.solve(factor, np.swapaxes(np.linalg.solve(factor, symmetric), -1, -2))
        else:
            c = np.swapaxes(factor, -1, -2) @ symmetric @ factor
        w, v = (np.linalg.eigvalsh(c), None) if eigvals_only else np.linalg.eigh(c)
        if v is not None:
            v = np.linalg.solve(np.swapaxes(factor, -1, -2), v) if type in (1, 2) else factor @ v
    w_value = value if eigvals_only else value[0]
    if subset_by_index is not None or subset_by_value is not None:
        count = np.shape(w_value)[-1]
        full = np.asarray(primal(w))
        start = int(np.argmin(np.abs(full - w_value[0]))) if count else 0
        if not np.allclose(full[start:start + count], w_value, rtol=1e-8, atol=0.0):
            raise NoDerivative("scipy.linalg.eigh: SciPy's subset of the eigenvalues is not a run of "
                               "the whole spectrum dualad computes (an eigenvalue at a bound of "
                               "subset_by_value?); pass subset_by_index")
        w = w[start:start + count]
        v = None if v is None else v[:, start:start + count]
    if eigvals_only:
        return scipy_valued(w, w_value)
    v = v * _signs(v, value[1])
    return scipy_valued(w, value[0]), scipy_valued(v, value[1])


def eigvalsh(a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1,  # noqa: A002
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """scipy.linalg.eigvalsh: eigh's eigenvalues (numpy.linalg.eigvalsh; with b, the
    generalised problem as eigh reduces it)."""
    options = dict(lower=lower, type=type, subset_by_index=subset_by_index,
                   subset_by_value=subset_by_value, driver=driver)
    if not has_layer(a, b):
        return scipy.linalg.eigvalsh(a, b, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                                     check_finite=check_finite, **options)
    return eigh(a, b, eigvals_only=True, **options)


# ---- singular values, QR, least squares, pseudo-inverse ------------------------------------------------
def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """scipy.linalg.svd: U, s, Vh by numpy.linalg.svd, each pair of singular vectors with
    SciPy's signs (distinct, nonzero singular values); full_matrices=True of a non-square
    matrix is NotDifferentiated (the extra vectors are any basis of a complement)."""
    if not has_layer(a):
        return scipy.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, overwrite_a=overwrite_a,
                                check_finite=check_finite, lapack_driver=lapack_driver)
    value = scipy.linalg.svd(on_values(a), full_matrices=full_matrices, compute_uv=compute_uv,
                             lapack_driver=lapack_driver)
    a = _matrix(a, "svd")
    if not compute_uv:
        return scipy_valued(np.linalg.svd(a, compute_uv=False), value)
    m, n = np.shape(a)
    if full_matrices and m != n:
        raise NotDifferentiated(
            f"scipy.linalg.svd with full_matrices=True of a {m}x{n} matrix on dual numbers: the last "
            f"{max(m, n) - min(m, n)} singular vectors are any orthonormal basis of a complement and "
            "have no derivative; pass full_matrices=False (or compute_uv=False)")
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    signs = _signs(u, value[0])
    u, vh = u * signs, vh * np.swapaxes(signs, -1, -2)
    return scipy_valued(u, value[0]), scipy_valued(s, value[1]), scipy_valued(vh, value[2])


def svdvals(a, overwrite_a=False, check_finite=True):
    """scipy.linalg.svdvals: the singular values, by numpy.linalg.svd (distinct, nonzero)."""
    if not has_layer(a):
        return scipy.linalg.svdvals(a, overwrite_a=overwrite_a, check_finite=check_finite)
    return svd(a, compute_uv=False)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """scipy.linalg.qr: Q R of a (of a[:, P] with pivoting, SciPy's P a constant) by
    numpy.linalg.qr (the leading min(M, N) columns independent), with SciPy's signs;
    mode 'economic', 'r' ((R,), R M x N as SciPy's), and 'full' where Q is square (M ≤ N)."""
    if not has_layer(a):
        return scipy.linalg.qr(a, overwrite_a=overwrite_a, lwork=lwork, mode=mode, pivoting=pivoting,
                               check_finite=check_finite)
    value = scipy.linalg.qr(on_values(a), mode=mode, pivoting=pivoting)
    a = _matrix(a, "qr")
    m, n = np.shape(a)
    if mode == "raw" or (mode == "full" and m > n):
        raise NotDifferentiated(
            f"scipy.linalg.qr with mode={mode!r} on dual numbers" + (
                " (LAPACK's Householder reflectors)" if mode == "raw" else
                f" of a {m}x{n} matrix: Q's last {m - n} columns are any orthonormal basis of a "
                "complement and have no derivative") + "; pass mode='economic' or mode='r'")
    if pivoting:
        a = a[:, value[-1]]
    k = min(m, n)
    r_value = value[0] if mode == "r" else value[1]
    if mode == "r":
        q, r = None, np.linalg.qr(a, mode="r")
    else:
        q, r = np.linalg.qr(a)
    signs = np.sign(np.diagonal(np.asarray(primal(r))) * np.diagonal(r_value)[:k])
    signs = np.where(signs == 0, 1.0, signs)
    r = r * signs[:, None]
    if m > k and mode == "r":
        r = np.concatenate([r, np.zeros((m - k, n))], axis=0)
    outputs = [scipy_valued(r, r_value)]
    if q is not None:
        outputs.insert(0, scipy_valued(q * signs, value[0]))
    return tuple(outputs) + ((value[-1],) if pivoting else ())


def lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True, lapack_driver=None):
    """scipy.linalg.lstsq: (x, residues, rank, s), SciPy's, with the derivatives of
    numpy.linalg.lstsq's x, residues and s at full rank (rank-deficient: an error; write
    scipy.linalg.pinv(a) @ b, differentiated at constant rank); rank an int, s None for
    gelsy."""
    if not has_layer(a, b):
        return scipy.linalg.lstsq(a, b, cond=cond, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                                  check_finite=check_finite, lapack_driver=lapack_driver)
    x_value, residues_value, rank, s_value = scipy.linalg.lstsq(on_values(a), on_values(b), cond=cond,
                                                                lapack_driver=lapack_driver)
    a, b = _matrix(a, "lstsq"), stack_lists(b)
    m, n = np.shape(a)
    if rank < min(m, n):
        raise NoDerivative(
            f"scipy.linalg.lstsq: the {m}x{n} matrix has rank {rank} < {min(m, n)} (singular values at "
            "most cond times the largest count as 0): the least-squares solution jumps where the "
            "rank changes, and dualad differentiates it at full rank; write "
            "scipy.linalg.pinv(a) @ b (differentiated at constant rank), regularise, or remove "
            "dependent rows or columns")
    rcond = np.finfo(np.float64).eps if cond is None else cond
    x, residues, _, s = np.linalg.lstsq(a, b, rcond=rcond)
    if np.size(residues_value):
        residues = scipy_valued(residues[0] if np.ndim(b) == 1 else residues, residues_value)
    else:
        residues = residues_value
    return (scipy_valued(x, x_value), residues, rank,
            None if s_value is None else scipy_valued(s, s_value))


def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    """scipy.linalg.pinv: A⁺ by numpy.linalg.pinv with SciPy's cutoff atol + rtol·σ_max as
    its relative rcond: the derivative at constant rank (the rank SciPy finds)."""
    if not has_layer(a):
        return scipy.linalg.pinv(a, atol=atol, rtol=rtol, return_rank=return_rank, check_finite=check_finite)
    value, rank = scipy.linalg.pinv(on_values(a), atol=atol, rtol=rtol, return_rank=True)
    a = _matrix(a, "pinv")
    singular = np.linalg.svd(np.asarray(on_values(a), dtype=np.float64), compute_uv=False)
    largest = np.max(singular, initial=0.0)
    cutoff = (0.0 if atol is None else atol) + largest * (
        max(np.shape(a)) * np.finfo(np.float64).eps if rtol is None else rtol)
    if np.sum(singular > cutoff) != rank:
        raise NoDerivative(f"scipy.linalg.pinv: a singular value sits at the cutoff {cutoff!r} (atol + "
                           "rtol·σ_max), where the rank, and with it the pseudo-inverse, jumps")
    p = scipy_valued(np.linalg.pinv(a, rcond=cutoff / largest if largest > 0 else 0.0), value)
    return (p, rank) if return_rank else p


# ---- LU -------------------------------------------------------------------------------------------------
def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """scipy.linalg.lu: A = P L U (M x N: L M x K, U K x N), SciPy's P (or p) a constant and
    L, U from Doolittle elimination of A's rows in SciPy's order; permute_l: (P L, U)."""
    if not has_layer(a):
        return scipy.linalg.lu(a, permute_l=permute_l, overwrite_a=overwrite_a, check_finite=check_finite,
                               p_indices=p_indices)
    value = scipy.linalg.lu(on_values(a), permute_l=permute_l, p_indices=p_indices)
    p = value[0] if p_indices and not permute_l else scipy.linalg.lu(on_values(a), p_indices=True)[0]
    a = _matrix(a, "lu")
    m, n = np.shape(a)
    k = min(m, n)
    factors = _doolittle(a[np.argsort(p)], "lu")  # A = L[p] U, so A[argsort(p)] = L U
    lower = np.tril(factors[:, :k], -1) + np.eye(m, k)
    upper = np.triu(factors[:k])
    if permute_l:
        return scipy_valued(lower[p], value[0]), scipy_valued(upper, value[1])
    return value[0], scipy_valued(lower, value[1]), scipy_valued(upper, value[2])


# ---- banded systems -------------------------------------------------------------------------------------
def _from_band(ab, rows, columns, inside):
    """The dense matrix with entries ab[rows, columns] where `inside`, 0 elsewhere."""
    return np.where(inside, ab[np.clip(rows, 0, np.shape(ab)[0] - 1), columns], 0.0)


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """scipy.linalg.solve_banded: A x = b, A[i, j] = ab[u + i - j, j] on its l lower and u
    upper diagonals (0 elsewhere) built as a dense matrix, then numpy.linalg.solve."""
    if not has_layer(ab, b):
        return scipy.linalg.solve_banded(l_and_u, ab, b, overwrite_ab=overwrite_ab, overwrite_b=overwrite_b,
                                         check_finite=check_finite)
    value = scipy.linalg.solve_banded(l_and_u, on_values(ab), on_values(b))
    nlower, nupper = l_and_u
    ab = _matrix(ab, "solve_banded")
    n = np.shape(ab)[1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    rows = nupper + i - j
    dense = _from_band(ab, rows, np.broadcast_to(j, (n, n)), (rows >= 0) & (rows <= nlower + nupper))
    return scipy_valued(np.linalg.solve(dense, stack_lists(b)), value)


def solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False, check_finite=True):
    """scipy.linalg.solveh_banded: A x = b, A symmetric positive definite from the band of
    one triangle (upper: A[i, j] = ab[u + i - j, j] for i ≤ j; lower: A[i, j] = ab[i - j, j]
    for i ≥ j) built as a dense matrix, then numpy.linalg.solve."""
    if not has_layer(ab, b):
        return scipy.linalg.solveh_banded(ab, b, overwrite_ab=overwrite_ab, overwrite_b=overwrite_b,
                                          lower=lower, check_finite=check_finite)
    value = scipy.linalg.solveh_banded(on_values(ab), on_values(b), lower=lower)
    ab = _matrix(ab, "solveh_banded")
    bands, n = np.shape(ab)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    offset = np.abs(i - j)
    if lower:  # A[i, j] = ab[i - j, j] for i ≥ j, mirrored
        rows, columns = offset, np.minimum(i, j)
    else:  # A[i, j] = ab[u + i - j, j] for i ≤ j, mirrored
        rows, columns = bands - 1 - offset, np.maximum(i, j)
    dense = _from_band(ab, rows, columns, offset < bands)
    return scipy_valued(np.linalg.solve(dense, stack_lists(b)), value)


# ---- primary matrix functions: sqrtm, logm --------------------------------------------------------------
def _power_of_two(x):
    """A power of two near x (a scale that multiplies and divides exactly); 1 for 0 or inf."""
    return 2.0 ** round(math.log2(x)) if 0 < x < math.inf else 1.0


class _Frechet:
    """The Fréchet derivatives of SciPy's f (sqrtm, logm) at a float matrix A, from the block
    identity of a primary matrix function (Higham, Functions of Matrices, (3.16))

        f([[A, E], [0, A]]) = [[f(A), L(A, E)], [0, f(A)]],

    evaluated with SciPy's f itself, E scaled by a power of two to A's size (L is linear in
    E). apply(x) is L(A, ·) on the leading (n, n) axes of a float array, each trailing column
    one 2n block, or, from n² columns on (HyperDual's ε₁ε₂ part, a full Jacobian), the n² x n²
    matrix of L, made of n² blocks once; apply(x, adjoint=True) is its transpose, L(Aᵀ, ·)
    (⟨L(A, E), G⟩ = ⟨E, L(Aᵀ, G)⟩ for a real primary function), the reverse tape's VJP.
    second() is the tensor of the second Fréchet derivative L²(A, E_p, E_q) over pairs of
    basis matrices, each the top-right block of f of the 4n matrix (Higham & Relton 2014)
    [[A, E_p, E_q, 0], [0, A, 0, E_q], [0, 0, A, E_p], [0, 0, 0, A]]."""

    def __init__(self, f, a):
        self.f, self.a, self.n = f, a, a.shape[-1]
        self.scale = _power_of_two(float(np.max(np.abs(a), initial=0.0)))
        self._matrix = self._second = None

    def _top_right(self, blocks, scale):
        n = self.n
        out = self.f(np.block(blocks))[:n, -n:]
        if np.iscomplexobj(out):
            if np.any(out.imag != 0):
                raise NoDerivative(f"scipy.linalg.{self.f.__name__}: its Fréchet derivative came out "
                                   "complex (the block identity met a complex branch)")
            out = out.real
        return out / scale

    def first(self, a, e):
        """L(a, e): the top-right block of f([[a, s e], [0, a]]), over s."""
        s = _power_of_two(self.scale / np.max(np.abs(e)))
        zero = np.zeros_like(a)
        return self._top_right([[a, s * e], [zero, a]], s)

    def matrix(self):
        """The n² x n² matrix of L(A, ·) on row-major vectorised matrices."""
        if self._matrix is None:
            n = self.n
            basis = np.eye(n * n).reshape(n * n, n, n)
            self._matrix = np.stack([self.first(self.a, e).ravel() for e in basis], axis=1)
        return self._matrix

    def apply(self, x, adjoint=False):
        n = self.n
        x = np.asarray(x, dtype=np.float64)
        columns = x.reshape(n * n, -1)
        live = np.flatnonzero(np.any(columns != 0, axis=0))
        out = np.zeros(columns.shape)
        if self._matrix is not None or len(live) >= n * n or not np.all(np.isfinite(columns[:, live])):
            m = self.matrix()
            out[:, live] = (m.T if adjoint else m) @ columns[:, live]
        else:
            a = self.a.T if adjoint else self.a
            for i in live:
                out[:, i] = self.first(a, columns[:, i].reshape(n, n)).ravel()
        return out.reshape(x.shape)

    def second(self):
        """T[i, j, a, b, c, d] = L²(A, E_ab, E_cd)[i, j] (symmetric in the pairs)."""
        if self._second is None:
            n, a, s = self.n, self.a, self.scale
            if n >= SLOW_SECOND_ORDER:
                warnings.warn(
                    f"scipy.linalg.logm's second derivatives at n = {n}: {n * n * (n * n + 1) // 2} "
                    f"logarithms of {4 * n} x {4 * n} blocks and an n^6 tensor of {n ** 6} floats, "
                    "slow from n = 6 on (its first derivatives cost one 2n block per direction)",
                    SlowPathWarning, stacklevel=2)
            zero = np.zeros_like(a)
            basis = np.eye(n * n).reshape(n * n, n, n)
            t = np.zeros((n, n, n * n, n * n))
            for p in range(n * n):
                for q in range(p, n * n):
                    e1, e2 = s * basis[p], s * basis[q]
                    t[:, :, p, q] = t[:, :, q, p] = self._top_right(
                        [[a, e1, e2, zero], [zero, a, zero, e2], [zero, zero, a, e1], [zero, zero, zero, a]], s * s)
            self._second = t.reshape((n,) * 6)
        return self._second


# From this size on, logm's second order (n⁴/2 blocks of 4n, an n⁶ tensor) warns that it is slow.
SLOW_SECOND_ORDER = 6

_FRECHET: dict = {}  # (f, shape, bytes of A) -> _Frechet: the last few matrices (a Hessian's passes)


def _frechet(f, a):
    key = (f, a.shape, a.tobytes())
    found = _FRECHET.get(key)
    if found is None:
        found = _FRECHET[key] = _Frechet(f, a)
        if len(_FRECHET) > 8:
            del _FRECHET[next(iter(_FRECHET))]
    return found


def _through_layers(x, frechet, adjoint=False):
    """L(A, x) (L(Aᵀ, x) for adjoint), a linear map with constant coefficients, on the leading
    (n, n) axes of x, through every layer: a forward number maps its value and each of its
    components (their trailing axes are directions); the reverse tape records a node whose
    VJP is the transposed map, on a cotangent of any layer (forward over reverse, reverse over
    reverse)."""
    if isinstance(x, ForwardNumber):
        return x._new(_through_layers(x.value, frechet, adjoint),
                      tuple(_through_layers(c, frechet, adjoint) for c in x.components))
    if isinstance(x, Traced):
        value, node = x.value, x.node
        return record(x.tape, _through_layers(value, frechet, adjoint), (node,),
                      lambda c: (_through_layers(c, frechet, not adjoint),))
    return frechet.apply(x, adjoint)


def _known_layers(x):
    """Whether every layer in x is a forward number or the reverse tape's (not the sparsity
    tracer, which is given a dense pattern instead)."""
    if not is_layer(x):
        return True
    if isinstance(x, ForwardNumber):
        return _known_layers(x.value) and all(_known_layers(c) for c in x.components)
    return isinstance(x, Traced) and _known_layers(x.value)


def _sqrtm_terms(delta, linear, depth):
    """X - X₀ for X² = A₀ + Δ, order by order: X₁ = L(Δ), X_k = -L(Σ_{i+j=k} X_i X_j)."""
    terms = [linear(delta)]
    for k in range(2, depth + 1):
        terms.append(-linear(sum(terms[i] @ terms[k - 2 - i] for i in range(k - 1))))
    return sum(terms[1:], terms[0])


def _logm_terms(delta, linear, depth, frechet):
    """log(A₀ + Δ) - log(A₀) = L(Δ) + ½ L²(Δ, Δ) (the layers' depth at most 2)."""
    first = linear(delta)
    if depth < 2:
        return first
    t = frechet.second()
    return first + 0.5 * np.einsum("ijab,ab->ij", np.einsum("ijabcd,cd->ijab", t, delta), delta)


_WHAT = {"sqrtm": "square root", "logm": "logarithm"}


def _matrix_function(f, name, a, options, terms, max_depth=None):
    """SciPy's f(A) (a stack: per matrix), with the derivatives of the exact function at A's
    value, f(A₀) + terms(Δ, L, depth), Δ = A - A₀ carrying every layer with value 0."""
    a = stack_lists(a)
    a0 = np.asarray(on_values(a), dtype=np.float64)
    with warnings.catch_warnings():
        if options:  # disp, blocksize: SciPy's deprecation warnings once, at the user's call
            warnings.simplefilter("ignore", DeprecationWarning)
        result = f(a0, **options)
    value = result[0] if isinstance(result, tuple) else result
    if a0.ndim < 2:
        raise NotDifferentiated(f"scipy.linalg.{name} of a {a0.ndim}-d array on dual numbers: pass a "
                                "square matrix (2-d)")
    if np.iscomplexobj(value):
        raise NoDerivative(
            f"scipy.linalg.{name}: the matrix has no real principal {_WHAT[name]} (an eigenvalue on the "
            "closed negative real axis): SciPy's value is complex, and dualad differentiates real "
            "results")
    depth = layer_depth(a)
    if max_depth is not None and depth > max_depth:
        raise NotDifferentiated(
            f"scipy.linalg.{name}: derivatives of order {depth} (the layers of this transform, nested "
            f"{depth} orders deep): dualad differentiates {name} to order {max_depth}, from the 2n and "
            "4n block identities of the first and second Fréchet derivatives (the k-th needs a 2^k n "
            "block per k-tuple of directions)")
    x = np.stack([_one_matrix(f, name, a[index], a0[index], value[index], terms, depth)
                  for index in np.ndindex(a0.shape[:-2])]).reshape(a0.shape) if a0.ndim > 2 else \
        _one_matrix(f, name, a, a0, value, terms, depth)
    return (x,) + tuple(result[1:]) if isinstance(result, tuple) else x


def _one_matrix(f, name, a, a0, value, terms, depth):
    n = a0.shape[-1]
    if n == 0:
        return a * 0.0 + value
    magnitudes = np.abs(np.linalg.eigvals(a0))
    if np.min(magnitudes) <= GAP_RTOL * np.max(magnitudes):
        raise NoDerivative(
            f"scipy.linalg.{name}: the matrix is singular (an eigenvalue at most {GAP_RTOL:g} times the "
            f"largest in magnitude), where its {_WHAT[name]} has no derivative")
    delta = a - a0
    if _known_layers(delta):
        frechet = _frechet(f, a0)
        x = terms(delta, lambda d: _through_layers(d, frechet), depth, frechet)
    else:  # the sparsity tracer: each entry may depend on every entry, every pair interact
        dense = np.ones((n * n, n * n))

        def linear(d):
            return np.reshape(dense @ np.reshape(d, (n * n,)), (n, n))
        x = linear(delta)
        x = x + linear(x * x)
    return scipy_valued(value + x, value)


def sqrtm(A, disp=_NO_VALUE, blocksize=_NO_VALUE):  # noqa: N803 - SciPy's names
    """scipy.linalg.sqrtm: SciPy's principal square root X, with the derivatives of the exact
    one at every order: X₁ = L(A₀, Δ) by the block identity with SciPy's sqrtm (a 2n block per
    direction; the reverse tape: L(A₀ᵀ, ·), its transpose), and X_k = -L(Σ_{i+j=k} X_i X_j)
    from X² = A. A singular matrix, or one without a real square root, is an error."""
    options = {key: v for key, v in (("disp", disp), ("blocksize", blocksize)) if v is not _NO_VALUE}
    if not has_layer(A):
        return scipy.linalg.sqrtm(A, **options)
    return _matrix_function(scipy.linalg.sqrtm, "sqrtm", A, options,
                            lambda delta, linear, depth, _: _sqrtm_terms(delta, linear, depth))


def logm(A, disp=_NO_VALUE):  # noqa: N803 - SciPy's name
    """scipy.linalg.logm: SciPy's principal logarithm, with the derivatives of the exact one to
    second order: L(A₀, Δ) by the block identity with SciPy's logm (a 2n block per direction;
    the reverse tape: L(A₀ᵀ, ·), its transpose) and ½ L²(A₀, Δ, Δ) from the 4n block of the
    second Fréchet derivative; third order and up, a singular matrix, or one without a real
    logarithm: an error."""
    options = {} if disp is _NO_VALUE else {"disp": disp}
    if not has_layer(A):
        return scipy.linalg.logm(A, **options)
    return _matrix_function(scipy.linalg.logm, "logm", A, options, _logm_terms, max_depth=2)


# ---- constructions: selections of the entries ---------------------------------------------------------
def _at_least(x, ndim):
    """x (lists stacked) with leading axes of length 1 up to ndim axes, as SciPy's atleast_nd."""
    x = stack_lists(x)
    if not is_layer(x):
        x = np.asarray(x)
    return np.reshape(x, (1,) * (ndim - np.ndim(x)) + np.shape(x)) if np.ndim(x) < ndim else x


def block_diag(*arrs):
    """scipy.linalg.block_diag: the blocks on the diagonal, zeros elsewhere (a 1-d block is a
    row, a scalar a 1 x 1 block; leading axes broadcast as batches): concatenations."""
    if not has_layer(arrs):
        return scipy.linalg.block_diag(*arrs)
    blocks = [_at_least(a, 2) for a in arrs]
    batch = np.broadcast_shapes(*(np.shape(x)[:-2] for x in blocks))
    blocks = [np.broadcast_to(x, batch + np.shape(x)[-2:]) for x in blocks]
    columns = sum(np.shape(x)[-1] for x in blocks)
    rows, before = [], 0
    for x in blocks:
        height, width = np.shape(x)[-2:]
        rows.append(np.concatenate([np.zeros(batch + (height, before)), x,
                                    np.zeros(batch + (height, columns - before - width))], axis=-1))
        before += width
    return np.concatenate(rows, axis=-2)


def toeplitz(c, r=None):
    """scipy.linalg.toeplitz: T[i, j] = c[i - j] for i ≥ j and r[j - i] for i < j (r = c when
    None; leading axes are batches, as SciPy's): a selection of the entries."""
    if not has_layer(c, r):
        return scipy.linalg.toeplitz(c, r)
    c = _at_least(c, 1)
    r = c if r is None else _at_least(r, 1)
    batch = np.broadcast_shapes(np.shape(c)[:-1], np.shape(r)[:-1])
    c, r = np.broadcast_to(c, batch + np.shape(c)[-1:]), np.broadcast_to(r, batch + np.shape(r)[-1:])
    rows, columns = np.shape(c)[-1], np.shape(r)[-1]
    entries = np.concatenate([c[..., ::-1], r[..., 1:]], axis=-1)
    return entries[..., rows - 1 - np.arange(rows)[:, None] + np.arange(columns)[None, :]]


def circulant(c):
    """scipy.linalg.circulant: C[i, j] = c[(i - j) mod n] (leading axes are batches, as
    SciPy's): a selection of the entries."""
    if not has_layer(c):
        return scipy.linalg.circulant(c)
    c = _at_least(c, 1)
    n = np.shape(c)[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


STAND_INS = {getattr(scipy.linalg, name): globals()[name] for name in __all__[:-1]}
