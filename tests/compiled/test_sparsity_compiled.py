"""Compiled sparsity (dualad.jit.sparse): patterns detected inside numba equal the Python
path's, compressed compiled Jacobians equal dense ones, bad patterns fail as on the Python
path, and the kernels run inside @njit code. Few kernels, shared: every transform of one
function reuses its kernels (dispatch.sparse_kernels)."""

import pickle

import numba
import numpy as np
import pytest
import scipy.sparse

import dualad
from helpers import load_example

BRUSSELATOR = load_example("brusselator")
N = 8  # grid points per side: 128 states, 8 column colours
ALPHA, FORCING = BRUSSELATOR.compiled_arguments(N)
RHS, Y0 = BRUSSELATOR.brusselator(N)
Y = Y0 + np.random.default_rng(17).random(Y0.size)


@numba.njit
def mixed(x):
    """A stencil with a product (x·y at y = 0 depends on both), floor and sign (None
    partials: no dependence), a branch on x, np.max (every candidate counts, as on the
    Python path) and a dense last row."""
    n = x.size
    out = np.zeros(n + 1)
    for i in range(n):
        out[i] = x[i - 1] * x[(i + 1) % n] + np.floor(x[i]) + 3.0 * np.sign(x[i]) * 2.0
    if x[0] > 0.0:
        out[0] += np.exp(x[2])
    else:
        out[0] += x[3]
    out[1] += np.max(x[4:])
    out[n] = np.sum(np.sin(x))
    return out


@numba.njit
def energy(x):
    """Hessian pattern: products, a square, floor and sign (no interaction), a branch."""
    s = x[0] * x[1] + np.floor(x[2]) * x[3] + np.sin(x[4]) + x[3] * np.sign(x[2])
    s += (x[5] - x[4]) ** 2
    if x[0] > 0.0:
        s += x[2] * x[5]
    return s


AT_ZERO = np.array([0.5, 0.0, 0.0, 1.5, -0.3, 0.0, 2.0])  # zeros where products meet
ELSEWHERE = np.array([-0.5, 1.0, 2.0, -1.5, 0.3, 1.0, 0.1])  # the other branch


@pytest.mark.parametrize("x", [AT_ZERO, ELSEWHERE], ids=["zeros", "other branch"])
def test_jacobian_patterns_equal_the_python_paths(x):
    compiled = dualad.jacobian_sparsity(mixed)(x)
    python = dualad.jacobian_sparsity(mixed, jit=False)(x)
    assert isinstance(compiled, scipy.sparse.csr_array) and compiled.dtype == bool
    assert compiled.shape == python.shape == (8, 7)
    assert (compiled != python).nnz == 0
    assert compiled[0, 1] and compiled[1, 0] and compiled[1, 2]  # x·y at zeros
    assert not compiled[1, 1]  # floor and sign
    assert compiled[1, 4] and compiled[1, 5] and compiled[1, 6]  # np.max's candidates
    assert compiled[0, 2] == (x[0] > 0.0) and compiled[0, 3] == (x[0] <= 0.0)
    assert compiled[7].nnz == 7


@pytest.mark.parametrize("x", [AT_ZERO[:6], ELSEWHERE[:6]], ids=["zeros", "other branch"])
def test_hessian_patterns_equal_the_python_paths(x):
    compiled = dualad.hessian_sparsity(energy)(x)
    assert (compiled != dualad.hessian_sparsity(energy, jit=False)(x)).nnz == 0
    assert compiled[0, 1] and compiled[1, 0] and not compiled[0, 0]  # x0·x1, no x0²
    assert not compiled[2, 3] and not compiled[2, 2]  # floor(x2)·x3, sign(x2)·x3
    assert compiled[4, 4] and compiled[4, 5] and compiled[5, 5]
    assert compiled[2, 5] == (x[0] > 0.0)


def test_brusselator_pattern_and_compressed_jacobians():
    args = (Y, N, ALPHA, FORCING)
    pattern = dualad.jacobian_sparsity(BRUSSELATOR.rhs_compiled)(*args)
    python = dualad.jacobian_sparsity(RHS, argnums=1)(2.0, Y)
    assert (pattern != python).nnz == 0 and pattern.nnz == 12 * N * N
    dense = dualad.jacobian(RHS, argnums=1)(2.0, Y)
    for mode in ("forward", "reverse", "auto"):
        jac = dualad.jacobian(BRUSSELATOR.rhs_compiled, sparsity=True, mode=mode)
        result = jac(*args)
        assert isinstance(result, scipy.sparse.csr_array) and result.dtype == np.float64
        np.testing.assert_allclose(result.toarray(), dense, rtol=1e-13, atol=1e-10)
    assert jac.sparsity_plan(*args).n_colors("columns") == 8
    np.testing.assert_allclose(dualad.jacrev(BRUSSELATOR.rhs_compiled, sparsity=pattern)(*args).toarray(),
                               dense, rtol=1e-13, atol=1e-10)


def test_compressed_jacobians_of_a_stencil_equal_the_dense_one():
    dense = dualad.jacobian(mixed, jit=False)
    jac = dualad.jacfwd(mixed, sparsity=True, check=True)
    for x in (AT_ZERO, AT_ZERO + 0.25):  # the pattern detected at the first point, same branch
        np.testing.assert_allclose(jac(x).toarray(), dense(x), rtol=1e-14, atol=1e-14)
    full = np.ones((8, 7), dtype=bool)  # extra entries give zeros there
    result = dualad.jacobian(mixed, sparsity=full, mode="forward")(AT_ZERO)
    assert result.nnz == 56
    np.testing.assert_allclose(result.toarray(), dense(AT_ZERO), rtol=1e-14, atol=1e-14)


def test_bad_patterns_are_the_python_paths_errors():
    x = AT_ZERO
    with pytest.raises(ValueError, match=r"shape \(8, 6\).*shape \(M, 7\)"):
        dualad.jacfwd(mixed, sparsity=np.ones((8, 6), bool))(x)
    with pytest.raises(ValueError, match=r"shape \(7, 7\).*shape \(8, 7\)"):
        dualad.jacfwd(mixed, sparsity=np.ones((7, 7), bool))(x)
    pattern = dualad.jacobian_sparsity(mixed)(x).tolil()
    pattern[3, 2] = False  # drop one nonzero
    with pytest.raises(ValueError, match="misses a nonzero of the Jacobian .* row 3"):
        dualad.jacfwd(mixed, sparsity=pattern, check=True)(x)
    jac = dualad.jacfwd(mixed, sparsity=True, check=True)
    jac(ELSEWHERE)  # detected on the other branch: row 0 depends on x3
    # as on the Python path, a detected pattern that fails its check is detected again here
    np.testing.assert_allclose(jac(AT_ZERO).toarray(), dualad.jacobian(mixed, jit=False)(AT_ZERO),
                               rtol=1e-14, atol=1e-14)
    with pytest.raises(NotImplementedError, match="has_aux"):
        dualad.jacobian(mixed, sparsity=True, has_aux=True)


@numba.njit
def convolved(x):
    return np.convolve(x, x)  # numba's, on floats; not in dualad's registry


def test_an_operation_the_tracer_cannot_follow_is_named():
    with pytest.raises(numba.core.errors.TypingError, match=r"convolve\(DualArray\(Tracer\)"):
        dualad.jacobian_sparsity(convolved)(AT_ZERO)


def test_the_kernel_runs_inside_njit_code():
    args = (Y, N, ALPHA, FORCING)
    kernel, plan = dualad.jacfwd(BRUSSELATOR.rhs_compiled, sparsity=True).kernel(*args)
    indptr, indices = plan[0], plan[1]

    @numba.njit
    def newton_matrix(y, gamma, n, alpha, forcing, indptr, indices, colors, seeds):
        """I − γJ's nonzeros, J's computed inside numba (BDF's iteration matrix)."""
        values = -gamma * kernel(y, n, alpha, forcing, indptr, indices, colors, seeds)
        for i in range(indptr.size - 1):
            for p in range(indptr[i], indptr[i + 1]):
                if indices[p] == i:
                    values[p] += 1.0
        return values

    with pytest.raises(pickle.PicklingError, match="sparsity kernel does not pickle"):
        pickle.dumps(kernel)
    values = newton_matrix(Y, 0.1, N, ALPHA, FORCING, *plan)
    expected = np.eye(Y.size) - 0.1 * dualad.jacobian(RHS, argnums=1)(2.0, Y)
    got = scipy.sparse.csr_array((values, indices, indptr), shape=(Y.size, Y.size)).toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-10)


def test_compiled_sparse_hessians_detect_and_compute_inside_numba():
    from numba_functions import rosen_vec
    x = np.random.default_rng(3).standard_normal(12)
    hess = dualad.hessian(rosen_vec, sparsity=True, check=True)
    np.testing.assert_allclose(hess(x).toarray(), dualad.hessian(rosen_vec, jit=False)(x),
                               rtol=1e-13, atol=1e-10)
    assert hess.sparsity_plan(x).n_colors("star") == 3
    assert (dualad.hessian_sparsity(rosen_vec)(x) != hess.sparsity_plan(x).pattern).nnz == 0
    # the values come from the compiled forward-over-reverse kernel, callable from njit code
    kernel, plan = hess.kernel(x)
    assert hasattr(kernel, "py_func")

    @numba.njit
    def trace(x, colors, seeds, sources, diagonal):
        return np.sum(kernel(x, colors, seeds, sources)[diagonal])

    pattern = hess.sparsity_plan(x).pattern
    rows = np.repeat(np.arange(x.size), np.diff(pattern.indptr))
    diagonal = np.flatnonzero(rows == pattern.indices)
    assert trace(x, *plan, diagonal) == pytest.approx(np.trace(dualad.hessian(rosen_vec, jit=False)(x)),
                                                      rel=1e-13)


def test_compiled_sparse_hessian_of_branches_and_a_given_pattern():
    for x in (AT_ZERO[:6], ELSEWHERE[:6]):
        np.testing.assert_allclose(dualad.hessian(energy, sparsity=True)(x).toarray(),
                                   dualad.hessian(energy, jit=False)(x), rtol=1e-13, atol=1e-12)
    tridiagonal = scipy.sparse.csr_array(np.eye(6, k=-1) + np.eye(6) + np.eye(6, k=1))
    with pytest.raises(ValueError, match="misses a nonzero"):  # x2·x5 where x0 > 0
        dualad.hessian(energy, sparsity=tridiagonal, check=True)(AT_ZERO[:6])
    with pytest.raises(ValueError, match="shape"):
        dualad.hessian(energy, sparsity=scipy.sparse.csr_array(np.eye(5)))(ELSEWHERE[:6])


@numba.njit
def scaled_ring(t, x, c):
    out = np.zeros(x.size)
    for i in range(x.size):
        out[i] = t * x[i] * x[i - 1] + c
    return out


def test_argnums_moves_the_differentiated_argument_and_the_plan_stays_last():
    x = np.array([1.0, 2.0, 0.0, 3.0])
    pattern = dualad.jacobian_sparsity(scaled_ring, argnums=1)(2.0, x, 1.0)
    assert (pattern != dualad.jacobian_sparsity(scaled_ring, argnums=1, jit=False)(2.0, x, 1.0)).nnz == 0
    jac = dualad.jacfwd(scaled_ring, argnums=1, sparsity=pattern, check=True)
    np.testing.assert_allclose(jac(2.0, x, 1.0).toarray(),
                               dualad.jacobian(scaled_ring, argnums=1, jit=False)(2.0, x, 1.0))
    kernel, plan = jac.kernel(2.0, x, 1.0)
    np.testing.assert_allclose(kernel(2.0, x, 1.0, *plan), jac(2.0, x, 1.0).data)


def test_the_brusselator_example_integrates_with_the_compiled_jacobian():
    results = BRUSSELATOR.run(n=N, t_end=2.0, methods=("dualad, sparse", "dualad, compiled sparse"))
    (python, nfev, njev, _), (compiled, nfev_c, njev_c, _) = results.values()
    np.testing.assert_allclose(compiled, python, rtol=1e-9)  # the same Jacobians, so the same steps
    assert (nfev_c, njev_c) == (nfev, njev) and njev > 0


# ---- the default compiled Hessian detects the sparsity at x (jit.sparse.detecting_hessian) ----------
@numba.njit
def counted_chain(x, counts):
    """Tridiagonal Hessian (3 colours); counts its evaluations."""
    counts[0] += 1
    total = 0.0
    for i in range(x.size - 1):
        total += np.sin(x[i]) * x[i + 1] ** 2 + np.sqrt(x[i] * x[i] + 1.0)
    return total


@numba.njit
def counted_dense(x, counts):
    """Every entry of H nonzero: the pattern pass runs out of budget."""
    counts[0] += 1
    s = 0.0
    for i in range(x.size):
        s += (i + 1.0) * x[i]
    return np.tanh(s) ** 2 + s ** 3


@numba.njit
def counted_arrow(x, counts):
    """x0 couples with every input: distance-2 colouring needs n colours, so no saving."""
    counts[0] += 1
    total = 0.0
    for i in range(1, x.size):
        total += (x[0] * x[i]) ** 2
    return total


@numba.njit
def counted_sqrt(x, counts):
    """sqrt at 0 has an infinite partial: the detecting Hessian must give the dense passes'
    nan and inf, not its compressed sums."""
    counts[0] += 1
    total = 0.0
    for i in range(x.size - 1):
        total += np.sqrt(x[i]) * x[i + 1] ** 2
    return total


@numba.njit
def counted_branch(x, counts):
    """x0 and the last input interact only where x0 > 0: the pattern changes with x."""
    counts[0] += 1
    total = 0.0
    for i in range(x.size - 1):
        total += (x[i] * x[i + 1]) ** 2
    if x[0] > 0.0:
        total += np.exp(x[0] * x[x.size - 1])
    return total


def _passes(f, x):
    counts = np.zeros(1, np.int64)
    return f(x, counts), int(counts[0])


@pytest.mark.parametrize("name, n, dense_passes", [("chain", 13, False), ("chain", 40, False),
                                                     ("dense", 30, True), ("arrow", 20, True)])
def test_the_default_hessian_detects_sparsity_and_equals_the_dense_passes(name, n, dense_passes):
    f = {"chain": counted_chain, "dense": counted_dense, "arrow": counted_arrow}[name]
    x = np.linspace(0.3, 1.7, n)
    expected = dualad.hessian(f, jit=False, mode="forward-over-reverse")(x, np.zeros(1, np.int64))
    dense, dense_count = _passes(dualad.hessian(f, mode="forward-over-reverse"), x)
    np.testing.assert_allclose(dense, expected, rtol=1e-12, atol=1e-12)
    default = dualad.hessian(f)
    for _ in range(2):  # the second call reuses the plan: the same recording on tracers
        hess, count = _passes(default, x)
        np.testing.assert_allclose(hess, dense, rtol=1e-13, atol=1e-13)
        # one recording on tracers, then one pass of the 3 colours or the dense passes
        assert count == 1 + (dense_count if dense_passes else 1), (name, n, count)

    @numba.njit
    def inside(x, counts):
        return default(x, counts)

    hess, count = _passes(inside, x)
    np.testing.assert_allclose(hess, dense, rtol=1e-13, atol=1e-13)
    assert count == 1 + (dense_count if dense_passes else 1)


def test_the_detecting_hessian_gives_the_dense_passes_at_non_finite_points():
    x = np.linspace(0.0, 2.0, 17)  # sqrt at 0: an infinite partial
    dense, dense_count = _passes(dualad.hessian(counted_sqrt, mode="forward-over-reverse"), x)
    with np.errstate(all="ignore"):
        python = dualad.hessian(counted_sqrt, jit=False, mode="forward-over-reverse")(x, np.zeros(1, np.int64))
        hess, count = _passes(dualad.hessian(counted_sqrt), x)
    assert not np.all(np.isfinite(dense))
    np.testing.assert_array_equal(hess, dense)  # nan and inf in the same entries
    np.testing.assert_array_equal(np.isnan(hess), np.isnan(python))
    assert count == 2 + dense_count  # tracers, the compressed pass given up, the dense passes
    x[0] = 0.5  # finite everywhere: compressed
    hess, count = _passes(dualad.hessian(counted_sqrt), x)
    np.testing.assert_allclose(hess, _passes(dualad.hessian(counted_sqrt, mode="forward-over-reverse"), x)[0],
                               rtol=1e-13, atol=1e-13)
    assert count == 2


def test_the_kept_plan_follows_a_pattern_that_changes_with_x():
    hessian = dualad.hessian(counted_branch)
    dense = dualad.hessian(counted_branch, mode="forward-over-reverse")
    inside_x = np.linspace(0.2, 1.0, 16)
    outside_x = -inside_x
    for x in (inside_x, outside_x, inside_x, outside_x):  # each call: the other recording
        got, expected = _passes(hessian, x)[0], _passes(dense, x)[0]
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
        assert (got[0, -1] != 0.0) == (x[0] > 0.0)


@numba.njit
def overflowing_adjoint(x, counts):
    """Every weight finite at X_OVERFLOW, but the adjoint of x0·x1 (exp(x2)·exp(x3) = 1e320)
    overflows in the sweep: the dense passes give nan where a zero tangent meets it."""
    counts[0] += 1
    y = (x[0] * x[1]) * np.exp(x[2]) * np.exp(x[3])
    s = 0.0
    for i in range(4, x.size):
        s += x[i] ** 3
    return y + s


X_OVERFLOW = np.concatenate([[1e-150, 1e-150, 368.0, 368.0], np.ones(12)])


def test_the_detecting_hessian_gives_the_dense_passes_where_the_sweep_overflows():
    # guards: the compressed passes reading 0 off H·S there
    dense, dense_count = _passes(dualad.hessian(overflowing_adjoint, mode="forward-over-reverse"),
                                 X_OVERFLOW)
    with np.errstate(all="ignore"):
        python = dualad.hessian(overflowing_adjoint, jit=False, mode="forward-over-reverse")(
            X_OVERFLOW, np.zeros(1, np.int64))
    hess, count = _passes(dualad.hessian(overflowing_adjoint), X_OVERFLOW)
    assert np.isnan(dense[0, 4])
    np.testing.assert_array_equal(hess, dense)
    np.testing.assert_array_equal(np.isnan(hess), np.isnan(python))
    assert count == 2 + dense_count  # tracers, the compressed pass given up, the dense passes


def test_the_detecting_hessian_names_an_input_it_cannot_seed():
    """Inside njit code a 2-D input is named; from Python it is differentiated as its flat view."""
    @numba.njit
    def grid(x):
        return np.sum(x[:, 1:] * x[:, :-1] ** 2)

    x = np.random.default_rng(0).normal(size=(4, 5))
    for mode in ("auto", "forward-over-reverse"):
        kernel = dualad.hessian(grid, mode=mode)

        @numba.njit
        def inside(x):
            return kernel(x)

        with pytest.raises(numba.core.errors.TypingError, match="a 1-D float64 array or a tuple"):
            inside(x)
    np.testing.assert_allclose(kernel(x), dualad.hessian(grid.py_func)(x), rtol=1e-12, atol=1e-12)
