"""Primitives registered once for the whole session (dualad.primitive registers by name), shared
by tests/test_primitives.py and tests/compiled/test_primitives_compiled.py: log Γ from
scipy.special, and as numba compiles it (math.lgamma with @njit digamma and trigamma)."""

import math

import numba
import numpy as np
import scipy.special as sp

import dualad

# log Γ from scipy.special with its partials: a model's special function, registered once
gammaln = dualad.primitive(sp.gammaln, first=sp.digamma, second=lambda x: sp.polygamma(1, x))
gammaln_first_only = dualad.primitive(sp.gammaln, first=sp.digamma, name="gammaln_first_only")

# the same function as numba can compile it: math.lgamma with @njit digamma and trigamma
@numba.njit(cache=True)
def digamma(x):
    shift = 0.0
    while x < 12.0:  # recurrence up to where the asymptotic series is accurate to 1e-15
        shift -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    tail = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))))
    return shift + math.log(x) - 0.5 / x - tail


@numba.njit(cache=True)
def trigamma(x):
    shift = 0.0
    while x < 12.0:
        shift += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    return shift + 1.0 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30)))


lgamma = dualad.primitive(math.lgamma, first=digamma, second=trigamma, name="lgamma")


def log_likelihood(x):
    """A model using the special function: sum of x_i · log Γ(x_i)."""
    return np.sum(gammaln(x) * x)


def expected_gradient(x):
    return sp.digamma(x) * x + sp.gammaln(x)


def expected_hessian_diagonal(x):
    return sp.polygamma(1, x) * x + 2 * sp.digamma(x)


X = np.array([0.7, 1.5, 2.5, 4.0])
