"""The rule table of scipy.special's ufuncs: value, first and second partials, domain and
conventions, in rules.py's form (rules.Rule; see its module docstring for the calling
conventions), for every layer: scipy's ufuncs reach a dual number's __array_ufunc__, which
finds the rule here (number._scipy_rule). This module loads when the first scipy.special
ufunc meets a dual number, so scipy stays out of import dualad; its table is apart from
rules.RULES (the NumPy rule table, which every compiled overload and the fuzzers iterate).

Partials are written with scipy.special's ufuncs themselves, so that each layer
differentiates them again (HyperDual's second order, nested transforms): digamma is
gammaln's partial and has its own rule here, whose partial is polygamma(1, ·) spelt as the
Hurwitz zeta, which has its rule w.r.t. x. A partial with respect to an argument that
scipy gives no closed form for (an order, a shape parameter) is an error that names it
(`no_partial`), never a number.
"""

from __future__ import annotations

import math

import scipy.special as special
from scipy.special import _ufuncs

from .rules import INF, Rule

__all__ = ["SCIPY_RULES", "BY_UFUNC", "no_partial"]

SCIPY_RULES: dict[str, Rule] = {}
BY_UFUNC: dict = {}


def _unary(name, first, second, domain=(-INF, INF), note=""):
    ufunc = getattr(_ufuncs, name)
    SCIPY_RULES[name] = Rule(name, ufunc, (first,), {(0, 0): second}, (domain,), ufunc, note)
    BY_UFUNC[ufunc] = SCIPY_RULES[name]


def _binary(name, first, second, domain=((-INF, INF), (-INF, INF)), note=""):
    ufunc = getattr(_ufuncs, name)  # (zeta(s, x) is the ufunc _zeta behind a Python function)
    SCIPY_RULES[name] = Rule(name, ufunc, tuple(first), dict(second), tuple(domain), ufunc, note)
    BY_UFUNC[ufunc] = SCIPY_RULES[name]


def no_partial(function, argument, fix=""):
    """A partial scipy has no closed form for: calling it (a transform that needs it) raises
    an error naming the function and the argument."""
    def partial(*args):
        raise TypeError(f"scipy.special.{function}: dualad has no derivative with respect to "
                        f"{argument} (scipy gives no closed form for it){fix}; keep {argument} "
                        "a constant (a float, not a differentiated input)")
    partial.__name__ = f"no_partial_{function}_{argument}"
    return partial


# ---- gamma and its logarithm -----------------------------------------------------------------------
def _trigamma(x):
    """polygamma(1, x) = ζ(2, x): a ufunc of (2, x), differentiated by zeta's rule."""
    return special.zeta(2.0, x)


_binary("_zeta", (no_partial("zeta", "its first argument s"), lambda s, x, y: -s * special.zeta(s + 1.0, x)),
        {(0, 0): no_partial("zeta", "its first argument s"), (0, 1): no_partial("zeta", "its first argument s"),
         (1, 1): lambda s, x, y: s * (s + 1.0) * special.zeta(s + 2.0, x)},
        domain=((1.0, INF), (0.0, INF)),
        note="The Hurwitz zeta ζ(s, x) = Σ (k + x)^-s, w.r.t. x: -s ζ(s + 1, x); w.r.t. s there is "
             "no closed form (an error that says so).")
_unary("psi", lambda x, y: _trigamma(x), lambda x, y, d: -2.0 * special.zeta(3.0, x),
       domain=(0.0, INF),
       note="digamma ψ(x) = Γ'(x)/Γ(x); ψ'(x) = ζ(2, x) (the trigamma function); poles at 0, -1, ...")
BY_UFUNC[special.digamma] = SCIPY_RULES["psi"]
_unary("gammaln", lambda x, y: special.psi(x), lambda x, y, d: _trigamma(x),
       domain=(0.0, INF),
       note="log|Γ(x)|: derivative ψ(x) wherever Γ is finite (the poles 0, -1, ... are nan)")
_unary("gamma", lambda x, y: y * special.psi(x),
       lambda x, y, d: y * (special.psi(x) ** 2 + _trigamma(x)),
       domain=(0.0, INF), note="Γ'(x) = Γ(x) ψ(x)")

# ---- the logistic function -------------------------------------------------------------------------
_unary("expit", lambda x, y: y * (1.0 - y), lambda x, y, d: d * (1.0 - 2.0 * y),
       note="σ(x) = 1/(1 + e^-x); σ' = σ(1 - σ)")

# ---- error functions ---------------------------------------------------------------------------------
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_unary("erfcx", lambda x, y: 2.0 * x * y - _TWO_OVER_SQRT_PI,
       lambda x, y, d: 2.0 * y + 2.0 * x * d,
       note="erfcx(x) = e^{x²} erfc(x); erfcx' = 2x erfcx(x) - 2/√π")
