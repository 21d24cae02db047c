"""Compiled forward-over-reverse (jit/dual_tape.py): the tape recorded and swept in Duals
equals the Python path's forward-over-reverse and the HyperDual kernels, records once per
hvp (O(n)), leaves inputs alone, survives exceptions in f, and compiled auto picks the mode
that dualad.choose_hessian_mode explains."""

import math

import numba
import numpy as np
import pytest

import dualad
from numba_functions import X5, rosen_loop, rosen_vec, scalar_mix, textbook
from special_points import BINARY, BINARY_EXPRS, BINARY_F, SCALAR, SCALAR_EXPRS, SCALAR_F, same


@numba.njit
def _array_code(x):
    y = np.zeros_like(x)  # a buffer of Dual-valued actives
    for i in range(1, len(y)):
        y[i] = y[i - 1] * np.sin(x[i]) + x[0] ** 2
    return np.sum(np.exp(0.1 * y)) + np.sum(x[1:] * x[:-1])


@numba.njit
def _counted(x, counts):
    """Counts its evaluations (one per recording or forward pass); raises for x[0] < 0."""
    counts[0] += 1
    if x[0] < 0.0:
        raise ValueError("x[0] < 0")
    total = 0.0
    for i in range(len(x) - 1):
        total += math.sin(x[i]) * x[i + 1] ** 2
    return total


FUNCTIONS = {"rosen": rosen_loop, "vec": rosen_vec, "textbook": textbook, "mix": scalar_mix,
             "array": _array_code}
HVP = {name: dualad.hvp(f, mode="forward-over-reverse") for name, f in FUNCTIONS.items()}
HESS = {name: dualad.hessian(f, mode="forward-over-reverse") for name, f in FUNCTIONS.items()}
HVP_COUNTED = dualad.hvp(_counted, mode="forward-over-reverse")
HESS_COUNTED = dualad.hessian(_counted, mode="forward-over-reverse")
HVP_ROSEN, HESS_ROSEN = HVP["rosen"], HESS["rosen"]


@numba.njit
def _newton_direction_in_njit(x, v):
    return HVP_ROSEN(x, v) + HVP_ROSEN(x * 0.5, v), HESS_ROSEN(x)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_forward_over_reverse_equals_python_and_hyperdual(name):
    f = FUNCTIONS[name]
    x = X5[:2] + 2.5 if name == "textbook" else X5
    v = np.linspace(-1.0, 2.0, x.size)
    expected = dualad.hessian(f, jit=False, mode="forward-over-reverse")(x)
    np.testing.assert_allclose(expected, dualad.hessian(f, jit=False, mode="forward")(x), rtol=1e-12)
    np.testing.assert_allclose(HESS[name](x), expected, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(HVP[name](x, v), dualad.hvp(f, jit=False, mode="forward-over-reverse")(x, v),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(HVP[name](x, v), expected @ v, rtol=1e-12, atol=1e-12)
    if name in ("rosen", "mix"):  # the compiled HyperDual kernels
        np.testing.assert_allclose(HESS[name](x), dualad.hessian(f, mode="forward")(x), rtol=1e-13)


def test_hvp_and_hessian_kernels_are_callable_from_njit_code():
    x, v = np.linspace(-1.0, 1.0, 30), np.linspace(0.5, 1.5, 30)
    hvp = dualad.hvp(rosen_loop, jit=False, mode="forward-over-reverse")
    product, hess = _newton_direction_in_njit(x, v)
    np.testing.assert_allclose(product, hvp(x, v) + hvp(x * 0.5, v), rtol=1e-13)
    np.testing.assert_allclose(hess, dualad.hessian(rosen_loop, jit=False)(x), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("n", [3, 40, 1000])
def test_hvp_records_once_and_hessian_once_per_chunk(n):
    """O(n): one evaluation of f per hvp at any n (HyperDual hvp makes ceil(n / chunk)),
    ceil(n / chunk) per forward-over-reverse Hessian; inputs unchanged."""
    x, v = np.linspace(0.1, 1.0, n), np.linspace(-1.0, 1.0, n)
    x0, v0, counts = x.copy(), v.copy(), np.zeros(1, np.int64)
    product = HVP_COUNTED(x, v, counts)
    assert counts[0] == 1
    expected = dualad.hvp(_counted, jit=False, mode="forward-over-reverse")(x, v, np.zeros(1, np.int64))
    np.testing.assert_allclose(product, expected, rtol=1e-13, atol=1e-13)
    if n <= 40:
        counts[0] = 0
        hess = HESS_COUNTED(x, counts)
        assert counts[0] == math.ceil(n / dualad.jit.dual_tape.DEFAULT_CHUNK)
        np.testing.assert_allclose(hess @ v, product, rtol=1e-12, atol=1e-12)
    assert np.array_equal(x, x0) and np.array_equal(v, v0)


def test_exception_in_f_leaves_the_kernels_usable():
    x, v, counts = np.linspace(0.1, 1.0, 20), np.ones(20), np.zeros(1, np.int64)
    expected = HVP_COUNTED(x, v, counts)
    for kernel, args in ((HVP_COUNTED, (v,)), (HESS_COUNTED, ())):
        bad = x.copy()
        bad[0] = -1.0
        with pytest.raises(ValueError, match="x\\[0\\] < 0"):
            kernel(bad, *args, counts)
    np.testing.assert_allclose(HVP_COUNTED(x, v, counts), expected, rtol=0)
    np.testing.assert_allclose(HVP_COUNTED(np.linspace(0.1, 1.0, 2000), np.ones(2000), counts)[:20].size, 20)
    with pytest.raises(ValueError, match="different shapes"):
        HVP_COUNTED(x, v[:3], counts)


# ---- special points: exactly the Python path's forward-over-reverse numbers --------------------
SPECIAL = {}


def special(name):
    if name not in SPECIAL:
        SPECIAL[name] = {"scalar hvp": lambda: dualad.hvp(SCALAR_F, mode="forward-over-reverse"),
                         "scalar grad reverse": lambda: dualad.grad(SCALAR_F, mode="reverse"),
                         "binary hessian": lambda: dualad.hessian(BINARY_F, mode="forward-over-reverse"),
                         "binary hvp": lambda: dualad.hvp(BINARY_F, mode="forward-over-reverse")}[name]()
    return SPECIAL[name]


@pytest.mark.parametrize("expr, t", sorted({(row[0], row[1]) for row in SCALAR}))
def test_special_points_scalar_hvp_match_the_python_path(expr, t):
    """The Dual tape's hvp and the float tape's gradient; log(exp(t)) at t = -800 is a zero
    partial (exp underflows) then an infinite one (log at 0): nan on both tapes, 0 · inf."""
    k = SCALAR_EXPRS.index(expr)
    with np.errstate(all="ignore"):
        expected = dualad.hvp(SCALAR_F, jit=False, mode="forward-over-reverse")(t, 1.0, k)
        gradient = dualad.grad(SCALAR_F, jit=False, mode="reverse")(t, k)
    assert same(special("scalar hvp")(t, 1.0, k), expected), (expr, t, expected)
    assert same(special("scalar grad reverse")(t, k), gradient), (expr, t, gradient)


@pytest.mark.parametrize("expr, x", sorted({(row[0], row[1]) for row in BINARY}))
def test_special_points_binary_hessian_and_hvp_match_the_python_path(expr, x):
    k, x, v = BINARY_EXPRS.index(expr), np.array(x), np.array([1.0, -2.0])
    with np.errstate(all="ignore"):
        hess = dualad.hessian(BINARY_F, jit=False, mode="forward-over-reverse")(x, k)
        product = dualad.hvp(BINARY_F, jit=False, mode="forward-over-reverse")(x, v, k)
    assert same(special("binary hessian")(x, k), hess), (expr, x, hess)
    assert same(special("binary hvp")(x, v, k), product), (expr, x, product)


@numba.njit
def _zero_factor(x, k):
    """A factor of value 0 whose tangent along v = e0 is 0 (x[1]) against a partial of
    finite value and nan tangent: arctan's at inf (1 / (1 + a²): 0, its derivative nan), and
    log's at 1e-200, whose derivative -1/a² overflows. k = 2: the zero reaches the arctan
    node through the sweep, as an adjoint."""
    if k == 0:
        return np.arctan(x[0]) * x[1]
    if k == 1:
        return np.log(x[0]) * x[1]
    return x[1] * (np.arctan(x[0]) * x[2])


@pytest.mark.parametrize("k, x0", [(0, np.inf), (1, 1e-200), (2, np.inf)])
def test_a_zero_factor_meets_a_nan_tangent_as_a_product(k, x0):
    # The Python tape multiplies 0 by a finite partial (0 · nan tangent = nan) and masks only
    # 0 · inf. Guards: the compiled recording and sweep dropping the zero as passing nothing
    # (hvp 0 where the Hessian's own row and the Python path give nan).
    x, v = np.array([x0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    with np.errstate(all="ignore"):
        expected = dualad.hvp(_zero_factor.py_func, mode="forward-over-reverse", jit=False)(x, v, k)
    assert np.isnan(expected[0])
    assert same(dualad.hvp(_zero_factor, mode="forward-over-reverse")(x, v, k), expected), expected


# ---- float-typed partials against an inf or nan adjoint ----------------------------------------
@numba.njit
def _float_partials(x, k):
    """Rules whose partial is a float (np.maximum's 1 or 0, abs's sign) below an adjoint that
    is inf or nan at x[1] = inf or nan; k = 4, 5: a float partial on a scale with a Dual
    partial (sin) of x[9], outside the first chunk of 8; k = 6: a Dual cotangent without
    tangent; k = 7: a zero cotangent with nan tangents through np.sum."""
    if k == 0:
        return np.sum(np.maximum(x[:2], x[2:4]) ** 2) + x[8] * x[9]
    if k == 1:
        return np.sum(np.minimum(x[:2], -x[2:4]) ** 2) + x[8] * x[9]
    if k == 2:
        return np.abs(x[1]) ** 2 * x[2] + np.fmax(x[0], x[3]) ** 2
    if k == 3:
        return np.sum(np.clip(x[:4], -1.0, np.inf) ** 2) + x[1] * x[9]
    if k == 4:
        return np.maximum(np.sin(x[9]) * 0.5, x[1]) ** 2 + x[0] * x[1]
    if k == 5:
        return np.maximum(np.sin(x[9]), x[1] - x[0]) ** 2 * x[2]
    if k == 6:
        # a Dual cotangent without tangent (0.1's) meeting the weight x[1] = inf or nan: the
        # Python tape adds nan · 0 there, which the compiled sweep must not skip as if a float
        return x[1] * np.maximum(x[2] - 1.0, 0.1) * np.maximum(x[3] - 1.0, 0.1)
    # a cotangent of value 0 with nan tangents (1 / Σ at inf) meeting np.sum's entries
    return np.log(np.sum(np.exp(x[:3]))) + x[8] * x[9]


FLOAT_PARTIAL_HESS = dualad.hessian(_float_partials, mode="forward-over-reverse")
FLOAT_PARTIAL_HVP = dualad.hvp(_float_partials, mode="forward-over-reverse")
FLOAT_PARTIAL_AUTO = dualad.hessian(_float_partials)


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("k", range(8))
def test_float_typed_partials_at_inf_and_nan_match_the_python_path(k, special):
    """The Python tape multiplies a cotangent by a float partial as a float: no
    0 · (an inf or nan cotangent) in the tangents. Guards: the compiled sweep adding ẇ·a
    with ẇ = 0 for every weight, which gives np.maximum(x, 0.5)**2 at x = inf a Hessian row
    of nan where the Python path gives 2 (active.float_like)."""
    x = np.linspace(0.3, 1.2, 16)
    x[1] = special
    v = np.linspace(-1.0, 2.0, 16)
    with np.errstate(all="ignore"):
        hess = dualad.hessian(_float_partials, jit=False, mode="forward-over-reverse")(x, k)
        product = dualad.hvp(_float_partials, jit=False, mode="forward-over-reverse")(x, v, k)
    assert same(FLOAT_PARTIAL_HESS(x, k), hess), (k, special, FLOAT_PARTIAL_HESS(x, k), hess)
    assert same(FLOAT_PARTIAL_HVP(x, v, k), product), (k, special)
    # the default Hessian at 16 inputs: forward-over-reverse through detected sparsity, which
    # gives way to the dense passes where a weight is not finite
    decision = dualad.choose_hessian_mode(_float_partials, x, k)
    assert decision.mode == "forward-over-reverse", decision
    assert same(FLOAT_PARTIAL_AUTO(x, k), FLOAT_PARTIAL_HESS(x, k)), (k, special)
    if k == 0 and special == np.inf:  # max(x1, x3)**2 = x1**2 near x1 = inf: 2, not nan
        assert hess[1, 1] == 2.0 and np.all(np.isfinite(hess[:4, :4]))


# ---- compiled auto ------------------------------------------------------------------------------------
HESS_AUTO = dualad.hessian(_counted)
HVP_AUTO = dualad.hvp(_counted)


@numba.njit
def _hessian_inside(x, counts):
    """The auto Hessian kernel as njit code calls it: compiled whole, picking inside numba."""
    return HESS_AUTO(x, counts)


@pytest.mark.parametrize("n", [4, 8, 9, 10, 16, 200])
def test_compiled_auto_hessian_picks_what_choose_hessian_mode_explains(n):
    x = np.linspace(0.1, 1.0, n)
    decision = dualad.choose_hessian_mode(_counted, x, np.zeros(1, np.int64))
    assert "compiled auto" in decision.reason
    blocks = math.ceil(n / dualad.jit.kernels.DEFAULT_CHUNK)
    # _counted's Hessian is tridiagonal: forward-over-reverse detects that (one recording on
    # tracers) and takes one pass for its 3 colours, fewer than the ceil(n / 8) >= 2 dense ones
    passes = (1 if n <= dualad.jit.kernels.ONE_PASS else  # one symmetric block holds them all
              2 if decision.mode == "forward-over-reverse" else blocks * (blocks + 1) // 2)
    expected = dualad.hessian(_counted, jit=False)(x, np.zeros(1, np.int64))
    for hessian in (HESS_AUTO, _hessian_inside):  # from Python, and inside njit code
        counts = np.zeros(1, np.int64)
        hess = hessian(x, counts)
        assert counts[0] == passes, (decision, hessian)
        np.testing.assert_allclose(hess, expected, rtol=1e-12, atol=1e-12)
    if n == 200:  # 325 HyperDual passes against 50 recordings: no cost model takes the passes
        assert decision.mode == "forward-over-reverse"
    if n <= dualad.jit.kernels.ONE_PASS:
        assert decision.mode == "forward"
        # inside njit code both one-block widths compile; n <= DEFAULT_CHUNK takes the narrower
        kernels = dualad.jit.kernels
        inside = kernels.ONE_PASS if n > kernels.DEFAULT_CHUNK else kernels.DEFAULT_CHUNK
        assert kernels.compiled_takes_one_pass(n) == (inside == kernels.ONE_PASS)
        assert f"of {inside} inside njit code" in decision.reason, decision.reason


def test_compiled_auto_hvp_is_forward_within_one_chunk_else_forward_over_reverse():
    width = dualad.jit.kernels.DEFAULT_CHUNK
    for n, evaluations in ((width, 1), (5 * width, 1)):  # one HyperDual pass; one recording
        x, v, counts = np.linspace(0.1, 1.0, n), np.ones(n), np.zeros(1, np.int64)
        product = HVP_AUTO(x, v, counts)
        assert counts[0] == evaluations
        np.testing.assert_allclose(product, HVP_COUNTED(x, v, counts), rtol=1e-13, atol=1e-13)
