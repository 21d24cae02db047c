"""numpy.linalg on 2-D arrays of duals: det, slogdet, inv, solve, cholesky, matrix_power, eigh,
eigvalsh, norm.

Each is its textbook algorithm run on the duals themselves (LU with partial pivoting by
value, as LAPACK's getrf; Cholesky–Banachiewicz), so one implementation differentiates in
every compiled mode: forward, reverse (the tape records the algorithm), hyper-dual second
order and sparsity tracing. Where the matrix is smooth in its entries the algorithm's
derivative is the function's (pivoting only permutes rows). Conventions as the registry's
(functions/linalg.py):
  * inv/solve/slogdet of a singular matrix (a zero pivot): numpy.linalg.LinAlgError, as the
    values raise (slogdet: log|det| = -inf). det is differentiable there (its derivative is
    the adjugate): a division-free algorithm (Samuelson–Berkowitz) takes over at a zero pivot.
  * cholesky reads the lower triangle, so its derivative is that of the symmetric matrix
    built from it; a matrix that is not positive definite is a LinAlgError.
  * eigh, eigvalsh: NumPy's eigenvalues and eigenvectors (LAPACK on the values), their
    derivatives by eigh_jvp's formulas written on the duals (C = Vᵀ A_s V); exact at first
    order, so hyper-duals and forward-over-reverse raise an error naming jit=False. Repeated
    eigenvalues (GAP_RTOL) are a LinAlgError, as on the Python path.
  * norm of a matrix: 'fro' (default), 1, -1, inf, -inf; 2, -2 and 'nuc' need singular
    values, which are not compiled (jit=False).
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload, register_jitable
from .matrix import new_matrix
from ..functions.linalg import GAP_RTOL
from .numpy_overloads import cannot, dualad_templates_first, is_none, primal, with_value
from .overloads import ARRAYS, new_array, one_element_type
from .types import (ActiveType, DualMatrixType, HyperDualType, element_of, load_entry, store_element,
                    store_entry, zero_element)

LinAlgError = np.linalg.LinAlgError


@register_jitable
def _square(a):
    n = a.shape[0]
    if a.shape[1] != n:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return n


@register_jitable
def lu_factor(a):
    """(LU, permutation, sign, singular): P A = L U with L's unit diagonal implied, both in
    one matrix; the pivot of column k the entry of largest |value| on or below the diagonal
    (the first of ties, as getrf); singular when a pivot's value is 0."""
    n = _square(a)
    lu = new_matrix(a, n, n)
    zero = zero_element(a)
    for i in range(n):
        for j in range(n):
            store_entry(lu, i, j, zero + a[i, j])
    perm = np.arange(n)
    sign = 1.0
    singular = False
    for k in range(n):
        p, best = k, abs(primal(load_entry(lu, k, k)))
        for i in range(k + 1, n):
            size = abs(primal(load_entry(lu, i, k)))
            if size > best:
                p, best = i, size
        if best == 0.0 or np.isnan(best):
            singular = True
            continue
        if p != k:
            for j in range(n):
                held = load_entry(lu, k, j)
                store_entry(lu, k, j, load_entry(lu, p, j))
                store_entry(lu, p, j, held)
            perm[k], perm[p] = perm[p], perm[k]
            sign = -sign
        pivot = load_entry(lu, k, k)
        for i in range(k + 1, n):
            factor = load_entry(lu, i, k) / pivot
            store_entry(lu, i, k, factor)
            for j in range(k + 1, n):
                store_entry(lu, i, j, load_entry(lu, i, j) - factor * load_entry(lu, k, j))
    return lu, perm, sign, singular


@register_jitable
def _lu_solve(lu, perm, b):
    """x with A x = b for P A = L U, b a 1-D array (of duals or floats)."""
    n = len(perm)
    x = new_array(lu, n)
    zero = zero_element(lu)
    for i in range(n):  # L y = P b
        total = zero + b[perm[i]]
        for j in range(i):
            total = total - load_entry(lu, i, j) * x[j]
        store_element(x, i, total)
    for i in range(n - 1, -1, -1):  # U x = y
        total = x[i]
        for j in range(i + 1, n):
            total = total - load_entry(lu, i, j) * x[j]
        store_element(x, i, total / load_entry(lu, i, i))
    return x


@register_jitable
def division_free_det(a):
    """det A by the Samuelson–Berkowitz algorithm: no division, so exact derivatives (of any
    order) at singular matrices too, in O(n⁴). The characteristic polynomial det(λI − A) is
    built from the trailing submatrices A_k = A[k:, k:]: its coefficients are
    T_0 T_1 ⋯ T_{n−1}·(1), T_k the lower-triangular Toeplitz matrix with first column
    (1, −a_kk, −R C, −R A' C, −R A'² C, ...), R = A[k, k+1:], C = A[k+1:, k], A' = A_{k+1};
    det A = (−1)ⁿ times its constant coefficient."""
    n = _square(a)
    zero = zero_element(a)
    poly = new_array(a, n + 1)  # coefficients of the trailing block's polynomial, highest first
    store_element(poly, 0, zero + 1.0)
    column = new_array(a, n + 1)  # first column of T_k
    vector = new_array(a, n)
    product = new_array(a, n)
    length = 1  # entries of poly in use
    for k in range(n - 1, -1, -1):
        m = n - k  # the size of A_k
        store_element(column, 0, zero + 1.0)
        store_element(column, 1, -load_entry(a, k, k))
        for i in range(m - 1):  # vector = C
            store_element(vector, i, load_entry(a, k + 1 + i, k))
        for j in range(m - 1):  # column[j + 2] = −R A'^j C
            total = zero + 0.0
            for i in range(m - 1):
                total = total + load_entry(a, k, k + 1 + i) * vector[i]
            store_element(column, j + 2, -total)
            for i in range(m - 1):  # vector = A' vector
                entry = zero + 0.0
                for l in range(m - 1):  # noqa: E741
                    entry = entry + load_entry(a, k + 1 + i, k + 1 + l) * vector[l]
                store_element(product, i, entry)
            for i in range(m - 1):
                store_element(vector, i, product[i])
        for i in range(length, -1, -1):  # poly = T_k poly (lengths m -> m + 1), in place from the end
            total = zero + 0.0
            for j in range(min(i, length - 1) + 1):
                total = total + column[i - j] * poly[j]
            store_element(poly, i, total)
        length += 1
    return poly[n] if n % 2 == 0 else -poly[n]


@overload(np.linalg.det)
def _det(a):
    if not isinstance(a, DualMatrixType):
        return None

    def det(a):
        lu, perm, sign, singular = lu_factor(a)
        if singular:  # LU's derivative divides by the zero pivot; det's is the adjugate
            return division_free_det(a)
        out = zero_element(a) + sign
        for k in range(len(perm)):
            out = out * load_entry(lu, k, k)
        return out
    return det


@overload(np.linalg.slogdet)
def _slogdet(a):
    """(sign, log|det A|): the sign a float (it has no derivative)."""
    if not isinstance(a, DualMatrixType):
        return None

    def slogdet(a):
        lu, perm, sign, singular = lu_factor(a)
        if singular:
            raise LinAlgError("numpy.linalg.slogdet: the matrix is singular (log|det| = -inf), "
                              "where log|det| has no derivative")
        log_abs = zero_element(a) + 0.0
        for k in range(len(perm)):
            pivot = load_entry(lu, k, k)
            if primal(pivot) < 0:
                sign = -sign
            log_abs = log_abs + np.log(abs(pivot))
        return sign, log_abs
    return slogdet


@overload(np.linalg.inv)
def _inv(a):
    if not isinstance(a, DualMatrixType):
        return None

    def inv(a):
        lu, perm, sign, singular = lu_factor(a)
        if singular:
            raise LinAlgError("Singular matrix")
        n = len(perm)
        out = new_matrix(a, n, n)
        unit = np.zeros(n)
        for j in range(n):
            unit[:] = 0.0
            unit[j] = 1.0
            column = _lu_solve(lu, perm, unit)
            for i in range(n):
                store_entry(out, i, j, column[i])
        return out
    return inv


@overload(np.linalg.solve)
def _solve(a, b):
    """x = A⁻¹ b for b a vector (NumPy 2: b is a vector iff it is 1-D) or a matrix."""
    if not (isinstance(a, DualMatrixType) or (isinstance(a, types.Array) and a.ndim == 2 and
                                              isinstance(b, ARRAYS + (DualMatrixType,)))):
        return None
    one_element_type([element_of(t) for t in (a, b) if isinstance(t, ARRAYS + (DualMatrixType,))],
                     "numpy.linalg.solve")
    like_b = isinstance(b, ARRAYS + (DualMatrixType,))
    start = _as_dual_matrix_of_b if like_b and not isinstance(a, DualMatrixType) else _itself
    is_vector_b = isinstance(b, ARRAYS) or (isinstance(b, types.Array) and b.ndim == 1)
    if not (is_vector_b or isinstance(b, DualMatrixType) or (isinstance(b, types.Array) and b.ndim == 2)):
        raise TypingError(f"numpy.linalg.solve of duals takes b 1-D or 2-D, not {b}")

    if is_vector_b:
        def vector(a, b):
            lu, perm = _factor_for(start(a, b), b)
            return _lu_solve(lu, perm, b)
        return vector

    def columns(a, b):
        lu, perm = _factor_for(start(a, b), b)
        n, k = b.shape
        out = new_matrix(lu, n, k)
        for j in range(k):
            column = _lu_solve(lu, perm, b[:, j])
            for i in range(n):
                store_entry(out, i, j, column[i])
        return out
    return columns


_itself = register_jitable(lambda a, b: a)


@register_jitable
def _factor_for(a, b):
    lu, perm, sign, singular = lu_factor(a)
    if singular:
        raise LinAlgError("Singular matrix")
    if b.shape[0] != len(perm):
        raise ValueError("numpy.linalg.solve: b's leading dimension does not match a")
    return lu, perm


@register_jitable
def _as_dual_matrix_of_b(a, b):
    """A float a as constants of b's element type (so the factors are duals of b's kind)."""
    n, k = a.shape
    out = new_matrix(b, n, k)
    zero = zero_element(b)
    for i in range(n):
        for j in range(k):
            store_entry(out, i, j, zero + a[i, j])
    return out


@overload(np.linalg.cholesky)
def _cholesky(a):
    """L with A = L Lᵀ, read from A's lower triangle (Cholesky–Banachiewicz)."""
    if not isinstance(a, DualMatrixType):
        return None

    def cholesky(a):
        n = _square(a)
        out = new_matrix(a, n, n)
        zero = zero_element(a)
        for i in range(n):
            for j in range(n):
                store_entry(out, i, j, zero)
        for j in range(n):
            total = load_entry(a, j, j)
            for k in range(j):
                total = total - load_entry(out, j, k) * load_entry(out, j, k)
            if not primal(total) > 0.0:
                raise LinAlgError("Matrix is not positive definite")
            diagonal = np.sqrt(total)
            store_entry(out, j, j, diagonal)
            for i in range(j + 1, n):
                total = load_entry(a, i, j)
                for k in range(j):
                    total = total - load_entry(out, i, k) * load_entry(out, j, k)
                store_entry(out, i, j, total / diagonal)
        return out
    return cholesky


@overload(np.linalg.matrix_power)
def _matrix_power(a, n):
    """functions/linalg.matrix_power's algorithm (NumPy's): inverse for n < 0, binary powers."""
    if not isinstance(a, DualMatrixType):
        return None
    if not isinstance(n, types.Integer):
        raise TypingError("numpy.linalg.matrix_power: exponent must be an integer")

    def matrix_power(a, n):
        size = _square(a)
        if n == 0:
            return zero_element(a) + np.eye(size)
        base = np.linalg.inv(a) if n < 0 else a
        n = abs(n)
        if n == 1:
            return base
        if n == 2:
            return base @ base
        if n == 3:
            return (base @ base) @ base
        z = base
        result = base
        first = True
        squared = False
        while n > 0:
            if squared:
                z = z @ z
            squared = True
            n, bit = divmod(n, 2)
            if bit:
                result = z if first else result @ z
                first = False
        return result
    return matrix_power


# ---- the symmetric eigenproblem, to first order ----------------------------------------------------
def _first_order(element, name):
    """eigh's derivative below is exact at first order only: `cannot` for hyper-duals and the
    tape in Duals (forward-over-reverse), whose second derivatives it would get wrong."""
    if isinstance(element, HyperDualType) or (isinstance(element, ActiveType) and element.width):
        cannot(f"numpy.linalg.{name} in compiled code has first derivatives only (its second "
               "derivatives are the Python path's): differentiate it once here, or pass jit=False "
               "for Hessians and hvp")


@register_jitable
def _symmetric(a, lower):
    """The symmetric matrix NumPy reads from a's lower (or upper) triangle, as duals."""
    n = _square(a)
    out = new_matrix(a, n, n)
    for i in range(n):
        for j in range(n):
            store_entry(out, i, j, load_entry(a, max(i, j), min(i, j)) if lower
                        else load_entry(a, min(i, j), max(i, j)))
    return out


_REPEATED = (f": repeated eigenvalues (within {GAP_RTOL:g} of the largest in magnitude); there the "
             "individual eigenvalues and their vectors have no derivative. Differentiate a function "
             "of the whole matrix instead (np.trace, np.linalg.det or slogdet), or perturb the "
             "matrix so that its eigenvalues separate.")


@register_jitable
def _require_distinct(w, name):
    """functions/linalg._require_distinct: eigenvalues within GAP_RTOL of each other (relative
    to the largest in magnitude) are repeated, where they have no derivative."""
    if len(w) == 0:
        return
    tol = GAP_RTOL * np.max(np.abs(w))
    for i in range(len(w) - 1):
        if abs(w[i + 1] - w[i]) <= tol:
            raise LinAlgError(name + _REPEATED)


@register_jitable
def _eigen(a, lower, name):
    """(w, V, C): NumPy's eigenvalues and eigenvectors of the symmetric matrix A_s read from one
    triangle (floats), and C = Vᵀ A_s V in duals, whose tangent is Vᵀ dA_s V: dw_i = C_ii,
    dv_i = Σ_{j≠i} v_j C_ji / (w_i − w_j) (eigh_jvp's formulas)."""
    s = _symmetric(a, lower)
    w, v = np.linalg.eigh(np.ascontiguousarray(s.values))
    _require_distinct(w, name)
    return w, v, v.T @ (s @ v)


@overload(np.linalg.eigvalsh)
def _eigvalsh(a, UPLO="L"):  # noqa: N803
    if not isinstance(a, DualMatrixType):
        return None
    _first_order(a.element, "eigvalsh")

    def eigvalsh(a, UPLO="L"):  # noqa: N803
        w, v, c = _eigen(a, UPLO == "L", "numpy.linalg.eigvalsh")
        out = new_array(a, len(w))
        for i in range(len(w)):
            store_element(out, i, with_value(load_entry(c, i, i), w[i]))
        return out
    return eigvalsh


@overload(np.linalg.eigh)
def _eigh(a, UPLO="L"):  # noqa: N803
    if not isinstance(a, DualMatrixType):
        return None
    _first_order(a.element, "eigh")

    def eigh(a, UPLO="L"):  # noqa: N803
        w, v, c = _eigen(a, UPLO == "L", "numpy.linalg.eigh")
        n = len(w)
        values = new_array(a, n)
        vectors = new_matrix(a, n, n)
        zero = zero_element(a)
        for i in range(n):
            store_element(values, i, with_value(load_entry(c, i, i), w[i]))
            for k in range(n):
                entry = zero + v[k, i]
                for j in range(n):
                    if j != i:
                        entry = entry + v[k, j] * (load_entry(c, j, i) / (w[i] - w[j]))
                store_entry(vectors, k, i, with_value(entry, v[k, i]))
        return values, vectors
    return eigh


# ---- norms of matrices --------------------------------------------------------------------------
@register_jitable
def _largest_line_sum(a, by_columns, largest):
    """max (or min) over columns (or rows) of Σ|a_ij|, ties as np.max (shared derivative)."""
    t = a.T if by_columns else a
    rows, cols = t.shape
    sums = new_array(a, rows)
    for i in range(rows):
        total = zero_element(a) + 0.0
        for j in range(cols):
            total = total + abs(load_entry(t, i, j))
        store_element(sums, i, total)
    return np.max(sums) if largest else np.min(sums)


def _matrix_norm(x, ord):  # noqa: A002  (NumPy's name)
    if is_none(ord):
        return lambda x, ord=None: _frobenius(x)
    if isinstance(ord, types.UnicodeType) or isinstance(ord, types.StringLiteral):
        def by_name(x, ord=None):
            if ord == "fro" or ord == "f":
                return _frobenius(x)
            raise ValueError("numpy.linalg.norm of a 2-D array of duals in compiled code: ord "
                             "'nuc' needs singular values, which are not compiled; pass jit=False")
        return by_name
    if isinstance(ord, (types.Integer, types.Float)):
        def by_order(x, ord=None):
            if ord == 1 or ord == -1:
                return _largest_line_sum(x, True, ord == 1)
            if ord == np.inf or ord == -np.inf:
                return _largest_line_sum(x, False, ord == np.inf)
            raise ValueError("numpy.linalg.norm of a 2-D array of duals in compiled code takes ord "
                             "None, 'fro', 1, -1, inf or -inf (2 and -2 need singular values, which "
                             "are not compiled; pass jit=False)")
        return by_order
    raise TypingError(f"numpy.linalg.norm of a matrix of duals takes ord None, 'fro' or a number, not {ord}")


@register_jitable
def _frobenius(x):
    """sqrt(Σ x_ij²) (reductions' norm of the flattened matrix)."""
    return np.linalg.norm(np.ravel(x))


@overload(np.linalg.norm)
def _norm(x, ord=None):  # noqa: A002
    if isinstance(x, DualMatrixType):
        return _matrix_norm(x, ord)
    return None


dualad_templates_first((np.linalg.det, np.linalg.slogdet, np.linalg.inv, np.linalg.solve,
                        np.linalg.cholesky, np.linalg.matrix_power, np.linalg.eigh,
                        np.linalg.eigvalsh, np.linalg.norm))
