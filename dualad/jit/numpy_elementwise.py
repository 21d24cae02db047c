"""NumPy's elementwise functions outside the rule table, in compiled code: fabs, degrees,
radians, conjugate, real, imag, angle, fmax, fmin, heaviside, nan_to_num, logaddexp,
logaddexp2, sinc and clip on scalar duals and 1-D arrays of duals.

Each is the Python path's composition (dualad/functions/elementwise.py, reductions.py) on
compiled scalars, with its conventions and constants imported from there: fmax and fmin
are the rules that module builds (registered here like any rule), sinc's series and
logaddexp's branches are the same formulas. Arrays go element by element (overloads.elementwise).
"""

import numpy as np
from numba.core.errors import TypingError

from ..functions.elementwise import LOG2E, NAN_IGNORING, SINC_SERIES
from .cache import overload, register_jitable
from .matrix import matrix_elementwise
from .numpy_overloads import dualad_templates_first, is_none, primal, register_broadcast, with_value
from .overloads import (ARRAYS, DUALS, RULE_JIT, SCALARS, by_value, new_array, register_rule,
                        elementwise)
from .types import NUMBER, DualMatrixType, compiled_only, store_element, zero_element


def _scalar_args(*arg_types):
    """Scalar duals (at least one) and plain numbers."""
    return (any(by_value(t) for t in arg_types) and
            all(by_value(t) or isinstance(t, NUMBER) for t in arg_types))


def _unary(func, scalar):
    """Overload func(x) for scalar duals (scalar, a jitable of x) and arrays of them (1-D
    and 2-D)."""
    overload(func, jit_options=RULE_JIT)(lambda x: (lambda x: scalar(x)) if by_value(x) else None)
    _on_arrays(func, 1)


def _binary(func, scalar):
    """Overload func(a, b) for scalar duals with numbers (scalar, a jitable of a, b) and
    arrays of them (1-D and 2-D)."""
    overload(func, jit_options=RULE_JIT)(
        lambda a, b: (lambda a, b: scalar(a, b)) if _scalar_args(a, b) else None)
    _on_arrays(func, 2)


def _on_arrays(func, arity):
    overload(func, jit_options=RULE_JIT)(elementwise(func, arity))
    overload(func, jit_options=RULE_JIT)(matrix_elementwise(func, arity))


# ---- rule-table functions under another name ---------------------------------------------------
_unary(np.fabs, register_jitable(lambda x: np.absolute(x)))
_unary(np.degrees, register_jitable(lambda x: np.rad2deg(x)))
_unary(np.radians, register_jitable(lambda x: np.deg2rad(x)))
_unary(np.conjugate, register_jitable(lambda x: x))  # real input (np.conj is np.conjugate)

for _func, _rule in NAN_IGNORING.items():
    register_rule(_rule, [_func])
    register_broadcast([_func], _rule)
    overload(_func, jit_options=RULE_JIT)(matrix_elementwise(_func, 2))


# ---- real input: the real part itself, constant imaginary part and angle ---------------------
@overload(np.real)
def _real(val):
    if isinstance(val, DUALS):
        return lambda val: val
    return None


@overload(np.imag)
def _imag(val):
    if isinstance(val, SCALARS):
        return lambda val: 0.0
    if isinstance(val, ARRAYS):
        return lambda val: np.zeros(len(val))
    return None


@overload(np.angle)
def _angle(z, deg=False):
    """0 or π (180 with deg): piecewise constant, a plain number or float array."""
    if isinstance(z, SCALARS):
        return lambda z, deg=False: (180.0 if deg else np.pi) if primal(z) < 0 else 0.0
    if isinstance(z, ARRAYS):
        return lambda z, deg=False: np.where(z.values < 0, 180.0 if deg else np.pi, 0.0)
    return None


# ---- piecewise constant and replacements ----------------------------------------------------------
@register_jitable
def _step(v, at_zero):
    if np.isnan(v):
        return np.nan
    return 0.0 if v < 0 else (at_zero if v == 0 else 1.0)


def _heaviside_scalar(x1, x2):
    """Derivative 0 in x1 (at the jump too); x2's where x1 == 0. A plain x2 gives a plain
    number (no derivative at all), as on the Python path."""
    if isinstance(x2, NUMBER):
        return lambda x1, x2: _step(primal(x1), float(x2))
    return lambda x1, x2: x2 if primal(x1) == 0 else zero_element(x2) + _step(primal(x1), 0.0)


def _heaviside_array(x1, x2):
    """An array of duals x1 with a plain x2: steps with derivative 0, an array of duals
    (numba rewrites a ufunc call typed as a float array into its own array expression,
    which cannot read an array of duals)."""
    def steps(x1, x2):
        out = new_array(x1, len(x1))
        zero = zero_element(x1)
        for i in range(len(x1)):
            store_element(out, i, zero + _step(x1.values[i], float(x2)))
        return out
    return steps


overload(np.heaviside)(lambda x1, x2: _heaviside_scalar(x1, x2) if _scalar_args(x1, x2) else (
    _heaviside_array(x1, x2) if isinstance(x1, ARRAYS) and isinstance(x2, NUMBER) else None))
overload(np.heaviside)(elementwise(np.heaviside, 2))


@register_jitable
def _replaced(x, nan, posinf, neginf):
    v = primal(x)
    if np.isnan(v):
        return zero_element(x) + nan
    if v == np.inf:
        return zero_element(x) + (np.finfo(np.float64).max if posinf is None else posinf)
    if v == -np.inf:
        return zero_element(x) + (-np.finfo(np.float64).max if neginf is None else neginf)
    return x


@overload(np.nan_to_num)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """nan, ±inf replaced by numbers (derivative 0 there, 1 elsewhere); always a new array:
    copy=False, which writes into x, raises (write x = np.nan_to_num(x))."""
    if by_value(x):
        return lambda x, copy=True, nan=0.0, posinf=None, neginf=None: _replaced(
            x, nan, posinf, neginf)
    if not isinstance(x, ARRAYS):
        return None
    if any(isinstance(t, DUALS) for t in (nan, posinf, neginf)):
        raise TypingError("np.nan_to_num in compiled code takes plain numbers as replacements")

    def replace_all(x, copy=True, nan=0.0, posinf=None, neginf=None):
        if not copy:
            raise ValueError("np.nan_to_num(x, copy=False) on duals in compiled code: write "
                             "x = np.nan_to_num(x)")
        m = len(x)
        out = new_array(x, m)
        for i in range(m):
            store_element(out, i, _replaced(x[i], nan, posinf, neginf))
        return out
    return replace_all


# ---- compositions with NumPy's value -----------------------------------------------------------
def _logaddexp_of(log1p_of_exp, ufunc):
    """elementwise._logaddexp: max + log1p_of_exp(-|x1 - x2|), the branch chosen on the
    values; at x1 = x2 = ±inf, (x1 + x2)/2."""
    @register_jitable
    def scalar(x1, x2):
        v1, v2 = primal(x1), primal(x2)
        if v1 == v2 and np.isinf(v1):
            out = 0.5 * x1 + 0.5 * x2
        elif v1 > v2:
            out = x1 + log1p_of_exp(x2 - x1)
        else:
            out = x2 + log1p_of_exp(x1 - x2)
        return with_value(out, ufunc(v1, v2))
    return scalar


_binary(np.logaddexp, _logaddexp_of(register_jitable(lambda t: np.log1p(np.exp(t))), np.logaddexp))
_binary(np.logaddexp2, _logaddexp_of(register_jitable(lambda t: LOG2E * np.log1p(np.exp2(t))),
                                     np.logaddexp2))


@register_jitable
def _sinc(x):
    """elementwise.sinc: the Taylor series in y = πx for |y| < 1, sin(y)/y elsewhere."""
    y = np.pi * x
    if abs(primal(y)) < 1.0:
        u = y * y
        series = SINC_SERIES[len(SINC_SERIES) - 1]  # a dual from the first step on
        for k in range(len(SINC_SERIES) - 2, -1, -1):
            series = series * u + SINC_SERIES[k]
        return with_value(series, np.sinc(primal(x)))
    return np.sin(y) / y


_unary(np.sinc, _sinc)


@overload(np.clip)
def _clip(a, a_min, a_max):
    """reductions.clip: minimum(maximum(a, a_min), a_max), None skipping a side (at a bound
    the derivative is 0.5, as jnp.clip)."""
    if not isinstance(a, DUALS + (DualMatrixType,)):
        return None
    return lambda a, a_min, a_max: bounded_above(bounded_below(a, a_min), a_max)


bounded_below = compiled_only("numpy_elementwise", "bounded_below")  # (a, bound): np.maximum unless None
bounded_above = compiled_only("numpy_elementwise", "bounded_above")  # (a, bound): np.minimum unless None


def _bound(side):
    def choose(a, bound):
        if is_none(bound):
            return lambda a, bound: a
        return lambda a, bound: side(a, bound)
    return choose


overload(bounded_below)(_bound(np.maximum))
overload(bounded_above)(_bound(np.minimum))


dualad_templates_first((np.fabs, np.degrees, np.radians, np.conjugate, np.real, np.imag, np.angle,
                        np.fmax, np.fmin, np.heaviside, np.nan_to_num, np.logaddexp,
                        np.logaddexp2, np.sinc, np.clip))
