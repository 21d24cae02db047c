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
  * eigh, eigvalsh, qr, svd (thin): NumPy's factors (LAPACK on the values), refined on the
    duals so that their derivatives are exact to every compiled order: Jacobi rotations
    diagonalise Vᵀ A_s V (eigh) and VᵀAᵀAV (svd), whose values are already diagonal; qr
    re-orthonormalises A R⁻¹ by Cholesky. At first order these are the registry's JVP
    formulas. Repeated eigenvalues or singular values, zero singular values and dependent
    leading columns (GAP_RTOL) are a LinAlgError, as on the Python path.
  * norm of a matrix: 'fro' (default), 1, -1, inf, -inf; 2, -2 and 'nuc' by the singular
    values.
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload, register_jitable
from .matrix import new_matrix
from ..functions.linalg import GAP_RTOL
from .numpy_overloads import dualad_templates_first, is_none, nan_derivative, primal, with_value
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


# ---- eigh, svd, qr: NumPy's factors, refined on the duals to every order -------------------------
def _sweeps(element):
    """Jacobi sweeps that make a symmetric matrix of duals with diagonal value diagonal to the
    duals' order: off-diagonal entries of order ε are of order ε² after one sweep, ε⁴ after
    two (quadratic convergence), so one sweep for first derivatives, two for second."""
    return 2 if _second_order(element) else 1


@register_jitable
def _rotate(m, p, q, cos, sin, rows):
    """M ← M J (columns p and q) or Jᵀ M (rows p and q), J the rotation with J_pp = J_qq = cos,
    J_pq = sin, J_qp = −sin."""
    for k in range(m.shape[0] if not rows else m.shape[1]):
        if rows:
            x, y = load_entry(m, p, k), load_entry(m, q, k)
            store_entry(m, p, k, cos * x - sin * y)
            store_entry(m, q, k, sin * x + cos * y)
        else:
            x, y = load_entry(m, k, p), load_entry(m, k, q)
            store_entry(m, k, p, cos * x - sin * y)
            store_entry(m, k, q, sin * x + cos * y)


@register_jitable
def _jacobi(c, sweeps):
    """(d, W): cyclic Jacobi rotations on the symmetric matrix of duals c, whose value is
    diagonal with distinct entries, so that Wᵀ c W = diag(d) to the duals' order (W's value is
    I). A rotation zeroes c_pq with tan θ = 2c_pq / (δ + sign(δ)√(δ² + 4c_pq²)), δ = c_qq − c_pp:
    Golub & Van Loan's sym.schur2 written without dividing by c_pq, whose value is 0."""
    n = c.shape[0]
    c = c.copy()
    w = zero_element(c) + np.eye(n)
    for _ in range(sweeps):
        for p in range(n - 1):
            for q in range(p + 1, n):
                c_pq = load_entry(c, p, q)
                gap = load_entry(c, q, q) - load_entry(c, p, p)
                side = 1.0 if primal(gap) >= 0.0 else -1.0
                tan = 2.0 * c_pq / (gap + side * np.sqrt(gap * gap + 4.0 * c_pq * c_pq))
                cos = 1.0 / np.sqrt(1.0 + tan * tan)
                sin = tan * cos
                _rotate(c, p, q, cos, sin, False)
                _rotate(c, p, q, cos, sin, True)
                _rotate(w, p, q, cos, sin, False)
    d = new_array(c, n)
    for i in range(n):
        store_element(d, i, load_entry(c, i, i))
    return d, w


@register_jitable
def _on_values(m, values):
    """m moved entry by entry onto `values` (exact ones: zeros where the value is 0 in exact
    arithmetic), its derivatives kept, so that no rounding of the values mixes into them."""
    rows, cols = m.shape
    for i in range(rows):
        for j in range(cols):
            store_entry(m, i, j, with_value(load_entry(m, i, j), values[i, j]))
    return m


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
def _eigen(a, lower, name, sweeps):
    """(eigenvalues, eigenvectors) in duals of the symmetric matrix A_s read from one triangle,
    the values NumPy's (w, V): C = Vᵀ A_s V has the value diag(w), and Jacobi rotations W
    diagonalise it on the duals, so A_s = (VW) diag(d) (VW)ᵀ to the duals' order; at first order
    dw_i = dC_ii and dv_i = Σ_{j≠i} v_j dC_ji / (w_i − w_j), eigh_jvp's formulas."""
    s = _symmetric(a, lower)
    w, v = np.linalg.eigh(np.ascontiguousarray(s.values))
    _require_distinct(w, name)
    d, rotation = _jacobi(_on_values(v.T @ (s @ v), np.diag(w)), sweeps)
    vectors = _on_values(v @ rotation, v)
    for i in range(len(w)):
        store_element(d, i, with_value(d[i], w[i]))
    return d, vectors


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
    sweeps = _sweeps(a.element)
    return lambda a, UPLO="L": _eigen(a, _is_lower(UPLO), "numpy.linalg.eigvalsh", sweeps)[0]  # noqa: N803


@overload(np.linalg.eigh)
def _eigh(a, UPLO="L"):  # noqa: N803
    if not isinstance(a, DualMatrixType):
        return None
    sweeps = _sweeps(a.element)
    return lambda a, UPLO="L": _eigen(a, _is_lower(UPLO), "numpy.linalg.eigh", sweeps)  # noqa: N803


@register_jitable
def _orthonormal_factor(x):
    """(Q, R̃), X = Q R̃ with R̃ upper triangular, positive diagonal, for X whose columns are
    nearly orthonormal: Cholesky of XᵀX ≈ I (well conditioned here) and Q = X R̃⁻¹."""
    lower = np.linalg.cholesky(x.T @ x)
    return np.linalg.solve(lower, x.T).T, lower.T


@register_jitable
def _refined_qr(a, q, r):
    """(Q, R) of A in duals from NumPy's factors q, r of its values (leading columns independent):
    X = A₁ R₁⁻¹ has the value Q, X = Q̃ R̃ by Cholesky of XᵀX ≈ I, so Q = Q̃ and R₁ = R̃ R₁
    (R̃ has the value I; R's signs stay LAPACK's); for M < N, R₂ = QᵀA₂."""
    m, n = a.shape
    k = min(m, n)
    r_1 = np.ascontiguousarray(r[:, :k])
    x = _on_values(a[:, :k] @ np.linalg.inv(r_1), q)
    q_out, r_tilde = _orthonormal_factor(x)
    r_11 = r_tilde @ r_1
    r_out = new_matrix(a, k, n)
    for i in range(k):
        for j in range(k):
            store_entry(r_out, i, j, with_value(load_entry(r_11, i, j), r[i, j]) if j >= i
                        else zero_element(a))
    if n > m:
        r_2 = q_out.T @ a[:, m:]
        for i in range(k):
            for j in range(m, n):
                store_entry(r_out, i, j, with_value(load_entry(r_2, i, j - m), r[i, j]))
    return _on_values(q_out, q), r_out


@overload(np.linalg.qr)
def _qr(a):
    """(Q, R), mode 'reduced': NumPy's factors (LAPACK on the values) refined on the duals
    (_refined_qr), exact to the duals' order; leading columns dependent: LinAlgError."""
    if not isinstance(a, DualMatrixType):
        return None

    def qr(a):
        m, n = a.shape
        k = min(m, n)
        q, r = np.linalg.qr(np.ascontiguousarray(a.values))
        diagonal = np.abs(np.diag(r[:, :k]))
        if k and np.any(diagonal <= GAP_RTOL * np.max(diagonal)):
            raise LinAlgError(_DEPENDENT_COLUMNS)
        return _refined_qr(a, q, r)
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
def _tall_svd(b, left, s, right, sweeps):
    """(s, V, U) in duals for B (M ≥ N) with NumPy's values U = left, s, V = right: P = UᵀBV
    (value diag(s)) and F = BV − UP (value 0) give G = VᵀBᵀBV = PᵀP + FᵀF, whose Jacobi
    rotations W make V W the right singular vectors and √d the singular values to the duals'
    order, and U = B V W / s. At first order ds_i = dP_ii, svd_jvp's."""
    bv = b @ right
    p = _on_values(left.T @ bv, np.diag(s))
    f = _on_values(bv - left @ p, np.zeros(bv.shape))
    d, rotation = _jacobi(p.T @ p + f.T @ f, sweeps)
    sigma = np.sqrt(d)
    for i in range(len(s)):
        store_element(sigma, i, with_value(sigma[i], s[i]))
    v_out = _on_values(right @ rotation, right)
    return sigma, v_out, _on_values((b @ v_out) / sigma, left)


@register_jitable
def _svd_duals(a, sweeps):
    """(U, s, V) in duals, NumPy's thin SVD's values (distinct and nonzero, or LinAlgError)."""
    u, s, vt = _singular_triple(a)
    return _svd_from(a, u, s, vt, sweeps)


@register_jitable
def _svd_from(a, u, s, vt, sweeps):
    """(U, s, V) in duals from the thin SVD u, s, vt of a's values (distinct singular values)."""
    m, n = a.shape
    if m >= n:
        sigma, v_out, u_out = _tall_svd(a, u, s, np.ascontiguousarray(vt.T), sweeps)
        return u_out, sigma, v_out
    sigma, u_out, v_out = _tall_svd(a.T, np.ascontiguousarray(vt.T), s, u, sweeps)
    return u_out, sigma, v_out


@overload(np.linalg.svd)
def _svd(a, full_matrices=True):
    """(U, s, Vᵀ), thin (or square), exact to the duals' order (_tall_svd)."""
    if not isinstance(a, DualMatrixType):
        return None
    sweeps = _sweeps(a.element)

    def svd(a, full_matrices=True):
        m, n = a.shape
        if full_matrices and m != n:
            raise ValueError("numpy.linalg.svd with full_matrices=True of a non-square matrix: the "
                             "extra singular vectors have no derivative; pass full_matrices=False")
        u, s, v = _svd_duals(a, sweeps)
        return u, s, v.T
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


# ---- least squares: full rank ------------------------------------------------------------------------
floats_of = compiled_only("numpy_linalg", "floats_of")  # (a): a contiguous float array of a's values


@overload(floats_of)
def _floats_of(a):
    if isinstance(a, ARRAYS + (DualMatrixType,)):
        return lambda a: np.ascontiguousarray(a.values)
    return lambda a: np.ascontiguousarray(a)


qr_of = compiled_only("numpy_linalg", "qr_of")  # (a, values): a's (Q, R), in duals when a has them


@overload(qr_of)
def _qr_of(a, values):
    if isinstance(a, DualMatrixType):
        def refined(a, values):
            q, r = np.linalg.qr(values)
            return _refined_qr(a, q, r)
        return refined
    return lambda a, values: np.linalg.qr(values)


lstsq_singular_values = compiled_only("numpy_linalg", "lstsq_singular_values")  # (a, values, s, sweeps)


@overload(lstsq_singular_values)
def _lstsq_singular_values(a, values, s, sweeps):
    """lstsq's s: NumPy's values; in duals when a has them, with a nan derivative where they
    repeat (within GAP_RTOL of the largest), as functions/linalg.lstsq_jvp."""
    if not isinstance(a, DualMatrixType):
        return lambda a, values, s, sweeps: s

    def in_duals(a, values, s, sweeps):
        tol = GAP_RTOL * (np.max(s) if len(s) else 0.0)
        if np.all(np.abs(s[1:] - s[:-1]) > tol):
            u, _, vt = np.linalg.svd(values, full_matrices=False)
            return _svd_from(a, u, s, vt, sweeps)[1]
        total = np.sum(np.ravel(a))
        out = new_array(a, len(s))
        for i in range(len(s)):
            store_element(out, i, nan_derivative(total, s[i]))
        return out
    return in_duals


@overload(np.linalg.lstsq)
def _lstsq(a, b, rcond=None):
    """(x, residuals, rank, s), NumPy's values, at full rank (functions/linalg.lstsq's
    convention; rcond None: NumPy's eps·max(M, N)): x = R⁻¹Qᵀb for M ≥ N, x = Q R⁻ᵀ b with
    Aᵀ = QR for M < N (the minimum-norm solution), QR refined on the duals (exact to every
    order); residuals ‖b − Ax‖² per column when M > N, else empty; s see above."""
    duals_a = isinstance(a, DualMatrixType)
    duals_b = isinstance(b, ARRAYS + (DualMatrixType,))
    if not (duals_a or (isinstance(a, types.Array) and a.ndim == 2 and duals_b)):
        return None
    one_element_type([element_of(t) for t in (a, b) if isinstance(t, ARRAYS + (DualMatrixType,))],
                     "numpy.linalg.lstsq")
    vector_b = isinstance(b, ARRAYS) or (isinstance(b, types.Array) and b.ndim == 1)
    if not (vector_b or isinstance(b, DualMatrixType) or (isinstance(b, types.Array) and b.ndim == 2)):
        raise TypingError(f"numpy.linalg.lstsq of duals takes b 1-D or 2-D, not {b}")
    sweeps = _sweeps(element_of(a if duals_a else b))
    default_cutoff = is_none(rcond)

    def lstsq(a, b, rcond=None):
        m, n = a.shape
        cutoff = np.finfo(np.float64).eps * max(m, n) if default_cutoff else rcond
        values = floats_of(a)
        x_values, residual_values, rank, s = np.linalg.lstsq(values, floats_of(b), cutoff)
        if rank < min(m, n):
            raise LinAlgError(_LSTSQ_RANK)
        if m >= n:
            q, r = qr_of(a, values)
            x = np.linalg.solve(r, q.T @ b)
        else:
            q, r = qr_of(a.T, np.ascontiguousarray(values.T))
            x = q @ np.linalg.solve(r.T, b)
        x = _on_values_of(x, x_values)
        if m > n:
            residual = b - a @ x
            residuals = _squares_by_column(residual, residual_values)
        else:
            residuals = new_array(x, 0)
        return x, residuals, rank, lstsq_singular_values(a, values, s, sweeps)
    return lstsq


_on_values_of = compiled_only("numpy_linalg", "_on_values_of")  # (x, values): 1-D or 2-D x on values


@overload(_on_values_of)
def _on_values_of_impl(x, values):
    if isinstance(x, DualMatrixType):
        return lambda x, values: _on_values(x, values)

    def vector(x, values):
        for i in range(len(x)):
            store_element(x, i, with_value(x[i], values[i]))
        return x
    return vector


_squares_by_column = compiled_only("numpy_linalg", "_squares_by_column")  # (r, values)


@overload(_squares_by_column)
def _squares_by_column_impl(r, values):
    """NumPy's residuals: Σ r_i² per column of r, a 1-element array for a vector r."""
    if isinstance(r, DualMatrixType):
        return lambda r, values: _on_values_of(np.sum(r * r, axis=0), values)

    def vector(r, values):
        out = new_array(r, 1)
        store_element(out, 0, with_value(np.sum(r * r), values[0]))
        return out
    return vector


_LSTSQ_RANK = ("numpy.linalg.lstsq: the matrix has rank < min(M, N) (singular values at most rcond "
               "times the largest count as 0); the solution jumps where the rank changes, and dualad "
               "differentiates it at full rank only: remove dependent rows/columns or regularise "
               "(ridge)")


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


@register_jitable
def _spectral(x, which, sweeps):
    """functions/linalg.norm: max (2), min (-2) or sum (0: 'nuc') of the singular values."""
    s = _svd_duals(x, sweeps)[1]
    return np.max(s) if which == 2 else (np.min(s) if which == -2 else np.sum(s))


def _matrix_norm(x, ord):  # noqa: A002  (NumPy's name)
    sweeps = _sweeps(x.element)
    if is_none(ord):
        return lambda x, ord=None: _frobenius(x)
    if isinstance(ord, types.UnicodeType) or isinstance(ord, types.StringLiteral):
        def by_name(x, ord=None):
            if ord == "fro" or ord == "f":
                return _frobenius(x)
            if ord == "nuc":
                return _spectral(x, 0, sweeps)
            raise ValueError("Invalid norm order for matrices.")
        return by_name
    if isinstance(ord, (types.Integer, types.Float)):
        def by_order(x, ord=None):
            if ord == 1 or ord == -1:
                return _largest_line_sum(x, True, ord == 1)
            if ord == np.inf or ord == -np.inf:
                return _largest_line_sum(x, False, ord == np.inf)
            if ord == 2 or ord == -2:
                return _spectral(x, ord, sweeps)
            raise ValueError("Invalid norm order for matrices.")
        return by_order
    raise TypingError(f"numpy.linalg.norm of a matrix of duals takes ord None, 'fro' or a number, not {ord}")


def _second_order(element):
    return isinstance(element, HyperDualType) or (isinstance(element, ActiveType) and element.width)


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
                        np.linalg.svd, np.linalg.pinv, np.linalg.lstsq,
                        np.linalg.eigvalsh, np.linalg.norm))
