"""The rule table: every elementwise primitive's value, first and second partials.

This is the only place a derivative formula is written. Dual, HyperDual (and later the
reverse tape and the numba overloads) are generated from these entries.

A unary rule y = f(x) gives
    first[0](x, y)          -> f'(x)
    second[(0, 0)](x, y, d) -> f''(x), where d = f'(x) (so rules can reuse it)
A binary rule y = f(x, z) gives
    first[i](x, z, y)       -> ∂y/∂(x, z)[i]
    second[(i, j)](x, z, y) -> ∂²y/∂i∂j for i <= j
A partial that is identically zero is ``None``: the number types skip the term entirely.

Formulas reuse the output y where that is cheaper (d exp = y, d tanh = 1 - y²), and are
written with NumPy ufuncs only, so they apply elementwise to arrays and to nested duals.

Conventions at special points follow JAX, and each is stated in the rule's ``note``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import numpy as np

__all__ = ["Rule", "RULES", "BY_UFUNC", "MATH_NAMES", "HELPERS", "helper", "select", "erf", "erfc"]

INF = math.inf


@dataclass(frozen=True)
class Rule:
    """One primitive: value, partials and the open box where it is smooth."""

    name: str
    value: Callable
    first: tuple  # one callable (or None) per argument
    second: dict  # {(i, j): callable or None}, i <= j
    domain: tuple  # ((lo, hi), ...) per argument: smooth inside, except isolated points in `note`
    ufunc: Optional[np.ufunc] = None  # the NumPy ufunc this rule stands for, if any
    note: str = ""
    arity: int = field(init=False)
    operator: Optional[str] = None  # Python's operator: "add" for + (__add__, operator.add, +=)
    math_names: tuple = ()  # the math module's spellings (math.asin for arcsin)
    compiled_value: Optional[Callable] = None  # what compiled code calls for the value, where
                                               # the ufunc is missing or slow in numba

    def __post_init__(self):
        object.__setattr__(self, "arity", len(self.first))


# erf/erfc are not NumPy ufuncs. Python's math has them; the compiled path overloads these
# two names with math.erf/math.erfc directly.
_erf_loop = np.vectorize(math.erf, otypes=[np.float64])
_erfc_loop = np.vectorize(math.erfc, otypes=[np.float64])


def _elementwise(loop, name):
    def fn(x):
        # A number type (Dual, HyperDual, ...) exposes _apply_rule; plain arrays go to the loop.
        if hasattr(x, "_apply_rule"):
            return x._apply_rule(RULES[name], (x,))
        out = loop(x)
        return out[()] if out.ndim == 0 else out

    fn.__name__ = name
    fn.__doc__ = f"{name}(x), elementwise; accepts dual numbers."
    return fn


erf = _elementwise(_erf_loop, "erf")
erfc = _elementwise(_erfc_loop, "erfc")


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

RULES: dict[str, Rule] = {}


def _unary(name, value, first, second, domain=(-INF, INF), ufunc=None, note=""):
    RULES[name] = Rule(name, value, (first,), {(0, 0): second}, (domain,), ufunc, note)


def _binary(name, value, first, second, domain=((-INF, INF), (-INF, INF)), ufunc=None, note=""):
    RULES[name] = Rule(name, value, tuple(first), dict(second), tuple(domain), ufunc, note)


# --- arithmetic -----------------------------------------------------------------------
_binary("add", np.add, (lambda x, z, y: 1.0, lambda x, z, y: 1.0),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.add)
_binary("subtract", np.subtract, (lambda x, z, y: 1.0, lambda x, z, y: -1.0),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.subtract)
_binary("multiply", np.multiply, (lambda x, z, y: z, lambda x, z, y: x),
        {(0, 0): None, (0, 1): lambda x, z, y: 1.0, (1, 1): None}, ufunc=np.multiply)
# np.divide, not `/`: a constant divisor may be a Python float or int, and 1.0 / 0.0 raises
# ZeroDivisionError where NumPy (and the value, np.divide) gives inf.
_binary("divide", np.divide, (lambda x, z, y: np.divide(1.0, z), lambda x, z, y: -y / z),
        {(0, 0): None, (0, 1): lambda x, z, y: -1.0 / (z * z),
         (1, 1): lambda x, z, y: 2.0 * y / (z * z)},
        domain=((-INF, INF), (-INF, INF)), ufunc=np.divide,
        note="z = 0 is a pole: partials are ±inf or nan there, as in the value.")


HELPERS: list = []  # functions the rules call: the compiled path compiles each of them


def helper(fn):
    """Mark fn as a helper of the rules' formulas (the compiled path compiles every one)."""
    HELPERS.append(fn)
    return fn


def select(condition, if_true, if_false):
    """np.where, named so that the compiled path can give it a scalar meaning.

    A scalar condition (x ** 2: z == 0 is one bool) picks a branch without broadcasting it."""
    if np.ndim(condition) == 0:
        return if_true if condition else if_false
    return np.where(condition, if_true, if_false)


@helper
def _replace_zero(x):
    return select(x == 0, 1.0, x)


def is_number(z):
    """Whether z is a plain number: not an array, not a dual number (the compiled path, where
    every partial sees plain numbers, overloads this)."""
    return isinstance(z, (int, float, np.number))


def power_of(x, p):
    """x ** p with NumPy's semantics: 0.0 ** -1 is inf, where Python raises ZeroDivisionError
    (and numba does for an integer p, whatever its error model). The compiled path overloads
    this with a fast integer power."""
    return np.power(x, p)


@helper
def _product(c, p):
    """c · p, except 0 where c == 0 and p = ±inf (0 · inf would be nan).

    x**0 is constant even at x = 0, where the power in z·x**(z−1) is inf. Elsewhere this is
    the product itself, never a constant branch: nested modes differentiate it, and d(c·p) =
    dc·p + c·dp is nonzero where c = 0 (d/dz of z·x**(z−1) at z = 0 is 1/x)."""
    return select((c == 0) & np.isinf(p), 0.0, c * p)


@helper
def _pow_dx(x, z, y):
    """∂/∂x x**z = z·x**(z−1); 0 where z == 0, at x = 0 too (x**0 is constant)."""
    if is_number(z):
        # A constant exponent has no derivative to keep: branch freely (arrays pay no select).
        if z == 0:
            return 0.0
        # z = 2: x**(z−1) is x itself, skip the copy NumPy makes for x ** 1 (squares are the
        # commonest power, and this is a whole pass over the array in reverse mode).
        return z * x if z == 2 else z * power_of(x, z - 1)
    return _product(z, power_of(x, z - 1))


@helper
def _pow_dxx(x, z, y):
    """∂²/∂x² x**z = z(z−1)·x**(z−2); 0 where z is 0 or 1, at x = 0 too."""
    if is_number(z):
        if z == 0 or z == 1:
            return 0.0
        # z − 1.0, not z − 1: an integer exponent (int64 in numba, np.int64 here) wraps in
        # z·(z − 1) past |z| ≈ 3.04e9 and gives a wrong sign
        return z * (z - 1.0) * power_of(x, z - 2)
    return _product(z * (z - 1.0), power_of(x, z - 2))


@helper
def _pow_dxz(x, z, y):
    """∂²/∂x∂z x**z = x**(z−1)·(1 + z·log x), log 0 replaced by 0 (as in ∂/∂z); 1/x at z = 0.

    0 at x = z = 0, where both first partials are the constant 0 (so the nested modes give 0
    too, and an inf here would turn the whole Hessian block into nan)."""
    return select((x == 0) & (z == 0), 0.0,
                  power_of(x, z - 1) * (1.0 + z * np.log(_replace_zero(x))))


_binary("power", np.power,
        (_pow_dx, lambda x, z, y: np.log(_replace_zero(x)) * y),
        {(0, 0): _pow_dxx, (0, 1): _pow_dxz,
         (1, 1): lambda x, z, y: np.log(_replace_zero(x)) ** 2 * y},
        domain=((0.0, INF), (-INF, INF)), ufunc=np.power,
        note="JAX conventions: ∂/∂x x**z is 0 where z == 0 (x**0 is constant, even at x = 0), "
             "and ∂²/∂x² where z is 0 or 1; ∂/∂z x**z uses log(x) with x = 0 replaced by 1, so "
             "it is 0 at x = 0, and ∂²/∂x∂z is 0**(z-1) there (0 at z = 0). Only those points "
             "take a constant: elsewhere each partial is its formula, so nested modes "
             "differentiate it right (d/dz of z·x**(z-1) at z = 0 is 1/x). For x < 0 the value "
             "is nan unless z is an integer (real powers), and ∂/∂z is nan.")


@helper
def _balanced(x, z, y):
    # JAX's _balanced_eq: 1 where x alone is the output, 0.5 on ties, 0 otherwise (nan too).
    return select(x == y, select(z == y, 0.5, 1.0), 0.0)


_binary("maximum", np.maximum,
        (_balanced, lambda x, z, y: _balanced(z, x, y)),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.maximum,
        note="Ties split the derivative 0.5/0.5 (JAX). A nan argument gets derivative 0.")
_binary("minimum", np.minimum,
        (_balanced, lambda x, z, y: _balanced(z, x, y)),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.minimum,
        note="Ties split the derivative 0.5/0.5 (JAX). A nan argument gets derivative 0.")


@helper
def _whole_quotient(x, z, y):
    # k in y = x - k·z, from the value NumPy computed: floor(x/z) (or trunc) can round to the
    # next integer where the exact quotient is just below it (1 % 0.1 is 0.0999…, k = 9,
    # while 1 / 0.1 rounds to 10.0: otherwise ∂/∂z of 1 % 0.1 is -10 against the value's -9)
    return np.rint((x - y) / z)


_binary("remainder", np.remainder,
        (lambda x, z, y: 1.0, lambda x, z, y: -_whole_quotient(x, z, y)),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.remainder,
        note="x % z = x - z·floor(x/z); ∂/∂z = -k for the k of the value computed, so "
             "the jumps where x/z is an integer take the right limit.")

_binary("fmod", np.fmod,
        (lambda x, z, y: 1.0, lambda x, z, y: -_whole_quotient(x, z, y)),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.fmod,
        note="fmod(x, z) = x - z·trunc(x/z), the sign of x (C's fmod, math.fmod); ∂/∂z = -k "
             "for the k of the value computed (JAX's rem: -trunc(x/z)), the jumps where x/z "
             "is an integer included.")

_binary("floor_divide", np.floor_divide, (None, None),
        {(0, 0): None, (0, 1): None, (1, 1): None}, ufunc=np.floor_divide,
        note="Piecewise constant: derivative 0, at the jumps too (JAX).")


@helper
def _atan2_r2(a, b):
    return a * a + b * b


_binary("arctan2", np.arctan2,
        (lambda a, b, y: b / _atan2_r2(a, b), lambda a, b, y: -a / _atan2_r2(a, b)),
        {(0, 0): lambda a, b, y: -2.0 * a * b / _atan2_r2(a, b) ** 2,
         (0, 1): lambda a, b, y: (a * a - b * b) / _atan2_r2(a, b) ** 2,
         (1, 1): lambda a, b, y: 2.0 * a * b / _atan2_r2(a, b) ** 2},
        ufunc=np.arctan2,
        note="Undefined at (0, 0): partials are nan there (JAX gives nan too).")
_binary("hypot", np.hypot,
        (lambda a, b, y: a / y, lambda a, b, y: b / y),
        {(0, 0): lambda a, b, y: b * b / y ** 3,
         (0, 1): lambda a, b, y: -a * b / y ** 3,
         (1, 1): lambda a, b, y: a * a / y ** 3},
        ufunc=np.hypot,
        note="Not differentiable at (0, 0): partials are nan there, like the 2-norm.")

# --- unary ----------------------------------------------------------------------------
_unary("negative", np.negative, lambda x, y: -1.0, None, ufunc=np.negative)
_unary("positive", np.positive, lambda x, y: 1.0, None, ufunc=np.positive)
_unary("absolute", np.absolute, lambda x, y: select(x >= 0, 1.0, -1.0), None,
       ufunc=np.absolute, note="abs'(0) = 1 (JAX: select(x >= 0, g, -g)).")
_unary("sqrt", np.sqrt, lambda x, y: 0.5 / y, lambda x, y, d: -0.5 * d / x,
       domain=(0.0, INF), ufunc=np.sqrt,
       note="sqrt'(0) = inf (JAX: 0.5 / ans); x < 0 gives nan.")
_unary("cbrt", np.cbrt, lambda x, y: 1.0 / (3.0 * y * y), lambda x, y, d: -2.0 * d / (3.0 * x),
       ufunc=np.cbrt, note="cbrt'(0) = inf (JAX).")
_unary("square", np.square, lambda x, y: 2.0 * x, lambda x, y, d: 2.0, ufunc=np.square)
_unary("reciprocal", np.reciprocal, lambda x, y: -y * y, lambda x, y, d: -2.0 * y * d,
       ufunc=np.reciprocal, note="Pole at 0: inf.")
_unary("exp", np.exp, lambda x, y: y, lambda x, y, d: y, ufunc=np.exp)
_unary("exp2", np.exp2, lambda x, y: _LN2 * y, lambda x, y, d: _LN2 * d, ufunc=np.exp2)
_unary("expm1", np.expm1, lambda x, y: y + 1.0, lambda x, y, d: d, ufunc=np.expm1)
_unary("log", np.log, lambda x, y: 1.0 / x, lambda x, y, d: -d * d,
       domain=(0.0, INF), ufunc=np.log, note="log(0) = -inf with derivative inf; x < 0: nan.")
_unary("log2", np.log2, lambda x, y: 1.0 / (_LN2 * x), lambda x, y, d: -d / x,
       domain=(0.0, INF), ufunc=np.log2)
_unary("log10", np.log10, lambda x, y: 1.0 / (_LN10 * x), lambda x, y, d: -d / x,
       domain=(0.0, INF), ufunc=np.log10)
_unary("log1p", np.log1p, lambda x, y: 1.0 / (1.0 + x), lambda x, y, d: -d * d,
       domain=(-1.0, INF), ufunc=np.log1p)
_unary("sin", np.sin, lambda x, y: np.cos(x), lambda x, y, d: -y, ufunc=np.sin)
_unary("cos", np.cos, lambda x, y: -np.sin(x), lambda x, y, d: -y, ufunc=np.cos)
_unary("tan", np.tan, lambda x, y: 1.0 + y * y, lambda x, y, d: 2.0 * y * d,
       ufunc=np.tan, note="Poles at π/2 + kπ.")
_unary("arcsin", np.arcsin, lambda x, y: 1.0 / np.sqrt((1.0 - x) * (1.0 + x)),
       lambda x, y, d: x * d ** 3, domain=(-1.0, 1.0), ufunc=np.arcsin,
       note="At ±1 the derivative is inf.")
_unary("arccos", np.arccos, lambda x, y: -1.0 / np.sqrt((1.0 - x) * (1.0 + x)),
       lambda x, y, d: x * d ** 3, domain=(-1.0, 1.0), ufunc=np.arccos,
       note="At ±1 the derivative is -inf.")
_unary("arctan", np.arctan, lambda x, y: 1.0 / (1.0 + x * x),
       lambda x, y, d: -2.0 * x * d * d, ufunc=np.arctan)
_unary("sinh", np.sinh, lambda x, y: np.cosh(x), lambda x, y, d: y, ufunc=np.sinh)
_unary("cosh", np.cosh, lambda x, y: np.sinh(x), lambda x, y, d: y, ufunc=np.cosh)
_unary("tanh", np.tanh, lambda x, y: 1.0 - y * y, lambda x, y, d: -2.0 * y * d, ufunc=np.tanh)
_unary("arcsinh", np.arcsinh, lambda x, y: 1.0 / np.sqrt(x * x + 1.0),
       lambda x, y, d: -x * d ** 3, ufunc=np.arcsinh)
_unary("arccosh", np.arccosh, lambda x, y: 1.0 / np.sqrt((x - 1.0) * (x + 1.0)),
       lambda x, y, d: -x * d ** 3, domain=(1.0, INF), ufunc=np.arccosh,
       note="At 1 the derivative is inf.")
_unary("arctanh", np.arctanh, lambda x, y: 1.0 / ((1.0 - x) * (1.0 + x)),
       lambda x, y, d: 2.0 * x * d * d, domain=(-1.0, 1.0), ufunc=np.arctanh)
_unary("erf", erf, lambda x, y: _TWO_OVER_SQRT_PI * np.exp(-x * x),
       lambda x, y, d: -2.0 * x * d)
_unary("erfc", erfc, lambda x, y: -_TWO_OVER_SQRT_PI * np.exp(-x * x),
       lambda x, y, d: -2.0 * x * d)
_unary("deg2rad", np.deg2rad, lambda x, y: math.pi / 180.0, None, ufunc=np.deg2rad)
_unary("rad2deg", np.rad2deg, lambda x, y: 180.0 / math.pi, None, ufunc=np.rad2deg)

# Piecewise constant: zero derivative everywhere (at the jumps too, as JAX does).
for _name in ("sign", "floor", "ceil", "rint", "trunc"):
    _unary(_name, getattr(np, _name), None, None, ufunc=getattr(np, _name),
           note="Piecewise constant: derivative 0, at the jumps too (JAX).")

_unary("round", np.round, None, None,
       note="Piecewise constant (np.round/np.around, any decimals): derivative 0 (JAX).")

# What the other layers need of a rule besides its maths, attached to the rule here (one
# place): Python's operator (number.py makes __add__/__radd__, the compiled path operator.add
# and operator.iadd), the math module's spellings (dualad.math, math.* in @njit code) and the
# value compiled code calls where the ufunc is missing or slow in numba.
_OPERATORS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
              "power": "pow", "remainder": "mod", "floor_divide": "floordiv",
              "negative": "neg", "positive": "pos", "absolute": "abs"}
_MATH_SPELLINGS = {"arcsin": ("asin",), "arccos": ("acos",), "arctan": ("atan",),
                   "arctan2": ("atan2",), "arcsinh": ("asinh",), "arccosh": ("acosh",),
                   "arctanh": ("atanh",), "absolute": ("fabs",), "power": ("pow",),
                   "deg2rad": ("radians",), "rad2deg": ("degrees",)}
# math.fmod is fmod, not remainder: fmod truncates (sign of x), remainder floors (sign of
# z), so fmod(-5, 3) is -2 where remainder gives 1.
_SAME_IN_MATH = ("sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log2", "log10",
                 "log1p", "sqrt", "erf", "erfc", "floor", "ceil", "trunc", "hypot", "exp2", "cbrt",
                 "fmod")
_COMPILED_VALUES = {"power": power_of, "erf": math.erf, "erfc": math.erfc}
for _name, _rule in RULES.items():
    RULES[_name] = replace(
        _rule, operator=_OPERATORS.get(_name),
        math_names=_MATH_SPELLINGS.get(_name, (_name,) if _name in _SAME_IN_MATH else ()),
        compiled_value=_COMPILED_VALUES.get(_name))

# Python's math-module spellings -> rule name (dualad.math and the compiled path use them).
MATH_NAMES = {alias: rule.name for rule in RULES.values() for alias in rule.math_names}

BY_UFUNC: dict = {rule.ufunc: rule for rule in RULES.values() if rule.ufunc is not None}
