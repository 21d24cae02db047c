"""Sparsity detection, colourings and compressed Jacobians/Hessians (dualad/sparsity/).

Patterns are compared with the nonzeros of dense Jacobians and Hessians at random points: equal
everywhere except where dualad/sparsity/tracer.py documents a conservative superset
(maximum/max/clip/median on all their candidates, linear algebra on all its operands, a
partial that happens to be 0 at x)."""

import numba
import numpy as np
import pytest
import scipy.sparse
from scipy.optimize._numdiff import group_columns

import dualad
from dualad.sparsity.coloring import (column_coloring, is_column_coloring, is_star_coloring,
                                      n_colors, row_coloring, star_coloring)
from helpers import load_example

RNG = np.random.default_rng(20261124)
L5 = np.diag(np.full(5, 2.0)) - np.diag(np.ones(4), 1) - np.diag(np.ones(4), -1)


def _view_write(x):
    out = np.zeros_like(x)
    view = out.reshape(2, 3)
    view[1] = x[:3] ** 2  # written through a view of out
    return out


def _loop_fill(x):
    out = np.zeros(len(x))  # a float allocation: filled by item assignment (buffers on demand)
    for i in range(1, len(x)):
        out[i] = x[i - 1] * x[i]
    return out


def _branch(x):
    if x[0] > 0.5:
        return x * x[1]
    return np.sin(x)


def _assign_slice(x):
    y = x.copy()
    y[1:3] = 2.0 * x[4:]
    return y


# name -> f of 6 inputs; the pattern equals the dense Jacobian's nonzeros
EXACT = {
    "elementwise": lambda x: np.sin(x) * np.exp(x[0]) + np.arctan2(x, x[::-1]),
    "floor (first partial None)": lambda x: np.floor(x) + x[::-1],
    "power": lambda x: x ** x[1],
    "indexing": lambda x: x[[0, 2, 2, 4]] * x[1:5],
    "reshape, transpose, matvec": lambda x: x.reshape(2, 3).T @ np.ones(2),
    "roll": lambda x: np.roll(x, 2) - x,
    "concatenate": lambda x: np.concatenate([x[:2], x[3:] ** 2, [1.0]]),
    "stack": lambda x: np.stack([x[0] * x[1], x[2], 3.0]),
    "where": lambda x: np.where(x > 0.5, x ** 2, x[0]),
    "pad": lambda x: np.pad(x[:4], 1) * 2.0,
    "sum over an axis": lambda x: np.sum(x.reshape(2, 3) ** 2, axis=0),
    "sum keepdims": lambda x: x.reshape(3, 2) * np.sum(x.reshape(3, 2), axis=1, keepdims=True),
    "cumsum": lambda x: np.cumsum(x.reshape(2, 3), axis=1),
    "mean": lambda x: x - np.mean(x[:2]),
    "prod": lambda x: np.prod(x.reshape(3, 2), axis=1),
    "einsum of two traced": lambda x: np.einsum("ij,jk->ik", x.reshape(2, 3), x.reshape(3, 2)).ravel(),
    "sparse constant matrix": lambda x: L5 @ x[:5],
    "einsum trace": lambda x: np.einsum("ii", x[:4].reshape(2, 2)) * x[4:],
    "outer, kron": lambda x: np.concatenate([np.outer(x[:2], x[2:4]).ravel(),
                                             np.kron(x[:2], np.array([1.0, 0.0]))]),
    "solve with a constant matrix": lambda x: np.linalg.solve(L5, x[:5]),
    "det": lambda x: np.linalg.det(x[:4].reshape(2, 2)) * x[4:],
    "view write": _view_write,
    "item assignment in a loop": _loop_fill,
    "slice assignment": _assign_slice,
    "branch at x": _branch,
    "sort": lambda x: np.sort(x) * x[0],
    "diff, cross": lambda x: np.concatenate([np.diff(x, 2), np.cross(x[:3], x[3:])]),
}

# the documented conservative supersets
SUPERSET = {
    "maximum": lambda x: np.maximum(x, x[0]),
    "max over an axis": lambda x: np.max(x.reshape(2, 3), axis=1),
    "clip": lambda x: np.clip(x, 0.3, 0.7),
    "median": lambda x: np.median(x.reshape(2, 3), axis=1),
    "x[0] / x (a partial that is 0 at x)": lambda x: x[0] / x,
}


def _dense_nonzeros(f, x):
    jac = np.asarray(dualad.jacobian(f)(x))
    return jac.reshape(-1, x.size) != 0


@pytest.mark.parametrize("name", sorted(EXACT))
def test_jacobian_pattern_is_the_dense_nonzeros(name):
    f, x = EXACT[name], RNG.random(6) + 0.1
    pattern = dualad.jacobian_sparsity(f)(x)
    assert isinstance(pattern, scipy.sparse.csr_array) and pattern.dtype == bool
    np.testing.assert_array_equal(pattern.toarray(), _dense_nonzeros(f, x))


@pytest.mark.parametrize("name", sorted(SUPERSET))
def test_conservative_patterns_contain_the_dense_nonzeros(name):
    f, x = SUPERSET[name], RNG.random(6) + 0.1
    pattern, nonzeros = dualad.jacobian_sparsity(f)(x).toarray(), _dense_nonzeros(f, x)
    assert np.all(pattern >= nonzeros) and pattern.sum() > nonzeros.sum()


def test_the_pattern_is_the_one_at_x():
    below, above = np.array([0.2, 0.3, 0.4]), np.array([0.9, 0.3, 0.4])
    assert dualad.jacobian_sparsity(_branch)(below).nnz == 3
    assert dualad.jacobian_sparsity(_branch)(above).nnz == 5


def test_tree_inputs_and_outputs_are_raveled_in_order():
    def f(a, b):
        return {"s": a[0] * b, "t": np.sum(a)}
    pattern = dualad.jacobian_sparsity(f, argnums=(0, 1))(np.ones(2), np.ones(3))
    expected = np.array([[1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [1, 0, 0, 0, 1], [1, 1, 0, 0, 0]], bool)
    np.testing.assert_array_equal(pattern.toarray(), expected)


ROSEN = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)  # noqa: E731

HESSIANS = {
    "rosenbrock": ROSEN,
    "laplacian energy": lambda x: 0.5 * x[:5] @ (L5 @ x[:5]) + x[5],
    "x·y + x²": lambda x: x[0] * x[1] + x[2] + x[3] * x[3],
    "exp of a sum": lambda x: np.exp(np.sum(x[:3])) + x[4],
    "divide": lambda x: x[0] / x[1] + x[2] / 3.0,
    "einsum x L x": lambda x: np.einsum("i,ij,j->", x[:5], L5, x[:5]),
    "dot": lambda x: np.dot(x[:3], x[3:]),
    "solve with a constant matrix (linear)": lambda x: np.sum(np.linalg.solve(L5, x[:5])) + x[5] ** 2,
    "norm": lambda x: np.linalg.norm(x[:3]) + x[3],
    "where": lambda x: np.sum(np.where(x > 0.5, x ** 2, x * x[0])),
    "cumsum squared": lambda x: np.sum(np.cumsum(x) ** 2),
    "prod": lambda x: np.prod(x[:3]) + x[3],
    "var": lambda x: np.var(x[:3]) + x[4] ** 3,
    "tanh layer": lambda x: np.sum(np.tanh(L5 @ x[:5])),
}


@pytest.mark.parametrize("name", sorted(HESSIANS))
def test_hessian_pattern_is_the_dense_nonzeros(name):
    f, x = HESSIANS[name], RNG.random(6) + 0.1
    pattern = dualad.hessian_sparsity(f)(x)
    assert pattern.shape == (6, 6) and (pattern != pattern.T).nnz == 0
    np.testing.assert_array_equal(pattern.toarray(), np.asarray(dualad.hessian(f)(x)) != 0)


def test_hessian_patterns_that_are_documented_supersets():
    x = RNG.random(6) + 0.1
    for f in (lambda x: np.linalg.det(x[:4].reshape(2, 2)),  # linear algebra: every pair
              lambda x: np.sum(np.maximum(x, 0.5) * x[0])):    # maximum: both candidates
        pattern, nonzeros = dualad.hessian_sparsity(f)(x).toarray(), np.asarray(dualad.hessian(f)(x)) != 0
        assert np.all(pattern >= nonzeros) and pattern.sum() > nonzeros.sum()


def test_unsupported_operations_name_themselves():
    with pytest.raises(TypeError, match="numpy.fft.fft|numpy.fft"):
        dualad.jacobian_sparsity(lambda x: np.fft.fft(x).real)(np.ones(4))
    with pytest.raises(TypeError, match="hessian_sparsity needs .* scalar"):
        dualad.hessian_sparsity(lambda x: x ** 2)(np.ones(3))


# ---- colourings --------------------------------------------------------------------------------
def _random_pattern(m, n, density, seed):
    return scipy.sparse.csr_array(np.random.default_rng(seed).random((m, n)) < density)


def _brusselator_pattern(n=8):
    rhs, y0 = load_example("brusselator").brusselator(n)
    return dualad.jacobian_sparsity(lambda y: rhs(2.0, y))(y0 + 0.1)


@pytest.mark.parametrize("seed", range(4))
def test_column_and_row_colourings_are_valid_and_no_worse_than_group_columns(seed):
    p = _random_pattern(40, 30, 0.08, seed)
    columns, rows = column_coloring(p), row_coloring(p)
    assert is_column_coloring(p, columns) and is_column_coloring(p.T, rows)
    assert n_colors(columns) <= group_columns(p).max() + 1
    assert n_colors(rows) <= group_columns(p.T).max() + 1


def test_brusselator_colours_beat_group_columns():
    p = _brusselator_pattern()
    assert p.nnz == 12 * 8 * 8
    columns = column_coloring(p)
    assert is_column_coloring(p, columns)
    assert n_colors(columns) == 8 < group_columns(p).max() + 1 == 12


def test_a_column_colouring_that_shares_a_row_is_rejected():
    p = scipy.sparse.csr_array(np.array([[1, 1, 0], [0, 1, 1]], dtype=bool))
    assert is_column_coloring(p, [0, 1, 0]) and not is_column_coloring(p, [0, 0, 1])


@pytest.mark.parametrize("seed", range(4))
def test_star_colourings_are_star_colourings(seed):
    p = _random_pattern(30, 30, 0.1, seed)
    p = (p + p.T + scipy.sparse.identity(30, dtype=bool)).astype(bool)
    colors = star_coloring(p)
    assert is_star_coloring(p, colors)
    assert n_colors(colors) <= group_columns(p).max() + 1


def test_the_star_property_is_checked():
    path = scipy.sparse.csr_array(np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool))
    assert not is_star_coloring(path, [0, 1, 0, 1])  # a 2-coloured path on 4 vertices
    assert is_star_coloring(path, [0, 1, 2, 0]) and not is_star_coloring(path, [0, 0, 1, 2])


def test_star_colouring_of_a_grid_laplacian():
    k = 6
    one = scipy.sparse.identity(k)
    d = np.eye(k) + np.eye(k, k=1) + np.eye(k, k=-1)
    p = scipy.sparse.csr_array(scipy.sparse.kron(d, one) + scipy.sparse.kron(one, d)).astype(bool)
    colors = star_coloring(p)
    assert is_star_coloring(p, colors) and n_colors(colors) <= 5


# ---- compressed evaluation ---------------------------------------------------------------------
def _banded(x):
    return np.concatenate([[x[0] ** 2], x[1:] * x[:-1] - np.sin(x[1:]), [np.sum(x[:2])]])


@pytest.mark.parametrize("transform,mode", [("jacobian", "forward"), ("jacobian", "reverse"),
                                            ("jacobian", "auto"), ("jacfwd", None), ("jacrev", None)])
def test_compressed_jacobians_equal_the_dense_one(transform, mode):
    x = RNG.standard_normal(7)
    kwargs = {} if mode is None else {"mode": mode}
    jac = getattr(dualad, transform)(_banded, sparsity=True, **kwargs)
    result = jac(x)
    assert isinstance(result, scipy.sparse.csr_array) and result.dtype == np.float64
    np.testing.assert_allclose(result.toarray(), dualad.jacobian(_banded)(x), rtol=1e-14, atol=1e-14)
    y = RNG.standard_normal(7)  # the cached plan at another point
    np.testing.assert_allclose(jac(y).toarray(), dualad.jacobian(_banded)(y), rtol=1e-14, atol=1e-14)


def test_compressed_jacobian_of_the_brusselator_in_few_passes():
    rhs, y0 = load_example("brusselator").brusselator(8)
    y = y0 + RNG.random(y0.size)
    jac = dualad.jacobian(rhs, argnums=1, sparsity=True)
    np.testing.assert_allclose(jac(2.0, y).toarray(), dualad.jacobian(rhs, argnums=1)(2.0, y),
                               rtol=1e-13, atol=1e-10)
    plan = jac.sparsity_plan(2.0, y)
    assert plan.mode("auto") == "forward" and plan.n_colors("columns") == 8


def test_a_given_pattern_in_any_scipy_form_and_chunks():
    x = RNG.standard_normal(7)
    pattern = dualad.jacobian_sparsity(_banded)(x)
    dense = dualad.jacobian(_banded)(x)
    for given in (pattern, pattern.toarray(), scipy.sparse.coo_matrix(pattern.astype(float)),
                  pattern.toarray().astype(int).tolist()):
        result = dualad.jacfwd(_banded, sparsity=given, chunk=1)(x)
        np.testing.assert_allclose(result.toarray(), dense, rtol=1e-14, atol=1e-14)


def test_a_pattern_with_extra_entries_gives_zeros_there():
    x = RNG.standard_normal(7)
    full = np.ones((8, 7), dtype=bool)
    result = dualad.jacobian(_banded, sparsity=full)(x)
    assert result.nnz == 56
    np.testing.assert_allclose(result.toarray(), dualad.jacobian(_banded)(x), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("name", ["rosenbrock", "laplacian energy", "einsum x L x", "tanh layer",
                                  "exp of a sum"])
def test_compressed_hessians_equal_the_dense_one(name):
    f, x = HESSIANS[name], RNG.random(6) + 0.1
    for mode in ("auto", "forward-over-reverse"):
        result = dualad.hessian(f, sparsity=True, mode=mode)(x)
        assert isinstance(result, scipy.sparse.csr_array) and result.dtype == np.float64
        np.testing.assert_allclose(result.toarray(), dualad.hessian(f)(x), rtol=1e-13, atol=1e-12)


def test_compressed_hessian_of_rosenbrock_uses_three_colours():
    x = RNG.standard_normal(200)
    hess = dualad.hessian(ROSEN, sparsity=True, check=True)
    np.testing.assert_allclose(hess(x).toarray(), dualad.hessian(ROSEN, mode="forward-over-reverse")(x),
                               rtol=1e-13, atol=1e-10)
    assert hess.sparsity_plan(x).n_colors("star") == 3


def test_has_aux_and_keyword_arguments():
    def f(x, scale=1.0):
        return scale * x[1:] * x[:-1], {"n": len(x)}
    jac, aux = dualad.jacobian(f, has_aux=True, sparsity=True)(np.arange(1.0, 5.0), scale=2.0)
    assert aux == {"n": 4}
    np.testing.assert_allclose(jac.toarray(), np.array([[4, 2, 0, 0], [0, 6, 4, 0], [0, 0, 8, 6.0]]))


def test_check_catches_a_pattern_that_misses_a_nonzero():
    x = RNG.standard_normal(7)
    pattern = dualad.jacobian_sparsity(_banded)(x).tolil()
    pattern[3, 2] = False  # drop one nonzero
    for mode in ("forward", "reverse"):
        with pytest.raises(ValueError, match="misses a nonzero of the Jacobian .* row 3"):
            dualad.jacobian(_banded, sparsity=pattern, check=True, mode=mode)(x)
    dualad.jacobian(_banded, sparsity=dualad.jacobian_sparsity(_banded)(x), check=True)(x)
    hess_pattern = dualad.hessian_sparsity(ROSEN)(x).tolil()
    hess_pattern[2, 3] = hess_pattern[3, 2] = False
    with pytest.raises(ValueError, match="misses a nonzero of the Hessian"):
        dualad.hessian(ROSEN, sparsity=hess_pattern, check=True)(x)


@pytest.mark.parametrize("check", [None, True])
def test_a_detected_pattern_that_another_branch_breaks_is_detected_again(check):
    """f branched on x at detection: at a new x the result is checked, and where the other
    branch needs more nonzeros the pattern is detected again (the union) and the result right."""
    jac = dualad.jacobian(_branch, sparsity=True, check=check)
    jac(np.array([0.2, 0.3, 0.4]))  # detected here: diagonal
    x = np.array([0.9, 0.3, 0.4])
    np.testing.assert_allclose(jac(x).toarray(), dualad.jacobian(_branch)(x))
    assert jac.sparsity_plan(x).pattern.nnz > 3


def test_bad_patterns_and_arguments_are_errors_that_say_so():
    x = np.ones(7)
    with pytest.raises(ValueError, match=r"shape \(8, 6\).*shape \(M, 7\)"):
        dualad.jacobian(_banded, sparsity=np.ones((8, 6), bool))(x)
    with pytest.raises(ValueError, match=r"shape \(7, 7\).*shape \(8, 7\)"):
        dualad.jacobian(_banded, sparsity=np.ones((7, 7), bool), mode="reverse")(x)
    with pytest.raises(ValueError, match=r"shape \(6, 6\).*Hessian.*shape \(7, 7\)"):
        dualad.hessian(ROSEN, sparsity=np.eye(6, dtype=bool))(x)
    with pytest.raises(ValueError, match="2-D"):
        dualad.jacobian(_banded, sparsity=np.ones(7, bool))(x)
    with pytest.raises(TypeError, match="sparsity= must be True or a sparsity pattern"):
        dualad.jacobian(_banded, sparsity="diagonal")(x)
    with pytest.raises(ValueError, match="check=True verifies a sparsity pattern"):
        dualad.jacobian(_banded, check=True)
    with pytest.raises(ValueError, match="forward-over-reverse"):
        dualad.hessian(ROSEN, sparsity=True, mode="forward")


def test_numba_functions_with_sparsity_compile_lazily_or_run_their_twin():
    @numba.njit
    def f(x):  # never compiled here: compiled sparse kernels compile at their first call
        return x * 2.0
    for transform in (dualad.jacobian, dualad.jacfwd, dualad.jacrev, dualad.hessian):
        assert callable(transform(f, sparsity=True))
    assert callable(dualad.jacobian_sparsity(f))
    result = dualad.jacobian(f, sparsity=True, jit=False)(np.ones(3))  # its Python twin
    np.testing.assert_allclose(result.toarray(), 2.0 * np.eye(3))
    assert np.array_equal(dualad.jacobian_sparsity(f, jit=False)(np.ones(3)).toarray(), np.eye(3, dtype=bool))


def test_inputs_are_never_modified():
    x = RNG.standard_normal(7)
    before = x.copy()

    def writes(y):
        y[0] = 3.0 * y[0]
        return y * y[1]
    dualad.jacobian_sparsity(writes)(x)
    dualad.jacobian(writes, sparsity=True)(x)
    dualad.jacobian(writes, sparsity=True, mode="reverse")(x)
    np.testing.assert_array_equal(x, before)


def test_sparse_results_go_straight_into_scipy_solvers():
    """csr_array results as scipy's solvers take them: solve_ivp (BDF, Radau) jac=,
    least_squares jac=, minimize(trust-constr) hess=."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import least_squares, minimize, rosen

    def rhs(t, y):  # a stiff chain: y_i' = -k_i y_i + y_{i-1}²
        k = np.arange(1.0, y.size + 1) * 10.0
        return -k * y + np.concatenate([[0.0], y[:-1] ** 2])

    jac = dualad.jacobian(lambda y: rhs(0.0, y), sparsity=True)
    y0 = np.linspace(0.5, 1.0, 20)
    for method in ("BDF", "Radau"):
        ours = solve_ivp(rhs, (0.0, 1.0), y0, method=method, jac=lambda t, y: jac(y),
                         rtol=1e-8, atol=1e-10)
        reference = solve_ivp(rhs, (0.0, 1.0), y0, method=method, rtol=1e-8, atol=1e-10)
        assert ours.success and ours.njev >= 1
        np.testing.assert_allclose(ours.y[:, -1], reference.y[:, -1], rtol=1e-5, atol=1e-9)

    def residuals(p):
        return p[1:] - p[:-1] ** 2 + 0.1 * p[1:] ** 3
    fit = least_squares(residuals, np.full(15, 0.3), jac=dualad.jacobian(residuals, sparsity=True))
    assert fit.success and np.max(np.abs(fit.fun)) < 1e-8

    hess = dualad.hessian(rosen, sparsity=True)
    result = minimize(rosen, np.full(12, 0.8), method="trust-constr", jac=dualad.grad(rosen),
                      hess=hess, options={"gtol": 1e-10, "maxiter": 500})
    np.testing.assert_allclose(result.x, np.ones(12), atol=1e-6)


@pytest.mark.parametrize("f", [
    lambda x: np.dot(x[0], x[1]) * x,
    lambda x: np.einsum(",->", x[0], x[1]) * x,
    lambda x: np.inner(x[0], 2.0) * x,
    lambda x: np.tensordot(x[0], x[1], 0) * x,
    lambda x: np.dot(x[0], 0.0) * x + x,  # a zero constant: no dependence through the product
])
def test_products_of_zero_d_operands_are_traced(f):
    """einsum's assignments of 0-d operands alone: one, reached where the constants are nonzero."""
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dualad.jacobian(f, sparsity=True)(x).toarray(), dualad.jacobian(f)(x))
    pattern = dualad.jacobian_sparsity(f)(x).toarray()
    assert not np.any((dualad.jacobian(f)(x) != 0) & ~pattern.astype(bool))
