"""The rule table of scipy.special's ufuncs: value, first and second partials, domain and
conventions, in rules.py's form (rules.Rule; see its module docstring for the calling
conventions), for every layer: scipy's ufuncs reach a dual number's __array_ufunc__, which
finds the rule here (number._scipy_rule). This module loads when the first scipy.special
ufunc meets a dual number, so scipy stays out of import dualad; its table is apart from
rules.RULES (the NumPy rule table, which every compiled overload and the fuzzers iterate).

Partials are written with scipy.special's ufuncs themselves, so that each layer
differentiates them again (HyperDual's second order, nested transforms): digamma is
gammaln's partial and has its own rule here, whose partial is polygamma(1, ·) spelt as the
Hurwitz zeta, which has its rule w.r.t. q. A partial with respect to an argument that
scipy gives no closed form for (an order, a shape parameter) is an error that names it
(`no_partial`), never a number.

Families share their formulas: a distribution function F and its inverse come from the
log-density L alone (`_distribution`: F' = e^L, (F⁻¹)' = e^-L(F⁻¹)), the Bessel functions
from their recurrences (`_bessel_dx`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as special
from scipy.special import _ufuncs

from .rules import INF, Rule, _product, select

__all__ = ["SCIPY_RULES", "BY_UFUNC", "ARGUMENTS", "SPELLINGS", "no_partial", "normal_log_density",
           "gamma_log_density", "beta_log_density", "t_log_density"]

SCIPY_RULES: dict[str, Rule] = {}
BY_UFUNC: dict = {}
ARGUMENTS: dict[str, tuple] = {}   # rule name -> scipy's names of its arguments
SPELLINGS: dict[str, tuple] = {}   # rule name -> how users write it (scipy.special.<name>)


def no_partial(function, argument, fix=""):
    """A partial scipy has no closed form for: calling it (a transform that needs it) raises
    an error naming the function and the argument."""
    def partial(*args):
        raise TypeError(f"scipy.special.{function}: dualad has no derivative with respect to "
                        f"{argument} (scipy gives no closed form for it){fix}; keep it a constant "
                        "(a float, not a differentiated input)")
    partial.__name__ = f"no_partial_{function}_{argument.split()[0]}"
    partial.missing = True
    return partial


def _rule(name, arguments, first, second, domain=None, note="", spelt=None):
    """One scipy.special ufunc's rule. first: {argument index: partial}; second: {(i, j):
    partial}, i <= j; None is a partial that is identically zero. An index absent from
    `first` has no closed form: its partials (and the second partials that involve it) are
    no_partial, an error naming the function and the argument."""
    ufunc = getattr(_ufuncs, name)
    spelt = spelt or (name,)
    arity = len(arguments)
    firsts = tuple(first[i] if i in first else no_partial(spelt[0], arguments[i])
                   for i in range(arity))
    seconds = {}
    for i in range(arity):
        for j in range(i, arity):
            without = [k for k in (i, j) if k not in first]
            if without:
                seconds[(i, j)] = no_partial(spelt[0], arguments[without[0]])
            else:
                seconds[(i, j)] = second[(i, j)]  # (a KeyError: a second partial not written)
    domain = domain or ((-INF, INF),) * arity
    SCIPY_RULES[name] = Rule(name, ufunc, firsts, seconds, tuple(domain), ufunc, note)
    ARGUMENTS[name], SPELLINGS[name] = tuple(arguments), spelt
    BY_UFUNC[ufunc] = SCIPY_RULES[name]
    for other in spelt:
        if isinstance(getattr(special, other), np.ufunc):  # (zeta is a Python function)
            BY_UFUNC[getattr(special, other)] = SCIPY_RULES[name]


def _unary(name, first, second, domain=(-INF, INF), note="", spelt=None):
    _rule(name, ("x",), {0: first}, {(0, 0): second}, (domain,), note, spelt)


# ---- gamma, its logarithm and derivatives ----------------------------------------------------------
def _trigamma(x):
    """polygamma(1, x) = ζ(2, x): a ufunc of (2, x), differentiated by zeta's rule."""
    return special.zeta(2.0, x)


_rule("_zeta", ("the exponent x", "q"), {1: lambda s, q, y: -s * special.zeta(s + 1.0, q)},
      {(1, 1): lambda s, q, y: s * (s + 1.0) * special.zeta(s + 2.0, q)},
      domain=((1.0, INF), (0.0, INF)), spelt=("zeta",),
      note="The Hurwitz zeta ζ(x, q) = Σ (k + q)^-x, w.r.t. q: -x ζ(x + 1, q) (polygamma(n, q) "
           "= (-1)^(n+1) n! ζ(n + 1, q) goes through it, n fixed); w.r.t. the exponent x there is "
           "no closed form (an error that says so; JAX differentiates a series there).")
_rule("_riemann_zeta", ("the exponent x",), {}, {}, spelt=("zeta",),
      note="The Riemann zeta ζ(x) (zeta(x) without q): no derivative w.r.t. x (an error).")
_unary("psi", lambda x, y: _trigamma(x), lambda x, y, d: -2.0 * special.zeta(3.0, x),
       domain=(0.0, INF), spelt=("digamma", "psi"),
       note="digamma ψ(x) = Γ'(x)/Γ(x); ψ'(x) = ζ(2, x) (the trigamma function); poles at 0, "
            "-1, ... (inf, nan).")
_unary("gammaln", lambda x, y: special.psi(x), lambda x, y, d: _trigamma(x),
       domain=(0.0, INF),
       note="log|Γ(x)|: derivative ψ(x) wherever Γ is finite, negative x included (the poles "
            "0, -1, ... are nan).")
_unary("loggamma", lambda x, y: special.psi(x), lambda x, y, d: _trigamma(x),
       domain=(0.0, INF),
       note="Real x > 0: log Γ(x), derivative ψ(x); for real x < 0 scipy's value is nan (the "
            "complex branch is not differentiated).")
_unary("gamma", lambda x, y: y * special.psi(x),
       lambda x, y, d: y * (special.psi(x) ** 2 + _trigamma(x)),
       domain=(0.0, INF), note="Γ'(x) = Γ(x) ψ(x); poles at 0, -1, ...")


def _psi_gap(a, b):
    """ψ(a) - ψ(a + b): ∂/∂a log B(a, b)."""
    return special.psi(a) - special.psi(a + b)


_rule("betaln", ("a", "b"),
      {0: lambda a, b, y: _psi_gap(a, b), 1: lambda a, b, y: _psi_gap(b, a)},
      {(0, 0): lambda a, b, y: _trigamma(a) - _trigamma(a + b),
       (0, 1): lambda a, b, y: -_trigamma(a + b),
       (1, 1): lambda a, b, y: _trigamma(b) - _trigamma(a + b)},
      domain=((0.0, INF), (0.0, INF)),
      note="log|B(a, b)|: ∂a = ψ(a) - ψ(a + b), ∂²ab = -ψ'(a + b).")
_rule("beta", ("a", "b"),
      {0: lambda a, b, y: y * _psi_gap(a, b), 1: lambda a, b, y: y * _psi_gap(b, a)},
      {(0, 0): lambda a, b, y: y * (_psi_gap(a, b) ** 2 + _trigamma(a) - _trigamma(a + b)),
       (0, 1): lambda a, b, y: y * (_psi_gap(a, b) * _psi_gap(b, a) - _trigamma(a + b)),
       (1, 1): lambda a, b, y: y * (_psi_gap(b, a) ** 2 + _trigamma(b) - _trigamma(a + b))},
      domain=((0.0, INF), (0.0, INF)),
      note="B(a, b) = Γ(a)Γ(b)/Γ(a + b): ∂a = B (ψ(a) - ψ(a + b)).")


# ---- distribution functions and their inverses, from the log-density -------------------------------
def _distribution(cdf, inverse, shapes, log_density, log_density_dx, sign=1.0, domains=None,
                  note="", names=("x", "y")):
    """The rules of a distribution function F(shapes, x) (cdf; a survival function for sign
    -1) and of its inverse in its last argument q (inverse), w.r.t. x and q, from the
    log-density L(shapes, x) and L'(shapes, x):
        F' = ±e^L,  F'' = F' L';   x = F⁻¹(q): x' = ±e^-L(x),  x'' = -L'(x) x'².
    The shapes have no partial (scipy has no closed form for ∂F/∂a): an error naming them."""
    k = len(shapes)
    cdf_domain, inverse_domain = domains or (None, None)
    # a partial's arguments are (shapes, x, y), and (x, y, d) for a unary rule's second: the
    # density's are the first k + 1 of them, x' of the inverse's y = x (index k + 1)
    _rule(cdf, (*shapes, names[0]),
          {k: lambda *a: sign * np.exp(log_density(*a[:k + 1]))},
          {(k, k): lambda *a: sign * np.exp(log_density(*a[:k + 1])) * log_density_dx(*a[:k + 1])},
          domain=cdf_domain, note=note)
    if inverse is None:
        return
    _rule(inverse, (*shapes, names[1]),
          {k: lambda *a: sign * np.exp(-log_density(*a[:k], a[k + 1]))},
          {(k, k): lambda *a: -log_density_dx(*a[:k], a[k + 1]) * np.exp(-2.0 * log_density(*a[:k], a[k + 1]))},
          domain=inverse_domain,
          note=f"The inverse of {cdf} in its last argument: (F⁻¹)'(q) = "
               f"{'-' if sign < 0 else ''}1/f(F⁻¹(q)), inf where the density vanishes; w.r.t. "
               f"{', '.join(shapes) or 'nothing else'}{' an error' if shapes else ''}.")


_LOG_TWO_OVER_SQRT_PI = math.log(2.0 / math.sqrt(math.pi))
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _erf_log_density(x):
    return _LOG_TWO_OVER_SQRT_PI - x * x


def normal_log_density(x):
    """log of the standard normal density: -x²/2 - log √(2π)."""
    return -0.5 * x * x - _LOG_SQRT_2PI


_distribution("erf", "erfinv", (), _erf_log_density, lambda x: -2.0 * x,
              domains=(None, ((-1.0, 1.0),)), note="erf' = 2/√π e^-x².")
_distribution("erfc", "erfcinv", (), _erf_log_density, lambda x: -2.0 * x, sign=-1.0,
              domains=(None, ((0.0, 2.0),)), note="erfc' = -2/√π e^-x².")
_distribution("ndtr", "ndtri", (), normal_log_density, lambda x: -x,
              domains=(None, ((0.0, 1.0),)), note="Φ' = φ, the standard normal density.")


def gamma_log_density(a, x):
    """log of the Gamma(a) density: (a - 1) log x - x - log Γ(a) (xlogy: 0 at a = 1, x = 0)."""
    return special.xlogy(a - 1.0, x) - x - special.gammaln(a)


def _gamma_log_density_dx(a, x):
    return _product(a - 1.0, 1.0 / x) - 1.0


_POSITIVE_PAIR = ((0.0, INF), (0.0, INF))
_distribution("gammainc", "gammaincinv", ("a",), gamma_log_density, _gamma_log_density_dx,
              domains=(_POSITIVE_PAIR, ((0.0, INF), (0.0, 1.0))),
              note="The regularised lower incomplete gamma P(a, x), w.r.t. x: x^(a-1) e^-x / Γ(a) "
                   "(at x = 0: inf for a < 1, 1 for a = 1, 0 for a > 1); w.r.t. a an error.")
_distribution("gammaincc", "gammainccinv", ("a",), gamma_log_density, _gamma_log_density_dx,
              sign=-1.0, domains=(_POSITIVE_PAIR, ((0.0, INF), (0.0, 1.0))),
              note="Q(a, x) = 1 - P(a, x), w.r.t. x: -x^(a-1) e^-x / Γ(a); w.r.t. a an error.")


def beta_log_density(a, b, x):
    """log of the Beta(a, b) density: (a-1) log x + (b-1) log(1-x) - log B(a, b)."""
    return special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b)


def _beta_log_density_dx(a, b, x):
    return _product(a - 1.0, 1.0 / x) - _product(b - 1.0, 1.0 / (1.0 - x))


_BETA_DOMAINS = (((0.0, INF), (0.0, INF), (0.0, 1.0)), ((0.0, INF), (0.0, INF), (0.0, 1.0)))
_distribution("betainc", "betaincinv", ("a", "b"), beta_log_density, _beta_log_density_dx,
              domains=_BETA_DOMAINS,
              note="The regularised incomplete beta I_x(a, b), w.r.t. x: x^(a-1)(1-x)^(b-1)/B(a, b); "
                   "w.r.t. a and b an error.")
_distribution("betaincc", "betainccinv", ("a", "b"), beta_log_density, _beta_log_density_dx,
              sign=-1.0, domains=_BETA_DOMAINS,
              note="1 - I_x(a, b), w.r.t. x: -x^(a-1)(1-x)^(b-1)/B(a, b); w.r.t. a and b an error.")


def t_log_density(df, t):
    """log of Student's t density with df degrees of freedom."""
    return (special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df) - 0.5 * np.log(df * math.pi)
            - 0.5 * (df + 1.0) * np.log1p(t * t / df))


_distribution("stdtr", "stdtrit", ("df",), t_log_density,
              lambda df, t: -(df + 1.0) * t / (df + t * t),
              domains=(((0.0, INF), (-INF, INF)), ((0.0, INF), (0.0, 1.0))), names=("t", "p"),
              note="Student's t distribution function, w.r.t. t: the t density; w.r.t. df an error.")

_unary("log_ndtr", lambda x, y: np.exp(normal_log_density(x) - y),
       lambda x, y, d: -d * (x + d),
       note="log Φ(x): derivative φ(x)/Φ(x) = exp(log φ(x) - log Φ(x)), stable in both tails "
            "(JAX's).")

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_unary("erfcx", lambda x, y: 2.0 * x * y - _TWO_OVER_SQRT_PI,
       lambda x, y, d: 2.0 * y + 2.0 * x * d,
       note="erfcx(x) = e^{x²} erfc(x); erfcx' = 2x erfcx(x) - 2/√π")

# ---- the logistic function and relatives -----------------------------------------------------------
_unary("expit", lambda x, y: y * (1.0 - y), lambda x, y, d: d * (1.0 - 2.0 * y),
       note="σ(x) = 1/(1 + e^-x); σ' = σ(1 - σ)")
_unary("logit", lambda x, y: 1.0 / (x * (1.0 - x)), lambda x, y, d: (2.0 * x - 1.0) * d * d,
       domain=(0.0, 1.0), note="log(x/(1 - x)): 1/(x(1 - x)), inf at 0 and 1 (JAX).")
_unary("log_expit", lambda x, y: special.expit(-x), lambda x, y, d: -d * (1.0 - d),
       note="log σ(x): derivative σ(-x) = 1 - σ(x).")


_EXPREL_SERIES = 0.5   # |x| below it: exprel's derivatives by their series (the closed forms cancel)
_EXPREL_TERMS = 20     # 0.5^20 / 20! is far below double rounding


def _exprel_derivative(x, n):
    """exprel⁽ⁿ⁾(x) = ∫₀¹ tⁿ e^{xt} dt: Σ_k x^k / (k! (k + n + 1)) for |x| < 1/2, else
    Iₙ = (e^x - n Iₙ₋₁)/x from I₀ = exprel(x) (integration by parts), whose terms cancel
    near 0. The closed form runs on x moved away from 0 where the series is taken, so that
    no branch has an inf or nan in it."""
    small = np.abs(x) < _EXPREL_SERIES
    series, term = 0.0, 1.0
    for k in range(_EXPREL_TERMS):
        series = series + term / (k + n + 1.0)
        term = term * x / (k + 1.0)
    far = select(small, 1.0, x)
    closed = special.exprel(far)
    for m in range(1, n + 1):
        closed = (np.exp(far) - m * closed) / far
    return select(small, series, closed)


_unary("exprel", lambda x, y: _exprel_derivative(x, 1), lambda x, y, d: _exprel_derivative(x, 2),
       note="(e^x - 1)/x: derivative ∫₀¹ t e^{xt} dt (1/2 at 0), by its series near 0.")


# ---- x log y and the entropies ---------------------------------------------------------------------
_rule("xlogy", ("x", "y"), {0: lambda x, z, y: np.log(z), 1: lambda x, z, y: _product(x, 1.0 / z)},
      {(0, 0): None, (0, 1): lambda x, z, y: 1.0 / z,
       (1, 1): lambda x, z, y: _product(-x, 1.0 / (z * z))},
      domain=((-INF, INF), (0.0, INF)),
      note="x log y (0 at x = 0): ∂x = log y (-inf at y = 0, as JAX's), ∂y = x/y, 0 at x = 0 "
           "(xlogy(0, y) is the constant 0; JAX's is nan at (0, 0)), so that a log-density "
           "(a - 1) log x has its one-sided derivative at x = 0 for a = 1.")
_rule("xlog1py", ("x", "y"), {0: lambda x, z, y: np.log1p(z),
                              1: lambda x, z, y: _product(x, 1.0 / (1.0 + z))},
      {(0, 0): None, (0, 1): lambda x, z, y: 1.0 / (1.0 + z),
       (1, 1): lambda x, z, y: _product(-x, 1.0 / ((1.0 + z) * (1.0 + z)))},
      domain=((-INF, INF), (-1.0, INF)),
      note="x log(1 + y): ∂x = log1p(y), ∂y = x/(1 + y), 0 at x = 0 (the constant 0; JAX's is "
           "nan at (0, -1)).")


def _where_positive(x, partial):
    """partial(x) where x > 0, 0 elsewhere (computed at 1 there: no inf or nan in any branch)."""
    inside = x > 0
    return select(inside, partial(select(inside, x, 1.0)), 0.0)


_unary("entr", lambda x, y: select(x == 0, INF, _where_positive(x, lambda u: -np.log(u) - 1.0)),
       lambda x, y, d: select(x == 0, -INF, _where_positive(x, lambda u: -1.0 / u)),
       domain=(0.0, INF),
       note="-x log x: derivative -log x - 1 (inf at 0, as JAX's); 0 for x < 0, where the "
            "value is the constant -inf.")


def _both_positive(x, z, partial):
    """partial(x, z) where x > 0 and z > 0, 0 elsewhere (JAX's rel_entr: its value is a
    constant 0 or inf there), computed at (1, 1) there."""
    inside = (x > 0) & (z > 0)
    return select(inside, partial(select(inside, x, 1.0), select(inside, z, 1.0)), 0.0)


_rule("rel_entr", ("x", "y"),
      {0: lambda x, z, y: _both_positive(x, z, lambda u, v: np.log(u / v) + 1.0),
       1: lambda x, z, y: _both_positive(x, z, lambda u, v: -u / v)},
      {(0, 0): lambda x, z, y: _both_positive(x, z, lambda u, v: 1.0 / u),
       (0, 1): lambda x, z, y: _both_positive(x, z, lambda u, v: -1.0 / v),
       (1, 1): lambda x, z, y: _both_positive(x, z, lambda u, v: u / (v * v))},
      domain=_POSITIVE_PAIR,
      note="x log(x/y) for x, y > 0: ∂x = log(x/y) + 1, ∂y = -x/y; 0 where x = 0 or y <= 0 "
           "(JAX's).")
_rule("kl_div", ("x", "y"),
      {0: lambda x, z, y: _both_positive(x, z, lambda u, v: np.log(u / v) + 1.0) - 1.0,
       1: lambda x, z, y: _both_positive(x, z, lambda u, v: -u / v) + 1.0},
      {(0, 0): lambda x, z, y: _both_positive(x, z, lambda u, v: 1.0 / u),
       (0, 1): lambda x, z, y: _both_positive(x, z, lambda u, v: -1.0 / v),
       (1, 1): lambda x, z, y: _both_positive(x, z, lambda u, v: u / (v * v))},
      domain=_POSITIVE_PAIR,
      note="rel_entr(x, y) - x + y: ∂x = log(x/y), ∂y = 1 - x/y; -1 and 1 where x = 0 or "
           "y <= 0 (JAX's: rel_entr's partials are 0 there).")


# ---- Huber losses ----------------------------------------------------------------------------------
def _huber_partial(inner, outer):
    """The partial that is inner(δ, r) where |r| <= δ (the quadratic) and outer(δ, r) beyond;
    0 where δ < 0 (the value is the constant inf)."""
    def partial(delta, r, y):
        return select(delta < 0, 0.0, select(np.abs(r) <= delta, inner(delta, r), outer(delta, r)))
    return partial


_rule("huber", ("delta", "r"),
      {0: _huber_partial(lambda d, r: 0.0, lambda d, r: np.abs(r) - d),
       1: _huber_partial(lambda d, r: r, lambda d, r: d * np.sign(r))},
      {(0, 0): _huber_partial(lambda d, r: 0.0, lambda d, r: -1.0),
       (0, 1): _huber_partial(lambda d, r: 0.0, lambda d, r: np.sign(r)),
       (1, 1): _huber_partial(lambda d, r: 1.0, lambda d, r: 0.0)},
      domain=((0.0, INF), (-INF, INF)),
      note="r²/2 for |r| <= δ, δ(|r| - δ/2) beyond: ∂r = r inside, δ sign(r) outside; ∂δ = 0 "
           "inside, |r| - δ outside; the quadratic's side at |r| = δ; 0 for δ < 0 (value inf).")


def _hypot(delta, r):
    return np.sqrt(delta * delta + r * r)


_rule("pseudo_huber", ("delta", "r"),
      {0: lambda d, r, y: select(d < 0, 0.0, (_hypot(d, r) - d) ** 2 / _hypot(d, r)),
       1: lambda d, r, y: select(d < 0, 0.0, r * d / _hypot(d, r))},
      {(0, 0): lambda d, r, y: select(d < 0, 0.0, -(_hypot(d, r) - d) ** 2 * (2.0 * _hypot(d, r) + d)
                                      / _hypot(d, r) ** 3),
       (0, 1): lambda d, r, y: select(d < 0, 0.0, r ** 3 / _hypot(d, r) ** 3),
       (1, 1): lambda d, r, y: select(d < 0, 0.0, d ** 3 / _hypot(d, r) ** 3)},
      domain=((0.0, INF), (-INF, INF)),
      note="δ²(√(1 + (r/δ)²) - 1) = δq - δ², q = √(δ² + r²): ∂r = rδ/q, ∂δ = (q - δ)²/q; at "
           "δ = 0 these are the limits from δ > 0 (∂r = 0, ∂δ = |r|), nan at δ = r = 0; 0 for "
           "δ < 0 (value inf).")


# ---- Bessel functions, from their recurrences ------------------------------------------------------
# f -> (a, b, c(x)) with d/dx f(v, x) = a f(v-1, x) + b f(v+1, x) + c(x) f(v, x): the
# exponentially scaled ones carry the derivative of their scale (c piecewise constant).
_RECURRENCES = {
    special.iv: (0.5, 0.5, None),
    special.ive: (0.5, 0.5, lambda x: -np.sign(x)),
    special.kv: (-0.5, -0.5, None),
    special.kve: (-0.5, -0.5, lambda x: 1.0),
    special.jv: (0.5, -0.5, None),
    special.yv: (0.5, -0.5, None),
}


def _bessel_dx(f, v, x, order):
    """∂ⁿ/∂xⁿ f(v, x) by applying the recurrence n times (each f(v ± 1, ·) is a ufunc of x
    with its own rule, so every order nests)."""
    if order == 0:
        return f(v, x)
    a, b, c = _RECURRENCES[f]
    out = a * _bessel_dx(f, v - 1.0, x, order - 1) + b * _bessel_dx(f, v + 1.0, x, order - 1)
    return out if c is None else out + c(x) * _bessel_dx(f, v, x, order - 1)


_BESSEL_NOTES = {
    special.iv: "I_v' = (I_(v-1) + I_(v+1))/2",
    special.ive: "I_v e^-|x|: (ive(v-1) + ive(v+1))/2 - sign(x) ive(v) (sign(0) = 0, as JAX's i0e, i1e)",
    special.kv: "K_v' = -(K_(v-1) + K_(v+1))/2",
    special.kve: "K_v e^x: -(kve(v-1) + kve(v+1))/2 + kve(v)",
    special.jv: "J_v' = (J_(v-1) - J_(v+1))/2",
    special.yv: "Y_v' = (Y_(v-1) - Y_(v+1))/2",
}
_POSITIVE_ARGUMENT = (special.kv, special.kve, special.yv)

for _f in _RECURRENCES:
    _name = _f.__name__
    _rule(_name, ("the order v", "x"),
          {1: lambda v, x, y, f=_f: _bessel_dx(f, v, x, 1)},
          {(1, 1): lambda v, x, y, f=_f: _bessel_dx(f, v, x, 2)},
          domain=((-INF, INF), (0.0 if _f in _POSITIVE_ARGUMENT else -INF, INF)),
          note=f"{_BESSEL_NOTES[_f]}, w.r.t. x; w.r.t. the order v an error.")
    for _v in (0, 1):
        _integer = getattr(special, f"{_name[0]}{_v}{'e' if _name.endswith('e') else ''}")
        _unary(_integer.__name__,
               lambda x, y, f=_f, v=float(_v): _bessel_dx(f, v, x, 1),
               lambda x, y, d, f=_f, v=float(_v): _bessel_dx(f, v, x, 2),
               domain=(0.0 if _f in _POSITIVE_ARGUMENT else -INF, INF),
               note=f"{_name}({_v}, x): {_BESSEL_NOTES[_f]} at v = {_v}.")
