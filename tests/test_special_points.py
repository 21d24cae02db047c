"""Special points: the README's conventions, identical on the compiled and the Python path.

One table per arity. A row is (expression, point, value, first, second): the Python path must
give these (0, ±inf and nan exactly, other numbers to rounding), and the compiled kernels
exactly what the Python path gives (nan == nan).
Adding a point is one line. Every expression of a table is one branch of one generated
@njit function, so the whole table costs one compilation per kernel kind.

Rows also pin item by item why the numbers are what they are:
  * where a first derivative is ±inf, the second derivative is nan: the chain rule multiplies
    f' = ±inf by the seed's zero second-order part (JAX gives nan the same way);
  * x ** z keeps JAX's constants where its formula is 0·inf, and is differentiated right
    where smooth, by every mode (nested derivatives, forward-over-reverse, hyper-duals).
"""

import math

import mpmath as mp
import numba
import numpy as np
import pytest

import dualad

INF, NAN = math.inf, math.nan
LN2 = math.log(2.0)
PI = math.pi

# ---- scalar expressions of t: (expression, t, f, f', f'') ------------------------------------
SCALAR = [
    ("np.sqrt(t)", 0.0, 0.0, INF, NAN),
    ("math.sqrt(t)", 0.0, 0.0, INF, NAN),
    ("np.sqrt(t)", -1.0, NAN, NAN, NAN),
    ("np.sqrt(t * t)", 0.0, 0.0, NAN, NAN),           # sqrt'(0) · 2t = inf · 0
    ("np.cbrt(t)", 0.0, 0.0, INF, NAN),
    ("np.log(t)", 0.0, -INF, INF, NAN),
    ("math.log(t)", 0.0, -INF, INF, NAN),
    ("np.log2(t)", 0.0, -INF, INF, NAN),
    ("np.log10(t)", 0.0, -INF, INF, NAN),
    ("np.log1p(t)", -1.0, -INF, INF, NAN),
    ("np.log(np.exp(t))", -800.0, -INF, NAN, NAN),   # exp underflows: log'(0) · 0 = inf · 0
    ("np.exp(t)", -800.0, 0.0, 0.0, 0.0),
    ("np.arcsin(t)", 1.0, PI / 2, INF, NAN),
    ("np.arcsin(t)", -1.0, -PI / 2, INF, NAN),
    ("math.asin(t)", 1.0, PI / 2, INF, NAN),
    ("np.arccos(t)", 1.0, 0.0, -INF, NAN),
    ("np.arccos(t)", -1.0, PI, -INF, NAN),
    ("np.arctanh(t)", 1.0, INF, INF, NAN),
    ("np.arctanh(t)", -1.0, -INF, INF, NAN),
    ("np.arccosh(t)", 1.0, 0.0, INF, NAN),
    ("np.hypot(t, 0.0)", 0.0, 0.0, NAN, NAN),
    ("math.hypot(0.0, t)", 0.0, 0.0, NAN, NAN),
    ("np.hypot(t, t)", 0.0, 0.0, NAN, NAN),
    ("np.arctan2(t, 0.0)", 0.0, 0.0, NAN, NAN),
    ("math.atan2(0.0, t)", 0.0, 0.0, NAN, NAN),
    ("np.arctan2(t, t)", 0.0, 0.0, NAN, NAN),
    # x ** z: ∂/∂x x**0 = 0 and ∂²/∂x² x**1 = 0 at x = 0 too (JAX)
    ("t ** 0", 0.0, 1.0, 0.0, 0.0),
    ("t ** 0.0", 0.0, 1.0, 0.0, 0.0),
    ("t ** 0", 2.0, 1.0, 0.0, 0.0),
    ("t ** 1", 0.0, 0.0, 1.0, 0.0),
    ("t ** 1.0", 0.0, 0.0, 1.0, 0.0),
    ("t ** 2", 0.0, 0.0, 0.0, 2.0),
    ("t ** 3", -2.0, -8.0, 12.0, -12.0),
    ("t ** 0.5", 0.0, 0.0, INF, NAN),
    ("t ** -1", 0.0, INF, -INF, NAN),
    ("t ** -1.0", 0.0, INF, -INF, NAN),
    ("t ** 1.5", -1.0, NAN, NAN, NAN),
    # ∂/∂z 0**z = 0 (log 0 replaced by log 1), z = 0 included
    ("0.0 ** t", 2.0, 0.0, 0.0, 0.0),
    ("0.0 ** t", 0.0, 1.0, 0.0, 0.0),
    ("2.0 ** t", 0.0, 1.0, LN2, LN2 ** 2),
    # poles
    ("1.0 / t", 0.0, INF, -INF, NAN),
    ("t / 0.0", 0.0, NAN, INF, NAN),
    ("t / 0.0", 1.0, INF, INF, NAN),
    ("np.reciprocal(t)", 0.0, INF, -INF, NAN),
    # kinks and ties (JAX): abs'(0) = 1, ties split evenly; Python's max/min pick the first
    ("np.abs(t)", 0.0, 0.0, 1.0, 0.0),
    ("abs(t)", -0.0, 0.0, 1.0, 0.0),
    ("math.fabs(t)", 0.0, 0.0, 1.0, 0.0),
    ("np.maximum(t, 0.0)", 0.0, 0.0, 0.5, 0.0),
    ("np.minimum(0.0, t)", 0.0, 0.0, 0.5, 0.0),
    ("np.maximum(t, t)", 1.0, 1.0, 1.0, 0.0),
    ("max(t, 0.0)", 0.0, 0.0, 1.0, 0.0),
    ("max(0.0, t)", 0.0, 0.0, 0.0, 0.0),
    ("min(t, 0.0)", 0.0, 0.0, 1.0, 0.0),
    ("t % 1.0", 1.0, 0.0, 1.0, 0.0),
    ("3.0 % t", 1.5, 0.0, -2.0, 0.0),
    # piecewise constant: derivative 0, at the jumps too (JAX)
    ("np.sign(t)", 0.0, 0.0, 0.0, 0.0),
    ("np.floor(t)", 1.0, 1.0, 0.0, 0.0),
    ("math.floor(t)", 1.0, 1.0, 0.0, 0.0),
    ("np.ceil(t)", 1.0, 1.0, 0.0, 0.0),
    ("np.rint(t)", 0.5, 0.0, 0.0, 0.0),
    ("np.trunc(t)", -1.0, -1.0, 0.0, 0.0),
    ("t // 1.0", 1.0, 1.0, 0.0, 0.0),
]

# ---- expressions of x = (a, b): (expression, (a, b), f, ∇f, ∇²f) -------------------------------
# ∇f is forward mode's (value_and_grad, mode="forward"), which carries both directions in one
# pass: where one partial is ±inf or nan, the other direction's entry is inf·0 = nan too.
# Reverse mode keeps it (a / b at (1, 0): (inf, −inf)); each mode is identical on both paths.
BINARY = [
    ("a ** b", (2.0, 0.0), 1.0, (0.0, LN2), ((0.0, 0.5), (0.5, LN2 ** 2))),
    ("a ** b", (2.0, 1.0), 2.0, (1.0, 2 * LN2), ((0.0, 1 + LN2), (1 + LN2, 2 * LN2 ** 2))),
    # at a = 0: ∂/∂b = 0 (log 0 → log 1); ∂²/∂a∂b = a**(b−1) (1 + b log a) with log 0 → 0,
    # and 0 at a = b = 0, where both first partials are the constant 0
    ("a ** b", (0.0, 0.0), 1.0, (0.0, 0.0), ((0.0, 0.0), (0.0, 0.0))),
    ("a ** b", (0.0, 1.0), 0.0, (1.0, 0.0), ((0.0, 1.0), (1.0, 0.0))),
    ("a ** b", (0.0, 2.0), 0.0, (0.0, 0.0), ((2.0, 0.0), (0.0, 0.0))),
    # forward mode: ∂/∂a = inf makes ∂/∂b inf·0 = nan (reverse mode gives (inf, 0))
    ("a ** b", (0.0, 0.5), 0.0, (INF, NAN), ((NAN, NAN), (NAN, NAN))),
    ("a ** b", (-2.0, 3.0), -8.0, (NAN, NAN), ((NAN, NAN), (NAN, NAN))),  # ∂/∂b: log(−2)
    ("a / b", (1.0, 0.0), INF, (NAN, NAN), ((NAN, NAN), (NAN, NAN))),  # inf·1 + (−inf)·0
    ("a / b", (0.0, 0.0), NAN, (NAN, NAN), ((NAN, NAN), (NAN, NAN))),
    ("np.arctan2(a, b)", (0.0, 0.0), 0.0, (NAN, NAN), ((NAN, NAN), (NAN, NAN))),
    ("np.hypot(a, b)", (0.0, 0.0), 0.0, (NAN, NAN), ((NAN, NAN), (NAN, NAN))),
    ("np.maximum(a, b)", (1.0, 1.0), 1.0, (0.5, 0.5), ((0.0, 0.0), (0.0, 0.0))),
    ("np.minimum(a, b)", (1.0, 1.0), 1.0, (0.5, 0.5), ((0.0, 0.0), (0.0, 0.0))),
    ("a % b", (3.0, 1.5), 0.0, (1.0, -2.0), ((0.0, 0.0), (0.0, 0.0))),
]


def _dispatcher(name, head, prelude, exprs):
    """One @njit function whose branch k returns expression k: one compilation per kernel."""
    lines = [f"def {name}({head}, k):"] + [f"    {line}" for line in prelude]
    for k, expr in enumerate(exprs):
        lines += [f"    if k == {k}:", f"        return {expr}"]
    lines.append("    raise ValueError('no such expression')")
    namespace = {"np": np, "math": math}
    exec("\n".join(lines), namespace)  # noqa: S102  (source built from the tables above)
    return numba.njit(namespace[name])


SCALAR_EXPRS = sorted({row[0] for row in SCALAR})
BINARY_EXPRS = sorted({row[0] for row in BINARY})
SCALAR_F = _dispatcher("scalar_f", "t", [], SCALAR_EXPRS)
BINARY_F = _dispatcher("binary_f", "x", ["a, b = x[0], x[1]"], BINARY_EXPRS)


def same(actual, expected):
    """Equal entry by entry, nan equal to nan, shapes included: one path against another."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    return actual.shape == expected.shape and np.array_equal(actual, expected, equal_nan=True)


def close(actual, expected):
    """Against the table: 0, ±inf and nan exactly, other numbers to rounding."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    return actual.shape == expected.shape and np.allclose(actual, expected, rtol=4e-16, atol=0.0,
                                                          equal_nan=True)


def _python_scalar(expr, t):
    k = SCALAR_EXPRS.index(expr)
    with np.errstate(all="ignore"):
        value, first = dualad.value_and_grad(SCALAR_F, jit=False)(t, k)
        second = dualad.second_derivative(SCALAR_F, jit=False)(t, k)
    return value, first, second


def _python_binary(expr, x):
    k = BINARY_EXPRS.index(expr)
    x = np.array(x)
    with np.errstate(all="ignore"):
        value, g = dualad.value_and_grad(BINARY_F, jit=False, mode="forward")(x, k)
        h = dualad.hessian(BINARY_F, jit=False, mode="forward")(x, k)
    return value, g, h


@pytest.mark.parametrize("expr, t, value, first, second", SCALAR)
def test_python_path_follows_the_conventions(expr, t, value, first, second):
    got = _python_scalar(expr, t)
    assert all(close(g, e) for g, e in zip(got, (value, first, second))), (expr, t, got)


@pytest.mark.parametrize("expr, x, value, gradient, hessian", BINARY)
def test_python_path_follows_the_conventions_in_two_arguments(expr, x, value, gradient, hessian):
    got = _python_binary(expr, x)
    assert all(close(g, e) for g, e in zip(got, (value, gradient, hessian))), (expr, x, got)


# ---- compiled kernels: exactly the Python path's numbers --------------------------------------
# Built once, shared by the tests below (each is one numba compilation of the whole table).
KERNELS = {}


def kernel(name):
    if name not in KERNELS:
        KERNELS[name] = {
            "scalar value_and_grad": lambda: dualad.value_and_grad(SCALAR_F),
            "scalar derivative": lambda: dualad.derivative(SCALAR_F),
            "scalar second_derivative": lambda: dualad.second_derivative(SCALAR_F),
            "binary value_and_grad": lambda: dualad.value_and_grad(BINARY_F, mode="forward"),
            "binary grad reverse": lambda: dualad.grad(BINARY_F, mode="reverse"),
            "binary hessian": lambda: dualad.hessian(BINARY_F),
        }[name]()
    return KERNELS[name]


@pytest.mark.parametrize("expr, t, value, first, second", SCALAR)
def test_compiled_scalar_kernels_match_the_python_path(expr, t, value, first, second):
    k = SCALAR_EXPRS.index(expr)
    expected = _python_scalar(expr, t)
    got_value, got_first = kernel("scalar value_and_grad")(t, k)
    got = (got_value, got_first, kernel("scalar second_derivative")(t, k))
    assert all(same(g, e) for g, e in zip(got, expected)), (expr, t, got, expected)
    assert same(kernel("scalar derivative")(t, k), expected[1])


@pytest.mark.parametrize("expr, x, value, gradient, hessian", BINARY)
def test_compiled_gradient_and_hessian_kernels_match_the_python_path(expr, x, value, gradient,
                                                                     hessian):
    k, x = BINARY_EXPRS.index(expr), np.array(x)
    expected = _python_binary(expr, x)
    got_value, got_gradient = kernel("binary value_and_grad")(x, k)
    got = (got_value, got_gradient, kernel("binary hessian")(x, k))
    assert all(same(g, e) for g, e in zip(got, expected)), (expr, x, got, expected)
    with np.errstate(all="ignore"):
        reverse = dualad.grad(BINARY_F, mode="reverse", jit=False)(x, k)
    assert same(kernel("binary grad reverse")(x, k), reverse), (expr, x, reverse)


# ---- every mode, where the table's numbers are finite --------------------------------------------
# A partial that is itself differentiated (nested derivatives, forward-over-reverse) must be
# right there, not only the hyper-dual's second partial: no constant branch may hide a slope.
FINITE_SCALAR = [row for row in SCALAR if np.all(np.isfinite(np.array(row[2:], dtype=float)))]
# At a = 0 with 0 < b <= 1 (the edge of the power's domain, where the true ∂²/∂a∂b is −inf)
# the mixed partial depends on the order nested modes take it, as in JAX: ∂/∂b of ∂/∂a gives
# 0**(b−1) (the hyper-dual's value), ∂/∂a of ∂/∂b gives 0 (log 0 → log 1 is constant in a).
ORDER_DEPENDENT = [("a ** b", (0.0, 1.0))]
FINITE_BINARY = [row for row in BINARY if row[:2] not in ORDER_DEPENDENT and
                 np.all(np.isfinite(np.hstack([np.ravel(v) for v in row[2:]])))]


@pytest.mark.parametrize("expr, t, value, first, second", FINITE_SCALAR)
def test_nested_modes_give_the_conventions_too(expr, t, value, first, second):
    k = SCALAR_EXPRS.index(expr)
    d = dualad.derivative
    f = lambda s: SCALAR_F(s, k)  # noqa: E731
    assert close(d(d(f, jit=False), jit=False)(t), second)
    on_vector = lambda x: SCALAR_F(x[0], k)  # noqa: E731
    x = np.array([t])
    assert close(dualad.hessian(on_vector, mode="forward-over-reverse", jit=False)(x), [[second]])
    assert close(dualad.jacfwd(dualad.grad(on_vector, mode="reverse", jit=False), jit=False)(x),
                 [[second]])


@pytest.mark.parametrize("expr, x, value, gradient, hessian", FINITE_BINARY)
def test_nested_modes_give_the_conventions_in_two_arguments(expr, x, value, gradient, hessian):
    k, x = BINARY_EXPRS.index(expr), np.array(x)
    f = lambda v: BINARY_F(v, k)  # noqa: E731
    for mode in ("forward", "reverse"):
        jac_of_grad = dualad.jacfwd(dualad.grad(f, mode=mode, jit=False), jit=False)(x)
        assert close(jac_of_grad, hessian), (mode, jac_of_grad)
    assert close(dualad.hessian(f, mode="forward-over-reverse", jit=False)(x), hessian)


def test_mixed_partials_at_the_edge_of_the_power_are_order_dependent_as_documented():
    (expr, x), = ORDER_DEPENDENT
    f = lambda v: BINARY_F(v, BINARY_EXPRS.index(expr))  # noqa: E731
    jac_of_grad = dualad.jacfwd(dualad.grad(f, mode="reverse", jit=False), jit=False)(np.array(x))
    assert same(jac_of_grad, [[0.0, 1.0], [0.0, 0.0]])


# ---- x ** p near and at p = 0, 1, 2: every mode against mpmath --------------------------------
mp.mp.dps = 30


def _mp_partial(orders, x, p):
    """∂^(i+j) x**p / ∂x^i ∂p^j at (x, p) by mpmath, 30 digits."""
    return float(mp.diff(lambda a, b: mp.power(a, b), (mp.mpf(x), mp.mpf(p)), orders))


@pytest.mark.parametrize("p", [0.0, 1e-3, 1.0, 2.0, -1.0, 2.5])
@pytest.mark.parametrize("x", [0.5, 2.0])
def test_power_in_both_arguments_by_every_mode_against_mpmath(x, p):
    """Second derivatives by nesting (either order), forward-over-reverse and hyper-duals, and
    third derivatives by nesting a derivative over a hyper-dual one: the partials of x ** p are
    differentiated right at p = 0 and p = 1, where the conventions live (issue 12 item 3)."""
    d = dualad.derivative
    power = lambda a, b: a ** b  # noqa: E731
    expected_xp = _mp_partial((1, 1), x, p)
    assert d(lambda b: d(lambda a: power(a, b), jit=False)(x), jit=False)(p) == pytest.approx(
        expected_xp, rel=1e-13)
    assert d(lambda a: d(lambda b: power(a, b), jit=False)(p), jit=False)(x) == pytest.approx(
        expected_xp, rel=1e-13)
    v = np.array([x, p])
    expected = [[_mp_partial((2, 0), x, p), expected_xp], [expected_xp, _mp_partial((0, 2), x, p)]]
    for mode in ("forward", "forward-over-reverse"):
        h = dualad.hessian(lambda u: u[0] ** u[1], mode=mode, jit=False)(v)
        np.testing.assert_allclose(h, expected, rtol=1e-13, atol=1e-15, err_msg=mode)
    d2 = dualad.second_derivative
    third_xxp = d(lambda b: d2(lambda a: power(a, b), jit=False)(x), jit=False)(p)
    third_xpp = d(lambda a: d2(lambda b: power(a, b), jit=False)(p), jit=False)(x)
    assert third_xxp == pytest.approx(_mp_partial((2, 1), x, p), rel=1e-12, abs=1e-15)
    assert third_xpp == pytest.approx(_mp_partial((1, 2), x, p), rel=1e-12, abs=1e-15)


def test_default_hessian_of_a_shared_exponent_at_zero():
    """sum(u[:-1] ** u[-1]) at n = 150, exponent 0: the default (forward-over-reverse at this
    size) against the closed form ∂²/∂u_i∂p = 1/u_i, ∂²/∂p² = Σ log² u_i, ∂²/∂u_i² = 0."""
    u = np.append(np.linspace(0.5, 3.0, 149), 0.0)
    h = dualad.hessian(lambda v: np.sum(v[:-1] ** v[-1]))(u)
    expected = np.zeros((150, 150))
    expected[:-1, -1] = expected[-1, :-1] = 1.0 / u[:-1]
    expected[-1, -1] = np.sum(np.log(u[:-1]) ** 2)
    np.testing.assert_allclose(h, expected, rtol=1e-13, atol=0.0)


# ---- Python-number constants: NumPy's semantics, never ZeroDivisionError (item 11) --------------
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power", "maximum",
                                  "minimum", "remainder", "floor_divide", "arctan2", "hypot"])
@pytest.mark.parametrize("zero", [0.0, 0, -0.0])
def test_a_python_zero_constant_divides_like_numpy(name, zero):
    """A rule with a Python float or int constant gives what the same NumPy float gives."""
    ufunc = getattr(np, name)
    x = np.array([0.0, 1.0, -2.0])
    results = []
    for constant in (zero, np.float64(zero)):
        for fn in (lambda v: ufunc(v, constant), lambda v: ufunc(constant, v)):
            with np.errstate(all="ignore"):
                results.append((dualad.grad(lambda v: np.sum(fn(v)), mode="forward", jit=False)(x),
                                dualad.grad(lambda v: np.sum(fn(v)), mode="reverse", jit=False)(x),
                                dualad.hessian(lambda v: np.sum(fn(v)), mode="forward", jit=False)(x)))
    for python, numpy_constant in zip(results[:2], results[2:]):
        assert all(same(a, b) for a, b in zip(python, numpy_constant)), (name, python, numpy_constant)


def test_dividing_by_a_python_zero_gives_inf():
    with np.errstate(all="ignore"):
        assert same(dualad.grad(lambda x: np.sum(x / 0.0), jit=False)(np.array([1.0, 2.0])), [INF, INF])
        assert same(dualad.grad(lambda x: np.sum(x / 0), mode="reverse", jit=False)(np.array([1.0])),
                    [INF])
