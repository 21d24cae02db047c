"""numpy.linalg on 2-D arrays of duals: det, slogdet, inv, solve, cholesky, matrix_power, eigh,
eigvalsh, qr, svd, pinv, norm.

Most are their textbook algorithm run on the duals themselves (LU with partial pivoting by
value, as LAPACK's getrf; Cholesky–Banachiewicz; pinv by the normal equations), so one
implementation differentiates in every compiled mode: forward, reverse (the tape records
the algorithm), hyper-dual second order and sparsity tracing. Where the matrix is smooth in
its entries the algorithm's derivative is the function's (pivoting only permutes rows).
Conventions as the registry's (functions/linalg.py):
  * inv/solve/slogdet of a singular matrix (a zero pivot): numpy.linalg.LinAlgError, as the
    values raise (slogdet: log|det| = -inf). det is differentiable there (its derivative is
    the adjugate): a division-free algorithm (Samuelson–Berkowitz) takes over at a zero pivot.
  * cholesky reads the lower triangle, so its derivative is that of the symmetric matrix
    built from it; a matrix that is not positive definite is a LinAlgError.
  * eigh, eigvalsh, qr, svd (thin): NumPy's factors (LAPACK on the values), their derivatives by the
    registry's JVP formulas written on the duals (eigh: C = Vᵀ A_s V); exact at first order,
    so hyper-duals and forward-over-reverse raise an error naming jit=False. Repeated
    eigenvalues or singular values, zero singular values and dependent leading columns
    (GAP_RTOL) are a LinAlgError, as on the Python path.
  * norm of a matrix: 'fro' (default), 1, -1, inf, -inf; 2, -2 and 'nuc' by the singular
    values (first order).
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload, register_jitable
from .matrix import new_matrix
from ..functions.linalg import GAP_RTOL
from .numpy_overloads import cannot, dualad_templates_first, is_none, primal, with_value
from .overloads import ARRAYS, new_array, one_element_type
from .types import (ActiveType, DualMatrixType, HyperDualType, compiled_only, element_of, load_entry,
                    store_element, store_entry, zero_element)

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
    lu = as_duals_of(a, a)
    perm = np.arange(n)
    sign = 1.0
    singular = False
    for k in range(n):
        p, best = k, abs(primal(load_entry(lu, k, k)))
        for i in range(k + 1, n):
            size = abs(primal(load_entry(lu, i, k)))
            if size > best:
                p, best = i, size
        if best == 0.0:  # (a nan column goes on: nan spreads as in LAPACK)
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
    # singular as NumPy finds it too: LAPACK's own pivots of the values (its rounding can
    # make a pivot exactly 0 where this elimination's does not, and the reverse)
    # (numba's LAPACK refuses non-finite values: there the results are nan anyway, see finite)
    if not singular and np.all(np.isfinite(a.values)):
        singular = np.linalg.slogdet(np.ascontiguousarray(a.values))[0] == 0.0
    return lu, perm, sign, singular


finite = compiled_only("numpy_linalg", "finite")  # (a): whether every entry's value is finite


@overload(finite)
def _finite(a):
    """Where an entry is not finite, NumPy's values are nan or inf and the Python path's
    derivatives (formulas through inv(A)) nan throughout, while the elimination here keeps
    finite partials for the entries nan never meets: the results are multiplied by nan."""
    if isinstance(a, DualMatrixType):
        return lambda a: np.all(np.isfinite(a.values))
    return lambda a: np.all(np.isfinite(a))


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
        if singular and finite(a):  # LU's derivative divides by the zero pivot; det's is the adjugate
            return division_free_det(a)
        out = zero_element(a) + sign
        for k in range(len(perm)):
            out = out * load_entry(lu, k, k)
        return out if finite(a) else out * np.nan
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
        return sign, (log_abs if finite(a) else log_abs * np.nan)
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
        return out if finite(a) else out * np.nan
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
    start = as_duals_of if like_b and not isinstance(a, DualMatrixType) else _itself
    is_vector_b = isinstance(b, ARRAYS) or (isinstance(b, types.Array) and b.ndim == 1)
    if not (is_vector_b or isinstance(b, DualMatrixType) or (isinstance(b, types.Array) and b.ndim == 2)):
        raise TypingError(f"numpy.linalg.solve of duals takes b 1-D or 2-D, not {b}")

    if is_vector_b:
        def vector(a, b):
            lu, perm = _factor_for(start(a, b), b)
            x = _lu_solve(lu, perm, b)
            return x if finite(a) else x * np.nan
        return vector

    def columns(a, b):
        lu, perm = _factor_for(start(a, b), b)
        if not finite(a):
            return _solved_columns(lu, perm, b) * np.nan
        return _solved_columns(lu, perm, b)
    return columns


@register_jitable
def _solved_columns(lu, perm, b):
    n, k = b.shape
    out = new_matrix(lu, n, k)
    for j in range(k):
        column = _lu_solve(lu, perm, b[:, j])
        for i in range(n):
            store_entry(out, i, j, column[i])
    return out


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
def as_duals_of(a, like):
    """A new matrix of a's entries as duals of like's element type (a float a: constants)."""
    n, k = a.shape
    out = new_matrix(like, n, k)
    zero = zero_element(like)
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
    """eigh's (qr's, svd's) derivative is exact at first order only: `cannot` for hyper-duals
    and the tape in Duals (forward-over-reverse), whose second derivatives it would get wrong."""
    if _second_order(element):
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


@register_jitable
def _is_lower(UPLO):  # noqa: N803  (NumPy's name)
    """NumPy's reading of UPLO: 'L' or 'U' in either case."""
    side = UPLO.upper()
    if side != "L" and side != "U":
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return side == "L"


@overload(np.linalg.eigvalsh)
def _eigvalsh(a, UPLO="L"):  # noqa: N803
    if not isinstance(a, DualMatrixType):
        return None
    _first_order(a.element, "eigvalsh")

    def eigvalsh(a, UPLO="L"):  # noqa: N803
        w, v, c = _eigen(a, _is_lower(UPLO), "numpy.linalg.eigvalsh")
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
        w, v, c = _eigen(a, _is_lower(UPLO), "numpy.linalg.eigh")
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


@overload(np.linalg.qr)
def _qr(a):
    """(Q, R), mode 'reduced': NumPy's factors (LAPACK on the values) and qr_jvp's formulas on
    the duals: X = A₁ R₁⁻¹, C = QᵀX, Ω = tril(C, −1) − tril(C, −1)ᵀ, so that Q + Q(Ω − C) + X
    and (C − Ω) R₁ have the values Q and R₁ and the tangents dQ and dR₁; for M < N,
    R₂ = QᵀA₂ in duals. First order only; leading columns dependent: LinAlgError."""
    if not isinstance(a, DualMatrixType):
        return None
    _first_order(a.element, "qr")

    def qr(a):
        m, n = a.shape
        k = min(m, n)
        q, r = np.linalg.qr(np.ascontiguousarray(a.values))
        diagonal = np.abs(np.diag(r[:, :k]))
        if k and np.any(diagonal <= GAP_RTOL * np.max(diagonal)):
            raise LinAlgError(_DEPENDENT_COLUMNS)
        x = a[:, :k] @ np.linalg.inv(np.ascontiguousarray(r[:, :k]))
        c = q.T @ x
        low = np.tril(c, -1)
        omega = low - low.T
        q_out = (q @ (omega - c) + x) + q
        r_out = new_matrix(a, k, n)
        r_1 = (c - omega) @ np.ascontiguousarray(r[:, :k])
        for i in range(k):
            for j in range(k):
                store_entry(r_out, i, j, with_value(load_entry(r_1, i, j), r[i, j]) if j >= i
                            else zero_element(a))
        if n > m:
            r_2 = q_out.T @ a[:, m:]
            for i in range(k):
                for j in range(m, n):
                    store_entry(r_out, i, j, with_value(load_entry(r_2, i, j - m), r[i, j]))
        for i in range(m):
            for j in range(k):
                store_entry(q_out, i, j, with_value(load_entry(q_out, i, j), q[i, j]))
        return q_out, r_out
    return qr


@register_jitable
def _singular_triple(a):
    """(U, s, Vᵀ) of NumPy's thin SVD of a's values, checked as functions/linalg: distinct and
    nonzero singular values (GAP_RTOL of the largest)."""
    u, s, vt = np.linalg.svd(np.ascontiguousarray(a.values), full_matrices=False)
    if len(s):
        tol = GAP_RTOL * np.max(s)
        for i in range(len(s)):
            if s[i] <= tol or (i + 1 < len(s) and s[i] - s[i + 1] <= tol):
                raise LinAlgError(_SINGULAR_VALUES)
    return u, s, vt


@register_jitable
def singular_values(a):
    """The singular values in duals: diag(Uᵀ A V) (ds_i = u_iᵀ dA v_i), NumPy's values."""
    u, s, vt = _singular_triple(a)
    p = u.T @ (a @ vt.T)
    out = new_array(a, len(s))
    for i in range(len(s)):
        store_element(out, i, with_value(load_entry(p, i, i), s[i]))
    return out


@overload(np.linalg.svd)
def _svd(a, full_matrices=True):
    """(U, s, Vᵀ), thin: svd_jvp's formulas on the duals with P = Uᵀ A V (value S):
    U + U(F ∘ (P S + S Pᵀ)) [+ (A V − U P) S⁻¹ when tall], V likewise with Pᵀ, F_ij =
    1/(s_j² − s_i²) off the diagonal; the values NumPy's. First order only."""
    if not isinstance(a, DualMatrixType):
        return None
    _first_order(a.element, "svd")

    def svd(a, full_matrices=True):
        m, n = a.shape
        if full_matrices and m != n:
            raise ValueError("numpy.linalg.svd with full_matrices=True of a non-square matrix: the "
                             "extra singular vectors have no derivative; pass full_matrices=False")
        u, s, vt = _singular_triple(a)
        k = len(s)
        v = np.ascontiguousarray(vt.T)
        av = a @ v
        p = u.T @ av
        zero = zero_element(a)
        mixed_u = new_matrix(a, k, k)
        mixed_v = new_matrix(a, k, k)
        for i in range(k):
            for j in range(k):
                if i == j:
                    store_entry(mixed_u, i, j, zero)
                    store_entry(mixed_v, i, j, zero)
                else:
                    f = 1.0 / (s[j] * s[j] - s[i] * s[i])
                    store_entry(mixed_u, i, j, f * (load_entry(p, i, j) * s[j] + s[i] * load_entry(p, j, i)))
                    store_entry(mixed_v, i, j, f * (s[i] * load_entry(p, i, j) + load_entry(p, j, i) * s[j]))
        u_out = u @ mixed_u + u
        v_out = v @ mixed_v + v
        if m > k:  # the part of dU outside span(U)
            u_out = u_out + (av - u @ p) / s
        if n > k:
            v_out = v_out + ((a.T @ u) - v @ p.T) / s
        values = new_array(a, k)
        for i in range(k):
            store_element(values, i, with_value(load_entry(p, i, i), s[i]))
        for i in range(m):
            for j in range(k):
                store_entry(u_out, i, j, with_value(load_entry(u_out, i, j), u[i, j]))
        for i in range(n):
            for j in range(k):
                store_entry(v_out, i, j, with_value(load_entry(v_out, i, j), v[i, j]))
        return u_out, values, v_out.T
    return svd


_SINGULAR_VALUES = (f"numpy.linalg.svd: repeated or zero singular values (within {GAP_RTOL:g} of the "
                    "largest); there the individual singular values and their vectors have no "
                    "derivative. (numpy.linalg.norm with ord=2, -2 or 'nuc' uses numpy.linalg.svd "
                    "too.) Differentiate np.sum(a * a) for the sum of squared singular values, or "
                    "perturb the matrix so that its singular values separate and are not 0.")


@overload(np.linalg.pinv)
def _pinv(a, rcond=1e-15):
    """A⁺ at full rank (functions/linalg.pinv_jvp's convention, rank by NumPy's rcond cutoff)
    from the normal equations run on the duals, (AᵀA)⁻¹Aᵀ (tall) or Aᵀ(AAᵀ)⁻¹ (wide), so every
    order differentiates; NumPy's values (SVD-based)."""
    if not isinstance(a, DualMatrixType):
        return None

    def pinv(a, rcond=1e-15):
        m, n = a.shape
        values = np.ascontiguousarray(a.values)
        s = np.linalg.svd(values, full_matrices=False)[1]
        if len(s) and np.sum(s > rcond * np.max(s)) < min(m, n):
            raise LinAlgError(_RANK_DEFICIENT)
        out = np.linalg.solve(a.T @ a, a.T) if m >= n else np.linalg.solve(a @ a.T, a).T
        exact = np.linalg.pinv(values, rcond)
        for i in range(n):
            for j in range(m):
                store_entry(out, i, j, with_value(load_entry(out, i, j), exact[i, j]))
        return out
    return pinv


_RANK_DEFICIENT = ("numpy.linalg.pinv: the matrix has rank < min(M, N) (singular values at most "
                   "rcond times the largest count as 0); the pseudo-inverse jumps where the rank "
                   "changes, and dualad differentiates it at full rank only: remove dependent "
                   "rows/columns or regularise (ridge)")


_DEPENDENT_COLUMNS = (f"numpy.linalg.qr: the leading min(M, N) columns are linearly dependent (a "
                      f"diagonal entry of R is at most {GAP_RTOL:g} times the largest), where Q has "
                      "no derivative; remove the dependent columns or regularise the matrix")


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
    # ord 2, -2, 'nuc' take singular values, compiled to first order: hyper-duals get the
    # error of by_singular_values at run time for these orders only
    spectral = _by_singular_values if not _second_order(x.element) else _no_singular_values
    if is_none(ord):
        return lambda x, ord=None: _frobenius(x)
    if isinstance(ord, types.UnicodeType) or isinstance(ord, types.StringLiteral):
        def by_name(x, ord=None):
            if ord == "fro" or ord == "f":
                return _frobenius(x)
            if ord == "nuc":
                return spectral(x, 0)
            raise ValueError("Invalid norm order for matrices.")
        return by_name
    if isinstance(ord, (types.Integer, types.Float)):
        def by_order(x, ord=None):
            if ord == 1 or ord == -1:
                return _largest_line_sum(x, True, ord == 1)
            if ord == np.inf or ord == -np.inf:
                return _largest_line_sum(x, False, ord == np.inf)
            if ord == 2 or ord == -2:
                return spectral(x, ord)
            raise ValueError("Invalid norm order for matrices.")
        return by_order
    raise TypingError(f"numpy.linalg.norm of a matrix of duals takes ord None, 'fro' or a number, not {ord}")


def _second_order(element):
    return isinstance(element, HyperDualType) or (isinstance(element, ActiveType) and element.width)


@register_jitable
def _by_singular_values(x, which):
    """functions/linalg.norm: max (2), min (-2) or sum (0: 'nuc') of the singular values."""
    s = singular_values(x)
    return np.max(s) if which == 2 else (np.min(s) if which == -2 else np.sum(s))


@register_jitable
def _no_singular_values(x, which):
    if which == which:  # always; numba would drop a return after a bare raise (the type)
        raise ValueError("numpy.linalg.norm with ord 2, -2 or 'nuc' in compiled code has first "
                         "derivatives only (singular values): pass jit=False for Hessians and hvp")
    return _frobenius(x)


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
                        np.linalg.cholesky, np.linalg.matrix_power, np.linalg.eigh, np.linalg.qr,
                        np.linalg.svd, np.linalg.pinv,
                        np.linalg.eigvalsh, np.linalg.norm))
