"""SciPy's functions and objects on dual numbers, as f's view sees them (allocation.STAND_INS).

f calls SciPy as it is written (scipy.stats.norm.logpdf(x, mu, sigma), logsumexp(a, b=w),
norm(loc, scale).cdf(x), scipy.linalg.cho_solve(...)). SciPy converts its inputs to float
arrays there, so a transform runs f again over a view of its globals (allocation.OnDemand)
in which each SciPy object that dualad differentiates is its stand-in from this package:
SciPy's own function on plain values, and on dual numbers of any layer SciPy's value with
the derivatives of a closed form (values.scipy_valued). dualad/__init__.py installs the
hook, which imports this package on the first SciPy object it meets (scipy stays out of
import dualad).

    special.py       logsumexp, softmax, log_softmax
    stats.py         scipy.stats' distributions, frozen or not; distributions.py their
                     closed forms; multivariate.py multivariate_normal
    linalg.py        scipy.linalg's solvers and factorisations
    interpolate.py   scipy.interpolate's splines and interpolators (CubicSpline, BSpline, ...)
    table.py         docs/scipy.md
"""

from __future__ import annotations

import types

from . import interpolate, linalg, special, stats

__all__ = ["stand_in"]

_BY_ID = {id(obj): (obj, replacement)
          for module in (special, stats, linalg, interpolate) for obj, replacement in module.STAND_INS.items()}


def stand_in(value):
    """What f's view sees instead of a SciPy object: its stand-in, or None (SciPy's own)."""
    found = _BY_ID.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    if isinstance(value, types.MethodType):  # norm.logpdf kept in a global: the stand-in's
        owner = stand_in(value.__self__)
        return None if owner is None else getattr(owner, value.__name__, None)
    found = stats.stand_in_of(value)
    return found if found is not None else interpolate.stand_in_of(value)
