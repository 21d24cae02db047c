"""numpy.linalg: each function's JVP, written once with NumPy calls.

Each jvp takes primals and tangents and returns (value, tangent). A tangent carries its N
directions on one trailing axis (dA has shape A.shape + (N,)); a constant operand's tangent
is None. The formulas use NumPy calls that accept dual numbers, so the hyper-dual path runs
these same lines on nested duals for exact second derivatives, and that are linear in the
tangents with operations the reverse tape records, so reverse mode transposes them.
Matrices may be stacked (``...ij``) wherever NumPy allows it (not lstsq, multi_dot).

Options travel as trailing operands (constants, tangent None): the reverse tape computes a
jvp entry's value as func(*operand values), so an option must be positional there. The two
that cannot be (cholesky's keyword-only `upper`; lstsq's integer rank, which no layer should
wrap) go through the private primitives _cholesky and _lstsq, dispatched like NumPy's own.

Conventions (one tolerance, GAP_RTOL = 1e-8, relative to the largest |eigenvalue| or
singular value of each matrix):
  * eigh, eigvalsh: eigenvalues closer than GAP_RTOL are repeated; there the eigenvectors
    and the individual eigenvalues have no derivative: numpy.linalg.LinAlgError.
  * svd, svdvals, norm(ord=2, -2, 'nuc'): the same for singular values, and a singular value
    at most GAP_RTOL (rank deficiency, a kink like |x| at 0) is an error too.
  * cholesky, eigh, eigvalsh, pinv(hermitian=True): NumPy reads one triangle of A, so the
    derivative is that of the symmetric matrix built from it (the other triangle: 0).
  * qr, lstsq: defined at full rank (qr: the leading min(M, N) columns independent; lstsq:
    rank min(M, N) by NumPy's own rcond cutoff); otherwise LinAlgError. pinv: at constant
    rank, the rank by NumPy's cutoff (the derivative of what NumPy computes, which drops
    the singular values below it).
  * eig, eigvals: real, distinct eigenvalues (complex ones are a LinAlgError); eigenvectors
    of unit norm, as NumPy's.
    lstsq's singular values get a nan derivative where they repeat (x's needs none).
  * slogdet: the sign has no derivative; a singular matrix is a LinAlgError.
Singular matrices in det/inv/solve raise numpy.linalg.LinAlgError, as the values do.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from ..number import leader_of, primal
from .multilinear import contract
from .registry import axes_of, composition, jvp, reject_options, stack_lists

LinAlgError = np.linalg.LinAlgError

# Eigenvalues (singular values) closer than this, relative to the largest in magnitude, are
# taken as repeated (as zero). Above it, rounding of the values perturbs the derivatives, which
# divide by the gaps, by at most about eps / GAP_RTOL ~ 1e-8 relative.
GAP_RTOL = 1e-8


def _expand(y):
    return y[..., None] if np.ndim(y) else y


def _mT(x, k=0):
    """x with its two matrix axes swapped; they are followed by k trailing (direction) axes."""
    return np.swapaxes(x, -2 - k, -1 - k)


def _trail(mask, k):
    """A constant (n, n) mask broadcast over k trailing axes."""
    return mask[(Ellipsis,) + (None,) * k]


def _from_triangle(x, lower, k=0):
    """The symmetric matrix NumPy reads from x's lower (upper) triangle: tril(x) + tril(x, -1)ᵀ;
    the matrix axes are followed by k trailing axes."""
    n = np.shape(x)[-1 - k]
    strict = np.tri(n, k=-1) if lower else np.tri(n, k=-1).T
    return x * _trail(strict + np.eye(n), k) + _mT(x * _trail(strict, k), k)


def _uplo(uplo, name):
    uplo = str(uplo).upper()
    if uplo not in ("L", "U"):
        raise ValueError(f"numpy.linalg.{name}: UPLO argument must be 'L' or 'U'")
    return uplo


def _require_distinct(values, name, what, fix, nonzero=False):
    """LinAlgError unless the sorted values along the last axis are pairwise more than GAP_RTOL
    apart (and, with nonzero, more than GAP_RTOL from 0), relative to the largest |value|."""
    v = np.asarray(primal(values), dtype=np.float64)
    if v.size == 0:
        return
    tol = GAP_RTOL * np.max(np.abs(v), axis=-1, keepdims=True)
    close = np.abs(np.diff(v, axis=-1)) <= tol
    if np.any(close):
        index = np.argwhere(close)[0]
        pair = v[tuple(index[:-1])][index[-1]:index[-1] + 2]
        raise LinAlgError(
            f"numpy.linalg.{name}: repeated {what} ({pair[0]!r} and {pair[1]!r}, within "
            f"{GAP_RTOL:g} of the largest in magnitude); there the individual {what} and "
            f"their vectors have no derivative. {fix}")
    if nonzero and np.any(np.abs(v) <= tol):
        raise LinAlgError(
            f"numpy.linalg.{name}: a {what[:-1]} is zero (at most {GAP_RTOL:g} times the "
            f"largest; the matrix is rank-deficient), where it has no derivative (a kink, like "
            f"|x| at 0). {fix}")


_EIGEN_FIX = ("Differentiate a function of the whole matrix instead (np.trace, "
              "np.linalg.det or slogdet for the sum or product of the eigenvalues), or perturb "
              "the matrix so that its eigenvalues separate.")
_SINGULAR_FIX = ("(numpy.linalg.norm with ord=2, -2 or 'nuc' uses numpy.linalg.svd too.) "
                 "Differentiate np.sum(a * a) for the sum of squared singular values, or "
                 "perturb the matrix so that its singular values separate and are not 0.")


def _dispatched(func):
    """func on plain arrays; on dualad numbers, handed to the newest layer as NumPy hands its
    own functions (``__array_function__``), so that func can have a registry entry."""
    @functools.wraps(func)
    def call(*args):
        leader = leader_of(args)
        if leader is None:
            return func(*args)
        return leader.__array_function__(call, (type(leader),), args, {})
    return call


def _reached(d, da, subscripts, k):
    """d + einsum(subscripts, da, zeros((M, k))): the same numbers, with da consumed by d's last
    operation. The reverse tape skips a zero cotangent, so where d's cotangent meets only its
    structural zeros (a triangle of L or R) the transposed JVP (reverse/functions.py) would
    find its tangent unreached; this exact zero reaches it."""
    return d + contract(subscripts, da, np.zeros((np.shape(da)[-3], k)))


# ---- det, inv, solve, slogdet -----------------------------------------------------------------
def det_jvp(a, da):
    """d det A = tr(adj(A) dA), adj(A) = det A · A⁻¹ (by cofactors where A is singular: det
    is differentiable everywhere)."""
    y = np.linalg.det(a)
    try:
        return y, _expand(y) * contract("...ij,...jiz->...z", np.linalg.inv(a), da)
    except LinAlgError:
        return y, contract("...ij,...jiz->...z", _adjugate(a), da)


def _adjugate(a):
    """adj(A)_ji = (-1)^(i+j) det(A without row i and column j), for (stacks of) n×n A."""
    n = np.shape(a)[-1]
    if n == 1:
        return np.ones(np.shape(a))
    rows = []
    for j in range(n):
        rows.append(np.stack([(-1.0) ** (i + j) * np.linalg.det(
            np.delete(np.delete(a, i, axis=-2), j, axis=-1)) for i in range(n)], axis=-1))
    return np.stack(rows, axis=-2)


def inv_jvp(a, da):
    """d A⁻¹ = -A⁻¹ dA A⁻¹."""
    y = np.linalg.inv(a)
    return y, -contract("...ij,...jkz,...kl->...ilz", y, da, y)


def solve_jvp(a, b, da, db):
    """x = A⁻¹ b;  dx = A⁻¹ (db - dA x). b is a vector iff b.ndim == 1 (NumPy 2 semantics)."""
    x = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1
    rhs = 0.0 if db is None else db
    if da is not None:
        rhs = rhs - contract("...ijz,...j->...iz" if vector else "...ijz,...jk->...ikz", da, x)
    if vector:
        return x, np.linalg.solve(a, rhs)
    n_dir = rhs.shape[-1]
    merged = rhs.reshape(rhs.shape[:-2] + (rhs.shape[-2] * n_dir,))
    return x, np.linalg.solve(a, merged).reshape(np.shape(x) + (n_dir,))


def slogdet_jvp(a, da):
    """(sign, log|det A|): d log|det A| = tr(A⁻¹ dA); the sign has no derivative (None)."""
    y = np.linalg.slogdet(a)
    if np.any(np.asarray(primal(y.sign)) == 0):
        raise LinAlgError("numpy.linalg.slogdet: the matrix is singular (log|det| = -inf), "
                          "where log|det| has no derivative")
    return y, (None, contract("...ij,...jiz->...z", np.linalg.inv(a), da))


@jvp(np.linalg.det, compiled=True)
def _det(a):
    return [stack_lists(a)], det_jvp


@jvp(np.linalg.inv, compiled=True)
def _inv(a):
    return [stack_lists(a)], inv_jvp


@jvp(np.linalg.solve, compiled=True)
def _solve(a, b):
    return [stack_lists(a), stack_lists(b)], solve_jvp


@jvp(np.linalg.slogdet, compiled=True)
def _slogdet(a):
    return [stack_lists(a)], slogdet_jvp


# ---- cholesky ---------------------------------------------------------------------------------
@_dispatched
def _cholesky(a, upper):
    """numpy.linalg.cholesky(a, upper=upper), `upper` positional (see the module docstring)."""
    return np.linalg.cholesky(a, upper=upper)


def cholesky_jvp(a, upper, da, _):
    """A = L Lᵀ (upper: A = UᵀU, U = Lᵀ) read from one triangle of A, dA_s the symmetric
    matrix read from the same triangle of dA: dL = L Φ(L⁻¹ dA_s L⁻ᵀ), Φ the lower triangle
    with its diagonal halved (L⁻¹dL is lower triangular and L⁻¹dL + (L⁻¹dL)ᵀ = L⁻¹dA_s L⁻ᵀ)."""
    y = _cholesky(a, upper)
    lower = _mT(y) if upper else y
    n = np.shape(a)[-1]
    li = np.linalg.inv(lower)
    x = contract("...ij,...jkz,...lk->...ilz", li, _from_triangle(da, not upper, 1), li)
    dl = contract("...ij,...jkz->...ikz", lower, x * _trail(np.tri(n, k=-1) + 0.5 * np.eye(n), 1))
    return y, _reached((_mT(dl, 1) if upper else dl), da, "...ijz,ik->...kjz", n)


jvp(_cholesky, note="internal: numpy.linalg.cholesky with `upper` positional")(
    lambda a, upper: ([a, upper], cholesky_jvp))


@composition(np.linalg.cholesky, compiled=True)
def cholesky(a, /, *, upper=False):
    """numpy.linalg.cholesky through the primitive _cholesky."""
    return _cholesky(stack_lists(a), bool(upper))


# ---- symmetric eigenproblem -------------------------------------------------------------------
def eigh_jvp(a, uplo, da, _):
    """A = V diag(w) Vᵀ, C = Vᵀ dA_s V (dA_s: the symmetric matrix NumPy reads from dA's UPLO
    triangle): dw = diag(C), dV = V (F ∘ C), F_ij = 1/(w_j - w_i) off the diagonal, 0 on it.
    Needs distinct eigenvalues (GAP_RTOL)."""
    y = np.linalg.eigh(a, uplo)
    w, v = y
    _require_distinct(w, "eigh", "eigenvalues", _EIGEN_FIX)
    ds = _from_triangle(da, uplo == "L", 1)
    c = contract("...ji,...jkz,...kl->...ilz", v, ds, v)
    dw = contract("...ji,...jkz,...ki->...iz", v, ds, v)
    eye = np.eye(np.shape(w)[-1])
    f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
    return y, (dw, contract("...ij,...jkz->...ikz", v, f[..., None] * c))


def eigvalsh_jvp(a, uplo, da, _):
    """dw_i = v_iᵀ dA v_i (v_i from eigh). Needs distinct eigenvalues (GAP_RTOL)."""
    w = np.linalg.eigvalsh(a, uplo)
    _require_distinct(w, "eigvalsh", "eigenvalues", _EIGEN_FIX)
    v = np.linalg.eigh(a, uplo).eigenvectors
    return w, contract("...ji,...jkz,...ki->...iz", v, _from_triangle(da, uplo == "L", 1), v)


# ---- general eigenproblem: real, distinct eigenvalues ---------------------------------------------
def _require_real(w, name):
    if np.iscomplexobj(primal(w)):
        raise LinAlgError(
            f"numpy.linalg.{name}: the matrix has complex eigenvalues; dualad differentiates "
            "real numbers, so it takes numpy.linalg.eig of a matrix whose eigenvalues are real "
            "(a symmetric one: numpy.linalg.eigh)")


def eig_jvp(a, da):
    """A V = V diag(w), w real and distinct, C = V⁻¹ dA V: dw = diag(C), dV = V (F ∘ C) with
    F_ij = 1/(w_j - w_i) off the diagonal, 0 on it, less each column's part along itself
    (NumPy's eigenvectors have unit norm: v_kᵀ dv_k = 0)."""
    y = np.linalg.eig(a)
    w, v = y
    _require_real(w, "eig")
    _require_distinct(np.sort(primal(w), axis=-1), "eig", "eigenvalues", _EIGEN_FIX)
    vinv = np.linalg.inv(v)
    c = contract("...ij,...jkz,...kl->...ilz", vinv, da, v)
    dw = contract("...ij,...jkz,...ki->...iz", vinv, da, v)
    eye = np.eye(np.shape(w)[-1])
    f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
    dv = contract("...ij,...jkz->...ikz", v, f[..., None] * c)
    dv = dv - v[..., None] * np.sum(v[..., None] * dv, axis=-3, keepdims=True)
    return y, (dw, dv)


def eigvals_jvp(a, da):
    """dw = diag(V⁻¹ dA V) (V from eig). Needs real, distinct eigenvalues."""
    w = np.linalg.eigvals(a)
    _require_real(w, "eigvals")
    _require_distinct(np.sort(primal(w), axis=-1), "eigvals", "eigenvalues", _EIGEN_FIX)
    v = np.linalg.eig(a).eigenvectors
    return w, contract("...ij,...jkz,...ki->...iz", np.linalg.inv(v), da, v)


@jvp(np.linalg.eig, note="real, distinct eigenvalues")
def _eig(a):
    return [stack_lists(a)], eig_jvp


@jvp(np.linalg.eigvals, note="real, distinct eigenvalues")
def _eigvals(a):
    return [stack_lists(a)], eigvals_jvp


@jvp(np.linalg.eigh, compiled=True)
def _eigh(a, UPLO="L"):  # noqa: N803  (NumPy's name)
    return [stack_lists(a), _uplo(UPLO, "eigh")], eigh_jvp


@jvp(np.linalg.eigvalsh, compiled=True)
def _eigvalsh(a, UPLO="L"):  # noqa: N803
    return [stack_lists(a), _uplo(UPLO, "eigvalsh")], eigvalsh_jvp


# ---- singular value decomposition -------------------------------------------------------------
def svd_jvp(a, full_matrices, compute_uv, hermitian, da, *_):
    """A = U S Vᵀ (k = min(M, N) singular values), dP = Uᵀ dA V:
    ds = diag(dP);  dU = U (F ∘ (dP S + S dPᵀ)) + (I - UUᵀ) dA V S⁻¹;
    dV = V (F ∘ (S dP + dPᵀ S)) + (I - VVᵀ) dAᵀ U S⁻¹,  F_ij = 1/(s_j² - s_i²) off the diagonal.
    Needs distinct, nonzero singular values (GAP_RTOL)."""
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    y = np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    u, s, vh = y if compute_uv else np.linalg.svd(a, False, True, hermitian)
    _require_distinct(s, "svd", "singular values", _SINGULAR_FIX, nonzero=True)
    ds = contract("...ik,...ijz,...kj->...kz", u, da, vh)
    if not compute_uv:
        return y, ds
    dp = contract("...ik,...ijz,...lj->...klz", u, da, vh)
    dpt = _mT(dp, 1)
    eye = np.eye(k)
    s2 = s * s
    f = ((1.0 - eye) / (s2[..., None, :] - s2[..., :, None] + eye))[..., None]
    si, sj = s[..., :, None, None], s[..., None, :, None]
    v = _mT(vh)
    du = contract("...ij,...jkz->...ikz", u, f * (dp * sj + si * dpt))
    dv = contract("...ij,...jkz->...ikz", v, f * (si * dp + dpt * sj))
    # the parts outside span(U) (tall) or span(V) (wide); identically 0 when U (V) is square
    if m > k:
        du = du + (contract("...ijz,...lj->...ilz", da, vh)
                   - contract("...ik,...klz->...ilz", u, dp)) * (1.0 / sj)
    if n > k:
        dv = dv + (contract("...jiz,...jl->...ilz", da, u)
                   - contract("...ik,...lkz->...ilz", v, dp)) * (1.0 / sj)
    return y, (du, ds, _mT(dv, 1))


@jvp(np.linalg.svd, compiled=True, note="compiled: full_matrices=False (or square)")
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = stack_lists(a)
    if hermitian:
        raise ValueError("numpy.linalg.svd with hermitian=True is not differentiable by dualad "
                         "(NumPy computes it from eigh, with its own signs); pass "
                         "hermitian=False, or use numpy.linalg.eigh")
    m, n = np.shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise ValueError(
            f"numpy.linalg.svd with full_matrices=True of a {m}x{n} matrix: the extra "
            f"{max(m, n) - min(m, n)} singular vectors are any orthonormal basis of a "
            "complement, so they have no derivative; pass full_matrices=False")
    return [a, bool(full_matrices), bool(compute_uv), False], svd_jvp


if hasattr(np.linalg, "svdvals"):
    @composition(np.linalg.svdvals)
    def svdvals(x, /):
        """NumPy's own definition: svd(x, compute_uv=False)."""
        return np.linalg.svd(x, compute_uv=False, hermitian=False)


# ---- qr ---------------------------------------------------------------------------------------
def qr_jvp(a, mode, da, _):
    """A = QR (A₁ = Q R₁ on the leading k = min(M, N) columns): X = dA₁ R₁⁻¹, C = QᵀX,
    Ω = tril(C, -1) - tril(C, -1)ᵀ:  dQ = Q (Ω - C) + X,  dR₁ = (C - Ω) R₁; for M < N the
    remaining columns R₂ = QᵀA₂ give dR₂ = dQᵀA₂ + QᵀdA₂. Needs A₁ of full rank."""
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    y = np.linalg.qr(a, mode)
    q, r = np.linalg.qr(a) if mode == "r" else y
    diag = np.abs(np.diagonal(np.asarray(primal(r)), axis1=-2, axis2=-1))
    if diag.size and np.any(diag <= GAP_RTOL * np.max(diag, axis=-1, keepdims=True)):
        raise LinAlgError(
            f"numpy.linalg.qr: the leading {k} columns are linearly dependent (a diagonal entry "
            f"of R is at most {GAP_RTOL:g} times the largest), where Q has no derivative; "
            "remove the dependent columns or regularise the matrix")
    r1 = r[..., :, :k]
    x = contract("...ijz,...jk->...ikz", da[..., :, :k, :], np.linalg.inv(r1))
    c = contract("...ji,...jkz->...ikz", q, x)
    low = c * _trail(np.tri(k, k=-1), 1)
    omega = low - _mT(low, 1)
    dq = contract("...ij,...jkz->...ikz", q, omega - c) + x
    dr = contract("...ijz,...jk->...ikz", c - omega, r1)
    if n > m:
        dr2 = (contract("...jiz,...jk->...ikz", dq, a[..., :, m:])
               + contract("...ji,...jkz->...ikz", q, da[..., :, m:, :]))
        dr = np.concatenate([dr, dr2], axis=-2)
    dr = _reached(dr, da, "...ijz,ik->...kjz", k)
    return y, (dr if mode == "r" else (dq, dr))


@jvp(np.linalg.qr, compiled=True, note="compiled: mode 'reduced'")
def _qr(a, mode="reduced"):
    a = stack_lists(a)
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete", "r") or (mode == "complete" and m > n):
        raise ValueError(
            f"numpy.linalg.qr with mode={mode!r} is not differentiable by dualad: use "
            "mode='reduced' or 'r' ('complete' adds, for a tall matrix, columns that are any "
            "basis of a complement and have no derivative)")
    return [a, mode], qr_jvp


# ---- pinv (constant rank) and lstsq (full rank) ---------------------------------------------------
def _require_full_rank(a, rcond, hermitian, name):
    rank = _rank(a, rcond, hermitian)
    v = np.asarray(primal(a))
    if np.any(rank < min(v.shape[-2:])):
        raise LinAlgError(
            f"numpy.linalg.{name}: the matrix has rank {np.min(rank)} < min(M, N) = "
            f"{min(v.shape[-2:])} (singular values at most rcond times the largest count as "
            "0); the least-squares solution jumps where the rank changes, and dualad "
            "differentiates it at full rank only: remove dependent rows/columns, regularise "
            "(ridge), or write x = np.linalg.pinv(a) @ b (differentiated at constant rank)")


def _rank(a, rcond, hermitian):
    """NumPy's rank of each matrix of the stack for pinv: singular values above rcond times the
    largest."""
    v = np.asarray(primal(a))
    if v.size == 0:
        return np.full(v.shape[:-2], min(v.shape[-2:]), dtype=np.intp)
    s = np.linalg.svd(v, compute_uv=False, hermitian=hermitian)
    return np.sum(s > np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True), axis=-1)


def _pinv_derivative(a, p, da, full_rank):
    """dA⁺ at constant rank (Golub & Pereyra): -A⁺dA A⁺ + A⁺A⁺ᵀ dAᵀ(I - AA⁺) + (I - A⁺A)
    dAᵀA⁺ᵀA⁺. At full rank the second term is identically 0 when M ≤ N (AA⁺ = I), the third
    when M ≥ N. Below full rank it is the derivative of NumPy's pinv, which drops the
    singular values under its cutoff (the terms annihilate the part of dA that would raise
    the rank), and defined along perturbations that keep the rank."""
    m, n = np.shape(a)[-2:]
    dp = -contract("...ij,...jkz,...kl->...ilz", p, da, p)
    if m > n or not full_rank:
        dp = dp + contract("...ij,...kjz,...kl->...ilz", p @ _mT(p), da, np.eye(m) - a @ p)
    if m < n or not full_rank:
        dp = dp + contract("...ij,...kjz,...kl->...ilz", np.eye(n) - p @ a, da, _mT(p) @ p)
    return dp


def pinv_jvp(a, rcond, hermitian, da, *_):
    """A⁺ and its derivative at constant rank, the rank by NumPy's rcond cutoff (see
    _pinv_derivative); hermitian: A and dA as NumPy reads them, from their lower triangles."""
    p = np.linalg.pinv(a, rcond, hermitian)
    full_rank = bool(np.all(_rank(a, rcond, hermitian) == min(np.shape(a)[-2:])))
    if hermitian:
        a, da = _from_triangle(a, True), _from_triangle(da, True, 1)
    return p, _pinv_derivative(a, p, da, full_rank)


@jvp(np.linalg.pinv, compiled=True, note="compiled: rcond only (not rtol or hermitian)")
def _pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    a = stack_lists(a)
    if rcond is None:  # NumPy's defaults, as one positional rcond
        if rtol is np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(np.shape(a)[-2:]) * np.finfo(np.float64).eps
        else:
            rcond = rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return [a, primal(rcond), bool(hermitian)], pinv_jvp


@_dispatched
def _lstsq(a, b, rcond):
    """numpy.linalg.lstsq(a, b, rcond) without the integer rank (see the module docstring)."""
    x, residuals, _, s = np.linalg.lstsq(a, b, rcond)
    return x, residuals, s


def lstsq_jvp(a, b, rcond, da, db, _):
    """x = A⁺b at full rank: dx = A⁺(db - dA x) + A⁺A⁺ᵀdAᵀr (M > N) + (I - A⁺A)dAᵀA⁺ᵀx
    (M < N), r = b - Ax; residuals ‖r‖²: 2 rᵀ(db - dA x) (Aᵀr = 0); s: diag(Uᵀ dA V), nan
    where singular values repeat (they have no derivative there)."""
    y = _lstsq(a, b, rcond)
    x, residuals, s = y
    m, n = np.shape(a)
    rcond = np.finfo(np.float64).eps * max(m, n) if rcond is None else rcond
    _require_full_rank(a, rcond, False, "lstsq")
    vector = np.ndim(b) == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    rhs = 0.0 if db is None else (db[:, None, :] if vector else db)
    if da is not None:
        rhs = rhs - contract("ijz,jk->ikz", da, x2)
    p = np.linalg.pinv(a, rcond)
    dx = contract("ij,jkz->ikz", p, rhs)
    r = b2 - a @ x2
    if da is not None and m > n:
        dx = dx + contract("ij,kjz,kl->ilz", p @ p.T, da, r)
    if da is not None and m < n:
        dx = dx + contract("ij,kjz,kl->ilz", np.eye(n) - p @ a, da, p.T @ x2)
    dresiduals = 2.0 * contract("ik,ikz->kz", r, rhs) if np.size(residuals) else None
    ds = None
    if da is not None:
        sv = np.asarray(primal(s))
        gaps = np.abs(np.diff(sv))
        if np.all(gaps > GAP_RTOL * np.max(sv, initial=0.0)):
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            ds = contract("ik,ijz,kj->kz", u, da, vh)
        else:
            ds = np.full((len(sv), 1), np.nan) * np.sum(da, axis=(0, 1))[None, :]
    return y, (dx[:, 0] if vector else dx, dresiduals, ds)


jvp(_lstsq, note="internal: numpy.linalg.lstsq's x, residuals and s")(
    lambda a, b, rcond: ([a, b, rcond], lstsq_jvp))


@composition(np.linalg.lstsq, compiled=True)
def lstsq(a, b, rcond=None):
    """NumPy's (x, residuals, rank, s): the rank (an int) from NumPy on the values."""
    a, b = stack_lists(a), stack_lists(b)
    x, residuals, s = _lstsq(a, b, rcond)
    return x, residuals, np.linalg.lstsq(primal(a), primal(b), rcond)[2], s


# ---- compositions: NumPy's own algorithms on registered functions -----------------------------
def _square_stack(a, name):
    shape = np.shape(a)
    if len(shape) < 2:
        raise LinAlgError(f"{len(shape)}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if shape[-1] != shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


@composition(np.linalg.matrix_power, compiled=True)
def matrix_power(a, n):
    """NumPy's algorithm (inverse for n < 0, then binary powers), so the value is NumPy's."""
    a = stack_lists(a)
    _square_stack(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        return np.zeros_like(a) + np.eye(np.shape(a)[-1])
    if n < 0:
        a, n = np.linalg.inv(a), -n
    if n == 1:
        return a
    if n == 2:
        return np.matmul(a, a)
    if n == 3:
        return np.matmul(np.matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else np.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else np.matmul(result, z)
    return result


def _chain_order(shapes):
    """The cheapest parenthesisation of a matrix chain (NumPy's dynamic programme)."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = np.zeros((n, n))
    split = np.empty((n, n), dtype=np.intp)
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = np.inf
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    return np.dot(_chain(arrays, split, i, split[i, j]), _chain(arrays, split, split[i, j] + 1, j))


@composition(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    """NumPy's order of products (cheapest first), so the value is NumPy's."""
    reject_options(dict(out=out), "linalg.multi_dot")
    arrays = [stack_lists(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return np.dot(arrays[0], arrays[1])
    first, last = np.ndim(arrays[0]), np.ndim(arrays[-1])
    if first == 1:
        arrays[0] = np.atleast_2d(arrays[0])
    if last == 1:
        arrays[-1] = np.transpose(np.atleast_2d(arrays[-1]))
    for x in arrays:
        if np.ndim(x) != 2:
            raise LinAlgError(f"{np.ndim(x)}-dimensional array given. Array must be "
                              "two-dimensional")
    if len(arrays) == 3:
        (a0, a1b0), (b1c0, c1) = np.shape(arrays[0]), np.shape(arrays[2])
        if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
            result = np.dot(np.dot(arrays[0], arrays[1]), arrays[2])
        else:
            result = np.dot(arrays[0], np.dot(arrays[1], arrays[2]))
    else:
        result = _chain(arrays, _chain_order([np.shape(x) for x in arrays]), 0, len(arrays) - 1)
    if first == 1 and last == 1:
        return result[0, 0]
    return np.ravel(result) if first == 1 or last == 1 else result


def _singular_values(x, row_axis, col_axis):
    return np.linalg.svd(np.moveaxis(x, (row_axis, col_axis), (-2, -1)), compute_uv=False)


@composition(np.linalg.norm, compiled=True)
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002  (NumPy's name)
    """NumPy's norm, branch by branch, on registered functions (so the value is NumPy's):
    vector p-norms (0 counts nonzeros, derivative 0; ±inf: max/min |x|, ties share), and
    matrix 'fro', 'nuc', ±2 (singular values: distinct and nonzero), ±1, ±inf. The 2-norm has
    a nan derivative at 0 (sqrt'(0) = inf times 0), as in JAX; |x| has derivative 1 at 0."""
    x = stack_lists(x)
    nd = np.ndim(x)
    if axis is None and (ord is None or (ord in ("f", "fro") and nd == 2)
                         or (ord == 2 and nd == 1)):
        flat = np.ravel(x, order="K")  # the order NumPy sums |x|² in
        ret = np.sqrt(np.dot(flat, flat))
        return np.reshape(ret, nd * [1]) if keepdims else ret
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        if ord == np.inf:
            return np.max(np.abs(x), axis=axis, keepdims=keepdims)
        if ord == -np.inf:
            return np.min(np.abs(x), axis=axis, keepdims=keepdims)
        if ord == 0:  # a count: derivative 0
            return np.sum(np.zeros_like(x) + (np.asarray(primal(x)) != 0), axis=axis,
                          keepdims=keepdims)
        if ord == 1:
            return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
        if ord is None or ord == 2:
            return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return np.sum(np.abs(x) ** ord, axis=axis, keepdims=keepdims) ** np.reciprocal(
            np.float64(ord))
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    row_axis, col_axis = axes_of(axis, nd)
    if row_axis == col_axis:
        raise ValueError("Duplicate axes given.")
    if ord == 2:
        ret = np.max(_singular_values(x, row_axis, col_axis), axis=-1)
    elif ord == -2:
        ret = np.min(_singular_values(x, row_axis, col_axis), axis=-1)
    elif ord in (1, -1):
        reduce = np.max if ord == 1 else np.min
        ret = reduce(np.sum(np.abs(x), axis=row_axis),
                     axis=col_axis - 1 if col_axis > row_axis else col_axis)
    elif ord in (np.inf, -np.inf):
        reduce = np.max if ord == np.inf else np.min
        ret = reduce(np.sum(np.abs(x), axis=col_axis),
                     axis=row_axis - 1 if row_axis > col_axis else row_axis)
    elif ord in (None, "fro", "f"):
        ret = np.sqrt(np.sum(x * x, axis=axis))
    elif ord == "nuc":
        ret = np.sum(_singular_values(x, row_axis, col_axis), axis=-1)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(np.shape(x))
        shape[axis[0]], shape[axis[1]] = 1, 1
        ret = np.reshape(ret, shape)
    return ret
