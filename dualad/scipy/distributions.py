"""The closed forms of scipy.stats' distributions, standardised (z = (x - loc)/scale for a
continuous one, k - loc for a discrete one), written with dualad-differentiable NumPy and
scipy.special calls whose rules are dualad/scipy_special.py's. stats.py applies loc and
scale and SciPy's values; here is the mathematics only.

A family's methods take (z, *shapes) and (q, *shapes) for ppf and isf. Where a family does
not write one: sf = 1 - cdf, logcdf = log cdf, logsf = log sf, isf(q) = ppf(1 - q).
`constant_shapes` lists the methods whose derivative in the shape parameters has no closed
form (a distribution function in its shape: ∂/∂a of scipy.special.gammainc).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as special

from ..scipy_special import beta_log_density, gamma_log_density, normal_log_density, t_log_density

__all__ = ["CONTINUOUS", "DISCRETE", "Family"]

_DISTRIBUTION_FUNCTIONS = ("cdf", "logcdf", "sf", "logsf", "ppf", "isf")
_LOG_2 = math.log(2.0)
_LOG_PI = math.log(math.pi)


class Family:
    """One distribution's closed forms (the defaults below), its SciPy name, and what has
    no derivative in its shapes (with the special function that lacks it)."""

    name = ""
    constant_shapes: tuple = ()
    missing_partial = ""  # the scipy.special function whose shape partial has no closed form

    def sf(self, z, *shapes):
        return 1.0 - self.cdf(z, *shapes)

    def logcdf(self, z, *shapes):
        return np.log(self.cdf(z, *shapes))

    def logsf(self, z, *shapes):
        return np.log(self.sf(z, *shapes))

    def isf(self, q, *shapes):
        return self.ppf(1.0 - q, *shapes)


class Normal(Family):
    name = "norm"

    def logpdf(self, z):
        return normal_log_density(z)

    def cdf(self, z):
        return special.ndtr(z)

    def logcdf(self, z):
        return special.log_ndtr(z)

    def sf(self, z):
        return special.ndtr(-z)

    def logsf(self, z):
        return special.log_ndtr(-z)

    def ppf(self, q):
        return special.ndtri(q)

    def isf(self, q):
        return -special.ndtri(q)


class StudentT(Family):
    name = "t"
    constant_shapes = _DISTRIBUTION_FUNCTIONS
    missing_partial = "stdtr"

    def logpdf(self, z, df):
        return t_log_density(df, z)

    def cdf(self, z, df):
        return special.stdtr(df, z)

    def sf(self, z, df):
        return special.stdtr(df, -z)

    def ppf(self, q, df):
        return special.stdtrit(df, q)

    def isf(self, q, df):
        return -special.stdtrit(df, q)


class Gamma(Family):
    name = "gamma"
    constant_shapes = _DISTRIBUTION_FUNCTIONS
    missing_partial = "gammainc"

    def logpdf(self, z, a):
        return gamma_log_density(a, z)

    def cdf(self, z, a):
        return special.gammainc(a, z)

    def sf(self, z, a):
        return special.gammaincc(a, z)

    def ppf(self, q, a):
        return special.gammaincinv(a, q)

    def isf(self, q, a):
        return special.gammainccinv(a, q)


class ChiSquared(Family):
    """chi2(df) = gamma(df/2, scale=2)."""

    name = "chi2"
    constant_shapes = _DISTRIBUTION_FUNCTIONS
    missing_partial = "gammainc"

    def logpdf(self, z, df):
        return gamma_log_density(0.5 * df, 0.5 * z) - _LOG_2

    def cdf(self, z, df):
        return special.gammainc(0.5 * df, 0.5 * z)

    def sf(self, z, df):
        return special.gammaincc(0.5 * df, 0.5 * z)

    def ppf(self, q, df):
        return 2.0 * special.gammaincinv(0.5 * df, q)

    def isf(self, q, df):
        return 2.0 * special.gammainccinv(0.5 * df, q)


class InverseGamma(Family):
    """invgamma(a): 1/X for X ~ gamma(a); density gamma's at 1/z times 1/z²."""

    name = "invgamma"
    constant_shapes = _DISTRIBUTION_FUNCTIONS
    missing_partial = "gammainc"

    def logpdf(self, z, a):
        return gamma_log_density(a, 1.0 / z) - 2.0 * np.log(z)

    def cdf(self, z, a):
        return special.gammaincc(a, 1.0 / z)

    def sf(self, z, a):
        return special.gammainc(a, 1.0 / z)

    def ppf(self, q, a):
        return 1.0 / special.gammainccinv(a, q)

    def isf(self, q, a):
        return 1.0 / special.gammaincinv(a, q)


class Beta(Family):
    name = "beta"
    constant_shapes = _DISTRIBUTION_FUNCTIONS
    missing_partial = "betainc"

    def logpdf(self, z, a, b):
        return beta_log_density(a, b, z)

    def cdf(self, z, a, b):
        return special.betainc(a, b, z)

    def sf(self, z, a, b):
        return special.betaincc(a, b, z)

    def ppf(self, q, a, b):
        return special.betaincinv(a, b, q)

    def isf(self, q, a, b):
        return special.betainccinv(a, b, q)


class LogNormal(Family):
    """lognorm(s): log X ~ N(0, s²)."""

    name = "lognorm"

    def logpdf(self, z, s):
        return normal_log_density(np.log(z) / s) - np.log(s) - np.log(z)

    def cdf(self, z, s):
        return special.ndtr(np.log(z) / s)

    def logcdf(self, z, s):
        return special.log_ndtr(np.log(z) / s)

    def sf(self, z, s):
        return special.ndtr(-np.log(z) / s)

    def logsf(self, z, s):
        return special.log_ndtr(-np.log(z) / s)

    def ppf(self, q, s):
        return np.exp(s * special.ndtri(q))

    def isf(self, q, s):
        return np.exp(-s * special.ndtri(q))


class Exponential(Family):
    name = "expon"

    def logpdf(self, z):
        return -z

    def cdf(self, z):
        return -np.expm1(-z)

    def logcdf(self, z):
        return np.log(-np.expm1(-z))

    def sf(self, z):
        return np.exp(-z)

    def logsf(self, z):
        return -z

    def ppf(self, q):
        return -np.log1p(-q)

    def isf(self, q):
        return -np.log(q)


class Cauchy(Family):
    name = "cauchy"

    def logpdf(self, z):
        return -_LOG_PI - np.log1p(z * z)

    def cdf(self, z):
        return 0.5 + np.arctan(z) / math.pi

    def sf(self, z):
        return 0.5 - np.arctan(z) / math.pi

    def ppf(self, q):
        return np.tan(math.pi * (q - 0.5))

    def isf(self, q):
        return np.tan(math.pi * (0.5 - q))


class Logistic(Family):
    name = "logistic"

    def logpdf(self, z):
        return special.log_expit(z) + special.log_expit(-z)  # σ(z)σ(-z), smooth at 0

    def cdf(self, z):
        return special.expit(z)

    def logcdf(self, z):
        return special.log_expit(z)

    def sf(self, z):
        return special.expit(-z)

    def logsf(self, z):
        return special.log_expit(-z)

    def ppf(self, q):
        return special.logit(q)

    def isf(self, q):
        return -special.logit(q)


class Laplace(Family):
    """Density e^-|z|/2: derivative -sign(z), -1 at z = 0 (abs'(0) = 1, JAX's laplace)."""

    name = "laplace"

    def logpdf(self, z):
        return -_LOG_2 - np.abs(z)

    def cdf(self, z):
        tail = 0.5 * np.exp(-np.abs(z))  # e^-|z|: no overflow on either side
        return np.where(z < 0, tail, 1.0 - tail)

    def sf(self, z):
        tail = 0.5 * np.exp(-np.abs(z))
        return np.where(z < 0, 1.0 - tail, tail)

    def logcdf(self, z):
        return np.where(z < 0, -np.abs(z) - _LOG_2, np.log1p(-0.5 * np.exp(-np.abs(z))))

    def logsf(self, z):
        return np.where(z < 0, np.log1p(-0.5 * np.exp(-np.abs(z))), -np.abs(z) - _LOG_2)

    def ppf(self, q):
        return np.where(q < 0.5, np.log(2.0 * q), -np.log(2.0 - 2.0 * q))

    def isf(self, q):
        return -self.ppf(q)


class Uniform(Family):
    name = "uniform"

    def logpdf(self, z):
        return 0.0 * z  # (z's layer: the derivative 0 of a dual, not a float)

    def cdf(self, z):
        return z

    def sf(self, z):
        return 1.0 - z

    def ppf(self, q):
        return q

    def isf(self, q):
        return 1.0 - q


class WeibullMin(Family):
    name = "weibull_min"

    def logpdf(self, z, c):
        return np.log(c) + special.xlogy(c - 1.0, z) - z ** c

    def cdf(self, z, c):
        return -np.expm1(-z ** c)

    def logcdf(self, z, c):
        return np.log(-np.expm1(-z ** c))

    def sf(self, z, c):
        return np.exp(-z ** c)

    def logsf(self, z, c):
        return -z ** c

    def ppf(self, q, c):
        return (-np.log1p(-q)) ** (1.0 / c)

    def isf(self, q, c):
        return (-np.log(q)) ** (1.0 / c)


CONTINUOUS = {family.name: family for family in (
    Normal(), StudentT(), Gamma(), Beta(), LogNormal(), Exponential(), Cauchy(), Logistic(),
    Laplace(), Uniform(), ChiSquared(), WeibullMin(), InverseGamma())}


# ---- discrete: log-probabilities w.r.t. their continuous parameters --------------------------------
class Poisson(Family):
    name = "poisson"

    def logpmf(self, k, mu):
        return special.xlogy(k, mu) - mu - special.gammaln(k + 1.0)


class Binomial(Family):
    """binom(n, p): n is a count (no derivative), p differentiates."""

    name = "binom"
    count_shapes = ("n",)

    def logpmf(self, k, n, p):
        return (special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
                + special.xlogy(k, p) + special.xlog1py(n - k, -p))


class NegativeBinomial(Family):
    """nbinom(n, p): failures before the n-th success; n real and positive, both differentiate."""

    name = "nbinom"

    def logpmf(self, k, n, p):
        return (special.gammaln(n + k) - special.gammaln(n) - special.gammaln(k + 1.0)
                + special.xlogy(n, p) + special.xlog1py(k, -p))


DISCRETE = {family.name: family for family in (Poisson(), Binomial(), NegativeBinomial())}
