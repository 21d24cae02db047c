"""The stand-in of scipy.stats.multivariate_normal: logpdf and pdf, frozen or not,
differentiable in x, mean and cov. With Σ = L Lᵀ (numpy.linalg.cholesky, whose derivative
is the registry's) and z = L⁻¹(x - μ):

    log N(x; μ, Σ) = -(k log 2π + 2 Σ log L_ii + |z|²) / 2

SciPy's value (values.scipy_valued); its shapes of x, mean and cov (a scalar: c·I, a
vector: its diagonal, a matrix). Other methods are SciPy's, refused on dual numbers.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats
from scipy.stats._multivariate import multivariate_normal_frozen

from .values import NotDifferentiated, has_layer, not_differentiated, on_values, scipy_valued

__all__ = ["MultivariateNormal", "FrozenMultivariateNormal", "STAND_INS", "frozen_stand_in"]

_LOG_2PI = math.log(2.0 * math.pi)


def _dimension(mean, cov):
    if mean is not None:
        return int(np.size(on_values(mean)))
    return int(np.shape(on_values(cov))[0]) if np.ndim(on_values(cov)) else 1


def _covariance(cov, k):
    """cov as SciPy reads it: a scalar c·I, a vector the diagonal, else the matrix."""
    if np.ndim(cov) == 0:
        return cov * np.eye(k)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return cov


def _log_density(x, mean, cov):
    """log N(x; μ, Σ) for x of shape (n, k): a vector of n entries."""
    k = x.shape[-1]
    residual = x - (0.0 if mean is None else np.reshape(mean, (k,)))
    factor = np.linalg.cholesky(_covariance(cov, k))
    z = np.linalg.solve(factor, residual.T)
    return -0.5 * (k * _LOG_2PI + 2.0 * np.sum(np.log(np.diagonal(factor))) + np.sum(z * z, axis=0))


def _points(x, k):
    """x as SciPy reads quantiles: (n, k); a 1-D x is one point, or n points when k = 1."""
    if np.ndim(x) == 0:
        return np.reshape(x, (1, 1))
    if np.ndim(x) == 1:
        return np.reshape(x, (-1, 1)) if k == 1 else np.reshape(x, (1, -1))
    return x


def _evaluate(method, x, mean, cov, allow_singular):
    scipy_method = getattr(scipy.stats.multivariate_normal, method)
    if not has_layer(x, mean, cov):
        return scipy_method(x, mean, cov, allow_singular=allow_singular)
    value = scipy_method(on_values(x), on_values(mean), on_values(cov), allow_singular=allow_singular)
    k = _dimension(mean, cov)
    with np.errstate(all="ignore"):
        expr = _log_density(_points(x, k), mean, cov)
        if method == "pdf":
            expr = np.exp(expr)
    return scipy_valued(np.reshape(expr, np.shape(value)), value)


class MultivariateNormal:
    """scipy.stats.multivariate_normal's stand-in: logpdf and pdf differentiate; calling it
    freezes it; its other attributes are SciPy's."""

    name = "multivariate_normal"

    def __call__(self, mean=None, cov=1, allow_singular=False, seed=None):
        return FrozenMultivariateNormal(mean, cov, allow_singular)

    def logpdf(self, x, mean=None, cov=1, allow_singular=False):
        return _evaluate("logpdf", x, mean, cov, allow_singular)

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        return _evaluate("pdf", x, mean, cov, allow_singular)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return not_differentiated(getattr(scipy.stats.multivariate_normal, name),
                                   f"scipy.stats.multivariate_normal.{name}")


class FrozenMultivariateNormal:
    """multivariate_normal(mean, cov): logpdf and pdf with those parameters."""

    def __init__(self, mean, cov, allow_singular=False):
        self.mean, self.cov, self.allow_singular = mean, cov, allow_singular

    def logpdf(self, x):
        return _evaluate("logpdf", x, self.mean, self.cov, self.allow_singular)

    def pdf(self, x):
        return _evaluate("pdf", x, self.mean, self.cov, self.allow_singular)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if has_layer(self.mean, self.cov):
            raise NotDifferentiated(f"scipy.stats.multivariate_normal(...).{name} is not differentiated "
                            "by dualad (logpdf and pdf are)")
        return getattr(scipy.stats.multivariate_normal(self.mean, self.cov,
                                                       allow_singular=self.allow_singular), name)


def frozen_stand_in(value):
    """The stand-in of a frozen multivariate normal that f reads from its globals, or None."""
    if isinstance(value, multivariate_normal_frozen):
        return FrozenMultivariateNormal(value.mean, value.cov, value.allow_singular)
    return None


STAND_INS = {scipy.stats.multivariate_normal: MultivariateNormal()}
