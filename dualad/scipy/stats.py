"""Stand-ins of scipy.stats' distributions: norm.logpdf(x, loc, scale), gamma.cdf(x, a),
norm(loc, scale).logpdf(x), poisson.logpmf(k, mu), ... exactly as SciPy takes them
(SciPy's own argument parsing, _parse_args), differentiable in x, loc, scale and the shape
parameters. A call without dual numbers is SciPy's; with them, SciPy's value and the
derivatives of the closed form (distributions.py) at z = (x - loc)/scale:

    logpdf = logpdf_z - log scale,  pdf = e^logpdf,  cdf (sf, logcdf, logsf) = cdf_z,
    ppf(q) = loc + scale·ppf_z(q)   (isf alike)

inside the support and where the parameters are valid (SciPy's _get_support, _argcheck;
the support's ends included, where the closed form's one-sided derivative stands);
elsewhere SciPy's value (-inf, 0, 1 or nan) with derivative 0 (values.scipy_valued).
Discrete distributions differentiate logpmf and pmf in their continuous parameters; k, loc
and counts (binom's n) are integers, an error when differentiated. Any other method or
distribution is SciPy's for plain numbers and an error naming it for dual numbers.
"""

from __future__ import annotations

import numpy as np
import scipy.stats
from scipy.stats._distn_infrastructure import rv_frozen, rv_generic

from . import multivariate
from ..functions.registry import stack_lists
from .distributions import CONTINUOUS, DISCRETE
from .values import NotDifferentiated, has_layer, not_differentiated, on_values, scipy_valued

__all__ = ["Distribution", "Frozen", "STAND_INS", "stand_in_of", "METHODS"]

CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
DISCRETE_METHODS = ("logpmf", "pmf")
_QUANTILE_METHODS = ("ppf", "isf")


class Distribution:
    """The stand-in of one scipy.stats distribution (scipy.stats.norm): its METHODS
    differentiate, calling it freezes it (a Frozen stand-in), its other attributes are SciPy's."""

    def __init__(self, distribution, family):
        self._scipy, self._family = distribution, family
        self._discrete = family.name in DISCRETE
        self.name = family.name

    def __repr__(self):
        return f"<dualad stand-in of scipy.stats.{self.name}>"

    def __call__(self, *args, **kwds):
        return Frozen(self, args, kwds)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_scipy", "_family"):
            raise AttributeError(name)
        return not_differentiated(getattr(self._scipy, name), f"scipy.stats.{self.name}.{name}")

    def _evaluate(self, method, x, args, kwds):
        scipy_method = getattr(self._scipy, method)
        if not has_layer(x, args, kwds):
            return scipy_method(x, *args, **kwds)
        shapes, loc, scale = self._scipy._parse_args(*args, **kwds)
        x, loc, scale = stack_lists(x), stack_lists(loc), stack_lists(scale)  # (lists of duals)
        shapes = [stack_lists(s) for s in shapes]
        self._refuse_constants(method, x, shapes, loc)
        value = scipy_method(on_values(x), *on_values(args), **on_values(kwds))
        plain = [on_values(s) for s in shapes]
        with np.errstate(all="ignore"):
            valid = np.asarray(self._scipy._argcheck(*plain)) & (np.asarray(on_values(scale)) > 0)
            if method in _QUANTILE_METHODS:
                q = on_values(x)
                z = getattr(self._family, method)(x, *shapes)
                return scipy_valued(loc + scale * z, value, valid & (q >= 0) & (q <= 1))
            z = (x - loc) / scale
            lower, upper = self._scipy._get_support(*plain)
            plain_z = on_values(z)
            smooth = valid & (plain_z >= lower) & (plain_z <= upper)
            if self._discrete:
                expr = self._family.logpmf(z, *shapes)
            elif method in ("logpdf", "pdf"):
                expr = self._family.logpdf(z, *shapes) - np.log(scale)
            else:
                expr = getattr(self._family, method)(z, *shapes)
            if method in ("pdf", "pmf"):
                expr = np.exp(expr)
            return scipy_valued(expr, value, smooth)

    def _refuse_constants(self, method, x, shapes, loc):
        """An error naming the argument where a derivative is asked of one that has none."""
        where = f"scipy.stats.{self.name}.{method}"
        names = [s.strip() for s in (self._scipy.shapes or "").split(",") if s.strip()]
        if self._discrete:
            for value, what in ((x, "k (an integer)"), (loc, "loc (an integer shift)")):
                if has_layer(value):
                    raise NotDifferentiated(f"{where}: dualad has no derivative with respect to {what}")
        for name, shape in zip(names, shapes):
            if not has_layer(shape):
                continue
            if name in getattr(self._family, "count_shapes", ()):
                raise NotDifferentiated(f"{where}: dualad has no derivative with respect to {name} (an "
                                "integer count); keep it a constant")
            if method in self._family.constant_shapes:
                raise NotDifferentiated(
                    f"{where}: dualad has no derivative with respect to the shape {name} (it "
                    f"needs the derivative of scipy.special.{self._family.missing_partial} in its "
                    "shape, which has no closed form); keep it a constant, or differentiate "
                    "logpdf, which has one")


def _method(name):
    def method(self, x, *args, **kwds):
        return self._evaluate(name, x, args, kwds)
    method.__name__ = name
    method.__doc__ = f"scipy.stats' {name}(x, *shapes, loc=0, scale=1), differentiable."
    return method


for _name in CONTINUOUS_METHODS + DISCRETE_METHODS:
    setattr(Distribution, _name, _method(_name))


class Frozen:
    """The stand-in of a frozen distribution (norm(loc, scale)): each METHOD is the
    distribution's with the frozen arguments; its other attributes are SciPy's frozen
    object's (an error naming them when the arguments are dual numbers)."""

    def __init__(self, distribution, args, kwds):
        self._distribution, self._args, self._kwds = distribution, tuple(args), dict(kwds)

    def __repr__(self):
        return f"<dualad stand-in of scipy.stats.{self._distribution.name} frozen>"

    args = property(lambda self: self._args)
    kwds = property(lambda self: self._kwds)
    dist = property(lambda self: self._distribution)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if has_layer(self._args, self._kwds):
            def refuse(*args, **kwargs):
                raise NotDifferentiated(
                    f"scipy.stats.{self._distribution.name}(...).{name} with dual parameters is not "
                    f"differentiated by dualad ({', '.join(METHODS[self._distribution.name])} are)")
            return refuse
        frozen = self._distribution._scipy(*self._args, **self._kwds)
        return getattr(frozen, name)


def _frozen_method(name):
    def method(self, x):
        return self._distribution._evaluate(name, x, self._args, self._kwds)
    method.__name__ = name
    return method


for _name in CONTINUOUS_METHODS + DISCRETE_METHODS:
    setattr(Frozen, _name, _frozen_method(_name))


STAND_INS = {getattr(scipy.stats, name): Distribution(getattr(scipy.stats, name), family)
             for name, family in {**CONTINUOUS, **DISCRETE}.items()}
STAND_INS.update(multivariate.STAND_INS)
METHODS = {name: DISCRETE_METHODS if name in DISCRETE else CONTINUOUS_METHODS
           for name in {**CONTINUOUS, **DISCRETE}}
# a frozen distribution's .dist is a new instance of the distribution's class: found by class
_BY_CLASS = {type(obj): replacement for obj, replacement in STAND_INS.items()
             if isinstance(replacement, Distribution)}


class _Unsupported:
    """A scipy.stats distribution dualad has no closed forms for: SciPy's own on plain
    numbers, an error naming it on dual numbers."""

    def __init__(self, distribution):
        self._scipy = distribution

    def __call__(self, *args, **kwds):
        if has_layer(args, kwds):
            raise NotDifferentiated(f"scipy.stats.{self._scipy.name} is not differentiated by dualad "
                            "(docs/scipy.md lists the distributions it differentiates)")
        return _Unsupported(self._scipy(*args, **kwds)) if isinstance(self._scipy, rv_generic) \
            else self._scipy(*args, **kwds)

    def __getattr__(self, name):
        if name.startswith("__") or name == "_scipy":
            raise AttributeError(name)
        name_of = getattr(self._scipy, "name", None) or getattr(getattr(self._scipy, "dist", None), "name", "?")
        return not_differentiated(getattr(self._scipy, name), f"scipy.stats.{name_of}.{name}")


def stand_in_of(value):
    """The stand-in of a SciPy object not in STAND_INS: a frozen distribution (a global
    dist = scipy.stats.norm(0, 2)), or a distribution dualad has no closed forms for; None
    for anything else."""
    if isinstance(value, rv_frozen):
        distribution = _BY_CLASS.get(type(value.dist))
        if distribution is not None:
            return Frozen(distribution, value.args, value.kwds)
        return _Unsupported(value)
    frozen = multivariate.frozen_stand_in(value)
    if frozen is not None:
        return frozen
    if isinstance(value, rv_generic):
        return _Unsupported(value)
    return None
