"""Elementwise functions outside the rule table, composed from it: ufuncs (fabs, fmax, fmin,
degrees, radians, heaviside, conjugate, logaddexp, logaddexp2; number.py's __array_ufunc__
finds them here) and the functions sinc and nan_to_num.

Each value is NumPy's own, bit for bit: where a composition rounds differently from NumPy's
C loop (logaddexp, sinc near 0), ``registry.with_values`` moves the value onto NumPy's and keeps the
composition's derivatives.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import rules
from ..number import assign, branched, is_layer, leader_of, primal
from .registry import composition, with_values



# ---- rule-table functions under another name -------------------------------------------------
@composition(np.fabs, compiled=True)
def fabs(x):
    """|x| on real input: the absolute rule (abs'(0) = 1)."""
    return np.absolute(x)


@composition(np.degrees, compiled=True)
def degrees(x):
    return np.rad2deg(x)


@composition(np.radians, compiled=True)
def radians(x):
    return np.deg2rad(x)


@composition(np.conjugate, compiled=True, note="real input: the identity (np.conj is np.conjugate)")
def conjugate(x):
    return np.positive(x)  # a new array, as NumPy's conjugate of a real array


def _nan_ignoring(rule_name, func):
    """fmax/fmin as a rule: maximum/minimum's partials (ties split 0.5/0.5, as in the rule
    table) at NumPy's value. The partials compare each argument with the value, so a nan
    argument, which fmax/fmin pass over, gets derivative 0 and the other argument 1. The
    compiled path registers these rules for np.fmax/np.fmin (jit/numpy_elementwise.py)."""
    return dataclasses.replace(rules.RULES[rule_name], name=func.__name__, value=func, ufunc=None)


NAN_IGNORING = {np.fmax: _nan_ignoring("maximum", np.fmax),
                np.fmin: _nan_ignoring("minimum", np.fmin)}


def _apply(rule):
    def impl(x1, x2):
        return leader_of((x1, x2))._apply_rule(rule, (x1, x2))
    impl.__name__ = rule.name
    return impl


for _func, _rule in NAN_IGNORING.items():
    composition(_func, compiled=True,
                note="ties split the derivative evenly; a nan argument is passed over")(_apply(_rule))


# ---- piecewise constant and replacements -----------------------------------------------------
@composition(np.heaviside, compiled=True, note="derivative 0 in x1; 1 in x2 where x1 == 0")
def heaviside(x1, x2):
    """0 for x1 < 0, x2 where x1 == 0, 1 for x1 > 0, nan for nan: derivative 0 in x1 (at
    the jump too, as sign), and the derivative of x2 where x1 == 0."""
    v = np.asarray(primal(x1))
    steps = np.where(np.isnan(v), np.nan, np.where(v < 0, 0.0, 1.0))
    if is_layer(x1):
        branched(steps)
    return np.where(v == 0, x2, steps)


@composition(np.nan_to_num, compiled=True, note="derivative 1 where x is finite, 0 where replaced")
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """nan, +inf, -inf replaced by the given numbers (which may carry derivatives)."""
    v = np.asarray(primal(x))
    if v.dtype.kind not in "fc":
        return np.copy(x) if copy else x
    big = np.finfo(v.dtype).max
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = np.where(np.isnan(v), nan,
                   np.where(np.isposinf(v), posinf, np.where(np.isneginf(v), neginf, x)))
    if copy:
        return out
    if not is_layer(x):
        raise TypeError("numpy.nan_to_num(x, copy=False) cannot write numbers that carry "
                        "derivatives into a plain array x; use copy=True")
    return assign(x, Ellipsis, out)


# ---- compositions with NumPy's value ---------------------------------------------------------
def _logaddexp(x1, x2, log1p_of_exp, ufunc):
    """max + log1p_of_exp(-|x1 - x2|), with the branch chosen on the values so the exponent
    is ≤ 0 and every operation sees finite, safe numbers (a branch that is not selected
    would give nan cotangents in reverse mode otherwise). At x1 = x2 the derivatives are
    1/2 each (the formula of the branch x1 <= x2), the second derivatives ±1/4 (·ln 2 for
    base 2). At x1 = x2 = ±inf the value is ±inf and the derivatives 1/2 each (the
    diagonal's), second derivatives 0."""
    v1, v2 = np.asarray(primal(x1)), np.asarray(primal(x2))
    infinite_tie = (v1 == v2) & np.isinf(v1)
    safe1, safe2 = np.where(infinite_tie, 0.0, x1), np.where(infinite_tie, 0.0, x2)
    first = v1 > v2
    big = np.where(first, safe1, safe2)
    gap = np.where(first, safe2 - safe1, safe1 - safe2)
    out = np.where(infinite_tie, 0.5 * x1 + 0.5 * x2, big + log1p_of_exp(gap))
    return with_values(out, ufunc(v1, v2))


@composition(np.logaddexp, compiled=True)
def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)); ∂/∂x1 = 1/(1 + exp(x2 - x1))."""
    return _logaddexp(x1, x2, lambda t: np.log1p(np.exp(t)), np.logaddexp)


LOG2E = 1.0 / math.log(2.0)


@composition(np.logaddexp2, compiled=True)
def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2); ∂/∂x1 = 1/(1 + 2**(x2 - x1))."""
    return _logaddexp(x1, x2, lambda t: LOG2E * np.log1p(np.exp2(t)), np.logaddexp2)


# sin(y)/y = Σ (-1)^k y^(2k) / (2k+1)!: for |y| < 1 the terms to y^20 leave an error below
# 1e-21, in the value and in the first derivatives alike
SINC_SERIES = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(11))


@composition(np.sinc, compiled=True, note="sinc'(0) = 0, sinc''(0) = -π²/3 (a series near 0)")
def sinc(x):
    """sin(πx)/(πx). Near 0, where sin(y)/y loses its derivatives to cancellation (and is
    0/0 at 0), the Taylor series in y = πx: sinc(0) = 1, sinc'(0) = 0, sinc''(0) = -π²/3."""
    y = np.pi * x
    small = np.abs(np.asarray(primal(y))) < 1.0
    far = np.where(small, 1.0, y)  # safe: the series takes these entries
    near = np.where(small, y, 0.0)
    u = near * near
    series = SINC_SERIES[-1]
    for c in SINC_SERIES[-2::-1]:
        series = series * u + c
    value = np.sinc(primal(x))
    return np.where(small, with_values(series, np.where(small, value, primal(series))),
                    np.sin(far) / far)
