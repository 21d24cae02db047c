"""The special-point tables shared by tests/test_special_points.py (the Python path) and
tests/compiled/test_special_points_compiled.py (the kernels give exactly the Python path's
numbers). See test_special_points.py for what the rows pin."""

import math

import numba
import numpy as np

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
    # overflow: a·a = inf makes log's f'' = -1/inf² = -0, against (2a)·(2a) = inf; both paths
    # form (f''·2a)·2a = 0 (in the order f''·(2a·2a) it is nan)
    ("np.log(1.0 + a * a) + b", (1e200, 1.0), INF, (0.0, 1.0), ((0.0, 0.0), (0.0, 0.0))),
    ("a / (1.0 + a * a) * b", (-1e200, 2.0), -0.0, (0.0, 0.0), ((0.0, 0.0), (0.0, 0.0))),
    # exp(800) = inf: every entry is inf · 0 somewhere. Forward-over-reverse hvp along (1, 0)
    # meets cos(b) as a Dual of tangent 0 (nan against inf, as the Python tape), not a float
    ("np.sin(b) * np.exp(a)", (800.0, 0.3), INF, (NAN, NAN), ((NAN, NAN), (NAN, NAN))),
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


def python_scalar(expr, t):
    k = SCALAR_EXPRS.index(expr)
    with np.errstate(all="ignore"):
        value, first = dualad.value_and_grad(SCALAR_F, jit=False)(t, k)
        second = dualad.second_derivative(SCALAR_F, jit=False)(t, k)
    return value, first, second


def python_binary(expr, x):
    k = BINARY_EXPRS.index(expr)
    x = np.array(x)
    with np.errstate(all="ignore"):
        value, g = dualad.value_and_grad(BINARY_F, jit=False, mode="forward")(x, k)
        h = dualad.hessian(BINARY_F, jit=False, mode="forward")(x, k)
    return value, g, h
